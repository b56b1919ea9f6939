"""Pilot tests of the explorer: they drive the app with keys and assert on what its widgets hold."""

from __future__ import annotations

import pyperclip
import pytest
from textual import events

from tokscope.app.app import APP_KEYS, ExplorerApp
from tokscope.core.document.document import Document
from tokscope.app.screens.dialogs import ChoiceDialog, EncodingPicker, HelpScreen
from tokscope.app.widgets.status import status_text
from tokscope.core.tokenizer.tokenizer import Tokenizer
from tokscope.sample_texts import read_sample

from helpers import settle


def core_ids(app: ExplorerApp, text: str | None = None) -> list[int]:
    return app.tokenizer.encode(app.text if text is None else text, **app.encode_kwargs())


def row_text(app: ExplorerApp, row: int) -> str:
    strip, _ = app.token_view._render_row(row)
    return strip.text


def all_rows(app: ExplorerApp) -> str:
    view = app.token_view
    return "\n".join(row_text(app, r) for r in range(len(view.rows)))


async def test_opens_on_the_sample_with_counts(make_app):
    app = make_app(read_sample("default.txt"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.encoding_name == "o200k_base"
        assert app.doc.ids == core_ids(app)
        status = str(app.query_one("#status").render())
        assert f"{len(app.doc.ids):,} tok" in status and "live" in status
        assert app.selected_index == 0
        assert "id 17032" in str(app.query_one("#inspector").render())  # "Welcome"


async def test_typing_retokenizes_live(make_app):
    app = make_app("Hello")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.editor.move_cursor((0, 5))
        await pilot.press("space", "w", "o", "r", "l", "d", "!")
        await settle(pilot)
        assert app.text == "Hello world!"
        assert app.doc.ids == core_ids(app) == app.tokenizer.encode("Hello world!")
        await pilot.press("backspace", "enter")
        await settle(pilot)
        assert app.text == "Hello world\n"
        assert app.doc.ids == core_ids(app)
        # the token under the cursor is selected (the cursor sits at the end)
        assert app.selected_index == len(app.doc.ids) - 1


async def test_paste_and_edit_in_the_middle_of_a_large_text(make_app):
    text = read_sample("prose.txt") * 30  # about 100 KB
    app = make_app(text)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        row = text.count("\n", 0, len(text) // 2)
        app.editor.move_cursor((row, 0))
        app.post_message(events.Paste("pasted 👍🏽 text, <|endoftext|> too\n"))
        await settle(pilot)
        assert "pasted 👍🏽 text" in app.text
        assert app.doc.ids == core_ids(app)
        assert app.doc.edit is not None  # re-tokenized only around the edit
        await pilot.press("x", "y")
        await settle(pilot)
        assert app.doc.ids == core_ids(app)


async def test_moving_through_tokens_keeps_the_cursor_in_step(make_app):
    app = make_app("one two\nthree four")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("tab")
        assert app.focused is app.token_view
        await pilot.press("home", "right", "right")
        assert app.selected_index == 2
        piece = app.selected_piece
        assert piece.text == "\n"
        await pilot.press("right")
        assert app.selected_piece.text == "three"
        assert app.editor.cursor_location == (1, 0)
        inspector = str(app.query_one("#inspector").render())
        assert f"id {app.selected_token_id}" in inspector and "chunk [8:13]" in inspector
        await pilot.press("up")
        assert app.selected_piece.start < 8
        await pilot.press("end")
        assert app.selected_piece.text == " four"
        await pilot.press("left")
        assert app.selected_index == len(app.doc.ids) - 2


async def test_editor_cursor_selects_the_token(make_app):
    app = make_app("alpha beta gamma")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.editor.move_cursor((0, 7))
        await pilot.pause()
        assert app.selected_piece.text == " beta"


async def test_click_selects_a_token(make_app):
    app = make_app("alpha beta gamma")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        _, spans = app.token_view._render_row(0)
        x0, _, index = spans[2]
        await pilot.click("#tokens", offset=(x0 + 2, 1))  # border + padding
        await pilot.pause()
        assert app.selected_index == index
        assert app.selected_piece.text == " gamma"


async def test_view_modes_and_toggles(make_app):
    app = make_app("Hi  there\tfriend\n")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("tab")
        assert row_text(app, 0).startswith("Hi  there    friend")
        await pilot.press("ctrl+g")
        assert row_text(app, 0).startswith("Hi··there→   friend⏎")
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert app.token_view.rows_mode == "ids"
        assert row_text(app, 0).split() == [str(i) for i in app.doc.ids]
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert app.token_view.rows_mode == "both"
        first = app.doc.piece(0)
        assert row_text(app, 0).startswith(f"{first.text} {first.id} ")
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert app.token_view.rows_mode == "text"
        plain = [seg.style for seg in app.token_view._render_row(0)[0]]
        await pilot.press("ctrl+r")
        ranked = [seg.style for seg in app.token_view._render_row(0)[0]]
        assert app.rank_colours and ranked != plain


async def test_partial_and_special_pieces_are_marked(make_app):
    app = make_app("a 👍🏽 <|endoftext|>")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        text = row_text(app, 0)
        partial = [app.doc.piece(i) for i in range(len(app.doc)) if app.doc.flags[i] & 1]
        assert partial, "o200k cuts this emoji inside a character"
        assert "‹" in text and partial[0].bytes[-1:].hex() in text
        eot = app.tokenizer.special_tokens["<|endoftext|>"]
        assert eot not in app.doc.ids  # ordinary text by default
        index = next(i for i in range(len(app.doc)) if app.doc.flags[i] & 1)
        app.select_piece(index)
        await pilot.pause()
        inspector = str(app.query_one("#inspector").render())
        assert "partial" in inspector and ":L" in inspector or ":C" in inspector
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert eot in app.doc.ids and app.doc.ids == core_ids(app)
        assert app.doc.piece(app.doc.ids.index(eot)).special


async def test_hostile_text_is_shown_inertly(make_app):
    hostile = "ok\x1b[2J\x1b]52;c;aGk=\x07 \u202eevil\u202c z\u200bw \x85 \x00"
    app = make_app(hostile)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        shown = all_rows(app)
        assert "‹e2 80›‹ae›" in shown  # o200k cuts U+202E (RLO) into two partial pieces
        assert "‹c2›‹85›" in shown  # and U+0085 (NEL)
        for glyph in ("␛", "⟨PDF⟩", "⟨ZWSP⟩", "␀", "␇"):
            assert glyph in shown
        painted = "".join(seg.text for y in range(6) for seg in app.editor.render_line(y))
        painted += "".join(seg.text for y in range(20) for seg in app.token_view.render_line(y))
        for bad in ("\x1b", "\u202e", "\x07", "\x85", "\x00", "\u200b"):
            assert bad not in painted
        assert app.text == hostile  # the text itself is untouched


async def test_line_breaks_other_than_newline_survive_the_editor(make_app):
    text = "dos\r\nline\nmac\rold\x85ls\u2028vt\x0bff\x0c end"
    app = make_app(text)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.text == text and app.doc.ids == core_ids(app, text)
        app.editor.move_cursor(app.editor.document.end)
        await pilot.press("!")
        app.post_message(events.Paste("\r\n\u2029"))
        await settle(pilot)
        assert app.text == text + "!\n\u2029"  # a pasted CRLF takes the document's line ending
        assert "␍" in "".join(seg.text for seg in app.editor.render_line(0))


async def test_switch_encoding_with_the_picker(make_app):
    app = make_app("Tokenizers differ on this text.")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, EncodingPicker)
        names = [info.name for info in app.screen.infos]
        steps = names.index("cl100k_base") - names.index("o200k_base")
        await pilot.press(*["down" if steps > 0 else "up"] * abs(steps), "enter")
        await pilot.pause()
        await settle(pilot)
        assert app.encoding_name == "cl100k_base"
        assert app.doc.ids == core_ids(app) == app.tokenizer.encode("Tokenizers differ on this text.")


async def test_failed_encoding_keeps_the_previous_one(make_app, notes):
    app = make_app("same text")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        before = list(app.doc.ids)
        app.switch_encoding("no-such-encoding")
        assert "loading no-such-encoding" in str(app.query_one("#status").render())
        await settle(pilot)
        assert app.encoding_name == "o200k_base" and app.doc.ids == before
        assert any("Cannot load encoding 'no-such-encoding'" in m and s == "error" for m, s in notes)


async def test_command_palette_switches_encoding(make_app):
    app = make_app("palette test")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"Encoding: gpt2")
        await pilot.pause(0.4)
        await pilot.press("enter")
        await settle(pilot)
        assert app.encoding_name == "gpt2"
        assert app.doc.ids == app.tokenizer.encode("palette test")


async def test_copy_uses_pyperclip(make_app, notes, monkeypatch):
    copied = []
    monkeypatch.setattr(pyperclip, "copy", copied.append)
    app = make_app("copy me")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f9", "i")
        assert copied == [" ".join(map(str, app.doc.ids))]
        await pilot.press("f9", "p")
        assert copied[-1] == '["copy", " me"]'
        app.select_piece(1)
        await pilot.press("f9", "b")
        assert copied[-1] == "20 6d 65"
        assert any(m.startswith("Copied") for m, _ in notes)


async def test_copy_falls_back_to_osc52(make_app, notes, monkeypatch):
    def fail(text):
        raise pyperclip.PyperclipException("no clipboard mechanism")

    monkeypatch.setattr(pyperclip, "copy", fail)
    app = make_app("over ssh")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f9", "i")
        assert app.clipboard == " ".join(map(str, app.doc.ids))
        assert any("OSC 52" in m for m, _ in notes)


def help_plain(screen, width: int) -> str:
    """The help screen's text as drawn ``width`` columns wide."""
    import io

    from rich.console import Console

    console = Console(width=width, file=io.StringIO(), record=True)
    console.print(screen.query_one("#help-text").content)
    return console.export_text()


async def test_help_lists_every_key(make_app):
    app = make_app("x")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = help_plain(app.screen, 64)
        for key, *_ in APP_KEYS:
            label = key.upper() if key.startswith("f") else "Ctrl+" + key[5:].upper()
            assert label in text
        # a wrapped description stays in its column, and no literal backtick is shown
        assert "`" not in text
        lines = text.splitlines()
        k = next(i for i, line in enumerate(lines) if line.strip().startswith("F2 "))
        assert lines[k + 1].startswith(" " * 20) and lines[k + 1].strip()
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_too_small_terminal_shows_a_message(make_app):
    app = make_app("x")
    async with app.run_test(size=(50, 12)) as pilot:
        await pilot.pause()
        assert app.screen.has_class("-too-small")
        assert app.query_one("TooSmall").display and not app.query_one("#main").display
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not app.screen.has_class("-too-small")


async def test_quit_asks_about_unsaved_edits(make_app, tmp_path):
    path = tmp_path / "note.txt"
    path.write_text("draft", encoding="utf-8")
    app = make_app("draft", path=str(path), source="file")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.editor.move_cursor((0, 5))
        await pilot.press("!")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.press("c")  # cancel
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, ChoiceDialog)
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("s")  # save
        await pilot.pause()
    assert path.read_text(encoding="utf-8") == "draft!"


