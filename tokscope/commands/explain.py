"""``tokscope explain``, ``tokscope tree`` and ``tokscope vocab``: why a text splits as it does.

- ``explain [-e NAME] (TEXT | --token ID) [--json] [--max-rank N] [--nbest N]``: every chunk with
  the pattern alternative that matched it, the merge replay as numbered steps, why it is not one
  token, and variants; ``--token`` explains one vocabulary entry (and says if it is unreachable).
- ``tree [-e NAME] (ID | --text TEXT | --hex HEX) [--json] [--used-in]``: the merge tree of one
  token drawn down to single bytes; ``--used-in`` lists the tokens it is a direct parent of.
- ``vocab [-e NAME] [--search S | --regex R | --hex HEX | --id N] [--sort id|length] [--limit K]``;
  unreachable tokens (ordinary encoding never produces them) are marked.

Byte-level BPE from ranks (the OpenAI encodings, tokenizers trained here) is shown as it always
was, from :mod:`tokscope.core.explain.ranks`. Every other kind (a ``tokenizer.json``: BPE from a merge
list, WordPiece, Unigram, WordLevel) goes through :mod:`tokscope.core.explain.why` and is shown by
:mod:`.kinds`: merge ranks are then lines of the merge list. An option for one kind only
(``--max-rank``, ``--pairs``, ``--nbest``, ``--used-in``) given for another is a one-line error
naming the kind.

``--max-rank N`` (on ``explain`` and, added here, on ``encode``) is the rank cut-off: merges may
build only tokens whose rank is below N. Single bytes are always available, so ``--max-rank 0``
gives one piece per byte; ranks 0-255 are the single bytes in every built-in encoding, so
``--max-rank 256+K`` keeps the first K merges; N at or above the vocabulary size changes nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.text.display import quoted, safe_text, token_label
from ..core.text.errors import NotForThisKindError
from ..core.explain.ranks import ChunkExplanation, Explanation, MergeStep, explain
from ..core.explain.merge_trees import (
    MergeNode,
    full_max_rank,
    is_unreachable,
    merge_tree,
    merges_kept,
    resolve_token,
    used_in,
)
from ..core.explain.vocab_search import search_vocab
from ..core.explain.why import NBEST, explain_text
from . import kinds
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
)

MAX_RANK_HELP = (
    "rank cut-off: merges may only build tokens whose rank is below N (0 = single bytes only; "
    "256+K keeps the first K merges of the built-in encodings)"
)


def non_negative(value: str) -> int:
    """argparse type: a whole number >= 0."""
    text = value.strip().replace("_", "")
    if text.startswith("-") and text[1:].isascii() and text[1:].isdigit():
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {safe_text(value)!r}")
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"not a whole number: {safe_text(value)!r}")
    return int(text)


def ascii_int(value: str) -> int:
    """argparse type: a whole number in ASCII digits (``int()`` would also take ``'١٢٣'``); named
    ``int`` so that argparse's message stays "invalid int value"."""
    text = value.strip()
    if not (text.isascii() and text.lstrip("-").isdigit()):
        raise ValueError(value)
    return int(text)


ascii_int.__name__ = "int"


