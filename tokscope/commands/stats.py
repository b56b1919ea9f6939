"""``tokscope stats``: the insight figures of a text under one encoding, as text or ``--json``.

The CLI twin of the explorer's insights screen: both call :func:`tokscope.core.insights.stats.text_stats`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..core.insights import stats as core_stats
from ..core.text.display import safe_text, token_label

#: Lengths above this are drawn in one last bin of the plain-text histograms.
MAX_BIN = 16
BAR_WIDTH = 30


def _width_arg(value: str) -> int:
    """argparse type of ``--width``: a whole number (checked to be positive by the command), of a
    size a model width can have.

    >>> _width_arg("4096"), _width_arg("0")
    (4096, 0)
    """
    text = value.strip().replace("_", "")
    digits = text.removeprefix("-")
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 7:
        if digits.isascii() and digits.isdigit():  # too long: said without spelling out its digits
            raise argparse.ArgumentTypeError(f"--width must be a positive number of at most 7 digits, not "
                                             f"{digits[:12]}… ({len(digits):,} digits)")
        shown = value if len(value) <= 20 else value[:20] + f"... ({len(value):,} characters)"
        raise argparse.ArgumentTypeError(f"--width must be a positive number of at most 7 digits, not {shown!r}")
    return int(text)


def register(subparsers: Any) -> None:
    from .common import add_encoding_option, add_input_options, add_special_options

    p = subparsers.add_parser(
        "stats",
        help="token lengths, Zipf slope, top tokens, vocabulary coverage, digit groups of a text",
        description=(
            "Print the figures that explain how an encoding cuts a text: histograms of token lengths "
            "(bytes and characters), the slope of the rank-frequency line on log-log axes (Zipf), the "
            "most frequent tokens, how much of the vocabulary the text uses, how numbers are cut into "
            "digit groups, and the embedding table size for a model width."
        ),
    )
    add_encoding_option(p)
    add_input_options(p)
    add_special_options(p)
    p.add_argument("--width", type=_width_arg, default=core_stats.DEFAULT_WIDTH, metavar="D",
                   help=f"model width for the embedding table size (default: {core_stats.DEFAULT_WIDTH})")
    p.add_argument("--top", type=int, default=10, metavar="N", help="how many frequent tokens to list (default: 10)")
    p.add_argument("--normalize", action="store_true",
                   help="also count tokens after NFC, NFD, NFKC and NFKD normalisation")
    p.add_argument("--ascii", action="store_true",
                   help="draw bars with '#' instead of block characters (also when NO_COLOR is set)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_stats)


def cmd_stats(args: argparse.Namespace) -> int:
    from .common import (MAX_DIGITS, UsageError, encode_args, load_encoding, note_unknown_specials, print_json,
                         read_text, special_hint)

    def shown(n: int) -> str:  # argparse's int() took at most 4300 digits; a long number is cut
        text = str(n)
        return text if len(text) <= MAX_DIGITS else f"{text[:12]}… ({len(text.lstrip('-')):,} digits)"

    if not 1 <= args.width < 10**MAX_DIGITS:
        raise UsageError(f"--width must be a positive number below 10^{MAX_DIGITS}, not {shown(args.width)}")
    if not 0 <= args.top < 10**MAX_DIGITS:
        raise UsageError(f"--top must be zero or more (below 10^{MAX_DIGITS}), not {shown(args.top)}")
    tokenizer = load_encoding(args.encoding)
    text = read_text(args)
    note_unknown_specials(tokenizer, args)
    with special_hint():
        ids = tokenizer.encode(text, **encode_args(args))
    result = core_stats.text_stats(
        tokenizer, text, ids=ids, top=args.top, width=args.width, normalization=args.normalize
    )
    if args.json:
        print_json(stats_json(result))
    else:
        ascii_only = args.ascii or bool(os.environ.get("NO_COLOR")) or not _can_draw_blocks()
        sys.stdout.write("\n".join(format_stats(result, ascii_only=ascii_only)) + "\n")
    return 0


def _can_draw_blocks() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        "█▏⠁".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


# ----- JSON ------------------------------------------------------------------------------------


def _histogram_json(hist: core_stats.Histogram) -> dict[str, Any]:
    return {"unit": hist.unit, "bins": [list(b) for b in hist.bins], "total": hist.total, "mean": hist.mean}


def _digits_json(groups: core_stats.DigitGroups) -> dict[str, Any]:
    return {
        "summary": groups.summary,
        "group": groups.group,
        "total": groups.total,
        "kinds": dict(groups.kinds),
        "numbers": [
            {"digits": n.digits, "byte_start": n.start, "byte_end": n.end, "groups": list(n.groups), "kind": n.kind}
            for n in groups.numbers
        ],
    }


def stats_json(s: core_stats.TextStats) -> dict[str, Any]:
    """The JSON object ``tokscope stats --json`` prints."""
    return {
        "encoding": s.encoding,
        "n_vocab": s.n_vocab,
        "tokens": s.tokens,
        "chars": s.chars,
        "bytes": s.bytes,
        "chars_per_token": s.chars_per_token,
        "bytes_per_token": s.bytes_per_token,
        "lengths": {"bytes": _histogram_json(s.bytes_histogram), "chars": _histogram_json(s.chars_histogram)},
        "zipf": None if s.zipf is None else {
            "slope": s.zipf.slope, "intercept": s.zipf.intercept, "r2": s.zipf.r2, "points": s.zipf.n_points,
        },
        "rank_frequency": list(s.frequencies),
        "top": [
            {"id": t.id, "bytes": t.bytes.hex(), "text": t.text, "count": t.count, "share": t.share,
             "special": t.special}
            for t in s.top
        ],
        "coverage": {"distinct": s.coverage.distinct, "n_vocab": s.coverage.n_vocab, "fraction": s.coverage.fraction},
        "digits": _digits_json(s.digits),
        "digit_probe": _digits_json(s.probe),
        "embedding": {"n_vocab": s.embedding.n_vocab, "width": s.embedding.width, "params": s.embedding.params,
                      "millions": s.embedding.millions},
        "normalization": None if s.normalization is None else [
            {"form": r.form, "chars": r.chars, "bytes": r.bytes, "tokens": r.tokens, "changed": r.changed}
            for r in s.normalization
        ],
    }


# ----- plain text ------------------------------------------------------------------------------


def _histogram_lines(hist: core_stats.Histogram, ascii_only: bool) -> list[str]:
    rows = core_stats.capped_bins(hist, MAX_BIN)
    top = max((c for _, c in rows), default=0)
    label_w = max((len(label) for label, _ in rows), default=1)
    count_w = max((len(f"{c:,}") for _, c in rows), default=1)
    out = [f"token lengths in {'characters' if hist.unit == 'chars' else 'bytes'} (mean {hist.mean:.2f})"]
    for label, count in rows:
        share = count / hist.total if hist.total else 0.0
        bar = core_stats.hbar(count, top, BAR_WIDTH, ascii_only=ascii_only)
        out.append(f"  {label:>{label_w}}  {bar:<{BAR_WIDTH}}  {count:>{count_w},}  {share:6.1%}")
    return out


def _digit_lines(title: str, groups: core_stats.DigitGroups, shown: int) -> list[str]:
    """The summary and one example number per distinct cut (group sizes), first seen first."""
    if not groups.total:
        return [f"{title}: no numbers"]
    out = [f"{title}: {groups.summary} ({groups.total:,} number{'s' if groups.total != 1 else ''})"]
    examples: dict[tuple[int, ...], core_stats.NumberCut] = {}
    for n in groups.numbers:
        if len(examples) >= shown:
            break
        examples.setdefault(n.sizes, n)
    width = max(len(n.digits) for n in examples.values())
    for n in examples.values():
        out.append(f"  {n.digits:>{width}}  {n.pattern()}")
    return out


def format_stats(s: core_stats.TextStats, *, ascii_only: bool = False) -> list[str]:
    """The lines ``tokscope stats`` prints."""
    out = [
        f"encoding: {safe_text(s.encoding)} ({s.n_vocab:,} tokens in the vocabulary)",
        f"text: {s.chars:,} characters, {s.bytes:,} bytes -> {s.tokens:,} tokens "
        f"({s.chars_per_token:.2f} characters, {s.bytes_per_token:.2f} bytes per token)",
        "",
    ]
    out += _histogram_lines(s.bytes_histogram, ascii_only)
    out.append("")
    out += _histogram_lines(s.chars_histogram, ascii_only)
    out.append("")
    if s.zipf is None:
        out.append("Zipf: too few distinct tokens to fit a line")
    else:
        out.append(
            f"Zipf: slope {s.zipf.slope:.3f} (log count against log rank over {s.zipf.n_points:,} ranks, "
            f"R\u00b2 {s.zipf.r2:.3f}); Zipf's law predicts about -1"
        )
    out.append("")
    out.append("most frequent tokens:")
    if not s.top:
        out.append("  (none)")
    labels = [token_label(t.bytes) for t in s.top]
    label_w = max((len(x) for x in labels), default=1)
    id_w = max((len(str(t.id)) for t in s.top), default=1)
    for rank, (t, label) in enumerate(zip(s.top, labels), 1):
        special = "  (special)" if t.special else ""
        out.append(f"  {rank:>3}. {t.id:>{id_w}}  {label:<{label_w}}  {t.count:>8,}  {t.share:6.2%}{special}")
    out.append("")
    out.append(
        f"vocabulary coverage: {s.coverage.distinct:,} of {s.coverage.n_vocab:,} tokens used "
        f"({s.coverage.fraction:.3%})"
    )
    out.append("")
    out += _digit_lines("digit groups in the text", s.digits, 8)
    out += _digit_lines("digit groups of sample numbers", s.probe, len(core_stats.PROBE_NUMBERS))
    out.append("")
    e = s.embedding
    out.append(
        f"embedding table: {e.n_vocab:,} x {e.width:,} = {e.params:,} parameters ({e.millions:,.1f} M; "
        f"{e.megabytes(2):,.1f} MB at 16 bits)"
    )
    if s.normalization is not None:
        out.append("")
        out.append("normalisation: tokens after each form")
        out.append(f"  {'form':<5}  {'chars':>9}  {'bytes':>9}  {'tokens':>9}  changed")
        for r in s.normalization:
            out.append(f"  {r.form:<5}  {r.chars:>9,}  {r.bytes:>9,}  {r.tokens:>9,}  {'yes' if r.changed else 'no'}")
    return out
