"""The trainer's fast paths: chunks held as strings of token characters, findall pre-tokenization.

``tests/core/test_trainer.py`` holds the trainer to its naive oracle; these cover what only large
or unusual runs reach.
"""

from __future__ import annotations

import random

from tokscope.core.reference import train_naive
from tokscope.core.train.trainer import PATTERN_WORDS, train


def test_ids_past_the_surrogate_range_train_and_encode_consistently():
    """A chunk holds one character per token (chr(id)), so ids 0xD800..0xDFFF are lone surrogate
    characters inside the trainer: training goes through them as through any other id."""
    rng = random.Random(1)
    words = sorted({"".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5)) for _ in range(46_000)})
    rng.shuffle(words)
    text = " ".join(words + words)
    result = train(text, merges=60_000, pattern=PATTERN_WORDS)
    assert result.stop_reason == "target" and result.merges[-1].id > 0xDFFF
    tok = {i: bytes([i]) for i in range(256)}
    for m in result.merges:
        assert (tok[m.left_id], tok[m.right_id]) == (m.left, m.right)
        tok[m.id] = m.bytes
    # the trained tokenizer cuts the corpus exactly as training left it
    assert len(result.tokenizer().encode_ordinary(text)) == result.lengths[-1]


def test_a_pattern_with_groups_chunks_by_whole_matches():
    text = "the cat sat on the mat, the cat sat. " * 3
    grouped = train(text, merges=20, pattern=r"( ?)(\w+)|[^\w ]+| ", min_frequency=2)
    plain = train(text, merges=20, pattern=r"(?: ?)(?:\w+)|[^\w ]+| ", min_frequency=2)
    assert [(m.left, m.right, m.count) for m in grouped.merges] == [(m.left, m.right, m.count) for m in plain.merges]
    assert grouped.stats == plain.stats
    naive = train_naive(text, merges=20, pattern=r"( ?)(\w+)|[^\w ]+| ", min_frequency=2)
    assert [(m.left, m.right, m.count) for m in grouped.merges] == [(m.left, m.right, m.count) for m in naive.merges]


def test_pairs_below_the_minimum_frequency_stop_training_as_before():
    """Pairs that start below the minimum frequency never enter the heap; the stop reason and
    the merges are still the naive trainer's."""
    cases = [("abcdefg", 2), ("ab cd ef", 2), ("a b c", 2), ("abab cdcd abab", 3), ("aaaa bbbb", 5), ("x", 2)]
    for text, min_frequency in cases:
        for tie in ("first", "lexical"):
            got = train(text, merges=10, pattern=PATTERN_WORDS, min_frequency=min_frequency, tie=tie)
            want = train_naive(text, merges=10, pattern=PATTERN_WORDS, min_frequency=min_frequency, tie=tie)
            assert [(m.left, m.right, m.count) for m in got.merges] == [(m.left, m.right, m.count) for m in want.merges]
            assert (got.stop_reason, got.lengths) == (want.stop_reason, want.lengths), (text, min_frequency, tie)
