"""The trainer's fast paths: chunks held as strings of token characters, findall pre-tokenization.

``tests/core/test_trainer.py`` holds the trainer to its naive oracle; these cover what only large
or unusual runs reach.
"""

from __future__ import annotations

import random

from tokscope.core.trainer import PATTERN_WORDS, train, train_naive


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
