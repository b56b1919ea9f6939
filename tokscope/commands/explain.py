"""``tokscope explain [-e NAME] (TEXT | --token ID) [--json] [--max-rank N] [--nbest N]``: why a text
splits as it does, chunk by chunk, for every kind (through :mod:`tokscope.core.explain.why`, drawn
by :mod:`.why_text`): for byte-level BPE from ranks the pattern alternative that matched each
chunk, the merge replay as numbered steps, why it is not one token, and variants; for a
``tokenizer.json`` of another kind the form the model saw and that kind's own facts (merge ranks
are then lines of the merge list). ``--token`` explains one vocabulary entry (and says if it is
unreachable). An option for one kind only (``--max-rank``, ``--pairs``, ``--nbest``) given for
another is a one-line error naming the kind.

``--max-rank N`` (on ``explain`` and ``encode``) is the rank cut-off: merges may
build only tokens whose rank is below N. Single bytes are always available, so ``--max-rank 0``
gives one piece per byte; ranks 0-255 are the single bytes in every built-in encoding, so
``--max-rank 256+K`` keeps the first K merges; N at or above the vocabulary size changes nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.explain.merge_trees import is_unreachable, resolve_token
from ..core.explain.sentences import cutoff_words, token_sentences
from ..core.explain.why import NBEST, explain_text, explain_token
from ..core.text.display import quoted, safe_text
from ..core.text.errors import NotForThisKindError
from . import why_text
from .common import (
    MAX_RANK_HELP,
    UsageError,
    ascii_int,
    add_encoding_option,
    add_input_options,
    add_special_options,
    encode_args,
    load_encoding,
    non_negative,
    note_unknown_specials,
    print_json,
    read_text,
    special_hint,
)

def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "explain", help="show why a text splits as it does: chunks, merge steps, variants",
        description="For each chunk of the text: which part of the pattern matched it, every merge step "
        "(the candidate pairs and their ranks, the lowest-rank pair chosen), why it is not one token, "
        "and the same word in other contexts. For a tokenizer.json of another kind: the form the model "
        "saw (after the normalizer and pre-tokenizer) and, by kind, the merges of the merge list with "
        "their ranks and each token's merge tree (BPE), the greedy longest matches and why a word is "
        "[UNK] (WordPiece), the best segmentation beside the next-best ones (Unigram), or the lookup "
        "(WordLevel). Byte-fallback tokens are shown as the bytes they stand for.",
    )
    add_encoding_option(p)
    add_input_options(p)
    add_special_options(p)
    p.add_argument("--token", type=ascii_int, metavar="ID",
                   help="explain one vocabulary entry instead of a text: how its own text is cut, and "
                   "whether ordinary encoding can produce it")
    p.add_argument("--max-rank", type=non_negative, metavar="N", help=MAX_RANK_HELP + "; byte-level BPE from ranks only")
    p.add_argument("--pairs", action="store_true",
                   help="list every candidate pair with its rank at each step (BPE only)")
    p.add_argument("--nbest", type=non_negative, metavar="N",
                   help=f"how many next-best segmentations to show (Unigram only; default {NBEST})")
    p.add_argument("--no-variants", action="store_true", help="skip the context variants")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_explain)

# ----- explain ---------------------------------------------------------------------------------


def _special_args(args: argparse.Namespace) -> dict[str, Any]:
    """Like ``encode``: special tokens in the text are refused unless allowed or taken as text."""
    return encode_args(args)


def check_kind_options(tokenizer: Any, args: argparse.Namespace) -> None:
    """Options for one kind only, given for another: the one-line error names the kind."""
    name = safe_text(tokenizer.name)
    if args.max_rank is not None and not tokenizer.ranks:
        raise NotForThisKindError("a rank cut-off (--max-rank)", name, tokenizer.kind, "byte-level BPE from ranks")
    if args.pairs and tokenizer.model.kind != "bpe":
        raise NotForThisKindError("--pairs (the candidate pairs of each merge)", name, tokenizer.kind, "BPE")
    if args.nbest is not None and tokenizer.model.kind != "unigram":
        raise NotForThisKindError("--nbest (the next-best segmentations)", name, tokenizer.kind, "Unigram")


def cmd_explain(args: argparse.Namespace) -> int:
    tokenizer = load_encoding(args.encoding)
    check_kind_options(tokenizer, args)
    if args.token is not None:
        if args.text is not None or args.file:
            raise UsageError("give either TEXT (or -f FILE) or --token ID, not both")
        return explain_one_token(tokenizer, args)
    text = read_text(args)
    note_unknown_specials(tokenizer, args)
    nbest = NBEST if args.nbest is None else args.nbest
    with special_hint():
        found = explain_text(tokenizer, text, max_rank=args.max_rank, nbest=nbest,
                             with_variants=not args.no_variants, **_special_args(args))
    if args.json:
        print_json(why_text.text_why_json(tokenizer, found, variants=not args.no_variants))
    else:
        why_text.print_text_why(tokenizer, found, pairs=args.pairs, variants=not args.no_variants, out=sys.stdout,
                                nbest=nbest)
    return 0


def explain_one_token(tokenizer: Any, args: argparse.Namespace) -> int:
    """``explain --token ID``: how the token's own text is cut (as a chunk by itself), and whether
    ordinary encoding can produce the token at all."""
    token_id = resolve_token(tokenizer, token_id=args.token)
    unreachable = is_unreachable(tokenizer, token_id)
    nbest = NBEST if args.nbest is None else args.nbest
    found = explain_token(tokenizer, token_id, max_rank=args.max_rank, nbest=nbest)
    labels = why_text.Labels(tokenizer)
    if args.json:
        value: dict[str, Any] = {
            "encoding": tokenizer.name,
            "kind": tokenizer.kind,
            "id": token_id,
            "token": tokenizer.token_str(token_id),
            "bytes": tokenizer.token_bytes(token_id).hex(),
            "special": tokenizer.is_special(token_id),
            "unreachable": unreachable,
            "max_rank": args.max_rank,
            "summary": found.summary,
            "chunk": why_text.any_chunk_json(tokenizer, labels, found, variants=not args.no_variants),
        }
        print_json(value)
        return 0
    out = sys.stdout
    label = quoted(tokenizer.token_bytes(token_id)) if found.ranks is not None else labels.quoted(token_id)
    kind = "" if tokenizer.ranks else f" ({safe_text(tokenizer.kind)})"
    cut = "" if args.max_rank is None else f", cut-off: {cutoff_words(tokenizer, args.max_rank)}"
    out.write(f"{safe_text(tokenizer.name)}{kind}: token {token_id} {label}{cut}\n")
    why_text.print_sentences(token_sentences(tokenizer, token_id), out.write)
    why_text.print_chunk_body(tokenizer, labels, found, pairs=args.pairs, variants=not args.no_variants, out=out,
                              token=True, nbest=nbest)
    return 0
