"""The compiled merge-list loop (``mlist_build``/``mlist_merge`` of ``merge.c``) against the
pure-Python one it replaces (``BPE._merge_heap``, Hugging Face's ``Word::merge_all``) and the plain
reference loop: random merge maps (pairs listed twice, several pairs making one id, ranks tying
the same id), Hugging Face's BPE on random vocabularies, and whole ``tokenizer.json`` files of the
merge-list families on the samples (24 languages) and hypothesis text, ids and offsets, each run
with the compiled loop and with the pure one. The suites of ``test_hf_models_bpe.py`` and
``test_hf_tokenizers.py`` run with both loops too (``tests/conftest.py``)."""

from __future__ import annotations

from array import array
from types import SimpleNamespace

import hf_files
import pytest
from compiled_merge import list_merge_module
from hf_support import FUZZ, SMALL_FUZZ, sample_texts, texts_st
from hypothesis import given
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.models import bpe as bpe_module
from tokscope.core.models.bpe import BPE
from tokscope.core.reference import merge_list_reference

#: the tokenizer.json families whose model is Hugging Face's merge-list BPE
FAMILIES = ("llama2", "mistral-metaspace", "gemma", "llama3", "gpt2", "deepseek")


@pytest.fixture(scope="module")
def module():
    found = list_merge_module()
    if found is None:
        pytest.skip("no compiled merge-list loop: not installed, and no C compiler to build one")
    return found


@pytest.fixture(scope="module")
def compiled(module):
    """Switches between the compiled loop (``compiled(True)``) and the pure one, restoring what
    was in use after the test."""
    was = bpe_module.compiled_merge()

    def switch(on: bool) -> None:
        bpe_module.use_compiled(on, module)

    yield switch
    bpe_module.use_compiled(was is not None, was)


@st.composite
def merge_maps(draw):
    """Random merge lists over a few ids: ``(keys, results, words)``. Pairs are listed twice (the
    later rank counts), several pairs make one id and one id may be made at several ranks, so
    Hugging Face's stale-entry check (it compares made ids, not ranks) is exercised."""
    ids = st.integers(0, 7) | st.sampled_from([2**32 - 1, 2**31, 65_536])
    pairs = draw(st.lists(st.tuples(ids, ids, ids), max_size=40))
    keys = array("Q", [a << 32 | b for a, b, _ in pairs])
    results = array("I", [r for _, _, r in pairs])
    words = draw(st.lists(st.lists(ids, max_size=70), min_size=1, max_size=4))
    return keys, results, words


def _pure_heap(keys: array, results: array, word: list[int]) -> tuple[list[int], list[int]]:
    """``BPE._merge_heap`` on these arrays: the merged ids and each final symbol's end."""
    holder = SimpleNamespace(_merges=dict(zip(keys.tolist(), range(len(keys)))), _results=results)
    ids = list(word)
    ends = BPE._merge_heap(holder, ids)  # type: ignore[arg-type]
    return ids, ends


@FUZZ
@given(merge_maps())
def test_the_compiled_loop_merges_as_the_pure_heap(module, spec):
    keys, results, words = spec
    table = module.mlist_build(keys, results)
    for word in words:
        ids, ends = _pure_heap(keys, results, word)
        assert module.mlist_merge(table, list(word)) == ids
        assert module.mlist_merge(table, list(word), True) == (ids, ends)


@FUZZ
@given(merge_maps())
def test_with_one_id_per_pair_it_merges_as_the_plain_reference(module, spec):
    keys, results, words = spec
    # a merge map where each made id has one pair (a real merge list: a token is its parts):
    # then the heap, the compiled loop and the plain loop agree
    made: dict[int, int] = {}
    kept = [(k, r) for k, r in zip(keys.tolist(), results.tolist()) if made.setdefault(r, k) == k]
    keys = array("Q", [k for k, _ in kept])
    results = array("I", [r for _, r in kept])
    rank = dict(zip(keys.tolist(), range(len(keys))))
    merges = {(k >> 32, k & 0xFFFFFFFF): (v, results[v]) for k, v in rank.items()}
    table = module.mlist_build(keys, results)
    for word in words:
        assert module.mlist_merge(table, list(word)) == merge_list_reference(word, merges)


