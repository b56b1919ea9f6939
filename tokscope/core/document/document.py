"""A text kept tokenized across edits: the explorer's and the comparison panes' one engine.

A :class:`Document` holds the text, its pre-tokenization chunks and its pieces as columns of ints
(ids, character starts and ends, flags) in shared blocks (:mod:`.blocks`). Building one for 1 MB
of text makes no ``Piece`` objects; :meth:`Document.piece` makes one on demand.
:meth:`Document.edited` re-tokenizes only the chunks an edit touched: chunks are independent, so
it re-scans from a chunk boundary a little before the edit until the new chunks line up with the
old ones again, and splices the blocks. A tokenizer whose stages are not all local (see
:attr:`Tokenizer.restartable`) is tokenized again in full.

Everything here goes through the tokenizer's public API (:meth:`Tokenizer.segments`,
:meth:`Tokenizer.scan`, :meth:`Tokenizer.place_pieces`, ``token_bytes``), so any kind of
tokenizer works. A document is never mutated once built (its remembered answers aside), so a
worker thread can build the next one while the UI paints the current one.
"""

from __future__ import annotations

import itertools
from array import array
from itertools import accumulate
import threading
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .blocks import BlockTable, Column
from ..text.measure import count_words, ratio, utf8_len, word_span
from ..tokenizer.rows import ADDED, PARTIAL, SPECIAL, UNKNOWN, Rows
from ..tokenizer.tokenizer import fix_surrogates
from ..text.types import Chunk, Piece

if TYPE_CHECKING:
    from ..tokenizer.tokenizer import Tokenizer

__all__ = ["ADDED", "PARTIAL", "SPECIAL", "UNKNOWN", "Document", "Edit", "EditSpan", "Figures", "diff_span"]

_serials = itertools.count(1)

#: chunks re-scanned before the one an edit starts in (a match may look one character ahead)
BACKUP_CHUNKS = 2


@dataclass(frozen=True, slots=True)
class EditSpan:
    """Where an edit changed the text: ``[start, old_end)`` became ``[start, new_end)``."""

    start: int
    old_end: int
    new_end: int

    @property
    def delta(self) -> int:
        return self.new_end - self.old_end


@dataclass(frozen=True, slots=True)
class Edit:
    """How a document was made from the one before it (for partial repaints).

    ``previous`` is that document's :attr:`Document.serial`; characters ``[restart, new_stop)`` were
    re-tokenized (``[restart, old_stop)`` before the edit); the edit itself ends at ``new_end``; every
    offset after the re-scanned span moved by ``delta``.
    """

    previous: int
    restart: int
    old_stop: int
    new_stop: int
    new_end: int
    delta: int


@dataclass(frozen=True, slots=True)
class Figures:
    """A document's counts, as the status line shows them. Ratios are 0.0 with nothing to divide by."""

    encoding: str
    tokens: int
    chars: int
    bytes: int
    words: int

    @property
    def chars_per_token(self) -> float:
        return ratio(self.chars, self.tokens) or 0.0

    @property
    def tokens_per_word(self) -> float:
        return ratio(self.tokens, self.words) or 0.0


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


#: piece fields and chunk fields (their index in a table row)
_ID, _START, _END, _FLAGS = 0, 1, 2, 3
_PIECE_OFFSETS = (_START, _END)
_CSTART, _CEND = 0, 1
_CHUNK_OFFSETS = (_CSTART, _CEND)
_EMPTY_PIECES = BlockTable([], [], _PIECE_OFFSETS)
_EMPTY_CHUNKS = BlockTable([], [], _CHUNK_OFFSETS)


def _tables(rows: Rows) -> tuple[BlockTable, BlockTable]:
    return (BlockTable.from_columns(rows.pieces(), _PIECE_OFFSETS),
            BlockTable.from_columns(rows.chunks(), _CHUNK_OFFSETS))


