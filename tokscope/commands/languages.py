"""``tokscope languages [-e NAME ...] [--ascii] [--no-chart] [--json]``: token counts of the same
passage in many languages, and the premium over English (over
:mod:`tokscope.core.insights.languages`)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_encoding_option, print_json
from ..core.insights.compare import DEFAULT_COMPARE, bar
from ..core.text.display import safe_text
from ..core.text.errors import TokscopeError
from .compare import load_all, table, unique_encodings


def render_languages(tbl: Any, *, ascii: bool = False, chart: bool = True, width: int = 80) -> list[str]:
    headers = ["language"]
    for name in tbl.encodings:
        headers += [safe_text(name), "x en"]
    rows = []
    for row in tbl.rows:
        cells = [f"{row.name} ({row.code})"]
        for count, prem in zip(row.counts, row.premiums):
            cells += [f"{count:,}", "-" if prem is None else f"{prem:.2f}"]
        rows.append(cells)
    lines = table(headers, rows)
    lines.append('"x en": tokens relative to the same passage in English (the premium)')
    if not chart:
        return lines
    label = max(len(r.name) for r in tbl.rows) if tbl.rows else 8
    tag = max(len(safe_text(n)) for n in tbl.encodings)
    room = max(10, width - label - tag - 20)
    top = tbl.max_count()
    lines += ["", f"tokens per language (full bar = {top:,} tokens)"]
    for row in tbl.rows:
        for k, (name, count, prem) in enumerate(zip(tbl.encodings, row.counts, row.premiums)):
            head = row.name if k == 0 else ""
            value = f"{count:,}" + ("" if prem is None else f" ({prem:.2f}x)")
            lines.append(f"{head:<{label}}  {safe_text(name):<{tag}}  {bar(count, top, room, ascii=ascii)} {value}".rstrip())
    return lines


def cmd_languages(args: argparse.Namespace) -> int:
    from ..core.insights.languages import language_table
    from ..sample_texts import language_text, languages

    names = unique_encodings(args.encodings)
    tokenizers, failed = load_all(names)
    if not tokenizers:
        raise TokscopeError("no encoding could be loaded" if len(names) > 1 else failed[0][1])
    index = languages()
    texts = {lang["code"]: language_text(lang["code"]) for lang in index}
    tbl = language_table(texts, tokenizers, names={lang["code"]: lang["name"] for lang in index})
    if args.json:
        print_json({
            "reference": tbl.reference,
            "encodings": list(tbl.encodings),
            "languages": [
                {"code": r.code, "name": r.name, "chars": r.chars, "bytes": r.bytes, "words": r.words,
                 "counts": dict(zip(tbl.encodings, r.counts)), "premiums": dict(zip(tbl.encodings, r.premiums))}
                for r in tbl.rows
            ],
            "failed": [{"name": n, "error": e} for n, e in failed],
        })
    else:
        print("\n".join(render_languages(tbl, ascii=args.ascii, chart=not args.no_chart)))
    return 1 if failed else 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "languages", help="token counts of the same passage in many languages, and the premium over English",
        description=f"Default encodings: {', '.join(DEFAULT_COMPARE)}.",
    )
    add_encoding_option(p, multiple=True)
    p.add_argument("--ascii", action="store_true", help="draw the bars with '#' instead of block characters")
    p.add_argument("--no-chart", action="store_true", help="print the table only")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_languages)
