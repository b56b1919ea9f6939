"""``tokscope diff A B [TEXT | -f FILE]``: are two tokenizers the same, and where do they first disagree?

A thin shell over :func:`tokscope.core.insights.diff.diff_tokenizers` (the comparison screen's
``d`` shows the same verdict): the verdict line first, then the vocabularies, the added tokens,
the stages side by side and the shortest text found that the two split differently, both splits
shown with visible whitespace; ``--json`` prints :func:`~tokscope.core.insights.diff.diff_json`
(schema in that module's docstring).

Decisions:

- Exit codes for a CI step: 0 when no difference was found, 1 when one was, 2 when the diff could
  not be made (an unknown name, a file that cannot be read, bad arguments). Any failure is a
  one-line error with code 2, never 1, so "differ" cannot be mistaken for "broken".
- Without TEXT or ``-f FILE`` only the built-in generator is searched; standard input is not
  read (a CI step's standard input may be a pipe that never ends).
- Special tokens in the text are encoded as ordinary text (as ``encode_ordinary``), and the
  report says so.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..core.insights.diff import DEFAULT_SECONDS, Difference, SplitPiece, TokenizerDiff, diff_json, diff_tokenizers
from ..core.text.display import safe_text, token_label
from ..core.text.errors import TokscopeError
from .common import (
    UsageError,
    add_input_options,
    load_encoding,
    print_json,
    progress_bar,
    read_text,
)

#: the width descriptions and splits are clipped to in the human report
WIDTH = 78


class DiffError(UsageError):
    """The diff could not be made: exit code 2 (1 means "they differ")."""


def seconds_arg(value: str) -> float:
    """argparse type: a time budget in seconds, a number >= 0.

    >>> seconds_arg("2.5"), seconds_arg("0")
    (2.5, 0.0)
    """
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {safe_text(value)!r}") from None
    if not (0 <= seconds <= 86400):
        raise argparse.ArgumentTypeError(f"seconds must be between 0 and 86400: {safe_text(value)!r}")
    return seconds


# ----- the human report ----------------------------------------------------------------------------


def clip(text: str, width: int, around: int = 0) -> str:
    """``text`` on at most ``width`` columns, cut with ``…``; when offset ``around`` (where it
    differs from its twin) would be cut off, it starts a few characters before it instead.

    >>> clip("abcdef", 4), clip("abcdefghijklmnopqrstuvwxyz", 12, around=20)
    ('abc…', '…nopqrstuvw…')
    """
    if len(text) <= width:
        return text
    if around >= max(8, width - 8):
        text = "…" + text[around - 7:]
        if len(text) <= width:
            return text
    return text[: width - 1] + "…"


def clipped(head: str, text: str, around: int = 0) -> str:
    """``head`` then ``text`` clipped to the rest of the report's width (see :func:`clip`)."""
    return head + clip(text, max(10, WIDTH - len(head)), around)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def show_split(pieces: tuple[SplitPiece, ...] | str) -> str:
    """A split on one line, tokens between ``│``, whitespace visible.

    >>> show_split((SplitPiece(1, "Ġthe", b" the", 0, 4, 0, 4), SplitPiece(2, "re", b"re", 4, 6, 4, 6)))
    '·the│re'
    """
    if isinstance(pieces, str):
        return safe_text(pieces)
    if not pieces:
        return "(no tokens)"
    return "│".join(token_label(p.bytes) for p in pieces)


def _ids(pieces: tuple[SplitPiece, ...] | str) -> str:
    if isinstance(pieces, str):
        return ""
    n = len(pieces)
    if not n:
        return "0 tokens"
    return f"{n} token{'s' if n != 1 else ''}: " + " ".join(str(p.id) for p in pieces)


def _example(e: Any) -> str:
    label = '"' + token_label(e.bytes) + '"'
    return label + (" (byte)" if e.tag == "byte" else "")


def render(d: TokenizerDiff, names: tuple[str, str]) -> list[str]:
    lines = [safe_text(d.summary())]
    lines.append(f"A: {safe_text(names[0])} ({d.a_kind}, {d.a_vocab:,} ids)")
    lines.append(f"B: {safe_text(names[1])} ({d.b_kind}, {d.b_vocab:,} ids)")

    v = d.vocab
    lines += ["", "vocabulary (model tokens compared by what they decode to; added tokens apart):",
              f"  A {v.a_tokens:,} tokens, B {v.b_tokens:,}; {v.shared:,} in both"]
    rows = [("only in A", v.only_a, v.only_a_examples, lambda e: _example(e) + f" {e.a_id}"),
            ("only in B", v.only_b, v.only_b_examples, lambda e: _example(e) + f" {e.b_id}"),
            ("other ids", v.different_id, v.different_id_examples, lambda e: _example(e) + f" {e.a_id}→{e.b_id}")]
    if v.value is not None:
        rows.append((f"other {v.value}s", v.different_value, v.different_value_examples,
                     lambda e: _example(e) + f" {e.a_value:g}→{e.b_value:g}" if e.a_value is not None
                     and e.b_value is not None else _example(e)))
    for label, count, examples, show in rows:
        line = f"  {label + ':':<17}{count:>8,}"
        if examples:
            line += "   e.g. " + ", ".join(show(e) for e in examples[:4])
        lines.append(clip(line, WIDTH))

    a = d.added
    lines += ["", f"added tokens: A {a.a_tokens:,}, B {a.b_tokens:,}; "
                  + ("the same content, ids and kinds" if a.same else f"{len(a.differences):,} differ:")]
    for x in a.differences[:12]:
        def side(token_id: Any, special: Any, flags: Any) -> str:
            if token_id is None:
                return "-"
            return f"{token_id} {'special' if special else 'added'}" + (f" [{','.join(flags)}]" if flags else "")
        lines.append(clip(f"  {safe_text(x.content, ws=True)}  A {side(x.a_id, x.a_special, x.a_flags)}  "
                          f"B {side(x.b_id, x.b_special, x.b_flags)}", WIDTH))
    if len(a.differences) > 12:
        lines.append(f"  … and {len(a.differences) - 12:,} more (--json lists them all)")

    lines += ["", "stages (= same description, ≠ described differently; the splits decide the verdict):"]
    for row in d.stages:
        sa, sb = safe_text(row.a), safe_text(row.b)
        if row.same:
            lines.append(clipped(f"  {row.stage:<15}= ", sa))
        else:
            at = _common_prefix(sa, sb)
            lines.append(clipped(f"  {row.stage:<15}≠ A ", sa, at))
            lines.append(clipped(f"  {'':<15}  B ", sb, at))

    s = d.search
    found = s.difference
    lines.append("")
    how = "ids" if s.compared == "ids" else "cuts, as ids differ"
    lines.append(f"splits (special tokens encoded as ordinary text; compared by {how}):")
    if s.text_given:
        lines.append(f"  the given text: {'split differently' if s.text_differs else 'split alike'}")
    if found is None:
        lines.append("  no text found that they split differently")
    else:
        lines += show_difference(found)
    budget = "budget used up" if s.timed_out else "done"
    lines.append(f"  searched {s.tried:,} texts in {s.seconds:.2f} s ({budget}; budget {s.budget:g} s, seed {s.seed})")
    return lines


