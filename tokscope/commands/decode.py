"""``tokscope decode [-e NAME] [ID ...] [--json]``: token ids into text. Into a pipe or a file the
exact bytes are written; on a terminal the text, with U+FFFD for bytes that are not UTF-8 and
control characters shown as symbols."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from ..core.text.display import safe_text
from ..core.text.errors import TokscopeError
from .common import MAX_DIGITS, UsageError, add_encoding_option, load_encoding, print_json, stdin_is_piped, write_exact


#: a token id as typed: ASCII digits only (int() would also take '١٢٣' or '1_0')
_ID = re.compile(r"[0-9]+")


def _parse_ids(words: Sequence[str], n_vocab: int) -> list[int]:
    """The ids in ``words`` (separated by spaces or commas); an id too long to be in any vocabulary
    is an unknown id, said without spelling out its digits.

    >>> _parse_ids(["1,2", "3"], 10)
    [1, 2, 3]
    >>> _parse_ids(["9" * 5000], 10)
    Traceback (most recent call last):
    tokscope.core.text.errors.TokscopeError: unknown token id 999999999999… (5,000 digits; this vocabulary has ids below 10)
    """
    ids = []
    for word in words:
        for part in word.replace(",", " ").split():
            if _ID.fullmatch(part) is None:
                raise UsageError(f"not a token id: {safe_text(part)!r} (ids are whole numbers, 0 or more)")
            if len(part) > MAX_DIGITS:
                raise TokscopeError(f"unknown token id {part[:12]}… ({len(part):,} digits; "
                                    f"this vocabulary has ids below {n_vocab})")
            ids.append(int(part))
    return ids


def cmd_decode(args: argparse.Namespace) -> int:
    from ..inputs.text_input import read_input

    tokenizer = load_encoding(args.encoding)
    if args.ids:
        words = args.ids
    elif stdin_is_piped():
        words = [read_input(None, limit=args.max_bytes).text]
    else:
        raise UsageError("no ids: give IDs as arguments or on standard input")
    ids = _parse_ids(words, tokenizer.n_vocab)
    data = tokenizer.decode_bytes(ids)
    if args.json:
        print_json({"encoding": tokenizer.name, "text": data.decode("utf-8", errors="replace"), "bytes": data.hex(),
                    "count": len(ids)})
        return 0
    # on a terminal: the text with U+FFFD for bytes that are not UTF-8, controls shown inert; into a
    # pipe or a file: the exact bytes the tokens stand for
    write_exact(data)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from .common import add_max_bytes_option

    p = sub.add_parser(
        "decode", help="decode token ids into text",
        description="Decode token ids. Into a pipe or a file the exact bytes are written; on a terminal the "
                    "text, with U+FFFD for bytes that are not UTF-8 and control characters shown as symbols.",
    )
    add_encoding_option(p)
    p.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: read them from standard input)")
    p.add_argument("--json", action="store_true", help="print JSON with the text and its bytes")
    add_max_bytes_option(p, hidden=True)
    p.set_defaults(func=cmd_decode)
