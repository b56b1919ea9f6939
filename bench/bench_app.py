"""Explorer speed: first paint, keystroke to repaint, scroll repaint, peak memory (o200k_base).

Run by hand: ``python bench/bench_app.py`` (add ``--quick`` for fewer edits). For texts of 10 KB,
100 KB and 1 MB it drives the real app headless (Textual's ``run_test``) and prints each figure
with its target and, as a reference measured in the same process, the time a full re-encode of
the same text takes with the core (what every keystroke would cost without incremental
re-tokenization).

Targets: first paint < 1 s; keystroke to repaint < 50 ms at 100 KB and < 100 ms at 1 MB;
scroll repaint < 50 ms; peak memory < 300 MB.

Keystroke to repaint is timed from the moment the key event is handed to the app (as the terminal
driver does) to the first frame the app sends to the terminal after the token view shows the
pieces of the edited text. Pilot's ``press`` is not used for it: it waits for the process to look
idle (20 ms sleeps) and would add that to every figure. Headless, Textual skips turning a frame
into escape sequences; the bench does that work too, so a frame costs what it would in a terminal.
Name sizes to run only those: ``python bench/bench_app.py 1MB``; ``line`` is one line of 200,000
characters (no newline), edited in its middle.

``--floor`` also measures the floor: the same keystrokes in a bare Textual app holding only a
``TextArea`` with the same text (no tokenizing), timed the same way, to the first frame after the
text changed. No explorer figure can be below it. ``--rounds N`` (with ``--floor``) measures the
explorer and the floor in N alternating pairs and gives the median of the pairs' ratios, so a
machine whose load changes during the run shifts both sides alike.

Each keystroke's figure is given twice: wall time, and the main thread's CPU time over the same
span (``time.thread_time``; both apps do a keystroke's work on the main thread at these sizes). On
a busy machine wall time includes waiting for a core; the CPU figure does not.
"""

from __future__ import annotations

import asyncio
import os
import random
import resource
import statistics
import sys
import time
import unicodedata

from textual import events
from textual.app import App
from textual.keys import REPLACED_KEYS, _get_unicode_name_from_key
from textual.widgets import TextArea

from tokscope.app.app import ExplorerApp
from tokscope.app.widgets.token_view import TokenView
from tokscope.sample_texts import read_sample
from tokscope.sources import registry

SIZES = [("10 KB", 10_000), ("100 KB", 100_000), ("1 MB", 1_000_000), ("line", 200_000)]
KEYSTROKE_TARGET = {"10 KB": 0.050, "100 KB": 0.050, "1 MB": 0.100, "line": 0.050}


def one_line(size: int) -> str:
    """A single line of ``size`` characters (prose and other scripts, newlines taken out)."""
    return make_text(size * 2).replace("\n", " ")[:size]


