"""The BERT family's fast string paths against their oracles and Hugging Face's ``tokenizers``:

* ``BertNormalizer.normalize_str`` (one ``translate`` over a remembered per-character table)
  against ``normalize_str_staged`` (the stages one by one) and HF's normalizer, in every
  configuration, the same normalizer over a batch of texts (what it remembers carries over);
* ``BertPreTokenizer.split_str`` (the compiled ``bert_split`` and ``translate`` + split on spaces)
  against the regex of the aligned path and HF's pre-tokenizer;
* WordPiece's ids (the compiled ``wpiece_ids`` and the pure-Python loop) against ``_tokenize``
  (offsets path) and HF's model, on bert-base-uncased's vocabulary and on small vocabularies with
  odd prefixes and limits;
* the whole ``bert`` family file, compiled and pure, against ``tokenizers``.

Texts: Unicode-wide hypothesis characters (emoji, CJK, combining marks, lone surrogates where HF is
not the oracle, added-token look-alikes, every kind of white space) and the 24-language samples.
"""

from __future__ import annotations

import json

import pytest
from compiled_merge import _with_abi
from hf_files import LOOKALIKES, build, hf_tokenizer
from hf_support import FUZZ, SMALL_FUZZ, TRICKY_CHARS, sample_texts
from hypothesis import given
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.models import wordpiece as wp
from tokscope.core.normalizers.bert import BertNormalizer
from tokscope.core.pre_tokenizers import bert as pre_bert
from tokscope.core.pre_tokenizers.bert import BertPreTokenizer
from tokscope.core.text.char_map import CharMap
from tokscope.core.text.unicode import WHITESPACE
from tokscope.core.tokenizer.tokenizer import fix_surrogates

tokenizers = pytest.importorskip("tokenizers")

#: marks whose place canonical reordering decides (Mc with a combining class, Mn of every class),
#: compatibility ideographs (they decompose), CJK, final-sigma and dotted-I material
MARKS = [
    "\u0301", "\u0323", "\u0345", "\u05b0", "\u0e38", "\u302a", "\U0001d165", "\U0001d166", "\U0001d16d",
    "\U0001d16e", "\u1dce", "\u0f71", "\u0f72", "\u093c", "\u094d", "\u0903",
]
OTHER = ["\uf900", "\ufa10", "\U0002f800", "\u4e00", "\u3400", "\U00020000", "Σ", "ΑΣ", "İ", "Ǆ", "ẞ", "\u212a", "ᾼ"]
SPACES = sorted(WHITESPACE) + ["\x1c", "\x1f", "\x85", "\u200b", "\ufeff", "\u180e"]
alphabet = st.one_of(
    st.characters(codec="utf-8"),
    st.characters(),  # lone surrogates too
    st.sampled_from(TRICKY_CHARS + MARKS + OTHER + SPACES + LOOKALIKES),
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
)
texts_st = st.lists(alphabet, max_size=40).map("".join)
batches_st = st.lists(texts_st, min_size=1, max_size=6)
CONFIGS = [
    dict(clean_text=c, handle_chinese_chars=h, strip_accents=s, lowercase=lo)
    for c in (True, False) for h in (True, False) for s in (None, True, False) for lo in (True, False)
]
#: one normalizer per configuration for the whole session: its table grows from test to test
NORMALIZERS = [BertNormalizer(**config) for config in CONFIGS]


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _sample_lines() -> list[str]:
    return [line for text in sample_texts().values() for line in text.splitlines()[:20]] + ["".join(TRICKY_CHARS)]


# ----- normalizer ----------------------------------------------------------------------------------


def _check_normalizer(texts: list[str]) -> None:
    for ours, config in zip(NORMALIZERS, CONFIGS):
        theirs = tokenizers.normalizers.BertNormalizer(**config)
        for text in texts:
            got = ours.normalize_str(text)
            assert got == ours.normalize_str_staged(text), (config, text)
            if _utf8(text):
                assert got == theirs.normalize_str(text), (config, text)


def test_normalizer_on_the_samples():
    _check_normalizer(_sample_lines())


