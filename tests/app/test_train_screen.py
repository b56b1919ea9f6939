"""The training screen: train from the screen (same merges as the trainer), cancel, bad input,
save and reopen (asking before overwriting), the sweep curve, and snapshots."""

from __future__ import annotations

import asyncio
import threading

import pytest
from textual.widgets import Button, Input, Select, Static

from tokscope.app.app import ExplorerApp
from helpers import idle
from tokscope.app.views import BY_NAME
from tokscope.app.screens import train as train_screen
from tokscope.app.screens.train import TrainScreen
from tokscope.app.widgets.merge_list import MergeList, merge_row
from tokscope.app.widgets.plots import ScatterPlot
from tokscope.core.train import trainer
from tokscope.sources import registry

SCREEN = "tokscope.app.screens.train:TrainScreen"
TEXT = ("the cat sat on the mat. the rat ate the hat; that cat and that rat sat there.\n" * 6
        + "then the other cats ran to the third mat, and the rats hid in the hatch.\n" * 4)


def make(text: str = TEXT) -> ExplorerApp:
    return ExplorerApp(text, tokenizer=registry.load("o200k_base"), palette="truecolor")




async def open_train(pilot) -> TrainScreen:
    await idle(pilot)
    pilot.app.open_view("train")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, TrainScreen)
    return screen


async def until(pilot, predicate, timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("condition not reached")
        await pilot.pause(0.05)


def status(screen) -> str:
    return str(screen.query_one("#tr-status", Static).render())


async def set_form(pilot, screen, *, size: str | None = None, kind: str | None = None, pattern: str | None = None,
                   tie: str | None = None, minfreq: str | None = None, specials: str | None = None,
                   files: str | None = None) -> None:
    if size is not None:
        screen.query_one("#tr-size", Input).value = size
    if kind is not None:
        screen.query_one("#tr-size-kind", Select).value = kind
    if pattern is not None:
        screen.query_one("#tr-pattern", Select).value = pattern
    if tie is not None:
        screen.query_one("#tr-tie", Select).value = tie
    if minfreq is not None:
        screen.query_one("#tr-minfreq", Input).value = minfreq
    if specials is not None:
        screen.query_one("#tr-specials", Input).value = specials
    if files is not None:
        screen.query_one("#tr-files", Input).value = files
    await pilot.pause()


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path))
    yield tmp_path
    registry.forget()


def test_registered_as_a_view():
    assert BY_NAME["train"].key == "f8" and BY_NAME["train"].screen.__name__ == "TrainScreen"


async def test_train_from_the_screen_matches_the_trainer():
    app = make()
    expected = trainer.train([TEXT], merges=40, pattern=trainer.PATTERN_WORDS, tie="lexical", special_tokens=["<eos>"])
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="40", kind="merges", tie="lexical", specials="<eos>", pattern="words")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.state == "done")
        await pilot.pause(0.2)
        result = screen.result
        assert [(m.left, m.right, m.count) for m in result.merges] == [
            (m.left, m.right, m.count) for m in expected.merges]
        assert result.special_tokens == expected.special_tokens
        merges = screen.query_one("#tr-merges", MergeList)
        assert len(merges.rows) == len(expected.merges)
        assert merges.line(0) == merge_row(1, expected.merges[0], 256)
        assert merges.line(len(merges.rows) - 1) == merge_row(
            len(expected.merges), expected.merges[-1], expected.merges[-1].id)
        assert f"corpus {expected.lengths[0]:,} → {expected.lengths[-1]:,} tokens" in status(screen)
        for button in ("#tr-save", "#tr-open", "#tr-compare"):
            assert not screen.query_one(button, Button).disabled
        await idle(pilot)
        curve = screen.query_one("#tr-curve", ScatterPlot)
        trained = curve.series[0]
        assert trained.points[0] == (256.0, float(expected.lengths[0]))
        assert trained.points[-1] == (256.0 + len(expected.merges), float(expected.lengths[-1]))
        names = {s.name for s in curve.series[1:]}
        assert {"gpt2", "cl100k", "o200k"} <= names
        o200k = next(s for s in curve.series if s.name == "o200k")
        assert o200k.points == ((200019.0, float(len(registry.load("o200k_base").encode(TEXT)))),)
        await pilot.press("ctrl+y")
        assert curve.series[0].points[-1][1] == pytest.approx(trainer.sweep(result)[-1].chars_per_token)


