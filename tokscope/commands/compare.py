"""``tokscope compare``: several tokenizers on one text (``tokscope languages`` does the same
passage in many languages).

Decisions (also in the README section):

- No ``-e``: compare gpt2, cl100k_base and o200k_base.
- The same encoding twice (also through an alias, ``o200k`` = ``o200k_base``): compared once,
  with a note on standard error.
- Any number of encodings is fine here (the explorer's screen shows up to four at once).
- An encoding that fails to load (or to encode the text) is named on standard error with its
  reason; the others are still compared and printed, and the exit code is 1 so that scripts
  notice. With ``--json`` the failures are also listed under ``"failed"``.
- Prices are numbers >= 0 per million tokens (``--price-in``, ``--price-out``; a missing one
  is 0); ``--copies N`` (N >= 1) needs a price. Bad values are usage errors (exit 2).
- Each encoding is summarised in turn (:func:`~tokscope.core.insights.compare.summarize`: its
  counts and cuts, not its pieces; the ids only for ``--json``), so a big text never holds three
  tokenizations at once; from :data:`RELEASE_CHARS` characters on, each tokenizer (and its caches)
  is dropped once summarised.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import (
    SPECIAL_HINT,
    UsageError,
    add_encoding_option,
    add_input_options,
    add_special_options,
    encode_args,
    load_encoding,
    note_unknown_specials,
    print_json,
    read_text,
)
from .common import unique_encodings as common_unique_encodings
from ..core.insights.compare import (
    DEFAULT_COMPARE,
    Comparison,
    Cost,
    EncodingStats,
    PriceError,
    TextIndex,
    compare,
    costs,
    format_money,
    parse_copies,
    parse_price,
    summarize,
)
from ..core.text.display import safe_text
from ..core.text.errors import DisallowedSpecialError, TokscopeError

PROG = "tokscope"

#: From this many characters on, each tokenizer is dropped from the process once its summary is
#: made: its caches hold the ids of every line of the text, and nothing later needs them; below
#: it they are small, and a later command in the same process (a test's) would load it again.
RELEASE_CHARS = 1 << 20


# ----- argument checks ------------------------------------------------------------------------------


def price_arg(value: str) -> float:
    """argparse type: a price per million tokens (:func:`tokscope.core.insights.compare.parse_price`)."""
    try:
        return parse_price(value)
    except PriceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def copies_arg(value: str) -> int:
    """argparse type: a whole number of copies >= 1 (:func:`tokscope.core.insights.compare.parse_copies`)."""
    try:
        return parse_copies(value)
    except PriceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def unique_encodings(names: list[str] | None) -> list[str]:
    """The requested names in order, each once (aliases count as their encoding); notes on stderr."""
    return common_unique_encodings(names, DEFAULT_COMPARE, "comparing")


def load_all(names: list[str]) -> tuple[list[Any], list[tuple[str, str]]]:
    """Load each encoding; failures become ``(name, reason)``, said on stderr when there are other
    names (a single name that fails is the command's one error, said once by the caller)."""
    loaded, failed = [], []
    for name in names:
        try:
            loaded.append(load_encoding(name))
        except (TokscopeError, OSError, ValueError) as exc:
            failed.append((name, str(exc)))
            if len(names) > 1:
                print(f"{PROG}: error: cannot load {safe_text(name)!r}: {safe_text(exc)}", file=sys.stderr)
    return loaded, failed


# ----- compare ----------------------------------------------------------------------------------------


def _num(value: float | None, fmt: str = ".2f") -> str:
    return "-" if value is None else format(value, fmt)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def stats_json(s: EncodingStats) -> dict[str, Any]:
    return {
        "chars_per_token": s.chars_per_token, "tokens_per_word": s.tokens_per_word,
        "bytes_per_token": s.bytes_per_token, "partial": s.partial, "partial_share": s.partial_share,
        "single_byte": s.single_byte, "single_byte_share": s.single_byte_share, "special": s.special,
        "boundaries": s.boundaries, "same_as_first": s.same_as_first,
        "extra_vs_first": s.extra_vs_first, "missing_vs_first": s.missing_vs_first,
    }


def cost_json(c: Cost) -> dict[str, Any]:
    return {"name": c.name, "tokens": c.tokens, "input": c.input, "output": c.output,
            "input_total": c.input_total, "output_total": c.output_total}


def table(headers: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    """Plain aligned columns: the first ``left`` columns left-aligned, the rest right-aligned."""
    widths = [max(len(r[k]) for r in [headers, *rows]) for k in range(len(headers))]
    out = []
    for r in [headers, *rows]:
        cells = [c.ljust(w) if k < left else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths))]
        out.append("  ".join(cells).rstrip())
    return out


def render_stats(result: Comparison) -> list[str]:
    headers = ["encoding", "tokens", "ch/tok", "tok/wd", "by/tok", "partial", "1-byte", "+cuts", "-cuts"]
    rows = []
    for k, s in enumerate(result.stats):
        rows.append([
            safe_text(s.name), f"{s.tokens:,}", _num(s.chars_per_token), _num(s.tokens_per_word), _num(s.bytes_per_token),
            _pct(s.partial_share), _pct(s.single_byte_share),
            "-" if k == 0 else f"{s.extra_vs_first:,}", "-" if k == 0 else f"{s.missing_vs_first:,}",
        ])
    return table(headers, rows)