@FUZZ
@given(batches_st)
def test_normalizer_on_generated_batches(texts):
    _check_normalizer(texts)


@pytest.mark.parametrize("text", [
    "a\U0001d165\u0301", "a\u0301\U0001d165", "\U0001d16d\U0001d165x\U0001d165\U0001d16d", "é\U0001d166\u0323",
    "\u0f71\U0001d165\u0301", "A\u0301\u0f71\U0001d16e\u0323B", "x\u0903\u093c\u094d", "\U0001d15e\U0001d165",
    "\u1b13\u1b44\u1b13\u1b34\u1b44", "\u0628\u08d4\u0651\u08e1\u0650", "\u1b95\u1baa\u1ba5\u0301\u1baa",
])
def test_normalizer_where_reordering_moves_a_kept_mark(text):
    """A mark that stays (not Mn) but has a combining class: its place depends on its neighbours,
    so the text takes the staged path; the answers are HF's all the same."""
    for ours, config in zip(NORMALIZERS, CONFIGS):
        theirs = tokenizers.normalizers.BertNormalizer(**config)
        assert ours.normalize_str(text) == ours.normalize_str_staged(text) == theirs.normalize_str(text), config


def test_normalizer_table_is_not_pickled_and_follows_the_configuration():
    import pickle

    norm = BertNormalizer()
    assert norm.normalize_str("ÀB") == "ab"
    copy = pickle.loads(pickle.dumps(norm))
    assert "_chars" in vars(norm) and "_chars" not in vars(copy)
    assert copy.normalize_str("ÀB") == "ab"
    norm.lowercase = False  # a changed setting is not answered from the old table
    assert norm.normalize_str("ÀB") == "ÀB" == tokenizers.normalizers.BertNormalizer(lowercase=False).normalize_str("ÀB")
    assert repr(norm) == "BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=False)"


def test_char_map_is_bounded_and_skips_what_it_cannot_map():
    class Stop(Exception):
        pass

    def upper(c: str) -> str:
        if c == "!":
            raise Stop
        return c.upper()

    chars = CharMap(upper, limit=4)
    assert "".join(map(chr, range(0x61, 0x7b))).translate(chars) == "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    assert len(chars) <= 4
    with pytest.raises(Stop):
        "ab!".translate(chars)
    assert ord("!") not in chars
    assert "\ud800x".translate(chars) == "\ud800X"


# ----- pre-tokenizer -------------------------------------------------------------------------------


COMPILED = _with_abi("WPIECE_ABI")
PATHS = ["python"] + (["compiled"] if COMPILED is not None else [])


@pytest.fixture(scope="module", params=PATHS)
def path(request):
    """Each test runs with the pure-Python ids loop and split and, when they can be built, the
    compiled ones."""
    on = request.param == "compiled"
    with wp.compiled_part.switched(on, COMPILED), pre_bert.compiled_part.switched(on, COMPILED):
        yield request.param


def _check_pre(texts: list[str]) -> None:
    ours = BertPreTokenizer()
    theirs = tokenizers.pre_tokenizers.BertPreTokenizer()
    for text in texts:
        got = ours.split_str(text)
        assert got == ours.split_str_regex(text) == ours.split_str_python(text), text
        if _utf8(text):
            assert got == [p for p, _ in theirs.pre_tokenize_str(text)], text


def test_pre_tokenizer_on_the_samples(path):
    _check_pre(_sample_lines())


@FUZZ
@given(batches_st)
def test_pre_tokenizer_on_generated_batches(path, texts):
    _check_pre(texts)


# ----- WordPiece -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bert_model():
    obj = json.loads(build("bert"))["model"]
    return wp.from_json(obj), _hf_wordpiece(obj)


def _hf_wordpiece(obj: dict):
    return tokenizers.models.WordPiece(obj["vocab"], unk_token=obj["unk_token"],
                                       continuing_subword_prefix=obj["continuing_subword_prefix"],
                                       max_input_chars_per_word=obj["max_input_chars_per_word"])


def _ids(model: wp.WordPiece, word: str) -> list[int]:
    model.forget()
    return model.tokenize_ids(word)


