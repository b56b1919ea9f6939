"""``tokscope import``: a ``.tiktoken`` rank file and a pattern as a saved tokenizer (the
module is ``import_`` because ``import`` is a Python keyword)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.text.display import safe_text
from . import common as cli
from .common import UsageError, print_json
from .train_options import file_label, resolve_pattern, add_pattern_option, check_name, check_outputs, note, prepare_save, save_named


def cmd_import(args: argparse.Namespace) -> int:
    from ..core.formats import saved as serialize
    from ..core.train import trainer
    from ..inputs.text_input import read_file_bytes

    pattern, pattern_name = resolve_pattern(args.pattern)
    if not args.output and not args.save:
        raise UsageError("say where to put it: -o OUT.json, or --save to keep it in your data directory")
    given, where = ((args.name, "--name") if args.name is not None else
                    ((Path(args.output).stem, "the name taken from -o") if args.output else
                     (Path(args.file).stem, "the name taken from FILE")))
    name = check_name(given, for_save=args.save, where=where)
    try:
        specials = trainer.check_special_tokens(args.special or [])
    except trainer.TrainingError as exc:
        raise UsageError(str(exc)) from None
    check_outputs([("-o", args.output)], [args.file], args.force)
    if args.save:
        prepare_save(name, args.force)
    data = read_file_bytes(args.file, args.max_bytes, keep_head=False)
    tok = serialize.import_tiktoken(data, name=name, pattern=pattern, pattern_name=pattern_name,
                                    special_tokens=specials, source=file_label(args.file))
    written = {}
    if args.output:
        serialize.save(args.output, tok, exclusive=not args.force)
        written["output"] = str(args.output)
    if args.save:
        written["saved"] = str(save_named(tok, name, args.force))
    dropped = trainer.uncovered_chars(pattern)
    if args.json:
        print_json({"name": name, "vocab_size": tok.vocab_size, "n_vocab": tok.n_vocab, "merges": len(tok.merges),
                    "pattern": pattern, "pattern_name": pattern_name, "special_tokens": tok.special_tokens,
                    "written": written})
    else:
        print(f"imported {safe_text(args.file)}: {tok.vocab_size:,} tokens ({len(tok.merges):,} merges) as "
              f"{safe_text(name)}")
        for key, label in (("output", "saved to"), ("saved", "saved as")):
            if key in written:
                print(f"{label} {safe_text(written[key])}")
    if dropped:
        note(f"the pattern drops text: on a sample of many scripts it leaves {dropped:,} characters outside every "
              f"chunk, which this tokenizer will not encode")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "import", help="turn a .tiktoken rank file and a pattern into a saved tokenizer",
        description="Import FILE (tiktoken's 'base64-token rank' format, ranks 0..255 the bytes in order) "
                    "with a pre-tokenization pattern, as a tokscope tokenizer file.",
    )
    p.add_argument("file", metavar="FILE", help="the .tiktoken file")
    add_pattern_option(p, default=None)
    p.add_argument("--special", action="append", metavar="TOKEN", help="add a special token (repeat for more)")
    p.add_argument("-o", "--output", metavar="OUT", help="write the tokenizer to OUT")
    p.add_argument("--name", metavar="NAME", help="its name (default: from -o or FILE)")
    p.add_argument("--save", action="store_true", help="save it in your data directory, usable as -e NAME")
    p.add_argument("--force", action="store_true", help="replace an existing -o file or saved tokenizer of the same name")
    p.add_argument("--json", action="store_true", help="print JSON")
    cli.add_max_bytes_option(p, hidden=True)
    p.set_defaults(func=cmd_import)
