"""The comparison screen: two to four tokenizers on the explorer's text, side by side or stacked.

Each pane draws one tokenizer's pieces as the token view does. Pieces that start where the first
(reference) tokenizer does not cut are underlined; picking a piece in one pane shows the pieces
that overlap it in the others (reversed); scrolling one pane scrolls the others to the same
place in the text. The table under the panes holds the stats of ``tokscope compare`` and the cost
at the prices typed in the top line. ``e`` edits the text (it goes back to the explorer on close).
``d`` puts ``tokscope diff``'s verdict for pane 1 and the focused pane in the note line (same or
differ, and the shortest text found that they split differently), computed in a worker.

Encodings load and encode in thread workers; one that fails shows its error in its pane while the
others work. Everything shown comes from :mod:`tokscope.core.insights.compare` (CLI twin: ``tokscope compare``).

Given a conversation (``chat=``, from the chat screen's F5) the screen compares what it costs
instead: each pane renders it in its own tokenizer's format (the model's template, or the format
its special tokens call for; the chat screen's own pick for its encoding), coloured by token kind
as the chat screen draws it, and the table holds each tokenizer's total, content, overhead, tool
definitions, the smallest context size left and the input cost. Texts differ between panes, so
there are no cut marks and no scrolling together.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Footer, Input, Label, Static, TextArea

from ...core.insights.compare import (
    DEFAULT_COMPARE,
    MAX_ON_SCREEN,
    Comparison,
    PriceError,
    Segmentation,
    compare,
    costs,
    format_money,
    from_document,
)
from ...core.insights.compare import parse_copies as core_parse_copies
from ...core.insights.compare import parse_price as core_parse_price
from ...core.text.display import safe_text, token_label
from ...core.document.document import SPECIAL, Document
from ...core.text.errors import CancelledError
from ..chat_model import AUTO, ChatDraft, ChatResult, count_draft
from ..fit import first_fit, title_room
from ..render import TEXT, layout, relayout, row_of, token_text
from ..widgets.chat_view import ChatPromptView, legend
from ..widgets.compare_view import ComparePane
from ..widgets.editor import Editor
from ..widgets.table import WholeColumnsTable
from ..widgets.token_view import palette_kind
from .base import ViewScreen, view_bindings
from .dialogs import short_name

#: at this width and wider the panes sit side by side unless the user chose otherwise
SIDE_BY_SIDE_WIDTH = 120
#: the time budget of ``d``'s search for a text two panes split differently
DIFF_SECONDS = 3.0
#: below this height stacked panes are a title line over their rows (80x24 included)
SHORT_HEIGHT = 30
#: the tokenizers a conversation is compared under besides the explorer's (three chat formats)
CHAT_COMPARE = ("o200k_base", "o200k_harmony", "llama3")

#: the table's columns comparing a text (the cost right after the count)
TEXT_COLUMNS = ("encoding", "tokens", "in $", "out $", "in xN", "out xN", "ch/tok", "tok/wd", "by/tok", "partial",
                "1-byte", "+cuts", "-cuts")

_keys = itertools.count(1)


@dataclass(eq=False)
class Slot:
    """One pane's state: the encoding name, its tokenizer once loaded, its latest results."""

    name: str
    key: str = field(default_factory=lambda: f"p{next(_keys)}")
    tokenizer: Any = None
    error: str | None = None
    doc: Document | None = None
    rows: list[int] | None = None
    rows_width: int = 0
    seg: Segmentation | None = None
    #: the conversation's count under this tokenizer (chat mode)
    chat: ChatResult | None = None
    gen: int = -1
    #: set to stop the pane's running job (a thread cannot be interrupted: it checks this)
    cancel: threading.Event = field(default_factory=threading.Event)


def info_line(chars: int, agree: str | None, room: int) -> str:
    """The top line's figures in ``room`` cells: the share of cuts that agree first, then the
    length; a label is shortened or a figure left out, never a number cut.

    >>> info_line(1_000_000, "68.2%", 31), info_line(1_000_000, "68.2%", 26)
    ('cuts agree 68.2% · 1,000,000 ch', 'agree 68.2% · 1,000,000 ch')
    >>> info_line(1_000_000, "68.2%", 20), info_line(101, None, 30)
    ('cuts agree 68.2%', '101 ch')
    """
    length = f"{chars:,} ch"
    if agree is None:
        return length
    return first_fit([f"cuts agree {agree} · {length}", f"agree {agree} · {length}", f"cuts agree {agree}",
                      f"agree {agree}"], room)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def parse_price(value: str) -> float | None:
    """A price typed in the screen, or None when it is not one (the core's one parser,
    :func:`tokscope.core.insights.compare.parse_price`, which the command line uses too).

    >>> parse_price("2.5"), parse_price("$10"), parse_price(""), parse_price("-1"), parse_price("x")
    (2.5, 10.0, 0.0, None, None)
    """
    try:
        return core_parse_price(value)
    except PriceError:
        return None


def parse_copies(value: str) -> int | None:
    """A number of copies typed in the screen (empty means 1), or None (the core's one parser).

    >>> parse_copies("1,000"), parse_copies(""), parse_copies("0"), parse_copies("2.5")
    (1000, 1, None, None)
    """
    try:
        return core_parse_copies(value)
    except PriceError:
        return None


