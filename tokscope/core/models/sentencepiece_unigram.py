"""SentencePiece's unigram model, as the library runs it (``unigram_model.cc``'s optimized Viterbi).

It differs from Hugging Face's Unigram (:mod:`.unigram`) in ways that change tokens:

* path scores are single-precision floats, added as the library adds them (two paths that differ
  by less than a float's precision tie; the first one found wins), and rebased once they pass
  100000 in size, as the library does;
* only normal and user-defined pieces are found in the text; a user-defined piece scores
  ``0.1 * (its UTF-8 length - 1)`` so it is always taken;
* a character that no piece of one character covers is an unknown node scored ``min - 10``, where
  ``min`` is the lowest score of a *normal* piece;
* runs of unknown nodes become one unknown token, or with byte fallback each unknown character
  becomes its UTF-8 bytes as ``<0xNN>`` pieces (see :meth:`.Pieces.finish`).

SentencePiece runs the model over the whole normalized text, not word by word, so this model's
chunk is the whole normalized text. The compiled lattice (:func:`.unigram.compiled_lattice`)
walks it in one go, as the library does, and spells the unknown pieces too; without it the
Python walk below gives the same tokens (and stays the tests' oracle).

>>> from .sentencepiece_pieces import Pieces, NORMAL, UNKNOWN
>>> m = SentencePieceUnigram(Pieces(["<unk>", "a", "b", "ab"], [0, -1, -2, -2.5], [UNKNOWN, NORMAL, NORMAL, NORMAL]))
>>> m.tokenize("abxy")
[(3, 0, 2), (0, 2, 4)]
"""

from __future__ import annotations

import math
from array import array
from typing import Any

from .sentencepiece_pieces import (BYTE, MATCHABLE, NORMAL, UNUSED, USER_DEFINED, Pieces, PiecesModel, byte_value,
                                   cut_mode, cut_words)
from .unigram import LLAMA_CPP, SENTENCEPIECE, Segmentation, Unigram, compiled_lattice, lattice_table

#: the library's penalty under the lowest score for an unknown character
UNK_PENALTY = 10.0
#: the library rebases path scores past this size
RESET = 100000.0


def _f32(x: float) -> float:
    """``x`` rounded to a single-precision float.

    >>> _f32(0.1)
    0.10000000149011612
    """
    return array("f", [x])[0]


def _lowest_normal(pieces: Pieces) -> float:
    """The lowest score of a normal piece (FLT_MAX without one, as the library starts): the
    scores copied with the others' set to infinity, then one ``min`` at C speed.

    >>> from .sentencepiece_pieces import UNKNOWN
    >>> _lowest_normal(Pieces(["<unk>", "a", "b"], [-9.0, -1.0, -2.0], [UNKNOWN, NORMAL, NORMAL]))
    -2.0
    >>> _lowest_normal(Pieces(["<unk>"], [-9.0], [UNKNOWN]))
    3.4028234663852886e+38
    """
    scores = pieces.scores
    others = [i for ids in pieces.by_type.values() for i in ids]
    if len(others) >= len(scores):
        return 3.4028234663852886e38
    if others:
        scores = array(scores.typecode, scores) if isinstance(scores, array) else array("d", scores)
        for i in others:
            scores[i] = math.inf
    return min(scores)


