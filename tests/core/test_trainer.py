"""The BPE trainer: known answers worked out by hand, the incremental trainer against the naive
oracle (random corpora and the samples, every pattern, both tie rules), progress, cancellation,
the sweep, and bad options."""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.text.errors import CancelledError, TokscopeError
from tokscope.core.train.trainer import (
    PATTERN_NONE,
    PATTERN_WORDS,
    TrainingError,
    chunk_table,
    crosses_word,
    replay,
    sweep,
    train,
)
from tokscope.core.reference import train_naive
from tokscope.sample_texts import samples_dir
from tokscope.sources.names import pattern_for

slow = pytest.mark.skipif(os.environ.get("TOKSCOPE_SLOW") != "1", reason="slow: set TOKSCOPE_SLOW=1")


def merged(result):
    return [(m.left, m.right, m.count) for m in result.merges]


# ----- known answers, worked out by hand ---------------------------------------------------------------

# "aaabdaaabac" as one chunk (pattern none). Pairs: aa x4 (overlapping: positions 0,1,5,6),
# ab x2, bd, da, ba, ac x1.
#   merge 1: a+a (4) -> aa a b d aa a b a c            (11 -> 9 tokens: two joins in each "aaa")
#   pairs now: (aa,a) x2 first at byte 0, (a,b) x2 first at byte 2, the rest x1
#   tie "first":   (aa,a) -> aaa b d aaa b a c         (9 -> 7)   then (aaa,b) x2 -> aaab (7 -> 5)
#   tie "lexical": b"a" < b"aa", so (a,b) -> aa ab d aa ab a c (9 -> 7) then (aa,ab) x2 -> aaab (5)
WIKI = "aaabdaaabac"


def test_wikipedia_example_tie_first():
    r = train(WIKI, merges=3, pattern=PATTERN_NONE, tie="first")
    assert merged(r) == [(b"a", b"a", 4), (b"aa", b"a", 2), (b"aaa", b"b", 2)]
    assert [m.id for m in r.merges] == [256, 257, 258]
    assert [(m.left_id, m.right_id) for m in r.merges] == [(97, 97), (256, 97), (257, 98)]
    assert r.lengths == (11, 9, 7, 5)
    assert r.stop_reason == "target" and not r.stopped_early


def test_wikipedia_example_tie_lexical():
    r = train(WIKI, merges=3, pattern=PATTERN_NONE, tie="lexical")
    assert merged(r) == [(b"a", b"a", 4), (b"a", b"b", 2), (b"aa", b"ab", 2)]
    assert r.lengths == (11, 9, 7, 5)


def test_early_stop_min_frequency_and_exhaustion():
    # after the three merges above: aaab d aaab a c, every pair occurs once
    r = train(WIKI, merges=10, pattern=PATTERN_NONE)
    assert len(r.merges) == 3 and r.stop_reason == "min_frequency" and r.stopped_early
    assert "stopped after 3 of 10 merges" in r.stop_message
    # with min_frequency 1 the ties go left to right until the chunk is one token
    r = train(WIKI, merges=10, pattern=PATTERN_NONE, min_frequency=1)
    assert [m.bytes for m in r.merges[3:]] == [b"aaabd", b"aaabdaaab", b"aaabdaaaba", b"aaabdaaabac"]
    assert r.lengths == (11, 9, 7, 5, 4, 3, 2, 1)
    assert r.stop_reason == "exhausted"
    # min_frequency 3: the first pair (aa x4) passes, the next best (x2) does not
    r = train(WIKI, merges=10, pattern=PATTERN_NONE, min_frequency=3)
    assert merged(r) == [(b"a", b"a", 4)] and r.stop_reason == "min_frequency"


#: Runs of non-whitespace, the whitespace between them dropped: the pattern the known answers below
#: were worked out with (the named "words" pattern keeps whitespace as chunks since issue 13).
NONSPACE = r"\S+"