async def test_merge_list_streams_without_a_layout_and_follows_the_newest():
    """Rows arriving change only the list (no layout pass of the whole screen: that is what made
    the screen slow against the bare trainer); the newest row stays in view until the user moves
    up, and End follows it again."""
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        merges = screen.query_one("#tr-merges", MergeList)
        await pilot.pause()
        layouts = []
        screen.screen_layout_refresh_signal.subscribe(screen, layouts.append, immediate=True)

        def batch(start: int, n: int = 20) -> list[trainer.TrainProgress]:
            return [trainer.TrainProgress(i, 500, b"t", b"he" * (i % 3 + 1), 500 - i, 9000 - i)
                    for i in range(start, start + n)]

        for k in range(5):
            merges.extend(batch(1 + 20 * k))
            await pilot.pause()
        assert layouts == []
        assert merges.virtual_size.height == len(merges.rows) == 100
        assert merges.vertical_scrollbar.window_virtual_size == 100
        assert merges.scroll_y == merges.max_scroll_y > 0
        bottom = merges.scrollable_content_region.height - 1
        assert merges.line(99) in merges.render_line(bottom).text
        assert merges.line(99) == merge_row(100, merges.rows[99], 355)

        merges.focus()
        await pilot.press("pageup")
        held = merges.scroll_y
        assert held < merges.max_scroll_y and not merges.follow
        await pilot.pause()
        layouts.clear()  # (moving the focus redraws the footer's keys)
        merges.extend(batch(101))
        await pilot.pause()
        assert merges.scroll_y == held  # reading older merges: the list does not jump
        await pilot.press("end")
        await pilot.pause()
        merges.extend(batch(121))
        await pilot.pause()
        assert merges.scroll_y == merges.max_scroll_y
        assert merges.line(139) in merges.render_line(bottom).text
        assert layouts == []


async def test_curve_plot_draws_what_the_scatter_plot_draws():
    """The training curve merges neighbouring cells of one style into one segment: same cells,
    same styles as the insights' scatter plot, for several series with a legend and log axes."""
    from textual.app import App
    from textual.containers import Horizontal

    from tokscope.app.screens.insights import Series
    from tokscope.app.screens.train import CurvePlot

    series = [Series("trained", tuple((256.0 + 7 * i, 5000.0 - 11 * i + (i % 5) * 40) for i in range(300))),
              Series("gpt2", ((50257.0, 1300.0),)), Series("o200k", ((200019.0, 1100.0),))]

    class Two(App):
        def compose(self):
            with Horizontal():
                yield ScatterPlot("t", x_title="vocabulary size", y_title="tokens", log_x=True, id="plain")
                yield CurvePlot("t", x_title="vocabulary size", y_title="tokens", log_x=True, id="merged")

    def cells(strip) -> list[tuple[str, object]]:
        return [(ch, seg.style) for seg in strip for ch in seg.text]

    app = Two()
    async with app.run_test(size=(100, 20)) as pilot:
        plain, merged = app.query_one("#plain", ScatterPlot), app.query_one("#merged", CurvePlot)
        for plot in (plain, merged):
            plot.set_data(series, title="Vocabulary sweep")
        await pilot.pause()
        assert plain.size == merged.size
        plain_lines = [plain.render_line(y) for y in range(plain.size.height)]
        merged_lines = [merged.render_line(y) for y in range(merged.size.height)]
        assert "".join(s.text for s in merged_lines).strip()
        for a, b in zip(plain_lines, merged_lines):
            assert cells(a) == cells(b)
        assert sum(len(list(s)) for s in merged_lines) < sum(len(list(s)) for s in plain_lines) / 3