def byte_ends(tokenizer: Tokenizer, text: str, ids: Sequence[int], starts: Sequence[int], ends: Sequence[int],
              flags: Sequence[int]) -> Sequence[int]:
    """Where each of the pieces given as rows (see :meth:`Tokenizer.scan`) ends in ``text``'s UTF-8
    (an ``array('q')``: a 1 MB text's 300k offsets in 2.4 MB).

    Fast where the pieces tile the text's bytes (a running sum of token lengths); otherwise each
    piece is placed (:meth:`Tokenizer.place_pieces`)."""
    if tokenizer.pieces_tile_bytes:
        lengths = tokenizer.byte_lengths
        out = array("q", accumulate(map(lengths.__getitem__, ids)))
        if not out or out[-1] == utf8_len(text):
            return out
        # some text is in no chunk (a pattern that skips characters): place piece by piece
        out = []
        pos = prev_end = 0
        for token_id, s, e in zip(ids, starts, ends):
            if s > prev_end:
                pos += utf8_len(text[prev_end:s])
            pos += lengths[token_id]
            out.append(pos)
            prev_end = e
        return array("q", out)
    pieces = tokenizer.place_pieces(text, list(ids), list(starts), list(ends), list(flags))
    return array("q", [p.byte_end for p in pieces])


