"""Smaller things a new user meets (issue 20, item 22): why the chat opened on the example, one
toast of each, dialog buttons that fit, the chat's warnings, and every footer whole (item 19)."""

from __future__ import annotations

import json

import pytest
from textual.app import App
from textual.widgets import Button, Static
from textual.widgets._footer import FooterKey

from helpers import idle, settle
from tokscope.app.app import ExplorerApp
from tokscope.app.screens.chat import MAX_START_TEXT, ChatScreen
from tokscope.app.screens.dialogs import ChoiceDialog

SIZES = [(80, 24), (60, 16)]


@pytest.fixture
def shown(monkeypatch):
    """Every toast Textual is asked to show: list of messages."""
    seen: list[str] = []
    original = App.notify

    def notify(self, message, *args, **kwargs):
        seen.append(str(message))
        return original(self, message, *args, **kwargs)

    monkeypatch.setattr(App, "notify", notify)
    return seen


async def test_the_chat_says_why_it_opened_on_the_example(shown):
    text = "x " * (MAX_START_TEXT // 2 + 1)
    app = ExplorerApp(text, encoding="o200k_base", palette="truecolor", source="file")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f12")
        await idle(pilot)
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        notes = str(screen.query_one("#chat-notes-text", Static).render())
        for said in (notes, shown[-1]):
            assert f"{len(text):,} characters" in said and f"{MAX_START_TEXT:,}-character limit" in said
            assert "example conversation" in said


async def test_a_toast_still_up_is_not_shown_again(shown):
    app = ExplorerApp("Hello world", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await idle(pilot)
        while len(app.screen.slots) > 1:
            await pilot.press("x")
            await pilot.pause()
        await pilot.press("x", "x", "x")
        await pilot.pause()
        assert shown.count("Keep at least one encoding.") == 1


CHOICES = [
    [("ids", "Ids"), ("text", "Rendered text"), ("json", "JSON"), ("cancel", "Cancel")],  # the chat's F9
    [("ids", "Ids"), ("pieces", "Pieces"), ("bytes", "Token bytes"), ("cancel", "Cancel")],  # the explorer's F9
    [("restore", "Restore"), ("discard", "Discard them"), ("later", "Keep for later")],
    [("overwrite", "Overwrite"), ("save_as", "Save as…"), ("cancel", "Cancel")],
]


@pytest.mark.parametrize("size", SIZES)
async def test_every_dialog_button_is_whole(size):
    app = ExplorerApp("Hello", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for choices in CHOICES:
            app.push_screen(ChoiceDialog("Copy", "Copy what?", choices))
            await pilot.pause()
            await pilot.pause()
            row = app.screen.query_one("#dialog-buttons")
            buttons = list(app.screen.query(Button))
            assert [str(b.label) for b in buttons] == [label for _, label in choices]
            for button in buttons:
                assert button.region.right <= row.region.right and button.region.right <= size[0]
                assert button.region.width >= len(str(button.label)) + 2, (size, str(button.label))
            app.pop_screen()
            await pilot.pause()
        await pilot.press("f9")  # the real one
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        assert all(b.region.right <= app.screen.query_one("#dialog-buttons").region.right
                   for b in app.screen.query(Button))


async def test_the_chat_warnings_all_show_on_a_tall_terminal_in_the_screens_words(tmp_path):
    path = tmp_path / "warn.json"
    path.write_text(json.dumps({"messages": [
        {"role": "system", "content": "be brief <|endoftext|>"}, {"role": "user", "content": "hi <|im_start|>"},
        {"role": "weird", "content": "x"}, {"role": "assistant", "content": "ok <|im_end|>"}]}))
    app = ExplorerApp("Hello", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(100, 70)) as pilot:
        await settle(pilot)
        await pilot.press("f12")
        await idle(pilot)
        screen = app.screen
        screen._read(str(path))
        await idle(pilot)
        await pilot.pause()
        count = screen.result.count
        assert len(count.warnings) >= 4
        notes = screen.query_one("#chat-notes")
        text = str(screen.query_one("#chat-notes-text", Static).render())
        assert "ChatMLFormat(" not in text and "chatml-ids" in text
        assert notes.virtual_size.height <= notes.size.height  # nothing to scroll to: every warning shows


VIEWS = [None, "f3", "f4", "f5", "f6", "f7", "f8", "f12"]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("key", VIEWS)
async def test_every_screens_footer_is_whole(key, size):
    if key == "f5" and size[1] < 20:
        size = (size[0], 20)  # compare's smallest size (below it the screen says so)
    app = ExplorerApp("Hello world, a text to look at.\n", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        if key:
            await pilot.press(key)
            await idle(pilot)
        await pilot.pause()
        keys = [k for k in app.screen.query(FooterKey) if k.display]
        assert len(keys) >= 3
        right = 0
        for k in keys:
            drawn = "".join(s.text for s in k.render_line(0)).strip()
            # the key and its whole label are drawn, inside the screen, after the key before it
            assert drawn.replace(" ", "") == (k.key_display + k.description).replace(" ", ""), drawn
            assert k.region.x >= right and k.region.right <= size[0]
            right = k.region.right
        shown = {k.key_display for k in keys}
        assert ("esc" in shown) if key else {"^q", "f3", "f5", "f12"} <= shown


async def test_keys_typed_fast_answer_a_dialog_once():
    # "llama3" typed while a dialog was up: its first letter answered it, the second answered again
    # and closed the explorer's own screen (ScreenStackError, a traceback)
    from textual import events

    app = ExplorerApp("Hello", encoding="o200k_base", palette="truecolor")
    answers: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(ChoiceDialog("Recovered edits", "Restore them?",
                                     [("restore", "Restore"), ("discard", "Discard them"), ("later", "Keep for later")]),
                        answers.append)
        await pilot.pause()
        for ch in "llama3":
            app.post_message(events.Key(ch, ch))
        await pilot.pause(0.2)
        assert answers == ["later"]
        assert len(app.screen_stack) == 1 and app.is_running


@pytest.mark.parametrize("size", SIZES)
async def test_the_training_forms_name_field_keeps_room(size):
    from textual.widgets import Input

    app = ExplorerApp("Hello", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await pilot.pause()
        name = app.screen.query_one("#tr-name", Input)
        assert name.region.width >= 12, name.region
        buttons = list(app.screen.query(Button))
        assert all(b.region.right <= size[0] for b in buttons if b.display)


async def test_compare_from_training_leaves_the_explorers_encoding(tmp_path, monkeypatch):
    from textual.widgets import Input

    from tokscope.app.screens.compare import CompareScreen

    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path))
    app = ExplorerApp("the cat sat on the mat, the cat ate the rat. " * 40, encoding="o200k_base",
                      palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await pilot.pause()
        app.screen.query_one("#tr-size", Input).value = "300"
        app.screen.query_one("#tr-name", Input).value = "mine"
        await pilot.press("ctrl+r")
        await idle(pilot)
        await pilot.press("f5")
        await idle(pilot)
        assert isinstance(app.screen, CompareScreen) and app.screen.slots[0].name == "mine"
        assert app.tokenizer.name == "o200k_base"  # the explorer's own encoding is untouched
