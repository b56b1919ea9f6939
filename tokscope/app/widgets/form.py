"""Form widgets that keep letter keys to themselves.

Textual runs a screen's or the app's key bindings for any key the focused widget does not
consume; a text field consumes printable keys, but a button, a select or a radio set does not, so
typing a path with the Train button focused would open views. These take every printable key
(the widget's own keys, Enter and Space, still work), so letters never fire while one has focus.
"""

from __future__ import annotations

from textual.widgets import Button as _Button
from textual.widgets import RadioSet as _RadioSet
from textual.widgets import Select as _Select


def _consumes(character: str | None) -> bool:
    return character is not None and len(character) == 1 and character.isprintable()


class Button(_Button):
    """A button that no letter key passes (Enter and Space press it)."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return _consumes(character)


class Select(_Select):
    """A select that no letter key passes."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return _consumes(character)


class RadioSet(_RadioSet):
    """A radio set that no letter key passes."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return _consumes(character)
