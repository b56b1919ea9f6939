"""The status line: the encoding, live counts, and the state (always shown, at the right)."""

from __future__ import annotations

from rich.cells import cell_len
from textual.widgets import Static

from ...core.text.display import safe_text
from ...core.document.document import Document
from ..fit import cut, first_fit


def status_text(doc: Document | None, state: str, width: int = 80) -> str:
    """One line: encoding · tokens · chars · bytes · words · chars/token · tokens/word, then the
    state. Figures that do not fit are shortened, then dropped (the last first); the state stays.

    >>> status_text(None, "loading gpt2…")
    ' loading gpt2…'
    """
    if doc is None:
        return f" {state}"
    s = doc.figures
    name = safe_text(s.encoding)
    long = [f"{s.tokens:,} tokens", f"{s.chars:,} chars", f"{s.bytes:,} bytes", f"{s.words:,} words",
            f"{s.chars_per_token:.2f} chars/tok", f"{s.tokens_per_word:.2f} tok/word"]
    short = [f"{s.tokens:,} tok", f"{s.chars:,} ch", f"{s.bytes:,} B", f"{s.words:,} w",
             f"{s.chars_per_token:.2f} ch/tok", f"{s.tokens_per_word:.2f} tok/w"]
    forms = [" " + sep.join([name, *parts[:keep], state])
             for parts, sep in ((long, " │ "), (short, "│")) for keep in range(len(parts), -1, -1)]
    line = first_fit(forms, width)
    return line if cell_len(line) <= width else cut(" " + state, width)


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(markup=False, id=id)  # the encoding's name is not markup
        self._shown: str | None = None

    def show(self, doc: Document | None, state: str) -> None:
        text = status_text(doc, state, self.size.width or 80)
        if text != self._shown:  # the same line is not painted again
            self._shown = text
            self.update(text, layout=False)

