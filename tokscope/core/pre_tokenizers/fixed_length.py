"""FixedLength, as Hugging Face's ``pre_tokenizers/fixed_length.rs``."""

from __future__ import annotations


from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, slices


class FixedLength(PreTokenizerBase):
    """Chunks of ``length`` characters."""

    def __init__(self, length: int = 5) -> None:
        if length < 0:
            raise TokenizerFileError("pre-tokenizer 'FixedLength': the length must not be negative")
        self.length = length
        self.local = False

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        n = len(split.text)
        if self.length == 0:
            raise UnsupportedComponentError("pre-tokenizer", "FixedLength", "length 0")
        return slices(split, [(s, min(s + self.length, n)) for s in range(0, n, self.length)])
