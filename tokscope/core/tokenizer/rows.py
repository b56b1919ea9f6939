"""The rows :meth:`.Tokenizer.scan` writes: one per piece (id, start, end, flags) and one per
chunk (start, end), as plain lists of ints with absolute character offsets. The document
(:mod:`tokscope.core.document`), compare and streaming splice them into their own tables; they sit
here, beside the tokenizer that fills them, because the tokenizer itself gathers its pieces in them.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import Protocol

#: flags of a piece row in :meth:`Tokenizer.scan` (and in the document's columns)
PARTIAL = 1
SPECIAL = 2
#: the piece is an added token that is not special (matched in the text, never refused)
ADDED = 4
#: the piece is the model's unknown token
UNKNOWN = 8


class PieceSink(Protocol):
    """Where :meth:`Tokenizer.scan` appends rows: plain lists of ints, absolute character offsets.

    ``ids``/``starts``/``ends``/``flags`` get one entry per piece, ``chunk_starts``/``chunk_ends``
    one per chunk.
    """

    ids: list[int]
    starts: list[int]
    ends: list[int]
    flags: list[int]
    chunk_starts: list[int]
    chunk_ends: list[int]


class Rows:
    """A :class:`PieceSink` of plain lists (what the document splices into its blocks); with
    ``compact``, of ``array('q')`` (a whole text's rows: 8 bytes a value while they are gathered,
    where a list holds an int object for each)."""

    __slots__ = ("ids", "starts", "ends", "flags", "chunk_starts", "chunk_ends")

    def __init__(self, compact: bool = False) -> None:
        from array import array

        new = (lambda: array("q")) if compact else list
        self.ids: MutableSequence[int] = new()
        self.starts: MutableSequence[int] = new()
        self.ends: MutableSequence[int] = new()
        self.flags: MutableSequence[int] = new()
        self.chunk_starts: MutableSequence[int] = new()
        self.chunk_ends: MutableSequence[int] = new()

    def pieces(self) -> list[MutableSequence[int]]:
        return [self.ids, self.starts, self.ends, self.flags]

    def chunks(self) -> list[MutableSequence[int]]:
        return [self.chunk_starts, self.chunk_ends]

    def add_token(self, start: int, end: int, token_id: int, flags: int) -> None:
        """One token that is a chunk of its own (an added or special token)."""
        self.chunk_starts.append(start)
        self.chunk_ends.append(end)
        self.ids.append(token_id)
        self.starts.append(start)
        self.ends.append(end)
        self.flags.append(flags)
