"""What the subcommands share: options, reading the input text, JSON output, special-token handling.

Every subcommand is a thin shell over the same core calls the explorer makes. Errors are one line
on standard error with exit code 1 (2 for usage), never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from contextlib import contextmanager
from typing import Any

from ..core.display import safe_text
from ..core.errors import TokscopeError
from ..sources.text_input import DEFAULT_MAX_BYTES, InputError, decode_argument, parse_max_bytes, read_input

__all__ = ["DEFAULT_MAX_BYTES", "InputError", "PROG", "UsageError", "max_bytes_arg", "read_input"]

PROG = "tokscope"


class UsageError(TokscopeError):
    """Bad arguments: exit code 2."""


def add_encoding_option(parser: argparse.ArgumentParser, *, multiple: bool = False) -> None:
    from ..sources.registry import DEFAULT_ENCODING

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
    add_max_bytes_option(parser)


def max_bytes_arg(value: str) -> int:
    """argparse type for ``--max-bytes`` (:func:`tokscope.sources.text_input.parse_max_bytes`)."""
    try:
        return parse_max_bytes(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_max_bytes_option(parser: argparse.ArgumentParser, *, each: bool = False, hidden: bool = False) -> None:
    parser.add_argument(
        "--max-bytes", type=max_bytes_arg, default=DEFAULT_MAX_BYTES, metavar="N",
        help=argparse.SUPPRESS if hidden else
        f"refuse inputs larger than N bytes{' each' if each else ''} (default: {DEFAULT_MAX_BYTES})",
    )


def stdin_is_piped() -> bool:
    """True when standard input exists and is not a terminal (text may be piped in)."""
    stdin = sys.stdin
    if stdin is None:
        return False
    try:
        return not stdin.isatty()
    except (ValueError, OSError):  # closed
        return False


def read_text(args: argparse.Namespace) -> str:
    """The input text from TEXT, ``-f FILE`` or standard input, in that order; the same limit and
    UTF-8 check for each (:mod:`tokscope.sources.text_input`)."""
    text = getattr(args, "text", None)
    if text is not None and args.file:
        raise UsageError("give either TEXT or -f FILE, not both")
    if text is not None:
        return decode_argument(text, "TEXT", args.errors)
    if args.file:
        return read_input(args.file, limit=args.max_bytes, errors=args.errors, keep_head=False).text
    if not stdin_is_piped():
        raise UsageError("no input: give TEXT, -f FILE, or pipe text into standard input")
    return read_input(None, limit=args.max_bytes, errors=args.errors).text


def load_encoding(name: str):  # -> Tokenizer
    from ..sources.registry import load

    return load(name)


#: characters json.dumps leaves raw that a terminal may act on or that hide text (C1 controls,
#: bidirectional and zero-width format characters, line separators), and lone surrogates, which
#: UTF-8 cannot write: they are written as \\uXXXX escapes, which parse back to the same string
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
                          "\ud800-\udfff]")


def _escape_json(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def json_text(value: Any) -> str:
    """``value`` as one line of JSON: UTF-8 text as it is, except the characters of
    :data:`_JSON_UNSAFE`, which are escaped; never ``NaN`` or ``Infinity`` (not JSON).

    >>> json_text({"name": "clip\\x1b]52\\u202e\\udcff", "n": 1})
    '{"name":"clip\\\\u001b]52\\\\u202e\\\\udcff","n":1}'
    """
    try:
        text = json.dumps(value, ensure_ascii=False, indent=None, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:  # an infinite or NaN number
        raise TokscopeError(f"cannot write the result as JSON: {exc}") from None
    return _JSON_UNSAFE.sub(_escape_json, text)


def print_json(value: Any) -> None:
    sys.stdout.write(json_text(value))
    sys.stdout.write("\n")


def note(message: str) -> None:
    """A one-line note on standard error (the message is made safe to print)."""
    print(f"{PROG}: note: {safe_text(message)}", file=sys.stderr)


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
    from ..core.errors import DisallowedSpecialError

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
        note(f"{safe_text(name)!r} is not a special token of {safe_text(tokenizer.name)}; it is encoded as text")


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
