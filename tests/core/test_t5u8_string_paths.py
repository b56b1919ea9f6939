"""The ids-only string path of a T5-style pipeline held to Hugging Face: Replace of run patterns
(which skips the scan when the run is absent), a Sequence of WhitespaceSplit and Metaspace (which
hands Metaspace every piece at once), and Unigram ids with unknown nodes (fused from the compiled
path) on the pure and the compiled lattice, on Unicode-wide text."""

from __future__ import annotations

import json

import pytest
from compiled_merge import _with_abi
from hf_text_support import FUZZ, TRICKY, sample_texts, texts
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, models
from tokenizers import normalizers as N
from tokenizers import pre_tokenizers as P

from tokscope.core import normalizers as our_norm
from tokscope.core import pre_tokenizers as ours
from tokscope.core.models import unigram as unigram_module
from tokscope.core.models.unigram import Unigram
from tokscope.core.text.normalized import NormalizedText

RUNS = [" {2,}", "a+", "x{2,3}", "-{3}", "é{2}", "\u3000+"]
LOOKALIKES = " ".join(["▁", "▁▁", "a▁b", "▁x", "  ", "\u3000\u3000", "aaa", "xx", "---", "éé", "\u2028", "\x1c"])
wide = st.one_of(texts, st.text(st.sampled_from(" a-x▁é\u3000\t\n\x1c\u0301\U0001F600中"), max_size=30))


def _normalizer(hf) -> object:
    tok = Tokenizer(models.WordLevel({"a": 0}, unk_token="a"))
    tok.normalizer = hf
    return our_norm.from_json(json.loads(tok.to_str())["normalizer"])


def _pre_tokenizer(hf) -> object:
    tok = Tokenizer(models.WordLevel({"a": 0}, unk_token="a"))
    tok.pre_tokenizer = hf
    return ours.from_json(json.loads(tok.to_str())["pre_tokenizer"])


REPLACES = {run: (N.Replace(Regex(run), content), _normalizer(N.Replace(Regex(run), content)))
            for run, content in zip(RUNS, ["_", "\\1", "", "\\", "▁▁", "$0"])}
PRE = {
    scheme: (hf, _pre_tokenizer(hf))
    for scheme, hf in {
        "always": P.Sequence([P.WhitespaceSplit(), P.Metaspace(prepend_scheme="always")]),
        "never": P.Sequence([P.WhitespaceSplit(), P.Metaspace(prepend_scheme="never")]),
        "nosplit": P.Sequence([P.WhitespaceSplit(), P.Metaspace(split=False)]),
        "other": P.Sequence([P.WhitespaceSplit(), P.Metaspace(replacement="a")]),
        "twice": P.Sequence([P.Metaspace(), P.WhitespaceSplit(), P.Metaspace()]),
    }.items()
}


def check_replace(run: str, text: str) -> None:
    hf, mine = REPLACES[run]
    assert mine.normalize_str(text) == hf.normalize_str(text), (run, text)


def check_pre(scheme: str, text: str) -> None:
    hf, mine = PRE[scheme]
    want = [piece for piece, _ in hf.pre_tokenize_str(text) if piece]
    assert mine.split_str(text, False) == want, (scheme, text)
    assert [c.text for c in mine.pre_tokenize([NormalizedText.identity(text, 1)])] == want


@FUZZ
@given(text=wide, run=st.sampled_from(RUNS))
def test_run_replace_equals_hf(text, run):
    check_replace(run, text)


@FUZZ
@given(text=wide, scheme=st.sampled_from(sorted(PRE)))
def test_whitespace_split_then_metaspace_equals_hf(text, scheme):
    check_pre(scheme, text)


def test_string_stages_on_samples_and_lookalikes():
    for text in [*sample_texts().values(), LOOKALIKES, " ".join(TRICKY), "".join(TRICKY)]:
        for run in RUNS:
            check_replace(run, text)
        for scheme in PRE:
            check_pre(scheme, text)


def test_run_patterns_read():
    """Only a plain character's run gives a required text; anything else scans as before."""
    from tokscope.core.normalizers.replace import _required_text

    assert [_required_text(p) for p in RUNS] == ["  ", "a", "xx", "---", "éé", "\u3000"]
    assert [_required_text(p) for p in [".+", "a*", "a{0,}", "\\s{2,}", "[a]+", "a{2,}b", "a{99}", "(a)+"]] == [None] * 8


# ----- Unigram ids with unknown nodes --------------------------------------------------------------

VOCAB = [("<unk>", 0.0), ("a", -1.0), ("b", -2.0), ("ab", -2.5), ("▁", -1.5), ("▁a", -2.0), ("é", -3.0),
         ("<0xE4>", -9.0), ("<0xB8>", -9.0), ("<0xAD>", -9.0)]
unigram_text = st.text(st.sampled_from("ab▁é中\u0301x\U0001F600"), max_size=20)


class _WithoutIds:
    """A compiled lattice as an older build gives it: no ``lattice_ids``."""

    def __init__(self, module):
        self.lattice_build = module.lattice_build
        self.lattice_viterbi = module.lattice_viterbi


@pytest.fixture(params=["pure", "compiled", "compiled without lattice_ids"])
def lattice(request):
    was = unigram_module.compiled_lattice()
    if request.param != "pure":
        module = _with_abi("UIDS_ABI")
        if module is None:
            pytest.skip("no C compiler to build the compiled lattice")
        unigram_module.use_compiled(True, module if request.param == "compiled" else _WithoutIds(module))
    else:
        unigram_module.use_compiled(False)
    yield request.param
    unigram_module.use_compiled(was is not None, was or _with_abi("LATTICE_ABI"))


@pytest.mark.parametrize("byte_fallback", [False, True])
def test_unigram_ids_with_unknowns_equal_hf(lattice, byte_fallback):
    hf = Tokenizer(models.Unigram(VOCAB, unk_id=0, byte_fallback=byte_fallback))
    mine = Unigram(VOCAB, unk_id=0, byte_fallback=byte_fallback)

    @FUZZ
    @given(text=unigram_text)
    def check(text):
        want = hf.encode(text, add_special_tokens=False).ids if text else []
        assert mine._tokenize_ids(text) == want == [t[0] for t in mine.tokenize(text)]

    check()
    for text in ["x", "xx中x", "a中b", "\U0001F600ab\U0001F600", "中中", "<unk>", "a<unk>中"]:
        assert mine._tokenize_ids(text) == hf.encode(text, add_special_tokens=False).ids


def test_unigram_ids_without_an_unknown_id(lattice):
    """A chunk that needs the unknown id a model lacks is the one-line error, on every path."""
    from tokscope.core.text.errors import TokenizerFileError

    mine = Unigram(VOCAB[1:], unk_id=None)
    assert mine._tokenize_ids("ab▁a") == [t[0] for t in mine.tokenize("ab▁a")]
    with pytest.raises(TokenizerFileError):
        mine._tokenize_ids("a中")
