"""The string paths that stopped compiling a pattern per text, against the per-text patterns they
replace: ``RangeSet.runs``/``translation``/``class_marks`` against ``RangeSet.finder``,
``remove_str`` against the finder's ``sub``, ``Whitespace.split_str`` against ``_word_pattern``,
``normalize_str``'s per-run results against the run normalized afresh, and the Precompiled
normalizer's segment scan without the Prepend lookbehind against the full one, on the samples
(24 languages), the tricky characters and hypothesis text (a batch: the remembered characters
and runs carry over from text to text)."""

from __future__ import annotations

import pytest
from hf_support import FUZZ, TRICKY_CHARS, sample_texts
from hypothesis import given
from hypothesis import strategies as st

from tokscope.core.normalizers import precompiled
from tokscope.core.normalizers.strip import remove_str
from tokscope.core.pre_tokenizers import whitespace
from tokscope.core.text import unicode as uni

TABLES = ["KC_MAYBE", "C_MAYBE", "D_MAYBE", "RX_WORD", "PUNCT", "MN", "COMBINING", "BERT_REMOVED"]
_PREPENDS = ["\u0600", "\u0605", "\u06dd", "\u070f", "\u0d4e", "\U000110bd", "\U00011a84"]

chars_st = st.one_of(st.characters(codec="utf-8"), st.sampled_from(TRICKY_CHARS + _PREPENDS + ["\r\n", "\n", " a"]))
batches_st = st.lists(st.lists(chars_st, max_size=40).map("".join), min_size=1, max_size=6)


def _texts() -> list[str]:
    return [line for text in sample_texts().values() for line in text.splitlines()[:30]] + ["".join(TRICKY_CHARS)]


def _check(texts: list[str]) -> None:
    for name in TABLES:
        rs = uni.table(name)
        for text in texts:
            finder = rs.finder(text, "+")
            spans = [m.span() for m in finder.finditer(text)] if finder is not None else []
            assert rs.runs(text) == spans, (name, text)
            assert remove_str(text, rs) == (finder.sub("", text) if finder is not None else text), (name, text)
            marks = uni.class_marks(text, [(rs, "y")], "n")
            assert [i for i, m in enumerate(marks) if m == "y"] == [i for s, e in spans for i in range(s, e)]
    ws = whitespace.Whitespace()
    for text in texts:
        assert ws.split_str(text) == whitespace._word_pattern(text).findall(text), text
        for form in ("NFC", "NFD", "NFKC", "NFKD"):
            assert uni.normalize_str(form, text) == "".join(
                "".join(c for c, _ in uni.normalize_changes(form, text[s:e])) if (s, e) in uni.unstable_runs(form, text)
                else text[s:e] for s, e in _pieces(form, text)), (form, text)
        segment = precompiled._SEGMENT if precompiled._PREPEND_CHAR.search(text) else precompiled._SEGMENT_NO_PREPEND
        assert segment.findall(text) == precompiled._SEGMENT.findall(text), text


def _pieces(form: str, text: str) -> list[tuple[int, int]]:
    """``text`` cut at the edges of its unstable runs."""
    out, last = [], 0
    for s, e in uni.unstable_runs(form, text):
        out += [(last, s), (s, e)]
        last = e
    return out + [(last, len(text))]


def test_on_the_samples_twice():
    texts = _texts()
    _check(texts)
    _check(texts[::-1])  # everything remembered from the first pass


@FUZZ
@given(batches_st)
def test_on_generated_batches(texts):
    _check(texts)


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(uni, "MEMO_LIMIT", 8)
    rs = uni.RangeSet([(0x30, 0x39)])
    text = "".join(map(chr, range(0x20, 0x80)))
    assert rs.runs(text) == [(16, 26)]
    assert len(rs._memo) <= 8
    assert rs.runs("x1") == [(1, 2)]


@pytest.mark.parametrize("prepend", _PREPENDS)
def test_a_prepend_character_keeps_the_full_segment_scan(prepend):
    text = f"a{prepend}b c\u0301"
    assert precompiled._PREPEND_CHAR.search(text)
    assert precompiled._SEGMENT.findall(text) != precompiled._SEGMENT_NO_PREPEND.findall(text)