class SentencePieceUnigram(PiecesModel):
    """SentencePiece's unigram model over a :class:`.Pieces` table (see the module)."""

    kind = "unigram"
    label = "Unigram (SentencePiece)"

    def __init__(self, pieces: Pieces, *, treat_whitespace_as_suffix: bool = False, llama_cpp: bool = False) -> None:
        self.table = pieces
        self._suffix = treat_whitespace_as_suffix
        self.llama_cpp = llama_cpp
        if llama_cpp:
            self.label = "Unigram (llama.cpp UGM)"
        self.byte_fallback = pieces.byte_fallback
        self.unk_id = pieces.unk_id
        self.min_score = _f32(_lowest_normal(pieces))

        self.unk_score = _f32(self.min_score - UNK_PENALTY)
        self._trie: tuple[dict[str, int], set[str]] | None = None
        self._longest = 0
        self._lattice_scores: Any = None
        self._hf: Unigram | None = None
        self._mode: str | None = None
        self._words_cache: dict[str, tuple[tuple[tuple[int | None, int, int], ...], float]] = {}
        self._widest = 0.0
        self._ctable: tuple[Any, Any, list[int] | None] | None = None
        self._found: dict[str, int] | None = None

    def _matched(self) -> tuple[dict[str, int], Any]:
        """The pieces found in the text (``text -> id``) and every piece's lattice score (worked
        out on first use)."""
        if self._found is None:
            table = self.table
            types = table.types
            if self.llama_cpp:
                # llama.cpp: scores added in double precision, a user-defined piece scores 0, unused
                # pieces are found too, and of two equal pieces the last one is kept
                scores = array("d", table.scores)
                for i in table.by_type.get(USER_DEFINED, ()):
                    scores[i] = 0.0
                kept = (NORMAL, USER_DEFINED, UNUSED)
                found = {p: i for i, p in enumerate(table.pieces) if types[i] in kept}
            else:
                scores = array("f", table.scores)
                for i in table.by_type.get(USER_DEFINED, ()):
                    scores[i] = 0.1 * (len(table.pieces[i].encode("utf-8", "surrogatepass")) - 1)
                # the look-ups hold normal, user-defined and unused pieces: only unused ones go
                # (a copy without them: far fewer than the pieces kept)
                found = table.lookups
                if UNUSED in table.by_type:
                    found = dict(found)
                    for i in table.by_type[UNUSED]:
                        if found.get(table.pieces[i]) == i:
                            del found[table.pieces[i]]
            self._lattice_scores = scores
            self._found = found
        return self._found, self._lattice_scores

    def _build(self) -> None:
        """The pieces found in the text, where a walk along the text may go on, and their lattice
        scores (built on first use by the Python walk)."""
        found, scores = self._matched()
        # the pieces by their text, and every proper prefix of one (where a walk along the text
        # may go on): two hash sets, far lighter than a trie of a dict per node
        prefixes = {piece[:k] for piece in found for k in range(1, len(piece))}
        trie = (found, prefixes)
        longest = max(map(len, found), default=0)
        self._longest = longest
        # the largest amount one character can move a path's score (a piece's or the unknown score)
        self._widest = max([abs(self.unk_score), *(abs(x) for x in scores)]) if len(scores) else abs(self.unk_score)
        self._trie = trie

    # ----- the Model protocol (look-ups and scores: PiecesModel) ------------------------------

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        """The tokens of ``text`` (a whole normalized text): ``(id, start, end)``."""
        if not text:
            return []
        out = self._compiled_encode(text, False)
        if out is not None:
            return out
        # no compiled lattice, or no unknown piece to give: the Python walk (which raises the model's error)
        return self.table.finish(self._path(text), text)

    def _compiled_encode(self, text: str, ids_only: bool) -> list | None:
        """The compiled lattice's tokens (or ids) of ``text``; None without it, or when a character
        has no piece and the model no unknown piece."""
        compiled = self._compiled()
        if compiled is None:
            return None
        module, table, byte_ids = compiled
        unk = self.unk_id if self.unk_id is not None else -1
        return module.lattice_encode(table, text, LLAMA_CPP if self.llama_cpp else SENTENCEPIECE, unk,
                                     self.unk_score, byte_ids, ids_only)

    def encode_ids(self, text: str) -> list[int]:
        """The ids of :meth:`tokenize`'s tokens, without their offsets (the compiled lattice makes
        no tuples for them).

        >>> from .sentencepiece_pieces import Pieces, NORMAL, UNKNOWN
        >>> SentencePieceUnigram(Pieces(["<unk>", "a", "b", "ab"], [0, -1, -2, -2.5], [UNKNOWN, NORMAL, NORMAL, NORMAL])).encode_ids("abxy")
        [3, 0]
        """
        if not text:
            return []
        out = self._compiled_encode(text, True)
        if out is not None:
            return out
        return [t[0] for t in self.tokenize(text)]

    def build_lattice(self) -> bool:
        """Build the compiled lattice now rather than on the first encode (a ``.model`` file's
        load does, as the library builds its trie at load); False when there is none to build.

        >>> from .sentencepiece_pieces import Pieces, NORMAL, UNKNOWN
        >>> from .unigram import compiled_lattice
        >>> m = SentencePieceUnigram(Pieces(["<unk>", "a"], [0, -1], [UNKNOWN, NORMAL]))
        >>> m.build_lattice() == (compiled_lattice() is not None)
        True
        """
        return self._compiled() is not None

    def _compiled(self) -> tuple[Any, Any, list[int] | None] | None:
        """The compiled lattice, this model's table in it and the byte pieces' ids (with byte
        fallback), or None: not installed, switched off, or byte pieces missing (the Python
        walk then gives what the library gives)."""
        module = compiled_lattice()
        if module is None:
            return None
        if self._ctable is None or self._ctable[0] is not module:
            byte_ids = _byte_ids(self.table) if self.byte_fallback else None
            usable = byte_ids is not None or not self.byte_fallback
            self._ctable = (module, lattice_table(module, *self._matched()) if usable else None, byte_ids)
        return self._ctable if self._ctable[1] is not None else None

    # ----- Viterbi -----------------------------------------------------------------------------

    def _viterbi(self, text: str, base: float = 0.0) -> tuple[array, list[int], list[int]]:
        """The library's Viterbi over ``text``, starting from the path score ``base`` (a
        single-precision float): each position's best score, where its last piece starts, its id."""
        if self._trie is None:
            self._build()
        if self.llama_cpp:
            return self._viterbi_double(text)
        n = len(text)
        best = array("f", bytes(4 * (n + 1)))
        best[0] = base
        starts = [-1] * (n + 1)
        ids = [-1] * (n + 1)
        tmp = array("f", [0.0])
        assert self._trie is not None
        pieces, prefixes = self._trie
        scores = self._lattice_scores
        unk_score = self.unk_score
        unk_id = self.unk_id
        longest = self._longest
        frontier = 0
        for i in range(n):
            base = best[i]
            if base < -RESET or base > RESET:
                for j in range(i, frontier + 1):
                    if j == i or starts[j] != -1:
                        best[j] = best[j] - base
                base = 0.0
            single = False
            stop = min(n, i + longest)
            j = i
            while j < stop:
                j += 1
                sub = text[i:j]
                found = pieces.get(sub)
                if found is not None:
                    if j > frontier:
                        frontier = j
                    tmp[0] = scores[found] + base
                    candidate = tmp[0]
                    if starts[j] == -1 or candidate > best[j]:
                        best[j] = candidate
                        starts[j] = i
                        ids[j] = found
                    if j == i + 1:
                        single = True
                if sub not in prefixes:
                    break
            if not single:
                j = i + 1
                if j > frontier:
                    frontier = j
                tmp[0] = unk_score + base
                candidate = tmp[0]
                if starts[j] == -1 or candidate > best[j]:
                    best[j] = candidate
                    starts[j] = i
                    ids[j] = unk_id if unk_id is not None else -1
        return best, starts, ids

    def _viterbi_double(self, text: str) -> tuple[array, list[int], list[int]]:
        """llama.cpp's UGM Viterbi: double-precision sums, every position starts unreached
        (``-DBL_MAX``) and a candidate must score strictly higher to replace the one there."""
        n = len(text)
        lowest = -1.7976931348623157e308
        best = array("d", [lowest]) * (n + 1)
        best[0] = 0.0
        starts = [-1] * (n + 1)
        ids = [-1] * (n + 1)
        assert self._trie is not None
        pieces, prefixes = self._trie
        scores = self._lattice_scores
        unk_score = self.unk_score
        unk_id = self.unk_id if self.unk_id is not None else -1
        longest = self._longest
        for i in range(n):
            base = best[i]
            single = False
            stop = min(n, i + longest)
            j = i
            while j < stop:
                j += 1
                sub = text[i:j]
                found = pieces.get(sub)
                if found is not None:
                    if j == i + 1:
                        single = True
                    candidate = base + scores[found]
                    if candidate > best[j]:
                        best[j] = candidate
                        starts[j] = i
                        ids[j] = found
                if sub not in prefixes:
                    break
            if not single:
                candidate = base + unk_score
                if candidate > best[i + 1]:
                    best[i + 1] = candidate
                    starts[i + 1] = i
                    ids[i + 1] = unk_id
        return best, starts, ids

    def _path(self, text: str) -> list[tuple[int | None, int, int]]:
        """The best path over ``text`` as ``(id or None, start, end)``, the library's exactly.

        Where no piece crosses a ``▁`` (see :func:`.cut_words`), each word's best path is worked
        out once in double precision and kept with its *margin* (how much its every decision won
        by). The library adds single-precision floats from the score the text reached so far, so
        a word's path is reused only when its margin is wider than the rounding that score can
        cause (and no rebase can happen inside it); any other word is run as the library runs it,
        from that exact score. Either way the score at the word's end is carried on in single
        precision, as the library carries it."""
        compiled = self._compiled()
        if compiled is not None:
            module, table, _ = compiled
            unk = self.unk_id if self.unk_id is not None else -1
            path, _ = module.lattice_viterbi(table, text, LLAMA_CPP if self.llama_cpp else SENTENCEPIECE, unk,
                                             self.unk_score)
            return [(None if t < 0 else t, s, e) for t, s, e in path]
        if self._trie is None:
            self._build()
        if self.llama_cpp:
            return self._backtrack(text, *self._viterbi_double(text)[1:])
        if self._mode is None:
            self._mode = cut_mode((p for p, i in self.table.lookups.items() if self.table.types[i] in MATCHABLE),
                                  self._suffix)
        words = cut_words(text, self._mode, self._suffix)
        if len(words) == 1:
            return self._backtrack(text, *self._viterbi(text)[1:])
        out: list[tuple[int | None, int, int]] = []
        cache = self._words_cache
        scores = self._lattice_scores
        unk_score = self.unk_score
        unk = self.unk_id
        widest = self._widest
        tmp = array("f", [0.0])
        base = 0.0
        for start, end in words:
            word = text[start:end]
            entry = cache.get(word)
            if entry is None:
                entry = self._word_entry(word)
                if len(word) < 256:
                    if len(cache) >= 100_000:
                        cache.clear()
                    cache[word] = entry
            path, margin = entry
            length = end - start
            reach = abs(base) + length * widest
            if margin > (2 * length + 2) * reach * 2.0 ** -23 + 1e-9 and reach < RESET:
                for token_id, s, e in path:  # an unknown node (the unknown id) scores unk_score
                    tmp[0] = base + (scores[token_id] if token_id is not None and token_id != unk else unk_score)
                    base = tmp[0]
                    out.append((token_id, s + start, e + start))
            else:  # as the library runs it, from the exact score so far
                best, starts, ids = self._viterbi(word, base)
                base = best[length]
                out.extend((t, s + start, e + start) for t, s, e in self._backtrack(word, starts, ids))
        return out

    def _word_entry(self, word: str) -> tuple[tuple[tuple[int | None, int, int], ...], float]:
        """One word's best path in double precision from 0, and its *margin*: the smallest gap
        between the two scores of any comparison Viterbi made (0 for a tie). A rounding error
        smaller than half of that changes no comparison, so the path is the same from any score."""
        n = len(word)
        best = [0.0] * (n + 1)
        starts = [-1] * (n + 1)
        ids = [-1] * (n + 1)
        assert self._trie is not None
        pieces, prefixes = self._trie
        scores = self._lattice_scores
        unk_id = self.unk_id if self.unk_id is not None else -1
        unk_score = self.unk_score
        longest = self._longest
        margin = math.inf
        for i in range(n):
            base = best[i]
            single = False
            stop = min(n, i + longest)
            j = i
            while j < stop:
                j += 1
                sub = word[i:j]
                found = pieces.get(sub)
                if found is not None:
                    if j == i + 1:
                        single = True
                    candidate = base + scores[found]
                    if starts[j] == -1:
                        best[j] = candidate
                        starts[j] = i
                        ids[j] = found
                    else:
                        gap = candidate - best[j]
                        if gap > 0:
                            best[j] = candidate
                            starts[j] = i
                            ids[j] = found
                        elif gap < 0:
                            gap = -gap
                        if gap < margin:
                            margin = gap
                if sub not in prefixes:
                    break
            if not single:
                j = i + 1
                candidate = base + unk_score
                if starts[j] == -1:
                    best[j] = candidate
                    starts[j] = i
                    ids[j] = unk_id
                else:
                    gap = candidate - best[j]
                    if gap > 0:
                        best[j] = candidate
                        starts[j] = i
                        ids[j] = unk_id
                    elif gap < 0:
                        gap = -gap
                    if gap < margin:
                        margin = gap
        return tuple(self._backtrack(word, starts, ids)), margin

    @staticmethod
    def _backtrack(text: str, starts: list[int], ids: list[int]) -> list[tuple[int | None, int, int]]:
        out: list[tuple[int | None, int, int]] = []
        end = len(text)
        while end > 0:
            start = starts[end]
            token_id = ids[end]
            out.append((None if token_id < 0 else token_id, start, end))
            end = start
        out.reverse()
        return out

    # ----- the explorer's questions -------------------------------------------------------------

    def best(self, text: str) -> Segmentation:
        """The path :meth:`tokenize` takes (an unknown character its own piece) and its score
        (the float sum of its pieces' lattice scores)."""
        if not text:
            return Segmentation((), (), (), 0.0)
        path = self._path(text)
        unk = self.unk_id if self.unk_id is not None else -1
        scores = [self._lattice_scores[t] if t is not None and t != unk else self.unk_score for t, _, _ in path]
        return Segmentation(tuple(text[s:e] for _, s, e in path),
                            tuple(t if t is not None else unk for t, _, _ in path),
                            tuple((s, e) for _, s, e in path), float(sum(scores)))

    def nbest(self, text: str, n: int) -> tuple[Segmentation, ...]:
        """The ``n`` best segmentations, best first (an A* search in double precision over the
        same lattice: the pieces found in the text, with their lattice scores)."""
        return self._lattice().nbest(text, n)

    def _lattice(self) -> Unigram:
        if self._trie is None:
            self._build()
        if self._hf is None:
            table = self.table
            # pieces the text never becomes are left out of the search (an empty piece is never found)
            vocab = [(p if t in MATCHABLE else "", s) for p, s, t in zip(table.pieces, self._lattice_scores, table.types)]
            model = Unigram(vocab, unk_id=self.unk_id)
            model.unk_score = self.unk_score
            self._hf = model
        return self._hf

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_hf"] = None
        state["_trie"] = None
        state["_words_cache"] = {}
        state["_ctable"] = None
        state["_found"] = None
        return state


def _byte_ids(table: Pieces) -> list[int] | None:
    """The id of each byte's piece (the first ``<0xNN>`` piece of type byte, as
    :meth:`.Pieces.finish` spells an unknown piece), or None when one is missing.

    >>> ids = _byte_ids(Pieces(["<unk>", *(f"<0x{b:02X}>" for b in range(256))], [0.0] * 257, [2] + [BYTE] * 256))
    >>> ids[0], ids[255]
    (1, 256)
    """
    out: list[int | None] = [None] * 256
    for i in table.by_type.get(BYTE, ()):
        value = byte_value(table.pieces[i])
        if value is not None and out[value] is None:
            out[value] = i
    return None if None in out else out  # type: ignore[return-value]
