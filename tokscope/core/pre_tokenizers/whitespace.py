r"""Whitespace (``\w+|[^\w\s]+``) and WhitespaceSplit (on white space), as Hugging Face's
``pre_tokenizers/whitespace.rs``."""

from __future__ import annotations


from ..text.unicode import WHITESPACE, RangeSet, char_class, table
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, char_split, compiled_regex, slices


WS = RangeSet([(ord(c), ord(c)) for c in WHITESPACE])


WS_CLASS = char_class(WS.ranges)


class WhitespaceSplit(PreTokenizerBase):
    """Split on whitespace (Rust's ``char::is_whitespace``), which is removed."""

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return char_split(split, WS, "removed")

    def split_str(self, text: str, first: bool = True) -> list[str]:
        return compiled_regex("[^" + WS_CLASS[1:] + "+").findall(text)


class Whitespace(PreTokenizerBase):
    r"""The chunks ``\w+|[^\w\s]+`` of the Rust ``regex`` crate (its Unicode ``\w``)."""

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        t = split.text
        word = table("RX_WORD").class_for(t)
        if word is None:
            pattern = compiled_regex("[^" + WS_CLASS[1:] + "+")
        else:
            pattern = compiled_regex(f"{word}+|[^{word[1:-1]}{WS_CLASS[1:-1]}]+")
        return slices(split, [m.span() for m in pattern.finditer(t)])
