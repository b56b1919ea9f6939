"""Real tokenizer.json text stages of common model families, built with ``tokenizers`` and read
back from its JSON: chunks and alignment equal HF's on samples and fuzzed text. Also: what the
stages do with lone surrogates, and the worked examples of the modules' docstrings."""

from __future__ import annotations

import doctest
import importlib
import json

import pytest
from hf_text_support import FUZZ, hf_pretoken_alignments, hf_pretokens, sample_texts, texts
from hypothesis import given
from tokenizers import Regex, Tokenizer
from tokenizers import normalizers as N
from tokenizers import pre_tokenizers as P
from tokenizers.models import WordLevel

from tokscope.core import normalizers as our_norm
from tokscope.core import pre_tokenizers as our_pre
from tokscope.core.text.errors import UnsupportedComponentError
from tokscope.core.text.normalized import NormalizedText

LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
DEEPSEEK = [
    r"\p{N}{1,3}",
    r"[一-龥぀-ゟ゠-ヿ]+",
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
]


def families(charsmap: bytes | None):
    out = {
        "gpt2": (None, P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)),
        "roberta": (None, P.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)),
        "llama3": (None, P.Sequence([P.Split(Regex(LLAMA3), "isolated"), P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])),
        "qwen2": (N.NFC(), P.Sequence([P.Split(Regex(QWEN2), "isolated"), P.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])),
        "deepseek-v3": (None, P.Sequence([P.Split(Regex(r), "isolated") for r in DEEPSEEK] + [P.ByteLevel(add_prefix_space=False, use_regex=False)])),
        "llama2-mistral-v0.1": (N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")]), None),
        "metaspace-first": (None, P.Metaspace(replacement="▁", prepend_scheme="first", split=False)),
        "bert": (N.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True), P.BertPreTokenizer()),
        "bert-cased": (N.BertNormalizer(lowercase=False), P.BertPreTokenizer()),
        "gemma": (N.Replace(" ", "▁"), None),
        "gemma3": (None, P.Split(" ", "merged_with_previous")),
        "whitespace-digits": (N.Sequence([N.NFD(), N.StripAccents(), N.Lowercase()]), P.Sequence([P.Whitespace(), P.Digits(individual_digits=True)])),
    }
    if charsmap:
        pre = N.Precompiled(charsmap)
        out["t5"] = (pre, P.Sequence([P.WhitespaceSplit(), P.Metaspace(replacement="▁", prepend_scheme="always", split=True)]))
        out["xlm-r"] = (N.Sequence([pre, N.Replace(Regex(" {2,}"), " ")]), P.Metaspace(replacement="▁", prepend_scheme="always"))
    return out


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    charsmap = None
    try:
        import sentencepiece as spm

        from test_hf_text_precompiled import charsmap_of

        folder = tmp_path_factory.mktemp("spm")
        corpus = folder / "corpus.txt"
        corpus.write_text("\n".join(sample_texts().values()), encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=str(folder / "m"), vocab_size=2000, hard_vocab_limit=False,
            model_type="unigram", normalization_rule_name="nmt_nfkc", character_coverage=1.0, minloglevel=2,
        )
        charsmap = charsmap_of((folder / "m.model").read_bytes())
    except ImportError:
        pass
    out = {}
    for name, (hf_n, hf_p) in families(charsmap).items():
        tok = Tokenizer(WordLevel({"a": 0}, unk_token="a"))
        if hf_n is not None:
            tok.normalizer = hf_n
        if hf_p is not None:
            tok.pre_tokenizer = hf_p
        data = json.loads(tok.to_str())
        out[name] = (hf_n, hf_p, our_norm.from_json(data["normalizer"]), our_pre.from_json(data["pre_tokenizer"]))
    return out


NAMES = [
    "gpt2", "roberta", "llama3", "qwen2", "deepseek-v3", "llama2-mistral-v0.1", "metaspace-first", "bert",
    "bert-cased", "gemma", "gemma3", "whitespace-digits", "t5", "xlm-r",
]


def check(configs, name, text):
    if name not in configs:
        pytest.skip("sentencepiece is not installed")
    hf_n, hf_p, n, p = configs[name]
    t = NormalizedText.identity(text)
    if n is not None:
        t = n.normalize(t)
    got = p.pre_tokenize([t]) if p is not None else ([t] if t.text else [])
    hf_p = hf_p if hf_p is not None else P.Sequence([])
    want = [w for w in hf_pretokens(hf_n, hf_p, text) if w[0]]
    assert [(c.text, (c.original_start, c.original_end)) for c in got] == want, (name, text)
    assert [c.alignments() for c in got] == [a for a in hf_pretoken_alignments(hf_n, hf_p, text) if a], (name, text)


@pytest.mark.parametrize("name", NAMES)
def test_samples(configs, name):
    for text in sample_texts().values():
        check(configs, name, text)


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(text=texts)
def test_fuzz(configs, name, text):
    check(configs, name, text)


def test_unsupported_configurations_name_the_component():
    with pytest.raises(UnsupportedComponentError, match="normalizer 'Frobnicate'"):
        our_norm.from_json({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Frobnicate"}]})
    with pytest.raises(UnsupportedComponentError, match="pre-tokenizer 'Split'"):
        our_pre.from_json({"type": "Split", "pattern": {"Regex": r"\X"}, "behavior": "Isolated", "invert": False})
    with pytest.raises(UnsupportedComponentError, match="normalizer 'Replace'"):
        our_norm.from_json({"type": "Replace", "pattern": {"Regex": r"[[:space:]]"}, "content": " "})
    with pytest.raises(UnsupportedComponentError, match="pre-tokenizer '\\(no type\\)'"):
        our_pre.from_json({"add_prefix_space": True})


def test_lone_surrogates():
    """HF cannot take a lone surrogate (Python's str -> Rust String refuses it); the core replaces
    them with U+FFFD before any stage (``fix_surrogates``, as tiktoken). The stages themselves
    treat a surrogate as a character of no class and never fail on one."""
    text = "a\ud800 b\udfff"
    for n in (our_norm.NFKC(), our_norm.Lowercase(), our_norm.BertNormalizer(), our_norm.Replace(" ", "▁")):
        out = n.normalize(NormalizedText.identity(text))
        assert "\ud800" in out.text or isinstance(n, our_norm.BertNormalizer)
    chunks = our_pre.ByteLevel(add_prefix_space=False).pre_tokenize([NormalizedText.identity("a\ud800")])
    assert [c.text for c in chunks] == ["a", "íłĢ"]  # the surrogate's 3 bytes (surrogatepass), never an error


MODULES = [
    "tokscope.core.text.normalized", "tokscope.core.text.unicode", "tokscope.core.patterns.onig", "tokscope.core.normalizers",
    "tokscope.core.normalizers.precompiled", "tokscope.core.pre_tokenizers", "tokscope.core.added_tokens.added_vocabulary",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
