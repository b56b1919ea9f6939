"""Hugging Face's Unigram model (SentencePiece's unigram language model).

Every vocabulary entry has a score (a log probability). A chunk is cut into the pieces whose
scores add up to the highest total (Viterbi over the lattice of every entry found at every
position). A character that no single-character entry covers gets an unknown node scored
``min_score - 10`` (the lowest score in the vocabulary less Hugging Face's penalty), so an unknown
character is always possible but never preferred. In the best path, consecutive unknown nodes are
fused into one piece; a piece that is not an entry becomes its UTF-8 bytes as ``<0xE2>`` tokens
when ``byte_fallback`` is on and all of them exist, else the unknown id.

Ties go as in Hugging Face: of the paths that reach a position with equal scores, the one whose
last piece starts first (the longest last piece) wins.

The best path is walked by the compiled lattice (``lattice_viterbi`` of ``merge.c``, built at
install when the machine has a C compiler) when it is there; the pure-Python walk here gives the
same path and stays the tests' oracle (:func:`use_compiled` switches between them).

>>> model = Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -2.5)], unk_id=0)
>>> model.tokenize("abx")
[(3, 0, 2), (0, 2, 3)]
>>> [(s.pieces, s.score) for s in model.nbest("ab", 3)]
[(('ab',), -2.5), (('a', 'b'), -3.0)]
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import operator
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import ChunkCache
from .bpe import BYTE_TOKENS
from ..text.errors import TokenizerFileError
from ..text.compiled import CompiledPart

#: Hugging Face's penalty under the lowest score for an unknown character.
UNK_PENALTY = 10.0
#: The n-best search stops growing its agenda past this size (Hugging Face's limits).
_MAX_AGENDA = 100_000
_MIN_AGENDA = 512

_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_END = ""  # key of a trie node's id (no character is the empty string)
_UNREACHED = -math.inf

#: the compiled lattice's modes (whose Viterbi it runs): SentencePiece's single-precision one,
#: llama.cpp's UGM, Hugging Face's
SENTENCEPIECE, LLAMA_CPP, HUGGING_FACE = 0, 1, 2


compiled_part = CompiledPart("LATTICE_ABI")


def compiled_available() -> bool:
    """True when the compiled lattice is installed (it gives the same paths as the Python walk)."""
    return compiled_part.available()


def use_compiled(on: bool, module: Any = None) -> None:
    """Use the compiled lattice when installed (the default), or the pure-Python walk (tests and
    benches compare the two); ``module`` puts in a compiled one built elsewhere (the tests build
    one when none is installed).

    >>> was = compiled_available()
    >>> use_compiled(False); compiled_lattice() is None
    True
    >>> use_compiled(True); (compiled_lattice() is not None) == was
    True
    """
    compiled_part.use(on, module)


def compiled_lattice() -> Any:
    """The compiled lattice module in use, or None (the pure-Python walk)."""
    return compiled_part.get()


def lattice_table(module: Any, pieces: Mapping[str, int], scores: Sequence[float]) -> Any:
    """``module``'s table of ``pieces`` (``text -> id``, the pieces found in a text; an empty one
    never is) with ``scores[id]`` as each one's lattice score."""
    listed = scores.tolist() if isinstance(scores, array) else [float(x) for x in scores]
    return module.lattice_build(pieces if type(pieces) is dict else dict(pieces), listed)


@dataclass(frozen=True, slots=True)
class Segmentation:
    """One way to cut a chunk: the pieces (lattice nodes: an unknown character is its own piece
    with the unknown id), their ids and character spans, and the total score."""

    pieces: tuple[str, ...]
    ids: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]
    score: float


