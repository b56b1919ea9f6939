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

``resegment`` updates a Segmentation after an edit by re-encoding only the chunks near it.
"""

from __future__ import annotations

import math
import threading
import weakref
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain
from typing import Any, Literal

import regex

from .errors import CancelledError
from .tokenizer import Tokenizer, fix_surrogates
from .unicode_pattern import compile_pattern
from .types import Piece, is_whole_utf8

#: How many tokenizers the comparison screen shows at once (the CLI has no limit).
MAX_ON_SCREEN = 4

#: Default encodings compared when the user names none.
DEFAULT_COMPARE = ("gpt2", "cl100k_base", "o200k_base")

#: Characters kept unchanged before an edit when re-chunking (covers the patterns' look-aheads).
RESYNC_MARGIN = 16


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


class _TokenFacts:
    """Per tokenizer: byte length and partial/special flags of each token id seen so far, and a
    chunk -> ids cache of its own (both grow lazily; entries are whole, so threads may share it)."""

    def __init__(self) -> None:
        self.length: dict[int, int] = {}
        self.partial: set[int] = set()
        self.special: set[int] = set()
        self.chunks: dict[str, tuple[int, ...]] = {}
        self.lock = threading.Lock()

    def learn(self, tokenizer: Tokenizer, ids: Iterable[int]) -> None:
        missing = set(ids).difference(self.length)
        if not missing:
            return
        with self.lock:
            for token_id in missing:
                data = tokenizer.token_bytes(token_id)
                if not is_whole_utf8(data):
                    self.partial.add(token_id)
                if tokenizer.is_special(token_id):
                    self.special.add(token_id)
                self.length[token_id] = len(data)

    def encode(self, tokenizer: Tokenizer, strings: list[str]) -> list[tuple[int, ...]]:
        """The ids of each chunk string, from the cache where possible."""
        cache = self.chunks
        encs = list(map(cache.get, strings))
        if None in encs:
            if len(cache) > CHUNK_CACHE_LIMIT:
                cache.clear()
            encode_chunk = tokenizer.encode_chunk
            for k, ids in enumerate(encs):
                if ids is None:
                    ids = encs[k] = cache[strings[k]] = encode_chunk(strings[k])
        return encs  # type: ignore[return-value]


#: Chunk strings kept per tokenizer by the comparison's own cache before it is emptied.
CHUNK_CACHE_LIMIT = 200_000

_FACTS: weakref.WeakKeyDictionary[Any, _TokenFacts] = weakref.WeakKeyDictionary()
_FACTS_LOCK = threading.Lock()
_PATTERNS: dict[str, regex.Pattern[str]] = {}


def _facts(tokenizer: Tokenizer) -> _TokenFacts:
    with _FACTS_LOCK:
        facts = _FACTS.get(tokenizer)
        if facts is None:
            facts = _FACTS[tokenizer] = _TokenFacts()
        return facts


def _pattern(tokenizer: Tokenizer) -> regex.Pattern[str]:
    pat = _PATTERNS.get(tokenizer.pattern)
    if pat is None:
        pat = _PATTERNS[tokenizer.pattern] = compile_pattern(tokenizer.pattern)
    return pat


@dataclass(frozen=True, slots=True, eq=False)
class Segmentation:
    """One tokenizer's pieces of one text, kept compact: ids and where each piece ends.

    ``ends[i]`` is the byte offset where piece ``i`` ends, so piece ``i`` covers bytes
    ``ends[i-1]`` (0 for the first) to ``ends[i]``. ``chunk_ends``/``chunk_pieces`` (character
    offset where each chunk ends, and how many pieces end by then) let :func:`resegment`
    restart near an edit; they are empty when the segmentation came from bare pieces.
    """

    name: str
    ids: tuple[int, ...]
    ends: tuple[int, ...]
    n_chars: int
    n_bytes: int
    partial: int = 0
    single_byte: int = 0
    special: int = 0
    chunk_ends: tuple[int, ...] = ()
    chunk_pieces: tuple[int, ...] = ()
    partial_ids: frozenset[int] = field(default=frozenset(), repr=False)
    special_ids: frozenset[int] = field(default=frozenset(), repr=False)
    # ids known to be partial / special: at least those in ``ids`` (membership is what counts)

    @property
    def count(self) -> int:
        """The number of tokens."""
        return len(self.ids)

    def starts(self) -> list[int]:
        """Byte offset where each piece starts."""
        return [0, *self.ends[:-1]] if self.ends else []

    def boundaries(self) -> frozenset[int]:
        """Byte offsets between two pieces (neither 0 nor the end of the text).

        >>> sorted(Segmentation("x", (1, 2, 3), (2, 3, 5), 5, 5).boundaries())
        [2, 3]
        """
        return frozenset(self.ends[:-1])

    def byte_span(self, i: int) -> tuple[int, int]:
        return (self.ends[i - 1] if i else 0), self.ends[i]

    def piece(self, i: int, index: TextIndex, data: bytes) -> Piece:
        """Piece ``i`` as a :class:`Piece` with character offsets (``data`` is the text's UTF-8)."""
        b0, b1 = self.byte_span(i)
        token_id = self.ids[i]
        start, _ = index.char_of_byte(b0)
        return Piece(token_id, data[b0:b1], start, index.chars_before(b1), b0, b1,
                     token_id in self.partial_ids, token_id in self.special_ids)

    def pieces(self, index: TextIndex, data: bytes, first: int = 0, last: int | None = None) -> list[Piece]:
        """Pieces ``first`` to ``last`` (exclusive) as :class:`Piece` objects."""
        last = len(self.ids) if last is None else min(last, len(self.ids))
        return [self.piece(i, index, data) for i in range(first, last)]

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


def _count(ids: Iterable[int], length: dict[int, int], partial: set[int] | frozenset[int],
           special: set[int] | frozenset[int]) -> tuple[int, int, int]:
    """(partial, single-byte, special) piece counts of ``ids``."""
    counts = Counter(ids)
    return (
        sum(c for i, c in counts.items() if i in partial),
        sum(c for i, c in counts.items() if length[i] == 1),
        sum(c for i, c in counts.items() if i in special),
    )


def _finish(tokenizer: Tokenizer, name: str, text: str, ids: list[int], chunk_ends: tuple[int, ...],
            chunk_pieces: tuple[int, ...]) -> Segmentation:
    facts = _facts(tokenizer)
    facts.learn(tokenizer, ids)
    ends = tuple(accumulate(map(facts.length.__getitem__, ids)))
    partial, single, special = _count(ids, facts.length, facts.partial, facts.special)
    return Segmentation(
        name, tuple(ids), ends, len(text), ends[-1] if ends else 0,
        partial=partial, single_byte=single, special=special,
        chunk_ends=chunk_ends, chunk_pieces=chunk_pieces,
        partial_ids=frozenset(facts.partial), special_ids=frozenset(facts.special),
    )


def _disallowed(tokenizer: Tokenizer, allowed: Any, disallowed: Any) -> frozenset[str]:
    allowed_set = tokenizer.special_tokens_set if allowed == "all" else frozenset(allowed)
    if disallowed == "all":
        return tokenizer.special_tokens_set - allowed_set
    return frozenset(disallowed)


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
    if allowed_special:
        chunks = tokenizer.chunks(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        encs = [
            (tokenizer.special_tokens[c.text],) if c.special else tokenizer.encode_chunk(c.text) for c in chunks
        ]
        chunk_ends: tuple[int, ...] = tuple(c.end for c in chunks)
        ids = list(chain.from_iterable(encs))
        # chunk bookkeeping only serves resegment, which re-encodes fully when specials are allowed
        return _finish(tokenizer, name, text, ids, chunk_ends, tuple(accumulate(map(len, encs))))
    tokenizer.check_special(text, _disallowed(tokenizer, allowed_special, disallowed_special))
    strings = _pattern(tokenizer).findall(text)
    encs = _facts(tokenizer).encode(tokenizer, strings)
    ids = list(chain.from_iterable(encs))
    return _finish(tokenizer, name, text, ids, tuple(accumulate(map(len, strings))),
                   tuple(accumulate(map(len, encs))))


def from_pieces(name: str, pieces: Sequence[Piece], text: str) -> Segmentation:
    """A :class:`Segmentation` from pieces computed elsewhere (e.g. :meth:`Tokenizer.pieces`).

    >>> p = [Piece(9, b"ab", 0, 2, 0, 2), Piece(7, b"\\xc3", 2, 3, 2, 3, True), Piece(8, b"\\xa9", 2, 3, 3, 4, True)]
    >>> seg = from_pieces("t", p, "abé")
    >>> seg.ends, seg.partial, seg.single_byte
    ((2, 3, 4), 2, 2)
    """
    return Segmentation(
        name,
        tuple(p.id for p in pieces),
        tuple(p.byte_end for p in pieces),
        len(text),
        pieces[-1].byte_end if pieces else 0,
        partial=sum(1 for p in pieces if p.partial),
        single_byte=sum(1 for p in pieces if len(p.bytes) == 1),
        special=sum(1 for p in pieces if p.special),
        partial_ids=frozenset(p.id for p in pieces if p.partial),
        special_ids=frozenset(p.id for p in pieces if p.special),
    )


def from_ids(tokenizer: Tokenizer, ids: Sequence[int], text: str, *, name: str | None = None) -> Segmentation:
    """A :class:`Segmentation` from ids computed elsewhere (e.g. the explorer's own incremental
    tokenization); byte ends come from the tokens' lengths. No chunk data, so :func:`resegment`
    on it re-encodes fully.

    >>> from tokscope.core.tokenizer import Tokenizer
    >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\\S+|\\s+")
    >>> from_ids(tok, [256, 99], "abc").ends
    (2, 3)
    """
    return _finish(tokenizer, name or tokenizer.name, fix_surrogates(text), list(ids), (), ())


def edit_span(old: str, new: str) -> tuple[int, int, int]:
    """Where ``new`` differs from ``old``: ``(start, old_end, new_end)`` in characters.

    >>> edit_span("hello world", "hello brave world")
    (6, 6, 12)
    >>> edit_span("abc", "abc")
    (3, 3, 3)
    """
    limit = min(len(old), len(new))
    lo, hi = 0, limit  # longest common prefix by halving (C-speed slice comparisons)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    lo, hi = 0, limit - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid:] == new[len(new) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return prefix, len(old) - lo, len(new) - lo


def _is_space(ch: str) -> bool:
    return ch.isspace() or _SPACE.match(ch) is not None


_SPACE = regex.compile(r"\s")


def resegment(
    tokenizer: Tokenizer,
    old: Segmentation,
    old_text: str,
    new_text: str,
    *,
    allowed_special: Literal["all"] | Collection[str] = (),
    disallowed_special: Literal["all"] | Collection[str] = (),
) -> Segmentation:
    """``segment(tokenizer, new_text)`` computed by re-encoding only the chunks an edit touched.

    Re-chunking restarts at a chunk start at least :data:`RESYNC_MARGIN` characters before the
    edit with non-space characters on both sides (so no earlier chunk can change), and stops at
    the first chunk that starts where an old chunk started after the edit (the patterns have no
    look-behind, so from there on everything is as before). Falls back to :func:`segment` when the
    old segmentation has no chunk data, the pattern looks behind, or special tokens were allowed.
    The result always equals ``segment(tokenizer, new_text, ...)`` with the same special-token
    arguments (``old`` must have been made with them too); tests check it on random edits.
    """
    old_text = fix_surrogates(old_text)
    new_text = fix_surrogates(new_text)
    pattern = tokenizer.pattern
    if (
        allowed_special or not old.chunk_ends or old.special or "(?<" in pattern or "\\G" in pattern
        or old.chunk_ends[-1] != len(old_text)
    ):
        return segment(tokenizer, new_text, name=old.name, allowed_special=allowed_special,
                       disallowed_special=disallowed_special)
    tokenizer.check_special(new_text, _disallowed(tokenizer, allowed_special, disallowed_special))
    start, old_end, new_end = edit_span(old_text, new_text)
    if start == old_end == new_end:
        return old
    delta = new_end - old_end
    cends = old.chunk_ends
    # restart chunk r: chunks [0, r) are kept; s = where chunk r starts
    r = bisect_right(cends, start)  # chunk holding `start` (or after it)
    while r > 0:
        s = cends[r - 1]
        if s <= start - RESYNC_MARGIN and not _is_space(old_text[s - 1]) and not _is_space(old_text[s]):
            break
        r -= 1
    s = cends[r - 1] if r else 0
    keep_pieces = old.chunk_pieces[r - 1] if r else 0
    # after the edit: old chunk starts (shifted into new_text) where re-chunking may stop
    pat = _pattern(tokenizer)
    new_strings: list[str] = []
    resume = len(cends)  # first old chunk kept after the edit (len(cends): none)
    for found in pat.finditer(new_text, s):
        cstart = found.start()
        if cstart >= new_end and cstart > s:
            old_start = cstart - delta
            j = bisect_left(cends, old_start)
            if j < len(cends) and cends[j] == old_start:
                resume = j + 1  # old chunk j+1 starts at old_start
                break
        new_strings.append(found.group())
    facts = _facts(tokenizer)
    new_encs = facts.encode(tokenizer, new_strings)
    mid_ids = list(chain.from_iterable(new_encs))
    facts.learn(tokenizer, mid_ids)
    length = facts.length
    tail_first = old.chunk_pieces[resume - 1] if resume else 0
    byte_s = old.ends[keep_pieces - 1] if keep_pieces else 0
    mid_ends = tuple(accumulate(map(length.__getitem__, mid_ids), initial=byte_s))[1:]
    byte_delta = (mid_ends[-1] if mid_ends else byte_s) - (old.ends[tail_first - 1] if tail_first else 0)
    ends = old.ends[:keep_pieces] + mid_ends + tuple(map(byte_delta.__add__, old.ends[tail_first:]))
    ids = old.ids[:keep_pieces] + tuple(mid_ids) + old.ids[tail_first:]
    chunk_ends = (
        cends[:r]
        + tuple(accumulate(map(len, new_strings), initial=s))[1:]
        + tuple(map(delta.__add__, cends[resume:]))
    )
    mid_count = len(mid_ids)
    shift = keep_pieces + mid_count - tail_first
    chunk_pieces = (
        old.chunk_pieces[:r]
        + tuple(accumulate(map(len, new_encs), initial=keep_pieces))[1:]
        + tuple(map(shift.__add__, old.chunk_pieces[resume:]))
    )
    gone = _count(old.ids[keep_pieces:tail_first], length, facts.partial, facts.special)
    came = _count(mid_ids, length, facts.partial, facts.special)
    return Segmentation(
        old.name, ids, ends, len(new_text), ends[-1] if ends else 0,
        partial=old.partial - gone[0] + came[0], single_byte=old.single_byte - gone[1] + came[1],
        special=old.special - gone[2] + came[2], chunk_ends=chunk_ends, chunk_pieces=chunk_pieces,
        partial_ids=frozenset(facts.partial), special_ids=frozenset(facts.special),
    )


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
    sets: tuple[frozenset[int], ...]
    union: frozenset[int]
    agreed: frozenset[int]

    def differ(self) -> list[int]:
        return sorted(self.union - self.agreed)

    def extra(self, k: int) -> list[int]:
        return sorted(self.sets[k] - self.sets[0])

    def missing(self, k: int) -> list[int]:
        return sorted(self.sets[0] - self.sets[k])

    def cuts(self, index: TextIndex, only_differ: bool = False) -> Iterator[Cut]:
        """Each boundary (or only those not all agree on), in order, as a :class:`Cut`."""
        for byte in self.differ() if only_differ else sorted(self.union):
            char, inside = index.char_of_byte(byte)
            yield Cut(byte, char, inside, tuple(byte in s for s in self.sets))


def align(segmentations: Sequence[Segmentation]) -> Alignment:
    """Align the boundaries of several segmentations of one text.

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
    return Alignment(
        names=tuple(s.name for s in segmentations),
        sets=sets,
        union=frozenset().union(*sets),
        agreed=sets[0].intersection(*sets[1:]),
    )


# ----- statistics ---------------------------------------------------------------------------------


def count_words(text: str) -> int:
    """Words are maximal runs of non-whitespace (``str.split()``).

    >>> count_words("  Hello,  wide world! "), count_words("日本語のテキスト")
    (3, 1)
    """
    return len(text.split())


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


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
        return _ratio(len(self.alignment.agreed), len(self.alignment.union))


def encoding_stats(seg: Segmentation, words: int, alignment: Alignment | None = None, k: int = 0) -> EncodingStats:
    """The stats of one segmentation (``k``: its position in ``alignment``)."""
    n = seg.count
    boundaries = max(n - 1, 0)
    if alignment is not None and k:
        first = alignment.sets[0]
        same = len(alignment.sets[k] & first)
        extra, missing = len(alignment.sets[k]) - same, len(first) - same
    else:
        extra = missing = 0
    return EncodingStats(
        name=seg.name, tokens=n, chars=seg.n_chars, bytes=seg.n_bytes, words=words,
        chars_per_token=_ratio(seg.n_chars, n), tokens_per_word=_ratio(n, words),
        bytes_per_token=_ratio(seg.n_bytes, n),
        partial=seg.partial, partial_share=_ratio(seg.partial, n),
        single_byte=seg.single_byte, single_byte_share=_ratio(seg.single_byte, n),
        special=seg.special, boundaries=boundaries,
        same_as_first=boundaries - extra, extra_vs_first=extra, missing_vs_first=missing,
    )


def compare(text: str, segmentations: Sequence[Segmentation], *, words: int | None = None) -> Comparison:
    """Stats and alignment of several segmentations of ``text`` (the first is the reference).

    >>> a = Segmentation("a", (1, 2), (2, 4), 4, 4)
    >>> b = Segmentation("b", (1, 2, 3), (1, 2, 4), 4, 4)
    >>> c = compare("ab c", [a, b])
    >>> [s.tokens for s in c.stats], c.words, c.agreed_share
    ([2, 3], 2, 0.5)
    """
    alignment = align(segmentations)
    words = count_words(text) if words is None else words
    n_bytes = segmentations[0].n_bytes
    stats = tuple(encoding_stats(s, words, alignment, k) for k, s in enumerate(segmentations))
    return Comparison(len(text), n_bytes, words, stats, alignment)


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


def check_price(value: float, what: str = "price") -> float:
    """A price must be a finite number >= 0; raises ValueError with a one-line message."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a number >= 0, not {value!r}")
    return float(value)


def cost(name: str, tokens: int, price_in: float, price_out: float, copies: int = 1) -> Cost:
    """Price ``tokens`` at ``price_in``/``price_out`` per million tokens.

    >>> c = cost("x", 1500, 2.0, 8.0, copies=1000)
    >>> c.input, c.output, c.input_total, c.output_total
    (0.003, 0.012, 3.0, 12.0)
    """
    price_in = check_price(price_in, "input price")
    price_out = check_price(price_out, "output price")
    if not isinstance(copies, int) or isinstance(copies, bool) or copies < 1:
        raise ValueError(f"copies must be a whole number >= 1, not {copies!r}")
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


def check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CancelledError("cancelled")
