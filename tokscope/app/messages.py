"""Messages the explorer posts (other screens may handle them)."""

from __future__ import annotations

from textual.message import Message


class TokenPicked(Message):
    """A token was picked somewhere (the token view, a browser, a tree): ``token_id``.

    Posted to the app by ``app.open_token``; the explorer's default handling selects the token's
    first occurrence in the text. ``source`` names where it was picked (free text).
    """

    def __init__(self, token_id: int, source: str = "") -> None:
        super().__init__()
        self.token_id = token_id
        self.source = source


class EncodingLoaded(Message):
    """An encoding finished loading (``tokenizer``) or failed (``error``)."""

    def __init__(self, name: str, tokenizer=None, error: str | None = None) -> None:
        super().__init__()
        self.name = name
        self.tokenizer = tokenizer
        self.error = error
