"""The explorer's tokenization of the input text, kept in flat lists so an edit costs little.

A :class:`TokenDoc` holds the text, its pre-tokenization chunks and its pieces as parallel lists of
ints (ids, character starts and ends, flags). Building one for 1 MB of text makes no ``Piece``
objects; :meth:`TokenDoc.piece` makes one on demand. :meth:`TokenDoc.edited` re-tokenizes only the
chunks an edit touched: chunks are independent, so it re-chunks a window from a chunk boundary a
little before the edit until the new chunks line up with the old ones again, and splices.

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

from ..core.tokenizer import Tokenizer, compile_pattern, fix_surrogates
from ..core.types import Chunk, Piece, is_continuation

_serials = itertools.count(1)

PARTIAL = 1
SPECIAL = 2

#: chunks re-scanned before the one an edit starts in (a match may look one character ahead)
BACKUP_CHUNKS = 2


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


class TokenDoc:
    """The pieces of ``text`` under ``tokenizer`` (see the module docstring).

    ``specials`` True treats special-token strings in the text as special tokens; False (the
    default) encodes them as ordinary text. ``complete`` is False for a doc that covers only a
    prefix of the text (shown while a large text is still being tokenized).
    """

    __slots__ = (
        "tokenizer", "text", "specials", "ids", "starts", "ends", "flags",
        "chunk_starts", "chunk_ends", "chunk_special", "complete", "covered", "_byte_cache",
        "serial", "_edit", "_stats",
    )

    def __init__(self, tokenizer: Tokenizer, text: str, specials: bool = False) -> None:
        self.tokenizer = tokenizer
        self.text = text
        self.specials = specials
        self.ids: list[int] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.flags: list[int] = []
        self.chunk_starts: list[int] = []
        self.chunk_ends: list[int] = []
        self.chunk_special: set[int] = set()  # chunk start offsets of special chunks
        self.complete = True
        self.covered = len(text)  # characters tokenized
        self._byte_cache: tuple[int, int] = (0, 0)  # (char offset, byte offset) last computed
        self.serial = next(_serials)
        #: (serial of the doc this was edited from, restart, old stop, new stop, new edit end, delta)
        self._edit: tuple[int, int, int, int, int, int] | None = None
        self._stats: dict | None = None  # the status line's figures, filled in once

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
        emitted = progress is None or not first_part or len(text) <= first_part
        for seg_start, seg_end, special in doc._segments(text):
            if special:
                doc._add_special(seg_start, seg_end)
                continue
            pos = seg_start
            if not emitted:
                pos, _ = doc._scan(text, pos, seg_end, None, cancel, limit=first_part)
                if pos < first_part:
                    continue  # the segment ended before the first part did
                partial = doc._copy()
                partial.complete = False
                partial.covered = pos
                progress(partial)
                emitted = True
            doc._scan(text, pos, seg_end, None, cancel)
        return doc

    def _copy(self) -> TokenDoc:
        out = TokenDoc(self.tokenizer, self.text, self.specials)
        out.ids = list(self.ids)
        out.starts = list(self.starts)
        out.ends = list(self.ends)
        out.flags = list(self.flags)
        out.chunk_starts = list(self.chunk_starts)
        out.chunk_ends = list(self.chunk_ends)
        out.chunk_special = set(self.chunk_special)
        return out

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

    def _add_special(self, start: int, end: int) -> None:
        token_id = self.tokenizer.special_tokens[self.text[start:end]]
        self.chunk_starts.append(start)
        self.chunk_ends.append(end)
        self.chunk_special.add(start)
        self.ids.append(token_id)
        self.starts.append(start)
        self.ends.append(end)
        self.flags.append(SPECIAL)

    def _scan(
        self,
        text: str,
        pos: int,
        endpos: int,
        sync: Any,
        cancel: threading.Event | None,
        limit: int | None = None,
    ) -> tuple[int, bool]:
        """Append chunks and pieces from ``pos``; stop at ``endpos``, at the first chunk end past
        ``limit``, or when ``sync(end)`` says the old chunks line up again.

        Returns the offset where it stopped and whether ``sync`` stopped it."""
        tokenizer = self.tokenizer
        info = tok_info(tokenizer)
        shape = info.shape
        token_shape = info.token_shape
        encode_chunk = tokenizer.encode_chunk
        ids, starts, ends, flags = self.ids, self.starts, self.ends, self.flags
        cstarts, cends = self.chunk_starts, self.chunk_ends
        n = 0
        end = pos
        for found in info.pat.finditer(text, pos, endpos):
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

    def edited(self, new_text: str, *, cancel: threading.Event | None = None) -> TokenDoc:
        """The doc for ``new_text``, re-tokenizing only the chunks around what changed."""
        new_text = fix_surrogates(new_text)
        if not self.complete or self.specials and tok_info(self.tokenizer).special_re is not None and (
            tok_info(self.tokenizer).special_re.search(new_text) or tok_info(self.tokenizer).special_re.search(self.text)
        ):
            return TokenDoc.build(self.tokenizer, new_text, self.specials, cancel=cancel)
        old_text = self.text
        span = diff_span(old_text, new_text)
        if span.start == span.old_end == span.new_end:
            return self
        delta = span.delta
        cstarts, cends = self.chunk_starts, self.chunk_ends
        # first chunk to redo: BACKUP_CHUNKS before the chunk containing the edit
        c0 = max(0, bisect_right(cstarts, span.start) - 1 - BACKUP_CHUNKS)
        restart = cstarts[c0] if c0 < len(cstarts) and cstarts[c0] <= span.start else 0
        if c0 >= len(cstarts):
            restart = 0
            c0 = 0
        old_end = span.old_end
        new_end = span.new_end

        def sync(end: int) -> bool:
            if end < new_end:
                return False
            old = end - delta
            if old < old_end:
                return False
            i = bisect_left(cends, old)
            return i < len(cends) and cends[i] == old

        window = TokenDoc(self.tokenizer, new_text, self.specials)
        stop, synced = window._scan(new_text, restart, len(new_text), sync, cancel)
        if synced:
            c1 = bisect_left(cends, stop - delta) + 1
            p0 = bisect_left(self.starts, cstarts[c0])
            p1 = bisect_left(self.starts, cends[c1 - 1])
        else:
            c1 = len(cstarts)
            p0 = bisect_left(self.starts, cstarts[c0]) if c0 < len(cstarts) else len(self.starts)
            p1 = len(self.starts)
        doc = TokenDoc(self.tokenizer, new_text, self.specials)
        if delta:
            shift = lambda values: [v + delta for v in values]  # noqa: E731
        else:
            shift = lambda values: values  # noqa: E731
        doc.ids = self.ids[:p0] + window.ids + self.ids[p1:]
        doc.starts = self.starts[:p0] + window.starts + shift(self.starts[p1:])
        doc.ends = self.ends[:p0] + window.ends + shift(self.ends[p1:])
        doc.flags = self.flags[:p0] + window.flags + self.flags[p1:]
        doc.chunk_starts = cstarts[:c0] + window.chunk_starts + shift(cstarts[c1:])
        doc.chunk_ends = cends[:c0] + window.chunk_ends + shift(cends[c1:])
        old_stop = stop - delta if synced else len(old_text)
        new_stop = stop if synced else len(new_text)
        doc._edit = (self.serial, restart, old_stop, new_stop, new_end, delta)
        return doc

    # --- reading ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def name(self) -> str:
        return self.tokenizer.name

    def piece_at(self, offset: int) -> int | None:
        """The index of the (first) piece covering character ``offset`` (the last piece at the end)."""
        if not self.starts:
            return None
        i = bisect_right(self.starts, offset) - 1
        if i < 0:
            return 0
        first = bisect_left(self.starts, self.starts[i])
        return first

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
        if i < 0:
            i += len(self.ids)
        token_id = self.ids[i]
        data = self.tokenizer.token_bytes(token_id)
        j = i
        while j > 0 and self.flags[j] & PARTIAL and data and is_continuation(self.tokenizer.token_bytes(self.ids[j])[0]):
            j -= 1
        byte_start = self.byte_offset(self.starts[j])
        for k in range(j, i):
            byte_start += len(self.tokenizer.token_bytes(self.ids[k]))
        flags = self.flags[i]
        return Piece(token_id, data, self.starts[i], self.ends[i], byte_start, byte_start + len(data),
                     bool(flags & PARTIAL), bool(flags & SPECIAL))

    def chunk_index(self, i: int) -> int:
        """The index of the chunk holding piece ``i``."""
        return bisect_right(self.chunk_starts, self.starts[i]) - 1

    def chunk_of(self, i: int) -> Chunk:
        c = self.chunk_index(i)
        s, e = self.chunk_starts[c], self.chunk_ends[c]
        return Chunk(self.text[s:e], s, e, special=s in self.chunk_special)

    def occurrences(self, token_id: int) -> int:
        return self.ids.count(token_id)

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
        return len(self.doc.ids)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self.doc.piece(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.doc.piece(index)
