"""The status line: encoding and live counts."""

from __future__ import annotations

from textual.widgets import Static

from ...core.document import Document


def status_text(doc: Document | None, state: str, width: int = 80) -> str:
    """One line: encoding · tokens · chars · bytes · words · chars/token · tokens/word · state."""
    if doc is None:
        return f" {state}"
    s = doc.figures
    parts = [
        s.encoding,
        f"{s.tokens:,} tokens",
        f"{s.chars:,} chars",
        f"{s.bytes:,} bytes",
        f"{s.words:,} words",
        f"{s.chars_per_token:.2f} chars/tok",
        f"{s.tokens_per_word:.2f} tok/word",
        state,
    ]
    line = " " + " │ ".join(parts)
    if len(line) > width:
        parts[1:7] = [f"{s.tokens:,} tok", f"{s.chars:,} ch", f"{s.bytes:,} B", f"{s.words:,} w",
                      f"{s.chars_per_token:.2f} ch/tok", f"{s.tokens_per_word:.2f} tok/w"]
        line = " " + "│".join(parts)
    return line


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; }
    """

    def show(self, doc: Document | None, state: str) -> None:
        self.update(status_text(doc, state, self.size.width or 80), layout=False)
