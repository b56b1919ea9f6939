"""Sequence, as Hugging Face's ``processors/sequence.rs``."""

from __future__ import annotations

from collections import abc

from .base import Encoding, ProcessorBase
from .offsets import TrimStep


class Sequence(ProcessorBase):
    """Several post-processors, each on what the one before returned (exactly as Hugging Face:
    after a template, the next one sees the template's pieces as separate encodings)."""

    def __init__(self, processors: abc.Sequence[ProcessorBase]) -> None:
        self.processors = tuple(processors)

    def added_tokens(self, is_pair: bool) -> int:
        return sum(p.added_tokens(is_pair) for p in self.processors)

    def trim_steps(self, add_special_tokens: bool = True) -> tuple[TrimStep, ...]:
        """Each processor's steps, with the index the text's first token has in the encoding
        that processor sees (a RobertaProcessing before puts ``<s>`` in front of it; a template
        hands on its parts as separate encodings).

        >>> from .roberta import RobertaProcessing
        >>> from .byte_level import ByteLevel
        >>> Sequence([RobertaProcessing(), ByteLevel(add_prefix_space=False)]).trim_steps()
        (TrimStep(add_prefix_space=True, first=0), TrimStep(add_prefix_space=False, first=1))
        """
        steps: list[TrimStep] = []
        encodings: list[Encoding] = [[(0, 0, 0)]]
        for processor in self.processors:
            first = next((k for encoding in encodings for k, item in enumerate(encoding) if item[1] == 0), 0)
            steps.extend(TrimStep(s.add_prefix_space, s.first + first) for s in processor.trim_steps(add_special_tokens))
            encodings = processor.process_encodings(encodings, add_special_tokens)
        return tuple(steps)

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        for processor in self.processors:
            encodings = processor.process_encodings(encodings, add_special_tokens)
        return encodings
