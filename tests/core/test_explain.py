"""The split explainer: chunks and their categories, the merge replay, why-not-one-token, variants,
and the rank cut-off (``max_rank``), on every built-in encoding."""

from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.models.ranks import merge
from tokscope.core.reference import merge_reference
from tokscope.core.text.errors import CancelledError, DisallowedSpecialError, TokscopeError
from tokscope.core.explain.ranks import (
    KNOWN_PATTERNS,
    REPLAY_BYTE_LIMIT,
    apply_steps,
    chunk_at,
    classified_chunks,
    classify_text,
    explain,
    replay,
    split_alternatives,
    variant_texts,
    why_not_one_token,
)
from tokscope.core.explain.merge_trees import full_max_rank, max_rank_for_merges, merges_kept
from tokscope.core.tokenizer.tokenizer import Tokenizer

from tokscope.sources.registry import builtin_names

OPENAI = builtin_names()

# text that exercises every alternative: contractions, letters, digits, punctuation, whitespace
TEXTS = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.sampled_from(["I", "'m", "'S", " don't", " Hello", "héllo", "日本語", " 12345", "!!", "\n\n", "  ",
                         "\t", " .", "🙂", "e\u0301", "x", "Привет", " the", "CAPS", "<|endoftext|>"]),
        max_size=12,
    ).map("".join),
)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", params=OPENAI)
def tok(request, load):
    return load(request.param)


# ----- chunks and categories ------------------------------------------------------------------


def test_every_builtin_pattern_is_known(tok):
    assert tok.pattern in KNOWN_PATTERNS
    alternatives = split_alternatives(tok.pattern)
    assert alternatives is not None and len(alternatives) == len(KNOWN_PATTERNS[tok.pattern])


@FAST
@given(text=TEXTS)
def test_classified_chunks_are_the_tokenizer_chunks(tok, text):
    items = list(classified_chunks(tok, text))
    assert [i.chunk for i in items] == tok.chunks(text)
    for item in items:
        assert item.alternative is not None  # every builtin pattern is a known alternation
        assert item.category in ("letters", "digits", "punctuation", "whitespace", "contraction")
        assert item.byte_end - item.byte_start == len(item.chunk.text.encode("utf-8"))


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("gpt2", "I'm 42!", [("I", "letters"), ("'m", "contraction"), (" 42", "digits"), ("!", "punctuation")]),
        ("cl100k_base", "x\n\n  12345", [("x", "letters"), ("\n\n", "whitespace"), (" ", "whitespace"),
                                         (" ", "whitespace"), ("123", "digits"), ("45", "digits")]),
        ("o200k_base", "It's  ok...", [("It's", "letters"), (" ", "whitespace"), (" ok", "letters"),
                                       ("...", "punctuation")]),
    ],
)
def test_categories_come_from_the_matched_alternative(load, name, text, expected):
    got = [(i.chunk.text, i.category) for i in classified_chunks(load(name), text)]
    assert got == expected


def test_byte_offsets_follow_multibyte_text(load):
    items = list(classified_chunks(load("o200k_base"), "日本 é!"))
    assert [(i.byte_start, i.byte_end) for i in items] == [(0, 6), (6, 9), (9, 10)]


def test_custom_pattern_falls_back_to_the_text(load):
    base = load("gpt2")
    custom = Tokenizer("custom", base.ranks, r"\S+|\s+")
    items = list(classified_chunks(custom, "ab 12 ?? \n"))
    assert [i.category for i in items] == ["letters", "whitespace", "digits", "whitespace", "punctuation", "whitespace"]
    assert all(i.alternative in (0, 1) for i in items)


def test_split_alternatives_respects_groups_classes_and_escapes():
    assert split_alternatives(r"a|(b|c)|[|\]]|\||x") == ["a", "(b|c)", r"[|\]]", r"\|", "x"]
    assert split_alternatives(r"(a|b") is None
    assert split_alternatives(r"(a)\1|b") is None  # a back-reference would be renumbered


def test_classify_text():
    assert [classify_text(t) for t in ["", " ", "abc", "'ll", "١٢٣", "a1", "--"]] == [
        "other", "whitespace", "letters", "contraction", "digits", "letters", "punctuation"]


def test_special_chunks_when_allowed(load):
    tok = load("cl100k_base")
    e = explain(tok, "a<|endoftext|>b", allowed_special="all")
    assert [c.category for c in e.chunks] == ["letters", "special", "letters"]
    assert list(e.tokens) == tok.encode("a<|endoftext|>b", allowed_special="all")
    with pytest.raises(DisallowedSpecialError):
        explain(tok, "a<|endoftext|>b", disallowed_special="all")
    # by default a special token's text is ordinary text, as in encode_ordinary
    assert list(explain(tok, "a<|endoftext|>b").tokens) == tok.encode_ordinary("a<|endoftext|>b")


