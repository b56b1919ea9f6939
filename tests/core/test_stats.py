"""The insight figures equal counts computed independently here, from pieces and plain Python."""

from __future__ import annotations

import doctest
import math
import random
import statistics
import threading
import unicodedata
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.insights import stats
from tokscope.core.text.errors import CancelledError, TokscopeError
from tokscope.sample_texts import read_sample

TEXTS = ["default.txt", "prose.txt", "numbers.txt", "multiscript.txt", "code.py"]
ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]


def test_doctests():
    failures, tried = doctest.testmod(stats, optionflags=doctest.ELLIPSIS)
    assert tried > 20
    assert failures == 0


def _char_starts(text: str) -> list[int]:
    """Byte offsets where each character of ``text`` starts."""
    out, pos = [], 0
    for ch in text:
        out.append(pos)
        pos += len(ch.encode("utf-8"))
    return out


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("name", TEXTS)
def test_figures_equal_independent_counts(load, encoding, name):
    tok = load(encoding)
    text = read_sample(name)
    pieces = tok.pieces(text, disallowed_special=())
    result = stats.text_stats(tok, text, top=15)

    assert result.tokens == len(pieces)
    assert result.chars == len(text)
    assert result.bytes == len(text.encode("utf-8"))

    by_bytes = Counter(len(p.bytes) for p in pieces)
    starts = _char_starts(text)
    by_chars = Counter(
        sum(1 for s in starts if p.byte_start <= s < p.byte_end) for p in pieces
    )
    for length in range(0, 200):
        assert result.bytes_histogram.count(length) == by_bytes.get(length, 0), length
        assert result.chars_histogram.count(length) == by_chars.get(length, 0), length
    assert result.bytes_histogram.total == len(pieces)
    assert math.isclose(result.bytes_histogram.mean, sum(len(p.bytes) for p in pieces) / len(pieces))
    # bins are contiguous lengths
    lengths = [n for n, _ in result.bytes_histogram.bins]
    assert lengths == list(range(lengths[0], lengths[-1] + 1))

    freq = Counter(p.id for p in pieces)
    assert list(result.frequencies) == sorted(freq.values(), reverse=True)
    expected_top = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:15]
    assert [(t.id, t.count) for t in result.top] == expected_top
    for t in result.top:
        assert t.bytes == tok.token_bytes(t.id)
        assert math.isclose(t.share, t.count / len(pieces))
    assert result.coverage.distinct == len(set(freq))
    assert result.coverage.n_vocab == tok.n_vocab
    assert math.isclose(result.coverage.fraction, len(set(freq)) / tok.n_vocab)
    assert result.embedding.params == tok.n_vocab * stats.DEFAULT_WIDTH


def test_chars_histogram_counts_partial_pieces_by_characters_begun(load):
    tok = load("gpt2")
    text = "\u0b95\u0bbe\u0ba3"  # Tamil: gpt2 splits these characters' bytes
    pieces = tok.pieces(text)
    assert any(p.partial for p in pieces)
    result = stats.text_stats(tok, text)
    assert result.chars_histogram.total == len(pieces)
    assert sum(n * c for n, c in result.chars_histogram.bins) == len(text)


# ----- Zipf -----------------------------------------------------------------------------------


@pytest.mark.parametrize("s", [0.7, 1.0, 1.4])
def test_zipf_slope_of_synthetic_frequencies(s):
    freqs = [round(1_000_000 / r**s) for r in range(1, 1001)]
    fit = stats.zipf_fit(freqs)
    assert fit is not None
    assert fit.slope == pytest.approx(-s, abs=0.01)
    assert fit.r2 > 0.999
    assert fit.n_points == 1000