def register(sub: argparse._SubParsersAction) -> None:
    # the rank cut-off on the existing `encode` (cli.cmd_encode passes args.max_rank to the core)
    encode = sub.choices.get("encode")
    if encode is not None and not any("--max-rank" in a.option_strings for a in encode._actions):
        encode.add_argument("--max-rank", type=non_negative, metavar="N", help=MAX_RANK_HELP)

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

    p = sub.add_parser(
        "tree", help="draw the merge tree of a token (by id, text or hex bytes)",
        description="The binary tree of merges that builds a token, down to single bytes.",
    )
    add_encoding_option(p)
    p.add_argument("id", nargs="?", metavar="ID", help="the token id")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--text", metavar="TEXT", help="the token given by its text (must be a single token)")
    group.add_argument("--hex", metavar="HEX", help="the token given by its bytes in hex, e.g. 68656c6c6f")
    p.add_argument("--used-in", action="store_true", help="also list the tokens that have this token as a parent")
    p.add_argument("--json", action="store_true", help="print the tree as nested JSON")
    p.set_defaults(func=cmd_tree)

    p = sub.add_parser(
        "vocab", help="search the vocabulary by substring, regex, hex bytes or id",
        description="Search every token of an encoding. Substring and hex search inside the tokens' bytes; "
        "a regular expression searches their text.",
    )
    add_encoding_option(p)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--search", metavar="TEXT", help="tokens containing TEXT")
    group.add_argument("--regex", metavar="PATTERN", help="tokens whose text a regular expression finds a match in")
    group.add_argument("--hex", metavar="HEX", help="tokens containing these bytes")
    group.add_argument("--id", type=ascii_int, metavar="N", help="the token with this id")
    p.add_argument("--sort", choices=("id", "length"), default="id", help="order: by id, or longest first")
    p.add_argument("--limit", type=non_negative, default=100, metavar="K",
                   help="show at most K results (default 100; 0 shows all)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_vocab)


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
    if not tokenizer.ranks:
        nbest = NBEST if args.nbest is None else args.nbest
        with special_hint():
            found = explain_text(tokenizer, text, nbest=nbest, **_special_args(args))
        if args.json:
            print_json(kinds.text_why_json(tokenizer, found, variants=not args.no_variants))
        else:
            kinds.print_text_why(tokenizer, found, pairs=args.pairs, variants=not args.no_variants, out=sys.stdout,
                                 nbest=nbest)
        return 0
    with special_hint():
        result = explain(tokenizer, text, max_rank=args.max_rank, with_variants=not args.no_variants,
                         **_special_args(args))
    if args.json:
        print_json(explanation_json(result, merges_kept(tokenizer, args.max_rank), full_max_rank(tokenizer)))
    else:
        print_explanation(result, merges_kept(tokenizer, args.max_rank), pairs=args.pairs)
    return 0


def explain_one_token(tokenizer: Any, args: argparse.Namespace) -> int:
    """``explain --token ID``: how the token's own text is cut (as a chunk by itself), and whether
    ordinary encoding can produce the token at all."""
    from ..core.explain.why import explain_token

    token_id = resolve_token(tokenizer, token_id=args.token)
    unreachable = is_unreachable(tokenizer, token_id)
    nbest = NBEST if args.nbest is None else args.nbest
    found = explain_token(tokenizer, token_id, max_rank=args.max_rank, nbest=nbest)
    ranks = found.ranks if tokenizer.ranks and not tokenizer.is_added(token_id) else None
    labels = kinds.Labels(tokenizer)
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
            "chunk": chunk_json(ranks) if ranks is not None else
            kinds.chunk_why_json(tokenizer, labels, found, variants=not args.no_variants),
        }
        print_json(value)
        return 0
    out = sys.stdout
    label = quoted(tokenizer.token_bytes(token_id)) if ranks is not None else labels.quoted(token_id)
    kind = "" if tokenizer.ranks else f" ({safe_text(tokenizer.kind)})"
    cut = "" if args.max_rank is None else f", cut-off: ranks below {args.max_rank}"
    out.write(f"{safe_text(tokenizer.name)}{kind}: token {token_id} {label}{cut}\n")
    if not tokenizer.ranks:
        facts = kinds.fact_words(tokenizer, token_id)
        if facts:
            out.write(f"  {', '.join(facts)}\n")
    if unreachable:
        out.write("  unreachable: ordinary encoding never produces this token\n")
    if ranks is not None:
        print_chunk_explanation(ranks, pairs=args.pairs, out=out, variants=not args.no_variants)
    else:
        kinds.print_chunk_body(tokenizer, labels, found, pairs=args.pairs, variants=not args.no_variants, out=out,
                               token=True, nbest=nbest)
    return 0


def step_json(step: MergeStep) -> dict[str, Any]:
    return {
        "number": step.number,
        "left": step.left.hex(),
        "right": step.right.hex(),
        "rank": step.rank,
        "position": step.position,
        "result": step.merged.hex(),
        "before": [p.hex() for p in step.before],
        "after": [p.hex() for p in step.after],
        "candidates": [
            {"position": c.position, "left": c.left.hex(), "right": c.right.hex(), "rank": c.rank, "allowed": c.allowed}
            for c in step.candidates
        ],
    }


