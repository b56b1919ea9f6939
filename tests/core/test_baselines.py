"""Baselines: character and word tokenizers vs BPE, worked out by hand on a tiny text and
recounted independently on a sample."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tokscope.core.train.baselines import BaselinesError, baselines, split_text
from tokscope.core.train.trainer import PATTERN_WORDS, train
from tokscope.sample_texts import read_sample

TEXT = "the cat sat on the mat. the dog sat on the log."
#: runs of non-space, spaces dropped: the pattern the answers by hand were worked out with
NONSPACE = r"\S+"


def test_tiny_text_by_hand():
    # split: int(47 * 0.5) = 23 is the space after "mat.", so the parts are
    #   "the cat sat on the mat."  and  " the dog sat on the log."
    r = baselines(TEXT, split=0.5, vocab_size=260, pattern=NONSPACE, pattern_name="nonspace")
    assert (r.chars, r.split_at) == (47, 23)
    # characters: 11 distinct in the first part (t h e space c a s o n m .); d, o... the held-out
    # part has 24 characters, of which d, g, l, g are unseen (3 distinct of 12)
    c = r.char
    assert (c.vocab_size, c.tokens, c.test_tokens, c.test_oov, c.test_types, c.test_unseen_types) == (
        11, 47, 24, 4, 12, 3)
    # words: the cat sat on mat . -> 6; held-out: the dog sat on the log . -> 7, dog/log unseen
    w = r.word
    assert (w.vocab_size, w.tokens, w.test_tokens, w.test_oov, w.test_types, w.test_unseen_types) == (
        6, 14, 7, 2, 6, 2)
    assert w.oov_rate == pytest.approx(2 / 7) and w.unseen_type_rate == pytest.approx(2 / 6)
    assert [(u.word, u.count) for u in r.unseen_words] == [("dog", 1), ("log", 1)]
    # BPE on "the cat sat on the mat." with \S+ chunks: at (x3), th (x2), the (x2), then every pair
    # occurs once -> 259 tokens. The whole text: the|c,at|s,at|o,n|the|m,at,.|the|d,o,g|s,at|o,n|the|
    # l,o,g,. = 24 tokens; the held-out part 13. dog is spelled d|o|g.
    b = r.bpe
    assert (b.vocab_size, b.tokens, b.test_tokens, b.test_oov) == (259, 24, 13, 0)
    assert r.unseen_words[0].pieces == (b"d", b"o", b"g")
    # with no pattern, at size 260: at, th, the, then "the " (x2 at byte 0): one token crosses a
    # word boundary; with runs of non-space none can
    x = r.crossing
    assert (x.merges_without, x.crossing_without, x.merges_with, x.crossing_with) == (4, 1, 3, 0)
    assert x.examples_without == (b"the ",)


def test_figures_match_an_independent_count():
    text = read_sample("prose.txt")
    r = baselines(text, split=0.6, vocab_size=400, pattern=PATTERN_WORDS, pattern_name="words", top=5)
    at = r.split_at
    assert text[at].isspace() and at >= int(len(text) * 0.6)
    head, tail = text[:at], text[at:]
    words = lambda s: re.findall(r"\w+|[^\w\s]", s)  # noqa: E731
    seen = set(words(head))
    unseen = [t for t in words(tail) if t not in seen]
    assert r.word.vocab_size == len(seen) and r.word.test_oov == len(unseen)
    assert r.word.tokens == len(words(text))
    assert r.char.vocab_size == len(set(head)) and r.char.test_oov == sum(ch not in set(head) for ch in tail)
    assert [(u.word, u.count) for u in r.unseen_words] == Counter(unseen).most_common(5)
    bpe = train(head, vocab_size=400, pattern=PATTERN_WORDS).tokenizer()
    assert r.bpe.tokens == len(bpe.encode_ordinary(text)) and r.bpe.vocab_size <= 400
    for u in r.unseen_words:
        assert b"".join(u.pieces) == u.word.encode()


def test_split_text_and_errors():
    assert split_text("aaa bbb ccc", 0.5) == 7
    assert split_text("aaa bbbbbbbb", 0.5) == 3  # no whitespace after: the last one before
    with pytest.raises(BaselinesError, match="too short"):
        split_text("aaaaaa", 0.5)
    for bad in (0, 1, -0.5, 1.5):
        with pytest.raises(BaselinesError, match="between 0 and 1"):
            baselines(TEXT, split=bad)
    with pytest.raises(BaselinesError, match="too short"):
        baselines("word", split=0.5)


def test_docstring_examples_of_the_training_modules():
    import doctest

    from tokscope.core.train import baselines as b
    from tokscope.core.formats import saved as serialize
    from tokscope.core.train import trainer

    for module in (trainer, serialize, b):
        failed, attempted = doctest.testmod(module)
        assert failed == 0 and attempted > 0
