"""SentencePiece's BPE: merges by score (``bpe_model.cc``), not by a merge list.

The text starts as its characters (a user-defined piece is one symbol, never merged). Every pair
of neighbouring symbols whose join is a piece of the model (normal, user-defined or unused) is a
candidate; the candidate whose piece has the **highest score** is merged first, the leftmost of
equal scores first; merging makes new candidates with the neighbours. When nothing more joins,
a symbol that is an *unused* piece is split back into the two symbols last seen to make it, and a
symbol that is not a piece is unknown: a run of unknown symbols is one unknown token, or with byte
fallback each becomes its UTF-8 bytes as ``<0xNN>`` pieces (see :meth:`.Pieces.finish`).

llama.cpp's SPM tokenizer (GGUF's ``llama`` model) is the same merge by score; it differs only in
which pieces may be joined and what an unknown symbol becomes (``llama_cpp=True``: every token
joins, control ones too, an unknown symbol is always spelled in byte tokens, and unknown runs are
kept apart).

>>> from .sentencepiece_pieces import Pieces, NORMAL, UNKNOWN
>>> table = Pieces(["<unk>", "a", "b", "c", "ab", "bc"], [0, -1, -2, -3, -5, -4],
...                [UNKNOWN, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL])
>>> model = SentencePieceBPE(table)
>>> model.tokenize("abc"), [s.piece for s in model.replay("abc").steps]
([(1, 0, 1), (5, 1, 3)], ['bc'])
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from .sentencepiece_pieces import SPACE, UNKNOWN, UNUSED, Pieces, PiecesModel, byte_piece, cut_mode, cut_words

#: how deep an unused piece is split back (the library's limit)
MAX_RESEGMENT_DEPTH = 100
#: words shorter than this are cached, and the cache is emptied when it holds this many
CACHE_MAX_CHARS = 256
CACHE_CAPACITY = 100_000


@dataclass(frozen=True, slots=True)
class ScoreMerge:
    """One merge of a replay: the two symbols joined, the piece they make, its id and score, and
    the character span of the result in the word."""

    left: str
    right: str
    piece: str
    id: int
    score: float
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ScoreReplay:
    """How a word was merged: its first symbols, each merge in order, the final symbols (before
    unused pieces are split back and unknown ones resolved)."""

    initial: tuple[str, ...]
    steps: tuple[ScoreMerge, ...]
    final: tuple[str, ...]


def negative_zeros(scores: Sequence[float]) -> list[int]:
    """The indices of the scores that are -0.0, found at C speed in an array's bytes.

    >>> negative_zeros(array("f", [0.0, -0.0, -1.0, -0.0])), negative_zeros([1.0, -0.0])
    ([1, 3], [1])
    """
    if not isinstance(scores, array) or scores.typecode not in "fd":
        return [i for i, s in enumerate(scores) if s == 0.0 and math.copysign(1.0, s) < 0]
    zero = array(scores.typecode, [-0.0]).tobytes()
    size = len(zero)
    blob = scores.tobytes()
    out = []
    at = blob.find(zero)
    while at >= 0:
        if at % size == 0:
            out.append(at // size)
        at = blob.find(zero, at + 1)
    return out


class SentencePieceBPE(PiecesModel):
    """SentencePiece's BPE over a :class:`.Pieces` table (see the module)."""

    kind = "sentencepiece-bpe"
    label = "BPE by score (SentencePiece)"

    def __init__(self, pieces: Pieces, *, treat_whitespace_as_suffix: bool = False, llama_cpp: bool = False) -> None:
        self.table = pieces
        self.byte_fallback = pieces.byte_fallback or llama_cpp
        self.unk_id = pieces.unk_id
        self.llama_cpp = llama_cpp
        types = pieces.types
        self._llama_join: dict[str, int] | None = None
        if llama_cpp:
            self.label = "BPE by score (llama.cpp SPM)"
            # llama.cpp joins symbols into any token (the last of a duplicated text wins)
            self._llama_join = dict(zip(pieces.pieces, range(len(pieces))))
        self._scores = pieces.scores
        self._negatives: frozenset[int] | None = frozenset() if llama_cpp else None
        self._types = types
        self._suffix = treat_whitespace_as_suffix
        self._safe: str | None = None
        self._cache: dict[str, tuple[tuple[int | None, int, int], ...]] = {}
        self._ids_cache: dict[str, tuple[tuple[int, ...], bool, bool]] = {}

    @property
    def _join(self) -> dict[str, int]:
        """The pieces symbols may be joined into (the table's look-ups, made on first use)."""
        return self._llama_join if self._llama_join is not None else self.table.lookups

    @property
    def _negative_zero(self) -> frozenset[int]:
        """The pieces scored -0.0 (the library orders scores by their bits: +0.0 before -0.0;
        llama.cpp compares floats), found on first use."""
        found = self._negatives
        if found is None:
            join, pieces = self._join, self.table.pieces
            found = self._negatives = frozenset(i for i in negative_zeros(self._scores) if join.get(pieces[i]) == i)
        return found

    def _cut_mode(self) -> str:
        """Where no merge can cross, worked out on first use: ``every`` ``▁`` when no piece holds
        one inside it, ``runs`` (only where a ``▁`` follows another character) when the pieces
        that hold one inside are runs of ``▁`` alone (Llama's ``▁▁▁▁``), else ``none``."""
        if self._safe is None:
            self._safe = cut_mode(self._join, self._suffix)
        return self._safe

    # ----- the Model protocol (look-ups and scores: PiecesModel) ------------------------------

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"] = {}
        state["_ids_cache"] = {}
        return state

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        """The tokens of ``text`` (a whole normalized text): ``(id, start, end)``."""
        if not text:
            return []
        raw: list[tuple[int | None, int, int]] = []
        for start, end in self._words(text):
            word = text[start:end]
            found = self._cache.get(word)
            if found is None:
                found = tuple(self._encode_word(word))
                if len(word) < CACHE_MAX_CHARS:
                    if len(self._cache) >= CACHE_CAPACITY:
                        self._cache.clear()
                    self._cache[word] = found
            if start:
                raw.extend([(t, s + start, e + start) for t, s, e in found])
            else:
                raw.extend(found)
        if self.llama_cpp:
            return self._llama_finish(raw, text)
        return self.table.finish(raw, text)

    def encode_ids(self, text: str) -> list[int]:
        """The ids of :meth:`tokenize`'s tokens without their offsets: each word's ids are kept
        whole (its unknown run fused, or spelled in bytes, within it), and an unknown run that
        crosses from one word into the next is fused where they meet, as :meth:`.Pieces.finish`
        fuses it over the whole text.

        >>> from .sentencepiece_pieces import Pieces, NORMAL, UNKNOWN
        >>> table = Pieces(["<unk>", "▁", "a"], [0, -1, -2], [UNKNOWN, NORMAL, NORMAL])
        >>> m = SentencePieceBPE(table)
        >>> m.encode_ids("▁xy▁za"), [t[0] for t in m.tokenize("▁xy▁za")]
        ([1, 0, 1, 0, 2], [1, 0, 1, 0, 2])
        >>> m.encode_ids("ax▁"), SentencePieceBPE(Pieces(["<unk>", "a"], [0, -1], [UNKNOWN, NORMAL])).encode_ids("ax▁y")
        ([2, 0, 1], [1, 0])
        """
        if not text:
            return []
        if self.llama_cpp:
            return [t[0] for t in self.tokenize(text)]
        out: list[int] = []
        extend = out.extend
        cache = self._ids_cache
        get = cache.get
        table = self.table
        fuse = not table.byte_fallback
        unk_open = False
        for word in self._word_texts(text):
            entry = get(word)
            if entry is None:
                raw = self._encode_word(word)
                ids = tuple([t[0] for t in table.finish(raw, word)])
                entry = (ids, fuse and self._unknown(raw[0][0]), fuse and self._unknown(raw[-1][0]))
                if len(word) < CACHE_MAX_CHARS:
                    if len(cache) >= CACHE_CAPACITY:
                        cache.clear()
                    cache[word] = entry
            if unk_open and entry[1]:
                extend(entry[0][1:])
            else:
                extend(entry[0])
            unk_open = entry[2]
        return out

    def _unknown(self, token_id: int | None) -> bool:
        """Whether :meth:`.Pieces.finish` takes a raw id for an unknown piece."""
        return token_id is None or token_id == self.table.unk_id or self.table.types[token_id] == UNKNOWN

    def _word_texts(self, text: str) -> list[str]:
        """The texts of :meth:`_words`' spans (cut by ``str.split`` when every ``▁`` cuts).

        >>> from .sentencepiece_pieces import Pieces, NORMAL, UNKNOWN
        >>> m = SentencePieceBPE(Pieces(["<unk>", "▁a"], [0, -1], [UNKNOWN, NORMAL]))
        >>> m._word_texts("x▁a▁▁b▁")
        ['x', '▁a', '▁', '▁b', '▁']
        """
        if SPACE not in text:
            return [text]
        if self._cut_mode() != "every":
            return [text[start:end] for start, end in self._words(text)]
        parts = text.split(SPACE)
        if self._suffix:
            words = [part + SPACE for part in parts[:-1]]
            if parts[-1]:
                words.append(parts[-1])
            return words
        words = [SPACE + part for part in parts[1:]]
        if parts[0]:
            words.insert(0, parts[0])
        return words

    def _words(self, text: str) -> list[tuple[int, int]]:
        """Spans of ``text`` no merge crosses (see :func:`.cut_words`)."""
        if SPACE not in text:
            return [(0, len(text))]
        return cut_words(text, self._cut_mode(), self._suffix)

    # ----- merging -------------------------------------------------------------------------------

    def _symbols(self, word: str) -> tuple[list[str], list[bool]]:
        pieces: list[str] = []
        frozen: list[bool] = []
        table = self.table
        pos = 0
        n = len(word)
        user = table.user_defined and not self.llama_cpp
        while pos < n:
            k = table.user_match(word, pos) if user else 0
            if k:
                pieces.append(word[pos:pos + k])
                frozen.append(True)
                pos += k
            else:
                pieces.append(word[pos])
                frozen.append(False)
                pos += 1
        return pieces, frozen

    def _merge(self, word: str, steps: list[ScoreMerge] | None = None) -> tuple[list[str], dict[str, tuple[str, str]]]:
        """The final symbols of ``word`` (``""`` for a symbol merged away) and the unused pieces'
        last-seen parts."""
        sym, frozen = self._symbols(word)
        n = len(sym)
        offsets = [0] * n
        if steps is not None:
            for i in range(1, n):
                offsets[i] = offsets[i - 1] + len(sym[i - 1])
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        join = self._join
        scores = self._scores
        negative_zero = self._negative_zero
        types = self._types
        rev: dict[str, tuple[str, str]] = {}
        heap: list[tuple[float, bool, int, int, int]] = []

        def push(left: int, right: int) -> None:
            if left < 0 or right < 0 or frozen[left] or frozen[right]:
                return
            piece = sym[left] + sym[right]
            found = join.get(piece)
            if found is None:
                return
            heapq.heappush(heap, (-scores[found], found in negative_zero, left, right, len(piece)))
            if types[found] == UNUSED:
                rev[piece] = (sym[left], sym[right])

        for i in range(n - 1):
            push(i, i + 1)
        while heap:
            _, _, left, right, size = heapq.heappop(heap)
            a, b = sym[left], sym[right]
            if not a or not b or len(a) + len(b) != size:
                continue
            merged = a + b
            if steps is not None:
                found = join[merged]
                start = offsets[left]
                steps.append(ScoreMerge(a, b, merged, found, scores[found], start, start + size))
            sym[left] = merged
            sym[right] = ""
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            push(prev[left], left)
            push(left, nxt[left])
        return sym, rev

    def _encode_word(self, word: str) -> list[tuple[int | None, int, int]]:
        sym, rev = self._merge(word)
        out: list[tuple[int | None, int, int]] = []
        pos = 0
        for s in sym:
            if s:
                self._resegment(s, rev, pos, out, 0)
                pos += len(s)
        return out

    def _resegment(self, w: str, rev: dict[str, tuple[str, str]], pos: int,
                   out: list[tuple[int | None, int, int]], depth: int) -> None:
        found = self._join.get(w)
        if self.llama_cpp or depth > MAX_RESEGMENT_DEPTH or found is None or self._types[found] != UNUSED:
            out.append((found, pos, pos + len(w)))
            return
        parts = rev.get(w)
        if parts is None:
            out.append((None, pos, pos + len(w)))
            return
        self._resegment(parts[0], rev, pos, out, depth + 1)
        self._resegment(parts[1], rev, pos + len(parts[0]), out, depth + 1)

    def _llama_finish(self, raw: list[tuple[int | None, int, int]], text: str) -> list[tuple[int, int, int]]:
        """llama.cpp's last step: a symbol that is no token becomes its UTF-8 bytes' tokens (a
        byte missing from the vocabulary is the unknown token), each spanning the symbol."""
        out: list[tuple[int, int, int]] = []
        join = self._join
        unk = self.table.unk_id if self.table.unk_id is not None else 0
        for token_id, start, end in raw:
            if token_id is not None:
                out.append((token_id, start, end))
                continue
            for b in text[start:end].encode("utf-8", "surrogatepass"):
                found = join.get(byte_piece(b))
                if found is None:
                    found = join.get(chr(b), unk) if b < 128 else unk
                out.append((found, start, end))
        return out

    # ----- the explorer's questions -------------------------------------------------------------

    def parents(self, token_id: int) -> tuple[int, int] | None:
        """The two pieces whose merge makes piece ``token_id`` when its own text is merged (the
        last merge of that replay), or None for a piece no merge makes."""
        piece = self.table.id_to_token(token_id)
        if piece is None or len(piece) < 2 or self._join.get(piece) != token_id:
            return None
        steps: list[ScoreMerge] = []
        sym, _ = self._merge(piece, steps)
        if not steps or [s for s in sym if s] != [piece]:
            return None
        last = steps[-1]
        left, right = self._join.get(last.left), self._join.get(last.right)
        return None if left is None or right is None else (left, right)

    def replay(self, text: str) -> ScoreReplay:
        """The merges of ``text`` (a normalized text, cut where no merge crosses) in the order
        the model makes them in each part; spans are character offsets into ``text``."""
        steps: list[ScoreMerge] = []
        initial: list[str] = []
        final: list[str] = []
        for start, end in self._words(text):
            word = text[start:end]
            first, _ = self._symbols(word)
            initial.extend(first)
            found: list[ScoreMerge] = []
            sym, _ = self._merge(word, found)
            final.extend(s for s in sym if s)
            steps.extend(ScoreMerge(m.left, m.right, m.piece, m.id, m.score, m.start + start, m.end + start)
                         for m in found)
        return ScoreReplay(tuple(initial), tuple(steps), tuple(final))
