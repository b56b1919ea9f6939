"""tokscope's byte-level BPE core: standard library and ``regex`` only (and, for chat templates
only, ``jinja2`` in its sandbox; ``chat_template`` is not imported here).

Plain data in, frozen dataclasses out. Nothing here imports Textual, Rich or tiktoken.
"""

from .models.ranks import merge
from .text.errors import CancelledError, DisallowedSpecialError, TokscopeError, UnknownTokenError
from .tokenizer.tokenizer import Tokenizer, fix_surrogates
from .text.types import Chunk, Parents, Piece, Token, byte_kind, is_continuation, is_whole_utf8

__all__ = [
    "CancelledError",
    "Chunk",
    "DisallowedSpecialError",
    "Parents",
    "Piece",
    "Token",
    "Tokenizer",
    "TokscopeError",
    "UnknownTokenError",
    "byte_kind",
    "fix_surrogates",
    "is_continuation",
    "is_whole_utf8",
    "merge",
]
