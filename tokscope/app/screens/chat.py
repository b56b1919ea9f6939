"""The chat screen: what a conversation costs in tokens, rendered as the model sees it.

Left, the messages (role, tokens, the first line of the content) and, under them, the selected
message's content in an editor. Right, the rendered prompt in a token view, every token coloured
by its kind: template text, template special tokens, message content, tokens merged from both,
tool definitions (the legend is under it). The top line holds the total, the format (the model's
own chat template when the tokenizer came from a model folder, else the one its special tokens
call for; Ctrl+F or the select picks another) and the generation prompt switch (Ctrl+G); under
the panes, the per-part counts, the context sizes the total is held to, and every warning
(special tokens spelled in content, a doubled BOS, unknown roles, format strings that are not
special tokens here, a failing template as one line with its line number).

Counting runs in a thread worker (a newer edit cancels it); the encoding switch (F2) re-renders
with that tokenizer's format. F5 compares the conversation under two to four tokenizers, each in
its own format. Ctrl+O / Ctrl+S load and save the conversation as chat-completions JSON. The
conversation stays while the explorer runs (``app.chat_draft``). CLI twin: ``tokscope chat``.

No letter key acts here: every key is a Ctrl chord, a function key, Delete (in the message list)
or Escape, so typing always types.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Checkbox, DataTable, Footer, Label, Static, TextArea

from ...core.text.display import safe_text
from ...core.document.document import SPECIAL, Document
from ...core.text.errors import CancelledError, TokscopeError
from ..chat_model import (
    AUTO,
    ROLES,
    ChatDraft,
    ChatResult,
    content_of,
    count_draft,
    fit_line,
    preview,
    set_content,
    summary_line,
)
from ..command_list import CommandList
from ..fit import cut, first_fit, number_width, title_room
from ..messages import EncodingChanged
from ..render import MODES, TEXT, layout
from ..widgets.chat_view import ChatPromptView, legend
from ..widgets.compare_view import ComparePane
from ..widgets.editor import Editor, to_editor, uses_crlf
from ..widgets.form import Select
from ..widgets.token_view import palette_kind
from .base import ViewScreen, view_bindings

#: seconds after an edit before counting (typing fast starts one count, not one per key)
DEBOUNCE = 0.1
#: from this width the message list is wider
WIDE = 110
#: explorer texts longer than this do not become the first user message (the example does)
MAX_START_TEXT = 200_000
#: the largest conversation file the screen opens (the explorer's own limit)
MAX_JSON_BYTES = 8 * 1024 * 1024

#: the warnings' pointer to the Python API for ChatML's assumed ids, and what this screen offers instead
PYTHON_HINT, SCREEN_HINT = "ChatMLFormat(assume_ids=True)", "the format chatml-ids (Ctrl+F)"

#: the keys, for the help screen (F1) and the README
CHAT_KEYS = [
    ("Ctrl+N", "new message after the selected one (user after assistant, assistant after user)"),
    ("Delete / Ctrl+Z", "in the message list: remove the selected message / bring it back"),
    ("Ctrl+↑ Ctrl+↓", "move the selected message up / down (Alt+↑ Alt+↓ too)"),
    ("Ctrl+R", "next role: system, developer, user, assistant, tool"),
    ("Ctrl+G", "generation prompt on / off (the header the model answers after)"),
    ("Ctrl+F", "next format (the select in the top line lists them)"),
    ("F5", "compare this conversation under two to four tokenizers, each in its own format"),
    ("Ctrl+O / Ctrl+S", "open / save the conversation (chat-completions JSON: messages, tools)"),
    ("F9", "copy the ids, the rendered prompt, or the conversation's JSON"),
    ("Ctrl+T", "rendered prompt: text, ids, or both"),
    ("Ctrl+A / Ctrl+L", "select all / clear the message's text (Ctrl+Z in the editor brings it back)"),
    ("Tab / Escape", "next pane / out of the editor, then back to the explorer (the conversation stays)"),
    ("F2", "another encoding: the prompt is rendered again in its format"),
]


class ChatCommands(CommandList):
    """The chat screen's actions in the command palette (Ctrl+P), the formats and roles among them."""

    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        screen = self.screen
        if not isinstance(screen, ChatScreen):
            return []
        run = screen.run_action
        out: list[tuple[str, str, Callable[[], Any]]] = [
            ("Chat: new message", "after the selected one (Ctrl+N)", partial(run, "add")),
            ("Chat: remove the message", "the selected one; Ctrl+Z in the list brings it back (Delete)",
             partial(run, "remove")),
            ("Chat: bring back", "the conversation before the last removal, opening or reset (Ctrl+Z)",
             partial(run, "undo")),
            ("Chat: move the message up", "(Ctrl+↑)", partial(run, "move(-1)")),
            ("Chat: move the message down", "(Ctrl+↓)", partial(run, "move(1)")),
            ("Chat: generation prompt on/off", "the header the model answers after (Ctrl+G)",
             partial(run, "toggle_generation")),
            ("Chat: open a conversation…", "chat-completions JSON: messages, or {messages, tools} (Ctrl+O)",
             partial(run, "open")),
            ("Chat: save the conversation…", "as chat-completions JSON, atomically (Ctrl+S)", partial(run, "save")),
            ("Chat: compare tokenizers", "this conversation under 2-4 tokenizers, each in its own format (F5)",
             partial(run, "compare")),
            ("Chat: copy the ids", "the rendered prompt's ids, space separated", partial(screen.copy, "ids")),
            ("Chat: copy the rendered prompt", "the text the model reads", partial(screen.copy, "text")),
            ("Chat: copy the conversation", "as chat-completions JSON", partial(screen.copy, "json")),
            ("Chat: visible whitespace on/off", "spaces, tabs and newlines in the prompt as · → ⏎",
             partial(run, "toggle_ws")),
            ("Chat: prompt as text, ids or both", "(Ctrl+T)", partial(run, "cycle_mode")),
            ("Chat: add the explorer's text", "as a user message after the selected one", screen.add_explorer_text),
            ("Chat: start from the example", "the example conversation; Ctrl+Z brings yours back",
             screen.reset_to_example),
        ]
        for role in ROLES:
            out.append((f"Chat: role {role}", "for the selected message (Ctrl+R cycles)", partial(screen.set_role, role)))
        for label, value in screen.format_choices():
            out.append((f"Chat: format {safe_text(label)}", "render the conversation in this format (Ctrl+F cycles)",
                        partial(screen.set_format, value)))
        return out


