"""One merge-list BPE word's symbols and merges in one compiled call (``mlist_word`` of
``merge.c``) against the pure path it replaces (``BPE._symbol_ids_plain`` or the vocabulary's ids,
then ``BPE._merge_heap``): each character's id, or the ids of its UTF-8 bytes (a lone surrogate's
three WTF-8 bytes), merged by a merge list, on Unicode-wide hypothesis words; without byte
fallback, None exactly when a character has no token; byte-fallback files' ids through both; bad
arguments are one error."""

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

MODULE = _with_abi("MWORD_ABI")
pytestmark = pytest.mark.skipif(MODULE is None, reason="no compiled mlist_word: not installed, and no C compiler")

#: a byte-fallback vocabulary: the 256 byte tokens, some ASCII, some CJK and an emoji, and the
#: tokens its merges make (of characters, of byte tokens, and of merged tokens)
CHARS = "abcdefghij ▁XYZ中文字😀\u0301"
VOCAB = {**{token: i for i, token in enumerate(BYTE_TOKENS)}, **{c: 256 + i for i, c in enumerate(CHARS)}}
MERGES = [("a", "b"), ("ab", "c"), ("▁", "a"), ("中", "文"), ("<0xC3>", "<0xA9>"), ("<0xE2>", "<0x82>"),
          ("<0xE2><0x82>", "<0xAC>"), ("b", "c"), ("c", "a"), ("a", "a"), ("aa", "aa"), ("😀", "😀"), ("X", "\u0301")]
for left, right in MERGES:
    VOCAB.setdefault(left + right, len(VOCAB))
FUZZ = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
words = st.text(st.one_of(st.sampled_from(list("abcxyz ▁中文😀\u0301é€")), st.characters(exclude_categories=())),
                max_size=30)


def model(byte_fallback: bool = True) -> BPE:
    return BPE(VOCAB, [f"{left} {right}" for left, right in MERGES], byte_fallback=byte_fallback)


def compiled(m: BPE, word: str):
    table = m._compiled_table()  # noqa: SLF001 - the table the model's own path passes
    assert table is not None
    byte_ids = m._byte_ids if m._bytes_complete else None  # noqa: SLF001 - as the model passes them
    return MODULE.mlist_word(table[1], word, m._vocab, byte_ids)  # noqa: SLF001 - what is tested


def pure(m: BPE, word: str) -> list[int]:
    """The pure path: the symbols (byte fallback for the missing characters), then the heap loop."""
    found = list(map(m._vocab.get, word))  # noqa: SLF001 - the pure path's own input
    ids = m._symbol_ids_plain(word, found) if None in found else found  # noqa: SLF001 - the oracle
    m._merge_heap(ids)  # noqa: SLF001 - the oracle
    return ids


@pytest.fixture(autouse=True)
def _compiled_in_use():
    with bpe_module.compiled_part.switched(True, MODULE):
        yield


@FUZZ
@given(word=words)
def test_the_word_is_the_pure_paths(word):
    m = model()
    assert compiled(m, word) == pure(m, word)


@FUZZ
@given(word=words)
def test_without_byte_fallback_a_missing_character_is_none(word):
    m = model(byte_fallback=False)
    got = compiled(m, word)
    if any(c not in VOCAB for c in word):
        assert got is None
    else:
        assert got == pure(m, word)


def test_every_kind_of_character():
    m = model()
    word = "a\x00\x7f\x80é\u07ff\u0800\ud800\udfff\uffff\U00010000\U0010ffff😀中"
    got = compiled(m, word)
    assert got == pure(m, word)
    assert got[-2:] == [VOCAB["😀"], VOCAB["中"]]
    assert got[1] == VOCAB["<0x00>"] and VOCAB["<0xC3><0xA9>"] in got
    assert [VOCAB["<0xED>"], VOCAB["<0xA0>"], VOCAB["<0x80>"]] == got[got.index(VOCAB["<0xC3><0xA9>"]) + 6:][:3]
    assert compiled(m, "aaaa€abc") == [VOCAB["aaaa"], VOCAB["<0xE2><0x82><0xAC>"], VOCAB["abc"]]


@pytest.mark.parametrize("word", ["\U00010000" * 300 + "a" * 2000, "é" * 700 + "abc" * 300, "a" * 3000 + "😀\ud800" * 400,
                                  "\U0010ffff" * 4000])
def test_long_words_of_byte_fallbacks(word):
    """Words whose byte fallbacks outgrow one symbol a character, where they start and where they end."""
    m = model()
    assert compiled(m, word) == pure(m, word)


@pytest.mark.parametrize("name", ["llama2", "gemma"])
def test_byte_fallback_files_through_both(name):
    """A byte-fallback tokenizer.json's ids on the samples, line by line: the one compiled call and
    the pure symbols with the compiled merge give the same ids (and tokenizers' ids, which the
    parity suites check)."""
    tok = hf.from_json_text(hf_files.build(name), name)
    lines = [line for text in sample_texts().values() for line in text.splitlines()] + ["\ud800x😀\U0010ffff"]
    counting = _counting(MODULE)
    with bpe_module.compiled_part.switched(True, counting):
        fast = [tok.encode(line, disallowed_special=()) for line in lines]
    assert counting.calls > 0  # the words took it
    slow_tok = hf.from_json_text(hf_files.build(name), name)
    with bpe_module.compiled_part.switched(True, _without_word(MODULE)):
        slow = [slow_tok.encode(line, disallowed_special=()) for line in lines]
    assert fast == slow


def _counting(module):
    """The compiled module, counting its mlist_word calls."""
    class Counting:
        calls = 0

        def __getattr__(self, name):
            return getattr(module, name)

        def mlist_word(self, *args):
            Counting.calls += 1
            return module.mlist_word(*args)
    return Counting()


def _without_word(module):
    """The compiled module as an older build without mlist_word shows itself."""
    class Older:
        def __getattr__(self, name):
            if name in ("MWORD_ABI", "mlist_word"):
                raise AttributeError(name)
            return getattr(module, name)
    return Older()


def test_bad_arguments_are_one_error():
    m = model()
    table = m._compiled_table()[1]  # noqa: SLF001 - the table the model's own path passes
    vocab = dict(VOCAB)
    with pytest.raises(ValueError):
        MODULE.mlist_word(table, "é", vocab, (0,) * 255)
    with pytest.raises(TypeError):
        MODULE.mlist_word(table, "é", vocab, (None,) * 256)
    with pytest.raises(TypeError):
        MODULE.mlist_word(table, "é", list(vocab), tuple(range(256)))
    with pytest.raises(TypeError):
        MODULE.mlist_word(table, b"a", vocab, tuple(range(256)))
    with pytest.raises(ValueError):
        MODULE.mlist_word(object(), "a", vocab, None)
    with pytest.raises(OverflowError):
        MODULE.mlist_word(table, "a", {"a": 2**40}, None)
    with pytest.raises(OverflowError):
        MODULE.mlist_word(table, "a", {"a": -1}, None)
    with pytest.raises(OverflowError):
        MODULE.mlist_word(table, "é", vocab, (2**33,) * 256)
    assert MODULE.mlist_word(table, "", vocab, tuple(range(256))) == []
    assert MODULE.mlist_word(table, "é", {}, None) is None
