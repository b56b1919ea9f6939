"""``tokscope train``: learn a byte-level BPE vocabulary from text files.

Thin shells over :mod:`tokscope.core.train.trainer`, :mod:`tokscope.core.train.baselines` and
:mod:`tokscope.core.formats.saved`. Every check that can fail (options, names, inputs, output paths,
the data directory) runs before training, and files are written atomically after it, so a bad run
never leaves half a file. An output (``-o``, ``--export-tiktoken``) is never one of the inputs, and
an existing one is replaced only with ``--force``; a symbolic link is written through, to its
target; ``--save`` creates its file exclusively unless ``--force``, so of two runs saving one new
name at once only one succeeds.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.text.display import quoted, safe_text, token_label
from .common import MAX_DIGITS, UsageError, print_json
from .train_options import whole_number, read_inputs, file_label, resolve_pattern, add_pattern_option, add_read_options, check_name, check_outputs, note, progress_for, prepare_save, save_named

#: ``--verbose`` shows the corpus after each merge for at most this many characters of it.
VERBOSE_CHARS = 2000
#: Merges listed at each end of the plain-text summary (``--json`` lists them all).
SHOW_MERGES = 10

def _parse_sizes(value: str | None) -> list[int]:
    if value is None:
        return []
    sizes = []
    for part in value.replace(" ", "").split(","):
        if not part:
            continue
        if not (part.isascii() and part.isdigit()):
            raise UsageError(f"--sweep takes vocabulary sizes separated by commas, e.g. 300,500,1000; "
                             f"got {safe_text(part)!r}")
        if len(part) > MAX_DIGITS:
            raise UsageError(f"--sweep size {part[:12]}… ({len(part):,} digits) is too large")
        sizes.append(int(part))
    if not sizes:
        raise UsageError("--sweep needs at least one vocabulary size, e.g. 300,500,1000")
    return sizes


def _default_name(args: argparse.Namespace) -> tuple[str, str]:
    """The tokenizer's name and where it came from (for the message when it is not a valid one)."""
    if args.name is not None:
        return args.name, "--name"
    if args.output:
        return (Path(args.output).stem or "trained"), "the name taken from -o"
    first = args.files[0]
    return ("stdin" if first == "-" else (Path(first).stem or "trained")), "the name taken from the first file"


def cmd_train(args: argparse.Namespace) -> int:
    from ..core.formats import files
    from ..core.formats import saved as serialize
    from ..core.train import trainer

    # --- everything that can be refused is refused before training --------------------------------
    pattern, pattern_name = resolve_pattern(args.pattern)
    try:
        n_target = trainer.target_merges(args.vocab_size, args.merges)
        if args.min_frequency < 1:
            raise UsageError(f"--min-frequency must be at least 1; got {args.min_frequency}")
        specials = trainer.check_special_tokens(args.special or [])
    except trainer.TrainingError as exc:
        raise UsageError(str(exc)) from None
    sizes = _parse_sizes(args.sweep)
    for size in sizes:
        if not 256 <= size <= 256 + n_target:
            raise UsageError(f"--sweep size {size} is outside 256..{256 + n_target} (the vocabulary being trained)")
    given, where = _default_name(args)
    name = check_name(given, for_save=args.save, where=where)
    check_outputs([("-o", args.output), ("--export-tiktoken", args.export_tiktoken)], args.files, args.force)
    if args.save:
        prepare_save(name, args.force)
    texts = read_inputs(args.files, args)

    # --- train -----------------------------------------------------------------------------------
    bar = progress_for(args)
    try:
        result = trainer.train(
            texts, vocab_size=args.vocab_size, merges=args.merges, pattern=pattern, pattern_name=pattern_name, tie=args.tie,
            min_frequency=args.min_frequency, special_tokens=specials, progress=bar,
        )
    finally:
        if bar is not None:
            bar.close()
    # --- write (exclusively unless --force: a file that appeared meanwhile is not replaced) --------
    saved_tok = serialize.from_result(result, name, metadata={"files": [file_label(f) for f in args.files]})
    written: dict[str, str] = {}
    if args.output:
        serialize.save(args.output, saved_tok, exclusive=not args.force)
        written["output"] = str(args.output)
    if args.save:
        written["saved"] = str(save_named(saved_tok, name, args.force))
    if args.export_tiktoken:
        from ..core.formats.tiktoken_ranks import dump_tiktoken_bpe

        files.write_atomic(args.export_tiktoken, dump_tiktoken_bpe(result.ranks), exclusive=not args.force)
        written["tiktoken"] = str(args.export_tiktoken)

    points = trainer.sweep(result, [s for s in sizes if s <= result.vocab_size])
    skipped_sizes = [s for s in sizes if s > result.vocab_size]
    if args.json:
        print_json(_train_json(result, name, points, skipped_sizes, written))
    else:
        if args.verbose:
            _print_verbose(result, texts)
        _print_summary(result, name, points, skipped_sizes, written, args)
    if result.stopped_early:
        note(result.stop_message)
    if result.stats.dropped_chars:
        note(_dropped_message(result.stats.dropped_chars, result.stats.chars))
    return 0


