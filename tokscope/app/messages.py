"""The app's events, all Textual messages (the one channel: no signals, no callback attributes).

The explorer posts the broadcast ones (``DocChanged``, ``EncodingChanged``, ``SelectionChanged``,
``TokenPicked``) to itself and to every screen on the stack, so a view handles them with an
ordinary ``on_doc_changed`` (and so on) method while it is open, and never after.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class TokenPicked(Message):
    """A token was picked somewhere (the token view, a browser, a tree). Handler: ``on_token_picked``.

    ``source`` names where it was picked (free text). The explorer selects the token's first
    occurrence in the text; the why screen shows its merge tree.
    """

    token_id: int
    source: str = ""


@dataclass
class EncodingLoaded(Message):
    """An encoding finished loading (``tokenizer``) or failed (``error``). Handler: ``on_encoding_loaded``."""

    name: str
    tokenizer: Any = None
    error: str | None = None


@dataclass
class DocChanged(Message):
    """The explorer's text was tokenized again (an edit, an encoding, the special-token toggle).
    Handler: ``on_doc_changed``."""

    doc: Any

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DocChanged)


@dataclass
class EncodingChanged(Message):
    """The explorer switched to another tokenizer. Handler: ``on_encoding_changed``."""

    tokenizer: Any


@dataclass
class SelectionChanged(Message):
    """The explorer's selected piece changed (``index``, or None). Handler: ``on_selection_changed``."""

    index: int | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SelectionChanged)
