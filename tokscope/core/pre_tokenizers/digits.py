"""Digits, as Hugging Face's ``pre_tokenizers/digits.rs``."""

from __future__ import annotations


from ..text.unicode import table
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, char_split


class Digits(PreTokenizerBase):
    """Split on numeric characters (Rust's ``char::is_numeric``): each alone
    (``individual_digits``) or in runs."""

    def __init__(self, individual_digits: bool = False) -> None:
        self.individual_digits = individual_digits

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return char_split(split, table("NUMERIC"), "isolated" if self.individual_digits else "contiguous")