class Document:
    """The pieces of ``text`` under ``tokenizer`` (see the module docstring).

    ``specials`` True treats special-token strings in the text as special tokens; False (the
    default) encodes them as ordinary text. Added tokens that are not special always match, as
    in Hugging Face's tokenizers. ``complete`` is False for a document that covers only a prefix
    of the text (shown while a large text is still being tokenized); ``covered`` is how much.

    ``ids``, ``starts``, ``ends``, ``flags``, ``chunk_starts`` and ``chunk_ends`` are read-only
    sequences of ints (:class:`~.blocks.Column`); flags are the tokenizer's ``PARTIAL``,
    ``SPECIAL``, ``ADDED`` and ``UNKNOWN`` bits. ``edit`` says how it came from the document before
    it (None when built from scratch).
    """

    __slots__ = (
        "tokenizer", "text", "specials", "_pieces", "_chunks", "_cols", "chunk_special", "complete",
        "covered", "_byte_cache", "serial", "edit", "_figures", "_counts",
    )

    def __init__(self, tokenizer: Tokenizer, text: str, specials: bool = False) -> None:
        self.tokenizer = tokenizer
        self.text = text
        self.specials = specials
        self._pieces = _EMPTY_PIECES
        self._chunks = _EMPTY_CHUNKS
        self._cols: dict[str, Column] = {}
        self.chunk_special: set[int] = set()  # chunk start offsets of added-token chunks
        self.complete = True
        self.covered = len(text)
        self._byte_cache: tuple[int, int] = (0, 0)  # (char offset, byte offset) last computed
        self.serial = next(_serials)
        self.edit: Edit | None = None
        self._figures: Figures | None = None
        #: occurrences of the token ids asked about (see :meth:`occurrences`), carried over edits
        self._counts: dict[int, int] = {}

    # --- columns ----------------------------------------------------------------------------

    def _column(self, name: str, table: BlockTable, f: int) -> Column:
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

    def _set(self, pieces: BlockTable, chunks: BlockTable) -> None:
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
        progress: Callable[[Document], None] | None = None,
        first_part: int = 0,
    ) -> Document:
        """Tokenize ``text`` from scratch (raises :class:`~.errors.CancelledError` when ``cancel``
        is set).

        ``progress(doc)`` (optional) is called once with a document covering only a prefix of about
        ``first_part`` characters when the text is longer, so the UI can paint early.
        """
        text = fix_surrogates(text)
        doc = cls(tokenizer, text, specials)
        out = Rows(compact=True)
        if not tokenizer.restartable:
            tokenizer.scan_text(out, text, allowed_special="all" if specials else (), cancel=cancel)
            doc.chunk_special = {s for s, f in zip(out.starts, out.flags) if f & (SPECIAL | ADDED)}
            doc._set(*_tables(out))
            return doc
        early = progress is not None and first_part and len(text) > first_part
        for start, end, token_id in doc._segments(text):
            if token_id is not None:
                doc._add_added(out, start, end, token_id)
                continue
            pos = start
            if early:
                pos, _ = tokenizer.scan(out, text, pos, end, cancel=cancel, limit=first_part)
                if pos < first_part:
                    continue  # the segment ended before the first part did
                partial = cls(tokenizer, text, specials)
                partial._set(*_tables(out))
                partial.chunk_special = set(doc.chunk_special)
                partial.complete = False
                partial.covered = pos
                progress(partial)  # type: ignore[misc]
                early = False
            tokenizer.scan(out, text, pos, end, cancel=cancel)
        doc._set(*_tables(out))
        return doc

    @classmethod
    def from_tokens(cls, tokenizer: Tokenizer, text: str, ids: Sequence[int], offsets: Sequence[tuple[int, int]]) -> Document:
        """A document of tokens made elsewhere (a chat rendering's ids and their character
        ``offsets`` in ``text``, as :func:`tokscope.core.chat.count_chat` gives them), so the token
        views draw them as they draw a text's pieces.

        Flags are worked out as :meth:`Tokenizer.scan` does: special and added ids, and partial
        pieces (bytes that begin or end inside a character, or pieces sharing one character).
        Each run of pieces that overlap is one chunk. ``tokenizer`` needs ``token_bytes`` and
        ``is_special``/``is_added`` for every id; such a document is never :meth:`edited`.

        >>> from tokscope.sources import registry
        >>> tok = registry.load("o200k_base")
        >>> doc = Document.from_tokens(tok, "Hi🫠", [12194, 4103, 104, 254], [(0, 2), (2, 3), (2, 3), (2, 3)])
        >>> list(doc.flags), doc.piece_at(2), [p.bytes for p in doc.pieces()][1:]
        ([0, 1, 1, 1], 1, [b'\\xf0\\x9f', b'\\xab', b'\\xa0'])
        """
        if len(ids) != len(offsets):
            raise ValueError(f"{len(ids)} ids but {len(offsets)} offsets")
        doc = cls(tokenizer, text, specials=True)
        out = Rows()
        special = getattr(tokenizer, "is_special", lambda i: False)
        added = getattr(tokenizer, "is_added", lambda i: False)
        for k, (token_id, (start, end)) in enumerate(zip(ids, offsets)):
            data = tokenizer.token_bytes(token_id)
            if special(token_id):
                flag = SPECIAL
            elif added(token_id):
                flag = ADDED
            else:
                partial = False
                if data:
                    partial = 0x80 <= data[0] < 0xC0
                    if not partial:
                        try:
                            data.decode("utf-8")
                        except UnicodeDecodeError:
                            partial = True
                flag = PARTIAL if partial else 0
            if k and start < out.ends[-1] and start == out.starts[-1]:
                flag |= PARTIAL  # pieces that share one character are parts of it
                out.flags[-1] |= PARTIAL
            out.ids.append(token_id)
            out.starts.append(start)
            out.ends.append(max(start, end))
            out.flags.append(flag)
            if out.chunk_ends and start < out.chunk_ends[-1]:
                out.chunk_ends[-1] = max(out.chunk_ends[-1], end)
            else:
                out.chunk_starts.append(start)
                out.chunk_ends.append(max(start, end))
            if flag & (SPECIAL | ADDED):
                doc.chunk_special.add(start)
        doc._set(*_tables(out))
        return doc

    def _segments(self, text: str) -> list[tuple[int, int, int | None]]:
        return self.tokenizer.segments(text, "all" if self.specials else (), ())

    def _add_added(self, out: Rows, start: int, end: int, token_id: int) -> None:
        self.chunk_special.add(start)
        out.add_token(start, end, token_id, SPECIAL if self.tokenizer.is_special(token_id) else ADDED)

    def edited(
        self, new_text: str, *, cancel: threading.Event | None = None, max_scan: int | None = None
    ) -> Document | None:
        """The document for ``new_text``, re-tokenizing only the chunks around what changed.

        With ``max_scan``, give up and return None instead of tokenizing the whole text again or
        re-scanning more than about ``max_scan`` characters (so a caller on the UI thread can
        hand those rare edits to a worker). Without it, never None.
        """
        new_text = fix_surrogates(new_text)
        tokenizer = self.tokenizer
        if not self.complete or not tokenizer.restartable:
            return None if max_scan is not None else Document.build(tokenizer, new_text, self.specials, cancel=cancel)
        old_text = self.text
        span = diff_span(old_text, new_text)
        if span.start == span.old_end == span.new_end:
            return self
        stretch = None if self._added_possible(new_text, span) else self._ordinary_stretch(span)
        if stretch is None:
            if max_scan is not None:
                return None
            return Document.build(tokenizer, new_text, self.specials, cancel=cancel)
        lo, hi = stretch  # the edit lies in old_text[lo:hi], between added tokens (or the ends)
        delta = span.delta
        chunks, pieces = self._chunks, self._pieces
        c_lo = chunks.bisect(_CSTART, lo, False)  # the first chunk of the stretch
        # first chunk to redo: BACKUP_CHUNKS before the chunk containing the edit
        c0 = max(c_lo, chunks.bisect(_CSTART, span.start, True) - 1 - BACKUP_CHUNKS)
        if c0 < chunks.n and chunks.get(_CSTART, c0) <= span.start:
            # a run of whitespace chunks can become one chunk with what follows it (Llama 3's
            # ``\s*[\r\n]+`` takes every space before a line break): start before the run
            # and where the normalizer may start again (not on a mark NFC joins to its letter)
            while c0 > c_lo and 0 < chunks.get(_CSTART, c0) and (
                    old_text[chunks.get(_CSTART, c0) - 1].isspace()
                    or not tokenizer.restart_ok(new_text, chunks.get(_CSTART, c0))):
                c0 -= 1
            restart = chunks.get(_CSTART, c0)
            # the first chunk that starts there (a normalizer can give two chunks one start)
            c0 = chunks.bisect(_CSTART, restart, False)
        else:
            restart, c0 = lo, c_lo
        old_end = span.old_end
        new_end = span.new_end

        def sync(end: int) -> bool:
            if end < new_end:
                return False
            old = end - delta
            if old < old_end:
                return False
            i = chunks.bisect(_CEND, old, False)
            if not (i < chunks.n and chunks.get(_CEND, i) == old):
                return False
            # the old chunks go on from here only if what follows is the next chunk, or text no
            # stage folds into a chunk before it (whitespace a pre-tokenizer drops); a combining
            # mark that NFC folded into the old chunk's last character is neither
            after = chunks.get(_CSTART, i + 1) if i + 1 < chunks.n else len(old_text)
            if not (after == old or old_text[old:after].isspace()):
                return False
            return tokenizer.restart_ok(new_text, after + delta)

        doc = Document(tokenizer, new_text, self.specials)
        limit = None
        if max_scan is not None:
            if new_end - restart > max_scan:
                return None
            limit = new_end + max_scan
        window = Rows()
        hi_new = hi + delta
        stop, synced = tokenizer.scan(window, new_text, restart, hi_new, sync=sync, cancel=cancel, limit=limit)
        if not synced and stop < hi_new and limit is not None and stop >= limit:
            return None  # ran past max_scan without the chunks lining up again
        if synced:
            c1 = chunks.bisect(_CEND, stop - delta, False) + 1
            p0 = pieces.bisect(_START, chunks.get(_CSTART, c0), False)
            p1 = pieces.bisect(_START, chunks.get(_CEND, c1 - 1), False)
        else:  # re-scanned to the end of the stretch: the old chunks up to there are replaced
            c1 = chunks.bisect(_CSTART, hi, False)
            p0 = pieces.bisect(_START, chunks.get(_CSTART, c0), False) if c0 < chunks.n else pieces.n
            p1 = pieces.bisect(_START, hi, False)
        doc._set(pieces.splice(p0, p1, window.pieces(), delta), chunks.splice(c0, c1, window.chunks(), delta))
        doc.chunk_special = {s if s < span.start else s + delta for s in self.chunk_special}
        old_stop = stop - delta if synced else hi
        new_stop = stop if synced else hi_new
        doc.edit = Edit(self.serial, restart, old_stop, new_stop, new_end, delta)
        if self._figures is not None:
            doc._figures = self._edited_figures(doc, span)
        if self._counts and p1 - p0 <= 4096:
            removed = pieces.values(_ID, p0, p1)
            added = window.ids
            doc._counts = {k: v - removed.count(k) + added.count(k) for k, v in self._counts.items()}
        # byte offsets: one remembered before the edit still holds; one after it moves along
        last_char, last_byte = self._byte_cache
        if last_char <= span.start:
            doc._byte_cache = self._byte_cache
        elif last_char >= span.old_end:
            moved = utf8_len(new_text[span.start : span.new_end]) - utf8_len(old_text[span.start : span.old_end])
            doc._byte_cache = (last_char + delta, last_byte + moved)
        return doc

    def _ordinary_stretch(self, span: EditSpan) -> tuple[int, int] | None:
        """``(lo, hi)``: the stretch of the old text between the added-token chunks around the
        edit (the text's ends where there are none), or ``None`` when an added token is near
        enough to the edit to change (a ``single_word`` token next to a new letter, an
        ``lstrip`` one after new spaces): then the document is built again."""
        if not self.chunk_special:
            return 0, len(self.text)
        tokenizer = self.tokenizer
        margin = 4 * max(map(len, tokenizer.added_tokens), default=1) + 1
        chunks = self._chunks
        lo, hi = 0, len(self.text)
        for start in self.chunk_special:
            end = chunks.get(_CEND, chunks.bisect(_CSTART, start, False))
            if start - margin <= span.old_end and span.start <= end + margin:
                return None
            if end <= span.start:
                lo = max(lo, end)
            elif start >= span.old_end:
                hi = min(hi, start)
        return lo, hi

    def _added_possible(self, new_text: str, span: EditSpan) -> bool:
        """Whether an added token (special ones only when ``specials``) may now overlap the edit."""
        tokenizer = self.tokenizer
        if not tokenizer.added_tokens:
            return False
        if not self.specials and not (tokenizer.added_tokens.keys() - tokenizer.special_tokens.keys()):
            return False  # only special tokens, and they are ordinary text here
        return tokenizer.added_could_occur(new_text, span.start, span.new_end)

    # --- figures ----------------------------------------------------------------------------

    @property
    def figures(self) -> Figures:
        """Tokens, characters, bytes and words (remembered; an edit updates them from the edited span)."""
        figures = self._figures
        if figures is None:
            text = self.text
            figures = Figures(self.tokenizer.name, self._pieces.n, len(text), utf8_len(text), count_words(text))
            if self.complete:
                self._figures = figures
        return figures

    def _edited_figures(self, doc: Document, span: EditSpan) -> Figures | None:
        old = self._figures
        if old is None:
            return None
        old_text, new_text = self.text, doc.text
        words = word_span(old_text, span.start, span.old_end)
        if words is None:
            return None
        lo, hi = words
        n_words = old.words - len(old_text[lo:hi].split()) + len(new_text[lo : hi + span.delta].split())
        n_bytes = old.bytes - utf8_len(old_text[span.start : span.old_end]) + utf8_len(new_text[span.start : span.new_end])
        return Figures(old.encoding, doc._pieces.n, len(new_text), n_bytes, n_words)

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
            b = last_byte + utf8_len(self.text[last_char:char_offset])
        else:
            b = utf8_len(self.text[:char_offset])
        self._byte_cache = (char_offset, b)
        return b

    def piece(self, i: int) -> Piece:
        """Piece ``i`` as the core's :class:`Piece` (its byte offsets worked out here)."""
        n = self._pieces.n
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self.place(i, i + 1)[0]

    def place(self, i0: int, i1: int) -> list[Piece]:
        """Pieces ``i0`` to ``i1`` (exclusive) as :class:`Piece` objects, byte offsets included."""
        get = self._pieces.get
        j = i0  # back to the first piece of the run of pieces that share characters
        while j > 0 and get(_START, j) < get(_END, j - 1):  # it continues the previous piece's character
            j -= 1
        t = self._pieces
        ids, starts, ends, flags = (t.values(f, j, i1) if f not in t.offsets else [get(f, k) for k in range(j, i1)]
                                    for f in (_ID, _START, _END, _FLAGS))
        base = starts[0] if starts else 0
        placed = self.tokenizer.place_pieces(self.text, ids, starts, ends, flags, base_char=base,
                                             base_byte=self.byte_offset(base))
        return placed[i0 - j:]

    def byte_ends(self) -> Sequence[int]:
        """Where each piece ends in the text's UTF-8, in order (the comparison aligns on these)."""
        return byte_ends(self.tokenizer, self.text, self.ids, self.starts, self.ends, self.flags)

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
    """A read-only sequence of :class:`Piece` over a :class:`Document` (pieces made on access)."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc

    def __len__(self) -> int:
        return len(self.doc)

    def __getitem__(self, index):  # type: ignore[override]
        doc = self.doc
        if isinstance(index, slice):
            rows = range(*index.indices(len(self)))
            if rows.step == 1:
                return doc.place(rows.start, rows.stop) if rows else []
            return [doc.piece(i) for i in rows]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return doc.piece(index)
