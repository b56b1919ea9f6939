"""``tokscope vocab [-e NAME] [--search S | --regex R | --hex HEX | --id N] [--sort id|length]
[--limit K]``: search the vocabulary; unreachable tokens (ordinary encoding never produces them)
are marked.
"""

from __future__ import annotations

import argparse
import sys

from ..core.explain.merge_trees import is_unreachable
from ..core.explain.vocab_search import search_vocab
from ..core.text.display import quoted, safe_text
from . import why_text
from .common import add_encoding_option, ascii_int, load_encoding, non_negative, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "vocab", help="search the vocabulary by substring, regex, hex bytes or id",
        description="Search every token of an encoding. Substring and hex search inside the tokens' bytes; "
        "a regular expression searches their text.",
    )
    add_encoding_option(p)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--search", metavar="TEXT", help="tokens containing TEXT")
    group.add_argument("--regex", metavar="PATTERN", help="tokens whose text a regular expression finds a match in")
    group.add_argument("--hex", metavar="HEX", help="tokens containing these bytes")
    group.add_argument("--id", type=ascii_int, metavar="N", help="the token with this id")
    p.add_argument("--sort", choices=("id", "length"), default="id", help="order: by id, or longest first")
    p.add_argument("--limit", type=non_negative, default=100, metavar="K",
                   help="show at most K results (default 100; 0 shows all)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_vocab)


def cmd_vocab(args: argparse.Namespace) -> int:
    tokenizer = load_encoding(args.encoding)
    result = search_vocab(
        tokenizer, substring=args.search, pattern=args.regex, hex_bytes=args.hex, token_id=args.id,
        sort=args.sort, limit=args.limit or None,
    )
    unreachable = {t.id for t in result.tokens if is_unreachable(tokenizer, t.id)}
    if args.json:
        print_json({
            "encoding": tokenizer.name,
            "query": result.query,
            "kind": result.kind,
            "total": result.total,
            "count": len(result.tokens),
            "tokens": [{"id": t.id, "bytes": t.bytes.hex(), "text": t.text, "length": len(t.bytes),
                        "special": t.special, "token": tokenizer.token_str(t.id), "unreachable": t.id in unreachable}
                       for t in result.tokens],
        })
        return 0
    # another kind spells its tokens otherwise than their bytes (``▁the``, ``##ing``, ``<0xE2>``)
    spelled = not tokenizer.ranks
    labels = why_text.Labels(tokenizer) if spelled else None
    for t in result.tokens:
        mark = " special" if t.special else ""
        if t.id in unreachable:
            mark += " unreachable"
        spelling = ""
        if spelled and not t.special:
            token = tokenizer.token_str(t.id)
            if token != t.text:
                spelling = f'  spelled "{safe_text(token)}"'
        # a byte-fallback token is the byte it stands for: ‹01›, not the character 01 happens to be
        shown = labels.quoted(t.id) if labels is not None and labels.byte(t.id) is not None else quoted(t.bytes)
        print(f"{t.id:>7}  {len(t.bytes):>3}  {shown}  {t.bytes.hex()}{spelling}{mark}")
    if result.truncated:
        print(f"{result.total:,} matches; showing {len(result.tokens)} (use --limit to see more, 0 for all)",
              file=sys.stderr)
    elif not result.tokens:
        print("no matches", file=sys.stderr)
    return 0
