"""Sequence, as Hugging Face's ``decoders/sequence.rs``."""

from __future__ import annotations

from collections import abc

from .base import DecoderBase


class Sequence(DecoderBase):
    """Several decoders, each on what the one before returned."""

    def __init__(self, decoders: abc.Sequence[DecoderBase]) -> None:
        self.decoders = tuple(decoders)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens
