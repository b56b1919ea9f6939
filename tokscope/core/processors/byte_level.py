"""ByteLevel as a post-processor (adds no token), as Hugging Face's
``pre_tokenizers/byte_level.rs`` post-processes."""

from __future__ import annotations


from .base import Encoding, ProcessorBase
from .offsets import TrimStep


class ByteLevel(ProcessorBase):
    """Adds no token; in Hugging Face it trims spaces off byte-level offsets (ids unchanged)."""

    def __init__(self, *, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = bool(add_prefix_space)
        self.trim_offsets = bool(trim_offsets)
        self.use_regex = bool(use_regex)

    def added_tokens(self, is_pair: bool) -> int:
        return 0

    def trim_steps(self, add_special_tokens: bool = True) -> tuple[TrimStep, ...]:
        return (TrimStep(self.add_prefix_space),) if self.trim_offsets else ()

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        return encodings