def _dropped_message(dropped: int, total: int) -> str:
    return (f"the pattern matches no chunk over {dropped:,} of {total:,} characters; that text is dropped before "
            f"merging, so this tokenizer cannot encode it back (tiktoken drops it too). Add alternatives "
            f"such as |\\s+|. to keep everything")


def _merge_json(m: Any, tokens_after: int) -> dict[str, Any]:
    return {
        "rank": m.id,
        "id": m.id,
        "left": m.left.hex(),
        "right": m.right.hex(),
        "bytes": m.bytes.hex(),
        "text": m.bytes.decode("utf-8", errors="replace"),
        "left_id": m.left_id,
        "right_id": m.right_id,
        "count": m.count,
        "tokens_after": tokens_after,
    }


def _point_json(p: Any) -> dict[str, Any]:
    return {"vocab_size": p.vocab_size, "merges": p.merges, "tokens": p.tokens,
            "chars_per_token": round(p.chars_per_token, 4), "bytes_per_token": round(p.bytes_per_token, 4)}


def _train_json(result: Any, name: str, points: Any, skipped_sizes: list[int], written: dict[str, str]) -> dict[str, Any]:
    from dataclasses import asdict

    return {
        "name": name,
        "pattern": result.pattern,
        "pattern_name": result.pattern_name,
        "tie": result.tie,
        "min_frequency": result.min_frequency,
        "requested_merges": result.requested_merges,
        "vocab_size": result.vocab_size,
        "n_vocab": result.n_vocab,
        "stop_reason": result.stop_reason,
        "stopped_early": result.stopped_early,
        "message": result.stop_message,
        "corpus": asdict(result.stats),
        "tokens_before": result.lengths[0],
        "tokens_after": result.lengths[-1],
        "merges": [_merge_json(m, result.lengths[i + 1]) for i, m in enumerate(result.merges)],
        "special_tokens": dict(result.special_tokens),
        "sweep": [_point_json(p) for p in points],
        "sweep_beyond_trained": skipped_sizes,
        "written": written,
    }


def _merge_line(m: Any) -> str:
    return f"{m.id:>7}  {m.count:>9,}  {quoted(m.left)} + {quoted(m.right)} -> {quoted(m.bytes)}"


