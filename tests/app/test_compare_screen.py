"""The comparison and languages screens, driven with Pilot; snapshots at 80x24 (stacked) and 160x40."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable, Input

from tokscope.app.app import ExplorerApp
from tokscope.app.screens.compare import CompareScreen
from tokscope.app.screens.languages import LanguagesScreen
from helpers import settle
from tokscope.app.widgets.compare_view import ComparePane
from tokscope.core.insights.compare import format_money

TEXT = (
    "Tokens 👩\u200d👩\u200d👧 and 🇫🇷, 日本語, cafe\u0301.\n"
    "Second line with more words, numbers 1234567 and   spaces.\n"
) * 2
LONG = "".join(f"line {i}: the quick brown fox 😀 jumps over 日本語 {i * 37}\n" for i in range(200))


def make(text: str = TEXT) -> ExplorerApp:
    return ExplorerApp(text, encoding="o200k_base", palette="truecolor")


async def wait_compared(pilot, screen: CompareScreen, timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.02)
        done = all(s.gen == screen.gen for s in screen.slots)
        if done and (screen.result is not None or all(s.error for s in screen.slots)):
            await pilot.pause()
            return
    raise AssertionError("comparison did not finish")


async def open_compare(pilot, encodings=None) -> CompareScreen:
    await settle(pilot)
    if encodings is None:
        await pilot.press("tab", "f5")  # the view key works with the focus anywhere
    else:
        pilot.app.push_screen(CompareScreen(encodings))
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    await wait_compared(pilot, screen)
    return screen


def plain_boundaries(tok, text):
    pos, out = 0, set()
    for i in tok.encode(text, disallowed_special=())[:-1]:
        pos += len(tok.decode_bytes([i]))
        out.add(pos)
    return out


def byte_span(tok, text, index):
    ids = tok.encode(text, disallowed_special=())
    start = sum(len(tok.decode_bytes([i])) for i in ids[:index])
    return start, start + len(tok.decode_bytes([ids[index]]))


async def test_feature_key_opens_three_panes_with_counts(load):
    app = make()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_compare(pilot)
        names = [s.tokenizer.name for s in screen.slots]
        assert names == ["o200k_base", "gpt2", "cl100k_base"]  # the explorer's encoding first
        assert screen.side_by_side
        table = screen.query_one("#cmp-stats", DataTable)
        assert table.row_count == 3
        for row, name in enumerate(names):
            cells = table.get_row_at(row)
            assert str(cells[0]) == name and cells[1] == f"{len(load(name).encode(TEXT)):,}"
        # marks: pane k underlines exactly its boundaries the first one lacks
        first = plain_boundaries(load(names[0]), TEXT)
        for slot in screen.slots:
            pane = screen.query_one(f"#view-{slot.key}", ComparePane)
            assert set(pane.marked) == plain_boundaries(load(slot.tokenizer.name), TEXT) - first
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


async def test_stacked_at_80_and_layout_toggle():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_compare(pilot, ["gpt2", "o200k_base"])
        panes = screen.query_one("#cmp-panes")
        assert not screen.side_by_side and not panes.has_class("-side")
        boxes = list(screen.query(".cmp-pane"))
        assert boxes[0].region.y < boxes[1].region.y  # stacked
        await pilot.press("l")
        await wait_compared(pilot, screen)
        assert panes.has_class("-side")
        boxes = list(screen.query(".cmp-pane"))
        assert boxes[0].region.y == boxes[1].region.y and boxes[0].region.x < boxes[1].region.x


async def test_one_failing_encoding_others_still_work(load):
    app = make()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_compare(pilot, ["gpt2", "no-such-encoding", "cl100k_base"])
        bad = screen.slots[1]
        assert bad.error and "no-such-encoding" in bad.error
        box = screen.query_one(f"#box-{bad.key}")
        assert box.has_class("-failed") and "failed" in str(box.border_title)
        assert "no-such-encoding" in str(box.query_one(".cmp-error").render())
        good = [s for s in screen.slots if s is not bad]
        assert [s.seg.count for s in good] == [len(load(s.name).encode(TEXT)) for s in good]
        assert [s.name for s in screen.result.stats] == ["gpt2", "cl100k_base"]
        table = screen.query_one("#cmp-stats", DataTable)
        assert [str(c) for c in table.get_row_at(1)[:2]] == ["no-such-encoding", "failed"]


async def test_picking_a_piece_highlights_overlaps(load):
    app = make()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_compare(pilot, ["gpt2", "cl100k_base", "o200k_base"])
        first = screen.query_one(f"#view-{screen.slots[0].key}", ComparePane)
        first.focus()
        for step in range(1, 6):  # walk over "Tokens", " \xf0.." pieces of the emoji
            await pilot.press("right")
            await pilot.pause()
            index = first.selected
            assert index == step - 1
            start, end = byte_span(load("gpt2"), TEXT, index)
            for slot in screen.slots[1:]:
                tok = load(slot.name)
                n = len(tok.encode(TEXT))
                expect = [j for j in range(n) if byte_span(tok, TEXT, j)[0] < end and start < byte_span(tok, TEXT, j)[1]]
                pane = screen.query_one(f"#view-{slot.key}", ComparePane)
                assert list(pane.overlap) == expect
        assert "overlaps" in str(screen.query_one("#cmp-note").render())
        # the explorer's own selection did not move
        assert app.selected_index in (None, 0)


async def test_scrolling_is_locked_together():
    app = make(LONG)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_compare(pilot, ["gpt2", "o200k_base"])
        panes = [screen.query_one(f"#view-{s.key}", ComparePane) for s in screen.slots]
        panes[0].focus()
        await pilot.press("pagedown", "pagedown", "pagedown")
        await pilot.pause(0.1)
        top = panes[0].top_offset()
        assert top > 0
        line = LONG.count("\n", 0, top)
        assert LONG.count("\n", 0, panes[1].top_offset()) == line  # the same line of the text is on top


async def test_add_remove_and_limits(notes):
    app = make()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_compare(pilot, ["gpt2", "o200k_base"])
        screen.add_encoding("o200k")  # an alias of one already shown
        assert len(screen.slots) == 2 and any("already shown" in m for m, _ in notes)
        screen.add_encoding("cl100k_base")
        screen.add_encoding("p50k_base")
        await pilot.pause()
        await wait_compared(pilot, screen)
        assert [s.name for s in screen.slots] == ["gpt2", "o200k_base", "cl100k_base", "p50k_base"]
        await pilot.press("a")  # a fifth does not fit: the picker asks which to replace
        await pilot.pause()
        assert "Replace pane" in str(app.screen.query_one("#picker-title").render())
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and len(screen.query(ComparePane)) == 4
        screen.query_one(f"#view-{screen.slots[1].key}", ComparePane).focus()
        await pilot.press("x")
        await wait_compared(pilot, screen)
        assert [s.name for s in screen.slots] == ["gpt2", "cl100k_base", "p50k_base"]
        assert len(screen.query(ComparePane)) == 3
        assert screen.query_one("#cmp-stats", DataTable).row_count == 3


async def test_prices_drive_the_cost_columns(load):
    app = make()
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_compare(pilot, ["gpt2", "o200k_base"])
        screen.query_one("#cmp-price-in", Input).value = "3"
        screen.query_one("#cmp-price-out", Input).value = "15"
        screen.query_one("#cmp-copies", Input).value = "1000"
        await pilot.pause()
        table = screen.query_one("#cmp-stats", DataTable)
        for row, name in enumerate(["gpt2", "o200k_base"]):
            n = len(load(name).encode(TEXT))
            cells = table.get_row_at(row)
            assert cells[2:6] == [format_money(n * 3 / 1e6), format_money(n * 15 / 1e6),
                                 format_money(n * 1000 * 3 / 1e6), format_money(n * 1000 * 15 / 1e6)]
        price = screen.query_one("#cmp-price-in", Input)
        price.value = "-2"
        await pilot.pause()
        assert price.has_class("-invalid") and table.get_row_at(0)[2] == "-"


async def test_editing_drives_all_panes_and_returns_to_the_explorer(load):
    app = make("short text")
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await open_compare(pilot, ["gpt2", "o200k_base"])
        await pilot.press("e")
        await pilot.press("end")
        screen.query_one("#cmp-editor").insert("😀")  # pilot has no key name for an emoji
        await pilot.press(*" more")
        await pilot.pause(0.3)
        await wait_compared(pilot, screen)
        new = screen.text
        assert "😀 more" in new
        for slot in screen.slots:
            assert list(slot.seg.ids) == load(slot.name).encode(new)
        await pilot.press("escape")  # leave the editor
        await pilot.press("escape")  # leave the screen
        await settle(pilot)
        assert app.text == new


async def test_languages_screen(load):
    from tokscope.sample_texts import language_text

    app = make()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("tab", "f6")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LanguagesScreen)
        for _ in range(300):
            await pilot.pause(0.02)
            if screen.table_data is not None:
                break
        tbl = screen.table_data
        assert tbl is not None and tbl.encodings == ("gpt2", "cl100k_base", "o200k_base")
        table = screen.query_one("#lang-table", DataTable)
        assert table.row_count == len(tbl.rows) >= 20
        row = table.get_row(tbl.rows[3].code)
        assert str(row[1]) == f"{len(load('gpt2').encode(language_text(tbl.rows[3].code))):,}"
        chart = str(screen.query_one("#lang-chart").render())
        assert "█" in chart and "English" in chart
        await pilot.press("b")
        assert "#" in str(screen.query_one("#lang-chart").render())


@pytest.mark.parametrize("size", [(80, 24), (160, 40)])
def test_snapshot(snap_compare, size):
    async def run_before(pilot):
        screen = await open_compare(pilot, ["gpt2", "cl100k_base", "o200k_base"])
        pane = screen.query_one(f"#view-{screen.slots[0].key}", ComparePane)
        pane.focus()
        await pilot.press("right", "right", "right")
        await pilot.pause()

    assert snap_compare(make(), terminal_size=size, run_before=run_before)


FOUR = ["o200k_base", "gpt2", "cl100k_base", "llama3"]


def pane_rows(screen: CompareScreen) -> list[int]:
    """The rows of text each pane shows (its content height on screen)."""
    return [screen.query_one(f"#view-{s.key}", ComparePane).content_region.height for s in screen.slots]


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_four_encodings_fit_with_the_text_open(size):
    app = make()
    async with app.run_test(size=size) as pilot:
        screen = await open_compare(pilot, FOUR)
        assert not screen.side_by_side
        assert all(rows >= 2 for rows in pane_rows(screen)), pane_rows(screen)
        # stacked on a short terminal, each title keeps the name and the count
        for k, slot in enumerate(screen.slots, 1):
            title = str(screen.query_one(f"#box-{slot.key}").border_title)
            assert title == f"{k}. {slot.tokenizer.name} · {len(slot.doc.ids):,} tokens"
        await pilot.press("e")
        await pilot.pause()
        assert screen.has_class("-editing")
        assert all(rows >= 1 for rows in pane_rows(screen)), pane_rows(screen)
        assert screen.query_one("#cmp-editor").content_region.height >= 2
        # the cost columns are in view at this width, and scrolling right keeps the names
        table = screen.query_one("#cmp-stats", DataTable)
        labels = [str(c.label) for c in table.ordered_columns]
        assert labels[:4] == ["encoding", "tokens", "in $", "out $"] and table.fixed_columns == 1
        assert sum(c.get_render_width(table) for c in table.ordered_columns[:4]) <= size[0]


async def test_side_by_side_titles_keep_the_names_and_the_counts_go_under():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_compare(pilot, FOUR)
        await pilot.press("l")
        await wait_compared(pilot, screen)
        assert screen.side_by_side
        for k, slot in enumerate(screen.slots, 1):
            box = screen.query_one(f"#box-{slot.key}")
            assert str(box.border_title) == f"{k}. {slot.tokenizer.name}"
            assert str(box.border_subtitle) == f"{len(slot.doc.ids):,} tokens"
            assert len(str(box.border_title)) + 4 <= box.size.width  # drawn whole


async def test_a_with_four_encodings_opens_the_picker_and_typed_letters_never_edit():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_compare(pilot, FOUR)
        focused = screen.query_one(f"#view-{screen.slots[1].key}", ComparePane)
        focused.focus()
        await pilot.press("a", *"encoding", "escape")  # a word typed after: into the picker's filter
        await pilot.pause()
        assert app.screen is screen and not screen.has_class("-editing")
        assert screen.text == app.text == TEXT
        # a pick replaces the focused pane, in its place, and the new pane has the focus
        await pilot.press("a", *"p50k_base", "enter")
        await wait_compared(pilot, screen)
        assert [s.name for s in screen.slots] == ["o200k_base", "p50k_base", "cl100k_base", "llama3"]
        boxes = [b.id for b in screen.query_one("#cmp-panes").children]
        assert boxes == [f"box-{s.key}" for s in screen.slots]
        assert app.focused is screen.query_one(f"#view-{screen.slots[1].key}", ComparePane)
        await pilot.press(*"el")  # e opens the text; l is typed into it, where the user looks
        await pilot.pause()
        assert screen.has_class("-editing")


async def test_reopening_remembers_encodings_prices_and_layout():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_compare(pilot)
        screen.add_encoding("llama3")
        await wait_compared(pilot, screen)
        screen.query_one("#cmp-price-in", Input).value = "3"
        screen.query_one("#cmp-copies", Input).value = "1,000"
        screen._focus_first()
        await pilot.press("l", "escape")
        await settle(pilot)
        await pilot.press("f5")
        await pilot.pause()
        again = app.screen
        assert isinstance(again, CompareScreen) and again is not screen
        await wait_compared(pilot, again)
        assert [s.name for s in again.slots] == ["o200k_base", "gpt2", "cl100k_base", "llama3"]
        assert again.query_one("#cmp-price-in", Input).value == "3"
        assert again.query_one("#cmp-copies", Input).value == "1,000"
        assert again.side_by_side


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_the_agreement_figure_is_never_cut_on_a_long_text(size):
    text = "".join(f"def f{i}(x):\n    return x * {i} + len('日本語 {i}')\n" for i in range(2500))  # ~100 KB
    app = make(text)
    async with app.run_test(size=size) as pilot:
        screen = await open_compare(pilot, ["o200k_base", "gpt2"])
        label = screen.query_one("#cmp-info")
        shown = str(label.render())
        figure = f"{screen.result.agreed_share * 100:.1f}%"
        assert figure in shown and len(shown.rstrip()) <= label.size.width
        if size[0] >= 80:
            assert f"{len(text):,} ch" in shown
