"""Screens meet a broken tokenizer (issue 21, item 20): the error is shown, never a screen that
waits for ever."""

from __future__ import annotations

import json

from helpers import idle, settle

from tokscope.app.app import ExplorerApp
from tokscope.sources import registry


def word_level_without_unk(tmp_path) -> str:
    """A WordLevel tokenizer whose unknown token is missing from its vocabulary: it loads, and it
    fails on the first word it does not know."""
    path = tmp_path / "wl_unk_missing.json"
    path.write_text(json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1}, "unk_token": "[UNK]"},
    }))
    return str(path)


async def test_languages_names_a_tokenizer_that_fails_and_counts_the_others(tmp_path):
    from tokscope.app.screens.languages import LanguagesScreen

    app = ExplorerApp("a b", tokenizer=registry.load(word_level_without_unk(tmp_path)), palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.token_view.focus()
        await pilot.press("f6")
        screen = app.screen
        assert isinstance(screen, LanguagesScreen)
        for _ in range(100):
            await idle(pilot)
            if screen.table_data is not None:
                break
            await pilot.pause(0.1)
        note = str(screen.query_one("#lang-note").render())
        assert "counting" not in note
        assert "wl_unk_missing" in note and "cannot count" in note and "not in the WordLevel vocabulary" in note
        assert screen.table_data is not None and len(screen.table_data.encodings) == 2  # the defaults still count
        assert [name for name, _ in screen.failed] == [app.tokenizer.name]


# ----- item 11: keys reach the widget that had the focus after the terminal was too small --------


async def test_typing_after_a_resize_below_the_minimum_and_back_reaches_the_input():
    app = ExplorerApp("hello", tokenizer=registry.load("o200k_base"), palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        editor = app.query_one("#input")
        editor.focus()
        await idle(pilot)
        for small in [(10, 5), (59, 24), (80, 15)]:
            await pilot.resize_terminal(*small)
            await idle(pilot)
            await pilot.resize_terminal(80, 24)
            await idle(pilot)
            assert app.focused is editor, small
        await pilot.press("end", "x", "y")
        await idle(pilot)
        assert editor.text.endswith("xy")