class CompareScreen(ViewScreen):
    """Compare encodings on the explorer's text (see the module docstring)."""

    #: three stacked panes need a few rows each besides the table
    MIN_SIZE = (60, 20)

    DEFAULT_CSS = """
    CompareScreen { layout: vertical; }
    #cmp-top { height: 1; }
    #cmp-top Label { padding: 0 1 0 0; }
    #cmp-top Input { border: none; height: 1; width: 9; padding: 0 1; margin: 0 1 0 0; }
    #cmp-top Input.-invalid { background: $error 40%; }
    CompareScreen.-narrow #cmp-top Input { width: 7; }
    #cmp-info { width: 1fr; }
    #cmp-editor { height: 5; border: round $accent; display: none; }
    CompareScreen.-editing #cmp-editor { display: block; }
    #cmp-panes { height: 1fr; layout: vertical; }
    #cmp-panes.-side { layout: horizontal; }
    .cmp-pane { height: 1fr; width: 1fr; min-height: 2; border: round $foreground 45%; padding: 0;
                border-title-color: $foreground; border-subtitle-color: $foreground; }
    .cmp-pane:focus-within { border: round $accent; }
    /* stacked on a short terminal, a pane is a title line over its rows (no side or bottom
       border), so four panes and the open text still each get rows */
    CompareScreen.-short #cmp-panes.-stacked .cmp-pane { border: none; border-top: solid $foreground 45%; }
    CompareScreen.-short #cmp-panes.-stacked .cmp-pane:focus-within { border: none; border-top: heavy $accent; }
    CompareScreen.-short.-editing #cmp-editor { height: 4; }
    CompareScreen.-short.-editing #cmp-note { display: none; }
    .cmp-error { display: none; color: $error; padding: 0 1; height: 1fr; }
    .cmp-pane.-failed .cmp-error { display: block; }
    .cmp-pane.-failed ComparePane { display: none; }
    #cmp-stats { height: auto; max-height: 7; }
    CompareScreen.-short #cmp-stats { max-height: 6; }
    CompareScreen.-short.-editing #cmp-stats { max-height: 4; }
    CompareScreen.-tiny #cmp-stats { max-height: 4; }
    #cmp-note { height: 1; color: $foreground; }
    """

    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("a", "add", "Add"),
        Binding("x", "remove", "Remove"),
        Binding("l", "toggle_layout", "Layout"),
        Binding("e", "edit", "Edit"),
        Binding("p", "focus_prices", "Prices"),
        Binding("d", "diff", "Diff", show=False),
        *view_bindings(),
    ]

    def __init__(self, encodings: list[str] | None = None, *, text: str | None = None,
                 chat: ChatDraft | None = None, chat_formats: dict[str, str] | None = None) -> None:
        super().__init__()
        self._requested = encodings
        #: the conversation compared (chat mode), and the format to use per encoding name (else auto)
        self.chat = chat
        self.chat_formats = dict(chat_formats or {})
        self._text_arg = text
        self.text = ""
        self.slots: list[Slot] = []
        self.gen = 0
        self.side: bool | None = None  # None: choose by width (the last visit's choice once mounted)
        self.result: Comparison | None = None
        self.result_slots: list[Slot] = []
        self._edited = False
        self._debounce = None
        #: the last ``d`` verdict (:class:`~tokscope.core.insights.diff.TokenizerDiff`) and its job's stop switch
        self.diff_result: Any = None
        self._diff_cancel = threading.Event()

    # ----- composition -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="cmp-top"):
            yield Label("", id="cmp-info")
            yield Label("$/1M in")
            kept = self._kept()
            yield Input(kept.get("price_in", "2.50"), id="cmp-price-in", placeholder="0")
            yield Label("out", id="cmp-out-label")
            yield Input(kept.get("price_out", "10.00"), id="cmp-price-out", placeholder="0")
            yield Label("copies")
            yield Input(kept.get("copies", "1"), id="cmp-copies", placeholder="1")
        # the explorer's own editor: it keeps every character (a plain TextArea rewrote mixed line
        # endings to the first line's, so the text came back changed)
        yield Editor("", id="cmp-editor", soft_wrap=True, tab_behavior="focus")
        with Horizontal(id="cmp-panes"):
            for name in self._initial_names()[:MAX_ON_SCREEN]:
                yield self._new_box(self._new_slot(name))
        table = WholeColumnsTable(id="cmp-stats", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static("", id="cmp-note")
        yield Footer(compact=True, show_command_palette=False)

    def _kind(self) -> str:
        return palette_kind(self.app)

    def on_mount(self) -> None:
        app: Any = self.app
        self.side = self._kept().get("side", self.side)
        self.text = self._text_arg if self._text_arg is not None else getattr(app, "text", "")
        editor = self.query_one("#cmp-editor", Editor)
        editor.load_text(self.text)
        editor.border_title = "text (Escape: back to the panes)"
        table = self.query_one("#cmp-stats", DataTable)
        if self.chat is not None:
            # at least these widths (the layout stays as rows come in as the panes finish), and wider
            # for a longer figure (a fixed width cut 1,234,567 tokens to 1,234,5)
            table.add_column("encoding", width=14)  # names are labels: a long one is cut, never a figure
            table.add_column("format", width=13)
            for label, width in (("tokens", 7), ("content", 7), ("overhead", 8), ("tools", 6), ("ctx left", 9),
                                 ("in $", 10), ("in xN", 10)):
                table.add_column(label.ljust(width))
            for hidden in ("#cmp-out-label", "#cmp-price-out"):
                self.query_one(hidden).display = False
        else:
            # the cost right after the count: at 80 columns the stats scroll, the cost stays in view
            table.add_columns(*TEXT_COLUMNS)
        table.fixed_columns = 1  # scrolling right keeps the names
        self._apply_layout()
        self._update_info()
        self._fill_table()
        self.call_after_refresh(self.refresh_all)
        self.call_after_refresh(self._focus_first)

    def _kept(self) -> dict:
        """What the last visit left (encodings, prices, layout): ``app.compare_settings``."""
        kept = getattr(self.app, "compare_settings", None)
        return kept if isinstance(kept, dict) else {}

    def _remember(self) -> None:
        """Keep the encodings (comparing a text), prices and layout for the next visit."""
        kept = getattr(self.app, "compare_settings", None)
        if not isinstance(kept, dict) or not self.is_mounted:
            return
        if self.chat is None:
            kept["encodings"] = [s.name for s in self.slots]
        kept["side"] = self.side
        for key, field_id in (("price_in", "#cmp-price-in"), ("price_out", "#cmp-price-out"), ("copies", "#cmp-copies")):
            kept[key] = self.query_one(field_id, Input).value

    def _initial_names(self) -> list[str]:
        names = self._requested
        if names is None and self.chat is None and self._kept().get("encodings"):
            names = list(self._kept()["encodings"])
        if names is None:
            others = CHAT_COMPARE if self.chat is not None else DEFAULT_COMPARE
            first = getattr(self.app, "encoding_name", None) or others[0]
            names = self._dedupe([first, *others])[:3]
        return self._dedupe(names)

    def _focus_first(self) -> None:
        for pane in self.query(ComparePane):
            if pane.display:
                pane.focus()
                return

    def _dedupe(self, names: list[str]) -> list[str]:
        from ...sources.registry import canonical_name

        out, seen = [], set()
        for name in names:
            if canonical_name(name) not in seen:
                seen.add(canonical_name(name))
                out.append(name)
        return out

    def _new_slot(self, name: str) -> Slot:
        slot = Slot(name)
        # the explorer's own tokenizer is taken as it is: one loaded from a file is named after
        # the file, a name the registry cannot load again
        shown = getattr(self.app, "tokenizer", None)
        if shown is not None and shown.name == name:
            slot.tokenizer = shown
        self.slots.append(slot)
        return slot

    def _new_box(self, slot: Slot) -> Vertical:
        pane_class = ChatPromptView if self.chat is not None else ComparePane
        pane = pane_class(slot.key, kind=self._kind(), id=f"view-{slot.key}")
        box = Vertical(Static("", classes="cmp-error", markup=False), pane, classes="cmp-pane", id=f"box-{slot.key}")
        k = self.slots.index(slot) + 1 if slot in self.slots else len(self.slots)
        box.border_title = Text(f"{k}. {safe_text(slot.name)} (loading…)")
        return box

    def _title(self, slot: Slot) -> Text:
        """A pane's title: its number, the encoding's name, its count (and the chat format).
        Side by side, the count goes under the pane (:meth:`_subtitle`) and a long name keeps its end."""
        k = self.slots.index(slot) + 1
        name = safe_text(slot.tokenizer.name if slot.tokenizer is not None else slot.name)
        if self.side_by_side and self.is_mounted:
            room = max(8, self.size.width // max(1, len(self.slots)) - 8 - len(str(k)))
            name = short_name(name, room)
            if slot.error is not None:
                return Text(f"{k}. {name} (failed)")
            return Text(f"{k}. {name}")
        if slot.error is not None:
            return Text(f"{k}. {name} (failed)")
        if slot.chat is not None and slot.chat.count is None:
            return Text(f"{k}. {name}")
        if slot.doc is None and slot.chat is None:
            return Text(f"{k}. {name} (loading…)")
        # a long name gives way to the count (Textual cuts a title at its end)
        room = self._title_room(slot)
        if slot.chat is not None:
            count = slot.chat.count
            tail = [f" · {count.total:,} tokens · {count.format}", f" · {count.total:,} tokens", f" · {count.total:,} tok"]
        else:
            tail = [f" · {len(slot.doc.ids):,} tokens", f" · {len(slot.doc.ids):,} tok"]
        forms = [f"{k}. {name}{end}" for end in tail]
        forms += [f"{k}. {short_name(name, room - len(f'{k}. ') - len(end))}{end}" for end in tail[-1:]
                  if room - len(f"{k}. ") - len(end) >= 8]
        forms.append(f"{k}.{tail[-1].removeprefix(' ·')}")
        return Text(first_fit(forms, room))

    def _subtitle(self, slot: Slot) -> str:
        """Under a pane side by side: its count (and the chat format), or what it is waiting for."""
        if not self.side_by_side or slot.error is not None:
            return ""
        if slot.chat is not None and slot.chat.count is not None:
            total = f"{slot.chat.count.total:,}"
            return first_fit([f"{total} tok · {slot.chat.count.format}", f"{total} tok", total], self._title_room(slot))
        if slot.doc is None:
            return "loading…"
        total = f"{len(slot.doc.ids):,}"
        return first_fit([f"{total} tokens", f"{total} tok", total], self._title_room(slot))

    def _title_room(self, slot: Slot) -> int:
        """The cells a pane's border title has (side by side, a narrow pane's count is never cut)."""
        return title_room(self._box(slot)) if self.query(f"#box-{slot.key}") else 80

    def _show_title(self, slot: Slot) -> None:
        box = self._box(slot)
        box.border_title = self._title(slot)
        box.border_subtitle = self._subtitle(slot)

    def _add_slot(self, name: str) -> Slot:
        slot = self._new_slot(name)
        self._remember()
        self.call_later(self._after_mount, self.query_one("#cmp-panes").mount(self._new_box(slot)))
        return slot

    async def _after_mount(self, mounting: Any) -> None:
        await mounting
        self.refresh_all()

    def _box(self, slot: Slot) -> Vertical:
        return self.query_one(f"#box-{slot.key}", Vertical)

    def _pane(self, slot: Slot) -> ComparePane:
        return self.query_one(f"#view-{slot.key}", ComparePane)

    def _slot_of(self, pane: ComparePane) -> Slot | None:
        return next((s for s in self.slots if s.key == pane.key), None)

    # ----- layout ----------------------------------------------------------------------------

    @property
    def side_by_side(self) -> bool:
        return self.side if self.side is not None else self.size.width >= SIDE_BY_SIDE_WIDTH

    def _apply_layout(self) -> None:
        panes = self.query_one("#cmp-panes")
        panes.set_class(self.side_by_side, "-side")
        panes.set_class(not self.side_by_side, "-stacked")
        for slot in self.slots:
            if self.query(f"#box-{slot.key}"):
                self._show_title(slot)

    def on_resize(self) -> None:
        self.set_class(self.app.size.height < SHORT_HEIGHT, "-short")
        self.set_class(self.app.size.height < 22, "-tiny")
        self.set_class(self.app.size.width < 80, "-narrow")
        self.call_after_refresh(self._update_info)
        self._apply_layout()
        self.call_after_refresh(self._apply_layout)  # the titles again, in the panes' new widths
        self.call_after_refresh(self._relayout_if_needed)

    def _relayout_if_needed(self) -> None:
        for slot in self.slots:
            if slot.doc is not None and not slot.error:
                pane = self._pane(slot)
                if pane.layout_width != pane.rows_width:
                    self.refresh_all()
                    return

    # ----- computing -------------------------------------------------------------------------

    def refresh_all(self) -> None:
        """Re-encode (incrementally where possible) and re-lay out every pane in workers."""
        if any(not self.query(f"#view-{slot.key}") for slot in self.slots):
            return  # a pane is still being mounted; _after_mount refreshes once it is
        self.gen += 1
        self.result = None
        app: Any = self.app
        specials = bool(getattr(app, "encode_kwargs", lambda: {})().get("allowed_special"))
        for slot in self.slots:
            pane = self._pane(slot)
            # a superseded job stops at its next check instead of building a whole document that
            # nobody will show (builds of large texts at once would hold several documents' memory)
            slot.cancel.set()
            slot.cancel = cancel = threading.Event()
            if self.chat is not None:
                self.run_worker(
                    lambda slot=slot, width=pane.layout_width, gen=self.gen, cancel=cancel: self._chat_job(
                        slot, gen, width, cancel),
                    thread=True, exclusive=True, group=f"cmp-{slot.key}", exit_on_error=False,
                )
                continue
            self.run_worker(
                lambda slot=slot, width=pane.layout_width, gen=self.gen, text=self.text, cancel=cancel: self._pane_job(
                    slot, gen, text, specials, width, cancel),
                thread=True, exclusive=True, group=f"cmp-{slot.key}", exit_on_error=False,
            )

    def on_unmount(self) -> None:
        for slot in self.slots:
            slot.cancel.set()
        self._diff_cancel.set()

    def _pane_job(self, slot: Slot, gen: int, text: str, specials: bool, width: int,
                  cancel: threading.Event | None = None) -> None:
        """Worker: load, encode (reusing the last doc when only the text changed), lay out."""
        try:
            tokenizer = slot.tokenizer
            if tokenizer is None:
                from ...sources import registry

                tokenizer = registry.load(slot.name)
            old, old_rows = slot.doc, slot.rows
            if old is not None and old.tokenizer is tokenizer and old.specials == specials and old.complete:
                doc = old.edited(text, cancel=cancel)
                if old_rows is not None and slot.rows_width == width:
                    # only the lines the edit touched are laid out again
                    rows = old_rows if doc is old else relayout(old_rows, old, doc, width, TEXT, False)
                else:
                    rows = layout(doc, width, TEXT, False)
            else:
                # the explorer's own document when it is of this text and tokenizer (documents are
                # never changed once built, so sharing one costs nothing and saves a build)
                shown = getattr(self.app, "doc", None)
                if (shown is not None and shown.tokenizer is tokenizer and shown.specials == specials
                        and shown.complete and shown.text == text):
                    doc = shown
                else:
                    doc = Document.build(tokenizer, text, specials, cancel=cancel)
                rows = layout(doc, width, TEXT, False)
            seg = from_document(doc)
        except CancelledError:
            return
        except Exception as exc:  # noqa: BLE001 - a failing tokenizer is shown in its pane
            message = str(exc) or type(exc).__name__
            self.app.call_from_thread(self._pane_failed, slot, gen, message)
            return
        self.app.call_from_thread(self._pane_ready, slot, gen, tokenizer, doc, rows, width, seg)

    def _chat_job(self, slot: Slot, gen: int, width: int, cancel: threading.Event) -> None:
        """Worker (chat mode): load, render the conversation in the tokenizer's format, count, lay out."""
        assert self.chat is not None
        try:
            tokenizer = slot.tokenizer
            if tokenizer is None:
                from ...sources import registry

                tokenizer = registry.load(slot.name)
            choice = self.chat_formats.get(tokenizer.name, AUTO)
            result = count_draft(tokenizer, self.chat, choice=choice, width=width, cancel=cancel)
        except CancelledError:
            return
        except Exception as exc:  # noqa: BLE001 - a tokenizer that cannot load is shown in its pane
            self.app.call_from_thread(self._pane_failed, slot, gen, str(exc) or type(exc).__name__)
            return
        if result.error is not None:
            slot.tokenizer = tokenizer
            self.app.call_from_thread(self._pane_failed, slot, gen, result.error, result)
            return
        self.app.call_from_thread(self._chat_ready, slot, gen, tokenizer, result)

    def _chat_ready(self, slot: Slot, gen: int, tokenizer: Any, result: ChatResult) -> None:
        if slot not in self.slots or gen != self.gen or result.doc is None or result.count is None:
            return
        slot.tokenizer, slot.chat, slot.gen, slot.error = tokenizer, result, gen, None
        slot.doc, slot.rows, slot.rows_width = result.doc, result.rows, result.width
        box = self._box(slot)
        box.remove_class("-failed")
        count = result.count
        self._show_title(slot)
        pane = self._pane(slot)
        pane.set_overlap(range(0))
        pane.set_doc(result.doc, result.rows, result.width, TEXT)
        if isinstance(pane, ChatPromptView):
            pane.set_kinds(count.kinds)
            pane.set_options(ws=True)
        self.call_after_refresh(self._relayout_if_needed)
        self._maybe_compare()

    def _pane_failed(self, slot: Slot, gen: int, message: str, chat: ChatResult | None = None) -> None:
        if slot not in self.slots or gen != self.gen:
            return
        slot.error = message
        slot.gen = gen
        slot.chat = chat
        box = self._box(slot)
        box.add_class("-failed")
        self._show_title(slot)
        box.query_one(".cmp-error", Static).update(Text(f"Cannot use {safe_text(slot.name)!r}: {safe_text(message)}"))
        self._maybe_compare()

    def _pane_ready(self, slot: Slot, gen: int, tokenizer: Any, doc: Document, rows: list[int], width: int,
                    seg: Segmentation) -> None:
        if slot not in self.slots or gen != self.gen:
            return
        slot.tokenizer, slot.doc, slot.seg, slot.gen, slot.error = tokenizer, doc, seg, gen, None
        slot.rows, slot.rows_width = rows, width
        box = self._box(slot)
        box.remove_class("-failed")
        self._show_title(slot)
        pane = self._pane(slot)
        top = pane.top_offset() if pane.doc is not None else 0
        pane.set_marks(None, frozenset())
        pane.set_overlap(range(0))  # indices of the last pick mean nothing in the new pieces
        pane.set_doc(doc, rows, width, TEXT)
        pane.syncing = True
        pane.scroll_to(y=row_of(pane.rows, top), animate=False)
        pane.syncing = False
        self.call_after_refresh(self._relayout_if_needed)  # a scrollbar may have taken a column
        self._maybe_compare()

    def _maybe_compare(self) -> None:
        if any(s.gen != self.gen for s in self.slots):
            return
        if self.chat is not None:  # different texts: nothing to align
            self.result_slots = [s for s in self.slots if s.error is None and s.chat is not None]
            self._fill_table()
            self._update_info()
            return
        ready = [s for s in self.slots if s.error is None and s.seg is not None]
        if not ready:
            self._fill_table()
            return
        gen, text = self.gen, self.text
        segs = [s.seg for s in ready]
        self.run_worker(lambda: self._compare_job(gen, text, ready, segs), thread=True, exclusive=True,
                        group="cmp-stats", exit_on_error=False)

    def _compare_job(self, gen: int, text: str, ready: list[Slot], segs: list[Segmentation]) -> None:
        result = compare(text, segs)
        sets = result.alignment.sets
        marks = [frozenset()] + [s - sets[0] for s in sets[1:]]
        self.app.call_from_thread(self._compare_ready, gen, ready, result, marks)

    def _compare_ready(self, gen: int, ready: list[Slot], result: Comparison, marks: list[frozenset[int]]) -> None:
        if gen != self.gen:
            return
        self.result, self.result_slots = result, ready
        for slot, marked in zip(ready, marks):
            self._pane(slot).set_marks(slot.seg, marked)
        self._fill_table()
        self._update_info()

    # ----- the table and the top line -----------------------------------------------------------

    def prices(self) -> tuple[float | None, float | None, int | None]:
        return (
            parse_price(self.query_one("#cmp-price-in", Input).value),
            parse_price(self.query_one("#cmp-price-out", Input).value),
            parse_copies(self.query_one("#cmp-copies", Input).value),
        )

    def _fill_table(self) -> None:
        if self.chat is not None:
            self._fill_chat_table()
            return
        table = self.query_one("#cmp-stats", DataTable)
        table.clear()
        price_in, price_out, copies = self.prices()
        result = self.result
        items = {}
        if result is not None and None not in (price_in, price_out, copies):
            items = {c.name: c for c in costs(result.stats, price_in, price_out, copies)}  # type: ignore[arg-type]
        stats = {s.name: (k, s) for k, s in enumerate(result.stats)} if result is not None else {}
        for slot in self.slots:
            name = slot.tokenizer.name if slot.tokenizer is not None else slot.name
            shown = Text(safe_text(name))
            if slot.error is not None:
                table.add_row(Text(safe_text(slot.name)), "failed", *["-"] * (len(TEXT_COLUMNS) - 2), key=slot.key)
                continue
            if name not in stats:
                table.add_row(shown, "…", *[""] * (len(TEXT_COLUMNS) - 2), key=slot.key)
                continue
            k, s = stats[name]
            c = items.get(name)
            money = [format_money(c.input), format_money(c.output), format_money(c.input_total),
                     format_money(c.output_total)] if c else ["-"] * 4
            table.add_row(
                shown, f"{s.tokens:,}", *money, _num(s.chars_per_token), _num(s.tokens_per_word),
                _num(s.bytes_per_token), _pct(s.partial_share), _pct(s.single_byte_share),
                "-" if k == 0 else f"{s.extra_vs_first:,}", "-" if k == 0 else f"{s.missing_vs_first:,}",
                key=slot.key,
            )

    def _fill_chat_table(self) -> None:
        """Chat mode: each tokenizer's total, content, overhead, tools, context left and cost."""
        from ...core.insights.compare import cost

        table = self.query_one("#cmp-stats", DataTable)
        table.clear()
        price_in, _, copies = self.prices()
        for slot in self.slots:
            name = slot.tokenizer.name if slot.tokenizer is not None else slot.name
            shown = Text(safe_text(name))
            result = slot.chat
            if slot.error is not None:
                table.add_row(shown, "failed", *["-"] * 7, key=slot.key)
                continue
            if result is None or result.count is None or slot.gen != self.gen:
                table.add_row(shown, "…", *[""] * 7, key=slot.key)
                continue
            count = result.count
            lefts = [w.remaining(count.total) for w in result.windows if w.tokens is not None]
            left = f"{min(lefts):,}" if lefts else "unknown"
            money = ["-", "-"]
            if price_in is not None and copies is not None:
                c = cost(name, count.total, price_in, 0.0, copies)
                money = [format_money(c.input), format_money(c.input_total)]
            format_name = count.format + ("" if count.exact else " (text)")
            tools = f"{count.tool_tokens:,}" if count.tool_tokens is not None else "-"
            table.add_row(shown, format_name, f"{count.total:,}", f"{count.content_tokens:,}", f"{count.overhead:,}",
                          tools, left, *money, key=slot.key)

    def _update_chat_info(self) -> None:
        chat = self.chat
        assert chat is not None
        n = len(chat.messages)
        gen = "generation prompt on" if chat.generation else "no generation prompt"
        tools = f" · {len(chat.tools)} tools" if chat.tools else ""
        self.query_one("#cmp-info", Label).update(Text(f"chat · {n} message{'s' if n != 1 else ''}{tools} · {gen}"))
        note = Text("each pane in its own format · ")
        panes = [self._pane(s) for s in self.result_slots if self.query(f"#view-{s.key}")]
        pane = next((p for p in panes if isinstance(p, ChatPromptView)), None)
        if pane is not None:
            kinds = "".join(s.chat.count.kinds for s in self.result_slots if s.chat and s.chat.count)
            specials = any(p.doc is not None and any(f & SPECIAL for f in p.doc.flags) for p in panes)
            note.append_text(legend(pane, kinds, specials))
        self.query_one("#cmp-note", Static).update(note)

    def _update_info(self) -> None:
        if self.chat is not None:
            self._update_chat_info()
            return
        label = self.query_one("#cmp-info", Label)
        agree = _pct(self.result.agreed_share) if self.result is not None and len(self.result.stats) > 1 else None
        label.update(Text(info_line(len(self.text), agree, label.size.width or 30)))
        first = safe_text(self.result_slots[0].tokenizer.name) if self.result_slots else "the first"
        ends = [(f": a cut {first} does not make · ", ": pieces overlapping the one you picked in another pane"),
                (f": a cut {first} does not make · ", ": overlaps the piece you picked"),
                (f": not cut by {first} · ", ": overlaps your pick")]
        width = self.query_one("#cmp-note", Static).size.width or 80
        cut_end, reversed_end = next((e for e in ends if cell_len("cut" + e[0] + "reversed" + e[1]) <= width), ends[-1])
        note = Text()
        note.append("cut", style="bold #ffd27f")
        note.append(cut_end)
        note.append("reversed", style="reverse bold")
        note.append(reversed_end)
        self.query_one("#cmp-note", Static).update(note)

    @on(Input.Changed)
    def _prices_changed(self, event: Input.Changed) -> None:
        event.stop()
        parse = parse_copies if event.input.id == "cmp-copies" else parse_price
        event.input.set_class(parse(event.value) is None, "-invalid")
        self._fill_table()
        self._remember()

    @on(Input.Submitted)
    def _prices_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._focus_first()

    # ----- picking and scrolling ------------------------------------------------------------------

    def on_compare_pane_chosen(self, event: ComparePane.Chosen) -> None:
        event.stop()
        source = event.pane
        slot = self._slot_of(source)
        if self.chat is not None:
            self._chat_pick(slot, source, event.index)
            return
        if slot is None or slot.seg is None or event.index is None or event.index >= slot.seg.count:
            return
        source.set_overlap(range(0))
        start, end = slot.seg.byte_span(event.index)
        notes = []
        for other in self.slots:
            if other is slot or other.seg is None or other.error is not None:
                continue
            pane = self._pane(other)
            if pane.doc is None or len(pane.doc.ids) != other.seg.count:
                continue
            hits = other.seg.overlapping(start, end)
            pane.set_overlap(hits)
            if hits:
                pane.syncing = True
                pane.scroll_to_piece(hits[0])
                pane.syncing = False
                notes.append(f"{other.seg.name}: {len(hits)}")
        token_id = slot.seg.ids[event.index]
        piece = slot.doc.piece(event.index) if slot.doc is not None else None
        note = Text(f"{safe_text(slot.seg.name)} #{event.index} id {token_id} ")
        if piece is not None:
            note.append_text(token_text(piece.bytes))
        note.append(f" bytes {start}-{end} overlaps " + ", ".join(safe_text(n) for n in notes))
        self.query_one("#cmp-note", Static).update(note)

    def _chat_pick(self, slot: Slot | None, pane: ComparePane, index: int | None) -> None:
        """Chat mode: say what the picked token is (its id, kind and the message it belongs to)."""
        if slot is None or slot.chat is None or slot.chat.count is None or index is None:
            return
        count = slot.chat.count
        if index >= count.total:
            return
        owner = next((s for s in count.spans if s.start <= index < s.end), None)
        where = ""
        if owner is not None:
            where = (f" · message {owner.message + 1}" if owner.kind == "message" and owner.message is not None
                     else " · before the messages" if owner.kind == "prefix" else " · generation prompt")
        kind = pane.kind_of(index) if isinstance(pane, ChatPromptView) else ""
        name = safe_text(slot.tokenizer.name if slot.tokenizer is not None else slot.name)
        self.query_one("#cmp-note", Static).update(
            Text(f"{name} token {index + 1}/{count.total:,} · id {count.ids[index]} · {kind}{where}"))

    def on_compare_pane_scrolled(self, event: ComparePane.Scrolled) -> None:
        event.stop()
        if self.chat is not None:
            return  # the panes hold different texts
        for other in self.query(ComparePane):
            if other is event.pane or other.doc is None:
                continue
            other.syncing = True
            other.scroll_to(y=row_of(other.rows, event.offset), animate=False)
            other.syncing = False

    # ----- editing the text --------------------------------------------------------------------------

    def action_edit(self) -> None:
        if self.chat is not None:
            self.app.open_view("chat")  # type: ignore[attr-defined]  # the conversation is edited there
            return
        self.add_class("-editing")
        self.query_one("#cmp-editor", TextArea).focus()

    @on(TextArea.Changed, "#cmp-editor")
    def _text_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        text = event.text_area.real_text if isinstance(event.text_area, Editor) else event.text_area.text
        if text == self.text:
            return
        self.text = text
        self._edited = True
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(0.12, self._after_edit)

    def _after_edit(self) -> None:
        self._debounce = None
        self._update_info()
        self.refresh_all()

    # ----- actions ---------------------------------------------------------------------------------

    def action_close(self) -> None:
        editor = self.query_one("#cmp-editor", TextArea)
        if self.has_class("-editing") and editor.has_focus:
            self.remove_class("-editing")
            self._focus_first()
            return
        if self._edited and hasattr(self.app, "set_text") and self.text != getattr(self.app, "text", self.text):
            self.app.set_text(self.text)  # what was typed here goes back to the explorer's input
            self.app.notify("The edited text is back in the explorer's input.", title="Compare")
        self.dismiss()

    def action_toggle_layout(self) -> None:
        self.side = not self.side_by_side
        self._apply_layout()
        self._remember()
        self.call_after_refresh(self.refresh_all)

    # ----- diff: are two panes' tokenizers the same? ------------------------------------------------

    def action_diff(self) -> None:
        """The verdict of ``tokscope diff`` for pane 1 and the focused pane (pane 2 when pane 1 has the
        focus) in the note line, computed in a worker over the text and generated texts."""
        loaded = [s for s in self.slots if s.tokenizer is not None and s.error is None]
        if len(loaded) < 2:
            self.notify("Diff needs two loaded tokenizers.", severity="warning")
            return
        focused = self._slot_of(self.focused) if isinstance(self.focused, ComparePane) else None
        a = loaded[0]
        b = focused if focused in loaded and focused is not a else loaded[1]
        pair = (self.slots.index(a) + 1, self.slots.index(b) + 1)
        self._diff_cancel.set()
        self._diff_cancel = cancel = threading.Event()
        self.diff_result = None
        self.query_one("#cmp-note", Static).update(Text(f"diff {pair[0]} vs {pair[1]}: searching…"))
        text = self.text if self.chat is None else None
        self.run_worker(lambda: self._diff_job(pair, a.tokenizer, b.tokenizer, text, cancel), thread=True,
                        exclusive=True, group="cmp-diff", exit_on_error=False)

    def _diff_job(self, pair: tuple[int, int], a: Any, b: Any, text: str | None, cancel: threading.Event) -> None:
        from ...core.insights.diff import diff_tokenizers

        try:
            result = diff_tokenizers(a, b, text or None, seconds=DIFF_SECONDS, cancel=cancel)
        except CancelledError:
            return
        except Exception as exc:  # noqa: BLE001 - said in the note line
            self.app.call_from_thread(self._diff_ready, pair, None, str(exc) or type(exc).__name__, cancel)
            return
        self.app.call_from_thread(self._diff_ready, pair, result, None, cancel)

    def _diff_ready(self, pair: tuple[int, int], result: Any, error: str | None, cancel: threading.Event) -> None:
        if cancel is not self._diff_cancel or not self.is_mounted:
            return
        self.diff_result = result
        self._show_diff(pair, error)

    def _show_diff(self, pair: tuple[int, int], error: str | None) -> None:
        """The last verdict (:attr:`diff_result`) in the note line, as ``tokscope diff`` shows its splits."""
        result = self.diff_result
        note = Text(f"diff {pair[0]} vs {pair[1]}: ")
        if result is None:
            note.append(f"failed: {safe_text(error)}")
        else:
            note.append(result.verdict, style="bold")
            found = result.search.difference
            if found is not None and not isinstance(found.a, str) and not isinstance(found.b, str):
                note.append(f" · \"{safe_text(found.text[:40], ws=True)}\": ")
                for label, pieces in (("", found.a), (" vs ", found.b)):
                    note.append(label)
                    note.append("│".join(token_label(p.bytes) for p in pieces))
            elif found is None:
                note.append(f" · no text splits differently ({result.search.tried:,} tried)")
            v = result.vocab
            if not v.same:
                note.append(f" · vocab: {v.only_a:,}/{v.only_b:,} only in one, {v.different_id:,} other ids")
        self.query_one("#cmp-note", Static).update(note)

    def action_focus_prices(self) -> None:
        self.query_one("#cmp-price-in", Input).focus()

    def action_add(self) -> None:
        """Pick an encoding to add; with the screen full, the pick replaces the focused pane (the
        picker still opens, so the letters typed next go into its filter, never into the text)."""
        from ...sources import registry
        from .dialogs import EncodingPicker

        if len(self.slots) >= MAX_ON_SCREEN:
            focused = self.focused
            slot = (self._slot_of(focused) if isinstance(focused, ComparePane) else None) or self.slots[-1]
            k = self.slots.index(slot) + 1
            title = f"Replace pane {k} ({MAX_ON_SCREEN} panes at most; tokscope compare takes any number)"
            self.app.push_screen(EncodingPicker(registry.list_encodings(), "", title=title),
                                 lambda name: self.replace_encoding(slot, name))
            return
        self.app.push_screen(EncodingPicker(registry.list_encodings(), ""), self.add_encoding)

    def replace_encoding(self, slot: Slot, name: str | None) -> None:
        """Put ``name`` in ``slot``'s place (ignored when None or already shown)."""
        from ...sources.registry import canonical_name

        if not name or slot not in self.slots:
            return
        if any(canonical_name(s.name) == canonical_name(name) for s in self.slots):
            self.notify(f"{safe_text(name)} is already shown.", severity="warning", markup=False)
            return
        k = self.slots.index(slot)
        slot.cancel.set()
        old_box = self._box(slot)
        new = self._new_slot(name)  # appended: put it where the old one was
        self.slots.remove(new)
        self.slots[k] = new
        self._remember()
        self.call_later(self._after_mount, self.query_one("#cmp-panes").mount(self._new_box(new), after=old_box))
        old_box.remove()
        for other in self.slots:
            if other is not new:
                self._show_title(other)
        # the focused pane went with its box: the new one takes the focus (left to Textual, it
        # would go to a price field, where the next letters would be typed)
        self.call_after_refresh(self._focus_pane, new)

    def _focus_pane(self, slot: Slot) -> None:
        if slot in self.slots and self.query(f"#view-{slot.key}"):
            self._pane(slot).focus()
        else:
            self._focus_first()

    def add_encoding(self, name: str | None) -> None:
        """Add a pane for ``name`` (ignored when None, refused when already shown or full)."""
        if not name:
            return
        from ...sources.registry import canonical_name

        if any(canonical_name(s.name) == canonical_name(name) for s in self.slots):
            self.notify(f"{safe_text(name)} is already shown.", severity="warning", markup=False)
            return
        if len(self.slots) >= MAX_ON_SCREEN:
            self.notify(f"At most {MAX_ON_SCREEN} encodings fit here.", severity="warning")
            return
        self._add_slot(name)

    def action_remove(self) -> None:
        if len(self.slots) <= 1:
            self.notify("Keep at least one encoding.", severity="warning")
            return
        focused = self.focused
        slot = None
        if isinstance(focused, ComparePane):
            slot = self._slot_of(focused)
        slot = slot or self.slots[-1]
        self.remove_encoding(slot.name)

    def remove_encoding(self, name: str) -> None:
        slot = next((s for s in self.slots if s.name == name), None)
        if slot is None:
            return
        self.slots.remove(slot)
        self._box(slot).remove()
        self._remember()
        for k, other in enumerate(self.slots):
            self._show_title(other)
        self.call_after_refresh(self.refresh_all)
        self.call_after_refresh(self._focus_first)
