"""Punctuation, as Hugging Face's ``pre_tokenizers/punctuation.rs``."""

from __future__ import annotations


from ..text.errors import TokenizerFileError
from ..text.unicode import table
from ..text.normalized import BEHAVIORS, NormalizedText
from .base import PreTokenizerBase, char_split


class Punctuation(PreTokenizerBase):
    """Split on punctuation (ASCII punctuation or HF's Unicode punctuation) with a behavior."""

    def __init__(self, behavior: str = "isolated") -> None:
        if behavior not in BEHAVIORS:
            raise TokenizerFileError(f"pre-tokenizer 'Punctuation': unknown behavior {behavior!r}")
        self.behavior = behavior

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return char_split(split, table("PUNCT"), self.behavior)
