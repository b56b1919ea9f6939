"""The core subcommands: ``encodings``, ``encode``, ``decode``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .common import (
    UsageError,
    add_encoding_option,
    add_input_options,
    add_special_options,
    load_encoding,
    piece_json,
    print_json,
    read_text,
    run_encode,
)


def cmd_encodings(args: argparse.Namespace) -> int:
    from ..sources.registry import list_encodings

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


def register(sub: argparse._SubParsersAction) -> None:
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