async def test_train_from_files(tmp_path):
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text("low lower lowest " * 5, encoding="utf-8")
    b.write_text("newer newest wider " * 5, encoding="utf-8")
    expected = trainer.train([a.read_text(), b.read_text()], merges=10, pattern=trainer.PATTERN_WORDS)
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="10", kind="merges", files=f"{a} {b}", pattern="words")
        screen.action_train()
        await until(pilot, lambda: screen.state == "done")
        assert [m.bytes for m in screen.result.merges] == [m.bytes for m in expected.merges]


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"files": "/no/such/file.txt"}, "no such file"),
        ({"size": "100"}, "at least 256"),
        ({"size": "x1"}, "whole number"),
        ({"minfreq": "0"}, "at least 1"),
        ({"specials": "<a> <a>"}, "given twice"),
        ({"pattern": "custom"}, "type a regex"),
    ],
)
async def test_bad_input_is_one_line_and_keeps_the_form(form, message):
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, **form)
        screen.action_train()
        await until(pilot, lambda: screen.state in ("idle", "failed"))
        await pilot.pause(0.3)
        assert message in status(screen)
        assert screen.result is None
        if "files" in form:
            assert screen.query_one("#tr-files", Input).value == form["files"]


async def test_binary_file_is_refused(tmp_path):
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x00\x01\xff" * 100)
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, files=str(blob))
        screen.action_train()
        await until(pilot, lambda: screen.state == "failed")
        await pilot.pause(0.2)
        assert "binary file" in status(screen)


async def test_cancel_a_run_keeps_nothing(monkeypatch, data_dir):
    gate = threading.Event()
    real_train = trainer.train

    def slow_train(texts, *, progress=None, cancel=None, **kwargs):
        def slow(p):
            progress(p)
            if p.merges_done >= 5:
                gate.set()
                cancel.wait(5)  # hold here until the user cancels
        return real_train(texts, progress=slow, cancel=cancel, **kwargs)

    monkeypatch.setattr(trainer, "train", slow_train)
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="200", kind="merges")
        screen.query_one("#tr-name", Input).value = "halfway"
        await pilot.press("ctrl+r")
        await until(pilot, gate.is_set)
        await until(pilot, lambda: len(screen.query_one("#tr-merges", MergeList).rows) >= 5)
        assert screen.state == "training"
        assert not screen.query_one("#tr-cancel", Button).disabled
        await pilot.press("escape")  # cancels, does not leave
        await until(pilot, lambda: screen.state == "cancelled")
        assert app.screen is screen
        assert screen.result is None
        assert "nothing was kept or saved" in status(screen)
        assert screen.query_one("#tr-save", Button).disabled
        await pilot.press("ctrl+s")
        assert "train first" in status(screen)
        assert not any(data_dir.rglob("*")) or not any(p.is_file() for p in data_dir.rglob("*"))
        await pilot.press("escape")  # now leaves
        await pilot.pause()
        assert not isinstance(app.screen, TrainScreen)


async def test_save_and_reopen(data_dir):
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="30", kind="merges")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.state == "done")
        result = screen.result
        screen.query_one("#tr-name", Input).value = "mine"
        await pilot.press("ctrl+s")
        await pilot.pause()
        path = data_dir / "tokenizers" / "mine.json"
        assert path.is_file()
        assert screen.saved_name == "mine"
        await pilot.press("ctrl+o")  # open in the token view
        await idle(pilot)
        await pilot.pause(0.3)
        await idle(pilot)
        assert not isinstance(app.screen, TrainScreen)
        tok = app.tokenizer
        assert tok.n_vocab == result.n_vocab
        assert tok.encode(TEXT) == result.tokenizer().encode(TEXT)


async def test_a_trained_tokenizer_outlives_the_screen_and_quit_asks_before_discarding_it(data_dir):
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="30", kind="merges")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.state == "done")
        result = screen.result
        rows = list(screen.query_one("#tr-merges", MergeList).rows)
        await pilot.press("escape")  # leave the screen: the run is kept
        await pilot.pause()
        assert not isinstance(app.screen, TrainScreen)
        await pilot.press("f8")
        await pilot.pause()
        again = app.screen
        assert isinstance(again, TrainScreen) and again is not screen
        assert again.result is result and again.state == "done"
        assert again.query_one("#tr-merges", MergeList).rows == rows
        assert "Not saved yet" in status(again)
        assert not again.query_one("#tr-save", Button).disabled
        # quitting asks first; Cancel stays
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.is_running and "Unsaved tokenizer" in str(app.screen.query_one("#dialog-title").render())
        await pilot.press("c")
        await pilot.pause()
        assert app.is_running and app.screen is again
        # saved, it no longer asks
        again.query_one("#tr-name", Input).value = "kept"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert (data_dir / "tokenizers" / "kept.json").is_file()
        assert app.trained.saved_name == "kept" and not app.trained.unsaved
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


