"""Copy to the clipboard: the system clipboard via pyperclip, else OSC 52 through the terminal."""

from __future__ import annotations

import os
from typing import Any


def copy_text(app: Any, text: str) -> str:
    """Copy ``text``; return ``"clipboard"`` or ``"osc52"`` (which way it went).

    pyperclip needs a clipboard program (xclip, xsel, wl-copy, pbcopy...). Over SSH there usually is
    none, so the text is sent to the terminal with the OSC 52 escape (``App.copy_to_clipboard``),
    which many terminals turn into a clipboard write.
    """
    try:
        import pyperclip

        pyperclip.copy(text)
        return "clipboard"
    except Exception as exc:  # pyperclip.PyperclipException, or pyperclip missing entirely
        if exc.__class__.__name__ != "PyperclipException" and not isinstance(exc, (ImportError, OSError)):
            raise
        app.copy_to_clipboard(text)
        return "osc52"


def describe(method: str, what: str) -> str:
    """The message shown after a copy.

    >>> os.environ.pop("TMUX", None) and None
    >>> describe("osc52", "3 ids")
    'No system clipboard: sent 3 ids to the terminal (OSC 52); most terminals put it on the clipboard'
    """
    if method == "clipboard":
        return f"Copied {what} to the clipboard"
    message = f"No system clipboard: sent {what} to the terminal (OSC 52); most terminals put it on the clipboard"
    if os.environ.get("TMUX"):
        message += "; inside tmux only with `set -g set-clipboard on` in ~/.tmux.conf"
    return message