async def test_quit_without_edits_does_not_ask(make_app):
    app = make_app("unchanged")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_open_token_and_enter_opens_the_why_view(make_app):
    from tokscope.app.messages import TokenPicked
    from tokscope.app.screens.why import WhyScreen

    app = make_app("a b a b")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        b = app.tokenizer.encode(" b")[0]
        app.open_token(b)  # a TokenPicked message: the explorer selects its first occurrence
        await pilot.pause()
        assert app.selected_token_id == b and app.selected_index == 1
        await pilot.press("tab", "enter")  # enter in the token view opens the token's merge tree
        await settle(pilot)
        assert isinstance(app.screen, WhyScreen)  # ...and its explanation
        assert app.screen.token_id == b
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, WhyScreen)
        assert TokenPicked(1, "x").source == "x"


async def test_a_tiny_tokenizer_built_in_the_test():
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    tok = Tokenizer("tiny", ranks, r"\w+|\s+|[^\w\s]+", {"<|end|>": 257})
    app = ExplorerApp("abab ab", tokenizer=tok, palette="mono")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.encoding_name == "tiny"
        assert app.doc.ids == [256, 256, 32, 256]
        assert "tiny" in status_text(app.doc, "live")


def test_doc_stats_in_status_line(load):
    doc = Document.build(load("o200k_base"), "two words")
    line = status_text(doc, "live", 200)
    assert "2 tokens" in line and "9 chars" in line and "2 words" in line and "4.50 chars/tok" in line
    assert "1.00 tok/word" in line
