"""Metaspace (spaces as ``▁``, a prepended one by scheme), as Hugging Face's
``pre_tokenizers/metaspace.rs``."""

from __future__ import annotations


from ..text.errors import TokenizerFileError
from ..text.unicode import RangeSet
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, char_split, split_each


class Metaspace(PreTokenizerBase):
    """SentencePiece's spaces: every ``" "`` becomes ``replacement``, which is prepended to each
    split (``always``), to the split at the start of the text (``first``) or never; then, with
    ``split``, each chunk starts at a ``replacement`` (HF's merged-with-next)."""

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        if len(replacement) != 1:
            raise TokenizerFileError("pre-tokenizer 'Metaspace': the replacement must be one character")
        if prepend_scheme not in ("always", "first", "never"):
            raise TokenizerFileError(f"pre-tokenizer 'Metaspace': unknown prepend_scheme {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split
        self._rep = RangeSet([(ord(replacement), ord(replacement))])
        self.local = split and prepend_scheme == "never"
        self.splits = split
        self.needs_start = prepend_scheme == "first"

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        rep = self.replacement
        t = split.text
        if " " in t:
            split = split.with_text(t.replace(" ", rep))
        if not split.text.startswith(rep):
            if self.prepend_scheme == "always" or (self.prepend_scheme == "first" and split.original_start == 0):
                split = split.prepend(rep)
        if not self.split:
            return [split]
        if rep not in split.text[1:]:
            return split.slices([(0, len(split.text))])  # one chunk (the common case)
        return char_split(split, self._rep, "merged_with_next")

    def split_str(self, text: str, first: bool = True) -> list[str]:
        if not text:
            return []
        rep = self.replacement
        if " " in text:
            text = text.replace(" ", rep)
        if not text.startswith(rep):
            if self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first):
                text = rep + text
        if not self.split or rep not in text[1:]:
            return [text]
        head, *rest = text.split(rep)
        out = [head] if head else []
        out.extend([rep + piece for piece in rest])
        return out

    def split_many(self, pieces: list[str]) -> list[str]:
        """:meth:`split_str` of each piece (none at the start of the text) in one list: with
        ``always`` and no space or ``replacement`` in any piece (a Sequence after WhitespaceSplit),
        each piece is the replacement and the piece, with no call per piece.

        >>> Metaspace().split_many(["Hey", "you", "a▁b"])
        ['▁Hey', '▁you', '▁a', '▁b']
        """
        rep = self.replacement
        if self.prepend_scheme == "always":
            joined = "".join(pieces)
            if " " not in joined and rep not in joined:
                return [rep + piece for piece in pieces if piece]
        return split_each(self, pieces)