# ----- the replay ------------------------------------------------------------------------------


@FAST
@given(text=TEXTS)
def test_replaying_the_steps_reproduces_the_encoding(tok, text):
    e = explain(tok, text, with_variants=False)
    assert list(e.tokens) == tok.encode_ordinary(text)
    for c in e.chunks:
        data = c.chunk.text.encode("utf-8")
        assert c.bytes == data
        assert apply_steps(data, c.steps) == c.parts
        assert tuple(tok.rank_of(p) for p in c.parts) == c.tokens
        parts = tuple(data[i : i + 1] for i in range(len(data)))
        for step in c.steps:
            assert step.before == parts
            allowed = [x for x in step.candidates if x.allowed]
            lowest = min(x.rank for x in allowed)
            # the lowest rank, and the leftmost of those on a tie
            assert step.rank == lowest
            assert step.position == min(x.position for x in allowed if x.rank == lowest)
            assert (step.left, step.right) == (parts[step.position], parts[step.position + 1])
            parts = step.after
        assert parts == c.parts


@FAST
@given(data=st.binary(max_size=24), cut=st.integers(min_value=0, max_value=60_000))
def test_replay_matches_core_merge_with_cutoffs(tok, data, cut):
    steps, parts = replay(data, tok.ranks, cut)
    assert list(parts) == merge(data, tok.ranks, max_rank=cut) == merge_reference(data, tok.ranks, max_rank=cut)
    assert all(s.rank < cut for s in steps)
    assert [s.rank for s in steps] == sorted(s.rank for s in steps)  # merges come in rank order here


def test_replay_tie_takes_the_leftmost():
    steps, parts = replay(b"aaaa", {b"a": 0, b"aa": 1})
    assert [s.position for s in steps] == [0, 1]
    assert parts == (b"aa", b"aa")


# ----- the rank cut-off ------------------------------------------------------------------------


@FAST
@given(text=TEXTS)
def test_cutoff_at_full_vocabulary_changes_nothing(tok, text):
    full = full_max_rank(tok)
    assert tok.encode_ordinary(text, max_rank=full) == tok.encode_ordinary(text)
    assert list(explain(tok, text, max_rank=full, with_variants=False).tokens) == tok.encode_ordinary(text)


@FAST
@given(text=TEXTS)
def test_cutoff_zero_gives_single_bytes(tok, text):
    pieces = tok.pieces(text, max_rank=0, disallowed_special=())
    assert all(len(p.bytes) == 1 for p in pieces)
    assert b"".join(p.bytes for p in pieces) == text.encode("utf-8")
    e = explain(tok, text, max_rank=0, with_variants=False)
    assert all(not c.steps and all(len(p) == 1 for p in c.parts) for c in e.chunks)


def test_first_merges_are_ranks_256_up(tok):
    assert merges_kept(tok, 0) == merges_kept(tok, 256) == 0
    assert merges_kept(tok, 256 + 10) == 10
    assert merges_kept(tok, None) == merges_kept(tok, full_max_rank(tok)) == tok.n_merges
    assert max_rank_for_merges(tok, 10) == 266
    assert max_rank_for_merges(tok, tok.n_merges) is None


def test_cutoff_makes_words_assemble(load):
    tok = load("gpt2")
    sizes = [len(explain(tok, " tokenization", max_rank=r, with_variants=False).tokens)
             for r in (0, 300, 1000, 12000, None)]
    assert sizes[0] == len(b" tokenization")
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0]


def test_negative_cutoff_is_refused(load):
    with pytest.raises(TokscopeError, match="0 or more"):
        explain(load("gpt2"), "x", max_rank=-1)


# ----- why not one token ----------------------------------------------------------------------


def test_why_one_token(load):
    tok = load("o200k_base")
    (c,) = explain(tok, "hello").chunks
    assert c.why.one_token and c.why.token == tok.encode("hello")[0]
    assert "one token" in c.why.summary and not c.why.missing


def test_why_not_a_token_names_the_missing_merge(load):
    tok = load("gpt2")
    (c,) = explain(tok, " tokenizers").chunks
    why = c.why
    assert not why.one_token and why.token is None
    assert len(why.missing) == len(c.parts) - 1
    for m in why.missing:
        assert tok.rank_of(m.left + m.right) is None and m.rank is None
    data = b" tokenizers"
    prefix = why.longest_prefix
    assert data.startswith(prefix) and why.longest_prefix_id == tok.rank_of(prefix) is not None
    assert all(tok.rank_of(data[:n]) is None for n in range(len(prefix) + 1, len(data) + 1))
    assert "no token has the bytes" in why.summary


