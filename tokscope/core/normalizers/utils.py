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
        low, dotted = lowercase_parts(text.text)
        text = text.with_text(low)
        if dotted:
            text = text.edit([(i, i + 1, "i\u0307", [i, i]) for i in dotted])
        return text

    def normalize_str(self, text: str) -> str:
        """:func:`~.unicode.lowercase_str`; with the compiled class runs installed, a text with
        none of the characters Rust lowercases otherwise than Python is ``text.lower()`` at once.

        >>> Lowercase().normalize_str("ÀΣ İ")
        'àσ i̇'
        """
        module = compiled()
        if module is None or text.isascii() or module.cls_find(text, *lower_special_classes().tables) >= 0:
            return lowercase_str(text)
        return text.lower()


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
