"""``tokscope export``: an encoding's ranks as a ``.tiktoken`` file."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.text.display import safe_text
from . import common as cli
from .common import print_json
from .train_options import check_outputs


def cmd_export(args: argparse.Namespace) -> int:
    from ..core.formats import files
    from ..core.formats.tiktoken_ranks import dump_tiktoken_bpe

    tokenizer = cli.load_encoding(args.encoding)
    if not tokenizer.ranks:
        # a .tiktoken file holds byte-level ranks; a merge list, WordPiece or Unigram has none
        from ..core.text.errors import NotForThisKindError

        raise NotForThisKindError("a .tiktoken export", safe_text(tokenizer.name), tokenizer.kind,
                                  "byte-level BPE from ranks")
    inputs = [p for p in [_encoding_file(args.encoding)] if p]
    check_outputs([("-o", args.output)], inputs, args.force)
    files.write_atomic(args.output, dump_tiktoken_bpe(tokenizer.ranks), exclusive=not args.force)
    if args.json:
        print_json({"encoding": tokenizer.name, "ranks": len(tokenizer.ranks), "written": str(args.output),
                    "special_tokens": tokenizer.special_tokens})
    else:
        print(f"exported {len(tokenizer.ranks):,} ranks of {safe_text(tokenizer.name)} to {safe_text(args.output)}")
        if tokenizer.special_tokens:
            print("(.tiktoken files hold no special tokens; they were: "
                  + ", ".join(f"{safe_text(t)} = {i}" for t, i in tokenizer.special_tokens.items()) + ")")
    return 0


def _encoding_file(name: str) -> str | None:
    """The file an encoding name loads from, when it is a saved tokenizer (an input of export)."""
    from ..sources import registry, saved

    if registry.canonical_name(name) in registry.builtin_names():
        return None
    path = saved.find(name, registry.saved_dir())
    return None if path is None else str(path)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("export", help="write an encoding's ranks as a .tiktoken file")
    cli.add_encoding_option(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the .tiktoken file to write")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_export)
