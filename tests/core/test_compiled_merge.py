"""The compiled merge loop gives the ids of the pure-Python one (the oracle), on every path.

Three compiled paths are held to :func:`tokscope.core.models.ranks.merge`: ``merge_ids`` on the
ranks dict itself (a model's first chunks), ``merge_table`` on the rank table (after them), and
``encode_chunks`` (a whole text's chunks in one call, with the chunk cache). Random vocabularies
with hypothesis, the real OpenAI ranks on many scripts, rank cut-offs, long chunks (handed back
to the heap loop), a byte missing from the ranks. The parity suites (test_parity, the tiktoken
suite) also run once with each loop (see ``merge_loop`` in tests/conftest.py).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from compiled_merge import compiled_module
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.models import ranks as ranks_module
from tokscope.core.models.ranks import RanksBPE, merge

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def compiled():
    module = compiled_module()
    if module is None:
        pytest.skip("no compiled merge loop: not installed, and no C compiler to build one")
    return module


def oracle(data: bytes, ranks: dict, max_rank: int | None = None) -> tuple[int, ...]:
    return tuple(ranks[part] for part in merge(data, ranks, max_rank))


@st.composite
def vocab_and_data(draw):
    alphabet = draw(st.lists(st.binary(min_size=1, max_size=1), min_size=1, max_size=4, unique=True))
    ranks = {b: i for i, b in enumerate(alphabet)}
    for _ in range(draw(st.integers(0, 30))):
        a = draw(st.sampled_from(sorted(ranks)))
        b = draw(st.sampled_from(sorted(ranks)))
        if len(a + b) <= 8:
            ranks.setdefault(a + b, len(ranks))
    order = draw(st.permutations(list(ranks)))  # ranks in any order, not only in the order learned
    ranks = {token: i for i, token in enumerate(sorted(ranks, key=lambda t: (len(t) > 1, order.index(t))))}
    data = draw(st.lists(st.sampled_from(alphabet), min_size=1, max_size=300).map(b"".join))
    max_rank = draw(st.none() | st.integers(0, len(ranks)))
    return ranks, data, max_rank


@settings(max_examples=150, deadline=None)
@given(case=vocab_and_data())
def test_every_compiled_path_equals_the_pure_loop(compiled, case):
    ranks, data, max_rank = case
    want = oracle(data, ranks, max_rank)
    limit = -1 if max_rank is None else max_rank
    assert compiled.merge_ids(data, ranks, limit) == want
    assert compiled.merge_table(compiled.build(ranks), data, limit) == want


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_real_ranks_on_many_scripts(compiled, load, name):
    ranks = load(name).ranks
    table = compiled.build(ranks)
    rnd = random.Random(22)
    texts = [p.read_text(encoding="utf-8") for p in sorted((SAMPLES / "languages").glob("*.txt"))]
    texts.append((SAMPLES / "multiscript.txt").read_text(encoding="utf-8"))
    for text in texts:
        words = text.split()
        for _ in range(40):
            data = " ".join(rnd.sample(words, min(len(words), rnd.randint(1, 3)))).encode()[:600]
            cut = rnd.choice([None, 300, 5000, 60000])
            want = oracle(data, ranks, cut)
            limit = -1 if cut is None else cut
            assert compiled.merge_table(table, data, limit) == want, data
            assert compiled.merge_ids(data, ranks, limit) == want, data
    noise = bytes(rnd.randrange(256) for _ in range(3000))  # any bytes, not only UTF-8
    assert compiled.merge_table(table, noise, -1) == oracle(noise, ranks)


def test_a_whole_text_in_one_call_equals_chunk_by_chunk(compiled, load, monkeypatch):
    base = load("o200k_base")
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((SAMPLES / "languages").glob("*.txt")))
    text += "a" * 6000 + " " + "日本語" * 2000  # chunks past COMPILED_MAX_BYTES: the heap loop's
    chunks = base._pat.split(text)  # noqa: SLF001 - the tokenizer's own chunking
    assert max(len(c.encode()) for c in chunks) > ranks_module.COMPILED_MAX_BYTES
    pure = RanksBPE(base.ranks)
    monkeypatch.setattr(ranks_module, "TABLE_AFTER", 0)
    ranks_module.use_compiled(False)
    try:
        want = [i for chunk in chunks for i in pure.encode_chunk(chunk)]
    finally:
        ranks_module.use_compiled(ranks_module.compiled_available())
    ranks_module.use_compiled(True, compiled)
    try:
        fast = RanksBPE(base.ranks)
        assert fast.encode_chunks(chunks) == want  # fresh: every chunk merged
        assert fast.encode_chunks(chunks) == want  # again: every chunk from the cache
        kept = fast.chunk_cache  # what the cache holds
        assert kept and max(len(c.encode()) for c in kept) <= ranks_module.COMPILED_MAX_BYTES  # long ones are not kept
        assert fast.encode_chunk(chunks[3]) == pure.encode_chunk(chunks[3])
        monkeypatch.setattr(ranks_module, "CHUNK_CACHE_LIMIT", 5)  # the cache emptied as it fills
        assert RanksBPE(base.ranks).encode_chunks(chunks) == want
    finally:
        ranks_module.use_compiled(ranks_module.compiled_available())


def test_a_byte_missing_from_the_ranks_is_a_key_error_as_in_python(compiled):
    ranks = {b"a": 0, b"b": 1, b"ab": 2}
    with pytest.raises(KeyError):
        oracle(b"abc", ranks)
    with pytest.raises(KeyError):
        compiled.merge_ids(b"abc", ranks, -1)
    with pytest.raises(KeyError):
        compiled.merge_table(compiled.build(ranks), b"abc", -1)


def test_ranks_the_table_cannot_hold_keep_the_pure_loop(compiled):
    with pytest.raises(ValueError):
        compiled.build({b"a": -1})
    with pytest.raises(ValueError):
        compiled.build({b"a": 2**40})
    with pytest.raises(TypeError):
        compiled.build({"a": 0})
    ranks_module.use_compiled(True, compiled)
    try:
        model = RanksBPE({b"a": 0, b"b": 1, b"ab": 2**40})  # no table: the dict-based loop, then Python
        assert model.encode_chunks(["abab"] * 3000)[:2] == [2**40, 2**40]
    finally:
        ranks_module.use_compiled(ranks_module.compiled_available())
