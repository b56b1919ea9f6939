"""Strip (characters off each token's ends), as Hugging Face's ``decoders/strip.rs``."""

from __future__ import annotations


from ..text.errors import TokenizerFileError
from .base import DecoderBase


class Strip(DecoderBase):
    """Removes up to ``start`` leading and ``stop`` trailing ``content`` characters from *each*
    token (after a Fuse, from the text's ends).

    >>> Strip(" ", 1, 0).decode_chain(["  a", " b "])
    [' a', 'b ']
    """

    def __init__(self, content: str = " ", start: int = 0, stop: int = 0) -> None:
        if not isinstance(content, str) or len(content) != 1:
            raise TokenizerFileError(f"Strip decoder content {content!r} is not one character")
        for name, value in (("start", start), ("stop", stop)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TokenizerFileError(f"Strip decoder {name} {value!r} is not a count")
        self.content = content
        self.start = start
        self.stop = stop

    def strip(self, token: str) -> str:
        """One token stripped. Where Hugging Face panics (a token made only of ``content``, shorter
        than ``stop``, or cut from both ends past each other) this gives the empty string."""
        n = len(token)
        start_cut = 0
        for i in range(min(self.start, n)):
            if token[i] != self.content:
                break
            start_cut = i + 1
        stop_cut = n
        for i in range(self.stop):
            index = n - i - 1
            if index < 0:
                return ""
            if token[index] != self.content:
                break
            stop_cut = index
        if start_cut > stop_cut:
            return ""
        return token[start_cut:stop_cut]

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self.strip(t) for t in tokens]
