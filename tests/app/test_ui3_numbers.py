"""A number is never cut into another number (issue 20, item 21): the shared helpers of
``tokscope.app.fit`` at 60, 80 and 120 cells, the chat's message list (``15,033`` showed as
``15,03``), and the tables that scroll sideways (compare's showed ``0.`` for ``0.12%``)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.widgets import DataTable

from helpers import idle, settle
from tokscope.app.app import ExplorerApp
from tokscope.app.fit import cut, first_fit
from tokscope.app.screens.compare import info_line
from tokscope.app.screens.insights import embedding_line
from tokscope.app.widgets.status import status_text

WIDTHS = [60, 80, 120]
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?%?")


def lines_of(widget) -> list[str]:
    """The text a line-API widget draws, line by line (what the user sees, cuts included)."""
    return ["".join(segment.text for segment in widget.render_line(y)) for y in range(widget.size.height)]


numbers = st.integers(0, 10**12).map(lambda n: f"{n:,}")
labels = st.text(st.characters(codec="utf-8", exclude_categories=("C", "Z", "M")), min_size=1, max_size=30)


@pytest.mark.parametrize("width", WIDTHS)
@settings(max_examples=60, deadline=None)
@given(label=labels, number=numbers, short=labels)
def test_a_label_gives_way_and_the_number_stays_whole(width, label, number, short):
    # a label and a number offered in whole forms, the label shortened (only a label is ever cut)
    forms = [f"{label} {number}", f"{cut(short, width // 4)} {number}", number]
    line = first_fit(forms, width)
    assert line in forms and line.endswith(number)
    assert cell_len(line) <= width or line == number
    assert cell_len(cut(label, width // 4)) <= width // 4


@pytest.mark.parametrize("width", WIDTHS)
def test_every_line_chooses_a_whole_form(width):
    # the embedding line, compare's top line and the status line at the widths the app has
    for room in range(8, width + 1):
        line = embedding_line(200_019, 2_627, 525.4, 1_051, room)
        assert set(NUMBER.findall(line)) <= {"200,019", "2,627", "525.4", "1,051", "16"}
        assert cell_len(line) <= room or line == "525.4 M params"
        info = info_line(1_000_000, "68.2%", room)
        assert set(NUMBER.findall(info)) <= {"68.2%", "1,000,000"} and cell_len(info) <= max(room, 11)
    figures = SimpleNamespace(encoding="o200k_base", tokens=15_033, chars=70_889, bytes=1_070_889, words=8_000,
                              chars_per_token=4.72, tokens_per_word=1.88)
    whole = {"15,033", "70,889", "1,070,889", "8,000", "4.72", "1.88", "200"}
    for room in range(10, width + 1):
        line = status_text(SimpleNamespace(figures=figures), "live", room)
        assert cell_len(line) <= room
        assert set(NUMBER.findall(line.replace("o200k_base", ""))) <= whole, (room, line)
    assert first_fit(["15,033 tokens", "15,033 tok"], 12) == "15,033 tok"
    assert cut("assistant", 6) == "assis…"


@pytest.mark.parametrize("size", [(80, 24), (60, 16)])
async def test_the_chat_list_shows_every_count_whole(size):
    text = " ".join(f"word{i}" for i in range(6000))
    app = ExplorerApp(text, encoding="o200k_base", palette="truecolor", source="file")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f12")
        await idle(pilot)
        await pilot.pause()
        screen = app.screen
        count = screen.result.count.messages[0].tokens
        assert count >= 10_000
        table = screen.query_one("#chat-messages", DataTable)
        drawn = "\n".join(lines_of(table))
        assert f"{count:,}" in drawn, drawn
        title = str(screen.editor.border_subtitle)
        assert f"{count:,}" in title


async def test_a_table_wider_than_its_view_never_draws_part_of_a_column():
    text = "Some text, with numbers 12345 and words, to compare under three encodings.\n" * 2000
    app = ExplorerApp(text, encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        table = app.screen.query_one("#cmp-stats", DataTable)
        for _ in range(600):  # every pane's figures in (the columns have their widths)
            await pilot.pause(0.2)
            if table.row_count and all(str(table.get_row_at(i)[1]) not in ("", "…") for i in range(table.row_count)):
                break
        await idle(pilot)
        await pilot.pause()
        # the last figures may still be widening their columns (the table lays its widths out when
        # idle): judge the table once two looks in a row draw the same and lay out the same widths
        last = None
        for _ in range(100):
            now = (lines_of(table), [c.get_render_width(table) for c in table.ordered_columns], table.max_scroll_x)
            if now == last:
                break
            last = now
            await pilot.pause(0.1)
        assert table.max_scroll_x > 0  # the table scrolls sideways at 80 columns
        rows = [[str(c) for c in table.ordered_columns[k].label.plain.split()] for k in range(len(table.columns))]
        header = {word for words in rows for word in words}
        cells = [{str(cell) for cell in table.get_row_at(i)} for i in range(table.row_count)]
        for x in range(0, int(table.max_scroll_x) + 1, 3):
            table.scroll_to(x=x, animate=False)
            await pilot.pause()
            await pilot.pause()
            drawn = lines_of(table)
            assert set(drawn[0].split()) <= header, (x, drawn[0])
            for i, line in enumerate(drawn[1:1 + table.row_count]):
                assert set(line.split()) <= {w for c in cells[i] for w in c.split()}, (x, line)


async def test_compares_chat_table_widens_for_a_long_figure():
    from tokscope.app.chat_model import ChatDraft

    app = ExplorerApp("Hello", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        chat = ChatDraft.from_text("tok " * 1_200_000)  # over a million tokens: 9 characters
        app.open_view("compare", chat=chat, chat_formats={})
        await settle(pilot)
        table = app.screen.query_one("#cmp-stats", DataTable)
        for _ in range(600):  # the panes count in workers
            await pilot.pause(0.2)
            first = [str(cell) for cell in table.get_row_at(0)] if table.row_count else ["", "", ""]
            if first[2] not in ("", "…"):
                break
        await pilot.pause()
        total = first[2]
        assert len(total.replace(",", "")) >= 7, first
        assert total in "\n".join(lines_of(table))



async def test_a_long_names_pane_title_keeps_its_count_whole(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel()
    tok.train_from_iterator(["hello world " * 20], trainers.BpeTrainer(
        vocab_size=270, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    folder = tmp_path / "a-very-long-model-folder-name-for-testing-titles"
    folder.mkdir()
    tok.save(str(folder / "tokenizer.json"))
    text = "Some text to count, with numbers 12345 and words.\n" * 3000
    app = ExplorerApp(text, encoding=str(folder), palette="truecolor")
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot, timeout=60)
        await pilot.press("f5")
        screen = app.screen
        for _ in range(600):
            await pilot.pause(0.2)
            if screen.result_slots and all(s.doc is not None for s in screen.slots):
                break
        await pilot.pause()
        box = screen.query_one(f"#box-{screen.slots[0].key}")
        title = str(box.border_title)
        count = f"{len(screen.slots[0].doc.ids):,}"
        assert count in title and cell_len(title) <= box.outer_size.width - 6, title
