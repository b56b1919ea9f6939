"""One very long chunk is merged in windows (issue 21, item 8): the same ids as merging it whole,
and as tiktoken, for every text; memory and time are in bench/bench_hostile_inputs.py."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.models import long_chunks
from tokscope.core.models.long_chunks import long_chunk_ids
from tokscope.core.models.ranks import merge
from tokscope.sources.tiktoken_adapter import reference_for

#: pieces long runs are made of: repeats, emoji (4 bytes each), combining marks, CJK, digits
PIECES = [" ", "  ", "a", "ab", "the", "😀", "🇫🇷", "é", "e\u0301", "日本", "1", "--", "!", "\t", "ŉ"]
runs = st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).flatmap(
    lambda alphabet: st.lists(st.sampled_from(alphabet), min_size=20, max_size=1500).map("".join))
windows = st.sampled_from([(16, 2), (32, 4), (64, 8), (256, 16)])


@pytest.fixture(scope="module")
def o200k(load):
    return load("o200k_base")


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=runs, window=windows)
def test_windows_give_the_ids_of_the_whole_chunk(o200k, text, window):
    ranks = o200k.ranks
    data = text.encode("utf-8")
    whole = [ranks[part] for part in merge(data, ranks)]
    size, overlap = window
    assert long_chunk_ids(data, ranks, lambda d: merge(d, ranks), window=size, overlap=overlap) == whole


def test_a_vocabulary_whose_windows_never_agree_falls_back_to_the_whole_chunk(monkeypatch):
    """Windows that share no token grow; past MAX_WINDOW the chunk is merged whole (same ids)."""
    ranks = {bytes([i]): i for i in range(256)} | {b"ab": 256}
    monkeypatch.setattr(long_chunks, "MAX_WINDOW", 64)
    calls = []

    def disagreeing(data: bytes) -> list[bytes]:  # a "merge" whose windows never share a token
        calls.append(len(data))
        return [data] if len(calls) > 1 and len(data) < 1000 else [bytes([b]) for b in data]

    data = b"ab" * 500
    ids = long_chunk_ids(data, ranks, disagreeing, window=16, overlap=2)
    assert calls[-1] == len(data) and ids == [ranks[bytes([b])] for b in data]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "gpt2"])
@pytest.mark.parametrize("text", [
    " " * 300_000,
    "a" + " " * 200_000 + "b",
    "😀🙃🎉" * 60_000,
    "ab" * 150_000,
    "日本語" * 60_000,
], ids=["spaces", "spaces-between", "emoji", "ab", "cjk"])
def test_a_long_chunk_encodes_as_tiktoken_does(load, name, text):
    tok = load(name)
    assert len(text.encode()) >= long_chunks.LONG_CHUNK
    assert tok.encode_ordinary(text) == reference_for(tok).encode_ordinary(text)
