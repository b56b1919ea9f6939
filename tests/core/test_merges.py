"""Merge trees, the "used in" index, unreachable tokens and token resolution, on every encoding."""

from __future__ import annotations

import os
import random
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.models.ranks import merge
from tokscope.core.text.errors import CancelledError, TokscopeError, UnknownTokenError
from tokscope.core.explain.merge_trees import (
    build_index,
    has_index,
    is_unreachable,
    leaves,
    merge_tree,
    node,
    parse_hex,
    resolve_token,
    tree_json,
    unreachable_tokens,
    used_in,
    walk,
)
from tokscope.core.reference import reference_parents
from tokscope.core.tokenizer.tokenizer import Tokenizer
from tokscope.sources.registry import builtin_names

OPENAI = builtin_names()
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", params=OPENAI)
def tok(request, load):
    return load(request.param)


def _ids(tok):
    return st.integers(min_value=0, max_value=tok.max_token_value).filter(tok.has_token)


@FAST
@given(data=st.data())
def test_tree_leaves_rejoin_and_parents_rank_lower(tok, data):
    token_id = data.draw(_ids(tok))
    tree = merge_tree(tok, token_id)
    assert tree.id == token_id and tree.bytes == tok.token_bytes(token_id)
    assert b"".join(leaves(tree)) == tree.bytes
    for _, n in walk(tree):
        assert len(n.children) in (0, 2)
        if n.children:
            assert all(c.rank < n.rank for c in n.children)
            assert n.children[0].bytes + n.children[1].bytes == n.bytes
        elif not tok.is_special(n.id):
            assert len(n.bytes) == 1  # every built-in token is built from single bytes
    if tok.is_special(token_id):
        assert tree.rank is None and not tree.children


def test_tree_json_shape(load):
    tok = load("gpt2")
    doc = tree_json(merge_tree(tok, tok.rank_of(b"hello")))
    assert set(doc) == {"id", "bytes", "rank", "children"}
    assert doc["bytes"] == b"hello".hex() and len(doc["children"]) == 2

    def check(d):
        assert len(d["children"]) in (0, 2)
        if d["children"]:
            assert "".join(c["bytes"] for c in d["children"]) == d["bytes"]
        for c in d["children"]:
            check(c)

    check(doc)


def test_node_is_one_level(load):
    tok = load("o200k_base")
    token_id = tok.rank_of(b" tokenizer")
    n = node(tok, token_id)
    assert [c.bytes for c in n.children] == [c.bytes for c in merge_tree(tok, token_id).children]
    assert all(not c.children for c in n.children)


# ----- the full index and "used in" -----------------------------------------------------------


def test_index_agrees_with_bpe_parents_on_a_sample(tok):
    index = build_index(tok)
    assert has_index(tok)
    rng = random.Random(5)
    sample = rng.sample([r for b, r in tok.ranks.items() if len(b) > 1], 400)
    for token_id in sample:
        assert index.parents(token_id) == tok.parents(token_id) == reference_parents(tok, token_id)


def test_used_in_is_the_reverse_of_parents(tok):
    rng = random.Random(7)
    sample = rng.sample([r for b, r in tok.ranks.items() if len(b) > 1], 200)
    for token_id in sample:
        pair = tok.parents(token_id)
        assert any(u.child == token_id and u.side == "left" and u.other == pair.right for u in used_in(tok, pair.left))
        assert any(u.child == token_id and u.side == "right" and u.other == pair.left for u in used_in(tok, pair.right))
    for parent in rng.sample(sorted(tok.ranks.values()), 50):
        uses = used_in(tok, parent)
        assert [u.child for u in uses] == sorted(u.child for u in uses)
        for u in uses:
            pair = tok.parents(u.child)
            assert (pair.left if u.side == "left" else pair.right) == parent
            assert (pair.right if u.side == "left" else pair.left) == u.other


def test_used_in_of_a_special_token_is_empty(load):
    tok = load("gpt2")
    assert used_in(tok, 50256) == ()
    with pytest.raises(UnknownTokenError):
        used_in(tok, 10**9)


def test_index_progress_and_cancel(load):
    base = load("gpt2")
    fresh = Tokenizer("copy", base.ranks, base.pattern)  # a new object: no cached index
    stop = threading.Event()
    stop.set()
    with pytest.raises(CancelledError):
        build_index(fresh, cancel=stop)
    assert not has_index(fresh)
    seen = []
    build_index(fresh, progress=lambda done, total: seen.append((done, total)))
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] == len(base.ranks)
    assert has_index(fresh)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("TOKSCOPE_SLOW") != "1", reason="set TOKSCOPE_SLOW=1 for full-vocabulary checks")