# Sennrich et al.'s corpus with runs of non-space: low x5, lower x2, newest x6, widest x3.
# Pair counts: es 9, st 9, we 8, lo 7, ow 7, ne 6, ew 6, wi 3, id 3, de 3, er 2.
#   1. (e,s) 9: tie with (s,t) 9; first: "newest" is chunk 2, e-s at byte 3 < s-t at byte 4;
#      lexical: b"e" < b"s".                         79 -> 70 tokens
#   2. (es,t) 9                                      70 -> 61
#   3. (l,o) 7: tie with (o,w); first at byte 0 of "low"; lexical b"l" < b"o".   61 -> 54
#   4. (lo,w) 7                                      54 -> 47
#   now newest = n e w est: (n,e) 6, (e,w) 6, (w,est) 6 tie
#   first:   (n,e) at byte 0 -> (ne,w) at byte 0 beats (w,est) at byte 2 -> (new,est)
#   lexical: (e,w) since b"e" < b"n" < b"w" -> (ew,est) beats (n,ew) -> (n,ewest)
#   each of the last three joins 6 pairs:           47 -> 41 -> 35 -> 29
SENNRICH = " ".join(["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3)


def test_sennrich_example_both_tie_rules():
    common = [(b"e", b"s", 9), (b"es", b"t", 9), (b"l", b"o", 7), (b"lo", b"w", 7)]
    first = train(SENNRICH, merges=7, pattern=NONSPACE, tie="first")
    assert merged(first) == common + [(b"n", b"e", 6), (b"ne", b"w", 6), (b"new", b"est", 6)]
    lexical = train(SENNRICH, merges=7, pattern=NONSPACE, tie="lexical")
    assert merged(lexical) == common + [(b"e", b"w", 6), (b"ew", b"est", 6), (b"n", b"ewest", 6)]
    assert first.lengths == lexical.lengths == (79, 70, 61, 54, 47, 41, 35, 29)
    assert first.stats.chunks == 16 and first.stats.unique_chunks == 4
    assert first.stats.chunk_chars == 79 and first.stats.chars == len(SENNRICH)


def test_first_occurrence_follows_corpus_order_not_frequency_order():
    # (x,y) and (a,b) both occur twice; "xy" appears first in the corpus
    r = train("xy ab ab xy", merges=1, pattern=NONSPACE, tie="first")
    assert merged(r) == [(b"x", b"y", 2)]
    r = train("xy ab ab xy", merges=1, pattern=NONSPACE, tie="lexical")
    assert merged(r) == [(b"a", b"b", 2)]
    # across texts: the first text comes first
    r = train(["cd", "ab ab cd"], merges=1, pattern=NONSPACE, tie="first")
    assert merged(r) == [(b"c", b"d", 2)]


def test_overlapping_pairs_count_each_position_and_merge_left_to_right():
    # "aaaa": (a,a) at 0,1,2 -> count 3; merging left to right gives aa aa; then (aa,aa) once
    r = train("aaaa", merges=5, pattern=PATTERN_NONE, min_frequency=1)
    assert merged(r) == [(b"a", b"a", 3), (b"aa", b"aa", 1)]
    assert r.lengths == (4, 2, 1) and r.stop_reason == "exhausted"
    # "aaa": count 2, but only one join fits: aa a
    r = train("aaa", merges=1, pattern=PATTERN_NONE)
    assert merged(r) == [(b"a", b"a", 2)] and r.lengths == (3, 2)


def test_merges_never_cross_chunks():
    # with runs of non-space "b a" never meets; with none the pair (ab, " ") is learned:
    # ab|_|ab|_|ab has (ab,_) x2 at byte 0 and (_,ab) x2 at byte 2; then ab_|ab_|ab has
    # (ab_,ab_) and (ab_,ab) once each, below the minimum frequency
    words = train("ab ab ab", merges=3, pattern=NONSPACE, min_frequency=1)
    assert [m.bytes for m in train("ab ab ab", merges=3, pattern=PATTERN_WORDS, min_frequency=1).merges] == [b"ab"]
    assert [m.bytes for m in words.merges] == [b"ab"]
    assert words.stop_reason == "exhausted"
    plain = train("ab ab ab", merges=3, pattern=PATTERN_NONE)
    assert merged(plain) == [(b"a", b"b", 3), (b"ab", b" ", 2)]
    assert plain.stop_reason == "min_frequency" and plain.lengths == (8, 5, 3)


def test_multibyte_text_is_learned_as_bytes():
    # "é" is two bytes c3 a9; four of them in two chunks
    r = train("éé éé", merges=2, pattern=NONSPACE)
    assert merged(r) == [(b"\xc3", b"\xa9", 4), ("é".encode(), "é".encode(), 2)]
    assert r.stats.chunk_chars == 4 and r.stats.chunk_bytes == 8 and r.lengths == (8, 4, 2)


def test_special_tokens_are_cut_out_and_numbered_after_the_merges():
    text = "ab<eos>ab<eos>ab<|endoftext|>"
    r = train(text, merges=5, pattern=PATTERN_NONE, special_tokens=["<eos>", "<|endoftext|>"])
    assert merged(r) == [(b"a", b"b", 3)]  # "<eos>" is never learned, and nothing crosses it
    assert r.special_tokens == {"<eos>": 257, "<|endoftext|>": 258}
    assert r.stats.specials_removed == 3 and r.stats.chunks == 3
    assert r.n_vocab == 259 and r.vocab_size == 257
    tok = r.tokenizer("t")
    assert tok.encode(text, allowed_special="all") == [256, 257, 256, 257, 256, 258]
    # ordinary text that looks like a special token is never the special token
    assert 257 not in tok.encode_ordinary("<eos>")


def test_vocab_size_counts_bytes_plus_merges():
    r = train(SENNRICH, vocab_size=258, pattern=NONSPACE)
    assert len(r.merges) == 2 and r.vocab_size == 258 and r.requested_merges == 2
    r = train(SENNRICH, vocab_size=256, pattern=NONSPACE)
    assert r.merges == () and r.lengths == (79,)


def test_chunk_table_counts_distinct_chunks_in_first_appearance_order():
    table = chunk_table(["b a b", "c a"], NONSPACE)
    assert table.chunks == (b"b", b"a", b"c") and table.freqs == (2, 2, 1)
    assert table.stats.texts == 2 and table.stats.chars == 8 and table.stats.chunk_chars == 5
    # a pattern that can match the empty string yields no empty chunks
    assert chunk_table("ab  c", r"\w*").chunks == (b"ab", b"c")


def test_replay_shows_the_training_segmentation():
    r = train(WIKI, merges=3, pattern=PATTERN_NONE)
    steps = [b"|".join(step[0]) for step in replay(r, WIKI)]
    assert steps == [b"a|a|a|b|d|a|a|a|b|a|c", b"aa|a|b|d|aa|a|b|a|c", b"aaa|b|d|aaa|b|a|c", b"aaab|d|aaab|a|c"]


def test_crosses_word():
    assert [crosses_word(t) for t in (b" the", b"the ", b"e t", b"  ", b"a\nb", b"\n\n")] == [
        False, True, True, False, True, False]


# ----- the sweep ------------------------------------------------------------------------------------


def test_sweep_reads_the_lengths():
    r = train(SENNRICH, merges=7, pattern=NONSPACE)
    points = sweep(r, [256, 258, 263])
    assert [(p.vocab_size, p.merges, p.tokens) for p in points] == [(256, 0, 79), (258, 2, 61), (263, 7, 29)]
    assert points[-1].chars_per_token == pytest.approx(79 / 29)
    assert len(sweep(r)) == 8
    with pytest.raises(TrainingError, match="outside"):
        sweep(r, [264])
    with pytest.raises(TrainingError, match="outside"):
        sweep(r, [255])


def _sample_texts(names=("prose.txt", "code.py", "data.json", "numbers.txt", "multiscript.txt")):
    return [(samples_dir() / n).read_text(encoding="utf-8") for n in names]


def test_sweep_equals_encoding_with_the_first_merges():
    """The training segmentation is what the tokenizer produces with ranks below the size."""
    texts = _sample_texts()
    for pattern in ("gpt2", "none"):
        regex_str, name = pattern_for(pattern)
        r = train(texts, merges=300, pattern=regex_str, pattern_name=name)
        tok = r.tokenizer()
        for point in sweep(r, [256, 300, 400, r.vocab_size]):
            encoded = sum(len(tok.encode_ordinary(t, max_rank=point.vocab_size)) for t in texts)
            assert encoded == point.tokens


# ----- incremental == naive ---------------------------------------------------------------------------

PATTERNS = ["none", "words", "gpt2", "cl100k", "o200k", r"\w+|\W"]


@pytest.mark.parametrize("tie", ["first", "lexical"])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_incremental_equals_naive_on_samples(pattern, tie):
    texts = _sample_texts(("prose.txt", "code.py", "languages/ja.txt", "languages/ru.txt"))
    regex_str, name = pattern_for(pattern)
    fast = train(texts, merges=150, pattern=regex_str, tie=tie, min_frequency=2)
    naive = train_naive(texts, merges=150, pattern=regex_str, tie=tie, min_frequency=2)
    assert fast == naive
    assert len(fast.merges) == 150


@slow
@pytest.mark.parametrize("tie", ["first", "lexical"])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_incremental_equals_naive_on_all_samples_long(pattern, tie):
    texts = [p.read_text(encoding="utf-8") for p in sorted(samples_dir().rglob("*"))
             if p.suffix in (".txt", ".py", ".json")]
    regex_str, _ = pattern_for(pattern)
    assert train(texts, merges=1200, pattern=regex_str, tie=tie, min_frequency=1) == train_naive(
        texts, merges=1200, pattern=regex_str, tie=tie, min_frequency=1)


corpora = st.lists(st.text(alphabet="aab c\nd", max_size=40), min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    texts=corpora,
    pattern=st.sampled_from([PATTERN_NONE, PATTERN_WORDS, r"a+|[^a]", r" ?\w+|\s+"]),
    tie=st.sampled_from(["first", "lexical"]),
    min_frequency=st.integers(1, 3),
    n=st.integers(0, 25),
)
def test_incremental_equals_naive_on_random_corpora(texts, pattern, tie, min_frequency, n):
    try:
        fast = train(texts, merges=n, pattern=pattern, tie=tie, min_frequency=min_frequency)
    except TrainingError as exc:
        assert "empty" in str(exc)
        with pytest.raises(TrainingError):
            train_naive(texts, merges=n, pattern=pattern, tie=tie, min_frequency=min_frequency)
        return
    naive = train_naive(texts, merges=n, pattern=pattern, tie=tie, min_frequency=min_frequency)
    assert fast == naive
    # every merge makes new bytes, ids are consecutive, counts never rise... and lengths fall
    assert len({m.bytes for m in fast.merges}) == len(fast.merges)
    assert [m.id for m in fast.merges] == list(range(256, 256 + len(fast.merges)))
    assert all(m.count >= min_frequency for m in fast.merges)
    assert all(a > b for a, b in zip(fast.lengths, fast.lengths[1:]))
    # the tokenizer built from the result encodes the corpus to the trained length
    tok = fast.tokenizer()
    assert sum(len(tok.encode_ordinary(t)) for t in texts) == fast.lengths[-1]


# ----- progress and cancellation -----------------------------------------------------------------------


def test_progress_reports_every_merge():
    seen = []
    r = train(SENNRICH, merges=7, pattern=NONSPACE, progress=seen.append)
    assert [p.merges_done for p in seen] == list(range(8))
    assert all(p.merges_total == 7 for p in seen)
    assert [(p.left, p.right, p.count) for p in seen[1:]] == merged(r)
    assert [p.tokens for p in seen] == list(r.lengths)


def test_cancel_stops_training():
    cancel = threading.Event()

    def progress(p):
        if p.merges_done == 3:
            cancel.set()

    with pytest.raises(CancelledError):
        train(SENNRICH, merges=7, pattern=NONSPACE, progress=progress, cancel=cancel)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        train(SENNRICH, merges=7, pattern=NONSPACE, cancel=cancel)


# ----- bad options and corpora ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vocab_size": 100}, "at least 256"),
        ({"vocab_size": 300, "merges": 3}, "exactly one"),
        ({}, "exactly one"),
        ({"merges": -1}, "at least 0"),
        ({"merges": 3, "tie": "random"}, "tie rule"),
        ({"merges": 3, "min_frequency": 0}, "minimum frequency"),
        ({"merges": 3, "pattern": "(unclosed"}, "invalid pattern"),
        ({"merges": 3, "special_tokens": ["<s>", "<s>"]}, "given twice"),
        ({"merges": 3, "special_tokens": [""]}, "empty"),
        ({"vocab_size": 2**21}, "at most"),
    ],
)
def test_bad_options_are_one_line_errors(kwargs, message):
    with pytest.raises(TrainingError, match=message) as info:
        train("some text", **kwargs)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, TokscopeError)


