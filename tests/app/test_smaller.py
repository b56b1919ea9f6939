"""Smaller things a new user meets (issue 20, item 22): the text's ends, the quit question's
words, the palette's Quit."""

from __future__ import annotations

from helpers import settle
from tokscope.app.app import ExplorerApp
from tokscope.app.screens.dialogs import ChoiceDialog


async def test_ctrl_home_and_ctrl_end_go_to_the_texts_ends():
    app = ExplorerApp("first line\nsecond line\nthird", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+end")
        assert app.editor.cursor_location == (2, 5)
        await pilot.press("ctrl+home")
        assert app.editor.cursor_location == (0, 0)
        await pilot.press("ctrl+shift+end")
        assert app.editor.selected_text == "first line\nsecond line\nthird"


async def test_quitting_a_changed_files_text_does_not_call_it_standard_input():
    # a file read with replacements (undecodable bytes) has a text but no file to save back to
    app = ExplorerApp("caf\ufffd", encoding="o200k_base", palette="truecolor", source="file")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("end", "x", "ctrl+q")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        assert "standard input" not in dialog.message and "file's text" in dialog.message


async def test_the_palettes_quit_says_it_asks_first():
    app = ExplorerApp("x", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert "asks first" in commands["Quit"] and "as soon as possible" not in commands["Quit"]
        assert "token colours" in commands["Theme"]
