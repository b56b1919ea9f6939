"""The languages screen: the shipped passage in many languages, token counts per encoding, and
each language's premium over English, as a table and as a bar chart.

Counting runs in a thread worker (``tokscope.core.insights.languages.language_table``); an encoding that
fails to load is named in the note line and the others are shown. Opened with no encodings named,
the screen counts with the default comparison, or, when the explorer's encoding is not one of
them, with that encoding first (its tokenizer as loaded, of any kind: a file, a model of the hub
cache) and the first defaults after it, as the comparison view starts. CLI twin: ``tokscope languages``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Static

from ...core.insights.compare import DEFAULT_COMPARE, MAX_ON_SCREEN, bar
from ...core.text.display import safe_text
from ...core.insights.languages import LanguageTable
from ...core.tokenizer.tokenizer import Tokenizer
from ..widgets.table import WholeColumnsTable
from .base import ViewScreen, view_bindings
from .dialogs import short_name

#: the widest an encoding's name is shown in a column heading and the chart's legend
NAME_CELLS = 18

#: one colour per encoding column (16-colour names, so they work on any colour terminal)
COLOURS = ("cyan", "magenta", "yellow", "green")


def chart_lines(tbl: LanguageTable, width: int, *, ascii: bool = False) -> Text:
    """The bar chart: per language one bar per encoding, scaled to the largest count."""
    out = Text(no_wrap=True, overflow="crop")
    if not tbl.rows:
        return out
    label = max(len(r.name) for r in tbl.rows)
    # room for the bar: what the widest count and premium after it leave (no row may wrap)
    suffix = max((len(f" {count:,}" + ("" if prem is None else f" ×{prem:.2f}"))
                  for row in tbl.rows for count, prem in zip(row.counts, row.premiums)), default=0)
    room = max(6, width - label - 1 - suffix - 1)
    top = tbl.max_count()
    names = [short_name(safe_text(n), NAME_CELLS) for n in tbl.encodings]
    legend = Text("  ".join(f"■ {n}" for n in names))
    for k, _ in enumerate(names):
        start = sum(len(f"■ {n}  ") for n in names[:k])
        legend.stylize(COLOURS[k % len(COLOURS)], start, start + 1)
    out.append_text(legend)
    scale = f"(full bar = {top:,} tokens)"
    out.append(f"   {scale}\n" if legend.cell_len + 3 + len(scale) <= width else f"\n{scale}\n")
    for row in tbl.rows:
        for k, (count, prem) in enumerate(zip(row.counts, row.premiums)):
            head = row.name if k == 0 else ""
            out.append(f"{head:<{label}} ")
            out.append(bar(count, top, room, ascii=ascii), style=COLOURS[k % len(COLOURS)])
            out.append(f" {count:,}" + ("" if prem is None else f" ×{prem:.2f}") + "\n")
    return out


class LanguagesScreen(ViewScreen):
    """Tokens per language per encoding, and the premium over English."""

    DEFAULT_CSS = """
    LanguagesScreen { layout: vertical; }
    #lang-note { height: 1; padding: 0 1; }
    #lang-body { height: 1fr; }
    #lang-table { width: auto; max-width: 70%; height: 1fr; }
    #lang-chart-box { width: 1fr; height: 1fr; border-left: vkey $secondary; }
    #lang-passage { height: auto; max-height: 8; padding: 0 1; border-top: hkey $secondary; }
    LanguagesScreen.-narrow #lang-body { layout: vertical; }
    LanguagesScreen.-narrow #lang-table { width: 1fr; max-width: 100%; height: 1fr; }
    LanguagesScreen.-narrow #lang-chart-box { height: 1fr; border-left: none; border-top: hkey $secondary; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("enter", "compare_passage", "Compare it", show=True),
        Binding("a", "add", "Add encoding"),
        Binding("x", "remove", "Remove last"),
        Binding("b", "toggle_ascii", "ASCII bars"),
        *view_bindings(),
    ]

    def __init__(self, encodings: list[str] | None = None) -> None:
        super().__init__()
        self._named = bool(encodings)
        self.encodings = list(encodings or DEFAULT_COMPARE)
        #: tokenizers already loaded, by the name shown (the explorer's: a file's tokenizer is
        #: named after the file, a name the registry cannot load again)
        self.given: dict[str, Tokenizer] = {}
        self.table_data: LanguageTable | None = None
        self.failed: list[tuple[str, str]] = []
        self.ascii = False

    def compose(self) -> ComposeResult:
        yield Static("counting…", id="lang-note")
        with Horizontal(id="lang-body"):
            yield WholeColumnsTable(id="lang-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="lang-chart-box"):
                yield Static("", id="lang-chart")
        passage = VerticalScroll(Static("", id="lang-passage-text", markup=False), id="lang-passage")
        yield passage
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.set_class(self.size.width < 120, "-narrow")
        current = getattr(self.app, "tokenizer", None)
        if not self._named and isinstance(current, Tokenizer):
            # the explorer's encoding first when the defaults do not have it (as the comparison
            # view starts), three columns in all so the table fits 80 columns
            self.given[current.name] = current
            self.encodings = self._dedupe([current.name, *self.encodings])
            if len(self.encodings) > len(DEFAULT_COMPARE):
                self.encodings = self.encodings[:len(DEFAULT_COMPARE)]
            else:
                self.encodings = list(DEFAULT_COMPARE)
        self.recount()

    @staticmethod
    def _dedupe(names: list[str]) -> list[str]:
        from ...sources.registry import canonical_name

        out: list[str] = []
        for name in names:
            if all(canonical_name(n) != canonical_name(name) for n in out):
                out.append(name)
        return out

    def on_resize(self) -> None:
        self.set_class(self.size.width < 120, "-narrow")
        self.call_after_refresh(self._draw_chart)

    def recount(self) -> None:
        self.query_one("#lang-note", Static).update(Text(f"counting with {', '.join(map(safe_text, self.encodings))}…"))
        names = list(self.encodings)
        given = dict(self.given)
        self.run_worker(lambda: self._count_job(names, given), thread=True, exclusive=True, group="languages",
                        exit_on_error=False)

    def _count_job(self, names: list[str], given: dict[str, Tokenizer] | None = None) -> None:
        from ...core.insights.languages import language_table
        from ...sample_texts import language_text, languages
        from ...sources import registry

        tokenizers, failed = [], []
        for name in names:
            try:
                tokenizers.append((name, (given or {}).get(name) or registry.load(name)))
            except Exception as exc:  # noqa: BLE001 - said in the note line, the others still count
                failed.append((name, str(exc) or type(exc).__name__))
        index = languages()
        texts = {lang["code"]: language_text(lang["code"]) for lang in index}
        titles = {lang["code"]: lang["name"] for lang in index}

        def table(loaded: list[tuple[str, Tokenizer]]) -> LanguageTable:
            return language_table(texts, [tok for _, tok in loaded], names=titles)

        try:
            tbl = table(tokenizers)
        except Exception:  # noqa: BLE001 - a tokenizer that fails on a passage: find which, count the others
            working = []
            for name, tok in tokenizers:
                try:
                    table([(name, tok)])
                    working.append((name, tok))
                except Exception as exc:  # noqa: BLE001
                    failed.append((name, f"cannot count: {str(exc) or type(exc).__name__}"))
            tbl = table(working)
        self.app.call_from_thread(self._ready, names, tbl, failed)

    def on_worker_state_changed(self, event: Any) -> None:
        """A count that failed all the same says so in the note line (not "counting…" for ever)."""
        from textual.worker import WorkerState

        if event.worker.group == "languages" and event.state == WorkerState.ERROR:
            error = event.worker.error
            self.query_one("#lang-note", Static).update(
                Text(f"cannot count: {safe_text(str(error) or type(error).__name__)}"))

    def _ready(self, names: list[str], tbl: LanguageTable, failed: list[tuple[str, str]]) -> None:
        if names != self.encodings:
            return
        self.table_data, self.failed = tbl, failed
        table = self.query_one("#lang-table", DataTable)
        table.clear(columns=True)
        table.add_column("language")
        for name in tbl.encodings:
            table.add_column(Text(short_name(safe_text(name), NAME_CELLS)))
            table.add_column("×en")
        for row in tbl.rows:
            cells: list[Any] = [row.name]
            for count, prem in zip(row.counts, row.premiums):
                cells += [Text(f"{count:,}", justify="right"), Text("-" if prem is None else f"{prem:.2f}", justify="right")]
            table.add_row(*cells, key=row.code)
        note = f"{len(tbl.rows)} languages, same passage; ×en = tokens relative to English; Enter compares one"
        if failed:
            note = "; ".join(f"{safe_text(n)}: {safe_text(e)}" if e.startswith("cannot count: ")
                             else f"cannot load {safe_text(n)}: {safe_text(e)}" for n, e in failed) + " — " + note
        self.query_one("#lang-note", Static).update(Text(note))
        # the table's width comes with its new columns: draw the chart once the layout has them
        self.call_after_refresh(self._draw_chart)

    def _draw_chart(self) -> None:
        if self.table_data is None:
            return
        box = self.query_one("#lang-chart-box")
        # the scrollbar may come with the chart: keep a column free for it
        width = max(20, (box.scrollable_content_region.width or self.size.width) - 1)
        self.query_one("#lang-chart", Static).update(chart_lines(self.table_data, width, ascii=self.ascii))

    def passage(self, code: str) -> str:
        from ...sample_texts import language_text

        return language_text(code)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted language's passage is shown under the table and chart."""
        if event.row_key is None or event.row_key.value is None:
            return
        code = event.row_key.value
        name = next((r.name for r in self.table_data.rows if r.code == code), code) if self.table_data else code
        box = self.query_one("#lang-passage", VerticalScroll)
        box.border_title = Text(f"{safe_text(name)} (Enter: compare the encodings on it)")
        self.query_one("#lang-passage-text", Static).update(safe_text(self.passage(code).strip()))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self._compare(event.row_key.value)

    def action_compare_passage(self) -> None:
        table = self.query_one("#lang-table", DataTable)
        if self.table_data is None or not self.table_data.rows:
            return
        row = self.table_data.rows[max(0, min(table.cursor_row, len(self.table_data.rows) - 1))]
        self._compare(row.code)

    def _compare(self, code: str) -> None:
        """The passage in the comparison view, with this screen's encodings (the explorer's text is
        left as it is)."""
        self.app.open_view("compare", encodings=list(self.encodings), text=self.passage(code))  # type: ignore[attr-defined]

    def action_close(self) -> None:
        self.dismiss()

    def action_toggle_ascii(self) -> None:
        self.ascii = not self.ascii
        self._draw_chart()

    def action_add(self) -> None:
        if len(self.encodings) >= MAX_ON_SCREEN:
            self.notify(f"At most {MAX_ON_SCREEN} encodings here; 'tokscope languages' takes any number.",
                        severity="warning")
            return
        from ...sources import registry
        from .dialogs import EncodingPicker

        self.app.push_screen(EncodingPicker(registry.list_encodings(), ""), self.add_encoding)

    def add_encoding(self, name: str | None) -> None:
        from ...sources.registry import canonical_name

        if not name:
            return
        if any(canonical_name(n) == canonical_name(name) for n in self.encodings):
            self.notify(f"{safe_text(name)} is already shown.", severity="warning", markup=False)
            return
        if len(self.encodings) >= MAX_ON_SCREEN:
            self.notify(f"At most {MAX_ON_SCREEN} encodings here.", severity="warning")
            return
        self.encodings.append(name)
        self.recount()

    def action_remove(self) -> None:
        if len(self.encodings) <= 1:
            self.notify("Keep at least one encoding.", severity="warning")
            return
        self.encodings.pop()
        self.recount()
