"""The base every decoder shares."""

from __future__ import annotations




class DecoderBase:
    def decode_chain(self, tokens: list[str]) -> list[str]:
        raise NotImplementedError

    def decode(self, tokens: list[str]) -> str:
        """The decoded text: :meth:`decode_chain` joined."""
        return "".join(self.decode_chain(list(tokens)))
