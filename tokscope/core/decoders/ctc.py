"""CTC (repeats and the pad token dropped), as Hugging Face's ``decoders/ctc.rs``."""

from __future__ import annotations


from ..text.errors import TokenizerFileError
from .base import DecoderBase
from .wordpiece import wordpiece_cleanup


class CTC(DecoderBase):
    """Connectionist temporal classification output: repeats collapsed, ``pad_token`` removed,
    and with ``cleanup`` the WordPiece clean-up and ``word_delimiter_token`` as a space.

    >>> CTC().decode(["<pad>", "h", "h", "e", "<pad>", "l", "l", "<pad>", "l", "o", "|", "o"])
    'hello o'
    """

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        if not isinstance(pad_token, str) or not isinstance(word_delimiter_token, str):
            raise TokenizerFileError("CTC decoder tokens must be strings")
        self.pad_token = pad_token
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = bool(cleanup)

    def clean(self, token: str) -> str:
        """One token with the pad token removed and, with ``cleanup``, cleaned up as WordPiece
        text with the word delimiter as a space (no repeats collapsed: that needs its neighbours).

        >>> CTC().clean("<pad>a|b")
        'a b'
        """
        token = token.replace(self.pad_token, "")
        if self.cleanup:
            token = wordpiece_cleanup(token).replace(self.word_delimiter_token, " ")
        return token

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        previous = None
        for token in tokens:
            if token == previous:
                continue
            previous = token
            token = self.clean(token)
            if token:
                out.append(token)
        return out
