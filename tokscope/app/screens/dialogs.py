"""Small modal screens: a choice dialog, a path prompt, the encoding picker, the help screen."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from ...core.display import safe_text
from ..widgets.form import Button
from .base import TooSmall, check_size

#: the smallest terminal a dialog is drawn in
DIALOG_MIN = (40, 12)


class Dialog(ModalScreen):
    """A modal dialog: too small a terminal shows the message instead of a cut dialog. Ctrl+Q
    quits from a dialog too (a modal screen hides the app's keys)."""

    BINDINGS = [Binding("ctrl+q", "app.quit", "Quit", show=False)]

    def on_mount(self) -> None:
        self.mount(TooSmall(*DIALOG_MIN))
        check_size(self, self.app.size, DIALOG_MIN)

    def on_resize(self) -> None:
        check_size(self, self.app.size, DIALOG_MIN)


class ChoiceDialog(Dialog):
    """A question with buttons; each choice is ``(key, label)``; dismisses with the key.

    The first letter of each key is also a keyboard shortcut; Escape dismisses with ``"cancel"``.
    """

    BINDINGS = [Binding("escape", "choose('cancel')", "Cancel")]

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

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

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


class EncodingPicker(Dialog):
    """Pick an encoding from ``registry.list_encodings()``; dismisses with its name or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, infos: Sequence, current: str) -> None:
        super().__init__()
        self.infos = list(infos)
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        for info in self.infos:
            size = f"{info.n_vocab:>7,}" if info.n_vocab else "      ?"
            mark = "●" if info.name == self.current else " "
            line = Text(f"{mark} {safe_text(info.name):<15} {size}  ")
            line.append(info.kind + ("" if info.available else " (missing)"))
            options.append(Option(line, disabled=False))
        with Vertical(id="dialog"):
            yield Label("Encoding  (Enter to load, Escape to cancel)", id="dialog-title")
            yield OptionList(*options, id="encodings")

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        for k, info in enumerate(self.infos):
            if info.name == self.current:
                option_list.highlighted = k
        option_list.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        # by position, not by id: two encodings may share a name (a saved tokenizer named like
        # a built-in), and an option id must be unique
        event.stop()
        self.dismiss(self.infos[event.option_index].name)

    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(Dialog):
    """Every key, grouped; Escape, q or F1 closes it."""

    BINDINGS = [Binding("escape,q,f1,question_mark", "close", "Close")]

    def __init__(self, sections: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        text = Text()
        for title, rows in self.sections:
            text.append(f"{title}\n", style="bold underline")
            for keys, what in rows:
                text.append(f"  {keys:<18}", style="bold")
                text.append(f"{what}\n")
            text.append("\n")
        with Vertical(id="help"):
            yield Label("tokscope keys  (Escape to close)", id="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(text, id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