class Unigram(ChunkCache):
    """Hugging Face's Unigram model; ids and offsets as ``tokenizers``.

    ``vocab`` is the ordered list of ``(piece, score)``; a piece's id is its index (a piece listed
    twice is found under its last index, as in Hugging Face). ``unk_id`` may be ``None``: then a
    chunk that needs the unknown token is a :class:`TokenizerFileError`, as Hugging Face fails.
    """

    kind = "unigram"

    def __init__(self, vocab: Sequence[tuple[str, float]], *, unk_id: int | None = None, byte_fallback: bool = False) -> None:
        columns = _vocab_columns(vocab)
        pieces, scores = columns if columns is not None else _checked_columns(vocab)
        if unk_id is not None:
            if isinstance(unk_id, bool) or not isinstance(unk_id, int) or unk_id < 0:
                raise TokenizerFileError(f"Unigram unk_id {unk_id!r} is not an id")
            if not pieces:
                raise TokenizerFileError("the Unigram vocabulary is empty but it has an unk_id")
            if unk_id >= len(pieces):
                raise TokenizerFileError(f"Unigram unk_id {unk_id} is not below the vocabulary size {len(pieces)}")
        self._pieces = pieces
        self._scores = scores
        self.unk_id = unk_id
        self.byte_fallback = bool(byte_fallback)
        self._id_map: dict[str, int] | None = None  # built on first use (:attr:`_ids`)
        self.min_score = min(scores, default=math.inf)
        self.unk_score = self.min_score - UNK_PENALTY
        self._trie_and_longest: tuple[dict[str, Any], int] | None = None  # built on first use (:attr:`_trie`)
        self._ctable: tuple[Any, Any, Any] | None = None
        self.forget()

    @property
    def _ids(self) -> dict[str, int]:
        """``piece -> id`` (a repeated piece: its last id), built the first time it is needed: a
        load that is then cached or only shown does not pay for it."""
        found = self._id_map
        if found is None:
            pieces = self._pieces
            found = self._id_map = dict(zip(pieces, range(len(pieces))))
        return found

    @property
    def _trie(self) -> dict[str, Any]:
        """The pieces as a trie of characters (a node's id under ``_END``), for the Python walk;
        built the first time it is needed (the compiled lattice has its own table)."""
        if self._trie_and_longest is None:
            self._trie_and_longest = _trie_of(self._ids)
        return self._trie_and_longest[0]

    @property
    def _longest(self) -> int:
        """The length of the longest piece (in characters)."""
        if self._trie_and_longest is None:
            self._trie_and_longest = _trie_of(self._ids)
        return self._trie_and_longest[1]

    # ----- the Model protocol -------------------------------------------------------------------


    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._pieces[token_id] if 0 <= token_id < len(self._pieces) else None

    def get_vocab(self) -> dict[str, int]:
        return dict(self._ids)

    @property
    def vocab_size(self) -> int:
        return len(self._pieces)

    def score(self, token_id: int) -> float:
        """The score of an entry."""
        return self._scores[token_id]


    def _missing_unk(self) -> TokenizerFileError:
        return TokenizerFileError("the text needs the unknown token but this Unigram model has no unk_id")

    def _tokenize(self, text: str) -> list[tuple[int, int, int]]:
        return self._tokens_of(self._best_pieces(text))

    def _tokens_of(self, pieces: list[tuple[str, int, int]]) -> list[tuple[int, int, int]]:
        """The tokens of the best path's fused pieces: an entry's id, else its bytes' tokens
        (``byte_fallback``), else the unknown id."""
        ids = self._ids
        out: list[tuple[int, int, int]] = []
        for piece, start, end in pieces:
            found = ids.get(piece)
            if found is None:
                if self.byte_fallback:
                    fallback = [ids.get(BYTE_TOKENS[b]) for b in piece.encode("utf-8", "surrogatepass")]
                    if None not in fallback:
                        out.extend([(t, start, end) for t in fallback])  # type: ignore[misc]
                        continue
                if self.unk_id is None:
                    raise self._missing_unk()
                found = self.unk_id
            out.append((found, start, end))
        return out

    def _tokenize_ids(self, text: str) -> list[int]:
        """The ids of :meth:`_tokenize`'s tokens: the compiled path's own ids when none of its
        nodes is unknown (a known node's id is its piece's id; only unknown nodes are fused or fall
        back to bytes), else through the pieces."""
        module = compiled_lattice()
        if module is None:
            return [t[0] for t in self._tokenize(text)]
        table = self._ctable
        if table is None or table[0] is not module:
            table = self._ctable = self._compiled_table(module)
        unk_id = self.unk_id
        if table[2] is not None:  # the ids straight from C when no node is unknown
            got = table[2](text, -1 if unk_id is None else unk_id, self.unk_score)
            if type(got) is list:
                return got
        else:
            got = module.lattice_viterbi(table[1], text, HUGGING_FACE, -1 if unk_id is None else unk_id,
                                         self.unk_score)
            if got is not None:
                ids = [node[0] for node in got[0]]
                if unk_id is None or unk_id not in ids:
                    return ids
        if got is None:
            return [t[0] for t in self._tokenize(text)]  # raises: the unknown id is missing
        return [t[0] for t in self._tokens_of(_fused(text, got[0], unk_id))]  # the path, not walked again

    def _viterbi(self, text: str) -> tuple[list[float], list[int], list[int]]:
        """Hugging Face's ``encode_optimized``: for each position, the best score of a path that
        ends there, where that path's last piece starts and its id."""
        n = len(text)
        best = [0.0] * (n + 1)
        starts = [-1] * (n + 1)
        best_id = [0] * (n + 1)
        trie = self._trie
        scores = self._scores
        unk_score = self.unk_score
        unk_id = self.unk_id
        longest = self._longest
        for i in range(n):
            base = best[i]
            single = False
            node = trie
            for j in range(i, min(n, i + longest)):
                node = node.get(text[j])
                if node is None:
                    break
                found = node.get(_END)
                if found is not None:
                    k = j + 1
                    candidate = scores[found] + base
                    if starts[k] < 0 or candidate > best[k]:
                        best[k] = candidate
                        starts[k] = i
                        best_id[k] = found
                    if k == i + 1:
                        single = True
            if not single:
                k = i + 1
                candidate = unk_score + base
                if starts[k] < 0 or candidate > best[k]:
                    if unk_id is None:
                        raise self._missing_unk()
                    best[k] = candidate
                    starts[k] = i
                    best_id[k] = unk_id
        return best, starts, best_id

    def _compiled_path(self, text: str) -> tuple[list[tuple[int, int, int]], float] | None:
        """The best path by the compiled lattice as ``(id, start, end)`` nodes, and its score; None
        without it, or when the path needs the unknown id this model lacks (the Python walk then
        raises)."""
        module = compiled_lattice()
        if module is None:
            return None
        if self._ctable is None or self._ctable[0] is not module:
            self._ctable = self._compiled_table(module)
        unk = self.unk_id if self.unk_id is not None else -1
        return module.lattice_viterbi(self._ctable[1], text, HUGGING_FACE, unk, self.unk_score)

    def _compiled_table(self, module: Any) -> tuple[Any, Any, Any]:
        """``(module, its table of this vocabulary, its ids function on the table or None)``: the
        ids function is ``lattice_ids`` when the module has it (``UIDS_ABI``)."""
        table = lattice_table(module, self._ids, self._scores)
        ids = functools.partial(module.lattice_ids, table) if getattr(module, "UIDS_ABI", None) == 1 else None
        return module, table, ids

    def _best_pieces(self, text: str) -> list[tuple[str, int, int]]:
        """The best path's pieces with consecutive unknown nodes fused (Hugging Face always
        fuses them), as ``(piece, start, end)``."""
        got = self._compiled_path(text)
        if got is not None:
            return _fused(text, got[0], self.unk_id)
        _, starts, best_id = self._viterbi(text)
        unk_id = self.unk_id
        out: list[tuple[str, int, int]] = []
        end = len(text)
        fused_end = -1  # end of the run of unknown nodes being fused, or -1
        while end > 0:
            start = starts[end]
            if best_id[end] == unk_id:
                if fused_end < 0:
                    fused_end = end
            else:
                if fused_end >= 0:
                    out.append((text[end:fused_end], end, fused_end))
                    fused_end = -1
                out.append((text[start:end], start, end))
            end = start
        if fused_end >= 0:
            out.append((text[0:fused_end], 0, fused_end))
        out.reverse()
        return out

    # ----- the explorer's questions -------------------------------------------------------------

    def best(self, text: str) -> Segmentation:
        """The best segmentation of one chunk (unknown characters as separate nodes) and its
        score, exactly the path :meth:`tokenize` takes."""
        if not text:
            return Segmentation((), (), (), 0.0)
        got = self._compiled_path(text)
        if got is not None:
            path, score = got
            return Segmentation(tuple(text[s:e] for _, s, e in path), tuple(t for t, _, _ in path),
                                tuple((s, e) for _, s, e in path), score)
        best, starts, best_id = self._viterbi(text)
        nodes = []
        end = len(text)
        while end > 0:
            start = starts[end]
            nodes.append((text[start:end], best_id[end], (start, end)))
            end = start
        nodes.reverse()
        return Segmentation(
            tuple(p for p, _, _ in nodes), tuple(i for _, i, _ in nodes), tuple(s for _, _, s in nodes), best[len(text)]
        )

    def nbest(self, text: str, n: int) -> tuple[Segmentation, ...]:
        """The ``n`` best segmentations, best first, as Hugging Face's ``Lattice::nbest`` finds
        them (an A* search back from the end over the lattice). Segmentations of exactly equal
        score may come in another order than Hugging Face's heap gives them. Without an
        ``unk_id`` only real paths count: where Hugging Face's lattice gives up at a position
        that starts no entry (even one inside a longer entry), this still finds the paths."""
        if n <= 0 or not text:
            return () if n <= 0 else (Segmentation((), (), (), 0.0),)
        if n == 1 and self.unk_id is not None:
            return (self.best(text),)
        lattice = _Lattice(self, text)
        if n == 1:
            return tuple(lattice.viterbi_path())
        return tuple(lattice.nbest(n))

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["_ctable"] = None  # the compiled table is built again on first use, and the trie
        state["_trie_and_longest"] = None
        state["_id_map"] = None  # and the id map
        return state

    def __setstate__(self, state: dict) -> None:
        if "_ids" in state:  # a pickle from before the lazy id map
            state = dict(state)
            state["_id_map"] = state.pop("_ids")
        state.setdefault("_id_map", None)
        self.__dict__.update(state)
        self.__dict__.setdefault("_trie_and_longest", None)  # a pickle from before the lazy trie held "_trie"


