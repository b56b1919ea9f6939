"""Metaspace (``▁`` back to spaces), as Hugging Face's ``pre_tokenizers/metaspace.rs`` decodes."""

from __future__ import annotations


from ..text.errors import TokenizerFileError
from .base import DecoderBase


class Metaspace(DecoderBase):
    """``▁`` (``replacement``) back to spaces; in the first token it is dropped instead unless
    ``prepend_scheme`` is ``"never"`` (every one of them, as Hugging Face does). ``split`` only
    matters to the pre-tokenizer.

    >>> Metaspace().decode_chain(["▁Hey", "▁friend"]), Metaspace(prepend_scheme="never").decode(["▁Hey"])
    (['Hey', ' friend'], ' Hey')
    """

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise TokenizerFileError(f"Metaspace replacement {replacement!r} is not one character")
        if prepend_scheme not in ("always", "first", "never"):
            raise TokenizerFileError(f"Metaspace prepend_scheme {prepend_scheme!r} is not always, first or never")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = bool(split)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, token in enumerate(tokens):
            if i == 0 and self.prepend_scheme != "never":
                out.append(token.replace(self.replacement, ""))
            else:
                out.append(token.replace(self.replacement, " "))
        return out
