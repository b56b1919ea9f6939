"""Issue 21, item 12: one letter with a huge run of combining marks. What one line of the input
pane and one row of the token view draw is bounded (marks beyond a few are not sent; a row that
cannot hold its tokens ends in a count), the text itself is never changed, and an idle explorer
computes nothing new for that line (the cursor's blink repaints what was already drawn)."""

from __future__ import annotations

import asyncio

import pytest

from tokscope.app.app import ExplorerApp
from tokscope.app.widgets import editor as editor_module
from tokscope.app.widgets import token_view as token_view_module
from tokscope.app.widgets.token_view import TokenView
from tokscope.sources import registry

#: enough marks that drawing them all would send megabytes per repaint; few enough to tokenize fast
MARKS = 100_000
TEXT = "e" + "\u0301" * MARKS + "\nnext line"
#: what one line or row may send at 80 columns (a few characters per cell, with room to spare)
BOUND = 1000


async def settled(pilot, app, timeout: float = 120.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not (app._doc is not None and app._doc_current and app._doc.complete):
        if loop.time() > end:
            raise AssertionError("the text was not tokenized")
        await pilot.pause(0.1)
    await pilot.pause(0.3)


def sent(strip) -> int:
    return sum(len(seg.text) for seg in strip)


def wordlevel(tmp_path):
    """A tokenizer whose unknown token covers the whole word: one piece of 100,001 characters."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokscope.sources import model_files

    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0, "next": 1, "line": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    path = tmp_path / "wordlevel.json"
    path.write_text(tok.to_str(), encoding="utf-8")
    return model_files.load_path(path)


@pytest.mark.parametrize("kind", ["o200k_base", "wordlevel"])
async def test_a_letter_with_many_marks_draws_a_bounded_line(tmp_path, kind):
    tokenizer = registry.load("o200k_base") if kind == "o200k_base" else wordlevel(tmp_path)
    app = ExplorerApp(TEXT, tokenizer=tokenizer, palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)
        editor = app.editor
        line = editor.render_line(0)
        assert sent(line) <= BOUND and line.cell_length == editor.render_line(1).cell_length
        assert "e" + "\u0301" * editor_module.MARKS_SHOWN in "".join(seg.text for seg in line)
        view = app.query_one(TokenView)
        rows = [view.render_line(y) for y in range(view.size.height)]
        assert max(map(sent, rows)) <= BOUND
        first = "".join(seg.text for seg in rows[0])
        assert "+" in first  # the marks not drawn are counted where the row shows them
        assert "next line" in "".join(seg.text for seg in rows[1])
        assert all(row.cell_length <= view.size.width for row in rows)
        assert editor.real_text == TEXT and app._doc.text == TEXT  # the text itself is unchanged


async def test_idle_computes_nothing_new_for_the_line(monkeypatch):
    app = ExplorerApp(TEXT, tokenizer=registry.load("o200k_base"), palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)
        app.editor.focus()
        await pilot.pause(1.5)  # both states of the cursor's blink drawn once
        calls = {"clean": 0, "row": 0}
        clean, row = editor_module.Editor._clean, token_view_module.TokenView._render_text_row

        def counting_clean(self, strip):
            calls["clean"] += 1
            return clean(self, strip)

        def counting_row(self, *args):
            calls["row"] += 1
            return row(self, *args)

        monkeypatch.setattr(editor_module.Editor, "_clean", counting_clean)
        monkeypatch.setattr(token_view_module.TokenView, "_render_text_row", counting_row)
        await pilot.pause(2.0)  # four blinks
        assert calls == {"clean": 0, "row": 0}
        await pilot.press("end")  # a real change still paints
        await pilot.pause(0.3)
        assert calls["clean"] > 0