@pytest.mark.parametrize("s", [0.9, 1.2])
def test_zipf_slope_of_a_sampled_corpus(s):
    """Tokens drawn at random with P(rank r) proportional to 1/r^s: the fitted slope is near -s."""
    rng = random.Random(7)
    ranks = list(range(1, 301))
    weights = [1 / r**s for r in ranks]
    sample = rng.choices(ranks, weights=weights, k=300_000)
    counts = Counter(sample)
    fit = stats.zipf_fit(stats.rank_frequency(counts))
    assert fit.slope == pytest.approx(-s, abs=0.05)


def test_zipf_needs_two_tokens():
    assert stats.zipf_fit([]) is None
    assert stats.zipf_fit([5]) is None
    assert stats.zipf_fit([3, 3]).slope == 0.0


@given(st.lists(st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3)), min_size=2, max_size=40))
@settings(max_examples=150, deadline=None)
def test_fit_line_agrees_with_statistics(points):
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    if max(xs) - min(xs) < 1e-3:
        with pytest.raises(ValueError):
            if len(set(xs)) == 1:
                stats.fit_line(xs, ys)
            else:
                raise ValueError  # too close to call: skip the comparison
        return
    fit = stats.fit_line(xs, ys)
    ref = statistics.linear_regression(xs, ys)
    assert fit.slope == pytest.approx(ref.slope, rel=1e-6, abs=1e-6)
    assert fit.intercept == pytest.approx(ref.intercept, rel=1e-6, abs=1e-3)
    assert -1e-9 <= fit.r2 <= 1 + 1e-9


def test_fit_line_rejects_bad_input():
    with pytest.raises(ValueError):
        stats.fit_line([1], [1])
    with pytest.raises(ValueError):
        stats.fit_line([1, 1], [2, 3])
    with pytest.raises(ValueError):
        stats.fit_line([1, 2], [2])


# ----- digit groups ---------------------------------------------------------------------------


def _groups_from_pieces(tok, text):
    """Each ASCII digit run's groups, from pieces' character offsets (independent of the core)."""
    import re

    pieces = tok.pieces(text, disallowed_special=())
    out = []
    for m in re.finditer(r"[0-9]+", text):
        groups = []
        for p in pieces:
            lo, hi = max(p.start, m.start()), min(p.end, m.end())
            if hi > lo:
                groups.append(text[lo:hi])
        out.append((m.group(), tuple(groups)))
    return out


@pytest.mark.parametrize("encoding", ["gpt2", "p50k_base", "cl100k_base", "o200k_base"])
def test_digit_groups_match_pieces(load, encoding):
    tok = load(encoding)
    text = read_sample("numbers.txt")
    result = stats.text_stats(tok, text, digit_limit=10_000)
    expected = _groups_from_pieces(tok, text)
    assert result.digits.total == len(expected)
    assert [(n.digits, n.groups) for n in result.digits.numbers] == expected
    assert sum(c for _, c in result.digits.kinds) == len(expected)
    for n in result.digits.numbers:
        assert "".join(n.groups) == n.digits
        assert text.encode()[n.start : n.end].decode() == n.digits


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_cl100k_and_o200k_cut_numbers_left_to_right_in_threes(load, encoding):
    tok = load(encoding)
    result = stats.text_stats(tok, "Call 1234567 or 9876543210, not 42.")
    cuts = {n.digits: n.groups for n in result.digits.numbers}
    assert cuts["1234567"] == ("123", "456", "7")
    assert cuts["9876543210"] == ("987", "654", "321", "0")
    assert cuts["42"] == ("42",)
    assert result.digits.summary == "left-to-right groups of up to 3"
    assert stats.text_stats(tok, read_sample("numbers.txt")).digits.summary == "left-to-right groups of up to 3"
    probe = {n.digits: n.groups for n in result.probe.numbers}
    assert probe["1234567"] == ("123", "456", "7")
    assert result.probe.summary == "left-to-right groups of up to 3"