def chunk_json(c: ChunkExplanation) -> dict[str, Any]:
    why = c.why
    return {
        "text": c.chunk.text,
        "start": c.chunk.start,
        "end": c.chunk.end,
        "byte_start": c.byte_start,
        "byte_end": c.byte_end,
        "special": c.chunk.special,
        "category": c.category,
        "alternative": c.alternative,
        "bytes": c.bytes.hex(),
        "tokens": list(c.tokens),
        "pieces": [{"id": t, "bytes": p.hex(), "text": p.decode("utf-8", errors="replace")}
                   for t, p in zip(c.tokens, c.parts)],
        "replayed": c.replayed,
        "steps": [step_json(s) for s in c.steps],
        "why": None if why is None else {
            "one_token": why.one_token,
            "token": why.token,
            "blocked_by_cutoff": why.blocked_by_cutoff,
            "unreachable": why.unreachable,
            "parents": None if why.parents is None else [why.parents.left, why.parents.right],
            "missing": [{"left": m.left.hex(), "right": m.right.hex(), "rank": m.rank} for m in why.missing],
            "longest_prefix": why.longest_prefix.hex(),
            "longest_prefix_id": why.longest_prefix_id,
            "summary": why.summary,
        },
        "variants": [{"label": v.label, "text": v.text, "tokens": list(v.tokens)} for v in c.variants],
    }


def explanation_json(result: Explanation, kept: int, full: int) -> dict[str, Any]:
    return {
        "encoding": result.encoding,
        "text": result.text,
        "max_rank": result.max_rank,
        "merges_kept": kept,
        "full_max_rank": full,
        "tokens": list(result.tokens),
        "chunks": [chunk_json(c) for c in result.chunks],
    }


def _parts_line(parts: tuple[bytes, ...]) -> str:
    return " ".join(f"[{token_label(p, ws=False)}]" for p in parts)


def print_explanation(result: Explanation, kept: int, *, pairs: bool = False, out: Any = None) -> None:
    out = out or sys.stdout
    w = out.write
    cut = "" if result.max_rank is None else f", cut-off: ranks below {result.max_rank} ({kept:,} merges)"
    nc, nt = len(result.chunks), len(result.tokens)
    w(f"{safe_text(result.encoding)}: {nc} chunk{'' if nc == 1 else 's'}, {nt} token{'' if nt == 1 else 's'}{cut}\n")
    for number, c in enumerate(result.chunks, 1):
        alt = "" if c.alternative is None else f", pattern alternative {c.alternative + 1}"
        w(f"\nchunk {number}: {quoted(c.bytes)}  [{c.chunk.start}:{c.chunk.end}]  {c.category}{alt}\n")
        print_chunk_explanation(c, pairs=pairs, out=out)


def print_chunk_explanation(c: ChunkExplanation, *, pairs: bool = False, out: Any = None, variants: bool = True) -> None:
    """Everything under one chunk's title, for byte-level BPE from ranks."""
    out = out or sys.stdout
    w = out.write
    if c.chunk.special:
        w(f"  special token {c.tokens[0]}: never merged\n")
        return
    w(f"  bytes: {c.bytes.hex(' ')}\n")
    if not c.replayed:
        w(f"  ({len(c.bytes)} bytes: too long to replay step by step)\n")
    for step in c.steps:
        w(f"  {step.number:>3}. {quoted(step.left)} + {quoted(step.right)} -> "
          f"{quoted(step.merged)} (rank {step.rank})   {_parts_line(step.after)}\n")
        if pairs:
            listed = ", ".join(
                f"{quoted(x.left)}+{quoted(x.right)} {x.rank}{'' if x.allowed else ' (cut off)'}"
                for x in step.candidates if x.rank is not None
            )
            w(f"       candidates: {listed}\n")
    if c.replayed and not c.steps and len(c.bytes) > 1:
        w("  no merge applies: no adjacent pair of bytes is a token\n")
    pieces = "  ".join(f"{quoted(p)} {t}" for t, p in zip(c.tokens, c.parts))
    w(f"  pieces: {pieces}\n")
    if c.why is not None:
        w(f"  why: {c.why.summary}\n")
    if c.variants and variants:
        w("  variants:\n")
        width = max(len(quoted(v.text.encode())) for v in c.variants)
        for v in c.variants:
            shown = quoted(v.text.encode())
            ids = " ".join(str(i) for i in v.tokens)
            w(f"    {shown:<{width}} {ids:<24} {v.label}\n")


