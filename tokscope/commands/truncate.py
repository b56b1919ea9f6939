"""``tokscope truncate`` (and ``encode --truncate N``): a text cut to a budget of tokens.

Decisions (also in the README section):

- The kept text is the longest run of whole tokens from the start (``--from-end``: from the end)
  that holds at most N tokens and does not split a character: when token N ends inside a
  character (gpt2 cuts most emoji into bytes), the cut moves back before that character. The kept
  text is encoded again and holds at most N tokens (:func:`tokscope.core.document.cuts.truncate`).
- A character is a code point: a sequence joined by U+200D (a family emoji) may be cut between its
  code points, never inside one.
- The kept text is a slice of the input, written byte for byte into a pipe or a file (no newline
  added: a text with fewer than N tokens comes out exactly as it went in); on a terminal it is
  made safe to show, with a newline at the end.
- Special tokens typed in the text are refused, as ``encode`` refuses them, unless
  ``--allow-special`` (they are one token each) or ``--special-as-text``.
- ``encode --truncate N`` prints the ids of that kept text (``--json``: its tokens, with offsets
  into the kept text).
- From ``-f FILE`` or standard input only what the first N tokens need is read (a block of 64 KB,
  then doubling, until more than N tokens come before a place no later text can change:
  :func:`tokscope.core.document.cuts.truncate_stream`); the answer is the one the whole input
  gives. ``--max-bytes`` then bounds what is read, and special tokens are looked for in that part.
  ``--from-end``, and a tokenizer whose every stage is not local, read the whole input.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import (
    UsageError,
    add_encoding_option,
    add_input_options,
    add_special_options,
    encode_args,
    load_encoding,
    note_unknown_specials,
    print_json,
    read_text,
    special_hint,
    stdin_is_piped,
    token_budget,
    write_exact,
)


def truncate_text(tokenizer: Any, text: str, max_tokens: int, from_end: bool, args: argparse.Namespace):
    """:func:`tokscope.core.document.cuts.truncate` with the command line's special-token options (and its
    advice when a special token is refused)."""
    from ..core.document.cuts import truncate

    with special_hint():
        return truncate(tokenizer, text, max_tokens, from_end=from_end, **encode_args(args))


def streams(args: argparse.Namespace) -> bool:
    """Whether the text comes from a file or standard input and is cut from its start, so it
    can be read a prefix at a time."""
    if getattr(args, "text", None) is not None:
        return False
    return not args.from_end and (bool(args.file) or stdin_is_piped())


def cut_input(tokenizer: Any, max_tokens: int, args: argparse.Namespace):
    """The input (TEXT, ``-f FILE`` or standard input) cut to ``max_tokens`` tokens; from a file
    or standard input, read only as far as the cut needs (:func:`streams`)."""
    if not streams(args):
        text = read_text(args)
        note_unknown_specials(tokenizer, args)
        return truncate_text(tokenizer, text, max_tokens, args.from_end, args)
    from ..core.document.cuts import truncate_stream
    from ..inputs.text_input import PrefixReader

    note_unknown_specials(tokenizer, args)
    with PrefixReader(args.file, limit=args.max_bytes, errors=args.errors) as reader, special_hint():
        return truncate_stream(tokenizer, reader.read, max_tokens, **encode_args(args))


def cmd_truncate(args: argparse.Namespace) -> int:
    tokenizer = load_encoding(args.encoding)
    cut = cut_input(tokenizer, args.max_tokens, args)
    if args.json:
        print_json({
            "encoding": tokenizer.name, "max_tokens": args.max_tokens, "from_end": args.from_end,
            "truncated": cut.truncated, "tokens": len(cut.ids), "characters": len(cut.text),
            "bytes": len(cut.text.encode("utf-8")), "start": cut.start, "end": cut.end, "text": cut.text,
        })
        return 0
    write_exact(cut.text.encode("utf-8"))
    return 0


def add_truncate_options(parser: argparse.ArgumentParser) -> None:
    """``--truncate N`` and ``--from-end`` on ``encode``."""
    parser.add_argument("--truncate", type=token_budget, metavar="N",
                        help="encode only the text cut to at most N tokens (on a character boundary)")
    parser.add_argument("--from-end", action="store_true", help="with --truncate: keep the end of the text")


def check_truncate_options(args: argparse.Namespace) -> None:
    if getattr(args, "from_end", False) and getattr(args, "truncate", None) is None:
        raise UsageError("--from-end goes with --truncate N")
    if getattr(args, "truncate", None) is not None and getattr(args, "max_rank", None) is not None:
        raise UsageError("--truncate and --max-rank do not go together")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "truncate", help="cut a text to at most N tokens, on a token boundary that splits no character",
        description="Print TEXT (or -f FILE, or standard input) cut to at most N tokens. Into a pipe or a file "
                    "the kept text is written byte for byte; on a terminal, made safe to show.",
    )
    add_encoding_option(p)
    p.add_argument("--max-tokens", type=token_budget, required=True, metavar="N", help="keep at most N tokens")
    p.add_argument("--from-end", action="store_true", help="keep the end of the text instead of its start")
    add_input_options(p)
    add_special_options(p)
    p.add_argument("--json", action="store_true", help="print JSON: the kept text, its tokens, where it was cut")
    p.set_defaults(func=cmd_truncate)
