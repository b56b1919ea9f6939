"""The command line: ``tokscope [FILE]`` opens the explorer; subcommands print text or ``--json``.

Every subcommand is a thin shell over the same core calls the explorer makes. Errors are one line
on standard error with exit code 1 (2 for usage), never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

from .core.errors import TokscopeError

#: Feature modules under ``tokscope.commands`` that add subcommands (each has ``register``).
COMMAND_MODULES: tuple[str, ...] = ("train", "explain", "compare", "stats")

#: Inputs larger than this are refused unless ``--max-bytes`` raises the limit.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

PROG = "tokscope"


class UsageError(TokscopeError):
    """Bad arguments: exit code 2."""


class InputError(TokscopeError):
    """Input that cannot be read as text."""


# ----- shared helpers for subcommands ----------------------------------------------------------


def add_encoding_option(parser: argparse.ArgumentParser, *, multiple: bool = False) -> None:
    from .sources.registry import DEFAULT_ENCODING

    if multiple:
        parser.add_argument(
            "-e", "--encoding", action="append", dest="encodings", metavar="NAME",
            help="an encoding name or a saved tokenizer's name or path (repeat for more)",
        )
    else:
        parser.add_argument(
            "-e", "--encoding", default=DEFAULT_ENCODING, metavar="NAME",
            help=f"encoding name, or a saved tokenizer's name or path (default: {DEFAULT_ENCODING})",
        )


def add_input_options(parser: argparse.ArgumentParser, *, text: bool = True) -> None:
    if text:
        parser.add_argument("text", nargs="?", metavar="TEXT", help="the text (default: read -f FILE or standard input)")
    parser.add_argument("-f", "--file", metavar="FILE", help="read the text from FILE")
    parser.add_argument(
        "--errors", choices=("strict", "replace"), default="strict",
        help="how to treat bytes that are not UTF-8: refuse (strict, default) or use U+FFFD",
    )
    parser.add_argument(
        "--max-bytes", type=int, default=DEFAULT_MAX_BYTES, metavar="N",
        help=f"refuse inputs larger than N bytes (default: {DEFAULT_MAX_BYTES})",
    )


def decode_input(data: bytes, where: str, errors: str = "strict") -> str:
    """Decode UTF-8 input; name the first bad byte's offset when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if errors == "replace":
            return data.decode("utf-8", errors="replace")
        kind = "a binary file" if b"\x00" in data[:8192] else "not valid UTF-8"
        raise InputError(
            f"{where} is {kind}: byte 0x{data[exc.start]:02x} at offset {exc.start} does not decode "
            f"(use --errors replace to read it anyway)"
        ) from None


def read_bytes_limited(path: str, limit: int) -> bytes:
    try:
        size = os.path.getsize(path)
        if size > limit:
            raise InputError(f"{path} is {size:,} bytes, over the {limit:,}-byte limit (raise it with --max-bytes)")
        with open(path, "rb") as handle:
            return handle.read(limit + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None


def read_text(args: argparse.Namespace) -> str:
    """The input text from TEXT, ``-f FILE`` or standard input, in that order."""
    text = getattr(args, "text", None)
    if text is not None and args.file:
        raise UsageError("give either TEXT or -f FILE, not both")
    if text is not None:
        return text
    limit = args.max_bytes
    if args.file:
        if args.file == "-":
            return _read_stdin(limit, args.errors)
        return decode_input(read_bytes_limited(args.file, limit), args.file, args.errors)
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no input: give TEXT, -f FILE, or pipe text into standard input")
    return _read_stdin(limit, args.errors)


def _read_stdin(limit: int, errors: str) -> str:
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"standard input is over the {limit:,}-byte limit (raise it with --max-bytes)")
    return decode_input(data, "standard input", errors)


def load_encoding(name: str):  # -> Tokenizer
    from .sources.registry import load

    return load(name)


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


def piece_json(piece: Any) -> dict[str, Any]:
    return {
        "id": piece.id,
        "bytes": piece.bytes.hex(),
        "text": piece.text,
        "start": piece.start,
        "end": piece.end,
        "byte_start": piece.byte_start,
        "byte_end": piece.byte_end,
        "partial": piece.partial,
        "special": piece.special,
    }


def parse_allowed_special(value: str | None) -> Any:
    if value is None:
        return ()
    if value == "all":
        return "all"
    return frozenset(t for t in value.split(",") if t)


# ----- core subcommands ------------------------------------------------------------------------


