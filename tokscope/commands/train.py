"""``tokscope train``, ``tokscope baselines``, ``tokscope import`` and ``tokscope export``.

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
import os
import sys
from pathlib import Path
from typing import Any

from ..core.text.display import quoted, safe_text, token_label
from ..sources.names import DEFAULT_TRAINING_PATTERN, PATTERN_NAMES
from . import common as cli
from .common import InputError, UsageError, print_json, read_input, stdin_is_piped

DEFAULT_PATTERN = DEFAULT_TRAINING_PATTERN
#: ``--verbose`` shows the corpus after each merge for at most this many characters of it.
VERBOSE_CHARS = 2000
#: Merges listed at each end of the plain-text summary (``--json`` lists them all).
SHOW_MERGES = 10


# ----- shared bits -------------------------------------------------------------------------------


def _int(text: str) -> int:
    try:
        if not text.strip().lstrip("+-").isascii():
            raise ValueError
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {safe_text(text)!r}") from None
    return value


def _count(text: str) -> int:
    """argparse type: a whole number >= 0."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {safe_text(text)!r}")
    return value


def _read_inputs(paths: list[str], args: argparse.Namespace) -> list[str]:
    texts = []
    for path in paths:
        if path == "-" and not stdin_is_piped():
            raise UsageError("'-' reads standard input, but nothing is piped in")
        texts.append(read_input(path, limit=args.max_bytes, errors=args.errors, keep_head=False).text)
    if not any(texts):
        names = ", ".join("standard input" if p == "-" else safe_text(p) for p in paths)
        raise InputError(f"the corpus is empty: {names} {'has' if len(paths) == 1 else 'have'} no text", kind="empty",
                         where=names)
    return texts


def file_label(path: str) -> str:
    """A path as text that a tokenizer file can record (bytes that are not UTF-8 become U+FFFD).

    >>> file_label("n\\udcffame.txt")
    'n\ufffdame.txt'
    """
    return os.fsencode(path).decode("utf-8", "replace") if path != "-" else "-"


def _resolve_pattern(value: str) -> tuple[str, str | None]:
    from ..core.train.trainer import TrainingError
    from ..sources.names import pattern_for

    try:
        return pattern_for(value)
    except TrainingError as exc:
        raise UsageError(f"--pattern: {exc}") from None


def _add_pattern_option(parser: argparse.ArgumentParser, default: str | None = DEFAULT_PATTERN) -> None:
    parser.add_argument(
        "--pattern", default=default, required=default is None, metavar="|".join(PATTERN_NAMES) + "|REGEX",
        help="pre-tokenization: none (merges may cross anything), words (runs of non-space and of whitespace), "
             "an OpenAI encoding's pattern, or a regex" + (f" (default: {default})" if default else ""),
    )


def _add_read_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--errors", choices=("strict", "replace"), default="strict",
                        help="how to treat bytes that are not UTF-8: refuse (strict, default) or use U+FFFD")
    cli.add_max_bytes_option(parser, each=True)


def _check_name(name: str, *, for_save: bool, where: str) -> str:
    """The tokenizer's name, checked before any work: a saved one must be a valid saved name; any
    name must be text a file can hold (valid UTF-8, no control characters)."""
    from ..sources.errors import BadNameError
    from ..sources.names import check_saved_name
    from ..sources.saved import check_open_model_name

    try:
        if for_save:
            return check_open_model_name(check_saved_name(name))
        if any("\ud800" <= ch <= "\udfff" for ch in name) or not name.isprintable() or not name.strip():
            raise BadNameError(f"{safe_text(name)!r} is not valid UTF-8 text without control characters")
        return name
    except BadNameError as exc:
        raise UsageError(f"{where}: {exc}" + ("" if where == "--name" else "; give one with --name")) from None


def _check_outputs(targets: list[tuple[str, str | None]], inputs: list[str], force: bool) -> list[Path]:
    """Check every output path now (see the module docstring); returns the files they write."""
    from ..core.formats import files

    seen: dict[Path, str] = {}
    resolved = []
    for option, target in targets:
        if not target:
            continue
        path = files.check_target(target, overwrite=force, inputs=[i for i in inputs if i != "-"])
        if path in seen:
            raise UsageError(f"{seen[path]} and {option} name the same file")
        seen[path] = option
        resolved.append(path)
    return resolved


def _note(message: str) -> None:
    cli.note(message)


