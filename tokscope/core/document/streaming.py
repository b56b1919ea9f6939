"""A text's pieces in batches, for output that is a stream (``tokscope encode --json``).

:meth:`Tokenizer.pieces` returns one list for the whole text: on 10 MB that is millions of
:class:`~tokscope.core.text.types.Piece` objects at once. :func:`iter_pieces` gives the same pieces in
batches of about ``window`` characters, built with the tokenizer's public scanning API
(:meth:`~tokscope.core.tokenizer.tokenizer.Tokenizer.scan` from one chunk boundary to the next, then
:meth:`~tokscope.core.tokenizer.tokenizer.Tokenizer.place_pieces`), so memory stays flat however long the
text is. Joined, the batches are exactly ``tokenizer.pieces(text, ...)`` (a property test checks
it); tokenizers whose stages are not local (:attr:`~tokscope.core.tokenizer.tokenizer.Tokenizer.restartable`)
and rank cut-offs get that one list as a single batch.

>>> from tokscope.core.tokenizer.tokenizer import Tokenizer
>>> tok = Tokenizer("bytes", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+")
>>> [[p.id for p in batch] for batch in iter_pieces(tok, "ab cd", window=2)]
[[97, 98], [32, 99, 100]]
"""

from __future__ import annotations

from collections.abc import Iterator

from ..tokenizer.rows import Rows
from ..tokenizer.tokenizer import Tokenizer, fix_surrogates
from ..text.types import Piece

#: characters of text per batch
WINDOW = 1 << 16


def iter_pieces(tokenizer: Tokenizer, text: str, *, allowed_special=(), disallowed_special="all",
                max_rank: int | None = None, window: int = WINDOW) -> Iterator[list[Piece]]:
    """The pieces of ``text`` in batches (see the module docstring); the special-token arguments
    are :meth:`~tokscope.core.tokenizer.tokenizer.Tokenizer.encode`'s, and a disallowed special token is
    refused before the first batch."""
    text = fix_surrogates(text)
    if max_rank is not None or not tokenizer.pieces_tile_bytes or not tokenizer.restartable:
        yield tokenizer.pieces(text, allowed_special=allowed_special, disallowed_special=disallowed_special,
                               max_rank=max_rank)
        return
    spans = tokenizer.segments(text, allowed_special, disallowed_special)
    char_pos = byte_pos = 0
    for start, end, token_id in spans:
        if start > char_pos:
            byte_pos += len(text[char_pos:start].encode("utf-8"))
            char_pos = start
        if token_id is not None:
            data = text[start:end].encode("utf-8")
            yield [Piece(token_id, data, start, end, byte_pos, byte_pos + len(data), special=True)]
            byte_pos += len(data)
            char_pos = end
            continue
        pos = start
        while pos < end:
            sink = Rows()
            stop, _ = tokenizer.scan(sink, text, pos, end, limit=pos + window)
            if not sink.ids:
                break  # no chunk from here on (a pattern that leaves the rest of the text out)
            batch = tokenizer.place_pieces(text, sink.ids, sink.starts, sink.ends, sink.flags,
                                           base_char=pos, base_byte=byte_pos)
            yield batch
            last = batch[-1]
            char_pos, byte_pos = last.end, last.byte_end
            if stop <= pos:
                break
            pos = stop