@pytest.mark.parametrize("texts", ["", [], ["", ""], "   \n "])
def test_empty_corpus_is_refused(texts):
    # "   \n " has no chunk of non-space; the words pattern keeps it (a whitespace chunk)
    with pytest.raises(TrainingError, match="empty"):
        train(texts, merges=3, pattern=NONSPACE)
    if texts == "   \n ":
        assert train(texts, merges=3, pattern=PATTERN_WORDS, min_frequency=1).stats.chunks == 1


def test_small_corpus_trains_what_it_can():
    r = train("ab", vocab_size=1000, pattern=PATTERN_NONE)
    assert r.merges == () and r.stop_reason == "min_frequency"
    r = train("ab", vocab_size=1000, pattern=PATTERN_NONE, min_frequency=1)
    assert [m.bytes for m in r.merges] == [b"ab"] and r.stop_reason == "exhausted"
    assert "too small" in r.stop_message


# ----- every named pattern keeps every character (issue 13, item 1) ------------------------------------


def test_words_keeps_whitespace_as_chunks():
    table = chunk_table(["to be\n\n  or"], PATTERN_WORDS)
    assert table.chunks == (b"to", b" ", b"be", b"\n\n  ", b"or")
    assert table.stats.chunk_chars == table.stats.chars and table.stats.dropped_chars == 0
    tok = train("Welcome to tokscope, welcome!", merges=20, pattern=PATTERN_WORDS, min_frequency=1).tokenizer()
    assert tok.decode(tok.encode("x y z")) == "x y z"


def test_a_pattern_that_drops_text_says_so():
    r = train("to be or not", merges=2, pattern=NONSPACE, min_frequency=1)
    assert r.stats.dropped_chars == 3  # the three spaces


@settings(max_examples=60, deadline=None)
@given(corpus=st.text(max_size=80), probe=st.text(max_size=40),
       name=st.sampled_from(["none", "words", "gpt2", "cl100k", "o200k"]))
def test_every_named_pattern_trains_a_tokenizer_that_round_trips_any_text(corpus, probe, name):
    from tokscope.sources.names import pattern_for

    pattern, _ = pattern_for(name)
    try:
        tok = train(corpus or "x", merges=10, pattern=pattern, min_frequency=1).tokenizer()
    except TrainingError:  # a corpus with nothing to learn from
        return
    for text in (probe, corpus):
        text = text.encode("utf-8", "replace").decode("utf-8")
        assert tok.decode(tok.encode(text, disallowed_special=())) == text
