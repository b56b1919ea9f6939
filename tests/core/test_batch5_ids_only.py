"""The ids-only path (``encode``, ``encode_ordinary``, the batch methods) works out no offsets
for the kinds whose offsets cost work (merge-list BPE: byte offsets turned into characters), and
gives exactly the ids of the offsets path (``pieces``, ``tokenize``) and of ``tokenizers``, on
Unicode of every shape: emoji, CJK, combining marks, lone surrogates (replaced by U+FFFD before any
stage, as the library cannot take them), special-token look-alikes, and long chunks (the cut path
of a text with no pre-tokenizer). Speed is a benchmark (bench/bench_hf_tokenizers.py)."""

from __future__ import annotations

import pickle

import hf_files
import pytest
from hf_support import FUZZ, SMALL_FUZZ, TRICKY_CHARS, sample_texts
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hf_models_bpe import bpe_specs

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.models import bpe as bpe_module
from tokscope.core.models.bpe import BPE
from tokscope.core.text.errors import TokenizerFileError
from tokscope.core.tokenizer.tokenizer import fix_surrogates

#: one family per held kind: byte-fallback BPE (normalizer-made ``▁``, Metaspace, one chunk per
#: text), byte-level BPE, WordPiece, Unigram (with and without byte fallback), WordLevel
KINDS = ("llama2", "mistral-metaspace", "gemma", "gpt2", "llama3", "bert", "t5", "xlmr-bytefallback", "wordlevel")
BPE_KINDS = ("llama2", "mistral-metaspace", "gemma", "gpt2", "llama3")

_BUILT: dict[str, tuple] = {}


def built(name: str):
    """``(tokenizers' tokenizer, the core tokenizer pickled)``; a fresh core tokenizer (empty
    caches) is one ``pickle.loads`` away."""
    if name not in _BUILT:
        try:
            text = hf_files.build(name)
        except hf_files.Missing as exc:
            pytest.skip(str(exc))
        _BUILT[name] = (hf_files.hf_tokenizer(name), pickle.dumps(hf.from_json_text(text, name)))
    ref, frozen = _BUILT[name]
    return ref, pickle.loads(frozen)


def library_ids(ref, text: str, *, specials_as_text: bool) -> list[int]:
    ref.encode_special_tokens = specials_as_text
    try:
        return ref.encode(fix_surrogates(text), add_special_tokens=False).ids
    finally:
        ref.encode_special_tokens = False


def check(name: str, text: str) -> None:
    ref, tok = built(name)
    as_text = library_ids(ref, text, specials_as_text=True)
    assert tok.encode(text, disallowed_special=()) == as_text, (name, text)
    assert tok.encode_ordinary(text) == as_text
    specials = library_ids(ref, text, specials_as_text=False)
    assert tok.encode(text, allowed_special="all") == specials, (name, text)
    # the offsets path, on another fresh tokenizer (nothing cached by the ids path)
    _, other = built(name)
    assert [p.id for p in other.pieces(text, allowed_special="all")] == specials
    assert other._encode_aligned(fix_surrogates(text), frozenset()) == as_text


pieces_st = st.one_of(
    st.sampled_from(TRICKY_CHARS),
    st.sampled_from(hf_files.LOOKALIKES),
    st.characters(codec="utf-8"),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
    st.sampled_from(["the ", "tokenizer ", "naïve ", "日本語", "👍🏽", "e\u0301\u0301", "한국어 ", "\u200d"]),
)
#: short texts, and long ones (several hundred characters: a text with no pre-tokenizer is one
#: chunk, cut where no merge crosses)
texts_st = st.one_of(
    st.lists(pieces_st, max_size=24).map("".join),
    st.lists(pieces_st, min_size=80, max_size=160).map("".join),
)


@pytest.mark.parametrize("name", KINDS)
@settings(SMALL_FUZZ, max_examples=min(SMALL_FUZZ.max_examples, 12))
@given(text=texts_st)
def test_ids_only_equals_offsets_path_and_library(name, text):
    check(name, text)


@pytest.mark.parametrize("name", KINDS)
def test_ids_only_on_the_samples_and_lookalikes(name):
    for text in sample_texts().values():
        check(name, text[:1500])
    check(name, " ".join(hf_files.LOOKALIKES) * 3)


