"""The one byte notation and the one escaping helper (tokscope.core.text.display)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokscope.core.text.display import hex_label, parse_hex, safe_text, token_label


@pytest.mark.parametrize(
    ("data", "label"),
    [(b" the", "·the"), (b"\n\t", "⏎→"), (b"\xc3", "‹c3›"), ("é".encode(), "é"), (b"\x00", "␀"),
     (b"a\\b", "a\\b"), (b"\xe4\xbd", "‹e4 bd›"), (b"x\xf0\x9f", "x‹f0 9f›"), ("\u202e".encode(), "⟨RLO⟩")],
)
def test_token_label(data, label):
    assert token_label(data) == label


@given(st.binary(max_size=12))
def test_hex_labels_read_back(data):
    assert parse_hex(hex_label(data)) == data if data else True


@given(st.text(st.characters(exclude_categories=()), max_size=30))
def test_safe_text_leaves_nothing_that_acts_on_a_terminal(text):
    shown = safe_text(text)
    assert "\n" not in shown and "\t" not in shown
    for ch in shown:
        assert unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Cs"), repr(ch)
