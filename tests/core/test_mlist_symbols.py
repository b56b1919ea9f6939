"""The compiled symbols of a merge-list BPE word with byte fallback (``mlist_symbols`` of
``merge.c``) against the pure path they replace (``BPE._symbol_ids_plain``): each character's id,
or the ids of its UTF-8 bytes (a lone surrogate's three WTF-8 bytes), on Unicode-wide hypothesis
words and the samples; a byte-fallback file's ids through both; bad arguments are one error."""

from __future__ import annotations

import hf_files
import pytest
from compiled_merge import _with_abi
from hf_support import sample_texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.models import bpe as bpe_module
from tokscope.core.models.bpe import BPE, BYTE_TOKENS

MODULE = _with_abi("MSYM_ABI")
pytestmark = pytest.mark.skipif(MODULE is None, reason="no compiled mlist_symbols: not installed, and no C compiler")

#: a byte-fallback vocabulary: the 256 byte tokens, some ASCII, some CJK and an emoji
VOCAB = {**{token: i for i, token in enumerate(BYTE_TOKENS)},
         **{c: 256 + i for i, c in enumerate("abcdefghij ▁XYZ中文字😀\u0301")}}
FUZZ = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
words = st.text(st.one_of(st.sampled_from(list("abcxyz ▁中文😀\u0301é€")), st.characters(exclude_categories=())),
                max_size=30)


def pure(model: BPE, word: str) -> list[int]:
    found = list(map(model._vocab.get, word))  # noqa: SLF001 - the pure path's own input
    return model._symbol_ids_plain(word, found) if None in found else found  # noqa: SLF001 - the oracle


@FUZZ
@given(word=words)
def test_the_symbols_are_the_pure_paths(word):
    model = BPE(VOCAB, [], byte_fallback=True)
    got = MODULE.mlist_symbols(word, model._vocab, model._byte_ids)  # noqa: SLF001 - what is tested
    assert got == pure(model, word)


def test_every_kind_of_character():
    model = BPE(VOCAB, [], byte_fallback=True)
    word = "a\x00\x7f\x80é\u07ff\u0800\ud800\udfff\uffff\U00010000\U0010ffff😀中"
    got = MODULE.mlist_symbols(word, model._vocab, model._byte_ids)  # noqa: SLF001 - what is tested
    assert got == pure(model, word)
    assert got[-2:] == [VOCAB["😀"], VOCAB["中"]]
    assert got[1] == VOCAB["<0x00>"] and got[12:15] == [VOCAB["<0xED>"], VOCAB["<0xA0>"], VOCAB["<0x80>"]]


@pytest.mark.parametrize("name", ["llama2", "gemma"])
def test_byte_fallback_files_through_both(name):
    """A byte-fallback tokenizer.json's ids on the samples, line by line: the compiled symbols and
    the pure ones give the same ids (and tokenizers' ids, which the parity suites check)."""
    tok = hf.from_json_text(hf_files.build(name), name)
    lines = [line for text in sample_texts().values() for line in text.splitlines()] + ["\ud800x😀\U0010ffff"]
    counting = _counting(MODULE)
    with bpe_module.compiled_part.switched(True, counting):
        fast = [tok.encode(line, disallowed_special=()) for line in lines]
    assert counting.calls > 0  # the words with characters outside the vocabulary took it
    slow_tok = hf.from_json_text(hf_files.build(name), name)
    was = MODULE.MSYM_ABI
    try:
        with bpe_module.compiled_part.switched(True, _without_symbols(MODULE)):
            slow = [slow_tok.encode(line, disallowed_special=()) for line in lines]
    finally:
        assert MODULE.MSYM_ABI == was
    assert fast == slow


def _counting(module):
    """The compiled module, counting its mlist_symbols calls."""
    class Counting:
        calls = 0

        def __getattr__(self, name):
            return getattr(module, name)

        def mlist_symbols(self, *args):
            Counting.calls += 1
            return module.mlist_symbols(*args)
    return Counting()


def _without_symbols(module):
    """The compiled module as an older build without mlist_symbols shows itself."""
    class Older:
        def __getattr__(self, name):
            if name == "MSYM_ABI":
                raise AttributeError(name)
            return getattr(module, name)
    return Older()


def test_bad_arguments_are_one_error():
    vocab = dict(VOCAB)
    with pytest.raises(ValueError):
        MODULE.mlist_symbols("é", vocab, (0,) * 255)
    with pytest.raises(TypeError):
        MODULE.mlist_symbols("é", vocab, (None,) * 256)
    with pytest.raises(TypeError):
        MODULE.mlist_symbols("é", list(vocab), tuple(range(256)))
    with pytest.raises(TypeError):
        MODULE.mlist_symbols(b"a", vocab, tuple(range(256)))
    assert MODULE.mlist_symbols("", vocab, tuple(range(256))) == []