@pytest.mark.parametrize("name", BPE_KINDS)
def test_merge_list_ids_work_out_no_offsets(name, monkeypatch):
    """With every offset-making step of the BPE model broken, the ids-only path still gives the
    library's ids: it never called them."""
    ref, tok = built(name)

    def broken(*args, **kwargs):
        raise AssertionError("the ids-only path worked out offsets")

    for attr in ("tokenize", "_tokenize", "_encode_word", "_tokenize_cut"):
        monkeypatch.setattr(BPE, attr, broken)
    monkeypatch.setattr(bpe_module, "_with_offsets", broken)
    texts = [t[:5000] for t in sample_texts().values()] + [" ".join(hf_files.LOOKALIKES)]
    want = [library_ids(ref, t, specials_as_text=True) for t in texts]
    assert tok.encode_batch(texts, disallowed_special=()) == want
    assert tok.encode_ordinary_batch(texts) == want


@FUZZ
@given(bpe_specs(), st.data())
def test_bpe_model_ids_equal_its_tokens(spec, data):
    """Random merge lists with every option: ``tokenize_ids`` is ``tokenize``'s ids (errors
    included), on short words and on long words through the cut path."""
    vocab, merges, options, words = spec
    long_word = "".join(data.draw(st.permutations(words * data.draw(st.integers(1, 6)))))
    for threshold in (bpe_module.CUT_THRESHOLD, 2):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(bpe_module, "CUT_THRESHOLD", threshold)
            for word in [*words, long_word, long_word + long_word]:
                outcomes = []
                for method in ("tokenize", "tokenize_ids"):
                    model = BPE(vocab, merges, **options)  # fresh caches
                    try:
                        got = getattr(model, method)(word)
                    except TokenizerFileError as exc:
                        outcomes.append(("error", str(exc)))
                    else:
                        outcomes.append(("ok", [t[0] if isinstance(t, tuple) else t for t in got]))
                    if outcomes[-1][0] == "ok":  # again, from the caches
                        again = getattr(model, method)(word)
                        assert [t[0] if isinstance(t, tuple) else t for t in again] == outcomes[-1][1]
                assert outcomes[0] == outcomes[1], word


def test_cut_points_are_those_of_the_rule():
    """The cut points (found in one pass in C) are every offset between two characters that are
    tokens and that no merged token holds side by side."""
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "▁": 4, "▁a": 5, "<unk>": 6}
    model = BPE(vocab, ["a b", "▁ a"], unk_token="<unk>")
    word = "ab▁abcza▁c"
    crossing = {"ab", "▁a"}
    want = [i for i in range(1, len(word))
            if word[i - 1] + word[i] not in crossing and word[i - 1] in vocab and word[i] in vocab]
    assert model._cut_points(word) == want == [2, 5, 8, 9]


@settings(SMALL_FUZZ, max_examples=40)
@given(texts=st.lists(texts_st, min_size=1, max_size=6), limit=st.sampled_from([1, 3, 256]))
def test_whitespace_chunks_as_strings_are_its_aligned_chunks(texts, limit):
    """Whitespace's string path (its word class grown over the texts seen, started again past
    the limit) cuts exactly the chunks of its aligned path, text after text."""
    from tokscope.core.pre_tokenizers import whitespace
    from tokscope.core.text.normalized import NormalizedText

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(whitespace, "SEEN_MAX", limit)
        mp.setattr(whitespace, "_seen", [frozenset(), None])
        pre = whitespace.Whitespace()
        for text in texts:
            text = fix_surrogates(text)
            want = [c.text for c in pre.pre_tokenize([NormalizedText.identity(text)])]
            assert pre.split_str(text) == want, text


def test_a_bpe_subclass_that_rewrites_its_tokens_keeps_its_rule_on_the_ids_path():
    """NewlineRunsBPE (llama.cpp's Gemma 4 rule) answers ids by its rule; a subclass that rewrites
    ``_tokenize`` alone takes the ids of its own tokens."""
    from tokscope.core.models.newline_runs_bpe import NewlineRunsBPE

    vocab = {"\n": 0, "\n\n\n": 1, "a": 2, "aa": 3, "\n\n": 4}
    model = NewlineRunsBPE(vocab, ["a a"])
    for word in ["\n\n\n", "\n\n", "\n" * 7, "aaa", "a\n\n\n"]:
        assert model.tokenize_ids(word) == [t for t, _, _ in NewlineRunsBPE(vocab, ["a a"]).tokenize(word)], word
    assert model.tokenize_ids("\n\n\n") == [1]

    class Reversed(BPE):
        def _tokenize(self, text):
            return list(reversed(super()._tokenize(text)))

    rev = Reversed(vocab, ["a a"])
    assert rev.tokenize_ids("aaa") == [2, 3] == [t for t, _, _ in Reversed(vocab, ["a a"]).tokenize("aaa")]

    class Upper(BPE):
        def tokenize(self, text):
            return [(t + 100, s, e) for t, s, e in super().tokenize(text)]

    assert Upper(vocab, ["a a"]).tokenize_ids("aaa") == [103, 102]
