"""The fast merge equals the reference merge (the oracle) on random vocabularies and real ones."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core import merge
from tokscope.core.reference import merge_reference
from tokscope.core.models.ranks import HEAP_THRESHOLD


@st.composite
def vocab_and_data(draw):
    alphabet = draw(st.lists(st.binary(min_size=1, max_size=1), min_size=1, max_size=4, unique=True))
    ranks = {b: i for i, b in enumerate(alphabet)}
    for _ in range(draw(st.integers(0, 30))):
        a = draw(st.sampled_from(sorted(ranks)))
        b = draw(st.sampled_from(sorted(ranks)))
        if len(a + b) <= 8:
            ranks.setdefault(a + b, len(ranks))
    data = draw(st.lists(st.sampled_from(alphabet), max_size=300).map(b"".join))
    max_rank = draw(st.none() | st.integers(0, len(ranks)))
    return ranks, data, max_rank


@settings(max_examples=150, deadline=None)
@given(vocab_and_data())
def test_merge_equals_reference(case):
    ranks, data, max_rank = case
    want = merge_reference(data, ranks, max_rank)
    assert merge(data, ranks, max_rank) == want
    assert b"".join(want) == data


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_merge_on_real_vocabularies_short_and_heap_paths(load, name):
    ranks = load(name).ranks
    rnd = random.Random(7)
    words = ["tokenization", "    ", "1234567890", "ünïcödé", "日本語のテキスト", "a" * 40, "!!!???..."]
    for _ in range(25):
        text = "".join(rnd.choice(words) for _ in range(rnd.randint(1, 15)))
        data = text.encode()
        assert merge(data, ranks) == merge_reference(data, ranks)
        cut = rnd.randint(256, 5000)
        assert merge(data, ranks, cut) == merge_reference(data, ranks, cut)
    long = ("日本語" * 100).encode()
    assert len(long) >= HEAP_THRESHOLD
    assert merge(long, ranks) == merge_reference(long, ranks)


def test_edge_cases():
    assert merge(b"", {}) == [] and merge_reference(b"", {}) == []
    assert merge(b"x", {}) == [b"x"]
    assert merge(b"ab", {b"a": 0, b"b": 1}) == [b"a", b"b"]
    # ties: the leftmost pair of equal rank merges first
    assert merge(b"aaa", {b"a": 0, b"aa": 1}) == merge_reference(b"aaa", {b"a": 0, b"aa": 1}) == [b"aa", b"a"]
