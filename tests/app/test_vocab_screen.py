"""The vocabulary browser: searching by substring, regex, hex and id, sorting, errors that keep the
typed text, opening a result in the merge tree, and snapshots."""

from __future__ import annotations


import pytest
from textual.widgets import DataTable, Input, Static

from tokscope.app.app import ExplorerApp
from helpers import idle
from tokscope.app.screens.vocab import SHOWN, VocabScreen
from tokscope.app.screens.why import WhyScreen
from tokscope.core.explain.vocab_search import search_vocab
from tokscope.sources.registry import load

TEXT = "Hello tokenizers"


def make(encoding: str = "gpt2") -> ExplorerApp:
    return ExplorerApp(TEXT, tokenizer=load(encoding), palette="truecolor")




async def open_vocab(pilot) -> VocabScreen:
    await idle(pilot)
    pilot.app.token_view.focus()
    await pilot.press("f4")
    await idle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, VocabScreen)
    return screen


def table_ids(screen: VocabScreen) -> list[int]:
    table = screen.query_one(DataTable)
    return [int(table.get_row_at(i)[0]) for i in range(table.row_count)]


def status(screen: VocabScreen) -> str:
    return str(screen.query_one("#voc-status", Static).render())


async def type_query(pilot, screen: VocabScreen, text: str, *, keys: bool = False) -> None:
    """Put ``text`` in the search box (as keystrokes with ``keys``) and wait for the results."""
    box = screen.query_one("#voc-query", Input)
    box.focus()
    if keys:
        box.value = ""
        await pilot.press(*text)
    else:
        box.value = text
    await pilot.pause(0.2)  # the debounce
    await idle(pilot)


async def test_f_opens_the_whole_vocabulary_then_substring_search():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_vocab(pilot)
        assert screen.result is not None and screen.result.total == tok.n_vocab
        assert table_ids(screen) == list(range(SHOWN))
        assert "showing the first" in status(screen)
        await type_query(pilot, screen, "ing", keys=True)
        expected = search_vocab(tok, substring="ing", limit=None)
        assert screen.result.total == expected.total
        assert table_ids(screen) == [t.id for t in expected.tokens][:SHOWN]
        assert f"{expected.total:,} matches" in status(screen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, VocabScreen)


async def test_regex_mode_errors_keep_the_text_and_sorting():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_vocab(pilot)
        await pilot.press("ctrl+o")  # substring -> regex
        await idle(pilot)
        assert screen.mode == "regex"
        await type_query(pilot, screen, "^ tok")
        expected = search_vocab(tok, pattern="^ tok", limit=None)
        assert table_ids(screen) == [t.id for t in expected.tokens]
        await type_query(pilot, screen, "a(")
        assert screen.error is not None and "invalid regular expression" in status(screen)
        assert screen.query_one("#voc-status").has_class("-error")
        assert screen.query_one("#voc-query", Input).value == "a("  # nothing typed is lost
        await type_query(pilot, screen, "ing$")
        assert screen.error is None and not screen.query_one("#voc-status").has_class("-error")
        screen.query_one(DataTable).focus()
        await pilot.press("ctrl+l")  # longest first
        await idle(pilot)
        assert screen.sort == "length"
        lengths = [len(tok.token_bytes(i)) for i in table_ids(screen)]
        assert lengths == sorted(lengths, reverse=True)
        assert "longest first" in status(screen)


async def test_hex_and_id_modes():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_vocab(pilot)
        await pilot.press("ctrl+o", "ctrl+o")  # hex
        await idle(pilot)
        assert screen.mode == "hex"
        await type_query(pilot, screen, "68656c6c")
        assert table_ids(screen) and all(b"hell" in tok.token_bytes(i) for i in table_ids(screen))
        await type_query(pilot, screen, "6g")
        assert "invalid hex" in status(screen)
        await pilot.press("ctrl+o")  # id
        await idle(pilot)
        await type_query(pilot, screen, "31373")
        assert table_ids(screen) == [31373]
        await type_query(pilot, screen, "999999")
        assert "unknown token id" in status(screen)
        assert table_ids(screen) == []  # the last search's row no longer stands for the query
        await type_query(pilot, screen, "31373")
        assert table_ids(screen) == [31373]
        await type_query(pilot, screen, "12x")
        assert "not a token id" in status(screen) and table_ids(screen) == []


async def test_enter_opens_the_merge_tree_and_escape_returns():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_vocab(pilot)
        await type_query(pilot, screen, "hello")
        first = table_ids(screen)[0]
        await pilot.press("enter")  # from the box: to the table
        assert screen.focused is screen.query_one(DataTable)
        await pilot.press("enter")
        await idle(pilot)
        why = app.screen
        assert isinstance(why, WhyScreen) and why.token_id == first
        assert b"hello" in tok.token_bytes(why.token_id)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and table_ids(screen)[0] == first  # results are still there


async def test_from_the_why_screen_and_back():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        app.token_view.focus()
        await pilot.press("f3")
        await idle(pilot)
        why = app.screen
        assert isinstance(why, WhyScreen)
        before = why.token_id
        await pilot.press("f4")
        await idle(pilot)
        screen = app.screen
        assert isinstance(screen, VocabScreen)
        await pilot.press("ctrl+o", "ctrl+o", "ctrl+o")  # id mode
        await type_query(pilot, screen, "995")
        screen.query_one(DataTable).focus()
        await pilot.press("enter")
        await idle(pilot)
        assert app.screen is why and why.token_id == 995 != before
        assert why.history[-1] == before
        assert tok.token_bytes(995) == b" world"


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
def test_snapshot(snap_compare, size):
    async def run_before(pilot):
        screen = await open_vocab(pilot)
        await pilot.press("ctrl+o")
        await type_query(pilot, screen, "^ [A-Z][a-z]+ing$")
        screen.query_one(DataTable).focus()
        await pilot.press("down", "down")
        await pilot.pause()

    assert snap_compare(make(), terminal_size=size, run_before=run_before)