def render_costs(items: tuple[Cost, ...]) -> list[str]:
    first = items[0]
    copies = first.copies
    head = f"cost at ${first.price_in:g}/M input, ${first.price_out:g}/M output"
    headers = ["encoding", "tokens", "input", "output"]
    if copies > 1:
        head += f"; x{copies:,}: for {copies:,} copies"
        headers += [f"input x{copies:,}", f"output x{copies:,}"]
    rows = []
    for c in items:
        row = [safe_text(c.name), f"{c.tokens:,}", format_money(c.input), format_money(c.output)]
        if copies > 1:
            row += [format_money(c.input_total), format_money(c.output_total)]
        rows.append(row)
    return [head, *table(headers, rows)]


def cmd_compare(args: argparse.Namespace) -> int:
    if args.copies is not None and args.price_in is None and args.price_out is None:
        raise UsageError("--copies needs a price: add --price-in and/or --price-out")
    from ..sources.registry import forget

    names = unique_encodings(args.encodings)
    text = read_text(args)
    tokenizers, failed = load_all(names)
    loaded = [name for name in names if name not in {n for n, _ in failed}]
    special = encode_args(args)
    segs, refused = [], []
    while tokenizers:
        tok = tokenizers.pop(0)
        note_unknown_specials(tok, args)
        try:
            segs.append(summarize(tok, text, ids=args.json, **special))
        except DisallowedSpecialError as exc:
            refused.append((tok.name, str(DisallowedSpecialError(exc.token, hint=SPECIAL_HINT))))
        name = loaded.pop(0)
        if len(text) >= RELEASE_CHARS:
            forget(name)
        del tok
    reasons = {reason for _, reason in refused}
    if not segs and len(reasons) == 1:
        raise TokscopeError(reasons.pop())  # every encoding refused the text for the same reason: say it once
    for name, reason in refused:
        print(f"{PROG}: error: {safe_text(name)}: {safe_text(reason)}", file=sys.stderr)
    failed += refused
    if not segs:
        raise TokscopeError("no encoding could be compared" if len(names) > 1 else failed[0][1])
    result = compare(text, segs)
    priced = args.price_in is not None or args.price_out is not None
    items = costs(result.stats, args.price_in or 0.0, args.price_out or 0.0, args.copies or 1) if priced else ()
    index = TextIndex(text) if args.cuts else None
    if args.json:
        out: dict[str, Any] = {
            "text": {"chars": result.chars, "bytes": result.bytes, "words": result.words},
            "encodings": [
                {"name": s.name, "count": s.tokens, "tokens": list(seg.ids), **stats_json(s)}
                for s, seg in zip(result.stats, segs)
            ],
            "agreement": {
                "boundaries": len(result.alignment.union), "agreed": len(result.alignment.agreed),
                "differ": len(result.alignment.union) - len(result.alignment.agreed),
                "agreed_share": result.agreed_share,
            },
            "cost": None,
            "failed": [{"name": n, "error": e} for n, e in failed],
        }
        if items:
            out["cost"] = {"price_in": items[0].price_in, "price_out": items[0].price_out,
                           "copies": items[0].copies, "encodings": [cost_json(c) for c in items]}
        if index is not None:
            out["cuts"] = [
                {"byte": c.byte, "char": c.char, "inside": c.inside,
                 "in": [n for n, m in zip(result.names, c.members) if m]}
                for c in result.alignment.cuts(index, only_differ=True)
            ]
        print_json(out)
        return 1 if failed else 0
    lines = [f"text: {result.chars:,} chars, {result.bytes:,} bytes, {result.words:,} words"]
    lines += render_stats(result)
    al = result.alignment
    share = _pct(result.agreed_share)
    lines.append(
        f"boundaries: {len(al.union):,} in all, {len(al.agreed):,} where all agree ({share}), "
        f"{len(al.union) - len(al.agreed):,} differ"
    )
    if len(segs) > 1:
        lines.append(f"+cuts/-cuts: boundaries {safe_text(segs[0].name)} lacks / has that this encoding lacks")
    lines.append("ch/tok, by/tok: characters, bytes per token; tok/wd: tokens per word")
    if items:
        lines += ["", *render_costs(items)]
    if index is not None:
        lines += ["", "cuts where not all agree (char offset, +bytes into a character):"]
        for c in al.cuts(index, only_differ=True):
            where = f"{c.char}" + (f"+{c.inside}" if c.inside else "")
            lines.append(f"  {where:>10}  " + " ".join(safe_text(n) for n, m in zip(result.names, c.members) if m))
    print("\n".join(lines))
    return 1 if failed else 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare", help="compare several tokenizers on one text: counts, boundaries, cost",
        description="Encode one text with several encodings and compare them. "
                    f"Default encodings: {', '.join(DEFAULT_COMPARE)}.",
    )
    add_encoding_option(p, multiple=True)
    add_input_options(p)
    add_special_options(p)
    p.add_argument("--price-in", type=price_arg, metavar="P", help="input price in dollars per million tokens")
    p.add_argument("--price-out", type=price_arg, metavar="Q", help="output price in dollars per million tokens")
    p.add_argument("--copies", type=copies_arg, metavar="N", help="also price N copies of the text (needs a price)")
    p.add_argument("--cuts", action="store_true", help="list every boundary where the encodings do not all agree")
    p.add_argument("--json", action="store_true", help="print JSON (token ids, stats, agreement, cost)")
    p.set_defaults(func=cmd_compare)
