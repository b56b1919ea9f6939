"""Start the explorer: read FILE, standard input or the sample, then run the app on the terminal.

``cat FILE | tokscope`` works: standard input is read to the end first, then the terminal
(``/dev/tty``) becomes standard input so the app still gets keys.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..core.text.errors import TokscopeError

#: the explorer's own size limit when the user did not give --max-bytes
EXPLORER_MAX_BYTES = 8 * 1024 * 1024


class StartupProblem(TokscopeError):
    pass


def _limit(args: argparse.Namespace) -> int:
    from ..inputs.text_input import DEFAULT_MAX_BYTES

    given = getattr(args, "max_bytes", None)
    if given is None or given == DEFAULT_MAX_BYTES:
        return EXPLORER_MAX_BYTES
    return given


def read_input(args: argparse.Namespace, ask=None) -> tuple[str, str | None, str, str | None, str]:
    """(text, path, source, notice, file encoding) for the explorer; ``ask(question, choices) -> key``
    settles bad input interactively (None: refuse with an error, as a script would want).

    The text is read by the one reader the command line uses too
    (:func:`tokscope.inputs.text_input.read_input`); its typed :class:`InputError` says which
    ways on to offer (the head of a large file, U+FFFD replacements, or Latin-1). Every name
    shown comes through :func:`tokscope.core.text.display.safe_text`."""
    from ..core.text.display import safe_text
    from ..inputs.text_input import InputError
    from ..inputs.text_input import read_input as read_text
    from .not_utf8 import not_utf8_question

    limit = _limit(args)
    path = getattr(args, "file", None)
    if not path or path == "-":
        if path != "-" and (sys.stdin is None or sys.stdin.isatty()):
            from ..sample_texts import read_sample

            return read_sample("default.txt"), None, "sample", None, "utf-8"
        path = None
    source = "file" if path else "stdin"
    errors = getattr(args, "errors", "strict") or "strict"
    notice = None
    try:
        read = read_text(path, limit=limit, errors=errors)
    except InputError as exc:
        problem = exc
        where = safe_text(exc.where)
        if problem.kind in ("missing", "directory", "permission", "unreadable", "closed", "other"):
            raise StartupProblem(str(problem)) from None
        if problem.can_head:
            question = (f"{where} is {problem.size:,} bytes{' or more' if source == 'stdin' else ''}, over the "
                        f"explorer's {limit:,}-byte limit (--max-bytes N raises it).")
            choice = ask(question, [("head", f"Open the first {limit // 1024:,} KB"), ("quit", "Quit")]) if ask else "quit"
            if choice != "head":
                raise StartupProblem(question) from None
            try:
                read = problem.accept(head=True, errors=errors)
            except InputError as inner:  # the head is not UTF-8 either
                problem = inner
            else:
                notice = f"Showing the first {read.size:,} bytes of {where}"
                return read.text, None, source, notice, "utf-8"  # never save a head over the whole file
        if not problem.can_replace:
            raise StartupProblem(str(problem)) from None
        question = (f"{not_utf8_question(problem)} "
                    "Latin-1 reads every byte as one character and saves the file back the same way.")
        # short labels: three buttons fit a 64-column dialog
        choices = [("replace", "Open, bad bytes as U+FFFD"), ("latin-1", "Open as Latin-1"), ("quit", "Quit")]
        choice = ask(question, choices) if ask else "quit"
        head = problem.limit is not None and problem.data is not None and len(problem.data) > problem.limit
        if choice == "latin-1" and not head:
            text = problem.data.decode("latin-1")
            notice = f"{where} was read as Latin-1 (one character per byte)"
            return text, path, source, notice, "latin-1"
        if choice not in ("replace", "latin-1"):
            # said on the shell, after the dialog was declined or where none could be shown
            raise StartupProblem(f"{not_utf8_question(problem)} (tokscope --errors replace FILE opens it anyway)") from None
        read = problem.accept(head=head, errors="replace")
    if read.replaced:
        notice = f"{safe_text(read.where)} was not UTF-8: bad bytes shown as U+FFFD"
    # a text with replacements, or only the head, is never saved over the original
    keep_path = read.path if not (read.replaced or read.head) else None
    return read.text, keep_path, source, notice, "utf-8"


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
    """Refuse ``-e NAME`` before the explorer starts when it names nothing, or a file or folder
    that cannot be loaded (loaded here, it is the app's from the registry's cache)."""
    from ..sources import registry
    from ..sources.model_files import is_tokenizer_path

    try:
        registry.check(name)
        if is_tokenizer_path(name):
            registry.load(name)
    except TokscopeError as exc:
        raise StartupProblem(str(exc)) from None


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
    app = explorer_app(args, encoding, (text, path, source, notice, file_encoding))
    app.run()
    if getattr(app, "stopped_by", None) is not None:
        name, kept = app.stopped_by
        from ..core.text.display import safe_text

        where = f"; your unsaved edits are in {safe_text(kept)} (offered back when you open it again)" if kept else ""
        try:
            print(f"tokscope: stopped by {name}{where}", file=sys.stderr)
        except (OSError, ValueError):
            pass  # the terminal is gone (SIGHUP)
    return app.return_code or 0


def explorer_app(args: argparse.Namespace, encoding: str, got: tuple[str, str | None, str, str | None, str]):
    """The explorer on what :func:`read_input` returned (``got``)."""
    from .app import ExplorerApp

    text, path, source, notice, file_encoding = got
    return ExplorerApp(text, encoding=encoding, path=path, source=source, notice=notice, file_encoding=file_encoding,
                       origin=opened_changed(args, path, source, notice))


def opened_changed(args: argparse.Namespace, path: str | None, source: str, notice: str | None) -> tuple[str, str] | None:
    """``(file, how)`` when the file the user named was opened changed (U+FFFD for its bad bytes,
    or only its head), so it has no file to save back to; None otherwise.

    >>> opened_changed(argparse.Namespace(file="a.txt"), None, "file", "a.txt was not UTF-8: bad bytes shown as U+FFFD")
    ('a.txt', 'opened with replacements')
    >>> opened_changed(argparse.Namespace(file="a.txt"), "a.txt", "file", None) is None
    True
    """
    from .not_utf8 import REPLACED

    named = getattr(args, "file", None)
    if path is not None or source != "file" or not named or named == "-":
        return None
    return named, REPLACED if notice and "U+FFFD" in notice else "opened by its head only"


def _deferred_ask(question: str, choices) -> str:
    _reopen_tty()
    return _ask_on_terminal(question, choices)
