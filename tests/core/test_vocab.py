"""Vocabulary search: substring, regex, hex and id; sorting, limits, errors."""

from __future__ import annotations

import threading

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.text.errors import CancelledError, TokscopeError, UnknownTokenError
from tokscope.core.tokenizer.tokenizer import Tokenizer
from tokscope.core.explain.vocab_search import compile_search, search_vocab

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def gpt2(load):
    return load("gpt2")


def _all(tok):
    out = {data: rank for data, rank in tok.ranks.items()}
    out.update({text.encode(): i for text, i in tok.special_tokens.items()})
    return out


@FAST
@given(needle=st.text(alphabet="abeinorst .", min_size=1, max_size=3))
def test_substring_finds_exactly_the_tokens_containing_it(gpt2, needle):
    result = search_vocab(gpt2, substring=needle, limit=None)
    expected = sorted(i for data, i in _all(gpt2).items() if needle.encode() in data)
    assert [t.id for t in result.tokens] == expected
    assert result.total == len(expected) and not result.truncated


def test_regex_searches_the_decoded_text(gpt2):
    result = search_vocab(gpt2, pattern=r"^ [A-Z][a-z]+ing$", limit=None)
    assert result.total > 50
    pat = regex.compile(r"^ [A-Z][a-z]+ing$")
    expected = sorted(i for data, i in _all(gpt2).items() if pat.search(data.decode("utf-8", "replace")))
    assert [t.id for t in result.tokens] == expected


def test_hex_and_id(gpt2):
    result = search_vocab(gpt2, hex_bytes="e2 80", limit=None)  # the lead of ’ “ ” …
    expected = sorted(i for data, i in gpt2.ranks.items() if b"\xe2\x80" in data)
    assert result.total > 0 and [t.id for t in result.tokens] == expected
    (token,) = search_vocab(gpt2, token_id=50256).tokens
    assert token.special and token.bytes == b"<|endoftext|>" and token.rank is None
    (token,) = search_vocab(gpt2, token_id=31373).tokens
    assert token.bytes == b"hello" and token.rank == 31373


def test_sort_by_length_and_limit(gpt2):
    result = search_vocab(gpt2, substring="ing", sort="length", limit=10)
    assert len(result.tokens) == 10 and result.truncated and result.total > 10
    keys = [(-len(t.bytes), t.id) for t in result.tokens]
    assert keys == sorted(keys)
    everything = search_vocab(gpt2, substring="ing", sort="length", limit=None)
    assert everything.tokens[:10] == result.tokens
    by_id = search_vocab(gpt2, substring="ing", limit=5)
    assert [t.id for t in by_id.tokens] == sorted(t.id for t in everything.tokens)[:5]


def test_no_query_lists_the_vocabulary(gpt2):
    result = search_vocab(gpt2, limit=3)
    assert [t.id for t in result.tokens] == [0, 1, 2] and result.total == gpt2.n_vocab
    assert search_vocab(gpt2, limit=0).tokens == ()
    assert search_vocab(gpt2, include_special=False).total == gpt2.n_vocab - 1


def test_errors(gpt2):
    with pytest.raises(TokscopeError, match="invalid regular expression"):
        search_vocab(gpt2, pattern="a(")
    with pytest.raises(TokscopeError, match="invalid hex"):
        search_vocab(gpt2, hex_bytes="xyz")
    with pytest.raises(UnknownTokenError):
        search_vocab(gpt2, token_id=60000)
    with pytest.raises(TokscopeError, match="one thing at a time"):
        search_vocab(gpt2, substring="a", pattern="b")
    with pytest.raises(TokscopeError, match="sort"):
        search_vocab(gpt2, sort="size")  # type: ignore[arg-type]
    with pytest.raises(TokscopeError, match="limit"):
        search_vocab(gpt2, limit=-1)
    with pytest.raises(TokscopeError) as info:
        compile_search("[")
    assert "\n" not in str(info.value)


def test_cancel(gpt2):
    stop = threading.Event()
    stop.set()
    with pytest.raises(CancelledError):
        search_vocab(gpt2, pattern="a", cancel=stop)


def test_partial_tokens_are_found_by_hex_not_lost():
    tok = Tokenizer("t", {b"\xc3": 0, b"\xa9": 1, b"\xc3\xa9": 2, b"a": 3}, r"\X")
    assert [t.id for t in search_vocab(tok, hex_bytes="c3").tokens] == [0, 2]
    assert [t.id for t in search_vocab(tok, pattern="\ufffd").tokens] == [0, 1]
    assert [t.id for t in search_vocab(tok, substring="é").tokens] == [2]


def test_results_are_in_id_order_even_with_specials_inside_the_ranks(load):
    tok = load("p50k_edit")  # <|endoftext|> is 50256, between mergeable ranks
    ids = [t.id for t in search_vocab(tok, limit=None).tokens]
    assert ids == sorted(ids) and len(ids) == len(tok.ranks) + len(tok.special_tokens)
    found = [t.id for t in search_vocab(tok, substring="<|", limit=None).tokens]
    assert found == sorted(found) and 50256 in found


@FAST
@given(needle=st.sampled_from([" ", "e", "in", "\n", "é"]))
def test_dense_and_sparse_substring_paths_agree(gpt2, needle):
    expected = sorted(i for data, i in _all(gpt2).items() if needle.encode() in data)
    assert [t.id for t in search_vocab(gpt2, substring=needle, limit=None).tokens] == expected