#: the compiled :func:`vocab_columns` (``unigram_columns``, one pass in C), when installed
columns_part = CompiledPart("JLOAD_ABI")


def _vocab_columns(vocab: Any) -> tuple[list[str], list[float]] | None:
    """:func:`vocab_columns`, by the compiled module's ``unigram_columns`` when it is installed.

    >>> _vocab_columns([["a", -1], ("b", -2.5)]), _vocab_columns([["a", True]])
    ((['a', 'b'], [-1.0, -2.5]), None)
    """
    module = columns_part.get()
    return module.unigram_columns(vocab) if module is not None else vocab_columns(vocab)


def vocab_columns(vocab: Any) -> tuple[list[str], list[float]] | None:
    """The pieces and their scores (as floats) of a well-formed vocabulary at C speed: a list of
    ``[piece, score]`` lists or tuples of a ``str`` and an ``int`` or ``float`` (None: let
    :func:`_checked_columns` look at it entry by entry).

    >>> vocab_columns([["a", -1], ("b", -2.5)]), vocab_columns([["a", True]]), vocab_columns([])
    ((['a', 'b'], [-1.0, -2.5]), None, None)
    """
    if type(vocab) is not list or not vocab or not set(map(type, vocab)) <= {list, tuple} or set(map(len, vocab)) != {2}:
        return None
    pieces = list(map(_FIRST, vocab))
    scores = list(map(_SECOND, vocab))
    if set(map(type, pieces)) != {str}:
        return None
    kinds = set(map(type, scores))
    if kinds == {float}:
        return pieces, scores  # already floats (every score of a file read as HF reads it)
    if not kinds <= {int, float}:
        return None
    return pieces, list(map(float, scores))


