"""Lowercase and Sequence, as Hugging Face's ``normalizers/utils.rs``."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from typing import Any

from ..text.class_table import compiled, lower_special_classes
from ..text.unicode import lowercase_parts, lowercase_str
from ..text.normalized import NormalizedText
from .base import NormalizerBase


class Lowercase(NormalizerBase):
    """Rust's ``char::to_lowercase`` per character (no final sigma; ``İ`` becomes two characters).

    >>> Lowercase().normalize_str("ΟΔΟΣ")
    'οδοσ'
    """

    def normalize(self, text: NormalizedText) -> NormalizedText:
        if plain_lower(text.text):
            return text.with_text(text.text.lower())
        low, dotted = lowercase_parts(text.text)
        text = text.with_text(low)
        if dotted:
            text = text.edit([(i, i + 1, "i\u0307", [i, i]) for i in dotted])
        return text

    def normalize_str(self, text: str) -> str:
        """:func:`~.unicode.lowercase_str` (``text.lower()`` at once where :func:`plain_lower`).

        >>> Lowercase().normalize_str("ÀΣ İ")
        'àσ i̇'
        """
        return text.lower() if plain_lower(text) else lowercase_str(text)


def plain_lower(text: str) -> bool:
    """True when the compiled class runs are installed and find in ``text`` none of the characters
    Rust lowercases otherwise than Python (then ``text.lower()`` is Rust's lowercase, one character
    for one); False tells nothing (the pure path decides).

    >>> plain_lower("ΑΣ") is False
    True
    """
    module = compiled()
    return module is not None and module.cls_find(text, *lower_special_classes().tables) < 0


class Sequence(NormalizerBase):
    """Normalizers applied in order."""

    def __init__(self, normalizers: Seq[Any]) -> None:
        self.normalizers = list(normalizers)
        self.local = all(n.local for n in self.normalizers)

    def normalize(self, text: NormalizedText) -> NormalizedText:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    def normalize_str(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize_str(text)
        return text

    def safe_start(self, text: str, pos: int) -> bool:
        # each stage on the text as the stage before it left it: checked on the original text,
        # which is exact for the first stage and, the stages being local, enough for the rest
        # when none of them moves characters across pos
        return all(getattr(n, "safe_start", None) is None or n.safe_start(text, pos) for n in self.normalizers)
