"""The text is the user's, exactly (issue 20, items 1 and 2).

No screen changes the input pane's text unless the user edits it there (opening compare rewrote
mixed line endings to CRLF), and every character a key press delivers reaches the text, the
zero-width and format characters Textual's TextArea drops included.
"""

from __future__ import annotations

import pytest
from textual import events
from textual.keys import _character_to_key

from helpers import idle, settle
from tokscope.app.app import ExplorerApp
from tokscope.app.screens.compare import CompareScreen

MIXED = "one\ntwo\r\nthree\nfour\r\rfive\x85six\u2028\n"
#: x, a family emoji joined by ZWJs, RLO, PDF, RLM, soft hyphen, no-break space, word joiner, BOM
TYPED = "x👩\u200d👩\u200d👧\u202e\u202c\u200f\u00ad\u00a0\u2060\ufeff"


async def type_keys(pilot, text: str) -> None:
    """Send one key per character as the terminal's input parser does (``Key(name, character)``);
    ``pilot.press`` gives a zero-width joiner no character at all, which no terminal does."""
    for character in text:
        event = events.Key(character if character.isalnum() else _character_to_key(character), character)
        event.set_sender(pilot.app)
        pilot.app._driver.send_message(event)
        await pilot.pause()


def make(text: str = MIXED) -> ExplorerApp:
    return ExplorerApp(text, encoding="o200k_base", palette="truecolor", path="mixed.txt", source="file")


async def test_compare_and_escape_keep_mixed_line_endings_byte_for_byte():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await idle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.text == MIXED  # compared what the user has
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        assert app.text.encode() == MIXED.encode() and not app.modified
        assert "●" not in str(app.editor.border_title)  # not marked edited


@pytest.mark.parametrize("key", ["f3", "f4", "f5", "f6", "f7", "f8", "f12"])
async def test_every_view_round_trip_keeps_the_text(key):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await idle(pilot)
        assert app.screen is not app.screen_stack[0]
        await pilot.press("escape")
        await idle(pilot)
        while app.screen is not app.screen_stack[0]:  # a view whose first Escape leaves a field
            await pilot.press("escape")
            await idle(pilot)
        assert app.text.encode() == MIXED.encode() and not app.modified


async def test_an_edit_in_compare_comes_back_with_the_other_line_endings_kept():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await idle(pilot)
        await pilot.press("e", "ctrl+end")  # into the text, at its end
        await type_keys(pilot, "Z\u200d")
        await pilot.press("escape", "escape")  # out of the text, back to the explorer
        await settle(pilot)
        assert app.text == MIXED + "Z\u200d" and app.modified


async def test_typed_zero_width_and_format_characters_reach_the_input():
    app = ExplorerApp("", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, TYPED)
        await settle(pilot)
        assert app.text == TYPED and len(app.text) == 13
        assert app.doc.ids == app.tokenizer.encode(TYPED, disallowed_special=())
        # typed in the token view, they go to the input pane too
        await pilot.press("tab")
        assert app.focused is app.token_view
        await type_keys(pilot, "\u200d\u202e")
        await settle(pilot)
        assert app.text == TYPED + "\u200d\u202e"
        # keys that are not text still are not: Enter, Tab, Ctrl+letters
        app.editor.focus()
        await pilot.press("ctrl+e")
        await settle(pilot)
        assert app.text == TYPED + "\u200d\u202e"


async def test_typed_zero_width_joiner_reaches_the_chat_editor():
    app = ExplorerApp("Hello", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f12")
        await idle(pilot)
        screen = app.screen
        await pilot.press("down", "down", "enter")  # the assistant message, into the editor
        assert app.focused is screen.editor
        await pilot.press("ctrl+l")
        await type_keys(pilot, TYPED)
        await idle(pilot)
        assert screen.editor.real_text == TYPED
        assert screen.draft.messages[2]["content"] == TYPED