def test_why_blocked_by_the_cutoff(load):
    tok = load("gpt2")
    (c,) = explain(tok, "hello", max_rank=300).chunks
    assert c.why.blocked_by_cutoff and c.why.token == tok.rank_of(b"hello")
    assert "cut-off 300" in c.why.summary
    assert all(m.rank is None or m.rank >= 300 for m in c.why.missing)


def test_why_unreachable_token():
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"d": 3, b"bc": 4, b"ab": 5, b"cd": 6, b"abcd": 7}
    tok = Tokenizer("t", ranks, r"\w+")
    steps, parts = replay(b"abcd", ranks)
    assert parts == (b"a", b"bc", b"d")
    why = why_not_one_token(tok, b"abcd", parts)
    assert why.unreachable and why.token == 7 and not why.one_token
    assert "unreachable" in why.summary


# ----- variants --------------------------------------------------------------------------------


def test_variants_are_encoded_as_the_core_does(load):
    tok = load("cl100k_base")
    (c,) = explain(tok, " Hello").chunks
    texts = [v.text for v in c.variants]
    assert texts[:2] == ["Hello", " Hello"] and "HELLO" in texts and "\nHello" in texts and "Hello." in texts
    assert len(texts) == len(set(texts))
    for v in c.variants:
        assert list(v.tokens) == tok.encode_ordinary(v.text)
        assert b"".join(v.parts) == v.text.encode()
    # "Hello" and " Hello" are different tokens
    assert c.variants[0].tokens != c.variants[1].tokens


def test_whitespace_has_no_variants():
    assert variant_texts("   ") == []


# ----- misc ------------------------------------------------------------------------------------


def test_long_chunks_skip_the_replay_but_stay_exact(load):
    tok = load("gpt2")
    text = "a" * (REPLAY_BYTE_LIMIT + 10)
    (c,) = explain(tok, text, with_variants=False).chunks
    assert not c.replayed and not c.steps and list(c.tokens) == tok.encode(text)


def test_cancel_and_progress(load):
    tok = load("gpt2")
    seen = []
    explain(tok, "a b c", progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (5, 5)
    stop = threading.Event()
    stop.set()
    with pytest.raises(CancelledError):
        explain(tok, "a b c", cancel=stop)


def test_chunk_at(load):
    tok = load("gpt2")
    assert chunk_at(tok, "hello world", 7).chunk.text == " world"
    assert chunk_at(tok, "hello world", 0).chunk.text == "hello"
    assert chunk_at(tok, "hello world", 11).chunk.text == " world"
    assert chunk_at(tok, "", 0) is None


def test_alternatives_follow_the_tokenizers_own_matching(load):
    """A character newer than the pattern's Unicode version (and ``$`` before a final newline)
    must split exactly as the tokenizer splits it, with the alternative still known."""
    for name in ("o200k_base", "cl100k_base", "gpt2"):
        tok = load(name)
        for text in ["\U000323b0:", "a  \n", "x \n\n"]:
            items = list(classified_chunks(tok, text))
            assert [i.chunk for i in items] == tok.chunks(text)
            assert all(i.alternative is not None for i in items)


def test_longest_prefix_respects_the_cutoff(load):
    tok = load("gpt2")
    (c,) = explain(tok, " tokenizers", max_rank=2000).chunks
    assert c.why.longest_prefix_id is not None and c.why.longest_prefix_id < 2000


def test_the_cut_off_is_named_when_it_stops_merging():
    from tokscope.core.explain.ranks import why_not_one_token
    from tokscope.core.tokenizer.tokenizer import Tokenizer

    tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256, b"cd": 257}, r"\w+")
    data = b"abcd"
    without = why_not_one_token(tok, data, (b"ab", b"cd"))
    assert "because no adjacent pair of them is a token" not in without.summary
    cut = why_not_one_token(tok, data, (b"a", b"b", b"c", b"d"), max_rank=256)
    assert cut.summary.startswith('no token has the bytes "abcd": merging stops at 4 parts')
    assert '"a" + "b" is token 256, "c" + "d" is token 257, at or above the cut-off 256' in cut.summary
    none = why_not_one_token(tok, b"xyz", (b"x", b"y", b"z"), max_rank=256)
    assert "because no adjacent pair of them is a token" in none.summary
