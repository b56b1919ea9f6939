"""The status line: encoding and live counts."""

from __future__ import annotations

from textual.widgets import Static

from ..model import TokenDoc


def count_words(text: str) -> int:
    """Whitespace-separated words.

    >>> count_words("  two words\\n")
    2
    """
    return len(text.split())


def stats(doc: TokenDoc) -> dict:
    """The figures the status line shows (also used by tests).

    ``chars_per_token`` and ``tokens_per_word`` are 0.0 when there is nothing to divide by.
    """
    cached = getattr(doc, "_stats", None)
    if cached is not None:
        return cached
    text = doc.text
    tokens = len(doc.ids)
    words = count_words(text)
    result = {
        "encoding": doc.tokenizer.name,
        "tokens": tokens,
        "chars": len(text),
        "bytes": len(text.encode("utf-8", "surrogatepass")),
        "words": words,
        "chars_per_token": len(text) / tokens if tokens else 0.0,
        "tokens_per_word": tokens / words if words else 0.0,
    }
    if doc.complete:
        doc._stats = result  # computed once per doc (in the worker, see ExplorerApp._tokenize)
    return result


def status_text(doc: TokenDoc | None, state: str, width: int = 80) -> str:
    """One line: encoding · tokens · chars · bytes · words · chars/token · tokens/word · state."""
    if doc is None:
        return f" {state}"
    s = stats(doc)
    parts = [
        s["encoding"],
        f"{s['tokens']:,} tokens",
        f"{s['chars']:,} chars",
        f"{s['bytes']:,} bytes",
        f"{s['words']:,} words",
        f"{s['chars_per_token']:.2f} chars/tok",
        f"{s['tokens_per_word']:.2f} tok/word",
        state,
    ]
    line = " " + " │ ".join(parts)
    if len(line) > width:
        parts[1:7] = [f"{s['tokens']:,} tok", f"{s['chars']:,} ch", f"{s['bytes']:,} B", f"{s['words']:,} w",
                      f"{s['chars_per_token']:.2f} ch/tok", f"{s['tokens_per_word']:.2f} tok/w"]
        line = " " + "│".join(parts)
    return line


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; }
    """

    def show(self, doc: TokenDoc | None, state: str) -> None:
        self.update(status_text(doc, state, self.size.width or 80), layout=False)