def test_gpt2_cuts_numbers_irregularly(load):
    tok = load("gpt2")
    result = stats.text_stats(tok, "Call 1234567 today")
    assert result.digits.numbers[0].groups == ("123", "45", "67")
    assert result.digits.numbers[0].kind == "irregular"
    assert stats.text_stats(tok, read_sample("numbers.txt")).digits.summary == "irregular"
    assert result.probe.summary == "irregular"


def test_digit_groups_limit_keeps_counting():
    data = b" ".join(b"12" for _ in range(50))
    offsets = list(range(0, len(data) + 1))  # every byte its own piece
    result = stats.digit_groups(data, offsets, limit=5)
    assert len(result.numbers) == 5
    assert result.total == 50
    assert result.summary == "single digits"
    assert dict(result.kinds) == {"single": 50}


@pytest.mark.parametrize(
    ("cuts", "summary"),
    [
        ([], "no numbers"),
        ([(2,), (1,)], "each number is one token"),
        ([(1, 1), (1,)], "single digits"),
        ([(3, 3, 1), (3, 2), (1,)], "left-to-right groups of up to 3"),
        ([(1, 3, 3), (2, 3)], "right-to-left groups of up to 3"),
        ([(3, 3), (3, 1)], "left-to-right groups of up to 3"),
        ([(3, 2, 2)], "irregular"),
        ([(3, 1), (1, 3)], "irregular"),
    ],
)
def test_summarize_cuts(cuts, summary):
    assert stats.summarize_cuts(cuts)[0] == summary


# ----- normalisation --------------------------------------------------------------------------


def test_composed_and_decomposed_accents_tokenize_differently(load):
    text = "café naïve résumé"
    assert unicodedata.normalize("NFD", text) != text
    differs = []
    for encoding in ENCODINGS:
        tok = load(encoding)
        rows = {r.form: r for r in stats.normalization_counts(text, tok.encode_ordinary)}
        for form in ("none", *stats.NORMAL_FORMS):
            normalized = text if form == "none" else unicodedata.normalize(form, text)
            assert rows[form].text == normalized
            assert rows[form].tokens == len(tok.encode_ordinary(normalized))
            assert rows[form].chars == len(normalized)
            assert rows[form].changed == (normalized != text)
        differs.append(rows["NFC"].tokens != rows["NFD"].tokens)
        assert rows["NFD"].chars == rows["NFC"].chars + 4
    assert any(differs)


def test_compatibility_forms_fold_ligatures(load):
    tok = load("o200k_base")
    rows = {r.form: r for r in stats.normalization_counts("\ufb01nance \u2460", tok.encode_ordinary)}
    assert rows["NFKC"].text == "finance 1"
    assert not rows["NFC"].changed and rows["NFKC"].changed


def test_text_stats_with_normalization(load):
    tok = load("cl100k_base")
    text = unicodedata.normalize("NFD", "Ångström café")
    result = stats.text_stats(tok, text, normalization=True)
    rows = {r.form: r.tokens for r in result.normalization}
    assert rows["none"] == result.tokens == len(tok.encode(text))
    assert rows["NFC"] == len(tok.encode(unicodedata.normalize("NFC", text)))
    assert rows["NFD"] == rows["none"]


def test_unknown_form():
    with pytest.raises(TokscopeError):
        stats.normalize("x", "NFX")


# ----- the rest -------------------------------------------------------------------------------


def test_embedding_size():
    e = stats.embedding_size(100_277, 768)
    assert e.params == 100_277 * 768
    assert e.millions == pytest.approx(77.0127, abs=1e-4)
    assert e.megabytes(4) == pytest.approx(100_277 * 768 * 4 / 1e6)
    with pytest.raises(TokscopeError):
        stats.embedding_size(10, 0)


def test_empty_text(load):
    result = stats.text_stats(load("o200k_base"), "")
    assert result.tokens == 0
    assert result.bytes_histogram.bins == ()
    assert result.zipf is None
    assert result.top == ()
    assert result.coverage.distinct == 0
    assert result.digits.total == 0 and result.digits.summary == "no numbers"


