"""The insights screen, and the plot widgets it shares with the training screen.

Insights: for the current text and encoding, histograms of token lengths (bytes and characters),
the rank-frequency plot on log-log axes with its least-squares slope (Zipf), the most frequent
tokens, how much of the vocabulary the text uses, how numbers are cut into digit groups, the
embedding table size for a model width the user types, and the token counts after each Unicode
normalisation form (NFC, NFD, NFKC, NFKD) with the tokenization where a form first changes the
text, before and after. Everything comes from :mod:`tokscope.core.insights.stats` (the same calls as
``tokscope stats``) and is computed in a thread worker.

The plots are the widgets of :mod:`tokscope.app.widgets.plots`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.widgets import Footer, Input, Label, RadioButton, Static

from ...core.insights import stats as geo
from ...core.text.display import safe_text
from ...core.text.errors import CancelledError, TokscopeError
from ...core.tokenizer.tokenizer import fix_surrogates
from ..fit import first_fit
from ..messages import DocChanged, EncodingChanged
from ..render import token_text
from ..widgets.form import RadioSet
from ..widgets.plots import BarChart, ScatterPlot, Series
from .base import ViewScreen, view_bindings

# ----- the insights screen ------------------------------------------------------------------------

#: The normalisation choices, "none" being the text as typed.
FORMS: tuple[str, ...] = ("none", *geo.NORMAL_FORMS)
FORM_LABELS = {"none": "as typed", "NFC": "NFC", "NFD": "NFD", "NFKC": "NFKC", "NFKD": "NFKD"}
#: The preview shows at most this many characters around the first place a form changes the text.
PREVIEW_CHARS = 240


@dataclass(frozen=True)
class FormView:
    """One normalisation form: its whole-text counts and a preview window of both tokenizations."""

    row: geo.NormalForm
    first_change: int | None  # character offset of the first difference, None when unchanged
    before: tuple[bytes, ...]  # the window's pieces as typed
    after: tuple[bytes, ...]  # the window's pieces after the form


def preview_window(text: str, normalized: str, form: str) -> tuple[int | None, str, str]:
    """Where ``normalized`` (``text`` after ``form``) first differs from ``text``, and a window of
    the text around that place before and after the form.

    The window starts at the line holding the first difference (or a little before it on a long
    line) and holds up to :data:`PREVIEW_CHARS` characters of the original text.

    >>> preview_window("ab\\ncafe\\u0301 ok", "ab\\ncaf\\u00e9 ok", "NFC")
    (6, 'café ok', 'café ok')
    >>> preview_window("same", "same", "NFC")
    (None, '', '')
    """
    if text == normalized:
        return None, "", ""
    first = next((i for i, (a, b) in enumerate(zip(text, normalized)) if a != b), min(len(text), len(normalized)))
    start = text.rfind("\n", 0, first) + 1
    if first - start > PREVIEW_CHARS // 3:
        start = first - PREVIEW_CHARS // 3
    end = text.find("\n", first)
    if end < 0 or end - start > PREVIEW_CHARS:
        end = min(len(text), start + PREVIEW_CHARS)
    window = text[start:end]
    return first, window, geo.normalize(window, form)


def compute_forms(tokenizer, text: str, encode_kwargs: dict, tokens: int | None,
                  cancel: threading.Event | None = None) -> dict[str, FormView]:
    """The counts under every form and the preview windows (run in a worker)."""

    def encode(s: str) -> list[int]:
        return tokenizer.encode(s, **encode_kwargs)

    known = {"none": tokens} if tokens is not None else None
    rows = geo.normalization_counts(text, encode, FORMS, cancel=cancel, known=known)
    out = {}
    for row in rows:
        first, before, after = preview_window(text, row.text, row.form)
        if first is None:
            out[row.form] = FormView(row, None, (), ())
            continue
        b = tuple(p.bytes for p in tokenizer.pieces(before, **encode_kwargs))
        a = tuple(p.bytes for p in tokenizer.pieces(after, **encode_kwargs))
        out[row.form] = FormView(row, first, b, a)
    return out


def pieces_text(labels: Sequence[bytes], ascii_only: bool) -> Text:
    """Pieces side by side with alternating backgrounds (``|`` between them without colour)."""
    out = Text(no_wrap=False)
    styles = ("on #1d3f6e", "on #5a2a5e")
    for i, data in enumerate(labels):
        if ascii_only:
            out.append("|" if i else "")
            out.append_text(token_text(data))
        else:
            out.append_text(token_text(data, style=styles[i % 2]))
    return out


def embedding_line(n_vocab: int, width: int, millions: float, megabytes: float, room: int) -> str:
    """The embedding table's size in ``room`` characters: the labels shorten, a figure is left
    out whole, a number is never cut.

    >>> embedding_line(200_019, 2_627, 525.4, 1_051, 90)
    '200,019 × 2,627 = 525.4 M parameters (1,051 MB at 16 bits)'
    >>> embedding_line(200_019, 2_627, 525.4, 1_051, 42)
    '200,019 × 2,627 = 525.4 M (1,051 MB fp16)'
    >>> embedding_line(200_019, 2_627, 525.4, 1_051, 20)
    '525.4 M params'
    """
    sizes = f"{n_vocab:,} × {width:,}"
    forms = [f"{sizes} = {millions:,.1f} M parameters ({megabytes:,.0f} MB at 16 bits)",
             f"{sizes} = {millions:,.1f} M params ({megabytes:,.0f} MB fp16)",
             f"{sizes} = {millions:,.1f} M ({megabytes:,.0f} MB fp16)",
             f"{millions:,.1f} M params ({megabytes:,.0f} MB fp16)",
             f"{millions:,.1f} M params"]
    return first_fit(forms, room)


class InsightsScreen(ViewScreen):
    """Figures about the current text under the current encoding (see ``tokscope stats``)."""

    DEFAULT_CSS = """
    InsightsScreen { layout: vertical; }
    InsightsScreen #ins-title { height: 1; background: $panel; padding: 0 1; }
    InsightsScreen #ins-body { height: 1fr; padding: 0 1; }
    InsightsScreen .ins-row { height: auto; }
    InsightsScreen .ins-row > * { width: 1fr; }
    InsightsScreen #ins-lengths, InsightsScreen #ins-zipf { height: 12; margin-right: 1; }
    InsightsScreen #ins-top, InsightsScreen #ins-digits { height: auto; margin: 1 1 0 0; }
    InsightsScreen #ins-embed-row { height: 3; margin-top: 1; }
    InsightsScreen #ins-embed-row > Label { width: auto; padding: 1 1 0 0; }
    InsightsScreen #ins-width { width: 14; }
    InsightsScreen #ins-embed { width: 1fr; padding: 1 0 0 1; }
    InsightsScreen #ins-forms { height: auto; width: 100%; layout: horizontal; margin-top: 1; }
    InsightsScreen #ins-norm-counts, InsightsScreen #ins-norm-preview { height: auto; }
    InsightsScreen .ins-heading { text-style: bold; margin-top: 1; }
    InsightsScreen.-narrow .ins-row { layout: vertical; }
    InsightsScreen.-narrow #ins-lengths, InsightsScreen.-narrow #ins-zipf { margin-right: 0; }
    """

    #: below this width the two plots (and the two lists) are stacked instead of side by side
    NARROW = 100

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("b", "toggle_unit", "Bytes/chars"),
        Binding("n", "next_form", "Form"),
        Binding("w", "focus_width", "Width"),
        Binding("r", "recompute", "Recompute"),
        *view_bindings(),
    ]

    unit: reactive[str] = reactive("bytes", init=False)
    form: reactive[str] = reactive("none", init=False)

    def __init__(self) -> None:
        super().__init__()
        self.stats: geo.TextStats | None = None
        self.forms: dict[str, FormView] | None = None
        self._cancel = threading.Event()
        self._serial = 0

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("Insights", id="ins-title")
        with VerticalScroll(id="ins-body"):
            yield Static("computing…", id="ins-summary")
            with Horizontal(classes="ins-row"):
                yield BarChart("Token lengths", id="ins-lengths")
                yield ScatterPlot("Rank-frequency", x_title="rank", y_title="count", log_x=True, log_y=True,
                                  id="ins-zipf")
            with Horizontal(classes="ins-row"):
                yield Static("", id="ins-top")
                yield Static("", id="ins-digits")
            with Horizontal(id="ins-embed-row"):
                yield Label("Embedding table for model width")
                yield Input(str(geo.DEFAULT_WIDTH), type="integer", id="ins-width", max_length=7)
                yield Static("", id="ins-embed")
            yield Static("Normalisation (n: next form)", classes="ins-heading")
            with RadioSet(id="ins-forms"):
                for form in FORMS:
                    yield RadioButton(FORM_LABELS[form], value=form == "none", id=f"form-{form}")
            yield Static("", id="ins-norm-counts")
            yield Static("", id="ins-norm-preview")
        yield Footer(compact=True, show_command_palette=False)

    def on_doc_changed(self, event: DocChanged) -> None:
        self.action_recompute()

    def on_encoding_changed(self, event: EncodingChanged) -> None:
        self.action_recompute()

    def on_resize(self) -> None:
        self.set_class(self.app.size.width < self.NARROW, "-narrow")
        self.call_after_refresh(self._show_embedding)

    def on_mount(self) -> None:
        app = self.app
        self.set_class(app.size.width < self.NARROW, "-narrow")
        if app.is_headless:  # steady screenshots: no blinking cursor
            self.query_one("#ins-width", Input).cursor_blink = False
        self.action_recompute()

    def on_unmount(self) -> None:
        self._cancel.set()

    # --- actions ------------------------------------------------------------------------------

    def action_close(self) -> None:
        self._cancel.set()
        self.app.pop_screen()

    def action_toggle_unit(self) -> None:
        self.unit = "chars" if self.unit == "bytes" else "bytes"

    def action_next_form(self) -> None:
        self.form = FORMS[(FORMS.index(self.form) + 1) % len(FORMS)]
        preview = self.query_one("#ins-norm-preview", Static)
        self.call_after_refresh(preview.scroll_visible)

    def action_focus_width(self) -> None:
        self.query_one("#ins-width", Input).focus()

    def action_recompute(self) -> None:
        self._cancel.set()
        self._cancel = threading.Event()
        self._serial += 1
        app = self.app
        tokenizer = app.tokenizer
        doc = getattr(app, "doc", None)
        text = app.text
        ids = None
        if (doc is not None and getattr(doc, "complete", False) and doc.tokenizer is tokenizer
                and (doc.text == text or doc.text == fix_surrogates(text))):
            text, ids = doc.text, list(doc.ids)
        kwargs = self._encode_kwargs()
        self.query_one("#ins-summary", Static).update(f"computing insights for {len(text):,} characters…")
        self.query_one("#ins-norm-counts", Static).update("counting tokens under each form…")
        self._compute(tokenizer, text, ids, kwargs, self._serial, self._cancel)

    def _encode_kwargs(self) -> dict:
        get = getattr(self.app, "encode_kwargs", None)
        return dict(get()) if callable(get) else {"disallowed_special": ()}

    # --- workers ------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="insights")
    def _compute(self, tokenizer, text: str, ids, kwargs: dict, serial: int, cancel: threading.Event) -> None:
        try:
            if ids is None:
                try:
                    ids = tokenizer.encode(text, **kwargs)
                except TokscopeError:
                    kwargs = {"disallowed_special": ()}
                    ids = tokenizer.encode(text, **kwargs)
            width = self._width_value() or geo.DEFAULT_WIDTH
            result = geo.text_stats(tokenizer, text, ids=ids, width=width, cancel=cancel)
            if cancel.is_set():
                return
            self.app.call_from_thread(self._show_stats, result, serial)
            forms = compute_forms(tokenizer, text, kwargs, len(ids), cancel)
            if cancel.is_set():
                return
            self.app.call_from_thread(self._show_forms, forms, serial)
        except CancelledError:
            return
        except TokscopeError as exc:
            if not cancel.is_set():
                self.app.call_from_thread(self._show_error, str(exc), serial)

    # --- showing ------------------------------------------------------------------------------

    @property
    def ascii_only(self) -> bool:
        return bool(getattr(self.app, "no_color", False))

    def _show_error(self, message: str, serial: int) -> None:
        if serial == self._serial:
            self.query_one("#ins-summary", Static).update(Text(f"cannot compute the insights: {safe_text(message)}"))

    def _show_stats(self, result: geo.TextStats, serial: int) -> None:
        if serial != self._serial:
            return
        self.stats = result
        s = result
        self.query_one("#ins-title", Static).update(Text(f"Insights · {safe_text(s.encoding)}"))
        self.query_one("#ins-summary", Static).update(
            f"{s.chars:,} characters, {s.bytes:,} bytes → {s.tokens:,} tokens "
            f"({s.chars_per_token:.2f} characters per token) · vocabulary used: {s.coverage.distinct:,} of "
            f"{s.coverage.n_vocab:,} tokens ({s.coverage.fraction:.3%})"
        )
        self._show_lengths()
        zipf = self.query_one("#ins-zipf", ScatterPlot)
        points = tuple((float(r), float(f)) for r, f in enumerate(s.frequencies, 1))
        if s.zipf is None:
            zipf.set_data([Series("tokens", points)], title="Rank-frequency (log-log)",
                          note="too few distinct tokens to fit a line")
        else:
            zipf.set_data([Series("tokens", points)], fit=s.zipf,
                          title=f"Rank-frequency · slope {s.zipf.slope:.2f}",
                          note=f"fit over {s.zipf.n_points:,} ranks, R² {s.zipf.r2:.2f}; Zipf: ≈ -1")
        self.query_one("#ins-top", Static).update(self._top_text(s))
        self.query_one("#ins-digits", Static).update(self._digits_text(s))
        self._show_embedding()

    def _show_lengths(self) -> None:
        if self.stats is None:
            return
        hist = self.stats.bytes_histogram if self.unit == "bytes" else self.stats.chars_histogram
        unit = "bytes" if self.unit == "bytes" else "characters"
        self.query_one("#ins-lengths", BarChart).set_data(
            geo.capped_bins(hist, 16),
            title=f"Lengths ({unit}) · mean {hist.mean:.2f} · b: {'chars' if self.unit == 'bytes' else 'bytes'}",
        )

    def watch_unit(self) -> None:
        self._show_lengths()

    def _top_text(self, s: geo.TextStats) -> Text:
        out = Text("Most frequent tokens\n", style="bold")
        if not s.top:
            out.append("(none)")
            return out
        labels = [token_text(t.bytes) for t in s.top]
        width = min(16, max(x.cell_len for x in labels))
        top = s.top[0].count
        for t, label in zip(s.top, labels):
            out.append(f"{t.id:>7} ")
            label.truncate(width, overflow="ellipsis", pad=True)
            out.append_text(label)
            out.append(" ")
            out.append(f"{t.count:>7,} {t.share:6.1%} ")
            out.append(geo.hbar(t.count, top, 8, ascii_only=self.ascii_only), style="cyan")
            out.append("\n")
        return out

    def _digits_text(self, s: geo.TextStats) -> Text:
        out = Text("Digit groups\n", style="bold")
        for title, groups in (("in the text", s.digits), ("sample numbers", s.probe)):
            if not groups.total:
                out.append(f"{title}: no numbers\n")
                continue
            out.append(f"{title}: ", style="dim")
            out.append(f"{groups.summary}", style="bold")
            out.append(f" ({groups.total:,})\n", style="dim")
            examples: dict[tuple[int, ...], geo.NumberCut] = {}
            for n in groups.numbers:
                if len(examples) >= 5:
                    break
                examples.setdefault(n.sizes, n)
            width = max(len(n.digits) for n in examples.values())
            for n in examples.values():
                out.append(f"  {n.digits:>{width}} ", style="dim")
                for i, g in enumerate(n.groups):
                    out.append(f"[{g}]", style="" if self.ascii_only else ("cyan" if i % 2 == 0 else "yellow"))
                out.append("\n")
        return out

    def _width_value(self) -> int | None:
        try:
            value = int(self.query_one("#ins-width", Input).value)
        except (ValueError, NoMatches):
            return None
        return value if value > 0 else None

    def _show_embedding(self) -> None:
        target = self.query_one("#ins-embed", Static)
        if self.stats is None:
            return
        width = self._width_value()
        if width is None:
            target.update("enter a model width (a positive whole number)")
            return
        e = geo.embedding_size(self.stats.n_vocab, width)
        # two lines, less what wrapping at spaces may leave at the end of the first
        room = (target.content_region.width or self.app.size.width - 20) * 2 - 12
        target.update(embedding_line(e.n_vocab, e.width, e.millions, e.megabytes(2), room))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "ins-width":
            event.stop()
            self._show_embedding()

    def _show_forms(self, forms: dict[str, FormView], serial: int) -> None:
        if serial != self._serial:
            return
        self.forms = forms
        self._show_form()

    def watch_form(self) -> None:
        button = self.query_one(f"#form-{self.form}", RadioButton)
        if not button.value:
            button.value = True
        self._show_form()

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        event.stop()
        form = (event.pressed.id or "form-none").removeprefix("form-")
        if form != self.form:
            self.form = form

    def _show_form(self) -> None:
        counts = self.query_one("#ins-norm-counts", Static)
        preview = self.query_one("#ins-norm-preview", Static)
        if self.forms is None:
            return
        table = Text()
        for form in FORMS:
            view = self.forms[form]
            style = "bold reverse" if form == self.form else ""
            table.append(f" {FORM_LABELS[form]}: {view.row.tokens:,} tokens ", style=style)
            table.append("·" if form != FORMS[-1] else "", style="dim")
        counts.update(table)
        view = self.forms[self.form]
        if self.form == "none":
            preview.update(Text("Pick a form (n) to see how it changes the text's tokens.", style="dim"))
            return
        if view.first_change is None:
            preview.update(Text(f"The text is already in {self.form}: nothing changes.", style="dim"))
            return
        out = Text()
        delta = view.row.tokens - self.forms["none"].row.tokens
        out.append(f"{self.form} changes the text first at character {view.first_change:,} "
                   f"({delta:+,} tokens over the whole text; {view.row.chars:,} characters):\n", style="dim")
        out.append("as typed  ", style="bold")
        out.append_text(pieces_text(view.before, self.ascii_only))
        out.append(f"  ({len(view.before)})\n", style="dim")
        out.append(f"{self.form:<10}", style="bold")
        out.append_text(pieces_text(view.after, self.ascii_only))
        out.append(f"  ({len(view.after)})", style="dim")
        preview.update(out)
