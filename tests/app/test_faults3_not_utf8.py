"""Issue 21, item 21 (last part): the explorer offers U+FFFD replacements for a file that is not
UTF-8 instead of naming the command line's ``--errors replace``; a file opened that way says so,
and is never written over unasked (its bad bytes would become U+FFFD)."""

from __future__ import annotations

import argparse
import asyncio

from textual.widgets import Input, Static

from tokscope.app import main as app_main
from tokscope.app.screens.dialogs import ChoiceDialog
from tokscope.app.screens.train import TrainScreen
from tokscope.app.widgets.form import Select
from tokscope.sources import registry

BAD = b"caf\xe9 au lait\n"


def args(**kw) -> argparse.Namespace:
    kw.setdefault("file", None)
    kw.setdefault("errors", "strict")
    kw.setdefault("max_bytes", None)
    return argparse.Namespace(**kw)


async def until(pilot, predicate, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("condition not reached")
        await pilot.pause(0.05)


def opened_with_replacements(path):
    """The explorer as ``tokscope FILE`` starts it, the user choosing U+FFFD in the startup dialog."""
    asked = []
    given = args(file=str(path))
    got = app_main.read_input(given, ask=lambda question, choices: asked.append((question, choices)) or "replace")
    app = app_main.explorer_app(given, "o200k_base", got)
    app._tokenizer = registry.load("o200k_base")
    return app, asked


def test_the_startup_dialog_offers_replacements_and_names_no_flag(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(BAD)
    _, asked = opened_with_replacements(path)
    question, choices = asked[0]
    assert "--errors" not in question and "byte 0xe9 at offset 3" in question
    assert "replace" in [key for key, _ in choices]


async def test_ctrl_s_asks_before_writing_over_the_original(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(BAD)
    app, _ = opened_with_replacements(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.editor.real_text == "caf\ufffd au lait\n"  # the text as opened, with U+FFFD
        assert "opened with replacements" in str(app.editor.border_title)
        app.editor.focus()
        await pilot.press("end", "x")
        await pilot.press("ctrl+s")  # no file to save back to: it asks where
        await pilot.pause()
        prompt = app.screen.query_one(Input)
        prompt.value = str(path)
        await pilot.press("enter")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        shown = " ".join(str(w.render()) for w in dialog.query(Static))
        assert "opened with replacements" in shown and "U+FFFD" in shown
        await pilot.press("escape")  # cancel: the original bytes stay
        await pilot.pause()
        assert path.read_bytes() == BAD
        assert app.modified


async def test_overwriting_the_original_is_the_users_choice(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(BAD)
    app, _ = opened_with_replacements(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.editor.focus()
        await pilot.press("end", "x")
        app.action_save()
        await pilot.pause()
        app.screen.query_one(Input).value = str(path)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        app.screen.dismiss("replace")
        await pilot.pause()
        assert path.read_bytes() == "caf\ufffd au laitx\n".encode()
        assert not app.modified


async def test_the_unsaved_edits_dialog_says_how_the_file_was_opened(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(BAD)
    app, _ = opened_with_replacements(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.editor.focus()
        await pilot.press("end", "x", "ctrl+q")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        shown = " ".join(str(w.render()) for w in dialog.query(Static))
        assert "opened with replacements" in shown and "notes.txt" in shown
        await pilot.press("escape")
    assert path.read_bytes() == BAD


async def test_the_training_screen_offers_replacements_for_a_corpus_file(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"low lower lowest \xff newer newest wider " * 5)
    from tokscope.app.app import ExplorerApp

    app = ExplorerApp("hello", tokenizer=registry.load("o200k_base"), palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.open_view("train")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TrainScreen)
        screen.query_one("#tr-size", Input).value = "10"
        screen.query_one("#tr-size-kind", Select).value = "merges"
        screen.query_one("#tr-files", Input).value = str(corpus)
        await pilot.pause()
        screen.action_train()
        await until(pilot, lambda: isinstance(app.screen, ChoiceDialog))
        dialog = app.screen
        shown = " ".join(str(w.render()) for w in dialog.query(Static))
        assert "byte 0xff" in shown and "U+FFFD" in shown and "--errors" not in shown
        status = str(screen.query_one("#tr-status", Static).render())
        assert "--errors" not in status
        dialog.dismiss("replace")
        await until(pilot, lambda: screen.state == "done")
        assert screen.result is not None
        assert corpus.read_bytes().count(b"\xff") == 5  # only read, never changed
