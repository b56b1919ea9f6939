"""Fuse (every token into one string), as Hugging Face's ``decoders/fuse.rs``."""

from __future__ import annotations


from .base import DecoderBase


class Fuse(DecoderBase):
    """All tokens joined into one string."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]
