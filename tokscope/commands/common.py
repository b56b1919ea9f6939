"""What the subcommands share: options, reading the input text, JSON output, special-token handling.

Every subcommand is a thin shell over the same core calls the explorer makes. Errors are one line
on standard error with exit code 1 (2 for usage), never a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from contextlib import contextmanager
from typing import Any

from ..core.text.display import safe_text
from ..core.text.errors import TokscopeError
from ..inputs.text_input import DEFAULT_MAX_BYTES, InputError, decode_argument, parse_max_bytes, read_input

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
    """argparse type for ``--max-bytes`` (:func:`tokscope.inputs.text_input.parse_max_bytes`)."""
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
    UTF-8 check for each (:mod:`tokscope.inputs.text_input`)."""
    text = getattr(args, "text", None)
    if text is not None and args.file:
        raise UsageError("give either TEXT or -f FILE, not both")
    if text is not None:
        text = decode_argument(text, "TEXT", args.errors)
        limit = getattr(args, "max_bytes", None)
        size = len(text.encode("utf-8", "surrogatepass"))
        if limit is not None and size > limit:  # the same limit as for a file
            raise InputError(f"TEXT is {size:,} bytes, over the {limit:,}-byte limit (raise it with --max-bytes)",
                             kind="too-large", where="TEXT", limit=limit, size=size)
        return text
    if args.file:
        return read_input(args.file, limit=args.max_bytes, errors=args.errors, keep_head=False).text
    if not stdin_is_piped():
        raise UsageError("no input: give TEXT, -f FILE, or pipe text into standard input")
    return read_input(None, limit=args.max_bytes, errors=args.errors).text


def token_budget(value: str) -> int:
    """argparse type: a number of tokens, a whole number >= 0 (ASCII digits, ``_`` between them).

    >>> token_budget("1_000"), token_budget("0")
    (1000, 0)
    """
    text = value.strip().replace("_", "")
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"not a whole number of tokens >= 0: {safe_text(value)!r}")
    return int(text)


#: the most digits a number on the command line may have: more is a typo, not a size or an id
MAX_DIGITS = 18


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (ValueError, OSError, AttributeError):
        return False


def silence_stdout() -> None:
    """Point standard output at the null device, so what is still buffered for a reader that went
    away (``| head``) is flushed quietly, and the command can still return its own exit code."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
        finally:
            os.close(devnull)
    except OSError:
        pass


def write_exact(data: bytes) -> None:
    """Write ``data`` to standard output: into a pipe or a file the exact bytes; on a terminal the
    text (U+FFFD for bytes that are not UTF-8), made safe by the output guard, ending in a newline."""
    if is_terminal(sys.stdout):
        text = data.decode("utf-8", errors="replace")
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)


def unique_encodings(names: list[str] | None, default: Any, doing: str) -> list[str]:
    """The requested names (``default`` when there are none) in order, each once: aliases count as
    their encoding (``o200k`` = ``o200k_base``), and a repeat gets a note on stderr (``doing`` says
    what is done once: "comparing", "counting")."""
    from ..sources.registry import canonical_name

    out: list[str] = []
    seen: dict[str, str] = {}
    for name in names or list(default):
        key = canonical_name(name)
        if key in seen:
            note(f"{safe_text(name)!r} is the same encoding as {safe_text(seen[key])!r}; {doing} it once")
            continue
        seen[key] = name
        out.append(name)
    return out


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


class ProgressBar:
    """A one-line progress bar on standard error, redrawn at most ten times a second, and not at
    all before ``delay`` seconds have passed (a short run shows no bar). ``close()`` erases it.

    >>> import io
    >>> stream = io.StringIO()
    >>> bar = ProgressBar(stream, "counting")
    >>> bar.draw(0.5, "1/2 files", final=True)
    >>> stream.getvalue().strip()
    'counting [##########..........] 1/2 files'
    """

    WIDTH = 78

    def __init__(self, stream: Any, label: str, *, delay: float = 0.0) -> None:
        self.stream = stream
        self.label = label
        self.begun = time.monotonic()
        self.delay = delay
        self.last = 0.0
        self.drawn = False

    def draw(self, fraction: float, detail: str, *, final: bool = False) -> None:
        now = time.monotonic()
        if now - self.begun < self.delay or (now - self.last < 0.1 and not final):
            return
        self.last = now
        filled = int(20 * min(max(fraction, 0.0), 1.0))
        line = f"{self.label} [{'#' * filled}{'.' * (20 - filled)}] {detail}"
        self.stream.write("\r" + line[: self.WIDTH].ljust(self.WIDTH))
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * self.WIDTH + "\r")
            self.stream.flush()
            self.drawn = False


def stderr_is_terminal() -> bool:
    """True when standard error is a terminal (where a progress bar may be drawn)."""
    stream = sys.stderr
    if stream is None:
        return False
    try:
        return bool(stream.isatty())
    except (ValueError, OSError):
        return False


def progress_bar(label: str, *, delay: float = 0.0) -> ProgressBar | None:
    """A :class:`ProgressBar` on standard error, or None when standard error is not a terminal."""
    return ProgressBar(sys.stderr, label, delay=delay) if stderr_is_terminal() else None


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
    from ..core.text.errors import DisallowedSpecialError

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


def add_special_options(parser: argparse.ArgumentParser, *, default: str = "refuse them",
                        as_text: str = "encode special-token look-alikes in the text as ordinary text") -> None:
    """``--allow-special`` and ``--special-as-text``; ``default`` says what happens without either."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--allow-special", metavar="all|TOKEN,...",
        help=f"encode these special tokens found in the text as special tokens (default: {default})",
    )
    group.add_argument("--special-as-text", action="store_true", help=as_text)


# ----- argument types ----------------------------------------------------------------------------

MAX_RANK_HELP = (
    "rank cut-off: merges may only build tokens whose rank is below N (0 = single bytes only; "
    "256+K keeps the first K merges of the built-in encodings)"
)


def non_negative(value: str) -> int:
    """argparse type: a whole number >= 0."""
    text = value.strip().replace("_", "")
    if text.startswith("-") and text[1:].isascii() and text[1:].isdigit():
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {safe_text(value)!r}")
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"not a whole number: {safe_text(value)!r}")
    return int(text)


def ascii_int(value: str) -> int:
    """argparse type: a whole number in ASCII digits (``int()`` would also take ``'١٢٣'``); named
    ``int`` so that argparse's message stays "invalid int value"."""
    text = value.strip()
    if not (text.isascii() and text.lstrip("-").isdigit()):
        raise ValueError(value)
    return int(text)


ascii_int.__name__ = "int"
