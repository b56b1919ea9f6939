"""The explorer app: input pane, token view, inspector and status line.

The views it opens are in :mod:`tokscope.app.views` (with the state API they read); the events it
sends them are the messages in :mod:`tokscope.app.messages`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, TextArea

from ..core.text.display import safe_text
from ..core.document.document import Document
from ..core.patterns.guard import PatternTimeoutError, time_ceiling
from ..core.text.errors import CancelledError
from ..core.tokenizer.tokenizer import Tokenizer
from ..core.text.types import Piece
from . import clipboard, files, heap, recovery
from .command_palette import ExplorerCommands
from .messages import (
    DocChanged,
    EncodingChanged,
    EncodingLoaded,
    SelectionChanged,
    TokenPicked,
)
from .render import MODES, TEXT, layout, layout_text, readable_hex, relayout
from .screens.base import FittedScreen, TooSmall, check_size
from .screens.dialogs import ChoiceDialog, EncodingPicker, HelpScreen, PathPrompt
from .views import BY_NAME, VIEWS, view_of
from .widgets.editor import Editor
from .widgets.inspector import Inspector
from .widgets.status import StatusLine
from .widgets.token_view import TokenView, palette_kind, rank_ranges

#: below this size the explorer shows a message instead of a squashed layout
MIN_WIDTH, MIN_HEIGHT = 60, 16
#: from this width the inspector sits to the right of the panes
WIDE_WIDTH = 110
#: below this height the input pane and the inspector give rows to the token view
SHORT_HEIGHT, TINY_HEIGHT = 24, 20
#: characters tokenized before the first paint of a large text (the rest follows)
FIRST_PART = 40_000
#: texts longer than this (characters) open with soft wrap off in the input pane (Textual's TextArea
#: recounts every wrapped line on each paint)
SOFT_WRAP_LIMIT = 50_000
#: texts up to this many characters are re-tokenized after an edit without a worker thread
SYNC_LIMIT = 150_000
#: in longer texts too, unless the edit needs a re-scan of more than this many characters
INLINE_SCAN = 20_000
#: the signals that stop the explorer as SIGTERM does (edits kept, terminal restored, exit 128 + N)
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2")
                     if hasattr(signal, name))
#: seconds a tokenizer file's pattern may run on the UI thread; a slower one goes to the worker
SYNC_PATTERN_SECONDS = 0.2

def one_line(exc: BaseException) -> str:
    """An error from the core as one line for the status line and a notification.

    >>> one_line(ValueError("bad\\nthing"))
    'bad thing'
    """
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


#: (key, action, footer label, shown in the footer, help) — the one list the bindings and help use.
#: No letter key: every key here works with the focus anywhere, the input pane included.
APP_KEYS: list[tuple[str, str, str, bool, str]] = [
    ("f1", "help", "Help", True, "this help"),
    ("f2", "pick_encoding", "Encoding", True, "pick the encoding (every one `tokscope encodings` lists)"),
    # the views' keys and F9 in the order of their numbers (F3..F8, F9 copies, F12)
    *sorted([*((v.key, f"open_view('{v.name}')", v.label, True, f"{v.title}: {v.description}") for v in VIEWS),
             ("f9", "copy_menu", "Copy", False, "copy the ids, the pieces, or the selected token's bytes")],
            key=lambda k: int(k[0][1:])),
    ("ctrl+s", "save", "Save", False, "save the text (to its file, or ask for a path); Save as… is in Ctrl+P"),
    ("ctrl+a", "select_all", "Select all", False, "select the whole text in the input pane"),
    ("ctrl+l", "clear_text", "Clear", False, "clear the text (Ctrl+Z in the input pane brings it back)"),
    ("ctrl+t", "cycle_mode", "Text/ids", False, "token view shows text, ids, or both"),
    ("ctrl+g", "toggle_ws", "Spaces", False, "show spaces, tabs and newlines as · → ⏎ (in their own colour)"),
    ("ctrl+r", "toggle_rank", "Rank", False, "colour pieces by merge rank: light = early, dark = late (legend below)"),
    ("ctrl+o", "toggle_specials", "Specials", False, "treat special-token text like <|endoftext|> as special tokens"),
    ("ctrl+n", "toggle_template", "Template", False,
     "show the tokens the model's template adds (BOS/EOS, [CLS]/[SEP]) at the ends, marked as added"),
    ("ctrl+q", "quit", "Quit", True, "quit (asks first when a file's text has unsaved edits)"),
]

MOVE_KEYS = [
    ("Tab / Shift+Tab", "move between the input pane and the token view"),
    ("← →", "previous / next token (token view)"),
    ("↑ ↓", "token in the row above / below"),
    ("PgUp PgDn", "a page up / down"),
    ("Home End", "first / last token"),
    ("Enter", "open the selected token in the why view"),
    ("typing", "in the token view, typing goes to the input pane"),
    ("mouse click", "select a token"),
    ("Ctrl+P", "command palette: every action and every encoding"),
]


def key_label(key: str) -> str:
    """How a key is written in the help: ``F3``, ``Ctrl+S``.

    >>> key_label("f3"), key_label("ctrl+s")
    ('F3', 'Ctrl+S')
    """
    if key.startswith("ctrl+"):
        return "Ctrl+" + key[5:].upper()
    return key.upper() if key.startswith("f") else key


class ExplorerScreen(FittedScreen):
    """The explorer's own screen: below 80 columns its footer's labels shorten (and the keys that
    still do not fit leave it: F2 and F4 first), so no key is cut in half."""

    FOOTER_SHORT = {"f2": "Enc", "f5": "Cmp", "f6": "Lang", "f7": "Stat"}
    FOOTER_DROP = ("f2", "f4")
    FOOTER_GAP = 1  # its compact keys have no space between key and label


class ExplorerApp(App):
    """tokscope's main screen. See :mod:`tokscope.app.views` for the API other screens use."""

    CSS_PATH = str(Path(__file__).with_name("explorer.tcss"))
    TITLE = "tokscope"
    COMMANDS = App.COMMANDS | {ExplorerCommands}
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        # not priority: a key waits for the keys before it (a priority binding ran ahead of the
        # focused widget's queue: "Right Right F9" copied the previous token)
        Binding(key, action, label, show=show)
        for key, action, label, show, _ in APP_KEYS
    ]

    def __init__(
        self,
        text: str,
        *,
        encoding: str = "o200k_base",
        path: str | None = None,
        source: str = "sample",
        tokenizer: Tokenizer | None = None,
        palette: str | None = None,
        notice: str | None = None,
        file_encoding: str = "utf-8",
        origin: tuple[str, str] | None = None,
    ) -> None:
        super().__init__()
        # (file, how) for a file opened changed (U+FFFD for bad bytes, or its head): never saved back unasked
        self.origin = origin
        self._initial_text = text
        self._saved_text = text
        self.path = path
        self.source = source
        self.file_encoding = file_encoding
        self.stamp = files.stamp_of(path) if path else None
        self._encoding_request = encoding
        self._tokenizer: Tokenizer | None = tokenizer
        self.token_palette = palette  # the --palette choice: truecolor, standard, mono or None (the terminal's)
        self._notice = notice
        self._doc: Document | None = None
        self._doc_current = False
        self._job = 0
        self._text_version = 0  # bumped on every edit of the input pane
        self._doc_version = -1  # the text version the current doc was computed for
        self._cancel = threading.Event()
        self._loading: str | None = None
        self.specials = False
        self.mode = TEXT
        self.ws = False
        self.rank_colours = False
        self.show_template = False
        #: the training form's values, kept while the app runs (the screen reads and writes them)
        self.train_settings: dict[str, Any] = {}
        #: the comparison screen's encodings, prices and layout, kept while the app runs
        self.compare_settings: dict[str, Any] = {}
        #: the training screen's last finished run, kept while the app runs (a train.Trained)
        self.trained: Any = None
        #: the chat screen's conversation, kept while the app runs (see tokscope.app.chat_model)
        self.chat_draft: Any = None
        #: the signal that stopped the app and the recovery file its edits went to
        self.stopped_by: tuple[str, Path | None] | None = None
        #: the last tokenizer error shown (each is shown once while it lasts)
        self._failure: str | None = None
        #: a tokenizer whose pattern ran out of the UI thread's time: edits go to the worker
        self._slow: Tokenizer | None = None
        #: the toasts on screen: (message, severity) -> when it goes (one of each is shown)
        self._toasts: dict[tuple[str, str], float] = {}

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Textual's toast, not shown again while the same one is still up (a key pressed twice,
        or two screens telling the same news, stack one toast, not two)."""
        now = time.monotonic()
        key = (f"{title}\n{message}", str(severity))
        self._toasts = {k: end for k, end in self._toasts.items() if end > now}
        if key in self._toasts:
            return
        self._toasts[key] = now + (self.NOTIFICATION_TIMEOUT if timeout is None else timeout)
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    # ----- composition -----------------------------------------------------------------------

    def get_css_variables(self) -> dict[str, str]:
        """The theme's variables, its body text made to reach 4.5:1 on its backgrounds (a few of
        Textual's themes, Solarized's for one, fall just short)."""
        variables = super().get_css_variables()
        grounds = [variables[k] for k in ("background", "surface", "panel") if str(variables.get(k, "")).startswith("#")]
        fg = str(variables.get("foreground", ""))
        if grounds and fg.startswith("#") and len(fg) == 7 and all(len(g) == 7 for g in grounds):
            variables["foreground"] = readable_hex(fg, grounds)
            self.theme_variables = variables
        return variables

    def get_system_commands(self, screen):
        """Textual's palette commands, Quit saying what it does here (it asks first when edits or
        a trained tokenizer would be lost) and Theme what it restyles."""
        for command in super().get_system_commands(screen):
            if command.title == "Quit":
                command = command._replace(help="Quit tokscope (asks first when unsaved edits or a trained "
                                                "tokenizer would be lost)")
            elif command.title == "Theme":
                command = command._replace(help="Change the theme: every pane restyles, the token colours too")
            yield command

    def get_default_screen(self) -> ExplorerScreen:
        return ExplorerScreen(id="_default")

    def compose(self) -> ComposeResult:
        kind = palette_kind(self)
        with Vertical(id="main"):
            with Horizontal(id="panes"):
                with Vertical(id="left"):
                    # TextArea soft wrap costs O(lines) per painted line: large texts scroll sideways
                    wrap = len(self._initial_text) < SOFT_WRAP_LIMIT
                    yield Editor(self._initial_text, id="input", soft_wrap=wrap, tab_behavior="focus")
                    view = TokenView(id="tokens", kind=kind)
                    view.border_title = "tokens"
                    yield view
                inspector = Inspector(id="inspector", ceiling=SYNC_PATTERN_SECONDS)
                inspector.border_title = "token"
                inspector.border_subtitle = "bytes: A ascii L lead C continuation"
                yield inspector
            yield StatusLine(id="status")
            yield Footer(compact=True, show_command_palette=False)
        yield TooSmall(MIN_WIDTH, MIN_HEIGHT)

    def on_mount(self) -> None:
        # NO_COLOR: the cursor and focused panes are drawn by style and shape (explorer.tcss)
        self.set_class(palette_kind(self) == "mono", "-mono")
        self._check_size()
        self.editor.focus()
        self._input_title()
        self._status()
        self._trap_signals()
        if self._notice:
            self.notify(safe_text(self._notice), severity="warning", timeout=8, markup=False)
        if self._tokenizer is not None:
            self._set_tokenizer(self._tokenizer)
        else:
            self.switch_encoding(self._encoding_request)
        self.call_after_refresh(self._offer_recovery)

    def on_unmount(self) -> None:
        heap.thaw()  # what this app kept alive can be collected again
        self._untrap_signals()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return True

    # ----- the state API ---------------------------------------------------------------------

    @property
    def editor(self) -> Editor:
        return self.query_one("#input", Editor)

    @property
    def token_view(self) -> TokenView:
        return self.query_one("#tokens", TokenView)

    @property
    def text(self) -> str:
        """The input pane's current text."""
        return self.editor.real_text

    @property
    def doc(self) -> Document | None:
        """The latest tokenization (may lag ``text`` by one worker run while typing)."""
        return self._doc

    @property
    def pieces(self) -> Sequence[Piece]:
        return self._doc.pieces() if self._doc is not None else []

    @property
    def tokenizer(self) -> Tokenizer | None:
        return self._tokenizer

    @property
    def encoding_name(self) -> str:
        return self._tokenizer.name if self._tokenizer is not None else self._encoding_request

    @property
    def selected_index(self) -> int | None:
        return self.token_view.selected

    @property
    def selected_piece(self) -> Piece | None:
        index = self.selected_index
        return self._doc.piece(index) if self._doc is not None and index is not None else None

    @property
    def selected_token_id(self) -> int | None:
        index = self.selected_index
        return self._doc.ids[index] if self._doc is not None and index is not None else None

    @property
    def idle(self) -> bool:
        """True when the encoding is loaded and the pieces match the input pane's text."""
        doc = self._doc
        return (self._loading is None and self._tokenizer is not None and doc is not None and self._doc_current
                and self._doc_version == self._text_version)

    @property
    def modified(self) -> bool:
        return self.editor.real_text != self._saved_text

    def encode_kwargs(self) -> dict[str, Any]:
        if self.specials:
            return {"allowed_special": "all", "disallowed_special": ()}
        return {"allowed_special": (), "disallowed_special": ()}

    def select_piece(self, index: int | None) -> None:
        self.token_view.select(index, from_user=True)

    def open_token(self, token_id: int, source: str = "") -> None:
        """A token was picked somewhere: tell the explorer and every open view (:class:`TokenPicked`)."""
        self._broadcast(lambda: TokenPicked(token_id, source))

    def set_text(self, text: str) -> None:
        """Replace the input pane's text (undoable in the input pane)."""
        editor = self.editor
        editor.replace(text, editor.document.start, editor.document.end)  # Editor.edit adds stand-ins

    def copy_text(self, text: str, what: str) -> str:
        method = clipboard.copy_text(self, text)
        self.notify(clipboard.describe(method, what), title="Copy", markup=False)
        return method

    def _broadcast(self, make: Callable[[], Any]) -> None:
        """Post a message (a new one each) to the app and to every screen on the stack."""
        self.post_message(make())
        for screen in self.screen_stack[1:]:
            screen.post_message(make())

    # ----- views -----------------------------------------------------------------------------

    def open_view(self, name: str, **kwargs: Any) -> None:
        """Open the view ``name`` of :data:`tokscope.app.views.VIEWS`. One already open is brought
        back (the views above it close); ``kwargs`` go to it (``reopen``) or to a new one."""
        view = BY_NAME[name]
        stack = self.screen_stack
        for screen in stack:
            if type(screen) is view.screen:
                reopen = getattr(screen, "reopen", None)
                if kwargs and reopen is None:
                    while self.screen is not screen:
                        self.pop_screen()
                    self.pop_screen()
                    break
                while self.screen is not screen:
                    self.pop_screen()
                if reopen is not None and kwargs:
                    reopen(**kwargs)
                return
        if isinstance(self.screen, ModalScreen):
            return
        self.push_screen(view.screen(**kwargs))

    def action_open_view(self, name: str) -> None:
        self.open_view(name)

    def action_view_key(self, key: str) -> None:
        """A view's key pressed on another view (see :class:`tokscope.app.screens.base.ViewScreen`)."""
        if key == "f9":
            self.action_copy_menu()
            return
        for view in VIEWS:
            if view.key == key:
                if view_of(self.screen) is not view:
                    self.open_view(view.name)
                return

    # ----- encodings -------------------------------------------------------------------------

    def switch_encoding(self, name: str) -> None:
        self._loading = name
        self._status()
        self._load_encoding(name)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, description="load encoding")
    def _load_encoding(self, name: str) -> None:
        from ..sources import registry

        try:
            tokenizer = registry.load(name)
        except Exception as exc:  # noqa: BLE001 - every failure is shown, none is fatal
            self.post_message(EncodingLoaded(name, error=str(exc) or exc.__class__.__name__))
            return
        self.post_message(EncodingLoaded(name, tokenizer=tokenizer))

    def on_encoding_loaded(self, event: EncodingLoaded) -> None:
        if event.name != self._loading:
            return
        self._loading = None
        if event.error is not None:
            previous = self._tokenizer.name if self._tokenizer is not None else None
            stay = f"; staying on {safe_text(previous)}" if previous else ""
            self.notify(f"Cannot load encoding {safe_text(event.name)!r}: {safe_text(event.error)}{stay}",
                        severity="error", timeout=10, markup=False)
            if self._tokenizer is None and event.name != "o200k_base":
                self.switch_encoding("o200k_base")
            self._status()
            return
        self._set_tokenizer(event.tokenizer)

    def _set_tokenizer(self, tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer
        self._show_template()
        self._broadcast(lambda: EncodingChanged(tokenizer))
        self.retokenize()

    # ----- tokenizing ------------------------------------------------------------------------

    def retokenize(self, *, full: bool = False) -> None:
        """Re-tokenize the current text in a worker (only what changed, unless ``full``)."""
        if self._tokenizer is None:
            return
        self._job += 1
        self._cancel.set()
        self._cancel = threading.Event()
        self._doc_current = False
        view = self.token_view
        width = view.layout_width
        old = self._doc
        if full:
            old = None
        text = self.editor.real_text
        if (
            old is not None and old.complete and old.tokenizer is self._tokenizer and old.specials == self.specials
            and width == view.rows_width and self.mode == view.rows_mode and self._slow is not self._tokenizer
        ):
            # re-tokenizing the touched chunks takes a few milliseconds, so do it right here and
            # skip the round trip through a thread; in a long text an edit that needs more (a
            # long re-scan, a full build) still goes to the worker
            try:
                with time_ceiling(SYNC_PATTERN_SECONDS):
                    doc = old.edited(text, max_scan=None if len(text) <= SYNC_LIMIT else INLINE_SCAN)
            except PatternTimeoutError:
                # too slow for the UI thread: this tokenizer's edits go to the worker from now on
                self._slow = self._tokenizer
                doc = None
            except Exception as exc:  # noqa: BLE001 - a tokenizer that fails on this text: say so, keep the edits
                self._tokenize_failed((self._job, self._text_version), one_line(exc))
                return
            if doc is not None:
                rows = relayout(view.rows, old, doc, width, self.mode, self.ws) if doc is not old else view.rows
                doc.figures  # the status line's counts, from the edited span
                self._apply((self._job, self._text_version), doc, rows, width, self.mode)
                return
        # the worker object outlives the run; hand it a box it empties, so it keeps no old doc alive
        box = {"old": old, "text": text, "old_rows": view.rows}
        self._tokenize(
            (self._job, self._text_version), self._cancel, box, self._tokenizer, self.specials, width, self.mode,
            self.ws, view.rows_width, view.rows_mode,
        )
        self._status()

    @work(thread=True, exclusive=True, group="tokenize", exit_on_error=False, description="tokenize")
    def _tokenize(
        self, job: tuple[int, int], cancel: threading.Event, box: dict, tokenizer: Tokenizer,
        specials: bool, width: int, mode: str, ws: bool, old_width: int, old_mode: str,
    ) -> None:
        old: Document | None = box.pop("old")
        text: str = box.pop("text")
        old_rows: list[int] = box.pop("old_rows")
        try:
            if old is None or old.tokenizer is not tokenizer or old.specials != specials or not old.complete:
                def early(doc: Document) -> None:
                    # lay out only the tokenized part; the rest follows with the whole doc
                    end = doc.text.find("\n", doc.covered)
                    rows = layout_text(doc, width, 0, end + 1 if end != -1 else len(doc.text)) or [0]
                    self.call_from_thread(self._apply, job, doc, rows, width, mode)

                doc = Document.build(tokenizer, text, specials, cancel=cancel, progress=early, first_part=FIRST_PART)
                rows = layout(doc, width, mode, ws)
            else:
                doc = old.edited(text, cancel=cancel)
                if doc is old and width == old_width and mode == old_mode:
                    rows = old_rows
                elif width == old_width and mode == old_mode:
                    rows = relayout(old_rows, old, doc, width, mode, ws)
                else:
                    rows = layout(doc, width, mode, ws)
            doc.figures  # the status line's counts, computed here rather than on the UI thread
        except CancelledError:
            return
        except Exception as exc:  # noqa: BLE001 - a tokenizer that fails on this text: say so, keep the edits
            if not cancel.is_set():
                self.call_from_thread(self._tokenize_failed, job, one_line(exc))
            return
        if cancel.is_set():
            return
        self.call_from_thread(self._apply, job, doc, rows, width, mode)

    def _tokenize_failed(self, job: tuple[int, int], message: str) -> None:
        if job[0] != self._job:
            return
        self._doc_current = True  # nothing more is coming: the status line must not say "tokenizing…"
        self._doc_version = job[1]
        self._keep_edits("tokenizer error")
        if message != self._failure:  # once per error, not once per key
            self._failure = message
            self.notify(f"Cannot tokenize the text with {safe_text(self.encoding_name)}: {safe_text(message)}",
                        severity="error", timeout=10, markup=False)
        self._status()

    def _keep_edits(self, reason: str) -> Path | None:
        """Write the unsaved edits to the recovery file (None when there are none or it fails)."""
        try:
            if self.modified:
                return recovery.write(self.path, self.editor.real_text, reason)
        except Exception:  # noqa: BLE001 - keeping a copy must never be what fails
            pass
        return None

    def _apply(self, job: tuple[int, int], doc: Document, rows: list[int], width: int, mode: str) -> None:
        job, version = job
        if job != self._job:
            return
        self._doc = doc
        self._doc_version = version
        self._doc_current = doc.complete
        self._failure = None
        view = self.token_view
        relaid = (width, mode) != (view.rows_width, view.rows_mode)
        view.set_doc(doc, rows, width, mode)
        if relaid and view.selected is not None:
            view.scroll_to_piece(view.selected)
        if doc.complete:
            # the view's scrollbar may come or go with the new rows, changing the width they need
            self.call_after_refresh(self._maybe_relayout)
            if self.focused is self.editor or view.selected is None:
                self._select_from_cursor()
            self._broadcast(lambda: DocChanged(doc))
            # the tokenizer, the pieces and the input pane's per-line lists live as long as the app
            heap.freeze_long_lived()
        self._show_selection()
        self._status()

    # ----- syncing the two panes -------------------------------------------------------------

    def _cursor_offset(self) -> int:
        editor = self.editor
        row, column = editor.cursor_location
        lines = editor.document.lines
        return sum(map(len, lines[:row])) + row * len(editor.document.newline) + column

    def _select_from_cursor(self) -> None:
        doc = self._doc
        if doc is None or not doc.ids or not self._doc_current:
            return
        offset = min(self._cursor_offset(), len(doc.text))
        view = self.token_view
        current = view.selected
        if current is not None and current < len(doc.ids) and doc.starts[current] <= offset < doc.ends[current]:
            return
        view.select(doc.piece_at(offset))

    def text_edited(self, editor: Editor) -> None:
        """The input pane's text changed (called by the pane within the edit, so the pieces are
        redone before the next frame is painted; the ``Changed`` message that follows is marked
        ``early_handled``)."""
        if editor is not self.editor:
            return
        self._text_version += 1
        self.retokenize()
        self._input_title()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is self.editor and not getattr(event, "early_handled", False):
            self.text_edited(event.text_area)

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if event.text_area is self.editor and self.focused is self.editor:
            self._select_from_cursor()

    def on_token_view_selected(self, event: TokenView.Selected) -> None:
        self._show_selection()
        self._broadcast_selection(event.index)
        doc = self._doc
        if event.from_user and event.index is not None and doc is not None and self._doc_current:
            start = doc.starts[event.index]
            text = doc.text
            row = text.count("\n", 0, start)
            col = start - (text.rfind("\n", 0, start) + 1)
            line = self.editor.document.get_line(row) if row < self.editor.document.line_count else ""
            self.editor.move_cursor((row, min(col, len(line))))

    def _broadcast_selection(self, index: int | None) -> None:
        for screen in self.screen_stack[1:]:
            screen.post_message(SelectionChanged(index))

    def on_token_view_typed(self, event: TokenView.Typed) -> None:
        """A character typed in the token view goes to the input pane, where text is typed."""
        editor = self.editor
        editor.focus()
        editor.insert(event.character)

    def on_token_view_picked(self, event: TokenView.Picked) -> None:
        """Enter on a piece opens the same view as a token picked anywhere: its merge tree."""
        if self._doc is None or event.control is not self.token_view:
            return
        token_id = self._doc.ids[event.index]
        self.open_view("why", token_id=token_id, from_text=True)

    def on_token_picked(self, event: TokenPicked) -> None:
        doc = self._doc
        if doc is None:
            return
        view = self.token_view
        if view.selected is not None and view.selected < len(doc.ids) and doc.ids[view.selected] == event.token_id:
            return
        index = doc.first_occurrence(event.token_id)
        if index is None:
            self.notify(f"Token {event.token_id} does not occur in the text")
        else:
            view.select(index, from_user=True)

    def _show_selection(self) -> None:
        self.query_one(Inspector).show(self._doc, self.token_view.selected)

    def _input_title(self) -> None:
        if self.path:
            name = safe_text(self.path)
        elif self.source == "stdin":
            name = "standard input"
        elif self.source == "file":
            how = f"{safe_text(self.origin[0])}, {self.origin[1]}" if self.origin else "a file's text, changed when read"
            name = f"{how} (Ctrl+S asks where to save)"
        else:
            name = "sample (a scratch pad: quitting never asks)"
        mark = " ●" if self.modified else ""
        enc = f" · {self.file_encoding}" if self.file_encoding != "utf-8" else ""
        title = f"input · {name}{enc}{mark}"
        if title != getattr(self, "_title", None):  # only when it changes: a title repaints the pane
            self._title = title
            self.editor.border_title = Text(title)

    def _status(self) -> None:
        if self._loading:
            state = f"loading {safe_text(self._loading)}…"
        elif self._tokenizer is None:
            state = "no encoding"
        elif self._failure is not None:
            state = "tokenizer error: " + safe_text(self._failure)
        elif not self._doc_current:
            state = "tokenizing…"
        else:
            state = "live"
        if self.specials:
            state += " · specials"
        added = sum(map(len, self.token_view.template))
        if added:
            state += f" · template +{added}"
        if self._tokenizer is not None and not self._loading:
            from ..sources.model_files import notes_of, short_note

            state += "".join(f" · ⚠ {short_note(note)}" for note in notes_of(self._tokenizer))
        try:
            self.query_one(StatusLine).show(self._doc, state)
        except Exception:  # noqa: BLE001 - before compose
            pass
        view = self.token_view
        if self._loading:
            self._subtitle(Text(f"loading {safe_text(self._loading)}…"))
            return
        labels = {"text": "text", "ids": "ids", "both": "text+ids"}
        sub = Text(labels[self.mode])
        if self.ws:
            sub.append(" · ")
            sub.append("·", style="italic #ffd27f")
            sub.append(" whitespace")
        if self.rank_colours and self._tokenizer is not None:
            sub.append(" · rank ")
            styles = [view.palette.rank[k] for k in range(6)]
            for style, label in zip(styles, rank_ranges(self._tokenizer.n_vocab)):
                sub.append(" ", style=style)
                sub.append(label + " ")
        self._subtitle(sub)

    def _subtitle(self, sub: Text) -> None:
        """The token view's subtitle, set only when it changes (setting it repaints the whole view)."""
        if sub != getattr(self, "_shown_subtitle", None):
            self._shown_subtitle = sub
            self.token_view.border_subtitle = sub

    # ----- size ------------------------------------------------------------------------------

    def on_resize(self, event) -> None:
        self._check_size(event.size)

    def _check_size(self, size=None) -> None:
        width, height = size or self.size
        screen = self.screen_stack[0] if self.screen_stack else self.screen
        check_size(screen, (width, height), (MIN_WIDTH, MIN_HEIGHT))
        screen.set_class(width >= WIDE_WIDTH, "-wide")
        screen.set_class(height < SHORT_HEIGHT, "-short")
        screen.set_class(height < TINY_HEIGHT, "-tiny")
        self.call_after_refresh(self._maybe_relayout)

    def on_token_view_width_changed(self, event: TokenView.WidthChanged) -> None:
        if event.view is self.token_view:
            self.call_after_refresh(self._maybe_relayout)

    def _maybe_relayout(self) -> None:
        view = self.token_view
        if self._doc is not None and view.layout_width != view.rows_width:
            self.retokenize()

    # ----- actions ---------------------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_sections()))

    def help_sections(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """The help screen's sections (a view puts its own keys first)."""
        return [
            ("Everywhere (the input pane included)", [(key_label(k), h) for k, _, _, _, h in APP_KEYS]),
            ("Moving", MOVE_KEYS),
            ("Token view colours", [
                ("alternating", "neighbouring pieces differ in colour"),
                ("‹f0 9f›😀", "a partial piece: bytes that are only part of a character; after the last "
                             "of them, underlined, the character they make up"),
                ("highlighted", "a special token (only with Ctrl+O)"),
                ("teal", "an added token that is not special, and the template's tokens (Ctrl+N)"),
                ("salmon, italic", "the unknown token ([UNK], <unk>), drawn as the text it stands for"),
                ("grey text", "text no token covers (spaces a WordPiece or Unigram pre-tokenizer drops)"),
                ("▁ italic", "a token sharing a character without being its bytes (Unigram's ▁ before an "
                             "unknown character)"),
                ("the original text", "each piece shows the text it covers; the spelling the model saw "
                                      "(naive, ▁the, ##ing) is in the inspector"),
                ("·  →  ⏎", "visible whitespace (Ctrl+G), in its own colour and italic: never text"),
                ("␛ ⟨RLO⟩ ⟨ZWJ⟩", "control, bidi and zero-width characters shown, never obeyed"),
                ("rank (Ctrl+R)", "light = single bytes and early merges, dark = late merges; the legend "
                                  "under the token view gives each colour's ranks"),
            ]),
            ("Copying", [("F9", "copy ids, pieces or the selected token's bytes; without a system clipboard "
                                "the copy goes through the terminal (OSC 52; inside tmux it needs "
                                "`set -g set-clipboard on`)")]),
        ]

    def action_pick_encoding(self) -> None:
        from ..sources import registry

        try:
            infos = registry.list_encodings()
        except Exception as exc:  # noqa: BLE001
            self.notify(f"Cannot list encodings: {safe_text(exc)}", severity="error", markup=False)
            return

        def chosen(name: str | None) -> None:
            if name and name != self.encoding_name:
                self.switch_encoding(name)

        self.push_screen(EncodingPicker(infos, self.encoding_name), chosen)

    def action_cycle_mode(self) -> None:
        self.set_mode(MODES[(MODES.index(self.mode) + 1) % len(MODES)])

    def set_mode(self, mode: str) -> None:
        self.mode = mode
        self.retokenize()
        self._status()

    def action_toggle_ws(self) -> None:
        self.ws = not self.ws
        self.token_view.set_options(ws=self.ws)
        if self.mode != TEXT:
            self.retokenize()
        self._status()

    def action_toggle_rank(self) -> None:
        self.rank_colours = not self.rank_colours
        self.token_view.set_options(rank_colours=self.rank_colours)
        self._status()

    def action_toggle_template(self) -> None:
        self.show_template = not self.show_template
        self._show_template()
        if self.show_template and self._tokenizer is not None and not any(self.token_view.template):
            self.notify(f"{safe_text(self._tokenizer.name)} has no template: encoding with special tokens adds "
                        "nothing to the text's own tokens", markup=False)
        self.retokenize()

    def _show_template(self) -> None:
        """Give the token view the template's tokens to draw at the ends (or none)."""
        tokenizer = self._tokenizer
        shown = self.show_template and tokenizer is not None
        self.token_view.set_template(*(tokenizer.template() if shown else ((), ())))

    def action_toggle_specials(self) -> None:
        self.specials = not self.specials
        self.notify("Special-token text is now encoded as special tokens" if self.specials
                    else "Special-token text is now encoded as ordinary text")
        self.retokenize(full=True)

    def action_select_all(self) -> None:
        editor = self.editor
        editor.focus()
        editor.select_all()

    def action_clear_text(self) -> None:
        editor = self.editor
        if not editor.text:
            return
        editor.focus()
        editor.replace("", editor.document.start, editor.document.end)  # undoable: Ctrl+Z
        self.notify("Cleared the text (Ctrl+Z in the input pane brings it back)")

    def action_copy_menu(self) -> None:
        def chosen(what: str | None) -> None:
            if what in ("ids", "pieces", "bytes"):
                self.action_copy(what)

        self.push_screen(ChoiceDialog("Copy", "Copy what? (i, p or b)",
                                      [("ids", "Ids"), ("pieces", "Pieces"), ("bytes", "Token bytes"),
                                       ("cancel", "Cancel")]), chosen)

    def action_copy(self, what: str) -> None:
        doc = self._doc
        if doc is None or not self._doc_current:
            self.notify("Still tokenizing; try again in a moment", severity="warning")
            return
        if what == "ids":
            self.copy_text(" ".join(map(str, doc.ids)), f"{len(doc.ids):,} ids")
        elif what == "pieces":
            texts = [p.text for p in doc.pieces()]
            self.copy_text(json.dumps(texts, ensure_ascii=False), f"{len(texts):,} pieces")
        else:
            piece = self.selected_piece
            if piece is None:
                self.notify("No token selected", severity="warning")
                return
            self.copy_text(piece.bytes.hex(" "), f"the {len(piece.bytes)} bytes of token {piece.id}")

    # ----- saving ----------------------------------------------------------------------------

    def action_save(self) -> None:
        self.save_then(None)

    def action_save_as(self) -> None:
        self._ask_path(None)

    def save_then(self, after: Callable[[], None] | None) -> None:
        """Save to the file (asking first when another program changed it), or ask for a path."""
        if not self.path:
            self._ask_path(after)
            return
        now = files.stamp_of(files.target_of(self.path))
        if self.stamp is not None and now is not None and now != self.stamp:
            def answer(choice: str | None) -> None:
                if choice == "overwrite":
                    self._write(self.path, after)
                elif choice == "save_as":
                    self._ask_path(after)

            self.push_screen(ChoiceDialog(
                "Changed on disk", f"{safe_text(self.path)} was changed by another program since it was "
                "opened. Overwrite it with your text?",
                [("overwrite", "Overwrite"), ("save_as", "Save as…"), ("cancel", "Cancel")]), answer)
            return
        self._write(self.path, after)

    def _ask_path(self, after: Callable[[], None] | None) -> None:
        def chosen(path: str | None) -> None:
            if not path:
                return
            same = self.path is not None and files.target_of(path) == files.target_of(self.path)
            if self.origin and not same and files.target_of(path) == files.target_of(self.origin[0]):
                def overwrite(choice: str | None) -> None:
                    if choice == "replace":
                        self.origin = None
                        self._write(path, after, encoding="utf-8")

                self.push_screen(ChoiceDialog(
                    "Overwrite the original?", f"{safe_text(path)} was {self.origin[1]}: saving over it writes "
                    "your text in place of its original bytes (bytes that were not UTF-8 become U+FFFD). "
                    "Overwrite it?", [("replace", "Overwrite"), ("cancel", "Cancel")]), overwrite)
                return
            if files.target_of(path).exists() and not same:
                def answer(choice: str | None) -> None:
                    if choice == "replace":
                        self._write(path, after, encoding="utf-8")

                self.push_screen(ChoiceDialog(
                    "Replace?", f"{safe_text(path)} already exists. Replace it with your text?",
                    [("replace", "Replace"), ("cancel", "Cancel")]), answer)
                return
            self._write(path, after, encoding=self.file_encoding if same else "utf-8")

        self.push_screen(PathPrompt("Save the text as", self.path or ""), chosen)

    def _write(self, path: str, after: Callable[[], None] | None, *, encoding: str | None = None) -> None:
        text = self.editor.real_text
        encoding = encoding or self.file_encoding
        try:
            stamp = files.save_text(path, text, encoding)
        except files.SaveProblem as exc:
            def answer(choice: str | None) -> None:
                if choice == "save_as":
                    self._ask_path(after)

            self.push_screen(ChoiceDialog("Cannot save", f"{safe_text(exc)}. Your text is still here.",
                                          [("save_as", "Save as…"), ("cancel", "Cancel")]), answer)
            return
        if self.path and path != self.path:
            recovery.discard(self.path)
        self.path, self.stamp, self.file_encoding, self.source = str(path), stamp, encoding, "file"
        self._saved_text = text
        recovery.discard(self.path)
        self._input_title()
        self.notify(f"Saved {safe_text(path)}", markup=False)
        if after is not None:
            after()

    async def action_quit(self) -> None:
        from .screens.chat import ask_before_quit

        if ask_before_quit(self):  # the chat's conversation has unsaved edits: that is asked first
            return
        trained = self.trained
        if trained is not None and trained.unsaved:
            def trained_answer(choice: str | None) -> None:
                if choice == "discard":
                    self.trained = None
                    self.call_later(self.action_quit)
                elif choice == "save":
                    self.open_view("train")
                    self.notify("Type a name and press Ctrl+S to save the tokenizer", markup=False)

            self.push_screen(ChoiceDialog(
                "Unsaved tokenizer", "The tokenizer you trained is not saved. Quit and discard it?",
                [("save", "Save it"), ("discard", "Discard"), ("cancel", "Cancel")]), trained_answer)
            return
        if not self.modified or self.source == "sample":
            self.exit(0)
            return

        def answer(choice: str | None) -> None:
            if choice == "save":
                self.save_then(lambda: self.exit(0))
            elif choice == "discard":
                recovery.discard(self.path)
                self.exit(0)

        where = (safe_text(self.path) if self.path else "the text from standard input" if self.source == "stdin"
                 else f"{safe_text(self.origin[0])} ({self.origin[1]}: saving asks where)" if self.origin
                 else "the file's text (changed when it was read, so it has no file to go back to)")
        self.push_screen(
            ChoiceDialog("Unsaved edits", f"You changed {where}. Save before quitting?",
                         [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")]),
            answer,
        )

    # ----- signals and recovery --------------------------------------------------------------

    def _trap_signals(self) -> None:
        """SIGTERM, SIGHUP (an SSH drop), SIGINT from outside (the terminal's Ctrl+C is a key here),
        SIGQUIT and SIGUSR1/2 keep the unsaved edits, restore the terminal and exit 128 + N."""
        self._trapped: list[int] = []
        try:
            loop = asyncio.get_running_loop()
            for sig in STOP_SIGNALS:
                loop.add_signal_handler(sig, self._stopped_by_signal, sig)
                self._trapped.append(sig)
        except (NotImplementedError, RuntimeError, ValueError, AttributeError):
            pass  # not the main thread, or no such signal here

    def _untrap_signals(self) -> None:
        try:
            loop = asyncio.get_running_loop()
            for sig in getattr(self, "_trapped", []):
                loop.remove_signal_handler(sig)
        except (RuntimeError, ValueError):
            pass

    def _stopped_by_signal(self, sig: int) -> None:
        name = signal.Signals(sig).name
        kept = self._keep_edits(name)  # never raises: the terminal is restored below
        self.stopped_by = (name, kept)
        # if the terminal is gone (SIGHUP) and restoring it blocks, leave anyway
        watchdog = threading.Timer(5.0, os._exit, (128 + sig,))
        watchdog.daemon = True
        watchdog.start()
        self.exit(return_code=128 + sig)

    def _offer_recovery(self) -> None:
        found = recovery.find(self.path if self.source == "file" else None)
        if found is None:
            return
        if found.text == self.editor.real_text:
            recovery.discard(self.path if self.source == "file" else None)
            return
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(found.when))
        what = safe_text(self.path) if self.source == "file" and self.path else "text without a file"
        message = (f"tokscope was stopped ({safe_text(found.reason)}) at {when} with unsaved edits to {what}. "
                   f"They were kept in {safe_text(found.file)}. Restore them?")

        def answer(choice: str | None) -> None:
            key = self.path if self.source == "file" else None
            if choice == "restore":
                self.set_text(found.text)
                recovery.discard(key)
                self.notify("Restored the recovered edits (Ctrl+Z undoes it)", markup=False)
            elif choice == "discard":
                recovery.discard(key)

        self.push_screen(ChoiceDialog("Recovered edits", message,
                                      [("restore", "Restore"), ("discard", "Discard them"),
                                       ("later", "Keep for later")]), answer)
