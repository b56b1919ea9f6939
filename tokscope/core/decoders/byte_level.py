"""ByteLevel: the stand-in characters back to their bytes, as Hugging Face's
``pre_tokenizers/byte_level.rs`` decodes."""

from __future__ import annotations


from ..text.byte_alphabet import CHAR_TO_BYTE
from .base import DecoderBase


class ByteLevel(DecoderBase):
    """GPT-2's byte stand-ins back to bytes, the whole sequence decoded as UTF-8 with U+FFFD for
    bytes that are not whole characters. A token with a character outside the alphabet counts as
    its own UTF-8 bytes, as in Hugging Face.

    >>> ByteLevel().decode(["Hello", "Ġw", "Ã©"])
    'Hello wé'
    """

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [_byte_level_bytes(tokens).decode("utf-8", errors="replace")]


def _byte_level_bytes(tokens: list[str]) -> bytes:
    table = CHAR_TO_BYTE
    out = bytearray()
    for token in tokens:
        try:
            out += bytes([table[c] for c in token])
        except KeyError:
            out += token.encode("utf-8", errors="surrogatepass")
    return bytes(out)
