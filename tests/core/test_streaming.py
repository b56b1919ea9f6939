"""Pieces in batches (encode --json streams them): the same pieces as one list, in flat memory."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.document.streaming import iter_pieces

ALPHABET = st.sampled_from(list("ab AB12 \n\t.,'é👍你\u0301-") + ["  ", "\n\n", "'s", "123456", "<|endoftext|>",
                                                                  "\U000323b0"])


@settings(max_examples=200, deadline=None)
@given(text=st.lists(ALPHABET, max_size=60).map("".join), window=st.integers(1, 12),
       name=st.sampled_from(["gpt2", "cl100k_base", "o200k_base"]), special=st.sampled_from(["all", "text"]))
def test_batches_join_to_the_pieces(load, text, window, name, special):
    tok = load(name)
    kw = {"allowed_special": "all"} if special == "all" else {"disallowed_special": ()}
    got = [p for batch in iter_pieces(tok, text, window=window, **kw) for p in batch]
    assert got == tok.pieces(text, **kw)


def test_a_rank_cut_off_is_one_batch(load):
    tok = load("gpt2")
    assert list(iter_pieces(tok, "hello world", max_rank=300)) == [tok.pieces("hello world", max_rank=300)]


def test_memory_stays_flat(load):
    from tokscope.core.tokenizer.tokenizer import Tokenizer

    shared = load("o200k_base")  # a tokenizer of its own: caches other tests filled would blur the figures
    tok = Tokenizer(shared.name, shared.ranks, shared.pattern, shared.special_tokens)
    text = "Tokenizers cut text into pieces, 12345 times over. " * 8000  # 400 KB
    for _ in iter_pieces(tok, text):  # warm the tokenizer's caches, so only the pieces are measured
        pass
    tracemalloc.start()
    try:
        whole = tok.pieces(text)
        _, list_peak = tracemalloc.get_traced_memory()
        del whole
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        count = sum(len(batch) for batch in iter_pieces(tok, text, window=4096))
        _, stream_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count > 50_000
    # a batch of 4,096 characters at a time: the peak is that of a batch or two, not of the text
    assert stream_peak - base < list_peak / 10
