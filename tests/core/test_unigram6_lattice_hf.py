"""Hugging Face's Unigram model walked by the compiled lattice (``lattice_viterbi`` in Hugging
Face's mode) and by the pure-Python walk: both give ``tokenizers``' ids and offsets, and the same
best segmentation and score.

Each test runs with each walk (``walk``), on models made fresh. Random vocabularies whose scores
tie often (positive scores too, pieces listed twice, a missing unk_id, byte fallback with bytes
missing), trained vocabularies on every sample, and the error when an unknown character needs the
unk_id a model lacks.
"""

from __future__ import annotations

import pytest
from compiled_merge import lattice_module
from hf_support import (FUZZ, bare_encode, hf_encode, hf_model_from_json, ours_from_json, pre_tokenized_words,
                        sample_texts, trained, with_byte_tokens)
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import models as hf_models

from tokscope.core.models import unigram as unigram_module
from tokscope.core.models.unigram import Unigram
from tokscope.core.text.errors import TokenizerFileError



@pytest.fixture(scope="module", params=["compiled", "pure"])
def walk(request):
    was = unigram_module.compiled_lattice()
    if request.param == "compiled":
        module = lattice_module()
        if module is None:
            pytest.skip("no compiled lattice: not installed, and no C compiler to build one")
        unigram_module.use_compiled(True, module)
    else:
        unigram_module.use_compiled(False)
    yield request.param
    unigram_module.use_compiled(was is not None, was)


POOL = ["a", "b", "c", "é", "中", "👍", "\u0301", "▁"]


@st.composite
def specs(draw):
    alphabet = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=5, unique=True))
    pieces = draw(st.lists(st.lists(st.sampled_from(alphabet), min_size=1, max_size=4).map("".join), max_size=25))
    score = st.sampled_from([-1.0, -2.0, -3.0, -0.5, -4.25, 0.0, 2.0, -10.0, -1.5, -0.1, -0.2, -0.3])
    vocab = [(p, draw(score)) for p in pieces]
    if draw(st.booleans()):
        vocab.insert(draw(st.integers(0, len(vocab))), ("<unk>", draw(score)))
    if draw(st.booleans()) and vocab:
        vocab.append(draw(st.sampled_from(vocab)))  # a piece listed twice
    byte_fallback = draw(st.booleans())
    if byte_fallback:
        missing = set(draw(st.lists(st.integers(0, 255), max_size=3)))
        vocab += [(f"<0x{b:02X}>", draw(score)) for b in range(256) if b not in missing]
    unk_id = None
    if vocab and draw(st.integers(0, 4)):
        names = [p for p, _ in vocab]
        unk_id = names.index("<unk>") if "<unk>" in names else draw(st.integers(0, len(vocab) - 1))
    letters = st.one_of(st.sampled_from(alphabet), st.sampled_from(alphabet),
                        st.sampled_from(["z", "ж", "€", "<unk>", "🎉", "\U0010fffd"]))
    words = draw(st.lists(st.lists(letters, min_size=1, max_size=30).map("".join), min_size=1, max_size=4))
    return vocab, unk_id, byte_fallback, words


@FUZZ
@given(spec=specs())
def test_random_vocabularies_give_the_ids_of_tokenizers(walk, spec):
    vocab, unk_id, byte_fallback, words = spec
    hf = hf_models.Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)
    ours = Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)
    for word in words:
        try:
            expected = hf_encode(hf, word)
        except Exception:
            with pytest.raises(TokenizerFileError, match="unk_id"):
                ours.tokenize(word)
            continue
        assert ours.tokenize(word) == expected, word


@pytest.mark.parametrize("byte_fallback", [False, True], ids=["", "byte fallback"])
def test_trained_vocabularies_give_the_ids_of_tokenizers(walk, byte_fallback):
    obj = trained("unigram", vocab_size=1600, pre="metaspace")["model"]
    if byte_fallback:
        obj = with_byte_tokens(obj, missing=(0xA9, 0xE4))
    ours, hf = ours_from_json(obj), hf_model_from_json(obj)
    for text in sample_texts().values():
        for word in pre_tokenized_words(text, "metaspace"):
            assert ours.tokenize(word) == bare_encode(hf, word), word
        line = "▁" + text.replace(" ", "▁")  # a long chunk: the whole sample
        assert ours.tokenize(line) == bare_encode(hf, line)


def test_the_two_walks_give_the_same_best_segmentation():
    module = lattice_module()
    if module is None:
        pytest.skip("no compiled lattice: not installed, and no C compiler to build one")
    obj = trained("unigram", vocab_size=1000, pre="metaspace")["model"]
    was = unigram_module.compiled_lattice()
    try:
        got = []
        for on in (True, False):
            unigram_module.use_compiled(on, module)
            ours = ours_from_json(obj)
            got.append([ours.best("▁" + text.replace(" ", "▁")[:300]) for text in sample_texts().values()])
        assert got[0] == got[1]
    finally:
        unigram_module.use_compiled(was is not None, was)


def test_an_unknown_character_without_an_unk_id_is_an_error(walk):
    model = Unigram([("a", -1.0), ("b", -2.0)])
    assert model.tokenize("ab") == [(0, 0, 1), (1, 1, 2)]
    with pytest.raises(TokenizerFileError, match="unk_id"):
        model.tokenize("ax")
    # the unknown node is only needed when it would beat what already reaches its end
    covered = Unigram([("x", -1.0), ("xa", -1.0), ("b", -1.0)])
    assert covered.tokenize("xab") == [(1, 0, 2), (2, 2, 3)]