def _checked_columns(vocab: Any) -> tuple[list[str], list[float]]:
    """:func:`_vocab_columns` entry by entry, the first bad entry a one-line error.

    >>> _checked_columns([["a", 0.0], ["b", "x"]])
    Traceback (most recent call last):
    ...
    tokscope.core.text.errors.TokenizerFileError: Unigram vocabulary entry 1 ('b'): score 'x' is not a number
    """
    pieces: list[str] = []
    scores: list[float] = []
    for number, entry in enumerate(vocab):
        if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence) or len(entry) != 2:
            raise TokenizerFileError(f"Unigram vocabulary entry {number} {entry!r} is not a (piece, score) pair")
        piece, score = entry
        if not isinstance(piece, str):
            raise TokenizerFileError(f"Unigram vocabulary entry {number}: piece {piece!r} is not a string")
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise TokenizerFileError(f"Unigram vocabulary entry {number} ({piece!r}): score {score!r} is not a number")
        pieces.append(piece)
        scores.append(float(score))
    return pieces, scores


def _trie_of(ids: Mapping[str, int]) -> tuple[dict[str, Any], int]:
    """The trie of ``ids``' pieces (each node a dict of characters, a piece's id under ``_END``;
    the empty piece left out: no text finds it) and the longest piece's length.

    >>> _trie_of({"ab": 0, "a": 1, "": 2})
    ({'a': {'b': {'': 0}, '': 1}}, 2)
    """
    trie: dict[str, Any] = {}
    longest = 0
    for piece, i in ids.items():
        if not piece:
            continue
        node = trie
        for ch in piece:
            node = node.setdefault(ch, {})
        node[_END] = i
        longest = max(longest, len(piece))
    return trie, longest


