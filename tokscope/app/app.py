"""The explorer app: input pane, token view, inspector and status line (the state API is in features.py)."""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.signal import Signal
from textual.widgets import Footer, Static, TextArea

from ..core.tokenizer import Tokenizer
from ..core.types import Piece
from . import clipboard
from .commands import ExplorerCommands
from .features import FEATURES, load_screen_class
from .messages import EncodingLoaded, TokenPicked

#: The screen a picked token opens (merge tree and split explainer).
WHY_SCREEN = "tokscope.app.screens.why:WhyScreen"
from ..core.document import Document
from ..core.errors import CancelledError
from .render import MODES, TEXT, layout, layout_text, relayout
from .screens.dialogs import ChoiceDialog, EncodingPicker, HelpScreen, PathPrompt
from .widgets.editor import Editor
from .widgets.inspector import Inspector
from .widgets.status import StatusLine
from .widgets.token_view import VIEW_KEYS, Palette, TokenView

#: below this size the explorer shows a message instead of a squashed layout
MIN_WIDTH, MIN_HEIGHT = 60, 16
#: from this width the inspector sits to the right of the panes
WIDE_WIDTH = 110
#: characters tokenized before the first paint of a large text (the rest follows)
FIRST_PART = 40_000
#: texts longer than this (characters) open with soft wrap off in the input pane (Textual's TextArea
#: recounts every wrapped line on each paint)
SOFT_WRAP_LIMIT = 50_000
#: texts up to this many characters are re-tokenized after an edit without a worker thread
SYNC_LIMIT = 150_000
#: in longer texts too, unless the edit needs a re-scan of more than this many characters
INLINE_SCAN = 20_000

#: (keys, action, footer label, shown in footer, help text) — the one list bindings and help use
APP_KEYS: list[tuple[str, str, str, bool, str]] = [
    ("f1", "help", "Help", True, "this help"),
    ("f2", "pick_encoding", "Encoding", True, "pick the encoding (every one `tokscope encodings` lists)"),
    ("f3", "cycle_mode", "Text/ids", True, "token view shows text, ids, or both"),
    ("f4", "toggle_ws", "Spaces", True, "show spaces, tabs and newlines as · → ⏎"),
    ("f5", "toggle_rank", "Rank", False, "colour pieces by merge rank (early vs late) or alternately"),
    ("f6", "toggle_specials", "Specials", False, "treat special-token text like <|endoftext|> as special tokens"),
    ("f7", "copy('ids')", "Copy ids", True, "copy all token ids (space separated)"),
    ("f8", "copy('pieces')", "Copy pieces", False, "copy all pieces as a JSON list of strings"),
    ("f9", "copy('bytes')", "Copy bytes", False, "copy the selected token's bytes as hex"),
    ("ctrl+s", "save", "Save", False, "save the text (to its file, or ask for a path)"),
    ("ctrl+q", "quit", "Quit", True, "quit (asks first when the text has unsaved edits)"),
]

_GUARDED_ACTIONS = {action.split("(")[0] for _, action, *_ in APP_KEYS} - {"quit"} | {"open_feature"}

MOVE_KEYS = [
    ("Tab / Shift+Tab", "move between the input pane and the token view"),
    ("← →", "previous / next token (token view)"),
    ("↑ ↓", "token in the row above / below"),
    ("PgUp PgDn", "a page up / down"),
    ("Home End", "first / last token"),
    ("Enter", "open the selected token (other views listen for it)"),
    ("mouse click", "select a token"),
    ("Ctrl+P", "command palette: every action and every encoding"),
]