words_st = st.lists(st.one_of(alphabet, st.sampled_from(["un", "##", "aff", "able", "ing", "the", "xx", "ph"])),
                    min_size=1, max_size=30).map("".join)


def _check_words(model: wp.WordPiece, hf_model, words: list[str]) -> None:
    for word in words:
        got = _ids(model, word)
        assert got == [t[0] for t in model._tokenize(word)], word
        if _utf8(word):
            assert got == [t.id for t in hf_model.tokenize(word)], word


def test_wordpiece_on_the_sample_words(path, bert_model):
    model, hf_model = bert_model
    norm, pre = BertNormalizer(), BertPreTokenizer()
    words = {w for line in _sample_lines() for w in pre.split_str(norm.normalize_str(line))}
    words |= {w for line in _sample_lines() for w in line.split()}  # cased, accented, glued to punctuation
    _check_words(model, hf_model, sorted(words))


@FUZZ
@given(st.lists(words_st, min_size=1, max_size=5))
def test_wordpiece_on_generated_words(path, bert_model, words):
    model, hf_model = bert_model
    _check_words(model, hf_model, words)


def test_wordpiece_at_the_length_limit(path, bert_model):
    model, hf_model = bert_model
    for word in ["a" * 99, "a" * 100, "a" * 101, "é" * 100, "👍" * 100, "👍" * 101, "\ud800" * 101]:
        _check_words(model, hf_model, [word])


vocab_pieces = st.lists(st.text(alphabet=st.sampled_from("ab☃👍#é"), min_size=1, max_size=5), max_size=12)


@SMALL_FUZZ
@given(vocab_pieces, st.sampled_from(["##", "", "#", "☃☃", "▁"]), st.integers(0, 8),
       st.lists(st.text(alphabet=st.sampled_from("ab☃👍#é▁"), min_size=1, max_size=10), min_size=1, max_size=5))
def test_wordpiece_small_vocabularies(path, pieces, prefix, limit, words):
    vocab = {"[UNK]": 0}
    for piece in pieces:
        vocab.setdefault(piece, len(vocab))
        vocab.setdefault(prefix + piece, len(vocab))
    model = wp.WordPiece(vocab, continuing_subword_prefix=prefix, max_input_chars_per_word=limit)
    hf_model = _hf_wordpiece(dict(vocab=vocab, unk_token="[UNK]", continuing_subword_prefix=prefix,
                                  max_input_chars_per_word=limit))
    _check_words(model, hf_model, words)


def test_wordpiece_with_a_huge_limit(path):
    model = wp.from_json(dict(vocab={"[UNK]": 0, "a": 1, "##a": 2}, unk_token="[UNK]", continuing_subword_prefix="##",
                              max_input_chars_per_word=10**30))
    assert model.tokenize_ids("aaa") == [1, 2, 2]


def test_wordpiece_without_its_unknown_token_is_a_clear_error(path):
    model = wp.WordPiece({"a": 0, "##b": 1})
    assert model.tokenize_ids("ab") == [0, 1]
    with pytest.raises(wp.TokenizerFileError, match="unknown token"):
        model.tokenize_ids("abc")


def test_wordpiece_pickles_without_its_continuation_table(path):
    import pickle

    model = wp.WordPiece({"[UNK]": 0, "a": 1, "##b": 2})
    assert model.tokenize_ids("ab") == [1, 2]
    assert "_continued" in vars(model)
    copy = pickle.loads(pickle.dumps(model))
    assert "_continued" not in vars(copy) and copy.tokenize_ids("abb") == [1, 2, 2]