#: the longest difference text shown whole (a longer one is shown around where the splits part)
SHOWN_CHARS = 60


def excerpt(text: str, at: int, width: int = SHOWN_CHARS) -> str:
    """``text`` shown safely, whitespace visible; a long one cut to about ``width`` characters
    around offset ``at``.

    >>> excerpt("a b", 0), excerpt("x" * 100 + "!" + "y" * 100, 100, width=10)
    ('a·b', '…xxxxx!yyyy…')
    """
    if len(text) <= width:
        return safe_text(text, ws=True)
    start = max(0, at - width // 2)
    end = min(len(text), start + width)
    return ("…" if start else "") + safe_text(text[start:end], ws=True) + ("…" if end < len(text) else "")


def show_difference(found: Difference) -> list[str]:
    where = "the given text" if found.source == "text" else f"the generator ({found.category})"
    state = "minimal" if found.minimal else "shrinking stopped at the time budget"
    n = len(found.text)
    return [
        f"  shortest text found: \"{excerpt(found.text, found.first_char)}\" ({n:,} char{'s' if n != 1 else ''}, "
        f"from {safe_text(where)}; {state}); they part at char {found.first_char:,}",
        clip(f"  A {show_split(found.a)}   ({_ids(found.a)})", WIDTH),
        clip(f"  B {show_split(found.b)}   ({_ids(found.b)})", WIDTH),
    ]


# ----- the command ------------------------------------------------------------------------------------


def _load(name: str) -> Any:
    try:
        return load_encoding(name)
    except (TokscopeError, OSError, ValueError) as exc:
        raise DiffError(f"cannot load {safe_text(name)!r}: {safe_text(exc)}") from None


def cmd_diff(args: argparse.Namespace) -> int:
    try:
        return _diff(args)
    except (UsageError, MemoryError, RecursionError, KeyboardInterrupt, BrokenPipeError):
        raise
    except (TokscopeError, OSError, ValueError) as exc:
        raise DiffError(safe_text(getattr(exc, "strerror", None) or exc)) from None
    except Exception as exc:  # noqa: BLE001 - exit 1 means "differ": a failure must not look like one
        if os.environ.get("TOKSCOPE_DEBUG"):
            raise
        raise DiffError(f"internal error: {type(exc).__name__}: {exc} (please report it)") from None


def _diff(args: argparse.Namespace) -> int:
    text = None
    if args.text is not None or args.file:
        text = read_text(args)
    a, b = _load(args.a), _load(args.b)
    bar = progress_bar("searching", delay=0.5)
    progress = None
    if bar is not None:
        def progress(tried: int, fraction: float) -> None:
            bar.draw(fraction, f"{tried:,} texts")
    try:
        result = diff_tokenizers(a, b, text, seconds=args.seconds, seed=args.seed, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        print_json(diff_json(result))
    else:
        print("\n".join(render(result, (args.a, args.b))))
    sys.stdout.flush()  # a failed write is an error (2), not a verdict
    return 0 if result.same else 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "diff", help="are two tokenizers the same? where do they first split a text differently?",
        description="Compare tokenizers A and B (anything -e takes: encoding names, saved tokenizers, tokenizer "
                    "files, model folders, model ids): their vocabularies, added tokens and stages, and the "
                    "shortest text found (in TEXT or FILE, then generated texts) that they split differently. "
                    "Exit 0: no difference found; 1: they differ; 2: error.",
    )
    p.add_argument("a", metavar="A", help="the first tokenizer")
    p.add_argument("b", metavar="B", help="the second tokenizer")
    p.add_argument("text", nargs="?", metavar="TEXT", help="a text to search first (default: generated texts only)")
    add_input_options(p, text=False)
    p.add_argument("--seconds", type=seconds_arg, default=DEFAULT_SECONDS, metavar="N",
                   help=f"time budget of the search for a differing text (default: {DEFAULT_SECONDS:g})")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the text generator (default: 0)")
    p.add_argument("--json", action="store_true", help="print JSON (schema 1)")
    p.set_defaults(func=cmd_diff)
