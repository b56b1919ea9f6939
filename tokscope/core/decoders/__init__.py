"""Decoders: turning token strings back into text, exactly as Hugging Face's decoders do.

Every decoder maps a list of token strings to a list of strings (:meth:`decode_chain`); the text
is their concatenation (:meth:`decode`). Some look at a token's place: Metaspace drops the
``▁`` of the first token, WordPiece glues ``##`` pieces to the one before and puts a space before
the others, BPEDecoder turns the end-of-word suffix into a space except on the last token.

:func:`token_bytes` answers a different question for the token view: the bytes one token stands
for *in the middle of* a decoded text (``Ġhello`` → ``b" hello"``, ``<0xE2>`` → ``b"\\xe2"``,
``▁the`` → ``b" the"``, ``##ing`` → ``b"ing"``), raw bytes rather than replacement characters.

One module per decoder as Hugging Face's crate lays them out (byte_level, byte_fallback, fuse, strip,
replace, metaspace, wordpiece, bpe, ctc, sequence; raw_bytes for :func:`token_bytes`); this package
reads the ``"decoder"`` object of a ``tokenizer.json`` (:func:`from_json`: a new decoder is a module
here and a line in it) and re-exports every class.

>>> chain = Sequence([Replace("▁", " "), ByteFallback(), Fuse(), Strip(" ", 1, 0)])
>>> chain.decode(["▁Hello", "▁", "<0xE2>", "<0x82>", "<0xAC>"])
'Hello €'
>>> token_bytes("<0xE2>", chain), token_bytes("▁the", chain)
(b'\\xe2', b' the')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..patterns.guard import check_file_string
from ..text.errors import TokenizerFileError, UnsupportedComponentError
from .bpe import BPEDecoder
from .byte_fallback import ByteFallback
from .byte_level import ByteLevel
from .ctc import CTC
from .fuse import Fuse
from .metaspace import Metaspace
from .raw_bytes import token_bytes
from .replace import Replace
from .sequence import Sequence
from .strip import Strip
from .wordpiece import WordPiece, wordpiece_cleanup

__all__ = [
    "BPEDecoder",
    "ByteFallback",
    "ByteLevel",
    "CTC",
    "Fuse",
    "Metaspace",
    "Replace",
    "Sequence",
    "Strip",
    "WordPiece",
    "from_json",
    "token_bytes",
    "wordpiece_cleanup",
]


DecoderStage = ByteLevel | ByteFallback | Fuse | Strip | Replace | Metaspace | WordPiece | BPEDecoder | CTC | Sequence


def _field(obj: Mapping[str, Any], name: str, kind: type, default: Any) -> Any:
    value = obj.get(name, default)
    if value is None:
        value = default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TokenizerFileError(f"{obj.get('type')} decoder {name} {value!r} is not a {kind.__name__}")
    return value


def _required(obj: Mapping[str, Any], name: str) -> Any:
    if name not in obj:
        raise TokenizerFileError(f"{obj.get('type')} decoder without {name}")
    return obj[name]


def from_json(obj: Any) -> DecoderStage | None:
    """The decoder of a ``tokenizer.json`` (its ``"decoder"`` object), ``None`` for none. A type
    tokscope does not know is an :class:`UnsupportedComponentError`.

    >>> from_json({"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"},
    ...            "content": " "}, {"type": "Fuse"}]}).decode(["▁a", "▁b"])
    ' a b'
    """
    if obj is None:
        return None
    if not isinstance(obj, Mapping):
        raise TokenizerFileError("the decoder is not an object")
    kind = obj.get("type")
    if kind == "ByteLevel":
        return ByteLevel()
    if kind == "ByteFallback":
        return ByteFallback()
    if kind == "Fuse":
        return Fuse()
    if kind == "Strip":
        return Strip(_required(obj, "content"), _required(obj, "start"), _required(obj, "stop"))
    if kind == "Replace":
        pattern = _required(obj, "pattern")
        content = check_file_string(_required(obj, "content"), "decoder Replace 'content'")
        if isinstance(pattern, Mapping) and len(pattern) == 1:
            (how, text), = pattern.items()
            if how in ("String", "Regex") and isinstance(text, str):
                return Replace(text, content, regex=how == "Regex")
        raise TokenizerFileError(f"Replace decoder pattern {pattern!r} is neither a String nor a Regex")
    if kind == "Metaspace":
        replacement = _required(obj, "replacement")
        scheme = _field(obj, "prepend_scheme", str, "always")
        if obj.get("add_prefix_space") is False:
            if scheme != "never":
                raise TokenizerFileError("Metaspace add_prefix_space does not match its prepend_scheme")
        return Metaspace(replacement, scheme, _field(obj, "split", bool, True))
    if kind == "WordPiece":
        return WordPiece(_required(obj, "prefix"), _required(obj, "cleanup"))
    if kind == "BPEDecoder":
        return BPEDecoder(_required(obj, "suffix"))
    if kind == "CTC":
        return CTC(_required(obj, "pad_token"), _required(obj, "word_delimiter_token"), _required(obj, "cleanup"))
    if kind == "Sequence":
        decoders = obj.get("decoders")
        if not isinstance(decoders, list):
            raise TokenizerFileError("Sequence decoder without its list of decoders")
        inner = []
        for item in decoders:
            found = from_json(item)
            if found is None:
                raise TokenizerFileError("Sequence decoder with a null decoder")
            inner.append(found)
        return Sequence(inner)
    if not isinstance(kind, str):
        raise TokenizerFileError("decoder without a type")
    raise UnsupportedComponentError("decoder", kind)