# ----- tree ------------------------------------------------------------------------------------


def _resolve(tokenizer: Any, args: argparse.Namespace) -> int:
    given = [x for x in (args.id, args.text, args.hex) if x is not None]
    if len(given) != 1:
        raise UsageError("give exactly one of ID, --text TEXT or --hex HEX")
    if args.id is not None:
        try:
            if not (args.id.isascii() and args.id.isdigit()):
                raise ValueError
            token_id = int(args.id)
        except ValueError:
            raise UsageError(f"not a token id: {safe_text(args.id)!r} (use --text to give a token by its text)") from None
        return resolve_token(tokenizer, token_id=token_id)
    if args.text is not None:
        from ..sources.text_input import decode_argument

        return resolve_token(tokenizer, text=decode_argument(args.text, "--text"))
    return resolve_token(tokenizer, hex_bytes=args.hex)


def node_label(n: MergeNode) -> str:
    rank = "special" if n.rank is None else f"rank {n.rank}"
    return f"{n.id} {quoted(n.bytes)} {n.bytes.hex()} {rank}"


def draw_tree(tree: MergeNode) -> list[str]:
    """The tree drawn with box characters, one node a line.

    >>> draw_tree(MergeNode(2, b"ab", 2, (MergeNode(0, b"a", 0), MergeNode(1, b"b", 1))))
    ['2 "ab" 6162 rank 2', '├─ 0 "a" 61 rank 0', '└─ 1 "b" 62 rank 1']
    """
    lines = [node_label(tree)]

    def add(n: MergeNode, prefix: str) -> None:
        for i, child in enumerate(n.children):
            last = i == len(n.children) - 1
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{node_label(child)}")
            add(child, prefix + ("   " if last else "│  "))

    add(tree, "")
    return lines


def cmd_tree(args: argparse.Namespace) -> int:
    tokenizer = load_encoding(args.encoding)
    token_id = _resolve(tokenizer, args)
    if args.used_in and not tokenizer.ranks and tokenizer.model.kind != "bpe":
        raise NotForThisKindError("--used-in (the tokens merged from this one)", safe_text(tokenizer.name),
                                  tokenizer.kind, "BPE")
    tree = merge_tree(tokenizer, token_id)
    unreachable = is_unreachable(tokenizer, token_id)
    uses = used_in(tokenizer, token_id) if args.used_in else None
    if args.json:
        value = kinds.node_json(tokenizer, tree)
        value["encoding"] = tokenizer.name
        value["kind"] = tokenizer.kind
        value["text"] = tree.text
        value["special"] = tokenizer.is_special(token_id)
        value["unreachable"] = unreachable
        if uses is not None:
            value["used_in"] = [{"id": u.child, "bytes": tokenizer.token_bytes(u.child).hex(), "other": u.other,
                                 "side": u.side} for u in uses]
        print_json(value)
        return 0
    if not tokenizer.ranks:
        return print_tree_of_kind(tokenizer, tree, unreachable, uses)
    for line in draw_tree(tree):
        print(line)
    if tokenizer.is_special(token_id):
        print("special token: it is never built by merges")
    elif len(tree.bytes) > 1 and not tree.children:
        print("no single merge of lower-ranked tokens builds this token")
    if unreachable:
        from ..core.models.ranks import merge

        parts = merge(tree.bytes, tokenizer.ranks)
        got = " + ".join(f"{tokenizer.rank_of(p)} {quoted(p)}" for p in parts)
        print(f"unreachable: ordinary encoding never produces this token (its own bytes encode to {got})")
    if uses is not None:
        print(f"used in {len(uses)} token{'' if len(uses) == 1 else 's'}" + (" as a parent:" if uses else ""))
        for u in uses:
            child = tokenizer.token_bytes(u.child)
            other = tokenizer.token_bytes(u.other)
            pair = (f"+ {quoted(other)}" if u.side == "left" else f"{quoted(other)} +")
            print(f"  {u.child:>7} {quoted(child)}  ({u.side} parent, {pair} {u.other})")
    return 0