class _ProgressBar(cli.ProgressBar):
    """The training progress bar: merges done, and the pair just merged."""

    def __init__(self, stream: Any, label: str = "training") -> None:
        super().__init__(stream, label)

    def __call__(self, p: Any) -> None:
        pair = f"  {quoted(p.left)} + {quoted(p.right)} x{p.count:,}" if p.merges_done else ""
        self.draw(p.merges_done / max(p.merges_total, 1), f"{p.merges_done:,}/{p.merges_total:,} merges{pair}",
                  final=p.merges_done == p.merges_total)


def _progress_for(args: argparse.Namespace, label: str = "training") -> _ProgressBar | None:
    if getattr(args, "verbose", False) or not cli.stderr_is_terminal():
        return None
    return _ProgressBar(sys.stderr, label)


# ----- train ---------------------------------------------------------------------------------------


def _parse_sizes(value: str | None) -> list[int]:
    if value is None:
        return []
    sizes = []
    for part in value.replace(" ", "").split(","):
        if not part:
            continue
        if not (part.isascii() and part.isdigit()) or len(part) > 9:
            shown = safe_text(part) if len(part) <= 20 else f"a number of {len(part):,} digits"
            raise UsageError(f"--sweep takes vocabulary sizes separated by commas, e.g. 300,500,1000; "
                             f"got {shown!r}")
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


def _prepare_save(name: str, force: bool) -> Path:
    from ..core.formats.files import SaveError
    from ..sources import registry, saved
    from ..sources.errors import BadNameError, SourceError

    try:
        return saved.prepare_save(name, registry.saved_dir(), overwrite=force)
    except BadNameError as exc:
        raise UsageError(str(exc)) from None
    except SaveError:
        raise
    except SourceError as exc:  # a tokenizer of that name exists
        raise UsageError(f"{exc} (--force replaces it)") from None


def _save_named(tok: Any, name: str, force: bool) -> Path:
    from ..sources import registry, saved

    path = saved.save_named(tok, name, registry.saved_dir(), overwrite=force)
    registry.forget(name)
    return path


def cmd_train(args: argparse.Namespace) -> int:
    from ..core.formats import files
    from ..core.formats import saved as serialize
    from ..core.train import trainer

    # --- everything that can be refused is refused before training --------------------------------
    pattern, pattern_name = _resolve_pattern(args.pattern)
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
    name = _check_name(given, for_save=args.save, where=where)
    _check_outputs([("-o", args.output), ("--export-tiktoken", args.export_tiktoken)], args.files, args.force)
    if args.save:
        _prepare_save(name, args.force)
    texts = _read_inputs(args.files, args)

    # --- train -----------------------------------------------------------------------------------
    bar = _progress_for(args)
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
        written["saved"] = str(_save_named(saved_tok, name, args.force))
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
        _note(result.stop_message)
    if result.stats.dropped_chars:
        _note(_dropped_message(result.stats.dropped_chars, result.stats.chars))
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


# ----- baselines ------------------------------------------------------------------------------------


def cmd_baselines(args: argparse.Namespace) -> int:
    from ..core.train.baselines import baselines
    from ..core.train.trainer import TrainingError, target_merges

    pattern, pattern_name = _resolve_pattern(args.pattern)
    try:
        target_merges(args.vocab_size, None)
    except TrainingError as exc:
        raise UsageError(str(exc)) from None
    if not 0.0 < args.split < 1.0:
        raise UsageError(f"--split must be between 0 and 1 (exclusive); got {args.split}")
    text = _read_inputs([args.file], args)[0]
    bar = _progress_for(args, "baselines")
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


# ----- import / export ----------------------------------------------------------------------------------


