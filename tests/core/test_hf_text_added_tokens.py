"""HF added tokens: the parts of ``AddedVocabulary.split`` equal the splits ``tokenizers`` hands
its pre-tokenizer (read through a custom pre-tokenizer), with special tokens all matched
(``encode_special_tokens=False``) and all left as text (``True``)."""

from __future__ import annotations

import json

import pytest
from hf_text_support import FUZZ, byte_to_char, sample_texts
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import AddedToken as HFAddedToken
from tokenizers import Tokenizer
from tokenizers import normalizers as N
from tokenizers import pre_tokenizers as P
from tokenizers.models import WordLevel

from tokscope.core import normalizers as our_norm
from tokscope.core.added_tokens.added_vocabulary import AddedToken, AddedVocabulary
from tokscope.core.text.errors import TokenizerFileError

TOKENS = [
    HFAddedToken("<s>", special=True, normalized=False),
    HFAddedToken("</s>", special=True, normalized=False),
    HFAddedToken("<mask>", special=True, normalized=False, lstrip=True),
    HFAddedToken("[SEP]", special=True, normalized=False, rstrip=True),
    HFAddedToken("<|im_start|>", special=True, normalized=False),
    HFAddedToken("<|im", special=False, normalized=False),
    HFAddedToken("s>", special=False, normalized=False),
    HFAddedToken("hello", special=False, normalized=True, single_word=True),
    HFAddedToken("Wörld", special=False, normalized=True),
    HFAddedToken("ab", special=False, normalized=True, lstrip=True, rstrip=True),
    HFAddedToken("abc", special=False, normalized=True),
    HFAddedToken("<SPECIAL_NORM>", special=True, normalized=True),
    HFAddedToken(" x ", special=False, normalized=False, single_word=True),
]
NORMALIZERS = {
    "none": None,
    "lower": N.Lowercase(),
    "nfkd-lower": N.Sequence([N.NFKD(), N.Lowercase()]),
    "llama2": N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")]),
    "strip": N.Strip(),
}

words = st.sampled_from(
    ["<s>", "</s>", "<mask>", "[SEP]", "<|im_start|>", "<|im", "s>", "hello", "Hello", "HELLO", "Wörld", "WÖRLD",
     "wörld", "ab", "abc", "ABC", "<SPECIAL_NORM>", "<special_norm>", " x ", "x", " ", "  ", "\t", "\n", "a", "é",
     "中", "_", "-", "1", "ｈｅｌｌｏ", "ﬁ", "<", ">", "/"]
)
texts = st.lists(words, max_size=14).map("".join)


class _Recorder:
    def __init__(self):
        self.splits = None

    def pre_tokenize(self, pretok):
        self.splits = pretok.get_splits(offset_referential="original", offset_type="byte")


def _hf(normalizer_name: str, encode_special: bool):
    tok = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    if NORMALIZERS[normalizer_name] is not None:
        tok.normalizer = NORMALIZERS[normalizer_name]
    tok.add_tokens(TOKENS)
    tok.encode_special_tokens = encode_special
    return tok


def hf_parts(normalizer_name: str, text: str, encode_special: bool):
    tok = _hf(normalizer_name, encode_special)
    data = json.loads(tok.to_str())
    rec = _Recorder()
    tok.pre_tokenizer = P.PreTokenizer.custom(rec)
    tok.encode(text)
    b2c = byte_to_char(text)
    parts = []
    for s, (a, b), tokens in rec.splits:
        parts.append((s, (b2c[a], b2c[b]), tokens[0].id if tokens else None))
    return parts, data


_VOCABS: dict = {}


def ours(normalizer_name: str):
    if normalizer_name not in _VOCABS:
        _, data = hf_parts(normalizer_name, "x", False)
        norm = our_norm.from_json(data["normalizer"])
        _VOCABS[normalizer_name] = (AddedVocabulary.from_json(data["added_tokens"], norm), norm)
    return _VOCABS[normalizer_name]


def check(normalizer_name: str, text: str) -> None:
    vocab, norm = ours(normalizer_name)
    for encode_special in (False, True):
        want, _ = hf_parts(normalizer_name, text, encode_special)
        allowed = frozenset() if encode_special else vocab.special
        got = vocab.split(text, norm, allowed)
        if not text:
            assert want in ([], [("", (0, 0), None)]) and [(p.text, t) for p, t in got] == [("", None)]
            continue
        assert [(p.text, (p.original_start, p.original_end), t) for p, t in got] == want, (normalizer_name, text, encode_special)


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_examples(name):
    for text in ["", "hello", "say hello!", "sayhello", "a<s>b</s>", "<s></s>", "x  <mask>  y", "[SEP]   z",
                 "<|im_start|>user", "<|imx", "<s>>", "abcab ab  abc", "Wörld WÖRLD", " x x  x ", "<SPECIAL_NORM>",
                 "ｈｅｌｌｏ ﬁ", "<special_norm>"]:
        check(name, text)


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
@FUZZ
@given(text=texts)
def test_fuzz(name, text):
    check(name, text)


def test_samples():
    for text in sample_texts().values():
        check("llama2", text)


def test_subset_of_specials():
    vocab, norm = ours("none")
    parts = vocab.split("<s>a</s>", norm, frozenset({"</s>"}))
    assert [(p.text, t is not None) for p, t in parts] == [("<s>a", False), ("</s>", True)]
    # a skipped special token's match is not retried inside: "s>" (non-special) is not found in "<s>"
    assert [(p.text, t is not None) for p, t in vocab.split("<s>", norm, frozenset())] == [("<s>", False)]
    assert [(p.text, t is not None) for p, t in vocab.split("<<s>", norm, frozenset())] == [("<<s>", False)]


def test_find_special():
    vocab, norm = ours("lower")
    assert vocab.find_special("a <s> b", norm, vocab.special) == "<s>"
    assert vocab.find_special("a b", norm, vocab.special) is None
    assert vocab.find_special("x </s><s>", norm, {"<s>"}) == "<s>"
    assert vocab.find_special("x </s><s>", norm, {"<|im_start|>"}) is None
    # normalized special tokens are found in the normalized text
    assert vocab.find_special("<SPECIAL_norm>", norm, vocab.special) == "<SPECIAL_NORM>"


def test_added_token_json():
    t = AddedToken.from_json({"id": 5, "content": "<x>", "special": False, "lstrip": True})
    assert t.normalized is True and t.lstrip
    with pytest.raises(TokenizerFileError):
        AddedToken.from_json({"id": "5", "content": "<x>"})
    with pytest.raises(TokenizerFileError, match="same text"):
        AddedVocabulary([AddedToken("A", 1), AddedToken("a", 2)], our_norm.Lowercase())