class ChatScreen(ViewScreen):
    """What a conversation costs in tokens (see the module docstring)."""

    MIN_SIZE = (60, 16)
    COMMANDS = {ChatCommands}

    DEFAULT_CSS = """
    ChatScreen { layout: vertical; }
    #chat-top { height: 1; }
    #chat-info { width: 1fr; padding: 0 1; }
    #chat-format { width: 20; margin: 0 1 0 0; }
    #chat-gen { width: auto; }
    #chat-body { height: 1fr; }
    #chat-left { width: 36; }
    ChatScreen.-wide #chat-left { width: 48; }
    #chat-messages { height: 1fr; border: round $foreground 45%; overflow-x: hidden; scrollbar-size-vertical: 1; }
    #chat-messages:focus { border: round $accent; }
    #chat-content { height: 7; border: round $foreground 45%; padding: 0; }
    #chat-content:focus { border: round $accent; }
    ChatScreen.-tall #chat-content { height: 12; }
    #chat-prompt { width: 1fr; height: 1fr; border: round $foreground 45%; padding: 0 0 0 1;
                   overflow-y: scroll; }
    #chat-prompt:focus { border: round $accent; }
    #chat-notes { height: 4; padding: 0 1; }
    #chat-notes:focus { background: $boost; }
    ChatScreen.-tall #chat-notes { height: auto; min-height: 6; max-height: 40%; }
    ChatScreen.-narrow #chat-left { width: 32; }
    ChatScreen.-narrow #chat-format { width: 16; }
    ChatScreen.-short #chat-content { height: 4; }
    ChatScreen.-short #chat-notes { height: 2; }
    #chat-notes-text { width: 1fr; }
    """

    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("f1", "help", "Help"),
        Binding("ctrl+n", "add", "New"),
        Binding("ctrl+r", "role", "Role"),
        Binding("ctrl+up,alt+up", "move(-1)", "Move", key_display="^↑↓"),
        Binding("ctrl+down,alt+down", "move(1)", "Move down", show=False),
        Binding("ctrl+g", "toggle_generation", "Gen"),
        Binding("ctrl+f", "cycle_format", "Format"),
        Binding("f5", "compare", "Compare"),
        Binding("ctrl+o", "open", "Open", show=False),
        Binding("ctrl+s", "save", "Save", show=False),
        Binding("delete", "remove_key", "Remove", show=False),
        Binding("ctrl+z", "undo", "Undo", show=False),
        Binding("ctrl+t", "cycle_mode", "Text/ids", show=False),
        Binding("ctrl+a", "select_all", "Select all", show=False),
        Binding("ctrl+l", "clear_content", "Clear", show=False),
        Binding("f9", "copy_menu", "Copy", show=False),
        *view_bindings("f5", "f9"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.draft: ChatDraft = ChatDraft.example()
        self.current = 0  # the message in the editor
        self.result: ChatResult | None = None
        self.mode = TEXT
        self.ws = True
        self._serial = 0
        self._cancel = threading.Event()
        self._timer = None
        self._undo: list[tuple[ChatDraft, int, str]] = []
        self._filling = False  # set while the screen itself changes a widget (no feedback loop)
        self._choices: list[tuple[str, str]] = []
        self._widths = (2, 9, 5, 9)  # the message list's columns (see _column_widths)
        #: why the screen opened on the example instead of the explorer's text (shown until it changes)
        self._start_note = ""

    # ----- composition -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="chat-top"):
            yield Label("", id="chat-info")
            yield Select([("auto", AUTO)], value=AUTO, allow_blank=False, id="chat-format", compact=True)
            yield Checkbox("gen prompt", True, id="chat-gen", compact=True)
        with Horizontal(id="chat-body"):
            with Vertical(id="chat-left"):
                table = DataTable(id="chat-messages", cursor_type="row", zebra_stripes=False)
                table.border_title = "messages"
                yield table
                editor = Editor("", id="chat-content", soft_wrap=True, tab_behavior="focus")
                yield editor
            prompt = ChatPromptView("chat", kind=self._palette_kind(), id="chat-prompt")
            prompt.border_title = "rendered prompt"
            yield prompt
        with VerticalScroll(id="chat-notes", can_focus=True):
            yield Static("", id="chat-notes-text", markup=False)
        yield Footer(compact=True, show_command_palette=False)

    def _palette_kind(self) -> str:
        return palette_kind(self.app)

    def on_mount(self) -> None:
        app: Any = self.app
        draft = getattr(app, "chat_draft", None)
        if draft is None:
            draft = self._first_draft()
            if hasattr(app, "chat_draft"):
                app.chat_draft = draft
        self.draft = draft
        self.current = min(getattr(app, "chat_current", 0), len(draft.messages) - 1) if draft.messages else 0
        table = self.query_one("#chat-messages", DataTable)
        self._add_columns(table)
        self._filling = True
        self.query_one("#chat-gen", Checkbox).value = draft.generation
        self._filling = False
        self._sizes()
        self._fill_table()
        self._load_editor()
        table.focus()
        self._status()
        self.count_now()

    def _first_draft(self) -> ChatDraft:
        """The explorer's own text as one user message (a file, standard input, or text typed over
        the sample); the example conversation when it holds the untouched sample."""
        app: Any = self.app
        text = getattr(app, "text", "") or ""
        own = getattr(app, "source", "sample") != "sample" or getattr(app, "modified", False)
        if own and text.strip() and len(text) <= MAX_START_TEXT:
            return ChatDraft.from_text(text)
        if own and text.strip():
            self._start_note = too_long_note(len(text))
            self.notify(self._start_note, severity="warning", timeout=10, markup=False)
        return ChatDraft.example()

    def on_resize(self) -> None:
        self._sizes()
        self.call_after_refresh(self._relayout_if_needed)
        self.call_after_refresh(self._refit_list)

    def _refit_list(self) -> None:
        if not self.is_attached or not self.table.columns:
            return
        if self._column_widths() != self._widths:
            self._fill_table()
        self._editor_titles()
        self._prompt_titles()
        if self.result is not None:
            self._status()

    def _sizes(self) -> None:
        width, height = self.app.size
        self.set_class(width >= WIDE, "-wide")
        self.set_class(width < 80, "-narrow")
        self.set_class(height >= 36, "-tall")
        self.set_class(height < 24, "-short")

    def on_unmount(self) -> None:
        self._cancel.set()
        app: Any = self.app
        if hasattr(app, "chat_draft"):
            app.chat_current = self.current

    # ----- the widgets -------------------------------------------------------------------------

    @property
    def table(self) -> DataTable:
        return self.query_one("#chat-messages", DataTable)

    @property
    def editor(self) -> Editor:
        return self.query_one("#chat-content", Editor)

    @property
    def prompt(self) -> ChatPromptView:
        return self.query_one("#chat-prompt", ChatPromptView)

    @property
    def tokenizer(self) -> Any:
        return getattr(self.app, "tokenizer", None)

    def _column_widths(self, counts: dict[int, Any] | None = None) -> tuple[int, int, int, int]:
        """The message list's columns (number, role, tokens, preview) in the list's width: the
        token and message numbers whole (``15,033`` never shows as ``15,03``), the role and the
        preview giving way to them."""
        counts = self._message_counts() if counts is None else counts
        n = len(self.draft.messages)
        numbers = number_width([str(n)], 1) + 1  # and the warning mark
        tokens = number_width([f"{m.tokens:,}" for m in counts.values()], 5)
        width = self.app.size.width
        # the list's border and scrollbar take 3 cells, each column's padding 2
        room = (48 if width >= WIDE else 36 if width >= 80 else 32) - 3 - 8 - numbers - tokens
        role = max(4, min(9, room - 4))
        return numbers, role, tokens, max(3, room - role)

    def _add_columns(self, table: DataTable) -> None:
        self._widths = widths = self._column_widths()
        for (key, label), width in zip((("n", "#"), ("role", "role"), ("tok", "tok"), ("text", "text")), widths):
            table.add_column(cut(label, width), key=key, width=width)

    def _fill_table(self) -> None:
        """Every message as a row (after a change to the list itself); the cursor on ``current``."""
        table = self.table
        self._filling = True
        try:
            table.clear(columns=self._column_widths() != self._widths)
            if not table.columns:
                self._add_columns(table)
            counts = self._message_counts()
            for k, message in enumerate(self.draft.messages):
                table.add_row(*self._row(k, message, counts), key=str(k))
            if self.draft.messages:
                table.move_cursor(row=self.current, animate=False)
        finally:
            self._filling = False
        table.border_title = f"messages ({len(self.draft.messages)})"

    def _message_counts(self) -> dict[int, Any]:
        result = self.result
        if result is None or result.count is None or len(result.count.messages) != len(self.draft.messages):
            return {}
        return {m.index: m for m in result.count.messages}

    def _warned(self) -> set[int]:
        result = self.result
        if result is None or result.count is None:
            return set()
        return {w.index for w in result.count.warnings if w.index is not None}

    def _row(self, k: int, message: dict[str, Any], counts: dict[int, Any]) -> list[Any]:
        role = message.get("role")
        _, role_width, _, text_width = self._widths
        role_text = Text(cut(safe_text(role if isinstance(role, str) else "?"), role_width))
        if isinstance(role, str) and role not in ROLES:
            role_text.stylize("bold #ffd27f")
        m = counts.get(k)
        tok = f"{m.tokens:,}" if m is not None else "…"
        mark = "!" if k in self._warned() else ""
        return [Text(f"{k + 1}{mark}"), role_text, Text(tok, justify="right"), Text(preview(message, text_width))]

    def _update_row(self, k: int) -> None:
        if not 0 <= k < len(self.draft.messages):
            return
        table = self.table
        values = self._row(k, self.draft.messages[k], self._message_counts())
        for column, value in zip(("n", "role", "tok", "text"), values):
            try:
                table.update_cell(str(k), column, value)
            except Exception:  # noqa: BLE001 - the row is being rebuilt
                return

    def _load_editor(self) -> None:
        """Show message ``current`` in the editor (its undo history starts afresh)."""
        editor = self.editor
        self._filling = True
        try:
            if not self.draft.messages:
                editor.crlf = False
                editor.load_text("")
                editor.read_only = True
                editor.border_title = "no messages: Ctrl+N adds one"
                editor.border_subtitle = ""
                return
            editor.read_only = False
            text = content_of(self.draft.messages[self.current])
            editor.crlf = uses_crlf(text)
            editor.load_text(to_editor(text, editor.crlf))
        finally:
            self._filling = False
        self._editor_titles()

    def _editor_titles(self) -> None:
        editor = self.editor
        if not self.draft.messages:
            return
        message = self.draft.messages[self.current]
        role = message.get("role")
        editor.border_title = Text(f"message {self.current + 1} · {safe_text(role if isinstance(role, str) else '?')}")
        m = self._message_counts().get(self.current)
        if m is None:
            editor.border_subtitle = Text("Ctrl+R role")
        elif not m.rendered:
            editor.border_subtitle = Text("not in the rendering")
        else:
            editor.border_subtitle = Text(first_fit(
                [f"{m.tokens:,} tokens · {m.content_tokens:,} content", f"{m.tokens:,} tok · {m.content_tokens:,} content",
                 f"{m.tokens:,} tokens", f"{m.tokens:,} tok"], title_room(editor)))

    # ----- counting ----------------------------------------------------------------------------

    def request_count(self) -> None:
        """Count again after a short pause (an edit in progress)."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, self.count_now)

    def count_now(self) -> None:
        """Count the conversation again in a worker, cancelling the count that is running."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._cancel.set()
        self._cancel = threading.Event()
        self._serial += 1
        tokenizer = self.tokenizer
        if tokenizer is None:
            self._status("waiting for the encoding to load…")
            return
        self._status("counting…")
        self._count(self._serial, tokenizer, self.draft.snapshot(), self.prompt.layout_width, self.mode, self.ws,
                    self._cancel)

    @work(thread=True, exclusive=True, group="chat-count", exit_on_error=False, description="count the chat")
    def _count(self, serial: int, tokenizer: Any, draft: ChatDraft, width: int, mode: str, ws: bool,
               cancel: threading.Event) -> None:
        try:
            result = count_draft(tokenizer, draft, width=width, mode=mode, ws=ws, cancel=cancel)
        except CancelledError:
            return
        if cancel.is_set():
            return
        self.app.call_from_thread(self._counted, serial, result)

    def _counted(self, serial: int, result: ChatResult) -> None:
        if serial != self._serial or not self.is_attached:
            return
        self.result = result
        self._set_choices(result)
        prompt = self.prompt
        if result.doc is not None and result.count is not None:
            prompt.set_doc(result.doc, result.rows, result.width, result.mode)
            prompt.set_kinds(result.count.kinds)
            prompt.set_options(ws=self.ws)
        else:
            empty = _empty_doc(result.tokenizer)
            prompt.set_doc(empty, [0], prompt.layout_width, self.mode)
            prompt.set_kinds("")
        counts = self._message_counts()
        if counts and self._column_widths(counts) != self._widths:
            self._fill_table()  # a count wider than its column: the columns are laid out again
        elif counts:
            for k in range(len(self.draft.messages)):
                self._update_row(k)
        self._editor_titles()
        self._prompt_titles()
        self._status()
        self.call_after_refresh(self._relayout_if_needed)

    def _set_choices(self, result: ChatResult) -> None:
        select = self.query_one("#chat-format", Select)
        self.draft.format = result.choice  # before the select's Changed messages arrive (they are stale)
        if result.choices != self._choices:
            self._choices = list(result.choices)
            select.set_options(result.choices)
            # set_options keeps the label shown when the value stays the same: move off and back
            select.value = result.choices[1][1] if len(result.choices) > 1 and result.choice == AUTO else AUTO
        if select.value != result.choice:
            select.value = result.choice

    def _prompt_titles(self, index: int | None = None) -> None:
        prompt = self.prompt
        result = self.result
        if result is None:
            return
        count = result.count
        if count is None:
            prompt.border_title = Text("rendered prompt · failed (see below)")
            prompt.border_subtitle = ""
            return
        total = f"{count.total:,}"
        forms = [f"rendered prompt · {total} tokens", f"prompt · {total} tokens", f"{total} tokens", f"{total} tok"]
        index = prompt.selected if index is None else index
        if index is not None and index < count.total:
            owner = next((s for s in count.spans if s.start <= index < s.end), None)
            where = ""
            if owner is not None:
                where = (f" · msg {owner.message + 1}" if owner.kind == "message" and owner.message is not None
                         else " · before the msgs" if owner.kind == "prefix" else " · gen prompt")
            at, token_id, kind = f"{index + 1}/{total}", f"id {count.ids[index]}", prompt.kind_of(index)
            forms = [f"{at} · {token_id} · {kind}{where}", f"{at} · {token_id} · {kind}", f"{at} · {token_id}",
                     token_id]
        prompt.border_title = Text(first_fit(forms, title_room(prompt)))
        doc = result.doc
        specials = doc is not None and any(flags & SPECIAL for flags in doc.flags)
        prompt.border_subtitle = legend(prompt, count.kinds, specials)

    def _relayout_if_needed(self) -> None:
        prompt = self.prompt
        result = self.result
        if result is None or result.doc is None or not self.is_attached:
            return
        if prompt.layout_width != prompt.rows_width or prompt.rows_mode != self.mode:
            self._relayout(self._serial, result, prompt.layout_width, self.mode, self.ws)

    @work(thread=True, exclusive=True, group="chat-layout", exit_on_error=False, description="lay out the prompt")
    def _relayout(self, serial: int, result: ChatResult, width: int, mode: str, ws: bool) -> None:
        doc = result.doc
        if doc is None:
            return
        rows = layout(doc, width, mode, ws)
        self.app.call_from_thread(self._laid_out, serial, result, rows, width, mode)

    def _laid_out(self, serial: int, result: ChatResult, rows: list[int], width: int, mode: str) -> None:
        if serial != self._serial or result is not self.result or result.doc is None or not self.is_attached:
            return
        result.rows, result.width, result.mode = rows, width, mode
        prompt = self.prompt
        prompt.set_doc(result.doc, rows, width, mode)

    # ----- the top line and the notes ----------------------------------------------------------

    def _status(self, state: str | None = None) -> None:
        info = self.query_one("#chat-info", Label)
        notes = self.query_one("#chat-notes-text", Static)
        result = self.result
        tokenizer = self.tokenizer
        name = safe_text(tokenizer.name) if tokenizer is not None else "no encoding"
        if result is None or state is not None and result.count is None and result.error is None:
            info.update(Text(f"{name} · {state or 'counting…'}"))
            return
        busy = " · counting…" if state == "counting…" else ""
        count = result.count
        if count is None:
            info.update(Text(f"{name} · cannot render{busy}", style="bold"))
            notes.update(Text(f"✗ {result.error}", style="bold"))
            notes.set_class(True, "-error")
            return
        notes.set_class(False, "-error")
        warnings = len(count.warnings)
        warned = f" · {warnings} warning{'s' if warnings != 1 else ''} ↓" if warnings else ""
        short = f" · {warnings} warn ↓" if warnings else ""
        info.update(Text(first_fit([f"{count.total:,} tokens · {name}{warned}{busy}", f"{count.total:,} tokens{warned}{busy}",
                                    f"{count.total:,} tok{short}{busy}", f"{count.total:,} tok{short}",
                                    f"{count.total:,} tok"], info.size.width or 80)))
        out = Text()
        if self._start_note:
            out.append(f"! {self._start_note}\n", style="bold")
        out.append(summary_line(count))
        out.append("\n" + fit_line(result.windows, count.total))
        if not count.exact and not any(w.kind == "not-special" for w in count.warnings):
            out.append("\nsome format strings are not special tokens here: counted as text")
        if tokenizer is not None:  # which template counted, where that needs saying (Ollama's is Go)
            from ...sources.model_files import describe

            files = describe(tokenizer)
            if files is not None and files.chat_note:
                out.append("\n" + safe_text(files.chat_note))
        for warning in count.warnings:
            out.append("\n")
            out.append("! ", style="bold")
            out.append(safe_text(warning.message).replace(PYTHON_HINT, SCREEN_HINT))
        notes.update(out)

    # ----- events ------------------------------------------------------------------------------

    def on_encoding_changed(self, event: EncodingChanged) -> None:
        """Another encoding: render again in its own format."""
        self.draft.format = AUTO
        self.count_now()

    @on(DataTable.RowHighlighted, "#chat-messages")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self._filling or event.cursor_row == self.current or not self.draft.messages:
            return
        self.current = max(0, min(event.cursor_row, len(self.draft.messages) - 1))
        self._load_editor()
        self._show_message_in_prompt()

    @on(DataTable.RowSelected, "#chat-messages")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        if self.draft.messages:
            self.editor.focus()

    def _show_message_in_prompt(self) -> None:
        m = self._message_counts().get(self.current)
        if m is not None and m.spans:
            self.prompt.select(m.spans[0][0], scroll=True)
            self._prompt_titles(m.spans[0][0])

    @on(TextArea.Changed, "#chat-content")
    def _content_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        if self._filling or not self.draft.messages:
            return
        message = self.draft.messages[self.current]
        text = self.editor.real_text
        if text == content_of(message):
            return
        set_content(message, text)
        self._update_row(self.current)
        self.request_count()

    @on(Select.Changed, "#chat-format")
    def _format_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value != event.select.value or event.value == self.draft.format:
            return  # a stale message of the screen's own change, or no change
        self.draft.format = str(event.value)
        self.count_now()

    @on(Checkbox.Changed, "#chat-gen")
    def _generation_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        if event.value != event.checkbox.value or event.value == self.draft.generation:
            return
        self.draft.generation = event.value
        self.count_now()

    def on_compare_pane_chosen(self, event: ComparePane.Chosen) -> None:
        event.stop()
        self._prompt_titles(event.index)

    def on_compare_pane_scrolled(self, event: ComparePane.Scrolled) -> None:
        event.stop()

    # ----- editing the list --------------------------------------------------------------------

    def _remember(self, what: str) -> None:
        self._undo.append((self.draft.snapshot(), self.current, what))
        del self._undo[:-20]

    def _changed_list(self, focus_editor: bool = False) -> None:
        self._fill_table()
        self._load_editor()
        if focus_editor:
            self.editor.focus()
        self.count_now()

    def action_add(self) -> None:
        messages = self.draft.messages
        after = messages[self.current] if messages else None
        role = "assistant" if after is not None and after.get("role") in ("user", "tool") else "user"
        at = self.current + 1 if messages else 0
        messages.insert(at, {"role": role, "content": ""})
        self.current = at
        self._changed_list(focus_editor=True)

    def action_remove_key(self) -> None:
        """Delete removes the selected message when the list has the focus."""
        if self.focused is self.table:
            self.action_remove()

    def action_remove(self) -> None:
        messages = self.draft.messages
        if not messages:
            self.notify("There is no message to remove.", severity="warning")
            return
        self._remember("removed")
        removed = messages.pop(self.current)
        self.current = max(0, min(self.current, len(messages) - 1))
        role = removed.get("role")
        self.notify(f"Removed a {safe_text(role if isinstance(role, str) else '?')} message "
                    "(Ctrl+Z in the message list brings it back)", markup=False)
        self._changed_list()

    def action_undo(self) -> None:
        if not self._undo:
            self.notify("Nothing to bring back.", severity="warning")
            return
        draft, current, what = self._undo.pop()
        self._set_draft(draft, current)
        self.notify(f"Brought back the conversation as it was before it was {what}.")

    def _set_draft(self, draft: ChatDraft, current: int = 0) -> None:
        self._start_note = ""
        self.draft = draft
        app: Any = self.app
        if hasattr(app, "chat_draft"):
            app.chat_draft = draft
        self.current = max(0, min(current, len(draft.messages) - 1))
        self._filling = True
        self.query_one("#chat-gen", Checkbox).value = draft.generation
        self._filling = False
        self._changed_list()

    def action_move(self, step: int) -> None:
        messages = self.draft.messages
        k = self.current
        j = k + step
        if not messages or not 0 <= j < len(messages):
            return
        messages[k], messages[j] = messages[j], messages[k]
        self.current = j
        focused = self.focused
        self._fill_table()
        self._editor_titles()
        if focused is not None:
            focused.focus()
        self.count_now()

    def action_role(self) -> None:
        messages = self.draft.messages
        if not messages:
            return
        role = messages[self.current].get("role")
        k = ROLES.index(role) if role in ROLES else -1
        self.set_role(ROLES[(k + 1) % len(ROLES)])

    def set_role(self, role: str) -> None:
        """Give the selected message the role ``role``."""
        messages = self.draft.messages
        if not messages:
            return
        messages[self.current]["role"] = role
        self._update_row(self.current)
        self._editor_titles()
        self.count_now()

    def action_toggle_generation(self) -> None:
        box = self.query_one("#chat-gen", Checkbox)
        box.value = not box.value  # its Changed message counts again

    def action_cycle_format(self) -> None:
        values = [v for _, v in self._choices] or [AUTO]
        current = self.draft.format if self.draft.format in values else AUTO
        self.query_one("#chat-format", Select).value = values[(values.index(current) + 1) % len(values)]

    def format_choices(self) -> list[tuple[str, str]]:
        """The formats the select offers for the current tokenizer: ``(label, value)``."""
        return list(self._choices)

    def set_format(self, choice: str) -> None:
        """Use format ``choice`` (a value of the format select)."""
        if choice in [v for _, v in self._choices]:
            self.query_one("#chat-format", Select).value = choice

    def action_cycle_mode(self) -> None:
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]
        self._relayout_if_needed()

    def action_toggle_ws(self) -> None:
        self.ws = not self.ws
        self.prompt.set_options(ws=self.ws)
        if self.mode != TEXT and self.result is not None:
            self._relayout(self._serial, self.result, self.prompt.layout_width, self.mode, self.ws)

    def action_select_all(self) -> None:
        if self.draft.messages:
            self.editor.focus()
            self.editor.select_all()

    def action_clear_content(self) -> None:
        editor = self.editor
        if not self.draft.messages or not editor.text:
            return
        editor.focus()
        editor.replace("", editor.document.start, editor.document.end)  # undoable: Ctrl+Z
        self.notify("Cleared the message's text (Ctrl+Z in the editor brings it back)")

    def add_explorer_text(self) -> None:
        """The explorer's text as a new user message after the selected one."""
        text = getattr(self.app, "text", "")
        messages = self.draft.messages
        at = self.current + 1 if messages else 0
        messages.insert(at, {"role": "user", "content": text})
        self.current = at
        self._changed_list()

    def reset_to_example(self) -> None:
        self._remember("reset")
        self._set_draft(ChatDraft.example())
        self.notify("The example conversation (Ctrl+Z in the message list brings yours back)")

    # ----- files ---------------------------------------------------------------------------------

    def action_open(self) -> None:
        from .dialogs import PathPrompt

        def chosen(path: str | None) -> None:
            if path:
                self._read(path)

        self.app.push_screen(PathPrompt("Open a conversation (chat-completions JSON)", self.draft.path or "",
                                        hint="Enter to open · Escape to cancel", placeholder="conversation.json"),
                             chosen)

    @work(thread=True, exclusive=True, group="chat-file", exit_on_error=False, description="read a conversation")
    def _read(self, path: str) -> None:
        from ...inputs.text_input import read_json

        try:
            draft = ChatDraft.from_json(read_json(path, "the conversation", limit=MAX_JSON_BYTES, regular_only=True), path=path)
        except TokscopeError as exc:
            message = safe_text(str(exc))
            self.app.call_from_thread(self.notify, f"Cannot open it: {message}", severity="error", timeout=10,
                                      markup=False)
            return
        self.app.call_from_thread(self._opened, draft)

    def _opened(self, draft: ChatDraft) -> None:
        if not self.is_attached:
            return
        draft.generation = self.draft.generation
        self._remember("opened")
        self._set_draft(draft)
        tools = f" and {len(draft.tools)} tool definitions" if draft.tools else ""
        self.notify(f"Opened {safe_text(draft.path)}: {len(draft.messages)} messages{tools} "
                    "(Ctrl+Z in the message list brings the previous conversation back)", markup=False)

    def action_save(self) -> None:
        save_draft(self.app, self.draft, ask=True)

    # ----- the rest ------------------------------------------------------------------------------

    def action_compare(self) -> None:
        """Compare this conversation under several tokenizers (compare's chat mode)."""
        tokenizer = self.tokenizer
        formats = {tokenizer.name: self.draft.format} if tokenizer is not None else {}
        self.app.open_view("compare", chat=self.draft.snapshot(), chat_formats=formats)  # type: ignore[attr-defined]

    def action_copy_menu(self) -> None:
        from .dialogs import ChoiceDialog

        def chosen(what: str | None) -> None:
            if what in ("ids", "text", "json"):
                self.copy(what)

        self.app.push_screen(ChoiceDialog("Copy", "Copy what? (i, t or j)",
                                          [("ids", "Ids"), ("text", "Rendered text"), ("json", "JSON"),
                                           ("cancel", "Cancel")]), chosen)

    def copy(self, what: str) -> None:
        app: Any = self.app
        if what == "json":
            app.copy_text(self.draft.to_json(), f"the conversation ({len(self.draft.messages)} messages)")
            return
        count = self.result.count if self.result is not None else None
        if count is None:
            self.notify("Nothing rendered to copy", severity="warning")
            return
        if what == "ids":
            app.copy_text(" ".join(map(str, count.ids)), f"{count.total:,} ids")
        else:
            app.copy_text(count.text, f"the rendered prompt ({len(count.text):,} characters)")

    def action_help(self) -> None:
        from .dialogs import HelpScreen

        sections = [("Chat screen", CHAT_KEYS)]
        app_sections = getattr(self.app, "help_sections", None)
        if app_sections is not None:
            sections += app_sections()
        self.app.push_screen(HelpScreen(sections))

    def action_close(self) -> None:
        if self.focused is self.editor:
            self.table.focus()
            return
        self._cancel.set()
        self.dismiss()


