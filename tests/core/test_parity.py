"""The core's ids equal tiktoken's on every OpenAI encoding (hypothesis text and real samples).

The reference is a ``tiktoken.Encoding`` built from the very same ranks, pattern and specials
(``reference_for``), so any difference is the core's. By default each property runs a modest
number of examples; ``TOKSCOPE_FUZZ=long`` runs 100,000 per encoding (see bench/README.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import unicode_texts

from tokscope.core import DisallowedSpecialError, fix_surrogates, is_whole_utf8
from tokscope.sources import tiktoken_adapter as tk
from tokscope.sources.tiktoken_adapter import reference_for

OPENAI = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
LONG = os.environ.get("TOKSCOPE_FUZZ") == "long"
EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", 100_000 if LONG else 40))
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=not LONG, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SAMPLES = Path(__file__).resolve().parents[2] / "samples"

# ----- text strategies --------------------------------------------------------------------------


def _special_lookalikes() -> list[str]:
    out: set[str] = set()
    for name in OPENAI:
        for special in tk.encoding_spec(name).special_tokens:
            out.update({special, special[:-1], special[1:], special[:-2], special[2:], special.upper()})
    return sorted(out)[:400]


LOOKALIKES = _special_lookalikes()
texts = unicode_texts(LOOKALIKES)


# ----- checks ------------------------------------------------------------------------------------

_refs: dict[str, object] = {}


def _pair(load, name):
    tok = load(name)
    if name not in _refs:
        _refs[name] = reference_for(tok)
    return tok, _refs[name]


def check_parity(tok, ref, text: str) -> None:
    assert tok.encode_ordinary(text) == ref.encode_ordinary(text), repr(text)
    assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all"), repr(text)
    assert tok.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=()), repr(text)
    try:
        want = ref.encode(text)
    except ValueError:
        want = None
    try:
        got = tok.encode(text)
    except DisallowedSpecialError:
        got = None
    assert got == want, repr(text)


def check_pieces(tok, text: str) -> None:
    """Round trip, pieces and chunks are consistent with the (surrogate-fixed) text."""
    fixed = fix_surrogates(text)
    data = fixed.encode("utf-8")
    ids = tok.encode(text, allowed_special="all")
    assert tok.decode(ids) == fixed
    assert tok.decode_bytes(ids) == data
    pieces = tok.pieces(text, allowed_special="all")
    assert [p.id for p in pieces] == ids
    assert b"".join(p.bytes for p in pieces) == data
    byte_pos = 0
    prev_start = prev_end = 0
    for p in pieces:
        assert p.byte_start == byte_pos and p.byte_end == byte_pos + len(p.bytes)
        assert data[p.byte_start : p.byte_end] == p.bytes
        byte_pos = p.byte_end
        assert p.start >= prev_start and p.end >= prev_end and p.start < p.end
        prev_start, prev_end = p.start, p.end
        assert p.partial == (not is_whole_utf8(p.bytes))
        # the characters [start, end) cover the piece's bytes
        assert len(fixed[: p.start].encode()) <= p.byte_start and len(fixed[: p.end].encode()) >= p.byte_end
        if not p.partial:
            assert fixed[p.start : p.end].encode() == p.bytes
            assert p.text == fixed[p.start : p.end]
        else:
            assert "\ufffd" in p.text
    assert byte_pos == len(data)
    chunks = tok.chunks(text, allowed_special="all")
    assert "".join(c.text for c in chunks) == fixed
    pos = 0
    for c in chunks:
        assert c.start == pos and fixed[c.start : c.end] == c.text
        pos = c.end
    assert pos == len(fixed)


# ----- properties -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OPENAI)
@FUZZ
@given(text=texts)
def test_ids_match_tiktoken(load, name, text):
    tok, ref = _pair(load, name)
    check_parity(tok, ref, text)


@pytest.mark.parametrize("name", OPENAI)
@settings(FUZZ, max_examples=max(EXAMPLES // 4, 10))
@given(parts=st.lists(texts, min_size=2, max_size=12))
def test_long_multiline_text_matches_tiktoken(load, name, parts):
    """Long texts go through the segment path (cut at line breaks) and its cache."""
    tok, ref = _pair(load, name)
    text = "\n".join(parts) + "\n" + "x" * 256 + "\n".join(reversed(parts))
    assert tok.encode_ordinary(text) == ref.encode_ordinary(text)
    assert tok.encode_ordinary(text) == ref.encode_ordinary(text)  # again, from the caches


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "o200k_harmony"])
@settings(FUZZ, max_examples=max(EXAMPLES // 2, 10))
@given(text=texts)
def test_pieces_rejoin_and_round_trip(load, name, text):
    check_pieces(load(name), text)


# ----- real text --------------------------------------------------------------------------------

SAMPLE_FILES = sorted(p for p in SAMPLES.rglob("*") if p.suffix in {".txt", ".py", ".json", ".md"})


def test_samples_cover_many_scripts():
    langs = {p.stem for p in (SAMPLES / "languages").glob("*.txt")}
    assert len(langs) >= 12
    assert {"ru", "el", "ar", "he", "hi", "th", "zh", "ko", "ja"} <= langs


@pytest.mark.parametrize("name", OPENAI)
def test_samples_match_tiktoken(load, name):
    tok, ref = _pair(load, name)
    for path in SAMPLE_FILES:
        text = path.read_text(encoding="utf-8")
        check_parity(tok, ref, text)
        # the same text as a fresh tokenizer sees it (empty caches) and per line
        for line in text.splitlines(keepends=True)[:50]:
            assert tok.encode_ordinary(line) == ref.encode_ordinary(line), (path.name, line)
    all_text = "\n".join(p.read_text(encoding="utf-8") for p in SAMPLE_FILES)
    assert tok.encode_ordinary(all_text) == ref.encode_ordinary(all_text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_sample_pieces(load, name):
    tok = load(name)
    for path in SAMPLE_FILES:
        check_pieces(tok, path.read_text(encoding="utf-8"))
