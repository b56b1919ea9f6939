"""Issue 13 (the explorer as a newcomer meets it) and the TUI items of issue 14, as a user meets them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual import events
from textual.widgets import Footer, Input

from helpers import idle, settle
from tokscope.app import files, recovery
from tokscope.app.app import ExplorerApp
from tokscope.app.screens.dialogs import ChoiceDialog, PathPrompt
from tokscope.app.screens.train import TrainScreen, resolve_pattern
from tokscope.app.widgets.token_view import TokenView
from tokscope.core.train import trainer
from tokscope.sample_texts import read_sample

ROOT = Path(__file__).resolve().parents[2]


def make(text="Hello world", **kw):
    kw.setdefault("encoding", "gpt2")
    kw.setdefault("palette", "truecolor")
    return ExplorerApp(text, **kw)


def footer_text(app) -> str:
    footer = app.screen.query_one(Footer)
    return " ".join(str(k.render()) for k in footer.query("FooterKey"))


# ----- 2. keys ----------------------------------------------------------------------------------


async def test_views_open_with_function_keys_from_the_input_pane_and_the_footer_shows_them():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.focused is app.editor
        shown = footer_text(app)
        for label in ("Why", "Find", "Compare", "Langs", "Stats", "Train", "Chat", "Quit", "Help"):
            assert label in shown
        from tokscope.app.views import VIEWS

        for view in VIEWS:
            await pilot.press(view.key)
            await pilot.pause()
            assert type(app.screen) is view.screen, view.name
            await pilot.press("escape")
            await pilot.pause()
            if type(app.screen) is view.screen:  # a focused field takes the first Escape
                await pilot.press("escape")
                await pilot.pause()
        assert app.screen is app.screen_stack[0]


async def test_letters_type_in_the_input_and_in_the_token_view_go_to_the_input():
    app = make("ab")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.editor.move_cursor((0, 2))
        await pilot.press("m", "t", "x")  # once opened views: now they type
        await settle(pilot)
        assert app.text == "abmtx" and app.screen is app.screen_stack[0]
        await pilot.press("tab")
        assert isinstance(app.focused, TokenView)
        await pilot.press("t", "i")  # a Tab typed "in the text", then more letters
        await settle(pilot)
        assert app.text.endswith("ti") and app.focused is app.editor and app.screen is app.screen_stack[0]


async def test_typing_a_path_on_the_training_screen_goes_into_the_corpus_field():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TrainScreen)
        await pilot.press(*"fig.txt")
        await pilot.pause()
        assert screen.query_one("#tr-files", Input).value == "fig.txt"
        screen.query_one("#tr-train").focus()
        await pilot.press("f", "i", "x", "t")  # letters on a button fire nothing
        await pilot.pause()
        assert app.screen is screen


async def test_keys_act_on_the_state_the_keys_before_them_made(monkeypatch):
    import pyperclip

    copied = []
    monkeypatch.setattr(pyperclip, "copy", copied.append)
    app = make("one two three")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.token_view.focus()
        await pilot.press("home")
        await pilot.pause()
        # pressed together, as a fast typist does: the copy must see both moves
        app.post_message(events.Key("right", None))
        app.post_message(events.Key("right", None))
        app.post_message(events.Key("f9", None))
        await pilot.pause(0.2)
        await pilot.press("b")
        await pilot.pause()
        assert copied == [app.tokenizer.token_bytes(app.doc.ids[2]).hex(" ")]


# ----- 3, 4. paste, select all, clear -------------------------------------------------------------


async def test_paste_with_carriage_returns_becomes_lines():
    app = make("x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.editor.move_cursor((0, 1))
        app.editor.post_message(events.Paste("\rone\rtwo\r\nthree"))
        await settle(pilot)
        assert app.text == "x\none\ntwo\nthree"
        assert app.editor.document.line_count == 4


async def test_crlf_document_keeps_crlf_and_end_goes_to_the_line_end():
    app = make("a\r\nbc\r\n")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.text == "a\r\nbc\r\n" and app.editor.document.line_count == 3
        app.editor.move_cursor((0, 0))
        await pilot.press("end", "!")
        await settle(pilot)
        assert app.text == "a!\r\nbc\r\n"
        app.editor.post_message(events.Paste("p\nq"))
        await settle(pilot)
        assert app.text == "a!p\r\nq\r\nbc\r\n"
        assert app.doc.ids == app.tokenizer.encode(app.text)


async def test_select_all_and_clear_with_undo():
    app = make("some text\nmore")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+a")
        assert app.editor.selected_text == "some text\nmore"
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert app.text == "" and len(app.doc) == 0
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert app.text == "some text\nmore"


# ----- 5. contrast ------------------------------------------------------------------------------


def _luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def drawn_cells(app) -> list[tuple[str, tuple[int, int, int], tuple[int, int, int]]]:
    """Every run of text on the screen with its foreground and background colour (dim blended)."""
    import io

    from rich.console import Console
    from rich.text import Text

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    text = Text.from_ansi(console.export_text(styles=True))
    out = []
    for span in text.spans:
        chunk = text.plain[span.start:span.end]
        style = span.style
        if isinstance(style, str) or not chunk.strip():
            continue
        fg = style.color.get_truecolor() if style.color else None
        bg = style.bgcolor.get_truecolor() if style.bgcolor else None
        if fg is None or bg is None:
            continue
        if style.reverse:
            fg, bg = bg, fg
        fg, bg = tuple(fg), tuple(bg)
        if style.dim:
            fg = tuple((f + b) // 2 for f, b in zip(fg, bg))
        out.append((chunk, fg, bg))
    return out


def border_cells(cells):
    return [c for c in cells if set(c[0].strip()) <= set("╭╮╰╯─│")]


def is_graphic(chunk: str) -> bool:
    """Box drawing, blocks, shapes and braille: lines, bars, scrollbars and plots, not text."""
    return all(0x2500 <= ord(c) <= 0x25FF or 0x2800 <= ord(c) <= 0x28FF or c.isspace() for c in chunk)


@pytest.mark.parametrize("view", [None, "why", "compare", "vocab", "insights", "train", "languages", "chat"])
async def test_every_text_drawn_reaches_4_5_to_1_contrast(view):
    app = make(read_sample("default.txt"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        if view is not None:
            app.open_view(view)
            await idle(pilot)
        cells = drawn_cells(app)
        assert cells
        bad = [(t, fg, bg, round(contrast(fg, bg), 2)) for t, fg, bg in cells
               if not is_graphic(t) and contrast(fg, bg) < 4.5]
        assert not bad, bad[:8]
        weak_borders = [(t[:10], round(contrast(fg, bg), 2)) for t, fg, bg in border_cells(cells) if contrast(fg, bg) < 3]
        assert not weak_borders, weak_borders[:5]


# ----- 6. training screen ------------------------------------------------------------------------


def test_the_training_default_is_the_command_lines_and_round_trips_text():
    from tokscope.core.formats.saved import from_result

    pattern, name = resolve_pattern(TrainScreen.__module__ and __import__(
        "tokscope.app.screens.train", fromlist=["DEFAULT_PATTERN"]).DEFAULT_PATTERN)
    sample = read_sample("default.txt")
    result = trainer.train([sample], vocab_size=400, pattern=pattern, pattern_name=name)
    tok = from_result(result, "t").tokenizer()
    for text in (sample, "x y z", "  two  spaces\n\ttab\n", "é👍 <|x|>"):
        assert tok.decode(tok.encode(text, disallowed_special=())) == text


async def test_training_settings_stay_and_the_bar_is_full_when_training_stops_early():
    app = make("aaa bbb aaa bbb")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#tr-size", Input).value = "5000"
        screen.query_one("#tr-specials", Input).value = "<eos>"
        await pilot.press("ctrl+r")
        await idle(pilot)
        assert screen.state == "done" and len(screen.result.merges) < 5000 - 256
        bar = screen.query_one("#tr-progress")
        assert bar.percentage == 1.0
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("f8")
        await pilot.pause()
        assert app.screen.query_one("#tr-size", Input).value == "5000"
        assert app.screen.query_one("#tr-specials", Input).value == "<eos>"


async def test_compare_from_the_training_screen_opens_the_comparison(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path))
    from tokscope.app.screens.compare import CompareScreen

    app = make(read_sample("prose.txt"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#tr-size", Input).value = "300"
        screen.query_one("#tr-name", Input).value = "mine"
        await pilot.press("ctrl+r")
        await idle(pilot)
        await pilot.press("f5")
        await idle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert [s.name for s in app.screen.slots][0] == "mine"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen  # back to the training screen, results kept
        assert screen.result is not None


async def test_a_built_in_name_is_refused_for_a_trained_tokenizer(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path))
    app = make("aaa bbb aaa")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#tr-size", Input).value = "260"
        await pilot.press("ctrl+r")
        await idle(pilot)
        screen.query_one("#tr-name", Input).focus()
        await pilot.press(*"gpt2", "ctrl+s")
        await pilot.pause()
        assert screen.saved_name is None and not list(tmp_path.glob("**/*.json"))
        assert "built-in" in str(screen.query_one("#tr-status").render())


# ----- 7. smallest size -------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(60, 16), (80, 18), (80, 24)])
async def test_the_token_view_keeps_rows_down_to_60x16(size):
    app = make(read_sample("default.txt"))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert not app.screen.has_class("-too-small")
        assert app.token_view.scrollable_content_region.height >= 3


@pytest.mark.parametrize("view", ["why", "compare", "vocab", "insights", "train", "languages", "chat"])
async def test_every_view_says_too_small_at_40x12(view):
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_view(view)
        await pilot.pause()
        await pilot.resize_terminal(40, 12)
        await pilot.pause(0.1)
        assert app.screen.has_class("-too-small")
        assert app.screen.query_one("TooSmall").display


# ----- 8. wrapping and the inspector -------------------------------------------------------------


async def test_the_inspector_shows_every_code_point_that_fits():
    app = make(" café")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        index = next(i for i in range(len(app.doc)) if "é" in app.doc.piece(i).text)
        app.select_piece(index)
        await pilot.pause()
        shown = str(app.query_one("#inspector").render())
        assert "U+00E9" in shown


def test_why_parts_never_break_inside_a_part():
    from rich.console import Console

    from tokscope.app.widgets.why_pane import parts_text

    console = Console(width=12, file=open(os.devnull, "w"))
    lines = parts_text((b" t", b"o", b"k", b"e", b"n", b"ization")).wrap(console, 14)
    for line in lines:
        assert line.plain.count("[") == line.plain.count("]")


# ----- 9, 10. rank legend, whitespace, split characters -------------------------------------------


async def test_rank_colours_have_a_legend_and_a_light_to_dark_ramp():
    app = make("the tokenization")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+r")
        await pilot.pause()
        legend = str(app.token_view.border_subtitle)
        assert "0-255" in legend and "rank" in legend
        ramp = app.token_view.palette.rank
        light = [_luminance(s.bgcolor.get_truecolor()) for s in ramp]
        assert light == sorted(light, reverse=True)


async def test_visible_whitespace_is_styled_apart_from_a_literal_middle_dot():
    app = make("a·b c")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        strip, _ = app.token_view._render_row(0)
        styles = {seg.text: seg.style for seg in strip if seg.text in ("·",)}
        dots = [seg for seg in strip if "·" in seg.text]
        assert len({seg.style.color for seg in dots}) == 2 or len(dots) >= 2 and dots[0].style != dots[-1].style
        del styles


async def test_a_character_split_across_pieces_is_shown_after_its_bytes():
    app = make("x😃y", encoding="gpt2")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        row = "".join(seg.text for seg in app.token_view._render_row(0)[0])
        assert "‹" in row and row.index("😃") > row.index("›")
        index = next(i for i in range(len(app.doc)) if app.doc.piece(i).partial)
        app.select_piece(index)
        await pilot.pause()
        assert "GRINNING" in str(app.query_one("#inspector").render()) or "SMILING" in str(
            app.query_one("#inspector").render())


# ----- smaller items -----------------------------------------------------------------------------


async def test_the_file_name_is_in_the_input_title_and_the_state_fits_80_columns(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    app = make("hello", path=str(path), source="file")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "notes.txt" in app.editor.border_title
        status = str(app.query_one("#status").render())
        assert status.rstrip().endswith("live") and len(status) <= 80


async def test_quitting_the_edited_sample_does_not_ask():
    app = ExplorerApp(read_sample("default.txt"), encoding="gpt2")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("!")
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_the_token_view_wraps_between_pieces():
    text = " ".join(["tokenization"] * 20)
    app = make(text)
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(pilot)
        starts = set(app.doc.starts)
        for row in app.token_view.rows[1:]:
            assert row in starts


async def test_osc52_message_names_tmux(monkeypatch):
    import pyperclip

    def fail(text):
        raise pyperclip.PyperclipException("none")

    monkeypatch.setattr(pyperclip, "copy", fail)
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    from tokscope.app import clipboard

    assert "set-clipboard on" in clipboard.describe("osc52", "3 ids")


async def test_the_languages_screen_shows_the_passage_and_enter_compares_it():
    from tokscope.app.screens.compare import CompareScreen

    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_view("languages")
        await idle(pilot)
        screen = app.screen
        table = screen.query_one("#lang-table")
        table.focus()
        await pilot.press("down")
        await pilot.pause()
        assert str(screen.query_one("#lang-passage-text").render()).strip()
        await pilot.press("enter")
        await idle(pilot)
        assert isinstance(app.screen, CompareScreen)


async def test_a_latin_1_file_opens_and_saves_back_as_latin_1(tmp_path):
    import argparse

    from tokscope.app.main import read_input

    path = tmp_path / "old.txt"
    path.write_bytes(b"caf\xe9\n")
    args = argparse.Namespace(file=str(path), max_bytes=None, errors="strict")
    text, got, source, notice, enc = read_input(args, ask=lambda q, c: "latin-1")
    assert (text, enc) == ("café\n", "latin-1")
    app = ExplorerApp(text, encoding="gpt2", path=got, source=source, file_encoding=enc)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.editor.move_cursor((0, 4))
        await pilot.press("!", "ctrl+s")
        await pilot.pause()
    assert path.read_bytes() == b"caf\xe9!\n"


# ----- issue 14: saves ----------------------------------------------------------------------------


async def test_a_save_that_fails_midway_leaves_the_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "notes.txt"
    path.write_text("line\n" * 100)
    os.chmod(path, 0o640)
    app = make(path.read_text(), path=str(path), source="file")

    real_write = os.write
    written = []

    def full_disk(fd, data):  # the first write gets half through, then the disk is full
        if written:
            raise OSError(28, "No space left on device")
        written.append(len(data))
        return real_write(fd, bytes(data)[: len(data) // 2])

    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"x" * 50)
        monkeypatch.setattr(os, "write", full_disk)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)  # "Cannot save": Save as… / Cancel
        assert "No space" in str(app.screen.query_one("#dialog-message").render())
        monkeypatch.setattr(os, "write", real_write)
        await pilot.press("escape")
    assert path.read_text() == "line\n" * 100
    assert not [p for p in tmp_path.iterdir() if p.name != "notes.txt"]  # no temp file left


async def test_save_keeps_the_mode_and_follows_a_symlink(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("a")
    os.chmod(target, 0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    app = make("a", path=str(link), source="file")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.editor.move_cursor((0, 1))
        await pilot.press("b", "ctrl+s")
        await pilot.pause()
    assert link.is_symlink() and target.read_text() == "ab"
    assert (target.stat().st_mode & 0o777) == 0o640


async def test_save_asks_when_the_file_changed_on_disk(tmp_path):
    path = tmp_path / "n.txt"
    path.write_text("one")
    app = make("one", path=str(path), source="file")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        time.sleep(0.01)
        path.write_text("someone else's")
        await pilot.press("!", "ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog) and "changed" in str(app.screen.query_one("#dialog-message").render())
        await pilot.press("c")  # cancel
        await pilot.pause()
    assert path.read_text() == "someone else's"


async def test_save_as_asks_before_replacing_a_file(tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("keep me")
    app = make("mine", source="stdin")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, PathPrompt)
        await pilot.press(*str(other), "enter")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.press("c")
        await pilot.pause()
    assert other.read_text() == "keep me"


@pytest.mark.parametrize("name", ["out[/x].txt", "a[/b].txt", "mk[/]"])
async def test_markup_in_names_is_shown_as_text(tmp_path, name, notes):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    app = make("x", path=str(path), source="file")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("!", "ctrl+s")
        await pilot.pause()
        assert any(name in m for m, _ in notes)
        app.switch_encoding(name)  # a tokenizer name with markup in the "Cannot load" notification
        await pilot.pause(0.3)
        assert any("Cannot load" in m for m, _ in notes)
        assert "live" in str(app.query_one("#status").render())
        await pilot.press("ctrl+q")
        await pilot.pause()


@pytest.fixture
def notes(monkeypatch):
    seen: list[tuple[str, str]] = []
    original = ExplorerApp.notify

    def notify(self, message, *args, severity="information", **kwargs):
        seen.append((str(message), severity))
        return original(self, message, *args, severity=severity, **kwargs)

    monkeypatch.setattr(ExplorerApp, "notify", notify)
    return seen


async def test_the_encoding_picker_lists_a_saved_tokenizer_named_like_a_built_in(tmp_path, monkeypatch):
    """A saved tokenizer named gpt2 (saved by an older tokscope) used to crash F2 with DuplicateIds."""
    from tokscope.core.formats import saved as serialize
    from tokscope.core.formats.saved import from_result

    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path))
    folder = tmp_path / "tokenizers"
    folder.mkdir()
    result = trainer.train(["aaa bbb"], merges=2, pattern=trainer.PATTERN_NONE)
    serialize.save(folder / "gpt2.json", from_result(result, "gpt2"))
    app = make("typed text")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        await pilot.pause()
        from tokscope.app.screens.dialogs import EncodingPicker

        assert isinstance(app.screen, EncodingPicker)
        await pilot.press("escape")
        await pilot.pause()
        assert app.text == "typed text"


CONTROL = st.text(alphabet=st.sampled_from(["\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\x00", "\r", "a", "[", "/",
                                            "]", "é", " ", "\x85", "\u200b"]), min_size=1, max_size=12)
BAD = {chr(c) for c in range(0x20) if c not in (0x0A,)} | {chr(c) for c in range(0x7F, 0xA0)} | set(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=CONTROL, text=CONTROL)
async def test_nothing_drawn_holds_a_control_or_bidi_character_from_its_input(name, text):
    """File names, tokenizer names and the text itself: what reaches the screen is inert."""
    app = ExplorerApp(text, tokenizer=None, encoding=name, path=f"/tmp/{name}", source="file", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        app.notify(f"probe {name}", markup=False)
        await pilot.pause()
        drawn = "".join(c for t, _, _ in drawn_cells(app) for c in t)
        assert not (set(drawn) & BAD), [hex(ord(c)) for c in set(drawn) & BAD]


# ----- issue 14: signals ----------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import asyncio, sys
    sys.path.insert(0, {root!r})
    from tokscope.app.app import ExplorerApp

    class Child(ExplorerApp):
        async def on_ready(self):
            self.editor.insert("unsaved edit ")
            await asyncio.sleep(0.3)
            print("READY", flush=True)

    app = Child(open({path!r}).read(), encoding="gpt2", path={path!r}, source="file")
    app.run(headless=True)
    print("EXIT", app.return_code, app.stopped_by, flush=True)
""")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_keeps_the_unsaved_edits_and_the_next_start_offers_them(tmp_path, sig):
    path = tmp_path / "draft.txt"
    path.write_text("original\n")
    env = dict(os.environ, TOKSCOPE_STATE_DIR=str(tmp_path / "state"))
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT), path=str(path))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = ""
        end = time.time() + 60
        while "READY" not in line and time.time() < end:
            line = child.stdout.readline()
        child.send_signal(sig)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert f"EXIT {128 + sig}" in out, (out, err)
    assert path.read_text() == "original\n"
    os.environ["TOKSCOPE_STATE_DIR"] = env["TOKSCOPE_STATE_DIR"]
    try:
        found = recovery.find(str(path))
        assert found is not None and found.text == "unsaved edit original\n"
        assert found.reason == signal.Signals(sig).name
        assert str(found.file).startswith(env["TOKSCOPE_STATE_DIR"])
    finally:
        del os.environ["TOKSCOPE_STATE_DIR"]


