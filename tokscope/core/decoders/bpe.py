"""BPEDecoder (an end-of-word suffix becomes a space), as Hugging Face's ``decoders/bpe.rs``."""

from __future__ import annotations


from ..text.errors import TokenizerFileError
from .base import DecoderBase


class BPEDecoder(DecoderBase):
    """The end-of-word ``suffix`` becomes a space, and nothing on the last token.

    >>> BPEDecoder().decode(["hel", "lo</w>", "world</w>"])
    'hello world'
    """

    def __init__(self, suffix: str = "</w>") -> None:
        if not isinstance(suffix, str):
            raise TokenizerFileError(f"BPEDecoder suffix {suffix!r} is not a string")
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        last = len(tokens) - 1
        return [t.replace(self.suffix, "" if i == last else " ") for i, t in enumerate(tokens)]
