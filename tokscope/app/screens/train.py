"""The training screen: learn a BPE vocabulary from files or the current input and watch it learn.

Pick the corpus (file paths, or nothing for the explorer's current text) and the trainer's options
(size, pre-tokenization pattern, tie rule, minimum frequency, special tokens), then train. Training
runs in a thread worker (:func:`tokscope.core.train.trainer.train`); its progress callback only appends
to a list, and a timer takes what is new five times a second into the progress bar, the list of
merges (pair, new token, count) and the falling corpus length, so the screen never freezes and
the worker is barely slowed. Escape cancels a run (nothing is kept or saved).

A finished run is kept while tokscope runs (:class:`Trained`, in ``app.trained``): leaving the
screen and coming back shows it again, saved or not, and quitting asks before discarding one that
was never saved.

When it finishes: save it under a name in the user's data directory (asking before overwriting),
open it in the token view (the explorer switches its encoding to it), or compare it with the
built-in encodings. The curve plots the vocabulary sweep (vocabulary size against the corpus's
length in tokens, or characters per token), with the built-in encodings' points on the same
corpus on the same axes.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import var
from textual.widgets import Footer, Input, Label, ProgressBar, Static

from ...core.formats import saved as serialize
from ...core.train import trainer
from ...core.text.display import safe_text, token_label
from ...core.text.errors import CancelledError, TokscopeError
from ...sources import names, saved
from ...inputs.text_input import InputError, read_input
from ..heap import frozen_heap
from ..not_utf8 import REPLACED, not_utf8_question
from ..widgets.form import Button, Select
from ..widgets.merge_list import MergeList
from ..widgets.plots import CurvePlot, ScatterPlot, Series
from .base import ViewScreen, view_bindings

#: Patterns offered in the form: the shared table (the CLI's ``--pattern`` names), then a regex.
PATTERN_CHOICES = (*names.PATTERN_NAMES, "custom")
#: The form's pattern: the command line's default (``tokscope train --pattern``), so a tokenizer
#: trained with the defaults cuts text the same way whichever way it was trained
DEFAULT_PATTERN = names.DEFAULT_TRAINING_PATTERN
#: Built-in encodings whose points go on the sweep plot (those that can be loaded).
COMPARE_ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
#: Largest corpus file read (bytes).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: How often the screen takes the trainer's new reports (seconds).
POLL_INTERVAL = 0.2
#: How often the live curve is redrawn while training (seconds): it is the costliest widget to
#: draw, and the status line already shows the corpus length falling at every tick.
CURVE_INTERVAL = 1.0


class TrainFormError(TokscopeError):
    """A form value the trainer cannot use (shown in the status line)."""


def resolve_pattern(choice: str, custom: str = "") -> tuple[str, str | None]:
    """The regex for a pattern choice and the name recorded with it (None for a regex), from the
    pattern table the command line uses (:func:`tokscope.sources.names.pattern_for`).

    >>> resolve_pattern("none")
    ('(?s).+', 'none')
    >>> resolve_pattern("custom", r"\\w+|\\s+")
    ('\\\\w+|\\\\s+', None)
    """
    value = custom.strip() if choice == "custom" else choice
    if not value:
        raise TrainFormError("type a regex for the custom pattern")
    try:
        return names.pattern_for(value)
    except TokscopeError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure is one line for the user
        raise TrainFormError(f"cannot read the {safe_text(value)} pattern: {safe_text(exc)}") from None


def parse_specials(value: str) -> list[str]:
    """Special tokens typed as a comma- or space-separated list.

    >>> parse_specials("<pad>, <eos>  <|endoftext|>")
    ['<pad>', '<eos>', '<|endoftext|>']
    """
    return [t for t in value.replace(",", " ").split() if t]


def read_corpus(paths: Sequence[str], limit: int = MAX_FILE_BYTES, errors: str = "strict") -> list[str]:
    """Read each file as UTF-8 (the command line's reader: one-line errors for the user);
    ``errors="replace"`` reads bytes that are not UTF-8 as U+FFFD."""
    return [read_input(str(Path(raw).expanduser()), limit=limit, errors=errors, keep_head=False,
                       regular_only=True).text for raw in paths]


@dataclass
class Trained:
    """A finished run, kept by the app between visits to the screen (the screen goes when it closes)."""

    result: trainer.TrainResult
    texts: list[str]
    rows: list[trainer.TrainProgress]
    status: str
    saved_name: str | None = None
    builtin_points: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    @property
    def unsaved(self) -> bool:
        """True until it is saved under a name."""
        return self.saved_name is None


class TrainScreen(ViewScreen):
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
    TrainScreen Input:focus { background: #2c3e50; text-style: bold; }
    TrainScreen Select:focus > SelectCurrent { background: #2c3e50; text-style: bold; }
    TrainScreen Button:focus { text-style: bold reverse; }
    TrainScreen.-narrow Button { min-width: 0; }
    TrainScreen.-short .tr-row { margin-bottom: 0; }
    TrainScreen.-short #tr-status { height: 2; }
    TrainScreen.-short #tr-results { min-height: 3; }
    TrainScreen #tr-progress-row { height: 1; padding: 0 1; }
    TrainScreen #tr-status { height: 3; padding: 0 1; }
    TrainScreen #tr-results { height: 1fr; min-height: 8; }
    TrainScreen #tr-merges { width: 1fr; }
    TrainScreen #tr-curve { width: 1fr; height: 1fr; min-height: 6; }
    """

    # no priority: a key acts after the keys typed before it (Ctrl+S saves the name as typed);
    # none of these chords is a text field's
    BINDINGS = [
        Binding("escape", "cancel_or_close", "Back"),
        Binding("ctrl+r", "train", "Train"),
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+o", "open_trained", "Open"),
        Binding("f5", "compare", "Compare"),
        Binding("ctrl+y", "toggle_curve", "Tok/chars"),
        *view_bindings("f5"),
    ]

    #: the form's fields, kept in ``app.train_settings`` between visits
    FIELDS = ("tr-files", "tr-size", "tr-size-kind", "tr-pattern", "tr-custom", "tr-tie", "tr-minfreq",
              "tr-specials", "tr-name")

    #: idle, reading, training, done, cancelled, failed (a ``var``: a change of state repaints
    #: only the widgets it changes, not the whole screen as a ``reactive`` on a screen would)
    state = var("idle", init=False)

    def __init__(self, texts: Sequence[str] | None = None) -> None:
        super().__init__()
        self._given_texts = list(texts) if texts is not None else None
        self._replace_for: tuple[str, ...] | None = None  # corpus files the user chose to read with U+FFFD
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
        self.status_text = ""
        self.curve_y = "tokens"
        self.builtin_points: dict[str, tuple[int, int, int]] = {}  # name -> (n_vocab, tokens, chars)
        self.live_points: list[tuple[float, float]] = []
        self.started_at = 0.0
        self._curve_at = 0.0  # when the live curve was last redrawn
        #: (wall-clock, process CPU) seconds when the result was ready, and when it was painted
        self.finished_at: tuple[float, float] | None = None
        self.shown_at: tuple[float, float] | None = None
        self.finished_in: float | None = None

    # --- layout -------------------------------------------------------------------------------

    def _settings(self) -> dict:
        return getattr(self.app, "train_settings", None) or {}

    def compose(self) -> ComposeResult:
        kept = self._settings()

        def value(field: str, default: str) -> str:
            return str(kept.get(field, default))

        pattern = value("tr-pattern", DEFAULT_PATTERN)
        yield Static("Train a BPE tokenizer", id="tr-title")
        with Horizontal(classes="tr-row"):
            yield Label("Corpus")
            yield Input(value("tr-files", ""), placeholder="file paths separated by spaces; empty: the current input text",
                        id="tr-files", compact=True)
        with Horizontal(classes="tr-row"):
            yield Label("Size")
            yield Input(value("tr-size", "1000"), type="integer", id="tr-size", max_length=7, compact=True)
            yield Select([("vocabulary size", "vocab"), ("merges", "merges")], value=value("tr-size-kind", "vocab"),
                         allow_blank=False, id="tr-size-kind", compact=True)
            yield Label("Pattern")
            yield Select([(p, p) for p in PATTERN_CHOICES], value=pattern, allow_blank=False, id="tr-pattern",
                         compact=True)
            yield Input(value("tr-custom", ""), placeholder="custom regex", id="tr-custom",
                        disabled=pattern != "custom", compact=True)
        with Horizontal(classes="tr-row"):
            yield Label("Tie")
            yield Select([("first", "first"), ("lexical", "lexical")], value=value("tr-tie", "first"),
                         allow_blank=False, id="tr-tie", compact=True)
            yield Label("Min freq")
            yield Input(value("tr-minfreq", "2"), type="integer", id="tr-minfreq", max_length=6, compact=True)
            yield Label("Specials")
            yield Input(value("tr-specials", ""), placeholder="<|endoftext|> <pad>", id="tr-specials", compact=True)
        with Horizontal(classes="tr-row", id="tr-form-last"):
            yield Button("Train ^R", id="tr-train", variant="primary", compact=True)
            yield Button("Cancel", id="tr-cancel", compact=True)
            yield Input(value("tr-name", ""), placeholder="name to save as", id="tr-name", compact=True)
            yield Button("Save ^S", id="tr-save", disabled=True, compact=True)
            yield Button("Open ^O", id="tr-open", disabled=True, compact=True)
            yield Button("Compare F5", id="tr-compare", disabled=True, compact=True)
        with Horizontal(id="tr-progress-row"):
            yield ProgressBar(total=1, show_eta=False, id="tr-progress")
        yield Static("Set the options and press Train (Ctrl+R).", id="tr-status")
        with Horizontal(id="tr-results"):
            yield MergeList(id="tr-merges")
            yield CurvePlot("Corpus length", x_title="vocabulary size", y_title="tokens", log_x=False,
                            id="tr-curve")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one("#tr-merges", MergeList).border_title = "merges: pair → new token, count"
        if self.app.is_headless:  # steady screenshots: no blinking cursors
            for field in self.query(Input):
                field.cursor_blink = False
        self.query_one("#tr-files", Input).focus()  # typing a path goes into the corpus field
        self.set_interval(POLL_INTERVAL, self._drain)
        self.set_class(self.app.size.height < 30, "-short")
        self._fit_buttons()
        kept = getattr(self.app, "trained", None)
        if isinstance(kept, Trained):
            self._restore(kept)

    def _restore(self, kept: Trained) -> None:
        """Show the run kept from an earlier visit as it was when it finished."""
        self.result, self.saved_name = kept.result, kept.saved_name
        self.builtin_points = dict(kept.builtin_points)
        self.query_one("#tr-merges", MergeList).extend(kept.rows)
        bar = self.query_one("#tr-progress", ProgressBar)
        bar.update(total=max(len(kept.result.merges), 1), progress=max(len(kept.result.merges), 1))
        self.state = "done"
        saved = f" Saved as {safe_text(kept.saved_name)!r}." if kept.saved_name else " Not saved yet."
        self.status(f"{kept.status}{saved}")
        self._show_curve()
        if not self.builtin_points:
            self._builtin_points(self._run, list(kept.texts))

    def _keep(self, texts: list[str] | None = None) -> None:
        """Keep the finished run in the app (a new one, or the kept one updated)."""
        if not hasattr(self.app, "trained") or self.result is None:
            return
        kept = self.app.trained
        if not isinstance(kept, Trained) or kept.result is not self.result:
            rows = list(self.query_one("#tr-merges", MergeList).rows)
            kept = self.app.trained = Trained(self.result, list(texts or []), rows, self.status_text)
        kept.saved_name = self.saved_name
        kept.builtin_points = dict(self.builtin_points)

    def on_resize(self) -> None:
        self.set_class(self.app.size.height < 30, "-short")
        self._fit_buttons()

    #: the buttons' labels, with their keys and (below 80 columns, where the footer shows the keys) without
    BUTTON_LABELS = {"tr-train": ("Train ^R", "Train"), "tr-save": ("Save ^S", "Save"), "tr-open": ("Open ^O", "Open"),
                     "tr-compare": ("Compare F5", "Compare")}

    def _fit_buttons(self) -> None:
        """Below 80 columns the buttons are as wide as their short labels: the name field keeps room."""
        narrow = self.app.size.width < 80
        self.set_class(narrow, "-narrow")
        for key, (wide, short) in self.BUTTON_LABELS.items():
            for button in self.query(f"#{key}"):
                button.label = short if narrow else wide

    def _keep_settings(self) -> None:
        """Remember the form for the next visit (in the app: the screen goes when it closes)."""
        kept = getattr(self.app, "train_settings", None)
        if kept is None:
            return
        for field in self.FIELDS:
            widget = self.query_one(f"#{field}")
            kept[field] = widget.value  # type: ignore[attr-defined]

    def on_input_changed(self, event: Input.Changed) -> None:
        self._keep_settings()

    def on_unmount(self) -> None:
        self._cancel.set()

    # --- form ---------------------------------------------------------------------------------

    def on_select_changed(self, event: Select.Changed) -> None:
        self._keep_settings()
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
        self.status_text = message
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
        # U+FFFD for bad bytes only for the files the user said so for (the dialog after a refusal)
        errors = "replace" if paths and tuple(paths) == self._replace_for else "strict"
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
        reading = f"reading the corpus{' (' + REPLACED + ')' if errors == 'replace' else ''}…"
        self.status(reading if texts is None else f"training {target:,} merges…")
        self.started_at = self._curve_at = time.perf_counter()
        self._train(self._reports, self._events, texts, paths, opts, self._cancel, errors)

    # (a description: without one Textual writes the repr of the arguments, megabytes of corpus)
    @work(thread=True, exclusive=True, exit_on_error=False, group="train", description="train a tokenizer")
    def _train(self, reports: list, events: collections.deque, texts: list[str] | None, paths: list[str],
               opts: dict, cancel: threading.Event, errors: str = "strict") -> None:
        # The trainer reports every merge; the callback is a list's own append (the cheapest
        # callable there is: no wrapper, no tuple per merge, as in the bare bench). Everything
        # else arrives in ``events`` as a (kind, data) tuple, always after the reports before it.
        try:
            if texts is None:
                texts = read_corpus(paths, errors=errors)
                events.append(("read", texts))
            with frozen_heap():
                result = trainer.train(texts, progress=reports.append, cancel=cancel, **opts)
        except CancelledError:
            events.append(("cancelled", None))
        except InputError as exc:  # not UTF-8: the screen offers to read it with U+FFFD
            events.append(("not-utf8", (exc, tuple(paths))) if exc.can_replace else ("error", str(exc)))
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
            elif kind == "not-utf8":
                self.state = "failed"
                self._offer_replacements(*data)
        self._flush(rows, last)

    def _offer_replacements(self, problem: InputError, paths: tuple[str, ...]) -> None:
        """A corpus file is not UTF-8: say so, and offer to train on it with U+FFFD for the bad bytes."""
        from .dialogs import ChoiceDialog

        question = not_utf8_question(problem)
        self.status(f"{question} Train on it with U+FFFD for the bad bytes, or Cancel", error=True)

        def answer(choice: str | None) -> None:
            if choice == "replace":
                self._replace_for = paths
                self.action_train()

        self.app.push_screen(ChoiceDialog("Not UTF-8", f"{question} Train on the corpus with U+FFFD for the bad "
                                          "bytes? (The files are only read, never changed.)",
                                          [("replace", "Train with U+FFFD"), ("cancel", "Cancel")]), answer)

    def _flush(self, rows: list[trainer.TrainProgress], last: trainer.TrainProgress | None) -> None:
        if rows:
            self.query_one("#tr-merges", MergeList).extend(rows)
        if last is not None and self.state == "training":
            self.query_one("#tr-progress", ProgressBar).update(progress=last.merges_done)
            pair = f"{token_label(last.left)} + {token_label(last.right)} ×{last.count:,}" if last.left else "—"
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
        self.state = "done"
        bar = self.query_one("#tr-progress", ProgressBar)
        # a run that stopped early (min frequency, nothing left to merge) is done: a full bar
        bar.update(total=max(len(result.merges), 1), progress=max(len(result.merges), 1))
        skipped_pairs = getattr(result, "skipped", ())
        skipped = f"; {len(skipped_pairs)} pairs skipped (already tokens)" if skipped_pairs else ""
        self.status(
            f"{result.stop_message[0].upper()}{result.stop_message[1:]}{skipped}. Vocabulary "
            f"{result.n_vocab:,} · corpus {result.lengths[0]:,} → {result.lengths[-1]:,} tokens · "
            f"{self.finished_in:.1f} s. Save (^S), open (^O) or compare (F5)."
        )
        self._show_curve()
        self._keep(texts)
        self.finished_at = (time.perf_counter(), time.process_time())
        self.call_after_refresh(self._shown, self._run)
        # the built-in encodings' points come after the result is painted
        self.call_after_refresh(self._builtin_points, self._run, list(texts))

    def _shown(self, run: int) -> None:
        if run == self._run:
            self.shown_at = (time.perf_counter(), time.process_time())

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
            self._keep()

    # --- after training -----------------------------------------------------------------------

    def _typed_name(self) -> str | None:
        name = self.query_one("#tr-name", Input).value.strip()
        if not name:
            self.status("type a name to save the tokenizer as", error=True)
            self.query_one("#tr-name", Input).focus()
            return None
        problem = name_problem(name)
        if problem:
            self.status(problem, error=True)
            return None
        return name

    def action_save(self, then: str | None = None) -> None:
        if self.result is None:
            self.status("nothing to save yet: train first", error=True)
            return
        name = self._typed_name()
        if name is None:
            return
        try:
            path = saved_path(name)
        except (TokscopeError, OSError) as exc:
            self.status(f"cannot save {safe_text(name)!r}: {safe_text(exc)}", error=True)
            return
        if path.exists():
            from .dialogs import ChoiceDialog

            def answer(choice: str | None) -> None:
                if choice == "overwrite":
                    self._save(name, then, overwrite=True)
                else:
                    self.status(f"not saved: {safe_text(name)!r} already exists (pick another name)")

            self.app.push_screen(
                ChoiceDialog("Overwrite?", f"A tokenizer named {safe_text(name)!r} already exists:\n{safe_text(path)}",
                             [("overwrite", "Overwrite"), ("cancel", "Keep it")]),
                answer,
            )
            return
        self._save(name, then)

    def _save(self, name: str, then: str | None, *, overwrite: bool = False) -> None:
        assert self.result is not None
        try:
            path = save_result(self.result, name, overwrite=overwrite)
        except (TokscopeError, OSError) as exc:
            self.status(f"cannot save {safe_text(name)!r}: {safe_text(exc)}", error=True)
            return
        from ...sources import registry

        registry.forget(name)
        self.saved_name = name
        self._keep()
        self.status(f"saved as {safe_text(name)!r} ({safe_text(path)})")
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

    def action_compare(self) -> None:
        """Compare the trained tokenizer (saved first) with the built-in encodings; Escape in the
        comparison comes back here."""
        if self.result is None:
            self.status("nothing to compare yet: train first", error=True)
            return
        if self.saved_name is None:
            self.action_save(then="compare")
            return
        from ...core.insights.compare import DEFAULT_COMPARE, MAX_ON_SCREEN

        target = self.saved_name  # the explorer keeps its own encoding (Ctrl+O opens this one there)
        self.app.open_view("compare", encodings=[target, *DEFAULT_COMPARE][:MAX_ON_SCREEN])  # type: ignore[attr-defined]



def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a saved tokenizer (None when it can): the command line's own check
    (:func:`tokscope.sources.saved.check_saved_name`: a built-in's name or alias would be shadowed
    by the built-in, and a name must be a plain file name of printable UTF-8).

    >>> name_problem("gpt2") is not None, name_problem("O200K") is not None, name_problem("a/b") is not None
    (True, True, True)
    >>> name_problem("mine")
    """
    try:
        saved.check_saved_name(name)
    except TokscopeError as exc:
        return safe_text(exc)
    return None


def saved_path(name: str) -> Path:
    """Where a tokenizer saved under ``name`` lives in the user's data directory."""
    from ...sources import registry, saved

    return saved.prepare_save(name, registry.saved_dir(), overwrite=True)


def save_result(result: trainer.TrainResult, name: str, *, overwrite: bool = False) -> Path:
    """Save ``result`` under ``name`` in the user's data directory, through the same validated path
    as ``tokscope train --save`` (atomic, refuses to replace unless ``overwrite``)."""
    from ...sources import registry, saved

    data = serialize.from_result(result, name, metadata={"trained_in": "the explorer's training screen"})
    return saved.save_named(data, name, registry.saved_dir(), overwrite=overwrite)