async def test_the_next_start_offers_the_recovered_edits(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_STATE_DIR", str(tmp_path / "state"))
    path = tmp_path / "draft.txt"
    path.write_text("original")
    kept = recovery.write(str(path), "recovered text", "SIGHUP")
    app = make("original", path=str(path), source="file")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause(0.2)
        assert isinstance(app.screen, ChoiceDialog)
        message = str(app.screen.query_one("#dialog-message").render())
        assert "SIGHUP" in message and str(kept.name) in message.replace("\n", "")
        await pilot.press("r")  # restore
        await settle(pilot)
        assert app.text == "recovered text" and app.modified
    assert recovery.find(str(path)) is None


def test_save_text_helper_keeps_a_new_files_mode(tmp_path):
    target = tmp_path / "new.txt"
    files.save_text(target, "hi")
    umask = os.umask(0)
    os.umask(umask)
    assert (target.stat().st_mode & 0o777) == (0o666 & ~umask)


async def test_moving_the_cursor_in_the_input_selects_the_token_under_it():
    app = make("alpha beta gamma")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.editor.move_cursor((0, 0))
        await pilot.press("ctrl+right", "right")
        await pilot.pause()
        piece = app.selected_piece
        assert piece.start <= app.editor.cursor_location[1] < piece.end or piece.text == " beta"


def _textual_private_names() -> set[str]:
    """Every private (``_x``) name Textual's own source defines: methods, class attributes and
    attributes it assigns on ``self``."""
    import re as re_module

    import textual

    names: set[str] = set()
    for path in Path(textual.__file__).parent.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        names |= set(re_module.findall(r"\bself\.(_[a-z]\w*)\s*(?::[^=\n]*)?=(?!=)", source))
        names |= set(re_module.findall(r"^\s+(?:async\s+)?def (_[a-z]\w*)", source, re_module.M))
        names |= set(re_module.findall(r"^\s+(_[a-z]\w*)\s*(?::[^=\n]*)?=(?!=)", source, re_module.M))
    return names


def _private_uses(source: str) -> tuple[set[str], set[str]]:
    """``(used, defined)``: the private names a module of tokscope reads or overrides (``x._y``,
    ``getattr(x, "_y")``, ``def _y`` in a class), and those it defines for itself (assigned on
    ``self`` or in a class, or a method not reached through ``super()``)."""
    import re as re_module

    code = re_module.sub(r"#.*", "", source)
    used = set(re_module.findall(r"(?<=\.)_[a-z]\w*", code))
    used |= set(re_module.findall(r"(?:getattr|hasattr|setattr)\([^,]+,\s*\"(_[a-z]\w*)\"", code))
    methods = set(re_module.findall(r"^\s+(?:async\s+)?def (_[a-z]\w*)", code, re_module.M))
    assigned = set(re_module.findall(r"\bself\.(_[a-z]\w*)\s*(?::[^=\n]*)?=(?!=)", code))
    assigned |= set(re_module.findall(r"^\s+(_[a-z]\w*)\s*(?::[^=\n]*)?=(?!=)", code, re_module.M))
    assigned |= set(re_module.findall(r"^def (_[a-z]\w*)", code, re_module.M))
    via_super = set(re_module.findall(r"super\(\)\.(_[a-z]\w*)", code))
    # Textual calls these by their prefix: defining one overrides Textual's, never a name of one's own
    hooks = {name for name in methods if re_module.match(r"_(on|watch|compute|validate)_", name)}
    return used | methods, (assigned | methods) - via_super - hooks


#: private names of other libraries that Textual happens to define too
_NOT_TEXTUAL = {"_exit": "os._exit", "_replace": "a named tuple's copy"}


def test_textual_internals_are_used_only_through_the_adapter():
    """Every Textual private attribute the app touches goes through widgets/textual_internals.py:
    each one it names still exists in the installed Textual (so an untested release that renames
    one fails here rather than in a user's terminal), and no other module of tokscope/app reads or
    overrides a private name of Textual's that it does not define itself."""
    from textual.widgets import TextArea
    from textual.widgets.text_area import Document, WrappedDocument

    from tokscope.app.widgets import textual_internals

    doc = Document("a\nb")
    owners = {"TextArea": TextArea, "Document": doc, "WrappedDocument": WrappedDocument(doc, 10)}
    for owner, name in textual_internals.INTERNALS:
        assert hasattr(owners[owner], name), (owner, name)
    assert isinstance(doc._lines, list) and isinstance(owners["WrappedDocument"]._tab_width_cache, list)
    # the properties the fast paths fall back to, and the attributes TextArea keeps its documents in
    assert isinstance(Document.text, property) and isinstance(WrappedDocument.height, property)
    # TextArea assigns its documents to plain attributes, which the adapter's properties intercept
    area = TextArea("x")
    assert isinstance(area.__dict__.get("document"), Document) and "wrapped_document" in area.__dict__
    assert not isinstance(getattr(TextArea, "document", None), property)
    # the adapter names every internal it uses
    adapter = ROOT / "tokscope/app/widgets/textual_internals.py"
    textual_names = _textual_private_names()
    used, _ = _private_uses(adapter.read_text(encoding="utf-8"))
    named = {name for _, name in textual_internals.INTERNALS}
    assert used & textual_names <= named | {"_tokscope_document", "_tokscope_wrapped"}, used & textual_names - named
    # nothing else in the app reaches into Textual
    found = {}
    for path in sorted((ROOT / "tokscope/app").rglob("*.py")):
        if path == adapter:
            continue
        used, defined = _private_uses(path.read_text(encoding="utf-8"))
        bad = (used & textual_names) - defined - set(_NOT_TEXTUAL)
        if bad:
            found[str(path.relative_to(ROOT))] = sorted(bad)
    assert not found, found
    source = (ROOT / "tokscope/app/widgets/editor.py").read_text(encoding="utf-8")
    assert "textual_internals." in source and "textual.document._" not in source


def test_the_internals_check_catches_a_textual_private_name():
    """The check above is not vacuous: code reading TextArea's internals is caught."""
    names = _textual_private_names()
    used, defined = _private_uses("class E(TextArea):\n    def f(self):\n        self._restart_blink()\n"
                                  "    async def _on_key(self, event):\n        await super()._on_key(event)\n")
    assert {"_restart_blink", "_on_key"} <= (used & names) - defined
    used, defined = _private_uses("x = getattr(doc, \"_lines\", None)\n")
    assert "_lines" in (used & names) - defined


async def test_closing_compare_stops_its_pane_jobs():
    """A pane job superseded or orphaned stops at its next check (three 1 MB documents built
    after the screen closed took the process past 500 MB)."""
    from tokscope.app.screens.compare import CompareScreen

    app = make(read_sample("prose.txt"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        cancels = [slot.cancel for slot in screen.slots]
        await pilot.press("escape")
        await pilot.pause()
        assert all(c.is_set() for c in cancels)


async def test_a_long_line_edit_lays_out_only_near_the_edit(monkeypatch):
    from tokscope.app import render

    text = ("tokenization café 你好 " * 12_000)[:200_000]
    app = make(text)
    calls = []
    original = render._layout_complex

    def spy(doc, width, a, b, sync=None):
        rows = original(doc, width, a, b, sync)
        calls.append(rows[-1] - a if rows else 0)
        return rows

    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, 60)
        monkeypatch.setattr(render, "_layout_complex", spy)
        app.editor.move_cursor((0, 100_000))
        await pilot.press("x")
        await settle(pilot, 60)
        assert calls and max(calls) < 2_000  # a few rows, not the 200,000 characters
        monkeypatch.undo()
        assert app.token_view.rows == render.layout(app.doc, app.token_view.rows_width, "text", False)


async def test_insights_headings_do_not_collide_at_80x24():
    app = make(read_sample("default.txt"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f7")
        await idle(pilot)
        screen = app.screen
        assert screen.has_class("-narrow")  # the plots are stacked, each the full width
        lengths = screen.query_one("#ins-lengths")
        zipf = screen.query_one("#ins-zipf")
        assert lengths.region.y != zipf.region.y


async def test_a_dialog_shows_markup_in_its_message_as_text():
    from textual.app import App

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(ChoiceDialog("tokscope", "a[/b].txt is a binary file [bold]x[/]",
                                          [("replace", "Open"), ("quit", "Quit")]), self.exit)

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "[/b]" in str(app.screen.query_one("#dialog-message").render())
        await pilot.press("q")
    assert app.return_value == "quit"


async def test_a_theme_restyles_the_token_view():
    app = make("a b c d")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        before = app.token_view.palette.alternate[0]
        app.theme = "nord"
        await pilot.pause()
        assert app.token_view.palette.alternate[0] != before


def test_a_single_point_series_is_a_labelled_marker():
    from tokscope.app.widgets.plots import ScatterPlot, Series

    plot = ScatterPlot("sweep", log_x=True)
    plot.set_data([Series("trained", tuple((float(v), 1000.0 - v) for v in range(256, 1000, 10))),
                   Series("o200k", ((200_019.0, 300.0),))])
    rows = ["".join(t for t, _ in row) for row in plot.build(60, 14)]
    assert any("●" in row and "o200k" in row for row in rows[1:-2])


async def test_the_piece_under_the_pointer_is_highlighted():
    app = make("alpha beta gamma")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        _, spans = app.token_view._render_row(0)
        x0, _, index = spans[1]
        await pilot.hover("#tokens", offset=(x0 + 2, 1))
        await pilot.pause()
        assert app.token_view.hovered == index
        strip, _ = app.token_view._render_row(0)
        assert any(seg.style and seg.style.underline and "beta" in seg.text for seg in strip)
