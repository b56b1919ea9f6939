"""Strip (spaces at the ends) and StripAccents (combining marks), as Hugging Face's
``normalizers/strip.rs``."""

from __future__ import annotations

import regex

from ..text.unicode import WHITESPACE, RangeSet, table
from ..text.normalized import NormalizedText
from .base import NormalizerBase


class Strip(NormalizerBase):
    """Whitespace (Rust's ``char::is_whitespace``) removed from the left and/or right."""

    local = False

    def __init__(self, left: bool = True, right: bool = True) -> None:
        self.left = left
        self.right = right

    def normalize(self, text: NormalizedText) -> NormalizedText:
        return text.strip(self.left, self.right)

    def normalize_str(self, text: str) -> str:
        ws = "".join(WHITESPACE)
        if self.left:
            text = text.lstrip(ws)
        if self.right:
            text = text.rstrip(ws)
        return text


def remove_class(text: NormalizedText, chars: RangeSet | regex.Pattern[str]) -> NormalizedText:
    """``text`` without the characters of ``chars`` (HF's ``filter``)."""
    pattern = chars.finder(text.text, "+") if isinstance(chars, RangeSet) else chars
    if pattern is None:
        return text
    spans = [m.span() for m in pattern.finditer(text.text)]
    return text.remove_spans(spans) if spans else text


def remove_str(text: str, chars: RangeSet) -> str:
    """:func:`remove_class` for a plain string (no offsets kept): the characters deleted by one
    ``str.translate``, no pattern compiled for the text.

    >>> remove_str("e\u0301a", table("COMBINING"))
    'ea'
    """
    return text.translate(chars.translation(text, None))


class StripAccents(NormalizerBase):
    """Combining marks removed (HF's ``is_combining_mark``, Unicode 9.0); usually after NFD.

    >>> StripAccents().normalize_str("e\\u0301a")
    'ea'
    """

    def normalize(self, text: NormalizedText) -> NormalizedText:
        if text.text.isascii():
            return text
        return remove_class(text, table("COMBINING"))

    def normalize_str(self, text: str) -> str:
        if text.isascii():
            return text
        return remove_str(text, table("COMBINING"))