def print_tree_of_kind(tokenizer: Any, tree: MergeNode, unreachable: bool, uses: Any) -> int:
    """``tree`` for a kind other than byte-level BPE from ranks: merge ranks are lines of the
    merge list; a kind without merges has a one-node tree."""
    from ..core.explain.facts import token_facts
    from ..core.explain.why import explain_token

    token_id = tree.id
    labels = kinds.Labels(tokenizer)
    for line in kinds.draw_tree(tokenizer, tree, labels):
        print(line)
    facts = kinds.fact_words(tokenizer, token_id)
    if facts:
        print(", ".join(facts))
    if tokenizer.is_special(token_id):
        print("special token: it is never built by merges")
    elif tokenizer.model.kind != "bpe":
        print(f"{safe_text(tokenizer.kind)} has no merges: a token is an entry of the vocabulary, not built from other tokens")
    elif not tree.children and not tokenizer.is_added(token_id):
        f = token_facts(tokenizer, token_id)
        core = f.token
        if f.continuation:
            core = core[len(f.continuation):]
        if f.end_of_word:
            core = core[: -len(f.end_of_word)]
        if f.byte is None and len(core) > 1:
            print("no merge of the merge list makes this token")
    if unreachable:
        print("unreachable: ordinary encoding never produces this token")
        print(f"  why: {safe_text(explain_token(tokenizer, token_id).summary)}")
    if uses is not None:
        print(f"used in {len(uses)} token{'' if len(uses) == 1 else 's'}" + (" as a parent:" if uses else ""))
        for u in uses:
            pair = (f"+ {labels.quoted(u.other)}" if u.side == "left" else f"{labels.quoted(u.other)} +")
            print(f"  {u.child:>7} {labels.quoted(u.child)}  ({u.side} parent, {pair} {u.other})")
    return 0


# ----- vocab -----------------------------------------------------------------------------------


def cmd_vocab(args: argparse.Namespace) -> int:
    tokenizer = load_encoding(args.encoding)
    result = search_vocab(
        tokenizer, substring=args.search, pattern=args.regex, hex_bytes=args.hex, token_id=args.id,
        sort=args.sort, limit=args.limit or None,
    )
    unreachable = {t.id for t in result.tokens if is_unreachable(tokenizer, t.id)}
    if args.json:
        print_json({
            "encoding": tokenizer.name,
            "query": result.query,
            "kind": result.kind,
            "total": result.total,
            "count": len(result.tokens),
            "tokens": [{"id": t.id, "bytes": t.bytes.hex(), "text": t.text, "length": len(t.bytes),
                        "special": t.special, "token": tokenizer.token_str(t.id), "unreachable": t.id in unreachable}
                       for t in result.tokens],
        })
        return 0
    # another kind spells its tokens otherwise than their bytes (``▁the``, ``##ing``, ``<0xE2>``)
    spelled = not tokenizer.ranks
    labels = kinds.Labels(tokenizer) if spelled else None
    for t in result.tokens:
        mark = " special" if t.special else ""
        if t.id in unreachable:
            mark += " unreachable"
        spelling = ""
        if spelled and not t.special:
            token = tokenizer.token_str(t.id)
            if token != t.text:
                spelling = f'  spelled "{safe_text(token)}"'
        # a byte-fallback token is the byte it stands for: ‹01›, not the character 01 happens to be
        shown = labels.quoted(t.id) if labels is not None and labels.byte(t.id) is not None else quoted(t.bytes)
        print(f"{t.id:>7}  {len(t.bytes):>3}  {shown}  {t.bytes.hex()}{spelling}{mark}")
    if result.truncated:
        print(f"{result.total:,} matches; showing {len(result.tokens)} (use --limit to see more, 0 for all)",
              file=sys.stderr)
    elif not result.tokens:
        print("no matches", file=sys.stderr)
    return 0
