"""Hugging Face's Unigram model against ``tokenizers``: vocabularies trained on the samples (with
and without byte fallback), random vocabularies whose scores tie often; the n best segmentations
against every segmentation enumerated by brute force."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_support import (
    FUZZ,
    SMALL_FUZZ,
    bare_encode,
    hf_encode,
    hf_model_from_json,
    ours_from_json,
    pre_tokenized_words,
    sample_texts,
    texts_st,
    trained,
    with_byte_tokens,
)
import tokenizers
from tokenizers import models as hf_models

from tokscope.core.models import unigram
from tokscope.core.text.errors import TokenizerFileError
from tokscope.core.formats.tokenizer_json_models import from_json, hf_json_float, load_json
from tokscope.core.models.unigram import Unigram

POOL = ["a", "b", "c", "é", "中", "👍", "\u0301", "▁", "<unk>"]


@st.composite
def unigram_specs(draw, max_word: int = 16):
    alphabet = draw(st.lists(st.sampled_from(POOL[:-1]), min_size=1, max_size=5, unique=True))
    pieces = draw(st.lists(st.lists(st.sampled_from(alphabet), min_size=1, max_size=4).map("".join), max_size=25))
    # few distinct scores, so that paths tie; positive ones too (the unknown penalty is relative)
    score = st.sampled_from([-1.0, -2.0, -3.0, -0.5, -4.25, 0.0, 2.0, -10.0, -1.5])
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
    letters = st.one_of(st.sampled_from(alphabet), st.sampled_from(alphabet), st.sampled_from(["z", "ж", "€", "<unk>"]))
    words = draw(st.lists(st.lists(letters, min_size=1, max_size=max_word).map("".join), min_size=1, max_size=4))
    return vocab, unk_id, byte_fallback, words


@FUZZ
@given(unigram_specs())
def test_random_vocabularies_match_tokenizers(spec):
    vocab, unk_id, byte_fallback, words = spec
    hf = hf_models.Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)
    ours = Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)
    for word in words:
        try:
            expected = hf_encode(hf, word)
        except Exception:
            with pytest.raises(TokenizerFileError):
                ours.tokenize(word)
            continue
        assert ours.tokenize(word) == expected, word


def test_ties_keep_the_longest_last_piece():
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("abab", -4.0)]
    hf = hf_models.Unigram(vocab, unk_id=0)
    ours = Unigram(vocab, unk_id=0)
    for word in ["ab", "abab", "aab", "ababab"]:
        assert ours.tokenize(word) == hf_encode(hf, word)
    assert [ours.id_to_token(t) for t, _, _ in ours.tokenize("abab")] == ["abab"]


def test_unknowns_are_fused_then_fall_back_to_bytes():
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -2.5), ("<0xC3>", -5.0), ("<0xA9>", -5.0)]
    hf = hf_models.Unigram(vocab, unk_id=0, byte_fallback=True)
    ours = Unigram(vocab, unk_id=0, byte_fallback=True)
    for word in ["abxéab", "xy", "éé", "aéb", "é"]:
        assert ours.tokenize(word) == hf_encode(hf, word), word
    assert [t for t, _, _ in ours.tokenize("éé")] == [4, 5, 4, 5]
    assert ours.tokenize("é") == [(4, 0, 1), (5, 0, 1)]


def test_without_an_unk_id_an_unknown_character_is_an_error():
    model = Unigram([("a", -1.0), ("b", -2.0)])
    assert model.tokenize("ab") == [(0, 0, 1), (1, 1, 2)]
    with pytest.raises(TokenizerFileError, match="unk_id"):
        model.tokenize("ax")
    assert model.nbest("ax", 3) == ()
    # the unknown node is only needed when it would beat what already reaches its end
    covered = Unigram([("x", -1.0), ("xa", -1.0), ("b", -1.0)])
    hf = hf_models.Unigram([("x", -1.0), ("xa", -1.0), ("b", -1.0)], unk_id=None)
    assert covered.tokenize("xab") == hf_encode(hf, "xab")


@pytest.mark.parametrize("vocab_size", [1000, 1600])
@pytest.mark.parametrize("byte_fallback", [False, True], ids=["", "byte fallback"])
def test_trained_vocabularies_match_on_every_sample(vocab_size, byte_fallback):
    obj = trained("unigram", vocab_size=vocab_size, pre="metaspace")["model"]
    if byte_fallback:
        obj = with_byte_tokens(obj, missing=(0xA9, 0xE4))
    ours, hf = ours_from_json(obj), hf_model_from_json(obj)
    for text in sample_texts().values():
        for word in pre_tokenized_words(text, "metaspace"):
            assert ours.tokenize(word) == bare_encode(hf, word), word
        line = "▁" + text[:400].replace(" ", "▁")
        assert ours.tokenize(line) == bare_encode(hf, line)


@SMALL_FUZZ
@given(texts_st)
def test_trained_vocabulary_matches_on_generated_text(text):
    obj = with_byte_tokens(trained("unigram", vocab_size=1600, pre="metaspace")["model"], missing=(0xA9,))
    ours, hf = ours_from_json(obj), hf_model_from_json(obj)
    assert ours.tokenize(text) == bare_encode(hf, text)


# ----- scores as Hugging Face reads them ------------------------------------------------------


def _held_by_hf(model_json_text: str) -> list[float]:
    """The scores a ``tokenizers`` Unigram holds after reading the model's JSON text as it is
    (written back in the shortest form, which reads back exactly)."""
    doc = (
        '{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": null, '
        '"pre_tokenizer": null, "post_processor": null, "decoder": null, "model": ' + model_json_text + "}"
    )
    held = json.loads(tokenizers.Tokenizer.from_str(doc).to_str())
    return [score for _, score in held["model"]["vocab"]]


def test_scores_are_read_as_hugging_face_reads_them():
    """Hugging Face's JSON reader rounds some decimals one unit in the last place away from the
    correct float; ``load_json`` does as it does, a plain ``json.loads`` does not."""
    text = json.dumps(trained("unigram", vocab_size=1600, pre="metaspace")["model"])
    held = _held_by_hf(text)
    assert [score for _, score in load_json(text)["vocab"]] == held
    plain = [score for _, score in json.loads(text)["vocab"]]
    assert sum(a != b for a, b in zip(plain, held)) > 10


NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    # (an integer literal is read as an integer; past 2**64 Hugging Face drops digits, unlike
    # Python, but no vocabulary has integer scores that large)
    st.from_regex(r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?", fullmatch=True).filter(
        lambda t: "." in t or "e" in t.lower() or len(t.lstrip("-")) <= 18
    ),
)


@FUZZ
@given(st.lists(NUMBERS, min_size=1, max_size=20))
def test_hf_json_float_is_what_tokenizers_reads(numbers):
    vocab = ", ".join(f'["p{i}", {number}]' for i, number in enumerate(numbers))
    text = '{"type": "Unigram", "unk_id": null, "vocab": [' + vocab + "]}"
    try:
        held = _held_by_hf(text)
    except Exception:  # out of range for Hugging Face
        with pytest.raises(ValueError):
            for number in numbers:
                if "." in number or "e" in number.lower():
                    hf_json_float(number)
                else:
                    raise ValueError("an integer Hugging Face refuses as a score")
        return
    ours = [float(s) for _, s in json.loads(text, parse_float=hf_json_float)["vocab"]]
    assert ours == held


# ----- best and n best -------------------------------------------------------------------------


def _all_segmentations(model: Unigram, text: str):
    """Every path through Hugging Face's lattice (entries found at each position, an unknown node
    where no single-character entry is), with its score, by brute force."""
    out = []

    def walk(pos, pieces, ids, score):
        if pos == len(text):
            out.append((score, tuple(pieces), tuple(ids)))
            return
        single = False
        for end in range(pos + 1, len(text) + 1):
            found = model.token_to_id(text[pos:end])
            if found is not None:
                single |= end == pos + 1
                walk(end, pieces + [text[pos:end]], ids + [found], score + model.score(found))
        if not single and model.unk_id is not None:
            walk(pos + 1, pieces + [text[pos]], ids + [model.unk_id], score + model.unk_score)

    walk(0, [], [], 0.0)
    return sorted(out, key=lambda x: -x[0])


@FUZZ
@given(unigram_specs(max_word=7), st.integers(1, 12))
def test_nbest_are_the_best_paths_by_brute_force(spec, n):
    vocab, unk_id, byte_fallback, words = spec
    model = Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)
    for word in words:
        every = _all_segmentations(model, word)
        found = model.nbest(word, n)
        assert len(found) == min(n, len(every))
        assert [s.score for s in found] == pytest.approx([s for s, _, _ in every[: len(found)]])
        assert len({s.spans for s in found}) == len(found)
        for seg in found:
            assert "".join(seg.pieces) == word
            assert [word[a:b] for a, b in seg.spans] == list(seg.pieces)
            assert math.isclose(seg.score, sum(model.score(i) if i != unk_id or p in model.get_vocab() and model.token_to_id(p) == i else model.unk_score for p, i in zip(seg.pieces, seg.ids)), abs_tol=1e-9)


@FUZZ
@given(unigram_specs())
def test_best_is_the_path_tokenize_takes(spec):
    vocab, unk_id, byte_fallback, words = spec
    model = Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback)
    for word in words:
        try:
            best = model.best(word)
        except TokenizerFileError:
            continue
        assert "".join(best.pieces) == word
        if len(word) <= 7:
            top = _all_segmentations(model, word)[0][0]
            assert best.score == pytest.approx(top)
        assert model.nbest(word, 1) == (best,)
        # tokenize fuses the unknown nodes of this very path
        tokens = model.tokenize(word)
        assert tokens[0][1] == 0 and tokens[-1][2] == len(word)


def test_nbest_without_an_unk_id_counts_real_paths_only():
    """Known deviation (not visible through tokenizers' API, which has no n-best): without an
    unk_id, Hugging Face's lattice finds no path at all when some position starts no entry, even
    one inside a longer entry ("a" here, inside "ba"); tokscope lists the real paths."""
    model = Unigram([("b", -1.0), ("ba", -1.0)])
    assert [s.pieces for s in model.nbest("ba", 3)] == [("ba",)]
    assert model.nbest("ba", 1) == (model.best("ba"),)
    assert model.tokenize("ba") == hf_encode(hf_models.Unigram([("b", -1.0), ("ba", -1.0)]), "ba")


def test_nbest_small_example():
    model = Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -2.5)], unk_id=0)
    found = model.nbest("abx", 4)
    assert [(s.pieces, s.score) for s in found] == [
        (("ab", "x"), -15.0),
        (("a", "b", "x"), -15.5),
    ]
    assert found[0].ids == (3, 0) and found[0].spans == ((0, 2), (2, 3))
    assert model.nbest("abx", 0) == ()
    assert model.best("") == unigram.Segmentation((), (), (), 0.0)


def test_vocabulary_errors_and_json():
    for bad in ([("a", "x")], [("a",)], ["a"], [(1, 0.0)], [("a", True)]):
        with pytest.raises(TokenizerFileError):
            Unigram(bad)
    with pytest.raises(TokenizerFileError, match="below the vocabulary size"):
        Unigram([("a", 0.0)], unk_id=1)
    with pytest.raises(TokenizerFileError, match="empty"):
        Unigram([], unk_id=0)
    obj = trained("unigram", vocab_size=1000, pre="metaspace")["model"]
    model = from_json(obj)
    assert model.kind == "unigram" and model.unk_id == obj["unk_id"] and model.vocab_size == len(obj["vocab"])
    assert from_json({k: v for k, v in obj.items() if k != "type"}).kind == "unigram"
    with pytest.raises(TokenizerFileError):
        unigram.from_json({"type": "Unigram"})


def test_a_piece_listed_twice_is_found_under_its_last_id():
    vocab = [("<unk>", 0.0), ("a", -1.0), ("a", -0.5), ("b", -2.0)]
    model = Unigram(vocab, unk_id=0)
    assert model.tokenize("ab") == hf_encode(hf_models.Unigram(vocab, unk_id=0), "ab")
    assert model.token_to_id("a") == 2 and model.id_to_token(1) == "a" and model.vocab_size == 4

