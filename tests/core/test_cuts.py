"""Cutting text: to a budget of tokens without splitting a character (truncate), and into parts that
encode apart to the same ids (the parallel count)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.document import cuts
from tokscope.core.document.cuts import can_split, char_boundary, keep_prefix, keep_suffix, parts, truncate
from tokscope.core.text.errors import DisallowedSpecialError
from tokscope.core.patterns.tiktoken_syntax import compile_pattern

#: pieces of text that tokenizers cut in interesting ways: emoji (gpt2 splits them into bytes), a
#: ZWJ family, CJK, combining marks, digits, whitespace runs, line breaks, code
PIECES = ["Hello", " world", " ", "  ", "\n", "\n\n", "\r\n", "\t", "👩‍👩‍👧", "👍", "🏳️‍🌈", "日本語", "の", "テキスト",
          "é", "e\u0301", "naïve", "1234567", "'s", "don't", " tokenization", "def f(x):", "    return", "//", "ü",
          "\u00a0", "\u3000", "Ω", "x"]
texts = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)
budgets = st.integers(min_value=0, max_value=30)
NAMES = ["gpt2", "cl100k_base", "o200k_base"]


def test_char_boundary_and_the_pure_cuts():
    data = "a👍b".encode()
    assert [char_boundary(data, i) for i in range(len(data) + 1)] == [True, True, False, False, False, True, True]
    ends, starts = [1, 3, 5, 6], [0, 1, 3, 5]
    assert [keep_prefix(ends, data, n) for n in range(6)] == [0, 1, 1, 3, 4, 4]
    assert [keep_suffix(starts, data, n) for n in range(6)] == [4, 3, 3, 1, 0, 0]
    assert keep_prefix([], b"", 5) == 0 and keep_suffix([], b"", 5) == 0
    assert keep_prefix(ends, data, -1) == 0 and keep_suffix(starts, data, -1) == 4


def _check_prefix(tok, text, n, got):
    """The kept text is the longest prefix at a token boundary of the whole text's tokens that splits
    no character and encodes again to at most n tokens."""
    assert text.startswith(got.text) and got.start == 0 and got.end == len(got.text)
    assert got.ids == tok.encode(got.text, disallowed_special=())
    assert len(got.ids) <= n
    ids = tok.encode(text, disallowed_special=())
    data = text.encode()
    ends, total = [], 0
    for i in ids:
        total += len(tok.token_bytes(i))
        ends.append(total)
    kept = len(got.text.encode())
    assert kept == 0 or kept in ends  # on a token boundary of the whole text
    assert got.truncated == (kept < len(data))
    for k in range(len(ids)):
        if ends[k] <= kept or k + 1 > n:
            continue
        # a longer cut at most n tokens: it splits a character or does not encode again within n
        longer = data[: ends[k]]
        assert not char_boundary(data, ends[k]) or len(tok.encode(longer.decode(), disallowed_special=())) > n


def _check_suffix(tok, text, n, got):
    assert text.endswith(got.text) and got.end == len(text) and got.start == len(text) - len(got.text)
    assert got.ids == tok.encode(got.text, disallowed_special=())
    assert len(got.ids) <= n
    ids = tok.encode(text, disallowed_special=())
    data = text.encode()
    starts, total = [], 0
    for i in ids:
        starts.append(total)
        total += len(tok.token_bytes(i))
    kept = len(data) - len(got.text.encode())
    assert kept == len(data) or kept in starts
    for j, s in enumerate(starts):
        if s >= kept or len(ids) - j > n:
            continue
        assert not char_boundary(data, s) or len(tok.encode(data[s:].decode(), disallowed_special=())) > n


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, n=budgets)
def test_truncate_never_splits_a_character_and_keeps_the_longest_prefix(load, name, text, n):
    tok = load(name)
    got = truncate(tok, text, n, disallowed_special=())
    _check_prefix(tok, text, n, got)
    got = truncate(tok, text, n, from_end=True, disallowed_special=())
    _check_suffix(tok, text, n, got)


def test_text_within_the_budget_is_unchanged_and_zero_keeps_nothing(load):
    tok = load("o200k_base")
    text = "  trailing spaces\r\nand CRLF\t \n\n"
    for from_end in (False, True):
        got = truncate(tok, text, 10_000, from_end=from_end)
        assert got.text is text or got.text == text
        assert not got.truncated and got.ids == tok.encode(text)
        empty = truncate(tok, text, 0, from_end=from_end)
        assert empty.text == "" and empty.ids == [] and empty.truncated
    assert truncate(tok, "", 0).text == "" and not truncate(tok, "", 0).truncated
    with pytest.raises(ValueError):
        truncate(tok, text, -1)


def test_an_emoji_cut_in_bytes_is_cut_before_the_character(load):
    tok = load("gpt2")  # 👍 is three byte-level tokens in gpt2
    ids = tok.encode("a👍")
    assert len(ids) > 2
    assert truncate(tok, "a👍", 2).text == "a"
    assert truncate(tok, "a👍", len(ids)).text == "a👍"
    assert truncate(tok, "👍a", 2, from_end=True).text == "a"


def test_special_tokens_as_encode_treats_them(load):
    tok = load("o200k_base")
    text = "one <|endoftext|> two three"
    with pytest.raises(DisallowedSpecialError):
        truncate(tok, text, 2)
    with pytest.raises(DisallowedSpecialError):  # the whole text is checked, not only the kept part
        truncate(tok, "one two " + "<|endoftext|>", 1)
    got = truncate(tok, text, 3, allowed_special="all")
    assert got.ids == tok.encode(got.text, allowed_special="all")
    assert got.text == "one <|endoftext|>" and tok.special_tokens["<|endoftext|>"] in got.ids
    as_text = truncate(tok, text, 3, disallowed_special=())
    assert len(as_text.ids) <= 3 and as_text.text.startswith("one")


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("from_end", [False, True])
def test_a_big_text_is_truncated_from_its_head_or_tail_alone(load, monkeypatch, name, from_end):
    """Only a window of a big text is encoded; the result is the one the whole text gives."""
    tok = load(name)
    lines = [f"line {i}: {PIECES[i % len(PIECES)]} the quick brown fox 👍 日本語\n" for i in range(4000)]
    text = "".join(lines)
    for n in (0, 1, 7, 500, 3000):
        fast = truncate(tok, text, n, from_end=from_end)
        monkeypatch.setattr(cuts, "can_split", lambda t: False)
        slow = truncate(tok, text, n, from_end=from_end)
        monkeypatch.undo()
        assert fast == slow


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(st.sampled_from(PIECES + ["\n/", "\n ", "\n<|endoftext|>"]), max_size=40).map("".join),
       size=st.integers(min_value=1, max_value=40))
def test_parts_encode_apart_to_the_ids_of_the_whole(load, name, text, size):
    tok = load(name)
    spans = parts(tok, text, size)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a < b or len(text) == 0 for a, b in spans)
    assert all(spans[k][1] == spans[k + 1][0] for k in range(len(spans) - 1))
    for special in ({"disallowed_special": ()}, {"allowed_special": "all"}):
        joined = [i for a, b in spans for i in tok.encode(text[a:b], **special)]
        assert joined == tok.encode(text, **special)
    assert [i for a, b in spans for i in tok.encode_ordinary(text[a:b])] == tok.encode_ordinary(text)


def test_only_line_safe_byte_level_bpe_is_split(load):
    assert can_split(load("o200k_base")) and can_split(load("cl100k_base"))
    assert not can_split(load("gpt2"))  # its pattern's "\s+(?!\S)" sees past a line break
    text = "a\nb\n" * 100
    assert parts(load("gpt2"), text, 4) == [(0, len(text))]


def test_next_and_prev_cut_are_segment_boundaries(load):
    pattern = compile_pattern(load("o200k_base").pattern)
    text = "a\n b\n/c\nd\n\ne\n"
    bounds = set()
    pos = 0
    for segment in pattern.segments(text):
        pos += len(segment)
        bounds.add(pos)
    bounds.discard(len(text))
    found = {pattern.next_cut(text, i) for i in range(len(text) + 1)} - {None}
    assert found == bounds
    assert {pattern.prev_cut(text, i) for i in range(len(text) + 1)} - {None} == bounds
    for i in range(len(text) + 1):
        nxt, prev = pattern.next_cut(text, i), pattern.prev_cut(text, i)
        assert nxt is None or nxt >= i
        assert prev is None or prev <= i
