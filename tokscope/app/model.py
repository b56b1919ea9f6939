"""The explorer's tokenization of the input text, kept in blocks of ints so an edit costs little.

A :class:`TokenDoc` holds the text, its pre-tokenization chunks and its pieces as parallel columns
of ints (ids, character starts and ends, flags). Building one for 1 MB of text makes no ``Piece``
objects; :meth:`TokenDoc.piece` makes one on demand. :meth:`TokenDoc.edited` re-tokenizes only the
chunks an edit touched: chunks are independent, so it re-chunks a window from a chunk boundary a
little before the edit until the new chunks line up with the old ones again, and splices.

The columns live in blocks of about :data:`BLOCK` rows, each with a base added to its offsets
(:class:`_Table`). A splice rebuilds the one or two blocks around the edit, shares every other
block with the old doc, and moves the offsets after the edit by changing one base per block, so
an edit of 1 MB of text costs a few milliseconds instead of copying and shifting 300k-entry lists.

Everything here is plain Python over the core's public API (``Tokenizer.pattern``,
``encode_chunk``, ``token_bytes``, ``special_tokens``), and a doc is never mutated once built, so a
worker thread can build the next one while the UI paints the current one.
"""

from __future__ import annotations

import itertools
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import regex

from ..core.tokenizer import Tokenizer, fix_surrogates
from ..core.unicode_pattern import compile_pattern
from ..core.types import Chunk, Piece, is_continuation

_serials = itertools.count(1)

PARTIAL = 1
SPECIAL = 2

#: chunks re-scanned before the one an edit starts in (a match may look one character ahead)
BACKUP_CHUNKS = 2
#: characters past the end of a chunk that splitting it may have looked at (a match looks at
#: most a character or two ahead; this is a wide margin)
_LOOKAHEAD = 64


class Cancelled(Exception):
    """Raised inside a build when its cancel event is set."""


# ----- per-tokenizer helpers (cached on the tokenizer object) ------------------------------------


