"""The vocabulary browser: search every token of the encoding, open any result in the merge tree.

Search by substring (inside the tokens' bytes), regular expression (over their text, and for
kinds whose vocabulary spells a token otherwise, ``▁the``, ``##ing``, ``<0xE2>``, over that
spelling too), bytes in hex, or id; sort by id or by length (longest first). For those kinds the
table has a column with the vocabulary's spelling. The search runs in a thread worker as you
type (a newer keystroke cancels the older search); a bad regular expression or hex shows a one-line
error under the box and keeps what you typed. Results are a ``DataTable`` (drawn with the Line API)
of at most :data:`SHOWN` rows; the status line says how many matched. Enter opens the token in the
merge tree (:class:`tokscope.app.screens.why.WhyScreen`; for a kind without merges, the why
view's own account of the token). CLI twin: ``tokscope vocab``.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Input, Static

from ...core.text.display import safe_text
from ...core.text.errors import CancelledError, TokscopeError
from ...core.tokenizer.tokenizer import Tokenizer
from ...core.explain.vocab_search import VocabResult, search_vocab
from ..messages import EncodingChanged
from ..render import token_text
from ..widgets.form import Select
from .base import ViewScreen, view_bindings

#: rows put in the table at most (the status line gives the full count)
SHOWN = 500
#: seconds to wait after a keystroke before searching (typing fast starts one search, not many)
DEBOUNCE = 0.12

MODES = [("substring", "substring"), ("regex", "regex"), ("hex bytes", "hex"), ("id", "id")]
SORTS = [("by id", "id"), ("longest first", "length")]
PLACEHOLDERS = {
    "substring": "text inside tokens, e.g. ing",
    "regex": r"regular expression, e.g. ^ [A-Z]\w+ing$",
    "hex": "bytes in hex, e.g. e2 80 99",
    "id": "a token id, e.g. 1000",
}
#: the regex placeholder for a vocabulary that spells tokens otherwise (its spelling matches too)
SPELLED_REGEX = r"regular expression over text or spelling, e.g. ^##ing or ^▁the$"


class VocabScreen(ViewScreen):
    """Search the whole vocabulary; Enter opens a token in the merge tree."""

    DEFAULT_CSS = """
    VocabScreen { layout: vertical; }
    VocabScreen #voc-title { height: 1; background: $panel; padding: 0 1; }
    VocabScreen #voc-row { height: 3; }
    VocabScreen #voc-mode { width: 17; }
    VocabScreen #voc-query { width: 1fr; }
    VocabScreen #voc-sort { width: 19; }
    VocabScreen #voc-table { height: 1fr; }
    VocabScreen #voc-status { height: 1; padding: 0 1; }
    VocabScreen #voc-status.-error { color: $error; text-style: bold; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("slash", "focus_query", "Search"),
        Binding("ctrl+o", "cycle_mode", "Mode"),
        Binding("ctrl+l", "toggle_sort", "Sort"),
        *view_bindings(),
    ]

    def __init__(self, query: str = "", mode: str = "substring") -> None:
        super().__init__()
        self._initial = (query, mode)
        self.result: VocabResult | None = None
        self.error: str | None = None
        self._cancel = threading.Event()
        self._serial = 0
        self._timer = None

    def compose(self) -> ComposeResult:
        query, mode = self._initial
        yield Static("Vocabulary", id="voc-title")
        with Horizontal(id="voc-row"):
            yield Select(MODES, value=mode, allow_blank=False, id="voc-mode")
            yield Input(query, placeholder=PLACEHOLDERS[mode], id="voc-query")
            yield Select(SORTS, value="id", allow_blank=False, id="voc-sort")
        table = DataTable(id="voc-table", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static("", id="voc-status")
        yield Footer(compact=True, show_command_palette=False)

    @property
    def tokenizer(self) -> Tokenizer | None:
        return getattr(self.app, "tokenizer", None)

    @property
    def spelled(self) -> bool:
        """The vocabulary spells its tokens otherwise than their bytes (``▁the``, ``##ing``): every
        kind but byte-level BPE from ranks."""
        tokenizer = self.tokenizer
        return tokenizer is not None and not tokenizer.ranks

    def _columns(self) -> None:
        """The table's columns for the encoding: a spelling column for a vocabulary that has one."""
        table = self.query_one(DataTable)
        spelled = self.spelled
        if table.columns and ("vocab" in table.columns) == spelled:
            return
        table.clear(columns=True)
        table.add_column("id", key="id", width=7)
        table.add_column("len", key="len", width=3)
        if spelled:
            table.add_column("text", key="text", width=18)
            table.add_column("vocabulary", key="vocab", width=18)
        else:
            table.add_column("text", key="text", width=28)
        table.add_column("bytes (hex)", key="hex")

    def _placeholder(self) -> None:
        mode = self.mode
        text = SPELLED_REGEX if mode == "regex" and self.spelled else PLACEHOLDERS.get(mode, "")
        self.query_one("#voc-query", Input).placeholder = text

    def on_mount(self) -> None:
        self._columns()
        self._placeholder()
        self.query_one("#voc-query", Input).focus()
        self.search()

    def on_unmount(self) -> None:
        self._cancel.set()

    def on_encoding_changed(self, event: EncodingChanged) -> None:
        self._columns()
        self._placeholder()
        self.search()

    # ----- searching --------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return str(self.query_one("#voc-mode", Select).value)

    @property
    def sort(self) -> str:
        return str(self.query_one("#voc-sort", Select).value)

    @on(Input.Changed, "#voc-query")
    def _query_changed(self, event: Input.Changed) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._status("…")
        self._timer = self.set_timer(DEBOUNCE, self.search)

    @on(Input.Submitted, "#voc-query")
    def _query_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        self._placeholder()
        self.search()

    def search(self) -> None:
        """Start a search for what the box holds (cancelling the one running)."""
        tokenizer = self.tokenizer
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if tokenizer is None:
            self._status("no encoding loaded yet", error=True)
            return
        self._cancel.set()
        self._cancel = threading.Event()
        self._serial += 1
        query = self.query_one("#voc-query", Input).value
        self._status("searching…")
        self._run(self._serial, tokenizer, self.mode, query, self.sort, self._cancel)

    @staticmethod
    def arguments(mode: str, query: str) -> dict:
        """The core's search arguments for what the user typed (empty: the whole vocabulary)."""
        if query == "":
            return {}
        if mode == "id":
            try:
                return {"token_id": int(query.strip().replace("_", ""))}
            except ValueError:
                raise TokscopeError(f"not a token id: {query!r}") from None
        key = {"substring": "substring", "regex": "pattern", "hex": "hex_bytes"}[mode]
        return {key: query}

    @work(thread=True, exclusive=True, group="vocab-search", exit_on_error=False)
    def _run(self, serial: int, tokenizer: Tokenizer, mode: str, query: str, sort: str,
             cancel: threading.Event) -> None:
        try:
            result = search_vocab(tokenizer, sort=sort, limit=SHOWN, cancel=cancel,  # type: ignore[arg-type]
                                  **self.arguments(mode, query))
        except CancelledError:
            return
        except TokscopeError as exc:
            self.app.call_from_thread(self._show_error, serial, str(exc))
            return
        self.app.call_from_thread(self._show, serial, tokenizer, result)

    def _show_error(self, serial: int, message: str) -> None:
        if serial == self._serial and self.is_attached:
            self.error = message
            self.result = None
            self.query_one(DataTable).clear()  # the last search's rows answered another query
            self._status(safe_text(message), error=True)

    def _show(self, serial: int, tokenizer: Tokenizer, result: VocabResult) -> None:
        if serial != self._serial or not self.is_attached or tokenizer is not self.tokenizer:
            return
        self.result = result
        self.error = None
        self._columns()
        table = self.query_one(DataTable)
        table.clear()
        spelled = self.spelled
        for token in result.tokens:
            text = token_text(token.bytes, style="magenta" if token.special else "")
            cells: list = [str(token.id), str(len(token.bytes)), text]
            if spelled:
                cells.append(Text(safe_text(tokenizer.token_str(token.id)), no_wrap=True, overflow="ellipsis"))
            table.add_row(*cells, token.bytes.hex(" "), key=str(token.id))
        shown = len(result.tokens)
        what = f"{result.total:,} match{'es' if result.total != 1 else ''}"
        if result.kind == "all":
            what = f"{result.total:,} tokens"
        more = f" · showing the first {shown:,}" if result.truncated else ""
        order = "by id" if self.sort == "id" else "longest first"
        hint = ""
        if spelled and result.total == 0 and self.mode == "substring":
            hint = " · a spelling (▁the, ##ing) is found in regex mode (^O)"
        target = "merge tree" if tokenizer.kind.endswith("BPE") else "why view"
        self._status(f"{what}{more}{hint} · {order} · Enter: {target} · /: search · ^O mode · ^L sort")
        self.query_one("#voc-title", Static).update(
            Text(f"Vocabulary · {safe_text(tokenizer.name)} · {tokenizer.kind} · {tokenizer.n_vocab:,} ids"))

    def _status(self, message: str, *, error: bool = False) -> None:
        status = self.query_one("#voc-status", Static)
        status.update(Text(message))
        status.set_class(error, "-error")

    # ----- opening a token --------------------------------------------------------------------

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.open_in_tree(int(event.row_key.value))

    def open_in_tree(self, token_id: int) -> None:
        """Open ``token_id`` in the merge tree: the why view this browser was opened from (this
        browser closes), or a new one on top of it (Escape comes back to the results)."""
        app = self.app
        if hasattr(app, "open_token"):
            app.open_token(token_id, source="vocabulary")
        app.open_view("why", token_id=token_id)  # type: ignore[attr-defined]

    # ----- keys -------------------------------------------------------------------------------

    def action_focus_query(self) -> None:
        self.query_one("#voc-query", Input).focus()

    def action_cycle_mode(self) -> None:
        select = self.query_one("#voc-mode", Select)
        values = [v for _, v in MODES]
        select.value = values[(values.index(self.mode) + 1) % len(values)]

    def action_toggle_sort(self) -> None:
        select = self.query_one("#voc-sort", Select)
        select.value = "length" if self.sort == "id" else "id"

    def action_close(self) -> None:
        self._cancel.set()
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action == "focus_query" and isinstance(self.focused, Input))
