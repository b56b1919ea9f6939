"""The training screen: learn a BPE vocabulary from files or the current input and watch it learn.

Pick the corpus (file paths, or nothing for the explorer's current text) and the trainer's options
(size, pre-tokenization pattern, tie rule, minimum frequency, special tokens), then train. Training
runs in a thread worker (:func:`tokscope.core.trainer.train`); its progress callback only appends
to a list, and a timer takes what is new five times a second into the progress bar, the list of
merges (pair, new token, count) and the falling corpus length, so the screen never freezes and
the worker is barely slowed. Escape cancels a run (nothing is kept or saved).

When it finishes: save it under a name in the user's data directory (asking before overwriting),
open it in the token view (the explorer switches its encoding to it), or compare it with the
built-in encodings. The curve plots the vocabulary sweep (vocabulary size against the corpus's
length in tokens, or characters per token), with the built-in encodings' points on the same
corpus on the same axes.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.geometry import Region, Size
from textual.reactive import var
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Button, Footer, Input, Label, ProgressBar, Select, Static

from ...core import stats as geo
from ...core import trainer
from ...core.errors import CancelledError, TokscopeError
from .insights import ScatterPlot, Series

#: Patterns offered in the form; the OpenAI ones are looked up in the sources by name.
PATTERN_CHOICES = ("words", "none", "gpt2", "cl100k", "o200k", "custom")
#: Built-in encodings whose points go on the sweep plot (those that can be loaded).
COMPARE_ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
#: Largest corpus file read (bytes).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: How often the screen takes the trainer's new reports (seconds).
POLL_INTERVAL = 0.2
#: How often the live curve is redrawn while training (seconds): it is the costliest widget to
#: draw, and the status line already shows the corpus length falling at every tick.
CURVE_INTERVAL = 1.0


_frozen_lock = threading.Lock()
_frozen_runs = 0
_frozen_here = False  # whether this module froze the heap (and so may thaw it)


@contextlib.contextmanager
def frozen_heap():
    """Leave the objects that exist now out of the garbage collector's full passes for a while.

    The trainer allocates hundreds of thousands of small objects, so the collector runs full
    passes while it trains; each one would walk the whole app (its widgets, styles, the open
    text's pieces), none of which training touches. Freezing them (:func:`gc.freeze`, constant
    time) keeps those passes to what is new; leaving unfreezes them when the last run leaves, so
    nothing is kept from the collector for longer than a run. A heap someone else froze (the
    explorer freezes its long-lived objects for its lifetime) is left as it is: unfreezing is all
    or nothing. (Counting the frozen objects walks them all, so it is done once, on entry.)

    >>> with frozen_heap():
    ...     gc.get_freeze_count() > 0
    True
    """
    global _frozen_runs, _frozen_here
    with _frozen_lock:
        if _frozen_runs == 0:
            _frozen_here = gc.get_freeze_count() == 0
            if _frozen_here:
                gc.freeze()
        _frozen_runs += 1
    try:
        yield
    finally:
        with _frozen_lock:
            _frozen_runs -= 1
            if _frozen_runs == 0 and _frozen_here:
                _frozen_here = False
                gc.unfreeze()


class TrainFormError(TokscopeError):
    """A form value the trainer cannot use (shown in the status line)."""


def resolve_pattern(choice: str, custom: str = "") -> tuple[str, str]:
    """The regex for a pattern choice and the name recorded with it.

    >>> resolve_pattern("words")
    ('\\\\S+', 'words')
    >>> resolve_pattern("custom", r"\\w+")
    ('\\\\w+', '\\\\w+')
    """
    if choice in trainer.CORE_PATTERNS:
        return trainer.CORE_PATTERNS[choice], choice
    if choice == "custom":
        custom = custom.strip()
        if not custom:
            raise TrainFormError("type a regex for the custom pattern")
        trainer.compile_training_pattern(custom)
        return custom, custom
    from ...sources import registry
    from ...sources import tiktoken_adapter as tk

    name = registry.canonical_name(choice)
    try:
        return tk.encoding_spec(name).pattern, choice
    except Exception as exc:  # noqa: BLE001 - any failure is one line for the user
        raise TrainFormError(f"cannot read the {choice} pattern: {exc}") from None


def parse_specials(value: str) -> list[str]:
    """Special tokens typed as a comma- or space-separated list.

    >>> parse_specials("<pad>, <eos>  <|endoftext|>")
    ['<pad>', '<eos>', '<|endoftext|>']
    """
    return [t for t in value.replace(",", " ").split() if t]


def read_corpus(paths: Sequence[str], limit: int = MAX_FILE_BYTES) -> list[str]:
    """Read each file as UTF-8; a file that cannot be read raises a one-line :class:`TrainFormError`."""
    texts = []
    for raw in paths:
        path = Path(raw).expanduser()
        try:
            size = path.stat().st_size
            if path.is_dir():
                raise TrainFormError(f"{raw} is a directory, not a file")
            if size > limit:
                raise TrainFormError(f"{raw} is {size:,} bytes, over the {limit:,}-byte limit")
            data = path.read_bytes()
        except FileNotFoundError:
            raise TrainFormError(f"{raw}: no such file") from None
        except PermissionError:
            raise TrainFormError(f"{raw}: permission denied") from None
        except OSError as exc:
            raise TrainFormError(f"{raw}: {exc.strerror or exc}") from None
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            kind = "a binary file" if b"\x00" in data[:8192] else "not valid UTF-8"
            raise TrainFormError(f"{raw} is {kind} (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    return texts


def merge_row(index: int, m: trainer.TrainProgress | trainer.Merge, new_id: int) -> str:
    """One line of the merge list: number, the pair, the new token and its id, the count.

    >>> merge_row(1, trainer.Merge(b"t", b"h", 256, 42, 116, 104), 256)
    '     1  t + h  →  th  #256  ×42'
    """
    left = geo.token_label(m.left)
    right = geo.token_label(m.right)
    new = geo.token_label(m.left + m.right)
    return f"{index:>6}  {left} + {right}  →  {new}  #{new_id}  ×{m.count:,}"


class MergeList(ScrollView, can_focus=True):
    """The learned merges, one per line, drawn with the Line API; follows the end while training.

    Rows are the trainer's :class:`~tokscope.core.trainer.TrainProgress` reports as they came
    (nothing is formatted ahead); a row becomes text only when it is on screen.

    The list never asks for a layout while it fills: its scrollbars are fixed (the vertical one
    always shown, the scrollable width constant), so a new row changes only the scroll range,
    the thumb and the lines. (Assigning ``virtual_size`` would lay out the whole screen on every
    tick, and a scrollbar appearing mid-run costs three layouts: more than a short run's drawing.)
    """

    DEFAULT_CSS = """
    MergeList { height: 1fr; border: round $primary 50%; overflow-y: scroll; overflow-x: auto; }
    """

    BINDINGS = [
        Binding("up", "scroll_up", show=False),
        Binding("down", "scroll_down", show=False),
        Binding("pageup", "page_up", show=False),
        Binding("pagedown", "page_down", show=False),
        Binding("home", "scroll_home", show=False),
        Binding("end", "scroll_end", show=False),
    ]

    #: width of the scrollable area (a merge's line is rarely wider)
    WIDTH = 60

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: one report per merge (``merges_done`` >= 1), in order; formatted when drawn
        self.rows: list[trainer.TrainProgress] = []
        #: keep the newest merge in view (moving up turns it off; End turns it back on)
        self.follow = True
        self._pass: tuple[Style, int] | None = None

    def on_mount(self) -> None:
        super().on_mount()
        self.virtual_size = Size(self.WIDTH, 0)  # the one layout: the horizontal scrollbar, if any

    def _set_height(self, height: int) -> None:
        """Change the number of rows without a layout pass (nothing outside this list moves)."""
        size = Size(self.WIDTH, height)
        if size == self.virtual_size:
            return
        self.set_reactive(MergeList.virtual_size, size)
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.window_virtual_size = height
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def clear(self) -> None:
        self.follow = True
        if not self.rows:  # already empty: nothing to redraw
            return
        self.rows = []
        self._set_height(0)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def extend(self, rows: Sequence[trainer.TrainProgress]) -> None:
        """Append rows; scroll to keep the last one in view if the list was following it."""
        if not rows:
            return
        at_end = self.follow or self.scroll_y >= self.max_scroll_y - 1
        self.rows.extend(rows)
        self._set_height(len(self.rows))
        if at_end:
            self.scroll_to(y=self.max_scroll_y, animate=False)
        self.refresh()

    def action_scroll_end(self) -> None:
        self.follow = True
        super().action_scroll_end()

    # moving up stops following the newest merge (End, or scrolling back to it, resumes)
    def action_scroll_up(self) -> None:
        self.follow = False
        super().action_scroll_up()

    def action_page_up(self) -> None:
        self.follow = False
        super().action_page_up()

    def action_scroll_home(self) -> None:
        self.follow = False
        super().action_scroll_home()

    def on_mouse_scroll_up(self) -> None:
        self.follow = False

    def line(self, index: int) -> str:
        """The text of merge ``index`` (0-based) as the list shows it."""
        p = self.rows[index]
        return merge_row(p.merges_done, p, 255 + p.merges_done)

    def render_lines(self, crop: Region) -> list[Strip]:
        # the style and width are the same for every line of one pass: look them up once
        # (``rich_style`` walks the styles of the widget and its ancestors on every call)
        self._pass = (self.rich_style, self.scrollable_content_region.width)
        try:
            return super().render_lines(crop)
        finally:
            self._pass = None

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        base, width = self._pass or (self.rich_style, self.scrollable_content_region.width)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        strip = Strip([Segment(self.line(index), base)])
        x = int(self.scroll_offset.x)
        if x:
            strip = strip.crop(x, x + width)
        return strip.adjust_cell_length(width, base)


class CurvePlot(ScatterPlot):
    """The scatter plot, drawn in fewer pieces: neighbouring cells of one style become one segment.

    A plain :class:`ScatterPlot` gives every cell its own segment (about 800 for this plot),
    and each costs Textual's line pipeline; merged, a row is a handful. The picture is the same.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._merged: list[list[Segment]] | None = None
        self._merged_for: tuple[int, int, Style | None] = (0, 0, None)
        self._base: Style | None = None

    def invalidate(self) -> None:
        self._merged = None
        super().invalidate()

    def _segments(self, width: int, height: int, base: Style) -> list[list[Segment]]:
        """The plot's rows as segments, runs of one style merged (cached until the data or size change)."""
        if self._merged is None or self._merged_for != (width, height, base):
            merged = []
            for row in self.build(width, height) if width > 0 and height > 0 else []:
                segments: list[Segment] = []
                texts: list[str] = []
                style: Style | None = None
                for text, cell_style in row:
                    if not text:
                        continue
                    if texts and cell_style != style:
                        segments.append(Segment("".join(texts), base + style if style else base))
                        texts = []
                    style = cell_style
                    texts.append(text)
                if texts:
                    segments.append(Segment("".join(texts), base + style if style else base))
                merged.append(segments)
            self._merged, self._merged_for = merged, (width, height, base)
        return self._merged

    def render_lines(self, crop: Region) -> list[Strip]:
        self._base = self.rich_style  # once per pass (it walks the styles of every ancestor)
        try:
            return super().render_lines(crop)
        finally:
            self._base = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._base or self.rich_style
        rows = self._segments(width, self.size.height, base)
        if y >= len(rows):
            return Strip.blank(width, base)
        return Strip(rows[y]).adjust_cell_length(width, base)


class TrainScreen(Screen):
    """Train a tokenizer from files or the current input (see the module docstring)."""

    DEFAULT_CSS = """
    TrainScreen { layout: vertical; }
    TrainScreen #tr-title { height: 1; background: $panel; padding: 0 1; }
    TrainScreen .tr-row { height: 1; margin-bottom: 1; }
    TrainScreen #tr-form-last { margin-bottom: 0; }
    TrainScreen .tr-row Label { padding: 0 1 0 1; width: auto; }
    TrainScreen .tr-row Input { margin-right: 1; }
    TrainScreen #tr-files { width: 1fr; }
    TrainScreen #tr-size { width: 10; }
    TrainScreen #tr-size-kind { width: 18; }
    TrainScreen #tr-pattern { width: 14; }
    TrainScreen #tr-custom { width: 1fr; }
    TrainScreen #tr-tie { width: 14; }
    TrainScreen #tr-minfreq { width: 8; }
    TrainScreen #tr-specials { width: 1fr; }
    TrainScreen #tr-name { width: 1fr; }
    TrainScreen Button { min-width: 10; margin: 0 1 0 0; }
    TrainScreen #tr-progress-row { height: 1; padding: 0 1; }
    TrainScreen #tr-status { height: 3; padding: 0 1; }
    TrainScreen #tr-results { height: 1fr; min-height: 8; }
    TrainScreen #tr-merges { width: 1fr; }
    TrainScreen #tr-curve { width: 1fr; height: 1fr; min-height: 6; }
    """

    BINDINGS = [
        Binding("escape", "cancel_or_close", "Cancel/back"),
        Binding("ctrl+r", "train", "Train", priority=True),
        Binding("ctrl+w", "save", "Save", priority=True),
        Binding("ctrl+o", "open_trained", "Open", priority=True),
        Binding("ctrl+e", "compare", "Compare", priority=True),
        Binding("ctrl+y", "toggle_curve", "Tokens/chars", priority=True),
    ]

    #: idle, reading, training, done, cancelled, failed (a ``var``: a change of state repaints
    #: only the widgets it changes, not the whole screen as a ``reactive`` on a screen would)
    state = var("idle", init=False)

    def __init__(self, texts: Sequence[str] | None = None) -> None:
        super().__init__()
        self._given_texts = list(texts) if texts is not None else None
        # what the worker of the current run reports: the trainer's progress (appended as it
        # comes; the screen takes what is new by slicing, so a merge costs the UI thread nothing
        # of its own) and the run's other news, (kind, data) tuples
        self._reports: list[trainer.TrainProgress] = []
        self._taken = 0  # how many reports are on screen
        self._events: collections.deque = collections.deque()
        self._cancel = threading.Event()
        self._run = 0
        self.result: trainer.TrainResult | None = None
        self.saved_name: str | None = None
        self.corpus: list[str] = []
        self.curve_y = "tokens"
        self.builtin_points: dict[str, tuple[int, int, int]] = {}  # name -> (n_vocab, tokens, chars)
        self.live_points: list[tuple[float, float]] = []
        self.started_at = 0.0
        self._curve_at = 0.0  # when the live curve was last redrawn
        #: (wall-clock, process CPU) seconds when the result was ready, and when it was painted
        self.finished_at: tuple[float, float] | None = None
        self.shown_at: tuple[float, float] | None = None
        self.finished_in: float | None = None
        self._after_open: str | None = None

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("Train a BPE tokenizer", id="tr-title")
        with Horizontal(classes="tr-row"):
            yield Label("Corpus")
            yield Input(placeholder="file paths separated by spaces; empty: the current input text", id="tr-files", compact=True)
        with Horizontal(classes="tr-row"):
            yield Label("Size")
            yield Input("1000", type="integer", id="tr-size", max_length=7, compact=True)
            yield Select([("vocabulary size", "vocab"), ("merges", "merges")], value="vocab",
                         allow_blank=False, id="tr-size-kind", compact=True)
            yield Label("Pattern")
            yield Select([(p, p) for p in PATTERN_CHOICES], value="words", allow_blank=False, id="tr-pattern", compact=True)
            yield Input(placeholder="custom regex", id="tr-custom", disabled=True, compact=True)
        with Horizontal(classes="tr-row"):
            yield Label("Tie")
            yield Select([("first", "first"), ("lexical", "lexical")], value="first", allow_blank=False, id="tr-tie", compact=True)
            yield Label("Min freq")
            yield Input("2", type="integer", id="tr-minfreq", max_length=6, compact=True)
            yield Label("Specials")
            yield Input(placeholder="<|endoftext|> <pad>", id="tr-specials", compact=True)
        with Horizontal(classes="tr-row", id="tr-form-last"):
            yield Button("Train ^R", id="tr-train", variant="primary", compact=True)
            yield Button("Cancel", id="tr-cancel", compact=True)
            yield Input(placeholder="name to save as", id="tr-name", compact=True)
            yield Button("Save ^W", id="tr-save", disabled=True, compact=True)
            yield Button("Open ^O", id="tr-open", disabled=True, compact=True)
            yield Button("Compare ^E", id="tr-compare", disabled=True, compact=True)
        with Horizontal(id="tr-progress-row"):
            yield ProgressBar(total=1, show_eta=False, id="tr-progress")
        yield Static("Set the options and press Train (Ctrl+R).", id="tr-status")
        with Horizontal(id="tr-results"):
            yield MergeList(id="tr-merges")
            yield CurvePlot("Corpus length", x_title="vocabulary size", y_title="tokens", log_x=False,
                            id="tr-curve")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#tr-merges", MergeList).border_title = "merges: pair → new token, count"
        if self.app.is_headless:  # steady screenshots: no blinking cursors
            for field in self.query(Input):
                field.cursor_blink = False
        self.query_one("#tr-train", Button).focus()
        self.set_interval(POLL_INTERVAL, self._drain)

    def on_unmount(self) -> None:
        self._cancel.set()

    # --- form ---------------------------------------------------------------------------------

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "tr-pattern":
            custom = self.query_one("#tr-custom", Input)
            custom.disabled = event.value != "custom"
            if not custom.disabled:
                custom.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        actions = {"tr-train": self.action_train, "tr-cancel": self.action_cancel, "tr-save": self.action_save,
                   "tr-open": self.action_open_trained, "tr-compare": self.action_compare}
        action = actions.get(event.button.id or "")
        if action is not None:
            action()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "tr-name":
            self.action_save()
        else:
            self.action_train()

    def _int(self, selector: str, what: str) -> int:
        value = self.query_one(selector, Input).value.strip()
        try:
            return int(value)
        except ValueError:
            raise TrainFormError(f"{what} must be a whole number, not {value!r}") from None

    def options(self) -> dict:
        """The trainer's keyword arguments from the form (raises :class:`TrainFormError`)."""
        size = self._int("#tr-size", "the size")
        kind = self.query_one("#tr-size-kind", Select).value
        pattern, name = resolve_pattern(str(self.query_one("#tr-pattern", Select).value),
                                        self.query_one("#tr-custom", Input).value)
        opts = {
            "vocab_size": size if kind == "vocab" else None,
            "merges": size if kind == "merges" else None,
            "pattern": pattern,
            "pattern_name": name,
            "tie": str(self.query_one("#tr-tie", Select).value),
            "min_frequency": self._int("#tr-minfreq", "the minimum frequency"),
            "special_tokens": parse_specials(self.query_one("#tr-specials", Input).value),
        }
        # check everything now, so a bad option is reported before any reading or training
        trainer.target_merges(opts["vocab_size"], opts["merges"])
        trainer.check_special_tokens(opts["special_tokens"])
        if opts["min_frequency"] < 1:
            raise TrainFormError(f"the minimum frequency must be at least 1, not {opts['min_frequency']}")
        return opts

    def status(self, message: str, *, error: bool = False) -> None:
        # the status line has a fixed height: no layout pass (it would reflow the whole screen)
        content = Text(message, style="bold red") if error else Text(message)
        self.query_one("#tr-status", Static).update(content, layout=False)

    # --- training -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.state in ("reading", "training")

    def action_train(self) -> None:
        if self.running:
            self.status("already training: Escape or Cancel stops it")
            return
        try:
            opts = self.options()
        except TokscopeError as exc:
            self.status(str(exc), error=True)
            return
        paths = self.query_one("#tr-files", Input).value.split()
        if self._given_texts is not None and not paths:
            texts: list[str] | None = list(self._given_texts)
        elif not paths:
            texts = [self.app.text]
        else:
            texts = None  # read in the worker
        self._run += 1
        self._cancel = threading.Event()
        # new lists per run: a cancelled run's worker may still report into its own, which nobody reads
        self._reports, self._taken, self._events = [], 0, collections.deque()
        self.result = None
        self.saved_name = None
        self.live_points = []
        self.builtin_points = {}
        self.finished_in = None
        self.finished_at = None
        self.shown_at = None
        self.query_one("#tr-merges", MergeList).clear()
        target = trainer.target_merges(opts["vocab_size"], opts["merges"])
        self.query_one("#tr-progress", ProgressBar).update(total=max(target, 1), progress=0)
        curve = self.query_one("#tr-curve", ScatterPlot)
        if curve.series:  # the last run's curve goes (an empty plot stays as it is until points come)
            curve.set_data([], title="Corpus length while training")
        self.state = "reading" if texts is None else "training"
        self.status("reading the corpus…" if texts is None else f"training {target:,} merges…")
        self.started_at = self._curve_at = time.perf_counter()
        self._train(self._reports, self._events, texts, paths, opts, self._cancel)

    # (a description: without one Textual writes the repr of the arguments, megabytes of corpus)
    @work(thread=True, exclusive=True, exit_on_error=False, group="train", description="train a tokenizer")
    def _train(self, reports: list, events: collections.deque, texts: list[str] | None, paths: list[str],
               opts: dict, cancel: threading.Event) -> None:
        # The trainer reports every merge; the callback is a list's own append (the cheapest
        # callable there is: no wrapper, no tuple per merge, as in the bare bench). Everything
        # else arrives in ``events`` as a (kind, data) tuple, always after the reports before it.
        try:
            if texts is None:
                texts = read_corpus(paths)
                events.append(("read", texts))
            with frozen_heap():
                result = trainer.train(texts, progress=reports.append, cancel=cancel, **opts)
        except CancelledError:
            events.append(("cancelled", None))
        except TokscopeError as exc:
            events.append(("error", str(exc)))
        except Exception as exc:  # noqa: BLE001 - the screen must survive anything the worker meets
            events.append(("error", f"{type(exc).__name__}: {exc}"))
        else:
            events.append(("done", (result, texts)))
        # show the outcome now rather than at the next tick of the timer
        try:
            self.app.call_from_thread(self._drain)
        except RuntimeError:  # the app is gone
            pass

    def action_cancel(self) -> None:
        if self.running:
            self._cancel.set()
            self.status("cancelling…")
        else:
            self.status("nothing is training")

    def action_cancel_or_close(self) -> None:
        if self.running:
            self.action_cancel()
        else:
            self._cancel.set()
            self.app.pop_screen()

    def _drain(self) -> None:
        """Move what the worker reported onto the screen (runs on a timer, on the UI thread)."""
        # the news first, then the reports: a run's last reports come before its "done", so
        # everything reported before any news taken here is in the list when it is sliced
        events = self._events
        news = [events.popleft() for _ in range(len(events))]
        reports = self._reports
        start, end = self._taken, len(reports)
        if not news and start == end:
            return
        self._taken = end
        rows = reports[start:end]  # a slice: no Python work per merge
        if rows and rows[0].merges_done == 0:
            del rows[0]
        last = reports[end - 1] if end > start else None
        if last is not None:
            # the live curve keeps about 400 points: every step-th report (one per merge, in order)
            step = max(1, last.merges_total // 400)
            for i in range(-(-start // step) * step, end, step):
                p = reports[i]
                self.live_points.append((256.0 + p.merges_done, float(p.tokens)))
        for kind, data in news:
            if kind == "read":
                self.corpus = data
                self.state = "training"
                continue
            if kind == "done":
                # the last merges go into the list; the bar, the status and the curve show the
                # result instead of this last tick
                self.query_one("#tr-merges", MergeList).extend(rows)
                rows, last = [], None
                try:
                    self._finished(*data)
                except Exception as exc:  # noqa: BLE001 - show it, keep the screen alive
                    self.state = "failed"
                    self.status(f"training finished but cannot be shown: {type(exc).__name__}: {exc}", error=True)
                continue
            self._flush(rows, last)
            rows, last = [], None
            if kind == "cancelled":
                self.state = "cancelled"
                n_done = len(self.query_one("#tr-merges", MergeList).rows)
                self.status(f"cancelled after {n_done:,} merges; nothing was kept or saved")
            elif kind == "error":
                self.state = "failed"
                self.status(str(data), error=True)
        self._flush(rows, last)

    def _flush(self, rows: list[trainer.TrainProgress], last: trainer.TrainProgress | None) -> None:
        if rows:
            self.query_one("#tr-merges", MergeList).extend(rows)
        if last is not None and self.state == "training":
            self.query_one("#tr-progress", ProgressBar).update(progress=last.merges_done)
            pair = f"{geo.token_label(last.left)} + {geo.token_label(last.right)} ×{last.count:,}" if last.left else "—"
            first = self.live_points[0][1] if self.live_points else last.tokens
            self.status(f"merge {last.merges_done:,} of {last.merges_total:,} · last pair {pair} · corpus "
                        f"{int(first):,} → {last.tokens:,} tokens")
            now = time.perf_counter()
            if now - self._curve_at >= CURVE_INTERVAL:
                self._curve_at = now
                self.query_one("#tr-curve", ScatterPlot).set_data(
                    [Series("corpus", tuple(self.live_points))], title="Corpus length while training")

    def _finished(self, result: trainer.TrainResult, texts: list[str]) -> None:
        self.finished_in = time.perf_counter() - self.started_at
        self.result = result
        self.corpus = texts
        self.state = "done"
        bar = self.query_one("#tr-progress", ProgressBar)
        bar.update(total=max(result.requested_merges, 1), progress=len(result.merges))
        skipped_pairs = getattr(result, "skipped", ())
        skipped = f"; {len(skipped_pairs)} pairs skipped (already tokens)" if skipped_pairs else ""
        self.status(
            f"{result.stop_message[0].upper()}{result.stop_message[1:]}{skipped}. Vocabulary "
            f"{result.n_vocab:,} · corpus {result.lengths[0]:,} → {result.lengths[-1]:,} tokens · "
            f"{self.finished_in:.1f} s. Save (^W), open (^O) or compare (^E)."
        )
        self._show_curve()
        self.finished_at = (time.perf_counter(), process_cpu())
        self.call_after_refresh(self._shown, self._run)
        # the built-in encodings' points come after the result is painted
        self.call_after_refresh(self._builtin_points, self._run, list(texts))

    def _shown(self, run: int) -> None:
        if run == self._run:
            self.shown_at = (time.perf_counter(), process_cpu())

    def watch_state(self, state: str) -> None:
        # Train and Cancel stay enabled (disabling the focused button would move the focus and
        # rebuild the footer mid-run); the result's buttons are enabled only when there is one.
        done = state == "done"
        for button in ("#tr-save", "#tr-open", "#tr-compare"):
            widget = self.query_one(button, Button)
            if widget.disabled == done:
                widget.disabled = not done

    # --- the curve ----------------------------------------------------------------------------

    def sweep_series(self) -> list[Series]:
        """The trained sweep and the built-in encodings' points, in the unit the curve shows."""
        result = self.result
        if result is None:
            return []
        # about 300 points are plenty for a plot a terminal wide: sweep only those sizes
        last = result.vocab_size
        sizes = list(range(256, last + 1, max(1, (last - 255) // 300)))
        if sizes[-1] != last:
            sizes.append(last)
        chosen = trainer.sweep(result, sizes)
        if self.curve_y == "tokens":
            series = [Series("trained", tuple((float(p.vocab_size), float(p.tokens)) for p in chosen))]
        else:
            series = [Series("trained", tuple((float(p.vocab_size), p.chars_per_token) for p in chosen))]
        for name, (n_vocab, tokens, chars) in sorted(self.builtin_points.items()):
            y = float(tokens) if self.curve_y == "tokens" else (chars / tokens if tokens else 0.0)
            series.append(Series(name.removesuffix("_base"), ((float(n_vocab), y),)))
        return series

    def _show_curve(self) -> None:
        curve = self.query_one("#tr-curve", ScatterPlot)
        curve.y_title = "tokens" if self.curve_y == "tokens" else "chr/tok"
        curve.log_x = bool(self.builtin_points)
        what = "corpus length in tokens" if self.curve_y == "tokens" else "characters per token"
        curve.set_data(self.sweep_series(), title=f"Vocabulary sweep: {what} (^Y)")

    def action_toggle_curve(self) -> None:
        self.curve_y = "chars" if self.curve_y == "tokens" else "tokens"
        if self.result is not None:
            self._show_curve()

    @work(thread=True, exclusive=True, exit_on_error=False, group="train-builtins", description="built-in points")
    def _builtin_points(self, run: int, texts: list[str]) -> None:
        from ...sources import registry

        points = {}
        for name in COMPARE_ENCODINGS:
            try:
                tok = registry.load(name)
                tokens = sum(len(tok.encode(t, disallowed_special=())) for t in texts)
            except Exception:  # noqa: BLE001 - an encoding that cannot load is left off the plot
                continue
            points[name] = (tok.n_vocab, tokens, sum(len(t) for t in texts))
            if run != self._run:
                return
        self.app.call_from_thread(self._got_builtins, run, points)

    def _got_builtins(self, run: int, points: dict) -> None:
        if run == self._run and self.result is not None:
            self.builtin_points = points
            self._show_curve()

    # --- after training -----------------------------------------------------------------------

    def _typed_name(self) -> str | None:
        name = self.query_one("#tr-name", Input).value.strip()
        if not name:
            self.status("type a name to save the tokenizer as", error=True)
            self.query_one("#tr-name", Input).focus()
            return None
        if "/" in name or name.startswith(".") or "\\" in name:
            self.status(f"{name!r} is not a plain name (no slashes, no leading dot)", error=True)
            return None
        return name

    def action_save(self, then: str | None = None) -> None:
        if self.result is None:
            self.status("nothing to save yet: train first", error=True)
            return
        name = self._typed_name()
        if name is None:
            return
        path = saved_path(name)
        if path.exists():
            from .dialogs import ChoiceDialog

            def answer(choice: str | None) -> None:
                if choice == "overwrite":
                    self._save(name, path, then)
                else:
                    self.status(f"not saved: {name!r} already exists (pick another name)")

            self.app.push_screen(
                ChoiceDialog("Overwrite?", f"A tokenizer named {name!r} already exists:\n{path}",
                             [("overwrite", "Overwrite"), ("cancel", "Keep it")]),
                answer,
            )
            return
        self._save(name, path, then)

    def _save(self, name: str, path: Path, then: str | None) -> None:
        assert self.result is not None
        try:
            save_result(self.result, path, name)
        except (TokscopeError, OSError) as exc:
            self.status(f"cannot save {name!r}: {exc}", error=True)
            return
        from ...sources import registry

        registry.forget(name)
        self.saved_name = name
        self.status(f"saved as {name!r} ({path})")
        if then == "open":
            self.action_open_trained()
        elif then == "compare":
            self.action_compare()

    def action_open_trained(self) -> None:
        if self.result is None:
            self.status("nothing to open yet: train first", error=True)
            return
        if self.saved_name is None:
            self.action_save(then="open")
            return
        self.app.switch_encoding(self.saved_name)
        self.app.pop_screen()

    def compare_feature(self) -> str | None:
        from ..features import FEATURES

        for feature in FEATURES:
            if feature.screen.endswith(":CompareScreen"):
                return feature.screen
        return None

    def action_compare(self) -> None:
        if self.result is None:
            self.status("nothing to compare yet: train first", error=True)
            return
        if self.saved_name is None:
            self.action_save(then="compare")
            return
        screen = self.compare_feature()
        if screen is None:
            self.status("the compare view is not available; the sweep plot shows the built-in encodings' points")
            return
        app = self.app
        target = self.saved_name

        def changed(_tokenizer) -> None:
            app.encoding_changed.unsubscribe(self)
            app.action_open_feature(screen)

        app.encoding_changed.subscribe(self, changed)
        app.switch_encoding(target)
        app.pop_screen()


def saved_path(name: str) -> Path:
    """Where a tokenizer saved under ``name`` lives in the user's data directory."""
    from ...sources import registry

    return registry.saved_dir() / f"{name}.json"


def save_result(result: trainer.TrainResult, path: Path, name: str) -> None:
    """Write ``result`` to ``path`` atomically in the saved-tokenizer format."""
    from ...core import serialize

    path.parent.mkdir(parents=True, exist_ok=True)
    serialize.save(path, serialize.from_result(result, name, metadata={"trained_in": "the explorer's training screen"}))


# ----- benchmark helpers (bench/bench_insights.py) -------------------------------------------------


def bench_bare_train(text: str, merges: int) -> trainer.TrainResult:
    """The trainer called directly, as the screen calls it (with a progress callback)."""
    reports: list[trainer.TrainProgress] = []
    return trainer.train([text], merges=merges, pattern=trainer.PATTERN_WORDS, progress=reports.append)


def process_cpu() -> float:
    """CPU seconds this process has used (all threads)."""
    import resource

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
    import asyncio

    from textual.app import App

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
        await pilot.pause()
        shown = asyncio.Event()
        record_shown = screen._shown

        def on_shown(run: int) -> None:
            record_shown(run)
            shown.set()

        screen._shown = on_shown  # type: ignore[method-assign]
        start, cpu, ui_cpu = time.perf_counter(), process_cpu(), time.thread_time()
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