class ExplorerApp(App):
    """tokscope's main screen. See :mod:`tokscope.app.features` for the API other screens use."""

    CSS_PATH = str(Path(__file__).with_name("explorer.tcss"))
    TITLE = "tokscope"
    COMMANDS = App.COMMANDS | {ExplorerCommands}
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        # priority: the input pane has its own uses for some of these keys (F6, F7)
        Binding(key, action, label, show=show, priority=True)
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
    ) -> None:
        super().__init__()
        self._initial_text = text
        self._saved_text = text
        self.path = path
        self.source = source
        self._encoding_request = encoding
        self._tokenizer: Tokenizer | None = tokenizer
        self._palette_kind = palette
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
        self._heap_frozen = False  # see _apply
        self.doc_changed: Signal[Document] = Signal(self, "doc_changed")
        self.encoding_changed: Signal[Tokenizer] = Signal(self, "encoding_changed")
        self.selection_changed: Signal[int | None] = Signal(self, "selection_changed")
        self.token_picked: Signal[int] = Signal(self, "token_picked")
        self._feature_bindings()

    # ----- composition -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        kind = self._palette_kind
        if kind is None:
            kind = "mono" if self.no_color else "standard" if self.console.color_system in ("standard", "windows") else "truecolor"
        with Vertical(id="main"):
            with Horizontal(id="panes"):
                with Vertical(id="left"):
                    # TextArea soft wrap costs O(lines) per painted line: large texts scroll sideways
                    wrap = len(self._initial_text) < SOFT_WRAP_LIMIT
                    editor = Editor(self._initial_text, id="input", soft_wrap=wrap, tab_behavior="focus")
                    editor.border_title = "input"
                    yield editor
                    view = TokenView(id="tokens", palette=Palette(kind))
                    view.border_title = "tokens"
                    yield view
                inspector = Inspector(id="inspector")
                inspector.border_title = "token"
                inspector.border_subtitle = "bytes: A ascii L lead C continuation"
                yield inspector
            yield StatusLine(id="status")
            yield Footer()
        yield Static(
            f"The terminal is too small for tokscope.\nMake it at least {MIN_WIDTH}×{MIN_HEIGHT} (80×24 is best).\n\nCtrl+Q quits.",
            id="too-small",
        )

    def on_mount(self) -> None:
        self._check_size()
        self.editor.on_change = self._text_changed  # re-tokenize before the next frame is painted
        self.editor.focus()
        self._status()
        if self._notice:
            self.notify(self._notice, severity="warning", timeout=8)
        if self._tokenizer is not None:
            self._set_tokenizer(self._tokenizer)
        else:
            self.switch_encoding(self._encoding_request)

    def on_unmount(self) -> None:
        if self._heap_frozen:
            gc.unfreeze()  # what this app kept alive can be collected again
            gc.set_threshold(*self._gc_thresholds)

    def _feature_bindings(self) -> None:
        for feature in FEATURES:
            action = f"open_feature({feature.screen!r})"
            priority = len(feature.key) > 1 and not feature.key.isalpha()
            self.bind(feature.key, action, description=feature.title, show=False)
            del priority

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Explorer keys do nothing while a dialog (modal screen) is open; quit always works."""
        from textual.screen import ModalScreen

        if action in _GUARDED_ACTIONS and isinstance(self.screen, ModalScreen):
            return False
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
        """A token was picked somewhere: post :class:`TokenPicked` and publish ``token_picked``."""
        self.post_message(TokenPicked(token_id, source))
        self.token_picked.publish(token_id)

    def set_text(self, text: str) -> None:
        editor = self.editor
        editor.replace(text, editor.document.start, editor.document.end)  # Editor.edit adds stand-ins

    def copy_text(self, text: str, what: str) -> str:
        method = clipboard.copy_text(self, text)
        self.notify(clipboard.describe(method, what), title="Copy")
        return method

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
            stay = f"; staying on {previous}" if previous else ""
            self.notify(f"Cannot load encoding {event.name!r}: {event.error}{stay}", severity="error", timeout=10)
            if self._tokenizer is None and event.name != "o200k_base":
                self.switch_encoding("o200k_base")
            self._status()
            return
        self._set_tokenizer(event.tokenizer)

    def _set_tokenizer(self, tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer
        self.encoding_changed.publish(tokenizer)
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
            and width == view.rows_width and self.mode == view.rows_mode
        ):
            # re-tokenizing the touched chunks takes a few milliseconds, so do it right here and
            # skip the round trip through a thread; in a long text an edit that needs more (a
            # long re-scan, a full build) still goes to the worker
            doc = old.edited(text, max_scan=None if len(text) <= SYNC_LIMIT else INLINE_SCAN)
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
        if cancel.is_set():
            return
        self.call_from_thread(self._apply, job, doc, rows, width, mode)

    def _apply(self, job: tuple[int, int], doc: Document, rows: list[int], width: int, mode: str) -> None:
        job, version = job
        if job != self._job:
            return
        self._doc = doc
        self._doc_version = version
        self._doc_current = doc.complete
        view = self.token_view
        relaid = (width, mode) != (view.rows_width, view.rows_mode)
        view.set_doc(doc, rows, width, mode)
        if relaid and view.selected is not None:
            view.scroll_to_piece(view.selected)
        if doc.complete:
            # the view's scrollbar may come or go with the new rows, changing the width they need
            self.call_after_refresh(self._maybe_relayout)
        if doc.complete:
            if self.focused is self.editor or view.selected is None:
                self._select_from_cursor()
            self.doc_changed.publish(doc)
            if not self._heap_frozen:
                # the tokenizer, the pieces and the input pane's per-line lists are ~100k objects
                # that live as long as the app; a full GC pass over them cost 30-70 ms in the
                # middle of a keystroke now and then. Collect once, then keep the GC off them.
                self._heap_frozen = True
                gc.collect()
                gc.freeze()
                # and full passes over what painting adds (cached lines) 10x less often
                self._gc_thresholds = gc.get_threshold()
                gc.set_threshold(self._gc_thresholds[0], self._gc_thresholds[1], self._gc_thresholds[2] * 10)
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

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if not getattr(event, "early_handled", False):  # the input pane calls _text_changed itself
            self._text_changed()

    def _text_changed(self) -> None:
        self._text_version += 1
        self.retokenize()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if self.focused is self.editor:
            self._select_from_cursor()

    def on_token_view_selected(self, event: TokenView.Selected) -> None:
        self._show_selection()
        self.selection_changed.publish(event.index)
        doc = self._doc
        if event.from_user and event.index is not None and doc is not None and self._doc_current:
            start = doc.starts[event.index]
            text = doc.text
            row = text.count("\n", 0, start)
            col = start - (text.rfind("\n", 0, start) + 1)
            self.editor.move_cursor((row, col))

    def on_token_view_picked(self, event: TokenView.Picked) -> None:
        """Enter on a piece opens the same view as a token picked anywhere: its merge tree."""
        if self._doc is None:
            return
        token_id = self._doc.ids[event.index]
        self.open_token(token_id, source="token view")
        if event.control is self.token_view:
            self.push_screen(load_screen_class(WHY_SCREEN)(token_id))

    def on_token_picked(self, event: TokenPicked) -> None:
        doc = self._doc
        if doc is None:
            return
        view = self.token_view
        if view.selected is not None and doc.ids[view.selected] == event.token_id:
            return
        index = doc.first_occurrence(event.token_id)
        if index is None:
            self.notify(f"Token {event.token_id} does not occur in the text")
        else:
            view.select(index, from_user=True)

    def _show_selection(self) -> None:
        self.query_one(Inspector).show(self._doc, self.token_view.selected)

    def _status(self) -> None:
        if self._loading:
            state = f"loading {self._loading}…"
        elif self._tokenizer is None:
            state = "no encoding"
        elif not self._doc_current:
            state = "tokenizing…"
        else:
            state = "live"
        if self.specials:
            state += " · specials on"
        try:
            self.query_one(StatusLine).show(self._doc, state)
        except Exception:  # noqa: BLE001 - before compose
            pass
        view = self.token_view
        if self._loading:
            view.border_subtitle = f"loading {self._loading}…"
        else:
            labels = {"text": "text", "ids": "ids", "both": "text+ids"}
            extras = [labels[self.mode]]
            if self.rank_colours:
                extras.append("colour: rank light=early dark=late")
            if self.ws:
                extras.append("whitespace")
            view.border_subtitle = " · ".join(extras)

    # ----- size ------------------------------------------------------------------------------

    def on_resize(self, event) -> None:
        self._check_size(event.size)

    def _check_size(self, size=None) -> None:
        width, height = size or self.size
        screen = self.screen
        screen.set_class(width < MIN_WIDTH or height < MIN_HEIGHT, "-too-small")
        screen.set_class(width >= WIDE_WIDTH, "-wide")
        self.call_after_refresh(self._maybe_relayout)

    def _maybe_relayout(self) -> None:
        view = self.token_view
        if self._doc is not None and view.layout_width != view.rows_width:
            self.retokenize()

    # ----- actions ---------------------------------------------------------------------------

    def action_help(self) -> None:
        sections = [
            ("Everywhere", [(k.replace("ctrl+", "Ctrl+").upper() if k.startswith("f") else k.replace("ctrl+", "Ctrl+").title(), h)
                            for k, _, _, _, h in APP_KEYS]),
            ("Moving", MOVE_KEYS),
            ("In the token view (letters)", [("?" if k == "question_mark" else k, h) for k, _, h in VIEW_KEYS]),
        ]
        if FEATURES:
            sections.append(("More views", [(f.key, f"{f.title}: {f.description}") for f in FEATURES]))
        sections.append(("Token view colours", [
            ("alternating", "neighbouring pieces differ in colour"),
            ("‹f0 9f›", "a partial piece: bytes that are only part of a character"),
            ("highlighted", "a special token (only with F6 / s)"),
            ("␛ ⟨RLO⟩ ⟨ZWJ⟩", "control, bidi and zero-width characters shown, never obeyed"),
        ]))
        self.push_screen(HelpScreen(sections))

    def action_pick_encoding(self) -> None:
        from ..sources import registry

        try:
            infos = registry.list_encodings()
        except Exception as exc:  # noqa: BLE001
            self.notify(f"Cannot list encodings: {exc}", severity="error")
            return

        def chosen(name: str | None) -> None:
            if name and name != self.encoding_name:
                self.switch_encoding(name)

        self.push_screen(EncodingPicker(infos, self.encoding_name), chosen)

    def action_cycle_mode(self) -> None:
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]
        self.retokenize()
        self._status()

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

    def action_toggle_specials(self) -> None:
        self.specials = not self.specials
        self.notify("Special-token text is now encoded as special tokens" if self.specials
                    else "Special-token text is now encoded as ordinary text")
        self.retokenize(full=True)

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

    def action_open_feature(self, path: str) -> None:
        try:
            screen_class = load_screen_class(path)
        except Exception as exc:  # noqa: BLE001
            self.notify(f"Cannot open {path}: {exc}", severity="error")
            return
        self.push_screen(screen_class())

    def action_save(self) -> None:
        self._save_then(None)

    def _save_then(self, after) -> None:
        def write(path: str | None) -> None:
            if not path:
                return
            text = self.editor.real_text
            try:
                Path(path).expanduser().write_text(text, encoding="utf-8")
            except OSError as exc:
                self.notify(f"Cannot save {path}: {exc.strerror or exc}", severity="error", timeout=10)
                return
            self.path = str(path)
            self._saved_text = text
            self.notify(f"Saved {path}")
            if after is not None:
                after()

        if self.path:
            write(self.path)
        else:
            self.push_screen(PathPrompt("Save the text as"), write)

    async def action_quit(self) -> None:
        if not self.modified:
            self.exit(0)
            return

        def answer(choice: str) -> None:
            if choice == "save":
                self._save_then(lambda: self.exit(0))
            elif choice == "discard":
                self.exit(0)

        where = self.path or ("the text from standard input" if self.source == "stdin" else "the sample text")
        self.push_screen(
            ChoiceDialog("Unsaved edits", f"You changed {where}. Save before quitting?",
                         [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")]),
            answer,
        )

