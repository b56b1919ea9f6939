"""The bytes one token stands for in a decoded text, through the decoder chain
(:func:`token_bytes`; the token view and the inspector show them)."""

from __future__ import annotations


from ..models.bpe import byte_token_value
from ..text.byte_alphabet import CHAR_TO_BYTE
from .base import DecoderBase
from .bpe import BPEDecoder
from .byte_fallback import ByteFallback
from .byte_level import ByteLevel
from .ctc import CTC
from .fuse import Fuse
from .metaspace import Metaspace
from .replace import Replace
from .sequence import Sequence
from .strip import Strip
from .wordpiece import WordPiece, wordpiece_cleanup


def flatten(decoder: DecoderBase | None) -> list[DecoderBase]:
    if decoder is None:
        return []
    if isinstance(decoder, Sequence):
        return [d for inner in decoder.decoders for d in flatten(inner)]
    return [decoder]


def _raw(byte: int) -> str:
    """A byte kept in a string: itself below 0x80, else a surrogate escape."""
    return chr(byte) if byte < 0x80 else chr(0xDC00 + byte)


#: byte-level stand-in -> the byte it stands for, kept in a string as :func:`_raw` keeps it
_STANDIN_TO_RAW = str.maketrans({c: _raw(b) for c, b in CHAR_TO_BYTE.items()})


_STANDINS = frozenset(CHAR_TO_BYTE)


def token_bytes(token: str, decoder: DecoderBase | None) -> bytes:
    """The bytes ``token`` stands for in the middle of a text decoded by ``decoder`` (neither the
    first token nor the last): byte stand-ins and ``<0xE2>`` tokens give their raw bytes (no
    U+FFFD for a byte that is only part of a character), ``▁`` a space, a WordPiece ``##`` piece
    its text with no space and any other WordPiece token a space before it. With no decoder, the
    token's own UTF-8 bytes.

    >>> token_bytes("ĠhÃ©", ByteLevel()), token_bytes("Ã", ByteLevel())
    (b' h\\xc3\\xa9', b'\\xc3')
    >>> token_bytes("##ing", WordPiece()), token_bytes("run", WordPiece())
    (b'ing', b' run')
    >>> token_bytes("▁▁x", Metaspace()), token_bytes("new</w>", BPEDecoder())
    (b'  x', b'new ')
    """
    value = token
    joined = False  # after Fuse or ByteLevel the token sits inside one joined string
    for stage in flatten(decoder):
        if isinstance(stage, ByteLevel):
            if _STANDINS.issuperset(value):
                value = value.translate(_STANDIN_TO_RAW)
            # else not all stand-ins: Hugging Face takes the token's own bytes
            joined = True
        elif isinstance(stage, ByteFallback):
            byte = None if joined else byte_token_value(value)
            if byte is not None:
                value = _raw(byte)
        elif isinstance(stage, Fuse):
            joined = True
        elif isinstance(stage, Strip):
            if not joined:
                value = stage.strip(value)
        elif isinstance(stage, Replace):
            value = stage.replace(value)
        elif isinstance(stage, Metaspace):
            first = joined and stage.prepend_scheme != "never"
            value = value.replace(stage.replacement, "" if first else " ")
        elif isinstance(stage, WordPiece):
            if not joined:
                value = value[len(stage.prefix) :] if value.startswith(stage.prefix) else " " + value
            if stage.cleanup:
                value = wordpiece_cleanup(value)
        elif isinstance(stage, BPEDecoder):
            value = value.replace(stage.suffix, "" if joined else " ")
        elif isinstance(stage, CTC):
            value = stage.clean(value)
    try:  # the escapes back to their bytes (surrogateescape's own scheme)
        return value.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:  # another lone surrogate: its WTF-8 bytes
        out = bytearray()
        for ch in value:
            code = ord(ch)
            if 0xDC80 <= code <= 0xDCFF:
                out.append(code - 0xDC00)
            else:
                out += ch.encode("utf-8", errors="surrogatepass")
        return bytes(out)
