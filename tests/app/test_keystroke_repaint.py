"""A keystroke repaints only what it changed (issue 22 item 7).

Typing in the middle of a 10 KB text draws again the token view's rows the edit reached (and the
rows after it only when their pieces' colours move), the status line, and the inspector's rows
whose text changed; never the whole token view or the inspector's blank rows. What is on screen
after such a partial repaint is what a full repaint draws.
"""

from __future__ import annotations

import pytest

from helpers import settle
from tokscope.app.app import ExplorerApp
from tokscope.app.widgets.inspector import Inspector
from tokscope.app.widgets.status import StatusLine
from tokscope.app.widgets.token_view import TokenView

#: 300 short lines (about 10 KB): each line is one row of the token view
TEXT = "".join(f"hello world, this is line {k} of the text\n" for k in range(300))
LINE = 150


@pytest.fixture
def painted(monkeypatch):
    """What each widget draws: the token view's rows (text rows, not screen rows), the inspector's
    and the status line's screen rows."""
    seen: dict[str, list[int]] = {"tokens": [], "inspector": [], "status": []}
    originals = {cls: cls.render_line for cls in (TokenView, Inspector, StatusLine)}

    def spy(cls, name):
        def render_line(self, y):
            if self.id == name:
                seen[name].append(int(self.scroll_y) + y if cls is TokenView else y)
            return originals[cls](self, y)
        return render_line

    monkeypatch.setattr(TokenView, "render_line", spy(TokenView, "tokens"))
    monkeypatch.setattr(Inspector, "render_line", spy(Inspector, "inspector"))
    monkeypatch.setattr(StatusLine, "render_line", spy(StatusLine, "status"))
    return seen


async def type_at(pilot, painted, column: int, key: str) -> tuple[int, int]:
    """Put the cursor on line :data:`LINE` at ``column``, let every pane settle, then press ``key``
    with the spies cleared; returns the token counts before and after."""
    app = pilot.app
    app.editor.move_cursor((LINE, column))
    await settle(pilot)
    await pilot.pause()
    before = len(app.doc)
    for rows in painted.values():
        rows.clear()
    await pilot.press(key)
    await settle(pilot)
    return before, len(app.doc)


async def whole_repaint_matches(pilot) -> None:
    """The screen as the partial repaints left it is the screen a full repaint draws."""
    app = pilot.app
    shown = app.export_screenshot()
    app.token_view.refresh_all()
    app.query_one(Inspector).refresh()
    app.query_one(StatusLine).refresh()
    await pilot.pause()
    assert app.export_screenshot() == shown


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_a_keystroke_that_keeps_the_token_count_repaints_its_row(painted, size):
    app = ExplorerApp(TEXT, encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        view = app.token_view
        # " world" -> " worlds": one token for another, every later piece keeps its number
        before, after = await type_at(pilot, painted, len("hello world"), "s")
        assert app.text.splitlines()[LINE].startswith("hello worlds,")
        assert before == after
        row = view.rows.index(app.text.index(f"hello worlds, this is line {LINE} "))
        height = view.scrollable_content_region.height
        assert row in painted["tokens"]
        assert set(painted["tokens"]) == {row}, f"repainted rows {sorted(set(painted['tokens']))}, not just {row}"
        assert len(painted["tokens"]) < height
        assert painted["status"] == [0]
        inspector = app.query_one(Inspector)
        text_rows = str(inspector.render()).count("\n") + 1
        assert painted["inspector"] and max(painted["inspector"]) < text_rows + 2  # never its blank rows
        await whole_repaint_matches(pilot)


async def test_a_keystroke_that_shifts_the_colours_repaints_from_its_row_down(painted):
    app = ExplorerApp(TEXT, encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.token_view
        # "hello" -> "hello!": one more token, so the pieces after it change colour
        before, after = await type_at(pilot, painted, len("hello"), "!")
        assert (after - before) % 6
        row = view.rows.index(app.text.index(f"hello! world, this is line {LINE} "))
        top = int(view.scroll_y)
        bottom = top + view.scrollable_content_region.height
        rows = set(painted["tokens"])
        assert min(rows) == row  # nothing above the edit
        assert rows == set(range(row, min(bottom, len(view.rows))))
        await whole_repaint_matches(pilot)


async def test_moving_the_selection_repaints_two_rows(painted):
    app = ExplorerApp(TEXT, encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.token_view
        app.editor.move_cursor((LINE, 0))
        await settle(pilot)
        await pilot.press("tab")  # to the token view
        await pilot.pause()
        assert app.focused is view
        for rows in painted.values():
            rows.clear()
        selected = view.selected
        await pilot.press("up")  # a row that is on screen: nothing scrolls
        await pilot.pause()
        assert view.selected != selected
        rows = {view.row_of_piece(selected), view.row_of_piece(view.selected)}
        assert set(painted["tokens"]) == rows
        await whole_repaint_matches(pilot)


async def test_a_burst_of_keys_arrives_whole_and_leaves_nothing_stale(painted):
    from textual import events

    app = ExplorerApp(TEXT, encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.editor.move_cursor((LINE, len("hello")))
        await settle(pilot)
        burst = " there, 1234 more words\n"
        for character in burst:  # as fast as the terminal sends them: no wait between keys
            key = {" ": "space", ",": "comma", "\n": "enter"}.get(character, character)
            event = events.Key(key, None if character == "\n" else character)
            event.set_sender(app)
            app._driver.send_message(event)
        await settle(pilot)
        await pilot.pause()
        assert app.text.splitlines()[LINE] == "hello there, 1234 more words"
        assert app.doc.text == app.text
        inspector = str(app.query_one(Inspector).render())
        assert f"piece {app.token_view.selected + 1}/{len(app.doc)}" in inspector  # the last selection, not one before
        await whole_repaint_matches(pilot)