def test_index_agrees_with_bpe_parents_everywhere(tok):
    index = build_index(tok)
    for data, token_id in tok.ranks.items():
        assert index.parents(token_id) == reference_parents(tok, token_id), data


# ----- unreachable ----------------------------------------------------------------------------


def _unreachable_vocab():
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"d": 3, b"bc": 4, b"ab": 5, b"cd": 6, b"abcd": 7}
    return Tokenizer("t", ranks, r"\w+")


def test_unreachable_is_detected():
    tok = _unreachable_vocab()
    assert is_unreachable(tok, 7)
    assert not any(is_unreachable(tok, i) for i in range(7))
    assert unreachable_tokens(tok) == [7]
    assert merge_tree(tok, 7).children == ()  # no single merge of lower ranks builds it
    assert build_index(tok).parents(7) is None and reference_parents(tok, 7) is None


@FAST
@given(data=st.data())
def test_sampled_builtin_tokens_are_reachable(tok, data):
    token_id = data.draw(_ids(tok))
    expect = not tok.is_special(token_id) and merge(tok.token_bytes(token_id), tok.ranks) != [tok.token_bytes(token_id)]
    assert is_unreachable(tok, token_id) == expect


# ----- resolving tokens -----------------------------------------------------------------------


def test_resolve_by_id_text_and_hex(load):
    tok = load("o200k_base")
    hello = tok.rank_of(b"hello")
    assert resolve_token(tok, token_id=hello) == hello
    assert resolve_token(tok, text="hello") == hello
    assert resolve_token(tok, hex_bytes="68 65 6C 6c 6f") == hello
    assert resolve_token(tok, hex_bytes="0x68,0x65,0x6c,0x6c,0x6f") == hello
    assert resolve_token(tok, text="<|endoftext|>") == tok.special_tokens["<|endoftext|>"]
    # a partial token (not whole UTF-8) is reachable by hex only
    partial = next(r for b, r in tok.ranks.items() if b == "é".encode()[:1])
    assert resolve_token(tok, hex_bytes="c3") == partial


def test_resolve_errors_are_one_line(load):
    tok = load("o200k_base")
    cases = [
        (dict(token_id=10**7), "unknown token id"),
        (dict(token_id=-1), "unknown token id"),
        (dict(text="hello world"), "encodes to 2 tokens"),
        (dict(text=""), "encodes to 0 tokens"),
        (dict(hex_bytes="zz"), "not a hex digit"),
        (dict(hex_bytes="abc"), "odd number"),
        (dict(hex_bytes=""), "no bytes"),
        (dict(hex_bytes="68656c6c6f20776f726c64"), "not a single token"),
        ({}, "give a token id"),
    ]
    for kwargs, words in cases:
        with pytest.raises(TokscopeError, match=words) as info:
            resolve_token(tok, **kwargs)
        assert "\n" not in str(info.value)


def test_parse_hex():
    assert parse_hex("de:ad-BE EF") == b"\xde\xad\xbe\xef"
    assert parse_hex("\\x41\\x42") == b"AB"


def test_two_threads_share_one_build(load):
    base = load("gpt2")
    fresh = Tokenizer("copy", base.ranks, base.pattern)
    calls = []
    results = []

    def run():
        results.append(build_index(fresh, progress=lambda done, total: calls.append(done)))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and results[0] is results[1] is results[2]
    assert calls.count(0) == 1  # only one of them did the work


def test_used_in_before_the_index_matches_the_index(load):
    """Without the full index, "used in" of a token with uncommon bytes is answered from the
    tokens that start or end with them; it must equal the index's answer."""
    from tokscope.core.explain import merge_trees as merges

    for name in ("gpt2", "cl100k_base"):
        base = load(name)
        index = build_index(base)
        fresh = Tokenizer("copy", base.ranks, base.pattern, base.special_tokens)
        rng = random.Random(11)
        sample = rng.sample(sorted(base.ranks.values()), 150) + [base.rank_of(b" token"), base.rank_of(b"hello")]
        direct_answers = 0
        for token_id in sample:
            direct = merges._used_in_direct(fresh, token_id)
            if direct is not None:
                direct_answers += 1
                assert direct == index.uses(token_id) == used_in(fresh, token_id)
        assert direct_answers > 100 and not has_index(fresh)
        # a single common byte is too common to answer directly: it builds the index
        assert merges._used_in_direct(fresh, base.rank_of(b"e")) is None