def too_long_note(chars: int) -> str:
    """Why the chat opened on the example conversation: the explorer's text is too long for a message.

    >>> too_long_note(1_000_000)
    "The explorer's text (1,000,000 characters) is over the 200,000-character limit for a chat message: this is the example conversation (Ctrl+O opens one)"
    """
    return (f"The explorer's text ({chars:,} characters) is over the {MAX_START_TEXT:,}-character limit for a chat "
            "message: this is the example conversation (Ctrl+O opens one)")


def _empty_doc(tokenizer: Any) -> Document:
    return Document.from_tokens(tokenizer, "", [], [])


# ----- saving, and asking before the conversation's edits are lost ----------------------------------


def save_draft(app: Any, draft: ChatDraft, then: Callable[[], None] | None = None, ask: bool = False) -> None:
    """Save ``draft`` as JSON, atomically: to its own file unless ``ask`` (or it has none), else to
    the path the user gives (asking before replacing another file); ``then`` runs once it is saved."""
    from pathlib import Path

    from .dialogs import ChoiceDialog, PathPrompt

    def write(path: str) -> None:
        from ...core.formats.files import write_atomic

        try:
            write_atomic(Path(path).expanduser(), draft.to_json().encode("utf-8"))
        except (TokscopeError, OSError) as exc:
            app.notify(f"Cannot save: {safe_text(exc)}. The conversation is still here.", severity="error",
                       timeout=10, markup=False)
            return
        draft.mark_saved(path)
        app.notify(f"Saved {safe_text(path)}", markup=False)
        if then is not None:
            then()

    if draft.path and not ask:
        write(draft.path)
        return

    def chosen(path: str | None) -> None:
        if not path:
            return
        if Path(path).expanduser().exists() and path != draft.path:
            def answer(choice: str | None) -> None:
                if choice == "replace":
                    write(path)

            app.push_screen(ChoiceDialog("Replace?", f"{safe_text(path)} already exists. Replace it with "
                                         "this conversation?", [("replace", "Replace"), ("cancel", "Cancel")]), answer)
            return
        write(path)

    app.push_screen(PathPrompt("Save the conversation as (JSON)", draft.path or "conversation.json",
                               placeholder="conversation.json"), chosen)


def ask_before_quit(app: Any) -> bool:
    """When the chat's conversation (``app.chat_draft``) has unsaved edits, ask whether to save
    them and return True; the answer (save, discard) then quits through ``app``'s quit action again.

    False (nothing to ask) lets the quit go on.
    """
    from .dialogs import ChoiceDialog

    draft = getattr(app, "chat_draft", None)
    if draft is None or not draft.modified:
        return False

    def again() -> None:
        app.call_later(app.run_action, "quit")

    def answer(choice: str | None) -> None:
        if choice == "save":
            save_draft(app, draft, then=again)
        elif choice == "discard":
            draft.mark_saved()
            again()

    where = f"the conversation {safe_text(draft.path)}" if draft.path else "the chat's conversation (never saved)"
    app.push_screen(ChoiceDialog("Unsaved edits", f"You changed {where}. Save it before quitting?",
                                 [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")]), answer)
    return True
