"""Parent recovery: every multi-byte token is the merge of exactly two lower-ranked tokens.

The default run samples 3000 tokens per encoding; bench/bench_parents.py does the full pass.
"""

from __future__ import annotations

import random

import pytest

from tokscope.core import Parents, Tokenizer


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_sampled_tokens_have_two_lower_ranked_parents(load, name):
    tok = load(name)
    multi = [rank for data, rank in tok.ranks.items() if len(data) > 1]
    for token_id in random.Random(name).sample(multi, 3000):
        parents = tok.parents(token_id)
        assert isinstance(parents, Parents), token_id
        left, right = tok.token_bytes(parents.left), tok.token_bytes(parents.right)
        assert left + right == tok.token_bytes(token_id)
        assert parents.left < token_id and parents.right < token_id
        assert tok.rank_of(left) == parents.left and tok.rank_of(right) == parents.right
        assert tok.parents(token_id) is parents  # cached


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_single_bytes_and_specials_have_no_parents(load, name):
    tok = load(name)
    for b in (0, 65, 255):
        assert tok.parents(tok.rank_of(bytes([b]))) is None
    for token_id in tok.special_tokens.values():
        assert tok.parents(token_id) is None


def test_parents_on_a_toy_vocabulary():
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5}
    tok = Tokenizer("toy", ranks, r"\w+|\W")
    assert tok.parents(3) == Parents(0, 1)
    assert tok.parents(5) == Parents(3, 2)  # ab is built before bc, so abc = ab + c
    assert tok.parents(0) is None


def test_a_token_no_single_merge_builds_has_no_parents():
    # "abc" with only a,b,c and abc: the lower ranks leave three parts, not two
    tok = Tokenizer("odd", {b"a": 0, b"b": 1, b"c": 2, b"abc": 3}, r"\w+")
    assert tok.parents(3) is None
