"""Compare several tokenizers on one text: align their cuts, count, price.

Every tokenizer cuts the same text into pieces; a *boundary* is a place between two neighbouring
pieces. Boundaries are compared as **byte offsets** into the text's UTF-8, which places cuts that
fall inside a character (gpt2 cuts most emoji into byte pieces) exactly; :class:`TextIndex` turns
a byte offset back into a character offset plus the number of bytes into that character.

A *word* is a maximal run of non-whitespace characters as ``str.split()`` sees them (so
``len(text.split())``), the same everywhere in tokscope. Scripts written without spaces (Chinese,
Japanese, Thai) therefore have few, long words; tokens per word is only meaningful for texts that
separate words with spaces.

The main calls::

    segs = [segment(tok, text) for tok in tokenizers]   # one Segmentation per tokenizer
    result = compare(text, segs)                        # Comparison: stats + alignment
    prices = costs(result.stats, price_in=2.5, price_out=10, copies=1000)

Where only the numbers and the cuts are wanted (``tokscope compare``), :func:`summarize` gives
each tokenizer's :class:`Summary` instead: its counts and its boundaries, without the pieces' ids
and offsets, so that a big text never holds several tokenizations at once::

    result = compare(text, [summarize(tok, text) for tok in tokenizers])   # the same Comparison

The comparison screen keeps one :class:`~tokscope.core.document.document.Document` per tokenizer, edited as
the text changes, and reads each one's segmentation with :func:`from_document`.
"""

from __future__ import annotations

import math
import re
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, reduce
from operator import and_, or_
from itertools import accumulate, compress
from typing import Any, Literal

from ..text.display import safe_text
from ..document.document import PARTIAL, SPECIAL, Document, byte_ends
from ..text.errors import TokscopeError
from ..text.measure import count_words, ratio, utf8_len
from ..text.types import is_whole_utf8
from ..tokenizer.rows import Rows
from ..tokenizer.tokenizer import Tokenizer, fix_surrogates
from ..text.compiled import CompiledPart

#: How many tokenizers the comparison screen shows at once (the CLI has no limit).
MAX_ON_SCREEN = 4

#: Default encodings compared when the user names none.
DEFAULT_COMPARE = ("gpt2", "cl100k_base", "o200k_base")



# ----- the compiled bitmaps -----------------------------------------------------------------------


compiled_part = CompiledPart("TILE_ABI")


def use_compiled(on: bool, module: Any = None) -> None:
    """Build start maps and combine bitmaps with the compiled code when installed (the default), or
    in Python (the tests hold the two to each other); ``module`` puts in one built elsewhere.

    >>> was = compiled_bitmaps() is not None
    >>> use_compiled(False); compiled_bitmaps() is None
    True
    >>> use_compiled(True); (compiled_bitmaps() is not None) == was
    True
    """
    compiled_part.use(on, module)


def compiled_bitmaps() -> Any:
    """The compiled module in use for start maps and bitmaps, or None (the Python paths)."""
    return compiled_part.get()


# ----- boundaries ---------------------------------------------------------------------------------


