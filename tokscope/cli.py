"""The command line: ``tokscope [FILE]`` opens the explorer; subcommands print text or ``--json``.

Each subcommand lives in a module of :mod:`tokscope.commands` with a ``register(subparsers)``;
this module only builds the parser, runs the chosen command and turns every failure into one line
on standard error, never a traceback:

=========  =====================================================================================
exit code  when
=========  =====================================================================================
0          done (also when the reader of the output went away, as with ``| head``)
1          an error: bad input, a file that cannot be read or written, output that cannot be
           written (a full disk, a closed standard output), an encoding that cannot be loaded
2          bad arguments (usage), an unknown command
3          ``tokscope count --max-tokens N``: a total over N (and nothing failed), so a CI step
           can tell "too long" from "broken"
130        interrupted (Ctrl+C)
128 + N    stopped by signal N (SIGTERM 143, SIGHUP 129): files being written are left as they
           were, with no temporary file behind
=========  =====================================================================================

``tokscope diff`` counts differently, for a CI step to gate on: 0 no difference found, 1 the two
tokenizers differ, 2 any error (the diff could not be made).

Whatever a command prints to the terminal passes through a guard that shows control characters
and bidirectional overrides as inert glyphs (:func:`tokscope.core.text.display.char_glyph`); the
commands themselves already print outside strings through
:func:`~tokscope.core.text.display.safe_text`, so the guard is the second line of defence.
"""

from __future__ import annotations

import os

import _signal  # the C module: importing `signal` (and its enums) is itself a window for Ctrl+C


def _interrupted_now(signum: int, frame: object) -> None:
    """Ctrl+C outside a command (loading, parsing, exiting): one line and exit 130, at once."""
    try:
        os.write(2, b"tokscope: interrupted\n")
    except OSError:
        pass
    os._exit(130)


def _exit_on_interrupt() -> None:
    try:
        _signal.signal(_signal.SIGINT, _interrupted_now)
    except (ValueError, OSError):  # not the main thread (tests call main() from others)
        pass


def _ignore_interrupt_at_exit() -> None:
    """At interpreter exit, after the command's work is done and its output flushed, Ctrl+C is
    ignored: Python's finalization puts the default action back in place of a Python handler, so
    a Ctrl+C in those last milliseconds killed the process by the signal (-2) without a word."""
    try:
        _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    except (ValueError, OSError):
        pass


_exit_on_interrupt()  # before the imports below, which take most of the start-up time

import atexit  # noqa: E402

atexit.register(_ignore_interrupt_at_exit)

import argparse  # noqa: E402
import difflib  # noqa: E402
import signal  # noqa: E402
import errno  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import Any, NoReturn  # noqa: E402

from .commands.common import PROG, UsageError, silence_stdout  # noqa: E402
from .core.text.display import safe_text  # noqa: E402
from .core.text.errors import TokscopeError  # noqa: E402
from .inputs.text_input import DEFAULT_MAX_BYTES  # noqa: E402

# One loader per subcommand: a static import of its module (so the layer contracts see it), run
# only when the command runs or for --help.
def _encodings() -> Any: from .commands import encodings; return encodings  # noqa: E704, E702
def _encode() -> Any: from .commands import encode; return encode  # noqa: E704, E702
def _decode() -> Any: from .commands import decode; return decode  # noqa: E704, E702
def _count() -> Any: from .commands import count; return count  # noqa: E704, E702
def _truncate() -> Any: from .commands import truncate; return truncate  # noqa: E704, E702
def _chat() -> Any: from .commands import chat; return chat  # noqa: E704, E702
def _train() -> Any: from .commands import train; return train  # noqa: E704, E702
def _baselines() -> Any: from .commands import baselines; return baselines  # noqa: E704, E702
def _import() -> Any: from .commands import import_; return import_  # noqa: E704, E702
def _export() -> Any: from .commands import export; return export  # noqa: E704, E702
def _explain() -> Any: from .commands import explain; return explain  # noqa: E704, E702
def _tree() -> Any: from .commands import tree; return tree  # noqa: E704, E702
def _vocab() -> Any: from .commands import vocab; return vocab  # noqa: E704, E702
def _compare() -> Any: from .commands import compare; return compare  # noqa: E704, E702
def _languages() -> Any: from .commands import languages; return languages  # noqa: E704, E702
def _stats() -> Any: from .commands import stats; return stats  # noqa: E704, E702
def _diff() -> Any: from .commands import diff; return diff  # noqa: E704, E702
def _completion() -> Any: from .commands import completion; return completion  # noqa: E704, E702