def cmd_encodings(args: argparse.Namespace) -> int:
    from .sources.registry import list_encodings

    infos = list_encodings()
    if args.json:
        print_json({"encodings": [
            {"name": i.name, "n_vocab": i.n_vocab, "kind": i.kind, "source": i.source,
             "detail": i.detail, "available": i.available} for i in infos
        ]})
        return 0
    width = max(len(i.name) for i in infos)
    for i in infos:
        state = "available" if i.available else "MISSING"
        size = f"{i.n_vocab:>7,}" if i.n_vocab is not None else "      ?"
        print(f"{i.name:<{width}}  {size}  {state:<9}  {i.source}: {i.detail}")
    return 0


def encode_args(args: argparse.Namespace) -> dict[str, Any]:
    """Special-token arguments for the core from ``--allow-special`` / ``--special-as-text``."""
    if getattr(args, "special_as_text", False):
        return {"allowed_special": (), "disallowed_special": ()}
    return {"allowed_special": parse_allowed_special(getattr(args, "allow_special", None)), "disallowed_special": "all"}


SPECIAL_HINT = (
    "text contains the special token {token!r}; pass --allow-special {token!r} (or all) to encode it "
    "as a special token, or --special-as-text to encode it as ordinary text"
)


@contextmanager
def special_hint():
    """Turn the core's refusal of special-token text into the command line's advice."""
    from .core.errors import DisallowedSpecialError

    try:
        yield
    except DisallowedSpecialError as exc:
        raise DisallowedSpecialError(exc.token, hint=SPECIAL_HINT) from None


def note_unknown_specials(tokenizer: Any, args: argparse.Namespace) -> None:
    """Say which ``--allow-special`` strings are not special tokens of ``tokenizer`` (they are
    encoded as the text they are, as tiktoken does)."""
    allowed = parse_allowed_special(getattr(args, "allow_special", None))
    if allowed == "all" or getattr(args, "special_as_text", False):
        return
    for name in sorted(set(allowed) - tokenizer.special_tokens_set):
        print(f"{PROG}: note: {name!r} is not a special token of {tokenizer.name}; it is encoded as text",
              file=sys.stderr)


def run_encode(tokenizer: Any, text: str, args: argparse.Namespace, **extra: Any) -> list[Any]:
    note_unknown_specials(tokenizer, args)
    with special_hint():
        return tokenizer.pieces(text, **encode_args(args), **extra)


def add_special_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--allow-special", metavar="all|TOKEN,...",
        help="encode these special tokens found in the text as special tokens (default: refuse them)",
    )
    group.add_argument(
        "--special-as-text", action="store_true",
        help="encode special-token look-alikes in the text as ordinary text",
    )


def cmd_encode(args: argparse.Namespace) -> int:
    tokenizer = load_encoding(args.encoding)
    text = read_text(args)
    extra = {"max_rank": args.max_rank} if getattr(args, "max_rank", None) is not None else {}
    pieces = run_encode(tokenizer, text, args, **extra)
    if args.json:
        print_json({"encoding": tokenizer.name, "count": len(pieces), "tokens": [piece_json(p) for p in pieces]})
    else:
        print(" ".join(str(p.id) for p in pieces))
    return 0


def _parse_ids(words: Sequence[str]) -> list[int]:
    ids = []
    for word in words:
        for part in word.replace(",", " ").split():
            try:
                ids.append(int(part))
            except ValueError:
                raise UsageError(f"not a token id: {part!r}") from None
    return ids


def cmd_decode(args: argparse.Namespace) -> int:
    tokenizer = load_encoding(args.encoding)
    if args.ids:
        words = args.ids
    elif sys.stdin is not None and not sys.stdin.isatty():
        words = [sys.stdin.read()]
    else:
        raise UsageError("no ids: give IDs as arguments or on standard input")
    ids = _parse_ids(words)
    data = tokenizer.decode_bytes(ids)
    text = data.decode("utf-8", errors="replace")
    if args.json:
        print_json({"encoding": tokenizer.name, "text": text, "bytes": data.hex(), "count": len(ids)})
    else:
        sys.stdout.write(text)
        if not text.endswith("\n") and sys.stdout.isatty():
            sys.stdout.write("\n")
    return 0


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

    p = sub.add_parser("encodings", help="list the encodings and where their files come from")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_encodings)

    p = sub.add_parser("encode", help="encode text into token ids")
    add_encoding_option(p)
    add_input_options(p)
    add_special_options(p)
    p.add_argument("--json", action="store_true", help="print each token with its bytes and offsets as JSON")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("decode", help="decode token ids into text")
    add_encoding_option(p)
    p.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: read them from standard input)")
    p.add_argument("--json", action="store_true", help="print JSON with the text and its bytes")
    p.set_defaults(func=cmd_decode)

    for name in COMMAND_MODULES:
        importlib.import_module(f".commands.{name}", __package__).register(sub)
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
