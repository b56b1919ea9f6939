"""The training screen driven headless, for bench_insights.py: the bare trainer as the screen calls
it, and one run through the screen timed from pressing Train to the first paint of the result."""

from __future__ import annotations

import asyncio
import resource
import time
from dataclasses import dataclass

from textual.app import App
from textual.widgets import Input, Select, Static

from tokscope.app.screens.train import TrainScreen
from tokscope.core.train import trainer


def bench_bare_train(text: str, merges: int) -> trainer.TrainResult:
    """The trainer called directly, as the screen calls it (with a progress callback)."""
    reports: list[trainer.TrainProgress] = []
    return trainer.train([text], merges=merges, pattern=trainer.PATTERN_WORDS, progress=reports.append)


def process_cpu() -> float:
    """CPU seconds this process has used (all threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class ScreenRun:
    """One training run through the screen, timed from pressing Train (seconds)."""

    finished: float  #: wall-clock until the result was ready (the last report drained)
    shown: float  #: wall-clock until the screen showing the result was painted
    cpu: float  #: process CPU (all threads) until painted
    ui_cpu: float  #: CPU of the UI thread alone until painted (the screen's own work)


async def bench_screen_train(text: str, merges: int) -> ScreenRun:
    """Train through the screen in a headless app, as a user would with ``merges`` merges.

    Nothing polls while it trains: the caller waits on an event that the screen's first paint
    of the result sets (a poll would wake the UI thread, and each wake takes the interpreter
    lock from the trainer).
    """

    class Host(App):
        def __init__(self) -> None:
            super().__init__()
            self.text = text

    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = TrainScreen(texts=[text])
        await app.push_screen(screen)
        await pilot.pause()
        screen.query_one("#tr-size", Input).value = str(merges)
        screen.query_one("#tr-size-kind", Select).value = "merges"
        screen.query_one("#tr-pattern", Select).value = "words"
        await pilot.pause()
        shown = asyncio.Event()
        record_shown = screen._shown

        def on_shown(run: int) -> None:
            record_shown(run)
            shown.set()

        screen._shown = on_shown  # type: ignore[method-assign]
        start, cpu, ui_cpu = time.perf_counter(), time.process_time(), time.thread_time()
        screen.action_train()
        while not shown.is_set():
            try:
                await asyncio.wait_for(shown.wait(), timeout=1.0)
            except asyncio.TimeoutError:
                if screen.state in ("failed", "cancelled", "idle"):
                    raise RuntimeError(str(screen.query_one("#tr-status", Static).render())) from None
        ui_cpu = time.thread_time() - ui_cpu
        assert screen.finished_at is not None and screen.shown_at is not None
        return ScreenRun(screen.finished_at[0] - start, screen.shown_at[0] - start, screen.shown_at[1] - cpu, ui_cpu)