#: Every subcommand, in the order ``--help`` lists them, with the loader of the module of
#: :mod:`tokscope.commands` that adds it (its ``register``): a command's module is imported only
#: when that command runs (or for ``--help``), so ``tokscope --version`` and one command start fast.
COMMANDS: dict[str, Callable[[], Any]] = {
    "encodings": _encodings,
    "encode": _encode,
    "decode": _decode,
    "count": _count,
    "truncate": _truncate,
    "chat": _chat,
    "train": _train,
    "baselines": _baselines,
    "import": _import,
    "export": _export,
    "explain": _explain,
    "tree": _tree,
    "vocab": _vocab,
    "compare": _compare,
    "diff": _diff,
    "languages": _languages,
    "stats": _stats,
    "completion": _completion,
}


# ----- the parser ------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # every command's errors start "tokscope: error:" (a subcommand's prog is "tokscope train")
        helped = f"{self.prog} --help" if self.prog != PROG else "--help"
        self.exit(2, f"{PROG}: error: {safe_text(message)} (see {helped})\n")

    def _print_message(self, message: str, file: Any = None) -> None:  # noqa: PLW3201 - argparse's hook
        # argparse writes --help, --version and usage here and ignores a failed write: a help that
        # cannot be written (a full disk, a closed output) is an error, exit 1
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)
            stream.flush()
        except BrokenPipeError:  # the reader went away (| head): as for any command
            silence_stdout()
        except (OSError, ValueError) as exc:
            if stream is not sys.stdout:
                return  # a message for standard error that cannot be written: the exit code says it
            silence_stdout()
            _say(f"error: cannot write the output: {getattr(exc, 'strerror', None) or exc}")
            raise SystemExit(1) from None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of the one named ``only`` (the others unloaded)."""
    from .version import __version__

    parser = _Parser(
        prog=PROG,
        description="Explore how language models cut text into tokens. Without a subcommand, opens the explorer.",
        epilog="explorer: tokscope [FILE] [-e NAME] [--errors replace] (or pipe text in); "
        "'tokscope COMMAND --help' describes each command",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    for name, load in COMMANDS.items():
        if only is None or name == only:
            load().register(sub)
    return parser


def explorer_parser() -> argparse.ArgumentParser:
    from .commands.common import max_bytes_arg
    from .sources.registry import DEFAULT_ENCODING

    parser = _Parser(prog=PROG, description="Open the explorer on FILE, standard input, or a built-in sample.")
    parser.add_argument("file", nargs="?", metavar="FILE", help="a text file to open (default: a built-in sample)")
    parser.add_argument("-e", "--encoding", default=DEFAULT_ENCODING, metavar="NAME", help="encoding to start with")
    parser.add_argument("--errors", choices=("strict", "replace"), default="strict",
                        help="open a file that is not UTF-8 with U+FFFD replacements (replace)")
    parser.add_argument("--max-bytes", type=max_bytes_arg, default=DEFAULT_MAX_BYTES, metavar="N",
                        help="refuse files larger than N bytes")
    return parser


def unknown_command(argv: Sequence[str], commands: Sequence[str]) -> str | None:
    """The message for a first word that looks like a mistyped command rather than a file to open.

    >>> unknown_command(["encde", "hi"], ["encode", "decode"])
    "unknown command 'encde'; did you mean 'encode'? ('tokscope --help' lists the commands)"
    >>> unknown_command(["notes.txt"], ["encode"]) is None
    True
    """
    if not argv:
        return None
    word = argv[0]
    if word.startswith("-") or os.path.sep in word or "." in word or os.path.exists(word):
        return None
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.6)
    positional = [a for a in argv if not a.startswith("-")]
    if not close and len(positional) < 2:
        return None  # a single word: the explorer says "no such file"
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown command {safe_text(word)!r}{hint} ('{PROG} --help' lists the commands)"


# ----- output ------------------------------------------------------------------------------------

#: characters the output guard replaces: C0 controls but tab and newline, DEL, C1 controls, the
#: bidirectional controls, and lone surrogates (which cannot be written as UTF-8)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: the same for standard error, where a progress bar redraws its line with a carriage return
_UNSAFE_ERR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _glyph(found: re.Match[str]) -> str:
    return safe_text(found.group())


class GuardedStream:
    """A text stream that shows unsafe characters (see :data:`_UNSAFE`) as inert glyphs.

    Everything else (``buffer``, ``fileno``, ``isatty``, ``encoding`` ...) is the wrapped stream's,
    so a command that must write exact bytes (``decode`` into a pipe) writes them to ``buffer``.

    >>> import io
    >>> out = io.StringIO()
    >>> GuardedStream(out).write("a\\x1b[2Jb\\u202e\\n") and out.getvalue()
    'a␛[2Jb⟨RLO⟩\\n'
    """

    def __init__(self, stream: Any, unsafe: re.Pattern[str] = _UNSAFE) -> None:
        self._stream = stream
        self._unsafe = unsafe

    def write(self, text: str) -> int:
        return self._stream.write(self._unsafe.sub(_glyph, text))

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Discard:
    """A text stream that keeps nothing (standard error when it is closed)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class OutputClosed(TokscopeError):
    """Standard output is closed (``>&-``): there is nowhere to print the result."""


