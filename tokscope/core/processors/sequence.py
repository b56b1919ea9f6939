"""Sequence, as Hugging Face's ``processors/sequence.rs``."""

from __future__ import annotations

from collections import abc

from .base import Encoding, ProcessorBase


class Sequence(ProcessorBase):
    """Several post-processors, each on what the one before returned (exactly as Hugging Face:
    after a template, the next one sees the template's pieces as separate encodings)."""

    def __init__(self, processors: abc.Sequence[ProcessorBase]) -> None:
        self.processors = tuple(processors)

    def added_tokens(self, is_pair: bool) -> int:
        return sum(p.added_tokens(is_pair) for p in self.processors)

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        for processor in self.processors:
            encodings = processor.process_encodings(encodings, add_special_tokens)
        return encodings
