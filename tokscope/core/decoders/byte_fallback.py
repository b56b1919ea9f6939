"""ByteFallback (``<0xE2>`` tokens back to bytes), as Hugging Face's ``decoders/byte_fallback.rs``."""

from __future__ import annotations


from ..models.bpe import byte_token_value
from .base import DecoderBase


class ByteFallback(DecoderBase):
    """Runs of ``<0xE2>`` tokens back to their text; a run that is not valid UTF-8 becomes one
    U+FFFD per byte, as in Hugging Face.

    >>> ByteFallback().decode_chain(["a", "<0xC3>", "<0xA9>", "b", "<0xC3>", "<0xFF>"])
    ['a', 'é', 'b', '�', '�']
    """

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()

        def flush() -> None:
            if pending:
                try:
                    out.append(pending.decode("utf-8"))
                except UnicodeDecodeError:
                    out.extend(["\ufffd"] * len(pending))
                pending.clear()

        for token in tokens:
            value = byte_token_value(token)
            if value is not None:
                pending.append(value)
            else:
                flush()
                out.append(token)
        flush()
        return out
