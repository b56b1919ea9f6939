"""WordPiece (``##`` joins, cleanup of spaces before punctuation), as Hugging Face's
``decoders/wordpiece.rs``."""

from __future__ import annotations


from ..text.errors import TokenizerFileError
from .base import DecoderBase


def wordpiece_cleanup(text: str) -> str:
    """Hugging Face's clean-up of tokenization spaces (before punctuation and English
    contractions).

    >>> wordpiece_cleanup("do n't stop , ok ?")
    "don't stop, ok?"
    """
    return (
        text.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" do not", " don't")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
    )


class WordPiece(DecoderBase):
    """``##`` pieces glued to the token before, a space before every other token but the first;
    ``cleanup`` also applies :func:`wordpiece_cleanup` to each token.

    >>> WordPiece().decode(["un", "##aff", "##able", "fun", "."])
    'unaffable fun.'
    """

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        if not isinstance(prefix, str):
            raise TokenizerFileError(f"WordPiece decoder prefix {prefix!r} is not a string")
        self.prefix = prefix
        self.cleanup = bool(cleanup)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, token in enumerate(tokens):
            if i:
                token = token[len(self.prefix) :] if token.startswith(self.prefix) else " " + token
            if self.cleanup:
                token = wordpiece_cleanup(token)
            out.append(token)
        return out