class _TokInfo:
    """Per-tokenizer caches the explorer needs: compiled pattern, token shapes, special regex."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        # the core's compiled pattern: splits exactly as tiktoken does (end of text, Unicode version)
        self.pat = compile_pattern(tokenizer.pattern)
        self.shape: dict[int, tuple[int, bool, bool]] = {}
        specials = sorted(tokenizer.special_tokens, key=lambda t: (-len(t), t))
        self.special_re = regex.compile("|".join(regex.escape(t) for t in specials)) if specials else None

    def token_shape(self, tokenizer: Tokenizer, token_id: int) -> tuple[int, bool, bool]:
        """(characters begun, starts with a continuation byte, ends inside a character)."""
        shape = self.shape.get(token_id)
        if shape is None:
            data = tokenizer.token_bytes(token_id)
            begun = sum(1 for b in data if not 0x80 <= b < 0xC0)
            lead = is_continuation(data[0]) if data else False
            try:
                data.decode("utf-8")
                inside = False
            except UnicodeDecodeError:
                inside = True
            shape = (begun, lead, inside or lead)
            self.shape[token_id] = shape
        return shape


_info_lock = threading.Lock()


def tok_info(tokenizer: Tokenizer) -> _TokInfo:
    info = getattr(tokenizer, "_tokscope_app_info", None)
    if info is None:
        with _info_lock:
            info = getattr(tokenizer, "_tokscope_app_info", None)
            if info is None:
                info = _TokInfo(tokenizer)
                tokenizer._tokscope_app_info = info  # type: ignore[attr-defined]
    return info


# ----- the doc ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EditSpan:
    """Where an edit changed the text: ``[start, old_end)`` became ``[start, new_end)``."""

    start: int
    old_end: int
    new_end: int

    @property
    def delta(self) -> int:
        return self.new_end - self.old_end


def diff_span(old: str, new: str) -> EditSpan:
    """The smallest span that turns ``old`` into ``new`` (common prefix and suffix kept).

    >>> diff_span("hello world", "hello, world")
    EditSpan(start=5, old_end=5, new_end=6)
    """
    n = min(len(old), len(new))
    lo, hi = 0, n  # common prefix length in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[lo:mid] == new[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    lo, hi = 0, n - prefix
    lo_old, lo_new = len(old), len(new)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[lo_old - mid : lo_old - lo] == new[lo_new - mid : lo_new - lo]:
            lo = mid
        else:
            hi = mid - 1
    suffix = lo
    return EditSpan(prefix, len(old) - suffix, len(new) - suffix)


#: rows per block of a doc's piece and chunk tables: an edit rebuilds the one or two blocks it
#: touches and moves every later block by changing its base, instead of copying whole lists
BLOCK = 1024


class _Table:
    """Rows of ints kept in blocks that docs share (never mutated once built).

    ``blocks[k]`` is a tuple of lists, one per field; the fields listed in ``offsets`` hold
    character offsets relative to ``bases[k]``. ``firsts[k]`` is the index of block ``k``'s first
    row. No block is empty.

    >>> t = _Table.from_columns([[7, 8, 9], [0, 2, 5]], offsets=(1,), block=2)
    >>> t2 = t.splice(1, 2, [[42], [2]], delta=3)  # row 1 replaced, row 2 moved by 3
    >>> [t2.get(0, i) for i in range(3)], [t2.get(1, i) for i in range(3)], t2.bisect(1, 8, False)
    ([7, 42, 9], [0, 2, 8], 2)
    """

    __slots__ = ("blocks", "bases", "firsts", "n", "offsets")

    def __init__(self, blocks: list[tuple[list[int], ...]], bases: list[int], offsets: tuple[int, ...]) -> None:
        self.blocks = blocks
        self.bases = bases
        self.offsets = offsets
        firsts = []
        n = 0
        for block in blocks:
            firsts.append(n)
            n += len(block[0])
        self.firsts = firsts
        self.n = n

    @classmethod
    def from_columns(cls, columns: list[list[int]], offsets: tuple[int, ...], block: int | None = None) -> _Table:
        """A table of absolute values (bases 0) cut into blocks of about ``block`` (default
        :data:`BLOCK`) rows."""
        block = block or BLOCK
        n = len(columns[0])
        if n == 0:
            return cls([], [], offsets)
        count = max(1, round(n / block))
        size = -(-n // count)
        blocks = [tuple(c[a : a + size] for c in columns) for a in range(0, n, size)]
        return cls(blocks, [0] * len(blocks), offsets)

    def get(self, f: int, i: int) -> int:
        k = bisect_right(self.firsts, i) - 1
        value = self.blocks[k][f][i - self.firsts[k]]
        return value + self.bases[k] if f in self.offsets else value

    def bisect(self, f: int, x: int, right: bool) -> int:
        """``bisect_right`` (or ``bisect_left``) of ``x`` in offset field ``f`` (non-decreasing)."""
        blocks, bases = self.blocks, self.bases
        lo, hi = 0, len(blocks)
        while lo < hi:  # the first block whose last value is > x (right) or >= x (left)
            mid = (lo + hi) // 2
            last = blocks[mid][f][-1] + bases[mid]
            if last > x or (not right and last == x):
                hi = mid
            else:
                lo = mid + 1
        if lo == len(blocks):
            return self.n
        col = blocks[lo][f]
        x -= bases[lo]
        return self.firsts[lo] + (bisect_right(col, x) if right else bisect_left(col, x))

    def column(self, f: int) -> list[int]:
        """Field ``f`` as one flat list of absolute values."""
        out: list[int] = []
        if f in self.offsets:
            for block, base in zip(self.blocks, self.bases):
                out.extend(map(base.__add__, block[f]) if base else block[f])
        else:
            for block in self.blocks:
                out.extend(block[f])
        return out

    def values(self, f: int, i0: int, i1: int) -> list[int]:
        """Field ``f`` of rows ``[i0, i1)`` (not for offset fields)."""
        out: list[int] = []
        if i0 >= i1:
            return out
        k = bisect_right(self.firsts, i0) - 1
        while k < len(self.blocks) and self.firsts[k] < i1:
            a = self.firsts[k]
            out.extend(self.blocks[k][f][max(0, i0 - a) : i1 - a])
            k += 1
        return out

    def splice(self, i0: int, i1: int, rows: list[list[int]], delta: int) -> _Table:
        """A new table: rows ``[i0, i1)`` replaced by ``rows`` (columns of absolute values), and
        ``delta`` added to the offset fields of every row from ``i1`` on. Blocks away from the
        splice are shared with this table."""
        blocks, bases, firsts, offsets = self.blocks, self.bases, self.firsts, self.offsets
        nb = len(blocks)
        if nb == 0:
            return _Table.from_columns(rows, offsets)
        ka = bisect_right(firsts, i0) - 1 if i0 < self.n else nb - 1
        kb = bisect_right(firsts, i1) - 1 if i1 < self.n else nb - 1
        a0, b0 = firsts[ka], firsts[kb]
        base_a, base_b = bases[ka], bases[kb] + delta
        middle = []
        for f, new in enumerate(rows):
            pre = blocks[ka][f][: i0 - a0]
            post = blocks[kb][f][i1 - b0 :]
            if f in offsets:
                if base_a:
                    pre = [v + base_a for v in pre]
                if base_b:
                    post = [v + base_b for v in post]
            middle.append(pre + new + post)
        mid = _Table.from_columns(middle, offsets)
        tail = bases[kb + 1 :]
        if delta:
            tail = [b + delta for b in tail]
        return _Table(blocks[:ka] + mid.blocks + blocks[kb + 1 :], bases[:ka] + mid.bases + tail, offsets)


class Column(Sequence):
    """One field of a doc's pieces or chunks (``doc.ids``, ``doc.starts``...) as a read-only
    sequence of ints. Compares equal to a list with the same values; ``list(column)`` or
    ``column.tolist()`` gives a plain list."""

    __slots__ = ("_table", "_f", "_offset", "_list")

    def __init__(self, table: _Table, f: int) -> None:
        self._table = table
        self._f = f
        self._offset = f in table.offsets
        self._list: list[int] | None = None

    def __len__(self) -> int:
        return self._table.n

    def __bool__(self) -> bool:
        return self._table.n > 0

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return self.tolist()[index]
        t = self._table
        if index < 0:
            index += t.n
        if not 0 <= index < t.n:
            raise IndexError("index out of range")
        k = bisect_right(t.firsts, index) - 1
        value = t.blocks[k][self._f][index - t.firsts[k]]
        return value + t.bases[k] if self._offset else value

    def tolist(self) -> list[int]:
        if self._list is None:
            self._list = self._table.column(self._f)
        return list(self._list)

    def __iter__(self):
        if self._list is not None:
            return iter(self._list)
        t, f = self._table, self._f
        if not self._offset:
            return itertools.chain.from_iterable(block[f] for block in t.blocks)
        return itertools.chain.from_iterable(
            map(base.__add__, block[f]) if base else block[f] for block, base in zip(t.blocks, t.bases)
        )

    def __contains__(self, value: object) -> bool:
        if not self._offset:
            return any(value in block[self._f] for block in self._table.blocks)
        return any(v == value for v in self)

    def count(self, value: int) -> int:
        if not self._offset:
            return sum(block[self._f].count(value) for block in self._table.blocks)
        return sum(block[self._f].count(value - base) for block, base in zip(self._table.blocks, self._table.bases))

    def index(self, value: int, start: int = 0, stop: int | None = None) -> int:  # type: ignore[override]
        if start or stop is not None:
            return self.tolist().index(value, start, len(self) if stop is None else stop)
        t = self._table
        for first, block, base in zip(t.firsts, t.blocks, t.bases):
            try:
                return first + block[self._f].index(value - base if self._offset else value)
            except ValueError:
                continue
        raise ValueError(f"{value!r} is not in column")

    def bisect_left(self, x: int) -> int:
        return self._table.bisect(self._f, x, False)

    def bisect_right(self, x: int) -> int:
        return self._table.bisect(self._f, x, True)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Column):
            return len(self) == len(other) and self.tolist() == other.tolist()
        if isinstance(other, list):
            return len(self) == len(other) and self.tolist() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.tolist())


class _Builder:
    """Flat lists a scan appends to (absolute offsets)."""

    __slots__ = ("ids", "starts", "ends", "flags", "chunk_starts", "chunk_ends")

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.flags: list[int] = []
        self.chunk_starts: list[int] = []
        self.chunk_ends: list[int] = []

    def pieces(self) -> list[list[int]]:
        return [self.ids, self.starts, self.ends, self.flags]

    def chunks(self) -> list[list[int]]:
        return [self.chunk_starts, self.chunk_ends]


#: piece fields and chunk fields (their index in a table row)
_ID, _START, _END, _FLAGS = 0, 1, 2, 3
_PIECE_OFFSETS = (_START, _END)
_CSTART, _CEND = 0, 1
_CHUNK_OFFSETS = (_CSTART, _CEND)
_EMPTY_PIECES = _Table([], [], _PIECE_OFFSETS)
_EMPTY_CHUNKS = _Table([], [], _CHUNK_OFFSETS)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _word_span(text: str, a: int, b: int, limit: int = 512) -> tuple[int, int] | None:
    """``[a, b)`` widened to whitespace on both sides (or the text's ends), so the words in it
    are whole; None when that takes more than ``limit`` characters."""
    lo, hi, n = a, b, len(text)
    while lo > 0 and not text[lo - 1].isspace():
        lo -= 1
        if a - lo > limit:
            return None
    while hi < n and not text[hi].isspace():
        hi += 1
        if hi - b > limit:
            return None
    return lo, hi


class TokenDoc:
    """The pieces of ``text`` under ``tokenizer`` (see the module docstring).

    ``specials`` True treats special-token strings in the text as special tokens; False (the
    default) encodes them as ordinary text. ``complete`` is False for a doc that covers only a
    prefix of the text (shown while a large text is still being tokenized).

    ``ids``, ``starts``, ``ends``, ``flags``, ``chunk_starts`` and ``chunk_ends`` are read-only
    sequences of ints (:class:`Column`); internally pieces and chunks are kept in blocks that an
    edit shares with the doc it came from (see :class:`_Table`).
    """

    __slots__ = (
        "tokenizer", "text", "specials", "_pieces", "_chunks", "_cols",
        "chunk_special", "complete", "covered", "_byte_cache",
        "serial", "_edit", "_stats", "_plain", "_counts",
    )

    def __init__(self, tokenizer: Tokenizer, text: str, specials: bool = False) -> None:
        self.tokenizer = tokenizer
        self.text = text
        self.specials = specials
        self._pieces = _EMPTY_PIECES
        self._chunks = _EMPTY_CHUNKS
        self._cols: dict[str, Column] = {}
        self.chunk_special: set[int] = set()  # chunk start offsets of special chunks
        self.complete = True
        self.covered = len(text)  # characters tokenized
        self._byte_cache: tuple[int, int] = (0, 0)  # (char offset, byte offset) last computed
        self.serial = next(_serials)
        #: (serial of the doc this was edited from, restart, old stop, new stop, new edit end, delta)
        self._edit: tuple[int, int, int, int, int, int] | None = None
        self._stats: dict | None = None  # the status line's figures, filled in once
        #: True when the text is known to hold no character the pattern's Unicode versions
        #: disagree on (then the plain compiled pattern splits it exactly)
        self._plain = False
        #: occurrences of the token ids asked about (see :meth:`occurrences`), carried over edits
        self._counts: dict[int, int] = {}

    # --- columns ----------------------------------------------------------------------------

    def _column(self, name: str, table: _Table, f: int) -> Column:
        col = self._cols.get(name)
        if col is None:
            col = self._cols[name] = Column(table, f)
        return col

    @property
    def ids(self) -> Column:
        return self._column("ids", self._pieces, _ID)

    @property
    def starts(self) -> Column:
        return self._column("starts", self._pieces, _START)

    @property
    def ends(self) -> Column:
        return self._column("ends", self._pieces, _END)

    @property
    def flags(self) -> Column:
        return self._column("flags", self._pieces, _FLAGS)

    @property
    def chunk_starts(self) -> Column:
        return self._column("chunk_starts", self._chunks, _CSTART)

    @property
    def chunk_ends(self) -> Column:
        return self._column("chunk_ends", self._chunks, _CEND)

    def _set(self, pieces: _Table, chunks: _Table) -> None:
        self._pieces, self._chunks = pieces, chunks
        self._cols = {}

    # --- building ---------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        tokenizer: Tokenizer,
        text: str,
        specials: bool = False,
        *,
        cancel: threading.Event | None = None,
        progress: Any = None,
        first_part: int = 0,
    ) -> TokenDoc:
        """Tokenize ``text`` from scratch.

        ``progress(doc)`` (optional) is called once with a doc covering only a prefix of about
        ``first_part`` characters when the text is longer, so the UI can paint early.
        """
        text = fix_surrogates(text)
        doc = cls(tokenizer, text, specials)
        pat = tok_info(tokenizer).pat
        n = len(text)
        emitted = progress is None or not first_part or n <= first_part
        # the compiled pattern to split with: the plain one unless the text holds a character the
        # pattern's Unicode versions disagree on. For the first part only its own characters are
        # looked at (looking at all of 1 MB first took ~0.1 s before the first paint)
        engine = pat.for_text(text, 0, n if emitted else min(n, first_part + _LOOKAHEAD))
        plain = engine is pat.plain
        out = _Builder()
        for seg_start, seg_end, special in doc._segments(text):
            if special:
                doc._add_special(out, seg_start, seg_end)
                continue
            pos = seg_start
            if not emitted:
                pos, _ = doc._scan(out, engine, pos, seg_end, None, cancel, limit=first_part)
                if pos < first_part:
                    continue  # the segment ended before the first part did
                if plain and pat.for_text(text, 0, min(n, pos + _LOOKAHEAD)) is not pat.plain:
                    # such a character right where the first part ended: start again, exactly
                    return cls.build(tokenizer, text, specials, cancel=cancel)
                partial = cls(tokenizer, text, specials)
                partial._set(_Table.from_columns(out.pieces(), _PIECE_OFFSETS),
                             _Table.from_columns(out.chunks(), _CHUNK_OFFSETS))
                partial.chunk_special = set(doc.chunk_special)
                partial.complete = False
                partial.covered = pos
                progress(partial)
                emitted = True
                engine = pat.for_text(text, pos, n)  # the rest decides for itself
                plain = plain and engine is pat.plain
            doc._scan(out, engine, pos, seg_end, None, cancel)
        doc._set(_Table.from_columns(out.pieces(), _PIECE_OFFSETS), _Table.from_columns(out.chunks(), _CHUNK_OFFSETS))
        doc._plain = plain if emitted else pat.for_text(text, 0, n) is pat.plain
        return doc

    def _segments(self, text: str) -> list[tuple[int, int, bool]]:
        info = tok_info(self.tokenizer)
        if not self.specials or info.special_re is None:
            return [(0, len(text), False)]
        out = []
        pos = 0
        for found in info.special_re.finditer(text):
            if found.start() > pos:
                out.append((pos, found.start(), False))
            out.append((found.start(), found.end(), True))
            pos = found.end()
        if pos < len(text):
            out.append((pos, len(text), False))
        return out

    def _add_special(self, out: _Builder, start: int, end: int) -> None:
        token_id = self.tokenizer.special_tokens[self.text[start:end]]
        out.chunk_starts.append(start)
        out.chunk_ends.append(end)
        self.chunk_special.add(start)
        out.ids.append(token_id)
        out.starts.append(start)
        out.ends.append(end)
        out.flags.append(SPECIAL)

    def _scan(
        self,
        out: _Builder,
        engine: Any,
        pos: int,
        endpos: int,
        sync: Any,
        cancel: threading.Event | None,
        limit: int | None = None,
    ) -> tuple[int, bool]:
        """Append chunks and pieces of ``self.text`` from ``pos`` to ``out``; stop at ``endpos``,
        at the first chunk end past ``limit``, or when ``sync(end)`` says the old chunks line up
        again. ``engine`` is the compiled pattern to split with.

        Returns the offset where it stopped and whether ``sync`` stopped it."""
        text = self.text
        tokenizer = self.tokenizer
        info = tok_info(tokenizer)
        shape = info.shape
        token_shape = info.token_shape
        encode_chunk = tokenizer.encode_chunk
        ids, starts, ends, flags = out.ids, out.starts, out.ends, out.flags
        cstarts, cends = out.chunk_starts, out.chunk_ends
        n = 0
        end = pos
        for found in engine.finditer(text, pos, endpos):
            s, end = found.span()
            cstarts.append(s)
            cends.append(end)
            chunk_ids = encode_chunk(found.group())
            if len(chunk_ids) == 1:
                ids.append(chunk_ids[0])
                starts.append(s)
                ends.append(end)
                flags.append(0)
            else:
                chars = s
                for token_id in chunk_ids:
                    sh = shape.get(token_id) or token_shape(tokenizer, token_id)
                    start = chars - 1 if sh[1] else chars
                    chars += sh[0]
                    ids.append(token_id)
                    starts.append(start)
                    ends.append(chars)
                    flags.append(PARTIAL if sh[2] else 0)
            n += 1
            if cancel is not None and not n & 1023 and cancel.is_set():
                raise Cancelled()
            if sync is not None and sync(end):
                return end, True
            if limit is not None and end >= limit:
                return end, False
        return end, False

    def _specials_possible(self, new_text: str, span: EditSpan) -> bool:
        """Whether special-token text may occur in this doc's text or in ``new_text``."""
        special_re = tok_info(self.tokenizer).special_re
        if special_re is None:
            return False
        if self.chunk_special or special_re.search(self.text) is not None:
            return True
        # none before the edit: a new one has to overlap the inserted text
        longest = max(map(len, self.tokenizer.special_tokens))
        lo = max(0, span.start - longest + 1)
        hi = min(len(new_text), span.new_end + longest - 1)
        return special_re.search(new_text, lo, hi) is not None

    def edited(
        self, new_text: str, *, cancel: threading.Event | None = None, max_scan: int | None = None
    ) -> TokenDoc | None:
        """The doc for ``new_text``, re-tokenizing only the chunks around what changed.

        With ``max_scan``, give up and return None instead of tokenizing the whole text again or
        re-scanning more than about ``max_scan`` characters (so a caller on the UI thread can
        hand those rare edits to a worker). Without it, never None.
        """
        new_text = fix_surrogates(new_text)
        if not self.complete:
            if max_scan is not None:
                return None
            return TokenDoc.build(self.tokenizer, new_text, self.specials, cancel=cancel)
        old_text = self.text
        span = diff_span(old_text, new_text)
        if span.start == span.old_end == span.new_end:
            return self
        if self.specials and self._specials_possible(new_text, span):
            if max_scan is not None:
                return None
            return TokenDoc.build(self.tokenizer, new_text, self.specials, cancel=cancel)
        delta = span.delta
        chunks, pieces = self._chunks, self._pieces
        # first chunk to redo: BACKUP_CHUNKS before the chunk containing the edit
        c0 = max(0, chunks.bisect(_CSTART, span.start, True) - 1 - BACKUP_CHUNKS)
        if c0 < chunks.n and chunks.get(_CSTART, c0) <= span.start:
            restart = chunks.get(_CSTART, c0)
        else:
            restart = c0 = 0
        old_end = span.old_end
        new_end = span.new_end

        def sync(end: int) -> bool:
            if end < new_end:
                return False
            old = end - delta
            if old < old_end:
                return False
            i = chunks.bisect(_CEND, old, False)
            return i < chunks.n and chunks.get(_CEND, i) == old

        doc = TokenDoc(self.tokenizer, new_text, self.specials)
        pat = tok_info(self.tokenizer).pat
        # the old text had no character the pattern's Unicode versions disagree on: the new one
        # has none either unless the inserted text brings one (the check looks at that only)
        if self._plain and pat.for_text(new_text, span.start, span.new_end) is pat.plain:
            engine = pat.plain
            doc._plain = True
        else:
            engine = pat.pinned
        limit = None
        if max_scan is not None:
            if new_end - restart > max_scan:
                return None
            limit = new_end + max_scan
        window = _Builder()
        stop, synced = doc._scan(window, engine, restart, len(new_text), sync, cancel, limit)
        if not synced and stop < len(new_text):
            return None  # ran past max_scan without the chunks lining up again
        if synced:
            c1 = chunks.bisect(_CEND, stop - delta, False) + 1
            p0 = pieces.bisect(_START, chunks.get(_CSTART, c0), False)
            p1 = pieces.bisect(_START, chunks.get(_CEND, c1 - 1), False)
        else:
            c1 = chunks.n
            p0 = pieces.bisect(_START, chunks.get(_CSTART, c0), False) if c0 < chunks.n else pieces.n
            p1 = pieces.n
        doc._set(pieces.splice(p0, p1, window.pieces(), delta), chunks.splice(c0, c1, window.chunks(), delta))
        old_stop = stop - delta if synced else len(old_text)
        new_stop = stop if synced else len(new_text)
        doc._edit = (self.serial, restart, old_stop, new_stop, new_end, delta)
        if self._stats is not None:
            doc._stats = self._edited_stats(doc, span)
        if self._counts and p1 - p0 <= 4 * BLOCK:
            removed = pieces.values(_ID, p0, p1)
            added = window.ids
            doc._counts = {k: v - removed.count(k) + added.count(k) for k, v in self._counts.items()}
        # byte offsets: one remembered before the edit still holds; one after it moves along
        last_char, last_byte = self._byte_cache
        if last_char <= span.start:
            doc._byte_cache = self._byte_cache
        elif last_char >= span.old_end:
            moved = _utf8_len(new_text[span.start : span.new_end]) - _utf8_len(old_text[span.start : span.old_end])
            doc._byte_cache = (last_char + delta, last_byte + moved)
        return doc

    _STAT_KEYS = frozenset(("encoding", "tokens", "chars", "bytes", "words", "chars_per_token", "tokens_per_word"))

    def _edited_stats(self, doc: TokenDoc, span: EditSpan) -> dict | None:
        """The status line's figures (see ``widgets.status.stats``) for ``doc``, edited from this
        doc, from this doc's figures and the edited span only (None when they cannot be)."""
        old = self._stats
        if old is None or set(old) != self._STAT_KEYS:
            return None
        old_text, new_text = self.text, doc.text
        words = _word_span(old_text, span.start, span.old_end)
        if words is None:
            return None
        lo, hi = words
        tokens, chars = len(doc), len(new_text)
        n_words = old["words"] - len(old_text[lo:hi].split()) + len(new_text[lo : hi + span.delta].split())
        n_bytes = old["bytes"] - _utf8_len(old_text[span.start : span.old_end]) + _utf8_len(new_text[span.start : span.new_end])
        return {
            "encoding": old["encoding"],
            "tokens": tokens,
            "chars": chars,
            "bytes": n_bytes,
            "words": n_words,
            "chars_per_token": chars / tokens if tokens else 0.0,
            "tokens_per_word": tokens / n_words if n_words else 0.0,
        }

    # --- reading ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._pieces.n

    @property
    def name(self) -> str:
        return self.tokenizer.name

    def iter_pieces(self, i: int = 0):
        """``(index, id, start, end, flags)`` of pieces ``i``, ``i + 1``, ... (fast: no lookups)."""
        t = self._pieces
        if i < 0:
            i = 0
        if i >= t.n:
            return
        k = bisect_right(t.firsts, i) - 1
        j = i - t.firsts[k]
        blocks, bases = t.blocks, t.bases
        for k in range(k, len(blocks)):
            ids, starts, ends, flags = blocks[k]
            base = bases[k]
            for j in range(j, len(ids)):
                yield i, ids[j], starts[j] + base, ends[j] + base, flags[j]
                i += 1
            j = 0

    def piece_at(self, offset: int) -> int | None:
        """The index of the (first) piece covering character ``offset`` (the last piece at the end)."""
        pieces = self._pieces
        if not pieces.n:
            return None
        i = pieces.bisect(_START, offset, True) - 1
        if i < 0:
            return 0
        return pieces.bisect(_START, pieces.get(_START, i), False)

    def byte_offset(self, char_offset: int) -> int:
        """The UTF-8 byte offset of a character offset (remembers the last answer to go faster)."""
        last_char, last_byte = self._byte_cache
        if char_offset >= last_char:
            b = last_byte + len(self.text[last_char:char_offset].encode("utf-8", "surrogatepass"))
        else:
            b = len(self.text[:char_offset].encode("utf-8", "surrogatepass"))
        self._byte_cache = (char_offset, b)
        return b

    def piece(self, i: int) -> Piece:
        """Piece ``i`` as the core's :class:`Piece` (byte offsets computed here)."""
        n = self._pieces.n
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        get = self._pieces.get
        token_bytes = self.tokenizer.token_bytes
        token_id = get(_ID, i)
        data = token_bytes(token_id)
        j = i
        while j > 0 and get(_FLAGS, j) & PARTIAL and data and is_continuation(token_bytes(get(_ID, j))[0]):
            j -= 1
        byte_start = self.byte_offset(get(_START, j))
        for k in range(j, i):
            byte_start += len(token_bytes(get(_ID, k)))
        flags = get(_FLAGS, i)
        return Piece(token_id, data, get(_START, i), get(_END, i), byte_start, byte_start + len(data),
                     bool(flags & PARTIAL), bool(flags & SPECIAL))

    def chunk_index(self, i: int) -> int:
        """The index of the chunk holding piece ``i``."""
        return self._chunks.bisect(_CSTART, self._pieces.get(_START, i), True) - 1

    def chunk_of(self, i: int) -> Chunk:
        c = self.chunk_index(i)
        s, e = self._chunks.get(_CSTART, c), self._chunks.get(_CEND, c)
        return Chunk(self.text[s:e], s, e, special=s in self.chunk_special)

    def occurrences(self, token_id: int) -> int:
        """How many pieces have ``token_id`` (remembered, and kept up to date by :meth:`edited`)."""
        count = self._counts.get(token_id)
        if count is None:
            count = self.ids.count(token_id)
            if len(self._counts) >= 32:
                self._counts.clear()
            self._counts[token_id] = count
        return count

    def first_occurrence(self, token_id: int) -> int | None:
        try:
            return self.ids.index(token_id)
        except ValueError:
            return None

    def pieces(self) -> PieceList:
        return PieceList(self)


class PieceList(Sequence):
    """A read-only sequence of :class:`Piece` over a :class:`TokenDoc` (pieces made on access)."""

    def __init__(self, doc: TokenDoc) -> None:
        self.doc = doc

    def __len__(self) -> int:
        return len(self.doc)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self.doc.piece(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.doc.piece(index)
