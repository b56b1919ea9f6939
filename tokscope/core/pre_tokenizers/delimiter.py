"""CharDelimiterSplit, as Hugging Face's ``pre_tokenizers/delimiter.rs``."""

from __future__ import annotations


from ..text.errors import TokenizerFileError
from ..text.unicode import RangeSet
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, char_split


class CharDelimiterSplit(PreTokenizerBase):
    """Split on one character, which is removed."""

    def __init__(self, delimiter: str) -> None:
        if len(delimiter) != 1:
            raise TokenizerFileError("pre-tokenizer 'CharDelimiterSplit': the delimiter must be one character")
        self.delimiter = delimiter

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return char_split(split, RangeSet([(ord(self.delimiter), ord(self.delimiter))]), "removed")
