"""Sequence, as Hugging Face's ``pre_tokenizers/sequence.rs``."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from typing import Any

from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, split_each


class Sequence(PreTokenizerBase):
    """Pre-tokenizers applied in order."""

    def __init__(self, pretokenizers: Seq[Any]) -> None:
        self.pretokenizers = list(pretokenizers)
        local, cut = True, False
        for p in self.pretokenizers:
            if p.local:
                cut = cut or p.splits
            elif not (cut and not p.splits):
                local = False
        self.local = local and cut
        self.needs_start = any(p.needs_start for p in self.pretokenizers)

    def pre_tokenize(self, splits: list[NormalizedText]) -> list[NormalizedText]:
        for p in self.pretokenizers:
            splits = p.pre_tokenize(splits)
        return splits

    def split_str(self, text: str, first: bool = True) -> list[str]:
        if self.needs_start:  # where each split starts matters: keep the alignment
            return PreTokenizerBase.split_str(self, text, first)
        pieces = [text] if text else []
        for p in self.pretokenizers:
            many = getattr(p, "split_many", None)  # all the pieces in one call (see Metaspace)
            out = many(pieces) if many is not None else split_each(p, pieces)
            pieces = [piece for piece in out if piece] if "" in out else out
        return pieces