class Boundaries(Collection[int]):
    """A set of byte offsets in ``[0, size)`` kept as a bitmap (one byte per offset of the text, 1
    for a member): a 1 MB text's cuts take 1 MB where a frozenset of their ints takes about 15, and
    ``&``, ``-``, ``|`` and counting run in C (as big-integer operations on the bitmaps).
    Membership is an index; iterating gives the offsets in order; it compares equal to a set with
    the same members.

    >>> a, b = Boundaries([5, 2, 9, 2], size=10), Boundaries([2, 7, 9], size=10)
    >>> list(a), len(a), 9 in a, 3 in a, list(a & b), list(a - b), list(a | b), a == {2, 5, 9}
    ([2, 5, 9], 3, True, False, [2, 9], [5], [2, 5, 7, 9], True)
    """

    __slots__ = ("_bits", "_count")

    def __init__(self, values: Iterable[int] = (), *, size: int | None = None, bits: bytes | None = None) -> None:
        self._count: int | None = None  # len(), worked out once
        if bits is not None:
            self._bits = bits
            return
        if size is None:
            values = list(values)
            size = max(values, default=-1) + 1
        out = bytearray(size)
        for v in values:
            out[v] = 1
        self._bits = bytes(out)

    def _int(self) -> int:
        return int.from_bytes(self._bits, "little")

    def _new(self, value: int) -> Boundaries:
        return Boundaries(bits=value.to_bytes(len(self._bits), "little"))

    def _op(self, other: Boundaries, op: int, value: Callable[[], int]) -> Boundaries:
        """``self <op> other`` byte by byte, compiled (``op``: 0 ``&``, 1 ``& ~``, 2 ``|``) where
        both bitmaps are as long, else as ints (``value()``)."""
        module = compiled_bitmaps()
        if module is not None and len(self._bits) == len(other._bits):
            return Boundaries(bits=module.bits_op(self._bits, other._bits, op))
        return self._new(value())

    def __len__(self) -> int:
        if self._count is None:
            module = compiled_bitmaps()
            self._count = self._bits.count(1) if module is None else module.bits_count(self._bits)
        return self._count

    def __iter__(self) -> Iterator[int]:
        return compress(range(len(self._bits)), self._bits)

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and 0 <= value < len(self._bits) and self._bits[value] == 1

    def __and__(self, other: Boundaries) -> Boundaries:
        return self._op(other, 0, lambda: self._int() & other._int())

    def __sub__(self, other: Boundaries) -> Boundaries:
        return self._op(other, 1, lambda: self._int() & ~other._int())

    def __or__(self, other: Boundaries) -> Boundaries:
        return self._op(other, 2, lambda: self._int() | other._int())

    def common(self, other: Boundaries) -> int:
        """How many members both have (``len(a & b)`` without building it).

        >>> Boundaries([2, 5, 9], size=10).common(Boundaries([2, 7, 9], size=10))
        2
        """
        module = compiled_bitmaps()
        if module is not None and len(self._bits) == len(other._bits):
            return module.bits_common(self._bits, other._bits)
        return (self._int() & other._int()).bit_count()  # one bit per member: its byte is 0 or 1

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Boundaries):
            return self._bits.rstrip(b"\0") == other._bits.rstrip(b"\0")
        if isinstance(other, (set, frozenset)):
            return len(self) == len(other) and all(v in self for v in other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Boundaries({list(self)!r})"


# ----- text positions ---------------------------------------------------------------------------


class TextIndex:
    """Character <-> byte offsets of one text (its UTF-8 encoding).

    >>> ix = TextIndex("aé😀b")
    >>> ix.n_chars, ix.n_bytes
    (4, 8)
    >>> ix.byte_of_char(2), ix.byte_of_char(3)
    (3, 7)
    >>> ix.char_of_byte(5)   # third byte of 😀 (char 2): 2 bytes into it
    (2, 2)
    >>> ix.chars_before(5)   # characters begun before byte 5
    3
    """

    __slots__ = ("n_bytes", "n_chars", "_starts")

    def __init__(self, text: str) -> None:
        self.n_chars = len(text)
        if text.isascii():
            self.n_bytes = self.n_chars
            self._starts: list[int] | None = None
        else:
            data = text.encode("utf-8", "surrogatepass")
            self.n_bytes = len(data)
            self._starts = [i for i, b in enumerate(data) if b < 0x80 or b >= 0xC0]

    def byte_of_char(self, char: int) -> int:
        """Byte offset where character ``char`` starts (``n_chars`` maps to ``n_bytes``)."""
        if self._starts is None or char >= self.n_chars:
            return char if self._starts is None else self.n_bytes
        return self._starts[char]

    def char_of_byte(self, byte: int) -> tuple[int, int]:
        """``(char, inside)``: the character holding ``byte`` and how many bytes into it it is."""
        if self._starts is None:
            return byte, 0
        if byte >= self.n_bytes:
            return self.n_chars, byte - self.n_bytes
        char = bisect_right(self._starts, byte) - 1
        return char, byte - self._starts[char]

    def chars_before(self, byte: int) -> int:
        """How many characters begin before ``byte`` (the character end offset of a piece ending there)."""
        if self._starts is None:
            return byte
        return bisect_left(self._starts, byte)


# ----- one tokenizer's cut of a text --------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Segmentation:
    """One tokenizer's pieces of one text, kept compact: ids, flags and where each piece ends.

    ``ends[i]`` is the byte offset (into the text's UTF-8) where piece ``i`` ends, so piece ``i``
    covers bytes ``ends[i-1]`` (0 for the first) to ``ends[i]``; ``flags`` are the document's
    ``PARTIAL``/``SPECIAL``/... bits per piece (empty: none set). Offsets are into the *original*
    text, so tokenizers of any kind line up, through normalizers too.
    """

    name: str
    ids: Sequence[int]
    ends: Sequence[int]
    n_chars: int
    n_bytes: int
    partial: int = 0
    single_byte: int = 0
    special: int = 0
    flags: Sequence[int] = field(default=(), repr=False)

    @property
    def count(self) -> int:
        """The number of tokens."""
        return len(self.ids)

    def starts(self) -> list[int]:
        """Byte offset where each piece starts."""
        return [0, *self.ends[:-1]] if self.ends else []

    def boundaries(self) -> Boundaries:
        """Byte offsets between two pieces (neither 0 nor the end of the text).

        >>> list(Segmentation("x", (1, 2, 3), (2, 3, 5), 5, 5).boundaries())
        [2, 3]
        """
        return Boundaries(self.ends[:-1], size=self.n_bytes + 1)

    def summary(self, *, ids: bool = False) -> Summary:
        """Its :class:`Summary` (the ids kept with it when ``ids``).

        >>> s = Segmentation("x", (1, 2, 3), (2, 3, 5), 5, 5, single_byte=1).summary()
        >>> s.count, s.single_byte, list(s.boundaries()), s.ids
        (3, 1, [2, 3], ())
        """
        return Summary(self.name, self.count, self.n_chars, self.n_bytes, self.partial, self.single_byte,
                       self.special, self.boundaries(), self.ids if ids else ())

    def byte_span(self, i: int) -> tuple[int, int]:
        return (self.ends[i - 1] if i else 0), self.ends[i]

    def index_at_byte(self, byte: int) -> int:
        """The index of the piece holding ``byte`` (the last piece for the end of the text)."""
        return min(bisect_right(self.ends, byte), len(self.ends) - 1)

    def overlapping(self, byte_start: int, byte_end: int) -> range:
        """Indices of the pieces that share at least one byte with ``[byte_start, byte_end)``.

        >>> seg = Segmentation("x", (1, 2, 3), (2, 3, 5), 5, 5)
        >>> list(seg.overlapping(1, 3)), list(seg.overlapping(3, 4))
        ([0, 1], [2])
        """
        if byte_end <= byte_start or not self.ends:
            return range(0)
        first = bisect_right(self.ends, byte_start)
        last = bisect_left(self.ends, byte_end)
        return range(first, min(last, len(self.ends) - 1) + 1)


def _segmentation(tokenizer: Tokenizer, name: str, text: str, ids: Sequence[int], ends: Sequence[int],
                  flags: Callable[[], Sequence[int]]) -> Segmentation:
    lengths = tokenizer.byte_lengths
    per_id = Counter(ids)
    if tokenizer.pieces_tile_bytes:  # a token is partial or special wherever it occurs
        shape, is_special = tokenizer.token_shape, tokenizer.is_special
        partial = sum(c for i, c in per_id.items() if shape(i)[2])
        special = sum(c for i, c in per_id.items() if is_special(i))
        piece_flags: Sequence[int] = ()
    else:
        piece_flags = array("b", flags())
        per_flag = Counter(piece_flags)
        partial = sum(c for f, c in per_flag.items() if f & PARTIAL)
        special = sum(c for f, c in per_flag.items() if f & SPECIAL)
    return Segmentation(
        name, ids if isinstance(ids, array) else array("q", ids), ends if isinstance(ends, array) else array("q", ends),
        len(text), utf8_len(text), partial=partial,
        single_byte=sum(c for i, c in per_id.items() if lengths[i] == 1), special=special, flags=piece_flags,
    )


def from_document(doc: Document, *, name: str | None = None) -> Segmentation:
    """The :class:`Segmentation` of a document, read from its columns (an edited document gives the
    segmentation of its new text without encoding it again).

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\\S+|\\s+")
    >>> list(from_document(Document.build(tok, "abc")).ends)
    [2, 3]
    """
    return _segmentation(doc.tokenizer, name or doc.tokenizer.name, doc.text, doc.ids, doc.byte_ends(),
                         lambda: doc.flags)


def segment(
    tokenizer: Tokenizer,
    text: str,
    *,
    allowed_special: Literal["all"] | Collection[str] = (),
    disallowed_special: Literal["all"] | Collection[str] = (),
    name: str | None = None,
) -> Segmentation:
    """Encode ``text`` with ``tokenizer`` into a :class:`Segmentation`.

    Special tokens follow :meth:`Tokenizer.encode`, except that by default special-token text is
    encoded as ordinary text (``disallowed_special=()``): a comparison never refuses a text.
    The ids equal ``tokenizer.encode(text, ...)`` with the same arguments.
    """
    text = fix_surrogates(text)
    name = name or tokenizer.name
    if tokenizer.pieces_tile_bytes:
        # the ids alone place the pieces: their bytes tile the text's
        ids = tokenizer.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        ends = array("q", accumulate(map(tokenizer.byte_lengths.__getitem__, ids)))
        if not ends or ends[-1] == utf8_len(text):
            return _segmentation(tokenizer, name, text, ids, ends, tuple)
    return _scanned(tokenizer, name, text, allowed_special, disallowed_special)


def _scanned(tokenizer: Tokenizer, name: str, text: str, allowed_special: Literal["all"] | Collection[str],
             disallowed_special: Literal["all"] | Collection[str]) -> Segmentation:
    """:func:`segment` piece by piece (every kind of tokenizer; ``text``'s surrogates fixed)."""
    allowed, disallowed = tokenizer.resolve_special(allowed_special, disallowed_special)
    tokenizer.check_special(text, disallowed)
    rows = Rows(compact=True)
    tokenizer.scan_text(rows, text, allowed_special=allowed)
    ends = byte_ends(tokenizer, text, rows.ids, rows.starts, rows.ends, rows.flags)
    return _segmentation(tokenizer, name, text, rows.ids, ends, lambda: rows.flags)


# ----- one tokenizer's numbers, without its pieces ------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Summary:
    """What a comparison needs of one tokenizer's cut of a text, without its pieces: the counts of
    a :class:`Segmentation` and its :meth:`~Segmentation.boundaries` (a bitmap of one byte per
    byte of the text: 5 MB for a 5 MB text, where the pieces' ids and ends take 8 bytes a token
    each). ``ids`` are kept only when asked for; :func:`compare` takes summaries and
    segmentations alike.
    """

    name: str
    count: int
    n_chars: int
    n_bytes: int
    partial: int
    single_byte: int
    special: int
    cuts: Boundaries = field(repr=False)
    ids: Sequence[int] = field(default=(), repr=False)

    def boundaries(self) -> Boundaries:
        """Byte offsets between two pieces (as :meth:`Segmentation.boundaries`)."""
        return self.cuts


#: a token's mark in a start map (see :func:`start_mark`): 1 plus these bits
_SINGLE_BYTE, _PARTIAL, _SPECIAL = 1, 2, 4
#: ``bytes.translate`` table: every mark to 1 (a member of a :class:`Boundaries`), 0 stays 0
_TO_ONE = bytes([0] + [1] * 255)
#: ids joined at a time into a start map: ``bytes.join`` keeps an 80-byte buffer record per item
#: while it works (all at once, a text's 1.5 million tokens would take 120 MB for a moment; 1,024
#: at a time, 80 KB)
_JOIN_SLICE = 1 << 10


@lru_cache(maxsize=None)
def start_mark(length: int, kind: int) -> bytes:
    """A token's mark in a :func:`start_map`: the byte ``1 + kind`` (:data:`_SINGLE_BYTE`,
    :data:`_PARTIAL`, :data:`_SPECIAL` bits), then a zero for each further byte (one object per
    length and kind; a token of no bytes has no mark).

    >>> start_mark(3, _PARTIAL), start_mark(0, 0)
    (b'\\x03\\x00\\x00', b'')
    """
    return bytes([1 + kind]) + bytes(length - 1) if length else b""


def _length_and_kind(tokenizer: Tokenizer, token_id: int) -> tuple[int, int]:
    """A token's byte length and kind bits (:data:`_SINGLE_BYTE`, :data:`_PARTIAL`, :data:`_SPECIAL`).

    >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\\S+|\\s+")
    >>> _length_and_kind(tok, 256), _length_and_kind(tok, 0xE2)   # "ab"; a byte no character is alone
    ((2, 0), (1, 3))
    """
    data = tokenizer.token_bytes(token_id)
    return len(data), ((len(data) == 1) * _SINGLE_BYTE | (not is_whole_utf8(data)) * _PARTIAL
                       | tokenizer.is_special(token_id) * _SPECIAL)


def _start_marks(tokenizer: Tokenizer, ids: Iterable[int]) -> dict[int, bytes]:
    """``token id -> start_mark(...)`` of ``tokenizer``, kept with it (plain data: the table holds
    no reference back to the tokenizer) and completed for ``ids`` on the way."""
    table: dict[int, bytes] = tokenizer.derived("compare.start_marks", dict)
    new = set(ids).difference(table)
    for token_id in new:
        table[token_id] = start_mark(*_length_and_kind(tokenizer, token_id))
    return table


def _new_mark_table(tokenizer: Tokenizer, module: Any) -> array:
    """A start-map table for :func:`_tiled_summary`, sized to the vocabulary: for byte-level BPE
    from ranks every entry of the ranks is filled at once (in C, from their bytes), for other kinds
    and for added and special tokens each on first use (from ``token_bytes``: its id -> bytes table
    is built only if the text has such a token)."""
    table = array("I", bytes(4 * tokenizer.n_vocab))
    ranks = tokenizer.ranks
    if isinstance(ranks, dict) and ranks:
        module.tile_fill_ranks(table, ranks)  # ranks past the table's end are filled on first use
        for token_id in {*tokenizer.added_tokens.values(), *tokenizer.special_tokens.values()}:
            if 0 <= token_id < len(table):
                table[token_id] = 0  # an added token's bytes are its own, whatever a rank says
    return table


def _tiled_bits(tokenizer: Tokenizer, ids: Sequence[int], n_bytes: int,
                module: Any) -> tuple[bytes, Sequence[int]] | None:
    """The compiled start map of ``ids`` as ``(bits, tokens per kind)``: the bitmap of their
    :class:`Boundaries` (``n_bytes + 1`` bytes) and how many tokens of each kind
    (:func:`_length_and_kind`, as :func:`start_map` marks them); None when they do not tile
    ``n_bytes`` bytes, or when a token is too long for the table (the Python start map takes it).

    The table (``array('I')`` by token id: ``length << 4 | (1 + kind)``, 0 for not worked out yet;
    4 bytes a token of the vocabulary) is kept with the tokenizer (plain data), and completed for
    ``ids`` when they have tokens it lacks.
    """
    table: array = tokenizer.derived("compare.mark_table", lambda: _new_mark_table(tokenizer, module))
    found = module.tile_starts(ids, table, n_bytes)
    if not isinstance(found, list):
        return found
    top = max(found)
    if top >= len(table):
        tokenizer.token_bytes(top)  # an id not in the vocabulary is its error, not a table that big
        table.frombytes(bytes(4 * (top + 1 - len(table))))
    if not module.tile_fill(table, found, tokenizer.token_bytes, tokenizer.is_special):
        return None
    found = module.tile_starts(ids, table, n_bytes)
    return None if isinstance(found, list) else found  # (every id has its entry now)


def start_map(tokenizer: Tokenizer, ids: Sequence[int]) -> bytes:
    """The tokens' marks (:func:`start_mark`) joined: for a tokenizer whose pieces tile the text's
    bytes, one byte per byte of the text, nonzero where a piece starts (``1 +`` its kind bits),
    zero inside pieces.

    >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\\S+|\\s+")
    >>> list(start_map(tok, tok.encode("abc")))   # "ab" (2 bytes), then "c" (1 byte, kind 1)
    [1, 0, 2]
    """
    get = _start_marks(tokenizer, ids).__getitem__
    return b"".join([b"".join(map(get, ids[i:i + _JOIN_SLICE])) for i in range(0, len(ids), _JOIN_SLICE)])


def _tiled_summary(tokenizer: Tokenizer, name: str, text: str, ids: Sequence[int], keep_ids: bool) -> Summary | None:
    """The :class:`Summary` of ``ids`` from their :func:`start_map` (built by the compiled code
    when installed); None when the pieces do not tile the text's bytes (some text in no piece, a
    token of no bytes)."""
    module = compiled_bitmaps()
    if module is None:
        return _tiled_summary_python(tokenizer, name, text, ids, keep_ids)
    found = _tiled_bits(tokenizer, ids, utf8_len(text), module)
    if found is None:
        return _tiled_summary_python(tokenizer, name, text, ids, keep_ids)
    bits, per_kind = found
    cuts = Boundaries(bits=bits)
    cuts._count = max(len(ids) - 1, 0)  # a start per token, each at its own byte, the first's no cut
    return _kind_summary(name, len(ids), len(text), len(bits) - 1, per_kind, cuts, ids, keep_ids)


def _kind_summary(name: str, count: int, n_chars: int, n_bytes: int, per_kind: Sequence[int], cuts: Boundaries,
                  ids: Sequence[int], keep_ids: bool) -> Summary:
    """A :class:`Summary` from the tokens counted by kind (``per_kind[kind]``)."""
    return Summary(
        name, count, n_chars, n_bytes,
        partial=sum(n for kind, n in enumerate(per_kind) if kind & _PARTIAL),
        single_byte=sum(n for kind, n in enumerate(per_kind) if kind & _SINGLE_BYTE),
        special=sum(n for kind, n in enumerate(per_kind) if kind & _SPECIAL),
        cuts=cuts, ids=array("q", ids) if keep_ids else (),
    )


def _tiled_summary_python(tokenizer: Tokenizer, name: str, text: str, ids: Sequence[int],
                          keep_ids: bool) -> Summary | None:
    """:func:`_tiled_summary` in Python (the compiled path's oracle)."""
    starts = start_map(tokenizer, ids)
    if len(starts) != utf8_len(text):
        return None
    marks = starts.translate(None, b"\0")  # one byte per token: 1 + its kind
    if len(marks) != len(ids):
        return None
    per_kind = [marks.count(1 + kind) for kind in range(8)]
    n_bytes = len(starts)
    starts = starts.translate(_TO_ONE)
    # where the first piece starts is no boundary, nor is the end of the text (one copy: a
    # memoryview's slice is not one)
    bits = b"".join((b"\0", memoryview(starts)[1:], b"\0")) if starts else b"\0"
    del starts
    return _kind_summary(name, len(ids), len(text), n_bytes, per_kind, Boundaries(bits=bits), ids, keep_ids)


def summarize(
    tokenizer: Tokenizer,
    text: str,
    *,
    allowed_special: Literal["all"] | Collection[str] = (),
    disallowed_special: Literal["all"] | Collection[str] = (),
    name: str | None = None,
    ids: bool = False,
) -> Summary:
    """Encode ``text`` with ``tokenizer`` into a :class:`Summary`: the numbers and boundaries of
    ``segment(tokenizer, text, ...).summary()`` (the same arguments; the tests hold the two to each
    other), without keeping the pieces (``ids``: keep the ids too, as an ``array('q')``).

    Where the pieces tile the text's bytes (byte-level BPE) the ids alone give everything: their
    :func:`start_map`, a byte per byte of the text, is the boundaries and, counted, the kinds. Other
    tokenizers are segmented and summarized.

    >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\\S+|\\s+")
    >>> s = summarize(tok, "abc ab")
    >>> s.count, s.single_byte, list(s.boundaries())
    (4, 2, [2, 3, 4])
    """
    text = fix_surrogates(text)
    name = name or tokenizer.name
    if tokenizer.pieces_tile_bytes:
        found = tokenizer.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        summary = _tiled_summary(tokenizer, name, text, found, ids)
        if summary is not None:
            return summary
        del found
    return _scanned(tokenizer, name, text, allowed_special, disallowed_special).summary(ids=ids)


# ----- alignment --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cut:
    """One boundary position: ``byte`` offset, the ``char`` it is in or before, ``inside`` (bytes
    into that character, 0 between characters), and which tokenizers cut there (by position)."""

    byte: int
    char: int
    inside: int
    members: tuple[bool, ...]

    @property
    def agreed(self) -> bool:
        return all(self.members)


@dataclass(frozen=True, slots=True)
class Alignment:
    """Where the tokenizers' boundaries (byte offsets) agree and differ.

    ``sets[k]``: tokenizer ``k``'s boundaries; ``union``: a boundary of at least one;
    ``agreed``: of all. The methods give sorted views: :meth:`differ` (some but not all),
    :meth:`extra` (``k``'s boundaries the first lacks) and :meth:`missing` (the first one's
    boundaries ``k`` lacks); both are empty for the first.
    """

    names: tuple[str, ...]
    sets: tuple[Boundaries, ...]
    union: Boundaries
    agreed: Boundaries

    def differ(self) -> list[int]:
        return list(self.union - self.agreed)

    def extra(self, k: int) -> list[int]:
        return list(self.sets[k] - self.sets[0])

    def missing(self, k: int) -> list[int]:
        return list(self.sets[0] - self.sets[k])

    def cuts(self, index: TextIndex, only_differ: bool = False) -> Iterator[Cut]:
        """Each boundary (or only those not all agree on), in order, as a :class:`Cut`."""
        for byte in self.differ() if only_differ else self.union:
            char, inside = index.char_of_byte(byte)
            yield Cut(byte, char, inside, tuple(byte in s for s in self.sets))


def align(segmentations: Sequence[Segmentation | Summary]) -> Alignment:
    """Align the boundaries of several segmentations (or summaries) of one text.

    >>> a = Segmentation("a", (1, 2), (2, 4), 4, 4)
    >>> b = Segmentation("b", (1, 2, 3), (1, 2, 4), 4, 4)
    >>> al = align([a, b])
    >>> sorted(al.union), sorted(al.agreed), al.differ(), al.extra(1), al.missing(1)
    ([1, 2], [2], [1], [1], [])
    """
    if not segmentations:
        raise ValueError("align needs at least one segmentation")
    if len({s.n_bytes for s in segmentations}) > 1:
        raise ValueError("the segmentations are of different texts")
    sets = tuple(s.boundaries() for s in segmentations)
    if compiled_bitmaps() is not None and len({len(s._bits) for s in sets}) == 1:
        union, agreed = reduce(or_, sets), reduce(and_, sets)  # compiled, byte by byte
    else:
        values = [s._int() for s in sets]  # each bitmap as one int, once
        union, agreed = sets[0]._new(reduce(or_, values)), sets[0]._new(reduce(and_, values))
    return Alignment(names=tuple(s.name for s in segmentations), sets=sets, union=union, agreed=agreed)


# ----- statistics ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EncodingStats:
    """One tokenizer's numbers on one text. Ratios are ``None`` when their denominator is 0.

    ``same_as_first``/``extra_vs_first``/``missing_vs_first`` count this tokenizer's boundaries
    that the first one shares / lacks, and the first one's boundaries this one lacks.
    """

    name: str
    tokens: int
    chars: int
    bytes: int
    words: int
    chars_per_token: float | None
    tokens_per_word: float | None
    bytes_per_token: float | None
    partial: int
    partial_share: float | None
    single_byte: int
    single_byte_share: float | None
    special: int
    boundaries: int
    same_as_first: int
    extra_vs_first: int
    missing_vs_first: int


@dataclass(frozen=True, slots=True)
class Comparison:
    """The result of :func:`compare`: per-tokenizer stats plus the alignment and its summary."""

    chars: int
    bytes: int
    words: int
    stats: tuple[EncodingStats, ...]
    alignment: Alignment

    @property
    def names(self) -> tuple[str, ...]:
        return self.alignment.names

    @property
    def agreed_share(self) -> float | None:
        """Share of all boundaries (of any tokenizer) that every tokenizer has."""
        return ratio(len(self.alignment.agreed), len(self.alignment.union))


def encoding_stats(seg: Segmentation | Summary, words: int, alignment: Alignment | None = None, k: int = 0) -> EncodingStats:
    """The stats of one segmentation or summary (``k``: its position in ``alignment``)."""
    n = seg.count
    boundaries = max(n - 1, 0)
    if alignment is not None and k:
        first = alignment.sets[0]
        same = alignment.sets[k].common(first)
        extra, missing = len(alignment.sets[k]) - same, len(first) - same
    else:
        extra = missing = 0
    return EncodingStats(
        name=seg.name, tokens=n, chars=seg.n_chars, bytes=seg.n_bytes, words=words,
        chars_per_token=ratio(seg.n_chars, n), tokens_per_word=ratio(n, words),
        bytes_per_token=ratio(seg.n_bytes, n),
        partial=seg.partial, partial_share=ratio(seg.partial, n),
        single_byte=seg.single_byte, single_byte_share=ratio(seg.single_byte, n),
        special=seg.special, boundaries=boundaries,
        same_as_first=boundaries - extra, extra_vs_first=extra, missing_vs_first=missing,
    )


def compare(text: str, segmentations: Sequence[Segmentation | Summary], *, words: int | None = None) -> Comparison:
    """Stats and alignment of several segmentations (or :class:`Summary` objects, or both) of
    ``text`` (the first is the reference).

    >>> a = Segmentation("a", (1, 2), (2, 4), 4, 4)
    >>> b = Segmentation("b", (1, 2, 3), (1, 2, 4), 4, 4)
    >>> c = compare("ab c", [a, b])
    >>> [s.tokens for s in c.stats], c.words, c.agreed_share
    ([2, 3], 2, 0.5)
    """
    alignment = align(segmentations)
    words = _count_words(text) if words is None else words
    n_bytes = segmentations[0].n_bytes
    stats = tuple(encoding_stats(s, words, alignment, k) for k, s in enumerate(segmentations))
    return Comparison(len(text), n_bytes, words, stats, alignment)


def _count_words(text: str) -> int:
    """:func:`~tokscope.core.text.measure.count_words`, compiled when installed (it makes no word:
    5 MB of prose has about a million).

    >>> _count_words("  Hello,  wide world! ")
    3
    """
    module = compiled_bitmaps()
    return count_words(text) if module is None else module.text_words(text)


# ----- cost -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cost:
    """A token count as money: prices are per million tokens; ``*_total`` is for ``copies`` copies
    (each copy sent on its own, so ``tokens * copies`` tokens)."""

    name: str
    tokens: int
    copies: int
    price_in: float
    price_out: float
    input: float
    output: float
    input_total: float
    output_total: float


#: The highest price accepted, in dollars per million tokens (so that every cost stays a finite number).
MAX_PRICE = 1e9
#: The most copies accepted.
MAX_COPIES = 10**12

_PRICE = re.compile(r"\$?\s*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_COPIES = re.compile(r"[0-9]+(?:[,_][0-9]{3})*|[0-9]+")


class PriceError(TokscopeError, ValueError):
    """A price or a number of copies that cannot be used (one line, safe to print)."""


def parse_price(text: str, what: str = "price") -> float:
    """A price typed by the user, in dollars per million tokens: a number >= 0, with an optional
    ``$``; empty means 0. The one parser for the command line (``--price-in``) and the compare screen.

    >>> parse_price("2.5"), parse_price("$10"), parse_price(" "), parse_price("1e3")
    (2.5, 10.0, 0.0, 1000.0)
    >>> parse_price("-1")
    Traceback (most recent call last):
    ...
    tokscope.core.insights.compare.PriceError: not a price: '-1' (give dollars per million tokens, a number >= 0 such as 2.50)
    """
    value = text.strip()
    if not value:
        return 0.0
    if _PRICE.fullmatch(value) is None:
        raise PriceError(f"not a {what}: {safe_text(text)!r} (give dollars per million tokens, a number >= 0 "
                         f"such as 2.50)")
    price = float(value.lstrip("$").strip())
    if not math.isfinite(price) or price > MAX_PRICE:
        raise PriceError(f"a {what} must be at most {MAX_PRICE:,.0f} dollars per million tokens, not {safe_text(text)!r}")
    return price


def parse_copies(text: str) -> int:
    """A number of copies: a whole number >= 1 (``1,000`` and ``1_000`` are fine); empty means 1.

    >>> parse_copies("1,000"), parse_copies(""), parse_copies("7")
    (1000, 1, 7)
    >>> parse_copies("2.5")
    Traceback (most recent call last):
    ...
    tokscope.core.insights.compare.PriceError: not a number of copies: '2.5' (a whole number, 1 or more)
    """
    value = text.strip()
    if not value:
        return 1
    if _COPIES.fullmatch(value) is None:
        raise PriceError(f"not a number of copies: {safe_text(text)!r} (a whole number, 1 or more)")
    digits = value.replace(",", "").replace("_", "")
    if len(digits) > 13 or int(digits) > MAX_COPIES:
        raise PriceError(f"at most {MAX_COPIES:,} copies, not {safe_text(text)!r}")
    copies = int(digits)
    if copies < 1:
        raise PriceError(f"copies must be at least 1, not {safe_text(text)!r}")
    return copies


def check_price(value: float, what: str = "price") -> float:
    """A price must be a finite number >= 0; raises ValueError with a one-line message."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a number >= 0, not {value!r}")
    if value > MAX_PRICE:
        raise ValueError(f"{what} must be at most {MAX_PRICE:,.0f}, not {value!r}")
    return float(value)


def cost(name: str, tokens: int, price_in: float, price_out: float, copies: int = 1) -> Cost:
    """Price ``tokens`` at ``price_in``/``price_out`` per million tokens.

    >>> c = cost("x", 1500, 2.0, 8.0, copies=1000)
    >>> c.input, c.output, c.input_total, c.output_total
    (0.003, 0.012, 3.0, 12.0)
    """
    price_in = check_price(price_in, "input price")
    price_out = check_price(price_out, "output price")
    if not isinstance(copies, int) or isinstance(copies, bool) or not 1 <= copies <= MAX_COPIES:
        raise ValueError(f"copies must be a whole number from 1 to {MAX_COPIES:,}, not {copies!r}")
    total = tokens * copies
    return Cost(name, tokens, copies, price_in, price_out,
                tokens * price_in / 1e6, tokens * price_out / 1e6,
                total * price_in / 1e6, total * price_out / 1e6)


def costs(stats: Iterable[EncodingStats], price_in: float, price_out: float, copies: int = 1) -> tuple[Cost, ...]:
    """:func:`cost` for each tokenizer's token count."""
    return tuple(cost(s.name, s.tokens, price_in, price_out, copies) for s in stats)


def format_money(value: float) -> str:
    """Dollars with enough digits to see small amounts.

    >>> format_money(12.5), format_money(0.00345), format_money(0), format_money(1234567.891)
    ('$12.50', '$0.00345', '$0', '$1,234,567.89')
    """
    if value == 0:
        return "$0"
    if value >= 1:
        return f"${value:,.2f}"
    digits = max(2, -math.floor(math.log10(value)) + 2)
    return f"${value:.{min(digits, 10)}f}"


# ----- a bar for terminal charts ------------------------------------------------------------------

_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(value: float, maximum: float, width: int, *, ascii: bool = False) -> str:
    """A horizontal bar ``width`` cells wide at full scale, in eighth-cell steps (``#`` in ASCII).

    >>> bar(3, 4, 8), bar(1, 4, 8, ascii=True), bar(0, 4, 8)
    ('██████', '##', '')
    >>> bar(1, 3, 4)
    '█▍'
    """
    if maximum <= 0 or value <= 0 or width <= 0:
        return ""
    frac = min(value / maximum, 1.0)
    if ascii:
        return "#" * max(1, round(frac * width))
    eighths = max(1, round(frac * width * 8))
    full, rest = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[rest] if rest else "")
