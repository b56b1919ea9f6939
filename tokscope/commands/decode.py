"""``tokscope decode [-e NAME] [ID ...] [--json]``: token ids into text. Into a pipe or a file the
exact bytes are written; on a terminal the text, with U+FFFD for bytes that are not UTF-8 and
control characters shown as symbols."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from ..core.text.display import safe_text
from .common import UsageError, add_encoding_option, load_encoding, print_json, stdin_is_piped, write_exact


#: a token id as typed: ASCII digits only (int() would also take '١٢٣' or '1_0')
_ID = re.compile(r"[0-9]+")


def _parse_ids(words: Sequence[str]) -> list[int]:
    ids = []
    for word in words:
        for part in word.replace(",", " ").split():
            if _ID.fullmatch(part) is None:
                raise UsageError(f"not a token id: {safe_text(part)!r} (ids are whole numbers, 0 or more)")
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
    ids = _parse_ids(words)
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
