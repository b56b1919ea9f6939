"""SentencePiece's decoding: pieces joined, ``▁`` back to a space, ``<0xNN>`` pieces as their
bytes, control pieces as nothing, the unknown piece as `` ⁇ ``, and the space the normalizer put
before the text taken off again.

>>> d = SentencePieceDecoder(control={"<s>"}, unknown={"<unk>"})
>>> "".join(d.decode_chain(["<s>", "▁Hello", "▁w", "<0xC3>", "<0xA9>"]))
'Hello wé'
>>> d.token_bytes("▁the"), d.token_bytes("<0x0A>"), d.token_bytes("<s>")
(b' the', b'\\n', b'')
"""

from __future__ import annotations

from collections.abc import Iterable

from ..models.sentencepiece_pieces import SPACE, byte_value


class SentencePieceDecoder:
    """SentencePiece's decoder (see the module). ``control``/``unknown``: the pieces of those
    types; ``strip_prefix``: the model adds a dummy ``▁`` before the text (taken off again)."""

    def __init__(self, *, control: Iterable[str] = (), unknown: Iterable[str] = (), strip_prefix: bool = True,
                 unk_surface: str = " \u2047 ") -> None:
        self.control = frozenset(control)
        self.unknown = frozenset(unknown)
        self.strip_prefix = strip_prefix
        self.unk_surface = unk_surface

    def token_bytes(self, token: str) -> bytes:
        """What one piece adds to a decoded text."""
        if token in self.control:
            return b""
        value = byte_value(token)
        if value is not None:
            return bytes([value])
        return token.replace(SPACE, " ").encode("utf-8", "surrogatepass")

    def decode_chain(self, tokens: list[str]) -> list[str]:
        data = bytearray()
        for token in tokens:
            if token in self.unknown:
                data += self.unk_surface.encode("utf-8")
            else:
                data += self.token_bytes(token)
        text = data.decode("utf-8", "replace")
        if self.strip_prefix and text.startswith(" "):
            text = text[1:]
        return [text]