def test_special_tokens_given_as_ids(load):
    tok = load("cl100k_base")
    text = "a<|endoftext|>b"
    ids = tok.encode(text, allowed_special="all")
    result = stats.text_stats(tok, text, ids=ids)
    assert result.tokens == 3
    assert [t.special for t in result.top if t.id == tok.special_tokens["<|endoftext|>"]] == [True]


def test_ids_that_do_not_match_the_text(load):
    tok = load("o200k_base")
    with pytest.raises(TokscopeError):
        stats.text_stats(tok, "hello world", ids=tok.encode("hello"))


def test_cancel(load):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        stats.text_stats(load("o200k_base"), "some text 123", cancel=cancel)


# ----- plot geometry --------------------------------------------------------------------------


@given(st.lists(st.integers(0, 10_000), max_size=30), st.integers(1, 12))
def test_bar_heights_properties(values, height):
    heights = stats.bar_heights(values, height)
    assert len(heights) == len(values)
    for v, h in zip(values, heights):
        assert 0 <= h <= height * 8
        assert (h == 0) == (v == 0)
    if any(values):
        assert heights[values.index(max(values))] == height * 8
    # order is kept
    for (v1, h1), (v2, h2) in zip(zip(values, heights), zip(values[1:], heights[1:])):
        if v1 < v2:
            assert h1 <= h2


@given(st.lists(st.integers(0, 1000), min_size=1, max_size=20), st.integers(1, 6), st.booleans())
def test_bar_rows_shape(values, height, ascii_only):
    rows = stats.bar_rows(values, height, ascii_only=ascii_only)
    assert len(rows) == height
    assert all(len(r) == len(values) for r in rows)
    allowed = set(" #") if ascii_only else set(stats.BLOCKS)
    assert set("".join(rows)) <= allowed
    # a column is non-empty at the bottom exactly when its value is positive
    assert [c != " " for c in rows[-1]] == [v > 0 for v in values]


@given(st.floats(1, 1e6), st.floats(1, 1e6), st.integers(2, 200))
def test_log_scale_in_bounds_and_monotonic(a, b, steps):
    low, high = 1.0, 1e6
    pa, pb = stats.log_scale(a, low, high, steps), stats.log_scale(b, low, high, steps)
    assert 0 <= pa < steps and 0 <= pb < steps
    if a <= b:
        assert pa <= pb


def test_braille_plot_of_a_power_law_falls_left_to_right():
    freqs = [round(100_000 / r) for r in range(1, 101)]
    points = list(enumerate(freqs, 1))
    x = stats.axis_for([p[0] for p in points], log=True)
    y = stats.axis_for([p[1] for p in points], log=True)
    (dots,) = stats.dot_grid([points], x, y, 20, 5)
    assert all(0 <= dx < 40 and 0 <= dy < 20 for dx, dy in dots)
    assert dots[0] == (0, 0) and dots[-1] == (39, 19)
    rows = stats.braille_rows(dots, 20, 5)
    assert len(rows) == 5 and all(len(r) == 20 for r in rows)
    assert rows[0][0] != " " and rows[-1][-1] != " "
    fit = stats.zipf_fit(freqs)
    line = stats.line_dots(fit, x, y, 20, 5)
    assert line[0][1] <= 1 and line[-1][1] >= 18
    ascii_rows = stats.ascii_rows(dots, 20, 5)
    assert set("".join(ascii_rows)) <= {" ", "*"}


def test_hbar_and_capped_bins():
    assert stats.hbar(0, 10, 5) == ""
    assert stats.hbar(10, 10, 5) == "█" * 5
    assert stats.hbar(1, 80, 10) == "█"[:0] + "▏"
    hist = stats.histogram({1: 1, 20: 2, 30: 3}, "bytes")
    rows = stats.capped_bins(hist, 16)
    assert rows[-1] == (">16", 5)
    assert sum(c for _, c in rows) == hist.total
