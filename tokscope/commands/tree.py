"""``tokscope tree [-e NAME] (ID | --text TEXT | --hex HEX) [--json] [--used-in]``: the merge tree of
one token drawn down to single bytes (for a merge list, merge ranks are lines of the list; a kind
without merges has a one-node tree); ``--used-in`` lists the tokens it is a direct parent of.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core.explain.facts import token_facts
from ..core.explain.merge_trees import MergeNode, is_unreachable, merge_tree, resolve_token, used_in
from ..core.explain.why import explain_token
from ..core.text.display import quoted, safe_text
from ..core.text.errors import NotForThisKindError
from . import why_text
from .common import UsageError, add_encoding_option, load_encoding, print_json


def register(sub: argparse._SubParsersAction) -> None:
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
        from ..inputs.text_input import decode_argument

        return resolve_token(tokenizer, text=decode_argument(args.text, "--text"))
    return resolve_token(tokenizer, hex_bytes=args.hex)


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
        value = why_text.node_json(tokenizer, tree)
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
    labels = why_text.Labels(tokenizer)
    for line in why_text.draw_tree(tokenizer, tree, labels):
        print(line)
    if not tokenizer.ranks:
        facts = why_text.fact_words(tokenizer, token_id)
        if facts:
            print(", ".join(facts))
    why_not = not_built(tokenizer, tree)
    if why_not:
        print(why_not)
    if unreachable:
        print("unreachable: ordinary encoding never produces this token" + own_encoding(tokenizer, tree))
        if not tokenizer.ranks:
            print(f"  why: {safe_text(explain_token(tokenizer, token_id).summary)}")
    if uses is not None:
        print(f"used in {len(uses)} token{'' if len(uses) == 1 else 's'}" + (" as a parent:" if uses else ""))
        for u in uses:
            pair = (f"+ {labels.quoted(u.other)}" if u.side == "left" else f"{labels.quoted(u.other)} +")
            print(f"  {u.child:>7} {labels.quoted(u.child)}  ({u.side} parent, {pair} {u.other})")
    return 0


def not_built(tokenizer: Any, tree: MergeNode) -> str | None:
    """Why the tree stops at its root, when it does: a special token, a kind without merges, or a
    token no merge makes."""
    token_id = tree.id
    if tokenizer.is_special(token_id):
        return "special token: it is never built by merges"
    if tokenizer.ranks:
        return "no single merge of lower-ranked tokens builds this token" if len(tree.bytes) > 1 and not tree.children else None
    if tokenizer.model.kind != "bpe":
        return f"{safe_text(tokenizer.kind)} has no merges: a token is an entry of the vocabulary, not built from other tokens"
    if tree.children or tokenizer.is_added(token_id):
        return None
    f = token_facts(tokenizer, token_id)
    core = f.token
    if f.continuation:
        core = core[len(f.continuation):]
    if f.end_of_word:
        core = core[: -len(f.end_of_word)]
    return "no merge of the merge list makes this token" if f.byte is None and len(core) > 1 else None


def own_encoding(tokenizer: Any, tree: MergeNode) -> str:
    """For byte-level BPE from ranks, what the token's own bytes encode to instead."""
    if not tokenizer.ranks:
        return ""
    from ..core.models.ranks import merge

    parts = merge(tree.bytes, tokenizer.ranks)
    got = " + ".join(f"{tokenizer.rank_of(p)} {quoted(p)}" for p in parts)
    return f" (its own bytes encode to {got})"
