"""BertPreTokenizer (white space and punctuation), as Hugging Face's ``pre_tokenizers/bert.rs``."""

from __future__ import annotations

import regex

from ..text.unicode import char_class, table
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, compiled_regex, slices
from .whitespace import WS_CLASS


class BertPreTokenizer(PreTokenizerBase):
    """BERT's: split on whitespace (removed), then on punctuation (isolated): runs of other
    characters, and each punctuation character alone (one regex over the whole split, built from
    the punctuation ranges the split holds)."""

    def _finder(self, text: str) -> regex.Pattern[str]:
        present = table("PUNCT").present(text)
        if not present:
            return compiled_regex("[^" + WS_CLASS[1:] + "+")
        punct = char_class(present)[1:-1]
        return compiled_regex(f"[^{WS_CLASS[1:-1]}{punct}]+|[{punct}]")

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return slices(split, [m.span() for m in self._finder(split.text).finditer(split.text)])

    def split_str(self, text: str, first: bool = True) -> list[str]:
        return self._finder(text).findall(text)
