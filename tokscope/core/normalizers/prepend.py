"""Prepend (a string before a non-empty text), as Hugging Face's ``normalizers/prepend.rs``."""

from __future__ import annotations

from ..text.normalized import NormalizedText
from .base import NormalizerBase


class Prepend(NormalizerBase):
    """``prepend`` before a non-empty text, aligned with its first character."""

    local = False

    def __init__(self, prepend: str) -> None:
        self.prepend = prepend

    def normalize(self, text: NormalizedText) -> NormalizedText:
        return text.prepend(self.prepend) if text.text else text

    def normalize_str(self, text: str) -> str:
        return self.prepend + text if text else text