def test_compiled_wordpiece_takes_any_string():
    if COMPILED is None:
        pytest.skip("no C compiler")
    vocab, cont = {"a": 1, "\ud800": 2, "👍": 3}, {"a": 4, "\udfff": 5}
    heads, cont_heads = {"a": 1, "\ud800": 1, "👍": 1}, {"a": 1, "\udfff": 1}
    flt = COMPILED.wpiece_filter(vocab, cont, 64)

    def ids(word, heads=heads, cont_heads=cont_heads, limit=10, flt=flt):
        return COMPILED.wpiece_ids(word, vocab, cont, heads, cont_heads, limit, flt)

    assert ids("a\udfffa") == [1, 5, 4]
    assert ids("\ud800👍") is None
    assert ids("", {}, {}, 0) == []
    assert ids("a", {}) is None  # no entry starts with "a"
    assert ids("aa", {"a": 1 << 60}, {"a": -5}) is None
    assert ids("aa", {"a": 1 << 60}, {"a": 1 << 60}) == [1, 4]
    assert ids("aa", limit=1) is None  # over the limit
    assert ids("aa", flt=bytes(8)) is None  # the filter is asked first: an empty one rules out every entry
    assert ids("aa", flt=b"\xff" * 8) == [1, 4]
    with pytest.raises(TypeError):
        ids(b"a")
    with pytest.raises(TypeError):
        ids("a", {"a": "1"})
    with pytest.raises(OverflowError):
        ids("a", {"a": 1 << 70})
    for bad in (b"", b"\xff" * 7, b"\xff" * 12):
        with pytest.raises(ValueError):
            ids("a", flt=bad)
    for size in (0, 7, 12, -8, 1 << 31):
        with pytest.raises(ValueError):
            COMPILED.wpiece_filter(vocab, cont, size)
    with pytest.raises(TypeError):
        COMPILED.wpiece_filter({1: 2}, cont, 8)


def test_compiled_filter_lets_every_entry_through():
    """Every entry, at the start of a word and as a continuation, passes its own filter (and the
    long ones, past what is filtered, are looked up all the same)."""
    if COMPILED is None:
        pytest.skip("no C compiler")
    vocab = {"[UNK]": 0, "a" * 200: 1, "##" + "b" * 150: 2, "👍\ud800": 3, "##é": 4}
    model = wp.WordPiece(vocab, max_input_chars_per_word=1000)
    with wp.compiled_part.switched(True, COMPILED):
        for word, want in [("a" * 200 + "b" * 150, [1, 2]), ("👍\ud800éé", [3, 4, 4]), ("a" * 199, [0])]:
            assert model.tokenize_ids(word) == want == [t[0] for t in model._tokenize(word)]
        vocab = json.loads(build("bert"))["model"]["vocab"]
        bert = wp.WordPiece({**vocab, "\x00": len(vocab)})  # a start no entry begins with but itself
        for token, token_id in vocab.items():
            assert bert.tokenize_ids(token) == [token_id], token
            if token.startswith("##") and len(token) > 2:
                assert bert.tokenize_ids("\x00" + token[2:]) == [len(vocab), token_id], token


# ----- the whole family file ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def bert_pair():
    return hf.from_json_text(build("bert"), "bert"), hf_tokenizer("bert")


def _check_family(ours, theirs, texts: list[str]) -> None:
    theirs.encode_special_tokens = True
    for text in texts:
        want = theirs.encode(fix_surrogates(text), add_special_tokens=False).ids
        assert ours.encode(text, disallowed_special=()) == want, text
        assert ours.encode_batch([text, text], disallowed_special=()) == [want, want], text


def test_family_on_the_samples(path, bert_pair):
    _check_family(*bert_pair, _sample_lines())


@FUZZ
@given(batches_st)
def test_family_on_generated_batches(path, bert_pair, texts):
    _check_family(*bert_pair, texts)


def test_compiled_split_takes_any_string():
    if COMPILED is None:
        pytest.skip("no C compiler")
    classes = pre_bert.classes()
    assert COMPILED.bert_split("", classes) == []
    assert COMPILED.bert_split(" \t ", classes) == []
    assert COMPILED.bert_split("\ud800,\U0010ffff\u3000x", classes) == ["\ud800", ",", "\U0010ffff", "x"]
    assert COMPILED.bert_split("a,b c", b"") == ["a,b c"]  # no classes: one run
    assert COMPILED.bert_split("a,b c", b"\x00" * 44 + b"\x02") == ["a", ",", "b c"]  # past the end: class 0
    with pytest.raises(TypeError):
        COMPILED.bert_split(b"a", classes)
