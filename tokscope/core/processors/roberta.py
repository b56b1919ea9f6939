"""RobertaProcessing (``<s> A </s></s> B </s>``), as Hugging Face's ``processors/roberta.rs``."""

from __future__ import annotations


from .base import Encoding, ProcessorBase, pair_of
from .offsets import TrimStep


class RobertaProcessing(ProcessorBase):
    """``<s> A </s>`` and ``<s> A </s> </s> B </s>``, every type id 0. ``trim_offsets`` and
    ``add_prefix_space`` only move offsets (see the module docstring)."""

    def __init__(
        self,
        sep: tuple[str, int] = ("</s>", 2),
        cls: tuple[str, int] = ("<s>", 0),
        *,
        trim_offsets: bool = True,
        add_prefix_space: bool = True,
    ) -> None:
        self.sep = pair_of(sep, "RobertaProcessing sep")
        self.cls = pair_of(cls, "RobertaProcessing cls")
        self.trim_offsets = bool(trim_offsets)
        self.add_prefix_space = bool(add_prefix_space)

    def added_tokens(self, is_pair: bool) -> int:
        return 4 if is_pair else 2

    def trim_steps(self, add_special_tokens: bool = True) -> tuple[TrimStep, ...]:
        return (TrimStep(self.add_prefix_space),) if self.trim_offsets else ()

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        encodings = [[(t, s, 0) for t, s, _ in encoding] for encoding in encodings]
        if not add_special_tokens:
            return encodings
        cls, sep = self.cls[1], self.sep[1]
        out = []
        for i, encoding in enumerate(encodings):
            first = cls if i == 0 else sep
            out.append([(first, None, 0), *encoding, (sep, None, 0)])
        return out
