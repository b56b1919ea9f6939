"""``tokscope encodings [--json]``: the encodings and where their files come from."""

from __future__ import annotations

import argparse

from ..core.text.display import safe_text
from .common import print_json


def cmd_encodings(args: argparse.Namespace) -> int:
    from ..sources.registry import list_encodings

    infos = list_encodings()
    if args.json:
        print_json({"encodings": [
            {"name": i.name, "n_vocab": i.n_vocab, "kind": i.kind, "source": i.source,
             "detail": i.detail, "available": i.available} for i in infos
        ]})
        return 0
    names = [safe_text(i.name) for i in infos]
    width = max(len(n) for n in names)
    for name, i in zip(names, infos):
        state = "available" if i.available else "MISSING"
        size = f"{i.n_vocab:>7,}" if i.n_vocab is not None else "      ?"
        print(f"{name:<{width}}  {size}  {state:<9}  {safe_text(i.source)}: {safe_text(i.detail)}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("encodings", help="list the encodings and where their files come from")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_encodings)