def _print_summary(result: Any, name: str, points: Any, skipped_sizes: list[int], written: dict[str, str],
                   args: argparse.Namespace) -> None:
    s = result.stats
    n = len(result.merges)
    specials = f" + {len(result.special_tokens)} special" if result.special_tokens else ""
    print(f"trained {safe_text(name)}: {n:,} merges, vocabulary {result.vocab_size:,}{specials}")
    files = f"{s.texts} file{'s' if s.texts != 1 else ''}"
    pattern = safe_text(result.pattern_name or f"regex {result.pattern!r}")
    print(f"corpus: {files}, {s.chars:,} characters, {s.bytes:,} bytes -> {s.chunks:,} chunk{'s' if s.chunks != 1 else ''} "
          f"({s.unique_chunks:,} distinct) with pattern {pattern}; tie rule {result.tie}")
    after = result.lengths[-1]
    per = s.chunk_chars / after if after else 0.0
    print(f"length: {result.lengths[0]:,} -> {after:,} tokens ({per:.2f} characters per token)")
    print(f"stop: {result.stop_message}")
    if n and not args.verbose:
        print(f"{'id':>7}  {'count':>9}  merge")
        shown = list(result.merges) if n <= 2 * SHOW_MERGES else list(result.merges[:SHOW_MERGES])
        for m in shown:
            print(_merge_line(m))
        if n > 2 * SHOW_MERGES:
            print(f"{'...':>7}  ({n - 2 * SHOW_MERGES:,} more; --json lists every merge)")
            for m in result.merges[-SHOW_MERGES:]:
                print(_merge_line(m))
    if result.special_tokens:
        print("special tokens: " + ", ".join(f"{safe_text(t)} = {i}" for t, i in result.special_tokens.items()))
    if points:
        print(f"sweep:\n{'vocab':>7}  {'tokens':>10}  chars/token")
        for p in points:
            print(f"{p.vocab_size:>7,}  {p.tokens:>10,}  {p.chars_per_token:>11.3f}")
    if skipped_sizes:
        print("sweep: not trained that far: " + ", ".join(str(x) for x in skipped_sizes))
    for key, label in (("output", "saved to"), ("saved", "saved as"), ("tiktoken", "exported ranks to")):
        if key in written:
            extra = f" (use it with -e {safe_text(name)})" if key == "saved" else ""
            print(f"{label} {safe_text(written[key])}{extra}")


def _print_verbose(result: Any, texts: list[str]) -> None:
    from ..core.train.trainer import replay

    shown = []
    left = VERBOSE_CHARS
    for t in texts:
        if left <= 0:
            break
        shown.append(t[:left])
        left -= len(t)
    cut = sum(len(t) for t in texts) > VERBOSE_CHARS
    note = f" (first {VERBOSE_CHARS:,} characters)" if cut else ""
    steps = replay(result, shown)
    for i, chunks in enumerate(steps):
        if i:
            m = result.merges[i - 1]
            print(f"merge {i}: {quoted(m.left)} + {quoted(m.right)} -> {quoted(m.bytes)} (id {m.id}, count {m.count:,})")
        tokens = [t for chunk in chunks for t in chunk]
        label = "corpus" if i == 0 else "  now"
        print(f"{label}: {' '.join(token_label(t) for t in tokens)}  ({len(tokens):,} tokens{note})")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "train", help="learn a byte-level BPE vocabulary from text files",
        description="Learn a byte-level BPE vocabulary from FILE... ('-' reads standard input). "
                    "Ids 0..255 are the bytes; each merge takes the next id.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="training text files ('-' for standard input)")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--vocab-size", type=whole_number, metavar="N",
                      help="target vocabulary: 256 bytes + merges (special tokens come on top)")
    size.add_argument("--merges", type=whole_number, metavar="N", help="target number of merges")
    add_pattern_option(p)
    p.add_argument("--tie", choices=("first", "lexical"), default="first",
                   help="equal counts: the pair seen first in the corpus (first, default) or the smallest by bytes (lexical)")
    p.add_argument("--min-frequency", type=whole_number, default=2, metavar="K",
                   help="stop when the best pair occurs fewer than K times (default: 2)")
    p.add_argument("--special", action="append", metavar="TOKEN",
                   help="add a special token after the merges (repeat for more); the texts are cut at it")
    p.add_argument("-o", "--output", metavar="OUT", help="save the tokenizer to OUT (tokscope's JSON format)")
    p.add_argument("--name", metavar="NAME", help="the tokenizer's name (default: from -o or the first file)")
    p.add_argument("--save", action="store_true", help="save it in your data directory, usable as -e NAME")
    p.add_argument("--force", action="store_true",
                   help="replace an existing -o/--export-tiktoken file or saved tokenizer of the same name")
    p.add_argument("--export-tiktoken", metavar="PATH", help="also write the ranks as a .tiktoken file")
    p.add_argument("--sweep", metavar="SIZES", help="print the corpus length at these vocabulary sizes, e.g. 300,500,1000")
    p.add_argument("--json", action="store_true", help="print JSON: every merge (left/right hex, count), the sweep, ...")
    p.add_argument("--verbose", action="store_true", help="print each merge and the corpus after it (tiny corpora)")
    add_read_options(p)
    p.set_defaults(func=cmd_train)
