"""The explorer's token model: full builds agree with the core, edits agree with full builds."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.app.model import Cancelled, TokenDoc, diff_span
from tokscope.sample_texts import read_sample

ENCODINGS = ["o200k_base", "cl100k_base", "gpt2"]


def same_as_core(doc: TokenDoc) -> None:
    tok = doc.tokenizer
    kwargs = {"allowed_special": "all"} if doc.specials else {"disallowed_special": ()}
    expected = tok.pieces(doc.text, **kwargs)
    assert doc.ids == [p.id for p in expected]
    assert list(doc.pieces()) == expected
    assert [(c.start, c.end) for c in tok.chunks(doc.text, **kwargs)] == list(zip(doc.chunk_starts, doc.chunk_ends))


@pytest.mark.parametrize("name", ENCODINGS)
def test_build_matches_core_on_samples(load, name):
    tok = load(name)
    for sample in ("default.txt", "multiscript.txt", "code.py"):
        same_as_core(TokenDoc.build(tok, read_sample(sample)))


def test_specials_mode_splits_special_tokens(load):
    tok = load("o200k_base")
    text = "a<|endoftext|>b"
    plain = TokenDoc.build(tok, text)
    special = TokenDoc.build(tok, text, specials=True)
    assert tok.special_tokens["<|endoftext|>"] not in plain.ids
    assert special.ids.count(tok.special_tokens["<|endoftext|>"]) == 1
    assert special.piece(1).special
    same_as_core(special)
    same_as_core(special.edited("a<|endoftext|>bc<|endoftext|>"))


def test_progress_gives_a_prefix_first(load):
    tok = load("o200k_base")
    text = read_sample("prose.txt") * 5
    seen = []
    doc = TokenDoc.build(tok, text, progress=seen.append, first_part=1000)
    assert len(seen) == 1 and not seen[0].complete
    assert 1000 <= seen[0].covered < len(text)
    assert seen[0].ids == doc.ids[: len(seen[0].ids)]
    same_as_core(doc)


def test_cancel_stops_a_build(load):
    event = threading.Event()
    event.set()
    with pytest.raises(Cancelled):
        TokenDoc.build(load("o200k_base"), "word " * 5000, cancel=event)


def test_diff_span_examples():
    assert diff_span("abc", "abc").start == 3
    s = diff_span("aaaa", "aaaaa")
    assert (s.old_end - s.start, s.new_end - s.start) == (0, 1)
    s = diff_span("hello world", "help world")
    assert "hello world"[: s.start] + "help world"[s.start : s.new_end] + "hello world"[s.old_end :] == "help world"


ALPHABET = st.sampled_from(list("ab AB12 \n\t.,'é👍你\u0301-") + ["  ", "\n\n", "'s", "123456", "<|endoftext|>"])
texts = st.lists(ALPHABET, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(old=texts, insert=texts, data=st.data(), name=st.sampled_from(ENCODINGS), specials=st.booleans())
def test_edit_matches_full_build(load, old, insert, data, name, specials):
    tok = load(name)
    start = data.draw(st.integers(0, len(old)))
    end = data.draw(st.integers(start, len(old)))
    new = old[:start] + insert + old[end:]
    doc = TokenDoc.build(tok, old, specials)
    edited = doc.edited(new)
    full = TokenDoc.build(tok, new, specials)
    assert edited.ids == full.ids
    assert edited.starts == full.starts and edited.ends == full.ends and edited.flags == full.flags
    assert edited.chunk_starts == full.chunk_starts and edited.chunk_ends == full.chunk_ends


def test_many_edits_in_a_row_stay_exact(load):
    import random

    tok = load("o200k_base")
    rng = random.Random(7)
    text = read_sample("default.txt")
    doc = TokenDoc.build(tok, text)
    bits = ["x", " ", "\n", "  ", "é", "👍", "9", "'ll", "\t", ""]
    for _ in range(200):
        a = rng.randrange(len(text) + 1)
        b = min(len(text), a + rng.choice([0, 0, 1, 3]))
        text = text[:a] + rng.choice(bits) + text[b:]
        doc = doc.edited(text)
    same_as_core(doc)


@settings(max_examples=200, deadline=None)
@given(old=texts, insert=texts, data=st.data(), width=st.integers(8, 30))
def test_relayout_matches_full_layout(load, old, insert, data, width):
    from tokscope.app.render import TEXT, layout, relayout

    tok = load("o200k_base")
    start = data.draw(st.integers(0, len(old)))
    end = data.draw(st.integers(start, len(old)))
    new = old[:start] + insert + old[end:]
    doc = TokenDoc.build(tok, old)
    rows = layout(doc, width, TEXT, False)
    edited = doc.edited(new)
    assert relayout(rows, doc, edited, width, TEXT, False) == layout(edited, width, TEXT, False)