class SignalExit(BaseException):
    """Raised by the SIGTERM/SIGHUP handler, so ``finally`` blocks (temporary files) still run."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, frame: Any) -> None:
    raise SignalExit(signum)


def _raise_on_interrupt() -> None:
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):
        pass


def _install_signal_handlers() -> None:
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is None:
            continue
        try:
            signal.signal(number, _on_signal)
        except (ValueError, OSError):  # not the main thread, or not allowed here
            pass


def _say(message: str) -> None:
    """One line on standard error (nothing when standard error is closed too)."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(f"{PROG}: {safe_text(message)}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def _is_output_error(exc: OSError) -> bool:
    return exc.errno in (errno.ENOSPC, errno.EIO, errno.EBADF, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EINVAL)


def _flush_stdout() -> None:
    stream = sys.stdout
    if stream is not None:
        stream.flush()


def _run(handler: Callable[[], int]) -> int:
    try:
        try:
            _raise_on_interrupt()  # while the command runs, Ctrl+C lets its clean-ups run
            code = handler()
        finally:
            _exit_on_interrupt()
            # inside the handlers below: a failed flush is an output error like a failed write
            _flush_stdout()
        return code
    except UsageError as exc:
        _say(f"error: {exc}")
        return 2
    except TokscopeError as exc:
        _say(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except SignalExit as exc:
        _say(f"stopped by {signal.Signals(exc.signum).name}")
        return 128 + exc.signum
    except BrokenPipeError as exc:
        # the reader went away (e.g. `| head`): stop quietly, keeping a verdict already reached
        silence_stdout()
        return getattr(exc, "exit_code", 0)
    except OSError as exc:
        if not _is_output_error(exc):
            _say(f"error: {exc.strerror or exc}")
            return 1
        silence_stdout()
        _say(f"error: cannot write the output: {exc.strerror or exc}")
        return 1
    except UnicodeEncodeError as exc:
        silence_stdout()
        encoding = getattr(sys.stdout, "encoding", None) or "this encoding"
        _say(f"error: cannot write the output in {encoding} ({exc.reason}); set PYTHONIOENCODING=utf-8")
        return 1
    except MemoryError:
        _say("error: out of memory (try a smaller input, or --max-bytes)")
        return 1
    except RecursionError:
        _say("error: the input is nested too deeply to process")
        return 1
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        if os.environ.get("TOKSCOPE_DEBUG"):
            raise
        _say(f"internal error: {type(exc).__name__}: {exc} (please report it; TOKSCOPE_DEBUG=1 shows the traceback)")
        return 1


def _run_command(args: argparse.Namespace) -> int:
    if sys.stdout is None:
        raise OutputClosed("standard output is closed; there is nowhere to write the result")
    saved = sys.stdout, sys.stderr
    sys.stdout = GuardedStream(sys.stdout)
    # with standard error closed (2>&-), notes go nowhere: print(file=None) would put them in the output
    sys.stderr = GuardedStream(sys.stderr, _UNSAFE_ERR) if sys.stderr is not None else _Discard()
    try:
        return args.func(args)
    finally:
        try:
            sys.stdout.flush()
        finally:
            sys.stdout, sys.stderr = saved


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    subcommands = list(COMMANDS)
    if argv and (argv[0] in subcommands or argv[0] in ("-h", "--help", "--version")):
        _install_signal_handlers()
        # the chosen command's module only; --version needs none, --help and completion (which
        # writes every command's options into the script) all of them
        only = (None if argv[0] == "completion" and "--encodings" not in argv else argv[0] if argv[0] in COMMANDS
                else "" if argv[0] == "--version" else None)
        args = build_parser(only).parse_args(argv)
        return _run(lambda: _run_command(args))
    problem = unknown_command(argv, subcommands)
    if problem is not None:
        _say(f"error: {problem}")
        return 2
    args = explorer_parser().parse_args(argv)
    return _run(lambda: _start_explorer(args))


def _start_explorer(args: argparse.Namespace) -> int:
    try:
        from .app.main import run_explorer
    except ImportError:
        raise TokscopeError("the explorer is not built yet; try 'tokscope encodings' or 'tokscope --help'") from None
    return run_explorer(args)


if __name__ == "__main__":
    raise SystemExit(main())