def make_text(size: int) -> str:
    parts = [read_sample(name) for name in ("prose.txt", "code.py", "multiscript.txt", "data.json", "numbers.txt")]
    blob = "\n".join(parts)
    text = (blob * (size // len(blob.encode()) + 1))
    return text.encode()[:size].decode("utf-8", "ignore")


_painted: list[float] = []
_original_render_line = TokenView.render_line


def _render_line(self, y):
    if self.doc is not None:
        _painted.append(time.perf_counter())
    return _original_render_line(self, y)


TokenView.render_line = _render_line

#: times of the frames the app sent to the terminal after its token view showed the current doc
_frames: list[tuple[float, int, float]] = []
#: a wait for a frame: (kind, since, version, future) resolved by the frame hooks below with the
#: frame's (time, thread CPU time); the waits sleep on it instead of polling (a polling loop
#: costs CPU on the same thread, in proportion to the wait)
_waiting: list = []


def _frame_shown(kind: str, t: float, version: int, cpu: float) -> None:
    for wait in list(_waiting):
        want, since, newer_than, future = wait
        if want == kind and t > since and version > newer_than and not future.done():
            future.set_result((t, cpu))
            _waiting.remove(wait)


async def _wait_for(kind: str, since: float, version: int, timeout: float) -> tuple[float, float]:
    frames = _frames if kind == "explorer" else _floor_frames
    for t, v, c in frames:
        if t > since and v > version:
            return t, c
    future = asyncio.get_running_loop().create_future()
    wait = (kind, since, version, future)
    _waiting.append(wait)
    try:
        return await asyncio.wait_for(future, timeout)
    except asyncio.TimeoutError:
        raise TimeoutError("no repaint") from None
    finally:
        if wait in _waiting:
            _waiting.remove(wait)
_original_display = App._display


def _display(self, screen, renderable):
    # headless, Textual skips turning the frame into escape sequences; do it here so the timing
    # includes what a real terminal session pays, then throw the text away
    if renderable is not None and self.is_headless and not self._batch_count:
        renderable.render_segments(self.console)
    _original_display(self, screen, renderable)
    if isinstance(self, ExplorerApp) and self.idle and self.token_view.doc is self.doc:
        frame = (time.perf_counter(), self._text_version, time.thread_time())
        _frames.append(frame)
        _frame_shown("explorer", *frame)


App._display = _display


class FloorApp(App):
    """The floor: a bare app with one TextArea; ``version`` counts its text changes."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.version = 0

    def compose(self):
        yield TextArea(self.text, soft_wrap=True)

    def on_text_area_changed(self) -> None:
        self.version += 1


_floor_frames: list[tuple[float, int, float]] = []
_display_with_explorer = App._display


def _display_floor(self, screen, renderable):
    _display_with_explorer(self, screen, renderable)
    if isinstance(self, FloorApp):
        frame = (time.perf_counter(), self.version, time.thread_time())
        _floor_frames.append(frame)
        _frame_shown("floor", *frame)


App._display = _display_floor


async def measure_floor(size: int, edits: int, text: str | None = None) -> dict:
    """Keystroke to the first frame showing the edit, in :class:`FloorApp`."""
    text = make_text(size) if text is None else text
    _floor_frames.clear()
    app = FloorApp(text)
    async with app.run_test(size=(120, 40)) as pilot:
        area = app.query_one(TextArea)
        area.focus()
        await pilot.pause()
        rng = random.Random(1)
        lines = text.count("\n")
        times = []
        cpu = []
        for k in range(edits):
            if lines == 0:
                row, col = 0, len(area.text) // 2 + rng.randrange(-2000, 2000)
            else:
                row, col = lines // 2 + rng.randrange(-20, 20), rng.randrange(0, 5)
            area.move_cursor((row, col))
            await pilot.pause()
            await asyncio.sleep(0.02)
            key = rng.choice(["x", "space", "backspace", "e", "enter", "1"])
            before = app.version
            cpu0 = time.thread_time()
            start = time.perf_counter()
            send_key(app, key)
            done, cpu1 = await _wait_for("floor", start, before, 30)
            times.append(done - start)
            cpu.append(cpu1 - cpu0)
        await pilot.pause()
    times.sort()
    return {"key_median": statistics.median(times), "key_p95": times[int(len(times) * 0.95) - 1 if len(times) >= 20 else -1],
            "key_cpu": statistics.median(cpu)}


async def wait_frame(app, since: float, version: int = -1, timeout: float = 30.0) -> float:
    """Wait for the first frame after ``since`` that shows the pieces of a text newer than
    ``version`` (the app's count of edits); return its time."""
    return (await wait_frame_cpu(app, since, version, timeout))[0]


async def wait_frame_cpu(app, since: float, version: int = -1, timeout: float = 30.0) -> tuple[float, float]:
    """:func:`wait_frame`, and the main thread's CPU time when that frame was sent."""
    return await _wait_for("explorer", since, version, timeout)


async def wait_painted(app, since: float, timeout: float = 30.0) -> float:
    """Wait until the app is idle and the token view painted after ``since``; return that time."""
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        await asyncio.sleep(0.001)
        if app.idle and _painted and _painted[-1] > since and app.token_view.doc is app.doc:
            # wait for the paint that follows the last apply
            await asyncio.sleep(0)
            return _painted[-1]
    raise TimeoutError("no repaint")


def send_key(app, key: str) -> None:
    """A key press as the terminal driver delivers it (no test-harness waits around it)."""
    # the same event Pilot.press builds (textual.app.App._press_keys)
    try:
        char = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
    except KeyError:
        char = key if len(key) == 1 else None
    event = events.Key(key, char)
    event.set_sender(app)
    app._driver.send_message(event)


async def measure(label: str, size: int, edits: int, text: str | None = None) -> dict:
    text = make_text(size) if text is None else text
    _painted.clear()
    _frames.clear()
    t0 = time.perf_counter()
    app = ExplorerApp(text, encoding="o200k_base", palette="truecolor")
    result: dict = {"size": label}
    async with app.run_test(size=(120, 40)) as pilot:
        # first paint with tokens (a large text paints its first part before the rest is done)
        while not (_painted and app.token_view.doc is not None):
            await asyncio.sleep(0.001)
        result["first_paint"] = _painted[0] - t0
        await wait_frame(app, 0)
        result["full"] = time.perf_counter() - t0
        editor = app.editor
        rng = random.Random(1)
        lines = app.text.count("\n")
        times = []
        cpu = []
        for k in range(edits):
            if lines == 0:  # one long line: edit in its middle
                row, col = 0, len(app.text) // 2 + rng.randrange(-2000, 2000)
            else:
                row, col = lines // 2 + rng.randrange(-20, 20), rng.randrange(0, 5)
            editor.move_cursor((row, col))
            await pilot.pause()
            await wait_frame(app, 0)
            await asyncio.sleep(0.02)  # let the last frame's timers settle
            key = rng.choice(["x", "space", "backspace", "e", "enter", "1"])
            before = app._text_version
            cpu0 = time.thread_time()
            start = time.perf_counter()
            send_key(app, key)
            done, cpu1 = await wait_frame_cpu(app, start, before)
            if app._text_version == before or app.doc.text != app.text:
                raise RuntimeError(f"key {key!r} did not reach the pieces")
            times.append(done - start)
            cpu.append(cpu1 - cpu0)
        result["key_times"] = times
        result["key_cpu"] = statistics.median(cpu)
        times = sorted(times)
        result["key_median"] = statistics.median(times)
        result["key_p95"] = times[int(len(times) * 0.95) - 1 if len(times) >= 20 else -1]
        view = app.token_view
        height = view.scrollable_content_region.height
        scroll_times = []
        for k in range(20):
            target = rng.randrange(0, max(1, len(view.rows) - height))
            start = time.perf_counter()
            view.scroll_to(y=target, animate=False)
            view.refresh_all()  # every row drawn again
            for y in range(height):
                view.render_line(y)
            scroll_times.append(time.perf_counter() - start)
        result["scroll_median"] = statistics.median(scroll_times)
        result["scroll_max"] = max(scroll_times)
        tok = app.tokenizer
        start = time.perf_counter()
        tok.encode(app.text, disallowed_special=())
        result["reference_full_encode"] = time.perf_counter() - start
        await pilot.pause()
        await wait_frame(app, 0)
    return result


def main() -> None:
    quick = "--quick" in sys.argv
    edits = 20 if quick else 60
    registry.load("o200k_base")
    print(f"explorer bench: o200k_base, 120x40 headless, {edits} edits in the middle of the text\n")
    header = f"{'text':>7} {'first paint':>12} {'all tokens':>11} {'key median':>11} {'key p95':>9} {'scroll':>8} {'full re-encode (ref)':>21} {'key/ref':>8}"
    print(header)
    rows = []
    only = [a.replace(" ", "").lower() for a in sys.argv[1:] if not a.startswith("-")]
    for label, size in SIZES:
        if only and label.replace(" ", "").lower() not in only:
            continue
        r = asyncio.run(measure(label, size, edits, one_line(size) if label == "line" else None))
        rows.append(r)
        print(
            f"{label:>7} {r['first_paint'] * 1000:>10.0f}ms {r['full'] * 1000:>9.0f}ms {r['key_median'] * 1000:>9.1f}ms"
            f" {r['key_p95'] * 1000:>7.1f}ms {r['scroll_median'] * 1000:>6.1f}ms {r['reference_full_encode'] * 1000:>19.1f}ms"
            f" {r['key_median'] / r['reference_full_encode']:>8.2f}"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory (max RSS, whole process incl. o200k_base and the 1 MB doc): {peak:.0f} MB (target < 300 MB)")
    print("\nagainst targets (ratio = measured / target, <= 1 meets it):")
    for r in rows:
        print(
            f"  {r['size']:>7}: first paint {r['first_paint'] / 1.0:.2f}, keystroke p95 "
            f"{r['key_p95'] / KEYSTROKE_TARGET[r['size']]:.2f}, scroll {r['scroll_max'] / 0.050:.2f}"
        )
    print(f"  memory {peak / 300:.2f}")
    if "--floor" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
        print(f"\nfloor: the same keystrokes in a bare Textual app with a TextArea of the same text"
              f" ({rounds} alternating pair{'s' if rounds > 1 else ''} of explorer and floor runs per size)")
        for label, size in SIZES:
            if only and label.replace(" ", "").lower() not in only:
                continue
            text = one_line(size) if label == "line" else None
            pairs = []
            for _ in range(rounds):
                mine = asyncio.run(measure(label, size, edits, text))
                f = asyncio.run(measure_floor(size, edits, text))
                pairs.append((mine, f))
                print(f"{label:>7}  explorer {mine['key_median'] * 1000:6.1f}ms (cpu {mine['key_cpu'] * 1000:5.1f}ms)"
                      f"  floor {f['key_median'] * 1000:6.1f}ms (cpu {f['key_cpu'] * 1000:5.1f}ms)"
                      f"  median {mine['key_median'] / f['key_median']:.2f}x  cpu {mine['key_cpu'] / f['key_cpu']:.2f}x"
                      f"  p95 {mine['key_p95'] / f['key_p95']:.2f}x")
            wall = statistics.median(m["key_median"] / f["key_median"] for m, f in pairs)
            cpu = statistics.median(m["key_cpu"] / f["key_cpu"] for m, f in pairs)
            print(f"{label:>7}  explorer / floor, median of {rounds} pair{'s' if rounds > 1 else ''}:"
                  f" wall {wall:.2f}x, cpu {cpu:.2f}x")
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
