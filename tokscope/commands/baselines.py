"""``tokscope baselines``: character and word tokenizers beside BPE on one text, with
out-of-vocabulary rates (over :mod:`tokscope.core.train.baselines`)."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.text.display import quoted, safe_text, token_label
from .common import UsageError, print_json
from .train_options import whole_number, count_arg, read_inputs, resolve_pattern, add_pattern_option, add_read_options, progress_for


def cmd_baselines(args: argparse.Namespace) -> int:
    from ..core.train.baselines import baselines
    from ..core.train.trainer import TrainingError, target_merges

    pattern, pattern_name = resolve_pattern(args.pattern)
    try:
        target_merges(args.vocab_size, None)
    except TrainingError as exc:
        raise UsageError(str(exc)) from None
    if not 0.0 < args.split < 1.0:
        raise UsageError(f"--split must be between 0 and 1 (exclusive); got {args.split}")
    text = read_inputs([args.file], args)[0]
    bar = progress_for(args, "baselines")
    try:
        report = baselines(
            text, split=args.split, vocab_size=args.vocab_size, pattern=pattern,
            pattern_name=pattern_name or "custom", top=args.top,
            progress=None if bar is None else (lambda stage, p: bar(p)),
        )
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print_json(_baselines_json(report, args.file))
    else:
        _print_baselines(report, args.file)
    return 0


def _figures_json(f: Any) -> dict[str, Any]:
    return {
        "vocab_size": f.vocab_size, "tokens": f.tokens, "test_tokens": f.test_tokens,
        "test_oov": f.test_oov, "oov_rate": round(f.oov_rate, 6), "test_types": f.test_types,
        "test_unseen_types": f.test_unseen_types, "unseen_type_rate": round(f.unseen_type_rate, 6),
    }


def _baselines_json(r: Any, source: str) -> dict[str, Any]:
    c = r.crossing
    return {
        "file": source,
        "chars": r.chars,
        "split": r.split,
        "split_at": r.split_at,
        "character": _figures_json(r.char),
        "word": _figures_json(r.word),
        "bpe": _figures_json(r.bpe),
        "unseen_words": [
            {"word": u.word, "count": u.count, "bpe_pieces": [p.hex() for p in u.pieces],
             "bpe_text": [p.decode("utf-8", errors="replace") for p in u.pieces]}
            for u in r.unseen_words
        ],
        "crossing": {
            "pattern": c.pattern_name,
            "without_pattern": {"merges": c.merges_without, "crossing": c.crossing_without},
            "with_pattern": {"merges": c.merges_with, "crossing": c.crossing_with},
            "examples_without": [e.hex() for e in c.examples_without],
        },
    }


def _print_baselines(r: Any, source: str) -> None:
    held = r.chars - r.split_at
    print(f"{safe_text(source)}: {r.chars:,} characters; vocabularies built on the first {r.split_at:,} "
          f"({r.split:.0%} split), out-of-vocabulary measured on the other {held:,}")
    print(f"{'tokenizer':<10} {'vocab':>7} {'tokens':>10} {'held-out':>10} {'OOV (held-out)':>22}")
    for label, f in (("character", r.char), ("word", r.word), ("BPE", r.bpe)):
        oov = "none: bytes" if label == "BPE" else f"{f.oov_rate:6.2%} ({f.test_oov:,})"
        print(f"{label:<10} {f.vocab_size:>7,} {f.tokens:>10,} {f.test_tokens:>10,} {oov:>22}")
    if r.word.test_types:
        print(f"unseen word types: {r.word.test_unseen_types:,} of {r.word.test_types:,} "
              f"({r.word.unseen_type_rate:.1%}); BPE spells them with smaller pieces")
    if r.unseen_words:
        print("most common unseen words (count, BPE pieces):")
        for u in r.unseen_words:
            print(f"  {quoted(u.word.encode()):<24} {u.count:>5,}  {' '.join(token_label(p) for p in u.pieces)}")
    c = r.crossing
    print(f"learned tokens crossing a word boundary: {c.crossing_without:,} of {c.merges_without:,} with no "
          f"pre-tokenization; {c.crossing_with:,} of {c.merges_with:,} with pattern {safe_text(c.pattern_name)}")
    if c.examples_without:
        print("  e.g. " + ", ".join(quoted(e) for e in c.examples_without[:6]))


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "baselines", help="character and word tokenizers vs BPE on one text, with out-of-vocabulary rates",
        description="Build character, word and BPE vocabularies on the first part of FILE and measure them "
                    "on the rest; count learned tokens that cross a word boundary with and without a pattern.",
    )
    p.add_argument("file", metavar="FILE", help="a text file ('-' for standard input)")
    p.add_argument("--split", type=float, default=0.5, metavar="F",
                   help="the share of the text the vocabularies are built on (default: 0.5)")
    p.add_argument("--vocab-size", type=whole_number, default=1000, metavar="N",
                   help="the BPE vocabulary size (default: 1000)")
    add_pattern_option(p)
    p.add_argument("--top", type=count_arg, default=10, metavar="N", help="unseen words to list (default: 10)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_read_options(p)
    p.set_defaults(func=cmd_baselines)