def test_short_words_ties_and_a_pair_listed_twice(module):
    # ranks: 0 = (1, 2) -> 5, 1 = (2, 1) -> 6, 2 = (1, 2) -> 5 again (the later rank counts)
    keys = array("Q", [1 << 32 | 2, 2 << 32 | 1, 1 << 32 | 2])
    table = module.mlist_build(keys, array("I", [5, 6, 5]))
    assert module.mlist_merge(table, []) == []
    assert module.mlist_merge(table, [1], True) == ([1], [1])
    # (2, 1) at rank 1 now beats (1, 2) at rank 2
    assert module.mlist_merge(table, [1, 2, 1], True) == ([1, 6], [1, 3])
    assert module.mlist_merge(table, [1, 2, 3, 1, 2], True) == ([5, 3, 5], [2, 3, 5])


def test_bad_calls_are_one_line_errors(module):
    table = module.mlist_build(array("Q", [0]), array("I", [1]))
    with pytest.raises(TypeError):
        module.mlist_merge(table, ["a"])
    with pytest.raises(OverflowError):
        module.mlist_merge(table, [2**32])
    with pytest.raises(OverflowError):
        module.mlist_merge(table, [-1])
    with pytest.raises(ValueError):
        module.mlist_merge(module.build({}), [1])  # another kind of table
    with pytest.raises(ValueError, match="as many"):
        module.mlist_build(array("Q", [0, 1]), array("I", [1]))


def test_a_model_built_before_the_switch_follows_it(compiled):
    model = BPE({"a": 0, "b": 1, "ab": 2, "abb": 3}, ["a b", "ab b"])
    compiled(False)
    assert model.tokenize_ids("abbab") == [3, 2] and model._mtable is None
    compiled(True)
    model.forget()
    assert model.tokenize_ids("abbab") == [3, 2] and model._mtable is not None
    assert model.tokenize("abbab") == [(3, 0, 3), (2, 3, 5)]


# ----- whole tokenizer.json files ----------------------------------------------------------------

_FILES: dict = {}


def _pair(name: str):
    """``(library tokenizer, core tokenizer made with the compiled loop, made with the pure one)``."""
    found = _FILES.get(name)
    if found is None:
        try:
            text = hf_files.build(name)
        except hf_files.Missing as exc:
            pytest.skip(str(exc))
        found = _FILES[name] = (hf_files.hf_tokenizer(name), text)
    return found


def _both(compiled, name: str, texts: list[str]) -> None:
    ref, text = _pair(name)
    outs = []
    for on in (True, False):
        compiled(on)
        tok = hf.from_json_text(text, name)  # fresh: no chunk cached by the other loop
        outs.append(([tok.encode(t, disallowed_special=()) for t in texts],
                     [tok.encode_with_offsets(t, disallowed_special=()) for t in texts]))
    assert outs[0] == outs[1]
    ref.encode_special_tokens = True
    try:
        assert outs[0][0] == [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    finally:
        ref.encode_special_tokens = False


@pytest.mark.parametrize("name", FAMILIES)
def test_files_on_every_sample_compiled_and_pure(compiled, name):
    texts = list(sample_texts().values())
    # whole samples (long words cut where no merge crosses) and their lines (short documents)
    _both(compiled, name, texts + [line for t in texts for line in t.splitlines()[:20]])


@SMALL_FUZZ
@given(st.lists(texts_st, min_size=1, max_size=6))
def test_files_on_generated_text_compiled_and_pure(compiled, texts):
    for name in ("gemma", "llama2", "llama3"):
        _both(compiled, name, texts + ["".join(texts) * 9])


@FUZZ
@given(st.lists(st.sampled_from(["ab", "a", "b", "é", "中", "x", "▁", "abab"]), min_size=1, max_size=40).map("".join))
def test_long_words_merged_whole_by_the_compiled_loop_and_cut_by_the_pure_one(compiled, word):
    # the ids-only path: the compiled loop merges a long word whole, the pure one cuts it where no
    # merge crosses; both give the ids of the offsets path
    vocab = {"a": 0, "b": 1, "ab": 2, "abab": 3, "▁": 4, "▁a": 5, "<unk>": 6,
             **{f"<0x{b:02X}>": 7 + b for b in range(256)}}
    model = BPE(vocab, ["a b", "ab ab", "▁ a"], unk_token="<unk>", byte_fallback=True)
    expected = [t for t, _, _ in model._encode_word(word)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bpe_module, "CUT_THRESHOLD", 2)
        for on in (True, False):
            compiled(on)
            model.forget()
            assert model.tokenize_ids(word) == expected
