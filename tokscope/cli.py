"""The command line: ``tokscope [FILE]`` opens the explorer; subcommands print text or ``--json``.

Each subcommand lives in a module of :mod:`tokscope.commands` with a ``register(subparsers)``;
this module only builds the parser, runs the chosen command and turns errors into one line on
standard error with exit code 1 (2 for usage), never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from .commands import basic, chat, compare, explain, stats, train
from .commands.common import PROG, UsageError
from .core.errors import TokscopeError
from .sources.text_input import DEFAULT_MAX_BYTES

#: The modules that add subcommands, in the order ``--help`` lists them.
COMMANDS = (basic, chat, train, explain, compare, stats)


# ----- the parser ------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = _Parser(
        prog=PROG,
        description="Explore how language models cut text into tokens. Without a subcommand, opens the explorer.",
        epilog="explorer: tokscope [FILE] [-e NAME] [--errors replace] (or pipe text in); "
        "'tokscope COMMAND --help' describes each command",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    for module in COMMANDS:
        module.register(sub)
    return parser


def explorer_parser() -> argparse.ArgumentParser:
    from .sources.registry import DEFAULT_ENCODING

    parser = _Parser(prog=PROG, description="Open the explorer on FILE, standard input, or a built-in sample.")
    parser.add_argument("file", nargs="?", metavar="FILE", help="a text file to open (default: a built-in sample)")
    parser.add_argument("-e", "--encoding", default=DEFAULT_ENCODING, metavar="NAME", help="encoding to start with")
    parser.add_argument("--errors", choices=("strict", "replace"), default="strict",
                        help="open a file that is not UTF-8 with U+FFFD replacements (replace)")
    parser.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, metavar="N",
                        help="refuse files larger than N bytes")
    return parser


def _run(handler: Callable[[], int]) -> int:
    try:
        return handler()
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except TokscopeError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): stop quietly
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    subcommands = set(parser._subparsers._group_actions[0].choices) if parser._subparsers else set()  # type: ignore[union-attr]
    if argv and (argv[0] in subcommands or argv[0] in ("-h", "--help", "--version")):
        args = parser.parse_args(argv)
        return _run(lambda: args.func(args))
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
