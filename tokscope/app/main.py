"""Start the explorer: read FILE, standard input or the sample, then run the app on the terminal.

``cat FILE | tokscope`` works: standard input is read to the end first, then the terminal
(``/dev/tty``) becomes standard input so the app still gets keys.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..core.errors import TokscopeError

#: the explorer's own size limit when the user did not give --max-bytes
EXPLORER_MAX_BYTES = 8 * 1024 * 1024


class StartupProblem(TokscopeError):
    pass


def _limit(args: argparse.Namespace) -> int:
    from ..sources.text_input import DEFAULT_MAX_BYTES

    given = getattr(args, "max_bytes", None)
    if given is None or given == DEFAULT_MAX_BYTES:
        return EXPLORER_MAX_BYTES
    return given


def head_cut(data: bytes, limit: int) -> bytes:
    """The first ``limit`` bytes, cut back to a whole UTF-8 character.

    >>> head_cut("aé".encode(), 2)
    b'a'
    """
    cut = data[:limit]
    i = len(cut)
    while i > 0 and 0x80 <= cut[i - 1] < 0xC0:
        i -= 1
    if i > 0 and cut[i - 1] >= 0xC0:
        need = 2 if cut[i - 1] < 0xE0 else 3 if cut[i - 1] < 0xF0 else 4
        if len(cut) - (i - 1) < need:
            return cut[: i - 1]
    return cut


def read_input(args: argparse.Namespace, ask=None) -> tuple[str, str | None, str, str | None, str]:
    """(text, path, source, notice, file encoding) for the explorer; ``ask(question, choices) -> key``
    settles bad input interactively (None: refuse with an error, as a script would want).

    Every name shown comes through :func:`tokscope.core.display.safe_text`."""
    from ..core.display import safe_text

    limit = _limit(args)
    path = getattr(args, "file", None)
    encoding = "utf-8"
    if path and path != "-":
        where = safe_text(path)
        try:
            size = os.path.getsize(path)
        except FileNotFoundError:
            raise StartupProblem(f"{where}: no such file") from None
        except ValueError:
            raise StartupProblem(f"{where}: no such file (the name holds a NUL character)") from None
        except OSError as exc:
            raise StartupProblem(f"{where}: {exc.strerror or exc}") from None
        if os.path.isdir(path):
            raise StartupProblem(f"{where} is a directory, not a file")
        try:
            with open(path, "rb") as handle:
                data = handle.read(limit + 1)
        except OSError as exc:
            raise StartupProblem(f"{where}: {exc.strerror or exc}") from None
        source = "file"
    elif path == "-" or (sys.stdin is not None and not sys.stdin.isatty()):
        where = "standard input"
        data = sys.stdin.buffer.read(limit + 1)
        size = len(data)
        path = None
        source = "stdin"
    else:
        from ..sample_texts import read_sample

        return read_sample("default.txt"), None, "sample", None, encoding
    notice = None
    if size > limit:
        question = (f"{where} is {size:,} bytes{' or more' if source == 'stdin' else ''}, over the explorer's "
                    f"{limit:,}-byte limit (--max-bytes N raises it).")
        choice = ask(question, [("head", f"Open the first {limit // 1024:,} KB"), ("quit", "Quit")]) if ask else "quit"
        if choice != "head":
            raise StartupProblem(question)
        data = head_cut(data, limit)
        notice = f"Showing the first {len(data):,} bytes of {where}"
        if source == "file":
            path = None  # never save a head over the whole file
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        kind = "a binary file" if b"\x00" in data[:8192] else "not valid UTF-8"
        question = (f"{where} is {kind}: byte 0x{data[exc.start]:02x} at offset {exc.start} does not decode. "
                    "Latin-1 reads every byte as one character and saves the file back the same way.")
        if getattr(args, "errors", "strict") == "replace":
            choice = "replace"
        else:
            # short labels: three buttons fit a 64-column dialog
            choices = [("replace", "Open, bad bytes as U+FFFD"), ("latin-1", "Open as Latin-1"), ("quit", "Quit")]
            choice = ask(question, choices) if ask else "quit"
        if choice == "latin-1":
            text = data.decode("latin-1")
            encoding = "latin-1"
            notice = (notice + "; " if notice else "") + f"{where} was read as Latin-1 (one character per byte)"
            return text, path, source, notice, encoding
        if choice != "replace":
            raise StartupProblem(question + " (use --errors replace to open it anyway)")
        text = data.decode("utf-8", errors="replace")
        notice = (notice + "; " if notice else "") + f"{where} was not UTF-8: bad bytes shown as U+FFFD"
        if source == "file":
            path = None  # saving would write the replacements over the original bytes
    return text, path, source, notice, encoding


def _ask_on_terminal(question: str, choices) -> str:
    """Ask on the terminal before the app starts (a tiny Textual dialog)."""
    from textual.app import App

    from .screens.dialogs import ChoiceDialog

    class Ask(App):
        CSS_PATH = str(Path(__file__).with_name("explorer.tcss"))

        def on_mount(self) -> None:
            self.push_screen(ChoiceDialog("tokscope", question, list(choices)), self.exit)

    return Ask().run() or "quit"


def _reopen_tty() -> None:
    """Make the terminal standard input again after reading a pipe."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        raise StartupProblem("standard input was a pipe and there is no terminal to read keys from") from None
    os.dup2(fd, 0)
    os.close(fd)
    sys.stdin = open(0, closefd=False, encoding="utf-8", errors="replace")  # noqa: SIM115
    sys.__stdin__ = sys.stdin


def _check_encoding(name: str) -> None:
    from ..sources import registry, saved

    if registry.canonical_name(name) in registry.builtin_names():
        return
    if saved.find(name, registry.saved_dir()) is not None:
        return
    from ..core.display import safe_text

    known = ", ".join(registry.builtin_names())
    raise StartupProblem(f"unknown encoding {safe_text(name)!r}; choose one of {known}, or a saved tokenizer's "
                         "name or path")


def run_explorer(args: argparse.Namespace) -> int:
    """Entry point used by ``tokscope`` without a subcommand; returns the exit code."""
    from ..sources.registry import DEFAULT_ENCODING

    encoding = getattr(args, "encoding", None) or DEFAULT_ENCODING
    _check_encoding(encoding)
    piped = getattr(args, "file", None) in (None, "-") and sys.stdin is not None and not sys.stdin.isatty()
    if piped or getattr(args, "file", None) == "-":
        # read the pipe first, then ask (if needed) on the terminal
        text, path, source, notice, file_encoding = read_input(
            args, ask=None if not os.path.exists("/dev/tty") else _deferred_ask)
    else:
        text, path, source, notice, file_encoding = read_input(
            args, ask=_ask_on_terminal if sys.stdout.isatty() else None)
    if source == "stdin":
        _reopen_tty()
    from .app import ExplorerApp

    app = ExplorerApp(text, encoding=encoding, path=path, source=source, notice=notice, file_encoding=file_encoding)
    app.run()
    if getattr(app, "stopped_by", None) is not None:
        name, kept = app.stopped_by
        from ..core.display import safe_text

        where = f"; your unsaved edits are in {safe_text(kept)} (offered back when you open it again)" if kept else ""
        try:
            print(f"tokscope: stopped by {name}{where}", file=sys.stderr)
        except (OSError, ValueError):
            pass  # the terminal is gone (SIGHUP)
    return app.return_code or 0


def _deferred_ask(question: str, choices) -> str:
    _reopen_tty()
    return _ask_on_terminal(question, choices)
