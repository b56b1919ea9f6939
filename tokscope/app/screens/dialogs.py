"""Small modal screens: a choice dialog, a path prompt, the encoding picker, the help screen."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from ...core.text.display import safe_text
from ..widgets.form import Button
from .base import TooSmall, check_size

#: the smallest terminal a dialog is drawn in
DIALOG_MIN = (40, 12)


class Dialog(ModalScreen):
    """A modal dialog: too small a terminal shows the message instead of a cut dialog. Ctrl+Q
    quits from a dialog too (a modal screen hides the app's keys)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "app.quit", "Quit", show=False)]

    def __init__(self) -> None:
        super().__init__()
        self.answered = False

    def dismiss(self, result=None) -> AwaitComplete:
        """Close with ``result``, once: keys typed fast (``llama3`` after a dialog took ``l``) reach
        the dialog after its answer, and a second dismissal would answer again and close the
        screen under it (Textual pops the top screen)."""
        if self.answered or self.app.screen is not self:
            return AwaitComplete()
        self.answered = True
        return super().dismiss(result)

    def on_mount(self) -> None:
        self.mount(TooSmall(*DIALOG_MIN))
        check_size(self, self.app.size, DIALOG_MIN)

    def on_resize(self) -> None:
        check_size(self, self.app.size, DIALOG_MIN)


class ChoiceDialog(Dialog):
    """A question with buttons; each choice is ``(key, label)``; dismisses with the key.

    The first letter of each key is also a keyboard shortcut; Escape dismisses with ``"cancel"``.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "choose('cancel')", "Cancel")]

    def __init__(self, title: str, message: str, choices: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.choices = list(choices)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, id="dialog-title", markup=False)
            yield Static(self.message, id="dialog-message", markup=False)
            with Horizontal(id="dialog-buttons"):
                for key, label in self.choices:
                    yield Button(label, id=f"choice-{key}", variant="primary" if key == self.choices[0][0] else "default")

    def on_mount(self) -> None:
        self.query_one(Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "choice-cancel").removeprefix("choice-"))

    def on_key(self, event) -> None:
        for key, _ in self.choices:
            if event.character and event.character.lower() == key[0]:
                event.stop()
                self.dismiss(key)
                return

    def action_choose(self, key: str) -> None:
        self.dismiss(key)


class PathPrompt(Dialog):
    """Ask for a file path; dismisses with it, or None on Escape."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", *, hint: str = "Enter to save · Escape to cancel",
                 placeholder: str = "path/to/file.txt") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.hint = hint
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, id="dialog-title", markup=False)
            yield Input(value=self.value, placeholder=self.placeholder, id="path")
            yield Static(self.hint, id="dialog-message", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


def short_name(name: str, room: int) -> str:
    """``name`` in at most ``room`` characters, its end kept: a hub model id gives up its
    organisation first, then the start of the model's own name.

    >>> short_name("o200k_base", 12), short_name("google-bert/bert-base-uncased", 22)
    ('o200k_base', 'goo…/bert-base-uncased')
    >>> short_name("sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2", 24)
    '…tilingual-MiniLM-L12-v2'
    """
    if len(name) <= room:
        return name
    org, slash, model = name.rpartition("/")
    if slash and len(model) + 2 <= room:
        return org[: room - len(model) - 2] + "…/" + model
    return "…" + name[len(name) - room + 1:]


def matches(info, query: str) -> bool:
    """Whether an encoding matches what is typed in the picker: every word of ``query`` is in its
    name or its kind, case ignored (``llama``, ``hub``, ``hub llama``).

    >>> from tokscope.sources.info import EncodingInfo
    >>> info = EncodingInfo("meta-llama/Llama-2-7b-hf", None, "hub cache", "hub-cache", "", True)
    >>> matches(info, "LLAMA"), matches(info, "hub llama"), matches(info, "builtin")
    (True, True, False)
    """
    where = f"{info.name}\n{info.kind}".casefold()
    return all(word in where for word in query.casefold().split())


def typed_path(query: str) -> tuple[str, str] | None:
    """``(path, what)`` when ``query`` names an existing file or folder (as ``-e`` takes one:
    a ``tokenizer.json``, a model folder, a saved tokenizer), else None.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     typed_path(folder)[1], typed_path(folder + "/missing.json"), typed_path("llama")
    ('folder', None, None)
    """
    path = query.strip()
    if not path or not os.path.exists(os.path.expanduser(path)):
        return None
    return path, "folder" if os.path.isdir(os.path.expanduser(path)) else "file"


def looks_like_path(query: str) -> bool:
    """Whether what is typed is meant as a path (so "no encoding matches" would mislead).

    >>> looks_like_path("./tok.json"), looks_like_path("~/models"), looks_like_path("hub llama")
    (True, True, False)
    """
    path = query.strip()
    return path.startswith(("/", "~", ".")) or os.sep in path or path.endswith((".json", ".model", ".gguf"))


#: ``EncodingPicker.shown`` holds this for the typed path (the other entries index ``infos``)
TYPED_PATH = -1


class EncodingList(OptionList, can_focus=False):
    """The picker's list: it never takes focus (the filter keeps it) and keeps its highlighted
    option in view when its size changes (the first layout, a resize)."""

    def on_resize(self) -> None:
        self.scroll_to_highlight()


class EncodingPicker(Dialog):
    """Pick an encoding from ``registry.list_encodings()``; dismisses with its name or None.

    Typing filters the list (:func:`matches`: every word in the name or the kind); Up, Down,
    PageUp and PageDown move in the list while the filter keeps focus; Enter (or a click) loads the
    highlighted encoding; Escape cancels. The current encoding is marked ``●``; a vocabulary size
    not known before loading (a model in the hub cache) shows ``?``. A name too long for its
    column keeps its end (:func:`short_name`).
    """

    DEFAULT_CSS = """
    EncodingPicker #picker {
        width: 76; max-width: 100%; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    EncodingPicker #picker-title { text-style: bold; width: 1fr; }
    EncodingPicker #picker-filter { margin: 0; }
    EncodingPicker #encodings { height: auto; max-height: 18; padding: 0; }
    EncodingPicker #picker-count { height: 1; color: $foreground; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("up", "move('cursor_up')", "Up", show=False),
        Binding("down", "move('cursor_down')", "Down", show=False),
        Binding("pageup", "move('page_up')", "Page up", show=False),
        Binding("pagedown", "move('page_down')", "Page down", show=False),
    ]

    #: width of the vocabulary size column ("200,019", "      ?")
    SIZE = 7

    def __init__(self, infos: Sequence, current: str, *, title: str = "Encoding  (Enter to load, Escape to cancel)") -> None:
        super().__init__()
        self.title_text = title
        self.infos = list(infos)
        self.current = current
        #: indexes into ``infos`` of the encodings shown, in order
        self.shown: list[int] = list(range(len(self.infos)))
        self._width = 0
        self._path: tuple[str, str] | None = None  # the file or folder typed in the filter

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Label(self.title_text, id="picker-title", markup=False)
            yield Input(placeholder="type to filter (llama, hub) or a path to a tokenizer file or folder",
                        id="picker-filter")
            yield EncodingList(id="encodings")
            yield Static("", id="picker-count", markup=False)

    def on_mount(self) -> None:  # Dialog's on_mount runs too (Textual calls every class's handler)
        if self.app.is_headless:
            self.query_one(Input).cursor_blink = False
        self._fill(keep=next((k for k, info in enumerate(self.infos) if info.name == self.current), None))
        self.query_one(Input).focus()
        self.call_after_refresh(self._refill_for_width)

    def on_resize(self) -> None:
        self.call_after_refresh(self._refill_for_width)

    # ----- the list ---------------------------------------------------------------------------

    @property
    def highlighted(self) -> int | None:
        """The index into ``infos`` of the highlighted encoding (None: nothing matches)."""
        at = self.query_one(OptionList).highlighted
        return self.shown[at] if at is not None and 0 <= at < len(self.shown) else None

    def _choice(self, index: int) -> str:
        """The name (or the typed path) the picker dismisses with for ``shown`` entry ``index``."""
        if index == TYPED_PATH and self._path is not None:
            return self._path[0]
        return self.infos[index].name

    def _room(self) -> int:
        """Cells for one line of the list (what the list's border, padding and scrollbar leave)."""
        option_list = self.query_one(OptionList)
        width = option_list.scrollable_content_region.width
        if width <= 0:
            width = min(76, self.app.size.width) - 4 - 2
        return width - (0 if option_list.show_vertical_scrollbar else 2) - 1  # a space before the mark

    def _line(self, info, name_width: int) -> Text:
        size = f"{info.n_vocab:>{self.SIZE},}" if info.n_vocab else "?".rjust(self.SIZE)
        mark = "●" if info.name == self.current else " "
        name = short_name(safe_text(info.name), name_width)
        line = Text(f" {mark} {name:<{name_width}} {size}  ", no_wrap=True, overflow="ellipsis")
        line.append(safe_text(info.kind) + ("" if info.available else " (missing)"))
        return line

    def _path_line(self, room: int) -> Text:
        assert self._path is not None
        path, what = self._path
        label = f"the {what} "
        line = Text(" ▸ " + label, no_wrap=True, overflow="ellipsis", style="bold")
        line.append(short_name(safe_text(path), max(8, room - len(label) - 4)))
        return line

    def _fill(self, keep: int | None = None) -> None:
        """Show the encodings that match the filter, highlighting ``keep`` (an index into
        ``infos``) when it is shown, else the first."""
        query = self.query_one(Input).value
        self._path = typed_path(query)
        self.shown = [k for k, info in enumerate(self.infos) if matches(info, query)]
        if self._path is not None:
            self.shown.insert(0, TYPED_PATH)
        room = self._room()
        kinds = max((len(safe_text(i.kind)) + (0 if i.available else 10) for i in self.infos), default=0)
        longest = max((len(safe_text(self.infos[k].name)) for k in self.shown if k != TYPED_PATH), default=0)
        name_width = max(12, min(longest, room - 2 - 1 - self.SIZE - 2 - kinds))
        self._width = room
        option_list = self.query_one(OptionList)
        option_list.clear_options()
        option_list.add_options([Option(self._path_line(room) if k == TYPED_PATH else self._line(self.infos[k], name_width))
                                 for k in self.shown])
        if self.shown:
            option_list.highlighted = self.shown.index(keep) if keep in self.shown else 0
        total = len(self.infos)
        count = self.query_one("#picker-count", Static)
        if not query.strip():
            said = f"{total} encodings"
        elif self._path is not None:
            said = f"Enter loads the {self._path[1]} {safe_text(self._path[0])!r}"
        elif looks_like_path(query) and not self.shown:
            said = f"no file or folder {safe_text(query.strip())!r}"
        elif self.shown:
            said = f"{len(self.shown)} of {total} match {safe_text(query.strip())!r}"
        else:
            said = f"no encoding matches {safe_text(query.strip())!r}"
        keys = " · ↑↓ PgUp PgDn move" if self.shown else " · Backspace to widen"
        count.update(said + (keys if len(said) + len(keys) <= room else ""))

    def _refill_for_width(self) -> None:
        if not self.is_attached:
            return
        # the list takes the rows the title, the filter and the count leave (the count stays in view)
        rows = self.app.size.height * 9 // 10 - 2 - 1 - 3 - 1
        option_list = self.query_one(OptionList)
        option_list.set_styles(max_height=max(3, min(18, rows)))
        if self._room() != self._width:
            self._fill(keep=self.highlighted)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._fill(keep=self.highlighted)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        chosen = self.highlighted
        if chosen is None:
            self.app.bell()
            return
        self.dismiss(self._choice(chosen))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        # by position, not by id: two encodings may share a name (a saved tokenizer named like
        # a built-in), and an option id must be unique
        event.stop()
        self.dismiss(self._choice(self.shown[event.option_index]))

    def action_move(self, action: str) -> None:
        getattr(self.query_one(OptionList), f"action_{action}")()

    def action_cancel(self) -> None:
        self.dismiss(None)


def help_text(what: str) -> Text:
    """A help line with its `code` spans in bold instead of literal backticks.

    >>> help_text("pick (every one `tokscope encodings` lists)").plain
    'pick (every one tokscope encodings lists)'
    """
    out = Text()
    for k, part in enumerate(what.split("`")):
        out.append(part, style="bold" if k % 2 else "")
    return out


class HelpScreen(Dialog):
    """Every key, grouped; Escape, q or F1 closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,f1,question_mark", "close", "Close")]

    def __init__(self, sections: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        from rich.console import Group
        from rich.table import Table

        parts: list = []
        for title, rows in self.sections:
            parts.append(Text(title, style="bold underline"))
            # a table: a description that wraps stays in its column (it went back to column 0)
            table = Table(show_header=False, box=None, padding=(0, 1, 0, 2), expand=True)
            table.add_column(no_wrap=True, width=18, style="bold")
            table.add_column(ratio=1)
            for keys, what in rows:
                table.add_row(keys, help_text(what))
            parts += [table, Text("")]
        text = Group(*parts)
        with Vertical(id="help"):
            yield Label("tokscope keys  (Escape to close)", id="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(text, id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