async def test_compare_from_training_keeps_the_explorers_encoding(data_dir):
    from tokscope.app.screens.compare import CompareScreen

    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="20", kind="merges")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.state == "done")
        screen.query_one("#tr-name", Input).value = "cmp"
        await pilot.press("ctrl+s", "f5")
        await idle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.slots[0].name == "cmp"
        assert app.encoding_name == "o200k_base"  # not switched behind the user's back


async def test_quit_discards_an_unsaved_tokenizer_when_told(data_dir):
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="20", kind="merges")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.state == "done")
        await pilot.press("escape", "ctrl+q")
        await pilot.pause()
        assert app.is_running
        await pilot.press("d")  # discard
        await pilot.pause(0.2)
        assert not app.is_running and app.trained is None
        assert not (data_dir / "tokenizers").exists() or not any((data_dir / "tokenizers").iterdir())


async def test_existing_name_asks_before_overwriting(data_dir):
    from tokscope.app.screens.dialogs import ChoiceDialog

    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="10", kind="merges")
        screen.action_train()
        await until(pilot, lambda: screen.state == "done")
        screen.query_one("#tr-name", Input).value = "dup"
        screen.action_save()
        await pilot.pause()
        path = data_dir / "tokenizers" / "dup.json"
        first = path.read_bytes()
        await set_form(pilot, screen, size="20")
        screen.action_train()
        await until(pilot, lambda: screen.state == "done")
        screen.action_save()
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.press("escape")  # keep the old one
        await pilot.pause()
        assert path.read_bytes() == first
        assert "already exists" in status(screen)
        screen.action_save()
        await pilot.pause()
        await pilot.press("o")  # overwrite
        await pilot.pause()
        assert path.read_bytes() != first
        assert screen.saved_name == "dup"


async def test_save_needs_a_plain_name(data_dir):
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="5", kind="merges")
        screen.action_train()
        await until(pilot, lambda: screen.state == "done")
        screen.action_save()
        assert "type a name" in status(screen)
        screen.query_one("#tr-name", Input).value = "../evil"
        screen.action_save()
        assert "cannot be a saved tokenizer's name" in status(screen)
        assert not (data_dir / "tokenizers").exists()


def test_frozen_heap_thaws_only_what_it_froze():
    import gc

    gc.unfreeze()  # (no app runs now; one that froze its heap thaws it when it closes)
    assert gc.get_freeze_count() == 0
    with train_screen.frozen_heap():
        assert gc.get_freeze_count() > 0
        with train_screen.frozen_heap():  # a second run at the same time
            pass
        assert gc.get_freeze_count() > 0  # still frozen for the first
    assert gc.get_freeze_count() == 0
    gc.freeze()  # as the explorer does for its lifetime
    try:
        frozen = gc.get_freeze_count()
        with train_screen.frozen_heap():
            pass
        assert gc.get_freeze_count() == frozen  # not thawed by a training run
    finally:
        gc.unfreeze()


def test_helpers():
    assert train_screen.parse_specials(" <a>,<b>  ") == ["<a>", "<b>"]
    assert train_screen.resolve_pattern("none")[0] == trainer.PATTERN_NONE
    assert train_screen.resolve_pattern("cl100k")[0] == registry.load("cl100k_base").pattern
    with pytest.raises(train_screen.TokscopeError):
        train_screen.resolve_pattern("custom", "(")


def test_snapshot_after_training(snap_compare):
    async def run_before(pilot):
        screen = await open_train(pilot)
        await set_form(pilot, screen, size="60", kind="merges")
        screen.action_train()
        await until(pilot, lambda: screen.state == "done")
        await idle(pilot)
        await pilot.pause(0.3)
        # the run time varies: hide it from the snapshot
        text = status(screen)
        screen.status(text.split(" · ")[0] + " · corpus …")
        await pilot.pause()

    assert snap_compare(make(), terminal_size=(100, 30), run_before=run_before)


def test_snapshot_form(snap_compare):
    async def run_before(pilot):
        await open_train(pilot)
        await pilot.pause()

    assert snap_compare(make(), terminal_size=(80, 24), run_before=run_before)
