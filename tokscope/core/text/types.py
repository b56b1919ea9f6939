"""Plain data the core hands out: frozen dataclasses, no behaviour beyond small derived views.

The words follow the project glossary: a *token* is a vocabulary entry, a *piece* is a token where
it occurs in a text, a *chunk* is one match of the pre-tokenization *pattern*.
"""

from __future__ import annotations

from dataclasses import dataclass


def is_continuation(byte: int) -> bool:
    """True for a UTF-8 continuation byte (0x80..0xBF).

    >>> is_continuation(0xA9), is_continuation(ord("a")), is_continuation(0xC3)
    (True, False, False)
    """
    return 0x80 <= byte < 0xC0


def is_whole_utf8(data: bytes) -> bool:
    """True when ``data`` decodes as UTF-8 on its own (whole characters only).

    >>> is_whole_utf8("é".encode()), is_whole_utf8("é".encode()[:1])
    (True, False)
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def byte_kind(byte: int) -> str:
    """Classify one byte of UTF-8: ``ascii``, ``lead`` (starts a multi-byte character),
    ``continuation`` or ``invalid`` (0xC0, 0xC1, 0xF5..0xFF never occur in UTF-8).

    >>> [byte_kind(b) for b in "aé".encode()]
    ['ascii', 'lead', 'continuation']
    """
    if byte < 0x80:
        return "ascii"
    if byte < 0xC0:
        return "continuation"
    if byte in (0xC0, 0xC1) or byte >= 0xF5:
        return "invalid"
    return "lead"


@dataclass(frozen=True, slots=True)
class Token:
    """An entry of a vocabulary: its id and bytes.

    ``rank`` is the merge rank for a mergeable token (equal to the id for the OpenAI encodings and
    for tokenizers trained here) and ``None`` for a special token.
    """

    id: int
    bytes: bytes
    rank: int | None
    special: bool = False

    @property
    def text(self) -> str:
        """The token's bytes decoded, with U+FFFD where they are only part of a character."""
        return self.bytes.decode("utf-8", errors="replace")

    @property
    def partial(self) -> bool:
        """True when the bytes are not whole UTF-8 characters."""
        return not is_whole_utf8(self.bytes)


@dataclass(frozen=True, slots=True)
class Piece:
    """One token where it occurs in a text.

    ``start``/``end`` are character offsets into the text (``end`` exclusive); ``byte_start`` and
    ``byte_end`` are offsets into the text's UTF-8 bytes. A *partial* piece (bytes that are only
    part of a character) spans the whole character it touches, so neighbouring partial pieces of
    one character share the same ``start``/``end`` and differ only in their byte offsets.
    """

    id: int
    bytes: bytes
    start: int
    end: int
    byte_start: int
    byte_end: int
    partial: bool = False
    special: bool = False

    @property
    def text(self) -> str:
        """The piece decoded, with U+FFFD where it is partial."""
        return self.bytes.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One match of the pre-tokenization pattern (or one special token, with ``special=True``).

    Offsets are character offsets into the text; merges never cross a chunk boundary. ``form``
    is the chunk as the model saw it when a normalizer or pre-tokenizer rewrote it (``ĠHello``,
    ``▁hello``, ``café`` lowercased ...), and None when that is ``text`` itself.
    """

    text: str
    start: int
    end: int
    special: bool = False
    form: str | None = None


@dataclass(frozen=True, slots=True)
class Parents:
    """The two tokens whose merge made a token."""

    left: int
    right: int