def cmd_import(args: argparse.Namespace) -> int:
    from ..core.formats import saved as serialize
    from ..core.train import trainer
    from ..sources.text_input import read_file_bytes

    pattern, pattern_name = _resolve_pattern(args.pattern)
    if not args.output and not args.save:
        raise UsageError("say where to put it: -o OUT.json, or --save to keep it in your data directory")
    given, where = ((args.name, "--name") if args.name is not None else
                    ((Path(args.output).stem, "the name taken from -o") if args.output else
                     (Path(args.file).stem, "the name taken from FILE")))
    name = _check_name(given, for_save=args.save, where=where)
    try:
        specials = trainer.check_special_tokens(args.special or [])
    except trainer.TrainingError as exc:
        raise UsageError(str(exc)) from None
    _check_outputs([("-o", args.output)], [args.file], args.force)
    if args.save:
        _prepare_save(name, args.force)
    data = read_file_bytes(args.file, args.max_bytes, keep_head=False)
    tok = serialize.import_tiktoken(data, name=name, pattern=pattern, pattern_name=pattern_name,
                                    special_tokens=specials, source=file_label(args.file))
    written = {}
    if args.output:
        serialize.save(args.output, tok, exclusive=not args.force)
        written["output"] = str(args.output)
    if args.save:
        written["saved"] = str(_save_named(tok, name, args.force))
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
        _note(f"the pattern drops text: on a sample of many scripts it leaves {dropped:,} characters outside every "
              f"chunk, which this tokenizer will not encode")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ..core.formats import files
    from ..core.formats.tiktoken_ranks import dump_tiktoken_bpe

    tokenizer = cli.load_encoding(args.encoding)
    if not tokenizer.ranks:
        # a .tiktoken file holds byte-level ranks; a merge list, WordPiece or Unigram has none (it
        # used to write an empty file and say "exported 0 ranks")
        from ..core.text.errors import NotForThisKindError

        raise NotForThisKindError("a .tiktoken export", safe_text(tokenizer.name), tokenizer.kind,
                                  "byte-level BPE from ranks")
    inputs = [p for p in [_encoding_file(args.encoding)] if p]
    _check_outputs([("-o", args.output)], inputs, args.force)
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


# ----- registration ------------------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "train", help="learn a byte-level BPE vocabulary from text files",
        description="Learn a byte-level BPE vocabulary from FILE... ('-' reads standard input). "
                    "Ids 0..255 are the bytes; each merge takes the next id.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="training text files ('-' for standard input)")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--vocab-size", type=_int, metavar="N",
                      help="target vocabulary: 256 bytes + merges (special tokens come on top)")
    size.add_argument("--merges", type=_int, metavar="N", help="target number of merges")
    _add_pattern_option(p)
    p.add_argument("--tie", choices=("first", "lexical"), default="first",
                   help="equal counts: the pair seen first in the corpus (first, default) or the smallest by bytes (lexical)")
    p.add_argument("--min-frequency", type=_int, default=2, metavar="K",
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
    _add_read_options(p)
    p.set_defaults(func=cmd_train)

    p = subparsers.add_parser(
        "baselines", help="character and word tokenizers vs BPE on one text, with out-of-vocabulary rates",
        description="Build character, word and BPE vocabularies on the first part of FILE and measure them "
                    "on the rest; count learned tokens that cross a word boundary with and without a pattern.",
    )
    p.add_argument("file", metavar="FILE", help="a text file ('-' for standard input)")
    p.add_argument("--split", type=float, default=0.5, metavar="F",
                   help="the share of the text the vocabularies are built on (default: 0.5)")
    p.add_argument("--vocab-size", type=_int, default=1000, metavar="N",
                   help="the BPE vocabulary size (default: 1000)")
    _add_pattern_option(p)
    p.add_argument("--top", type=_count, default=10, metavar="N", help="unseen words to list (default: 10)")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_read_options(p)
    p.set_defaults(func=cmd_baselines)

    p = subparsers.add_parser(
        "import", help="turn a .tiktoken rank file and a pattern into a saved tokenizer",
        description="Import FILE (tiktoken's 'base64-token rank' format, ranks 0..255 the bytes in order) "
                    "with a pre-tokenization pattern, as a tokscope tokenizer file.",
    )
    p.add_argument("file", metavar="FILE", help="the .tiktoken file")
    _add_pattern_option(p, default=None)
    p.add_argument("--special", action="append", metavar="TOKEN", help="add a special token (repeat for more)")
    p.add_argument("-o", "--output", metavar="OUT", help="write the tokenizer to OUT")
    p.add_argument("--name", metavar="NAME", help="its name (default: from -o or FILE)")
    p.add_argument("--save", action="store_true", help="save it in your data directory, usable as -e NAME")
    p.add_argument("--force", action="store_true", help="replace an existing -o file or saved tokenizer of the same name")
    p.add_argument("--json", action="store_true", help="print JSON")
    cli.add_max_bytes_option(p, hidden=True)
    p.set_defaults(func=cmd_import)

    p = subparsers.add_parser("export", help="write an encoding's ranks as a .tiktoken file")
    cli.add_encoding_option(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the .tiktoken file to write")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_export)