def _fused(text: str, path: list[tuple[int, int, int]], unk_id: int | None) -> list[tuple[str, int, int]]:
    """``(piece, start, end)`` of a path's nodes, each run of nodes with the unknown id fused
    into one piece.

    >>> _fused("xyab", [(0, 0, 1), (0, 1, 2), (3, 2, 4)], 0)
    [('xy', 0, 2), ('ab', 2, 4)]
    """
    out: list[tuple[str, int, int]] = []
    run = -1  # where the run of unknown nodes being fused starts, or -1
    run_end = 0
    for token_id, start, end in path:
        if token_id == unk_id:
            if run < 0:
                run = start
            run_end = end
            continue
        if run >= 0:
            out.append((text[run:run_end], run, run_end))
            run = -1
        out.append((text[start:end], start, end))
    if run >= 0:
        out.append((text[run:run_end], run, run_end))
    return out


class _Lattice:
    """Hugging Face's lattice: nodes by start and by end, BOS and EOS, Viterbi backtrace scores."""

    def __init__(self, model: Unigram, text: str) -> None:
        n = len(text)
        self.text = text
        # node: [id, pos, length, score, backtrace_score]
        self.bos = [-1, 0, 0, 0.0, 0.0]  # BOS is reached with score 0
        self.eos = [-2, n, 0, 0.0, 0.0]
        self.begin: list[list[list]] = [[] for _ in range(n + 1)]
        self.end: list[list[list]] = [[] for _ in range(n + 1)]
        self.begin[n].append(self.eos)
        self.end[0].append(self.bos)
        trie = model._trie
        scores = model._scores
        for i in range(n):
            single = False
            node = trie
            for j in range(i, min(n, i + model._longest)):
                node = node.get(text[j])
                if node is None:
                    break
                found = node.get(_END)
                if found is not None:
                    self._insert(i, j + 1 - i, scores[found], found)
                    if j == i:
                        single = True
            if not single and model.unk_id is not None:
                self._insert(i, 1, model.unk_score, model.unk_id)
        self._viterbi()

    def _insert(self, pos: int, length: int, score: float, token_id: int) -> None:
        node = [token_id, pos, length, score, 0.0]
        self.begin[pos].append(node)
        self.end[pos + length].append(node)

    def _viterbi(self) -> None:
        """Each node's best score from BOS through it (``-inf`` for a node no path reaches, which
        only happens without an unk_id) and its best predecessor (the first of equal ones)."""
        self.prev: dict[int, list] = {}  # id(node) -> the best node before it
        for pos in range(len(self.text) + 1):
            for right in self.begin[pos]:
                best = None
                for left in self.end[pos]:
                    if left[4] == _UNREACHED:
                        continue
                    score = left[4] + right[3]
                    if best is None or score > best:
                        best = score
                        self.prev[id(right)] = left
                right[4] = _UNREACHED if best is None else best

    def viterbi_path(self) -> list[Segmentation]:
        """The best path as Hugging Face's ``Lattice::viterbi`` finds it (none if no path)."""
        nodes = []
        node = self.prev.get(id(self.eos))
        while node is not None and node is not self.bos:
            nodes.append(node)
            node = self.prev.get(id(node))
        if node is None:
            return []
        nodes.reverse()
        text = self.text
        return [
            Segmentation(
                tuple(text[m[1] : m[1] + m[2]] for m in nodes),
                tuple(m[0] for m in nodes),
                tuple((m[1], m[1] + m[2]) for m in nodes),
                self.eos[4],
            )
        ]

    def nbest(self, n: int) -> list[Segmentation]:
        text = self.text
        counter = itertools.count()
        # agenda entries: (-fx, order, node, next_hypothesis, gx); a hypothesis is (node, next, gx)
        agenda: list[tuple[float, int, list, Any, float]] = []
        heapq.heappush(agenda, (-self.eos[3], next(counter), self.eos, None, self.eos[3]))
        out: list[Segmentation] = []
        while agenda:
            _, _, node, nxt, gx = heapq.heappop(agenda)
            hypothesis = (node, nxt, gx)
            if node is self.bos:
                nodes = []
                h = nxt
                while h is not None and h[1] is not None:
                    nodes.append(h[0])
                    h = h[1]
                out.append(
                    Segmentation(
                        tuple(text[m[1] : m[1] + m[2]] for m in nodes),
                        tuple(m[0] for m in nodes),
                        tuple((m[1], m[1] + m[2]) for m in nodes),
                        gx,
                    )
                )
                if len(out) == n:
                    break
                continue
            for left in self.end[node[1]]:
                if left[4] == _UNREACHED:
                    continue
                fx = left[4] + gx
                heapq.heappush(agenda, (-fx, next(counter), left, hypothesis, left[3] + gx))
            if len(agenda) > _MAX_AGENDA:
                keep = min(_MIN_AGENDA, n * 10)
                agenda = [heapq.heappop(agenda) for _ in range(keep)]
                heapq.heapify(agenda)
        return out


def from_json(obj: Mapping[str, Any]) -> Unigram:
    """A :class:`Unigram` from the ``"model"`` object of a ``tokenizer.json``.

    >>> from_json({"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]]}).tokenize("ab")
    [(1, 0, 1), (0, 1, 2)]
    """
    if obj.get("type", "Unigram") != "Unigram":
        raise TokenizerFileError(f"model type {obj.get('type')!r} is not Unigram")
    if "vocab" not in obj or not isinstance(obj["vocab"], list):
        raise TokenizerFileError("Unigram model without its vocab list")
    byte_fallback = obj.get("byte_fallback", False)
    if not isinstance(byte_fallback, bool):
        raise TokenizerFileError(f"Unigram byte_fallback {byte_fallback!r} is not a boolean")
    return Unigram(obj["vocab"], unk_id=obj.get("unk_id"), byte_fallback=byte_fallback)
