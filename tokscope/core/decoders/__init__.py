"""Decoders: turning token strings back into text, exactly as Hugging Face's decoders do.

Every decoder maps a list of token strings to a list of strings (:meth:`decode_chain`); the text
is their concatenation (:meth:`decode`). Some look at a token's place: Metaspace drops the
``▁`` of the first token, WordPiece glues ``##`` pieces to the one before and puts a space before
the others, BPEDecoder turns the end-of-word suffix into a space except on the last token.

:func:`token_bytes` answers a different question for the token view: the bytes one token stands
for *in the middle of* a decoded text (``Ġhello`` → ``b" hello"``, ``<0xE2>`` → ``b"\\xe2"``,
``▁the`` → ``b" the"``, ``##ing`` → ``b"ing"``), raw bytes rather than replacement characters.

>>> chain = Sequence([Replace("▁", " "), ByteFallback(), Fuse(), Strip(" ", 1, 0)])
>>> chain.decode(["▁Hello", "▁", "<0xE2>", "<0x82>", "<0xAC>"])
'Hello €'
>>> token_bytes("<0xE2>", chain), token_bytes("▁the", chain)
(b'\\xe2', b' the')
"""

from __future__ import annotations

from collections import abc
from collections.abc import Mapping
from typing import Any

import regex

from ..models.bpe import byte_token_value
from ..patterns.guard import budget, check_file_string, check_pattern, timed_out
from ..text.byte_alphabet import CHAR_TO_BYTE
from ..text.errors import TokenizerFileError, UnsupportedComponentError


class _Decoder:
    def decode_chain(self, tokens: list[str]) -> list[str]:
        raise NotImplementedError

    def decode(self, tokens: list[str]) -> str:
        """The decoded text: :meth:`decode_chain` joined."""
        return "".join(self.decode_chain(list(tokens)))


class ByteLevel(_Decoder):
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


class ByteFallback(_Decoder):
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


class Fuse(_Decoder):
    """All tokens joined into one string."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]


class Strip(_Decoder):
    """Removes up to ``start`` leading and ``stop`` trailing ``content`` characters from *each*
    token (after a Fuse, from the text's ends).

    >>> Strip(" ", 1, 0).decode_chain(["  a", " b "])
    [' a', 'b ']
    """

    def __init__(self, content: str = " ", start: int = 0, stop: int = 0) -> None:
        if not isinstance(content, str) or len(content) != 1:
            raise TokenizerFileError(f"Strip decoder content {content!r} is not one character")
        for name, value in (("start", start), ("stop", stop)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TokenizerFileError(f"Strip decoder {name} {value!r} is not a count")
        self.content = content
        self.start = start
        self.stop = stop

    def strip(self, token: str) -> str:
        """One token stripped. Where Hugging Face panics (a token made only of ``content``, shorter
        than ``stop``, or cut from both ends past each other) this gives the empty string."""
        n = len(token)
        start_cut = 0
        for i in range(min(self.start, n)):
            if token[i] != self.content:
                break
            start_cut = i + 1
        stop_cut = n
        for i in range(self.stop):
            index = n - i - 1
            if index < 0:
                return ""
            if token[index] != self.content:
                break
            stop_cut = index
        if start_cut > stop_cut:
            return ""
        return token[start_cut:stop_cut]

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self.strip(t) for t in tokens]


class Replace(_Decoder):
    """Replaces every match of ``pattern`` in each token by ``content``. ``pattern`` is a string
    (matched as it is) or, with ``regex=True``, a regular expression (Hugging Face compiles it
    with Oniguruma; here the ``regex`` module, which reads the usual syntax the same way).

    >>> Replace("▁", " ").decode_chain(["▁a▁b"])
    [' a b']
    """

    def __init__(self, pattern: str, content: str, *, regex: bool = False) -> None:
        if not isinstance(pattern, str) or not isinstance(content, str):
            raise TokenizerFileError("Replace decoder pattern and content must be strings")
        self.pattern = pattern
        self.content = content
        self.is_regex = regex
        self._regex = None
        if regex:
            try:
                self._regex = _compile(pattern)
            except Exception as exc:  # regex.error
                raise TokenizerFileError(f"Replace decoder pattern {pattern!r} does not compile: {exc}") from None

    def replace(self, token: str) -> str:
        if self._regex is None:
            return token.replace(self.pattern, self.content)
        if not token:
            return token
        out = []
        prev = 0
        try:
            for m in self._regex.finditer(token, timeout=budget(len(token))):
                out.append(token[prev : m.start()])
                out.append(self.content)
                prev = m.end()
        except TimeoutError:
            raise timed_out(self.pattern, "Replace decoder pattern") from None
        out.append(token[prev:])
        return "".join(out)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self.replace(t) for t in tokens]


def _compile(pattern: str) -> Any:
    check_pattern(pattern, "Replace decoder pattern")  # the limits a user's own pattern has
    return regex.compile(pattern, regex.V0)


class Metaspace(_Decoder):
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


class WordPiece(_Decoder):
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


class BPEDecoder(_Decoder):
    """The end-of-word ``suffix`` becomes a space, and nothing on the last token.

    >>> BPEDecoder().decode(["hel", "lo</w>", "world</w>"])
    'hello world'
    """

    def __init__(self, suffix: str = "</w>") -> None:
        if not isinstance(suffix, str):
            raise TokenizerFileError(f"BPEDecoder suffix {suffix!r} is not a string")
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        last = len(tokens) - 1
        return [t.replace(self.suffix, "" if i == last else " ") for i, t in enumerate(tokens)]


class CTC(_Decoder):
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

    def _one(self, token: str) -> str:
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
            token = self._one(token)
            if token:
                out.append(token)
        return out


class Sequence(_Decoder):
    """Several decoders, each on what the one before returned."""

    def __init__(self, decoders: abc.Sequence[_Decoder]) -> None:
        self.decoders = tuple(decoders)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens


DecoderStage = ByteLevel | ByteFallback | Fuse | Strip | Replace | Metaspace | WordPiece | BPEDecoder | CTC | Sequence


# ----- the bytes of one token ---------------------------------------------------------------------


def _flatten(decoder: _Decoder | None) -> list[_Decoder]:
    if decoder is None:
        return []
    if isinstance(decoder, Sequence):
        return [d for inner in decoder.decoders for d in _flatten(inner)]
    return [decoder]


def _raw(byte: int) -> str:
    """A byte kept in a string: itself below 0x80, else a surrogate escape."""
    return chr(byte) if byte < 0x80 else chr(0xDC00 + byte)


#: byte-level stand-in -> the byte it stands for, kept in a string as :func:`_raw` keeps it
_STANDIN_TO_RAW = str.maketrans({c: _raw(b) for c, b in CHAR_TO_BYTE.items()})
_STANDINS = frozenset(CHAR_TO_BYTE)


def token_bytes(token: str, decoder: _Decoder | None) -> bytes:
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
    for stage in _flatten(decoder):
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
            value = stage._one(value)
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


# ----- tokenizer.json -----------------------------------------------------------------------------


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
