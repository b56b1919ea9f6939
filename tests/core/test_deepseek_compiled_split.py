"""DeepSeek V3's three Split patterns (``\\p{N}{1,3}``, its kana-and-ideograph run, and its main
pattern) are cut by the compiled scanner (``_tokscope_split``'s KIND_DS_* machines) on a table of
their own classes as Oniguruma's tables give them, and cut exactly as the regex path does.

Unlike the tiktoken-family patterns these do not tile the text: a piece between two matches is a
piece of HF's ``isolated`` behavior too, which the scanner gives. The oracle is the regex path
(:func:`isolated_strs` over :meth:`OnigPattern.spans`, whose parity with ``tokenizers``
tests/core/test_hf_text_onig.py proves) and ``tokenizers`` itself: hypothesis text of any code point
(lone surrogates too) and text biased to the classes' edges; every code point of the Basic
Multilingual Plane and a sample of the others in contexts that show its class; a DeepSeek-style
tokenizer.json's ids; and a wrong class table, which must be caught.
"""

from __future__ import annotations

import random

import hf_files
import pytest
from hf_support import sample_texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiled_merge import scanned_and_regex, split_module

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.patterns.onig import OnigPattern, compile_onig, translate_onig
from tokscope.core.pre_tokenizers import compiled_split
from tokscope.core.pre_tokenizers.base import isolated_strs
from tokscope.core.pre_tokenizers.compiled_split import DEEPSEEK_PATTERNS, DS_CLASSES, ScannedOnigPattern, compile_onig_split
from tokscope.core.pre_tokenizers.split import Split

tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers library is an oracle of these tests")

PATTERNS = list(DEEPSEEK_PATTERNS)
IDS = ["digits", "cjk", "main"]
FUZZ = settings(max_examples=150, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: code points whose classes the pinned translations pin (Oniguruma's tables and the regex
#: module's may disagree)
PINNED = sorted(set().union(*(translate_onig(p)[1] for p in PATTERNS)))

INTERESTING = list(
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u2029\u3000"
    "!\"#'()*+,-./:;<=>?@[\\]^_`{|}~aZzA09\u0660\u2167\u00bd\u00b2"
    "\u00e9\u0301\u0903\u20dd\u02b0\u05d0\u00a7\u00b6\u20ac\u00ab\u2014\u300c\u3001\uff01\U0001F600\u200d\ufe0f"
    "\u4e00\u9fa5\u9fa6\u9fff\u3040\u3041\u309f\u30a0\u30a1\u30ff\u3100\u3400\uac00"
    "\ud800\udfff\u0378\ue000\U0010FFFF\U000E0100\u0897"
) + ["\r\n", "#include", "'s", "  ", "\n\n", "123456", "a\u0301\u0301", " \u0301b", "1a", "\u0301\u0301"]

biased = st.lists(st.one_of(st.sampled_from(INTERESTING), st.sampled_from(PINNED).map(chr)), max_size=40).map("".join)
any_text = st.text(st.characters(exclude_categories=()), max_size=40)
mixed = st.lists(st.one_of(biased, any_text), max_size=4).map("".join)


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """The compiled scanner in use for this module (the installed one, else one built here)."""
    module = split_module()
    if module is None or getattr(module, "DS_ABI", None) != 1:
        pytest.skip("no compiled split with DeepSeek's machines: not installed, and no C compiler to build one")
    was = compiled_split.compiled_in_use()
    compiled_split.use_compiled(True, module)
    yield module
    compiled_split.use_compiled(was)


def assert_same(pattern: str, text: str) -> None:
    """The scanner's pieces are the regex path's, its spans too."""
    regex_path = compile_onig(pattern)
    assert type(regex_path) is OnigPattern
    scanned = compile_onig_split(pattern)
    assert isinstance(scanned, ScannedOnigPattern)
    assert scanned.isolated(text) == isolated_strs(regex_path, text), (pattern, text)
    assert scanned.spans(text) == regex_path.spans(text), (pattern, text)


def test_deepseek_files_spell_the_scanned_patterns():
    assert PATTERNS == hf_files.DEEPSEEK
    for pattern in PATTERNS:
        assert isinstance(Split(pattern, regex=True)._onig, ScannedOnigPattern)  # noqa: SLF001 - what the test is about
    assert type(compile_onig_split(PATTERNS[2].replace("[A-Za-z]+", "[A-Za-z]*"))) is OnigPattern


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
@FUZZ
@given(text=mixed)
def test_same_pieces_as_the_regex_path(pattern, text):
    assert_same(pattern, text)


@FUZZ
@given(text=biased, behavior=st.sampled_from(["isolated", "removed", "merged_with_previous", "merged_with_next",
                                              "contiguous"]), invert=st.booleans())
def test_the_split_pre_tokenizer_keeps_behavior_and_offsets(text, behavior, invert):
    """The main pattern's Split, every behavior, inverted or not: chunks and offsets are those of
    the regex path and (without lone surrogates) of ``tokenizers``' Split."""
    split = Split(PATTERNS[2], behavior, invert, regex=True)
    got, want = scanned_and_regex(lambda: (split.split_str(text), split.pre_tokenize_str(text)))
    assert got == want
    if not any("\ud800" <= c <= "\udfff" for c in text):
        ref = tokenizers.pre_tokenizers.Split(tokenizers.Regex(PATTERNS[2]), behavior, invert)
        assert got[1] == ref.pre_tokenize_str(text)


CONTEXTS = ("a{}b", " {}1", "#{}x", "{}\u0301a", "1{}2", "\n{} ", "{}!\n", "x {}\n", "\u4e00{}\u30a1", " {} ")


def _text(code_points, context: str) -> str:
    return "|".join(context.format(chr(c)) for c in code_points)


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
def test_every_pinned_code_point(pattern):
    assert len(PINNED) > 100
    for context in CONTEXTS:
        assert_same(pattern, _text(PINNED, context))


def test_every_code_point():
    """Every code point of the Basic Multilingual Plane (lone surrogates too) and a sample of the
    others, each in one of the contexts in turn, for the main pattern (the other two read only
    the digits' class and fixed ranges: the hypothesis tests and the pinned code points cover
    them)."""
    rng = random.Random(11)
    code_points = list(range(0x10000)) + sorted(rng.sample(range(0x10000, 0x110000), 4000))
    for k, context in enumerate(CONTEXTS):
        assert_same(PATTERNS[2], _text([c for c in code_points if c % len(CONTEXTS) == k], context))


def test_multi_script_samples():
    texts = sample_texts()
    assert len(texts) > 10
    for text in texts.values():
        for pattern in PATTERNS:
            assert_same(pattern, text)


def test_deepseek_file_ids_are_the_libraries():
    """A DeepSeek-style tokenizer.json (its three Splits, then ByteLevel): tokscope's ids with the
    scanner cutting are ``tokenizers``' on the multi-script samples, whole, line by line and
    through ``encode_batch``."""
    text = hf_files.build("deepseek")
    ref = tokenizers.Tokenizer.from_str(text)
    ref.encode_special_tokens = True
    ours = hf.from_json_text(text, "deepseek")
    samples = list(sample_texts().values())
    lines = [line for sample in samples for line in sample.splitlines()]
    pieces = samples + lines + ["".join(map(chr, PINNED[::7])), "#include <a.h>\r\n\r\n  x 1234567 東京タワー\u0301!!\n"]
    for piece in pieces:
        assert ours.encode(piece, disallowed_special=()) == ref.encode(piece, add_special_tokens=False).ids, piece[:80]
    want = [e.ids for e in ref.encode_batch(pieces, add_special_tokens=False)]
    assert ours.encode_batch(pieces, disallowed_special=()) == want


def test_a_wrong_class_table_is_caught():
    """The checks above can fail: a table whose marks are left out, or whose punctuation is
    ASCII's alone, cuts differently from the regex path, and the comparison says so."""
    no_marks = tuple((bit, r"[\x{10FFFF}]" if body == r"\p{M}" else body) for bit, body in DS_CLASSES)
    ascii_punct = tuple((bit, r"[!-/:-@\[-`{-~]" if body == r"[\p{P}\p{S}]" else body) for bit, body in DS_CLASSES)
    try:
        compiled_split.use_compiled(True, deepseek_classes=no_marks)
        with pytest.raises(AssertionError):
            assert_same(PATTERNS[2], "a\u0301b \u0301\u0301c")
        compiled_split.use_compiled(True, deepseek_classes=ascii_punct)
        with pytest.raises(AssertionError):
            assert_same(PATTERNS[2], "a \u00ab\u00bbb")
    finally:
        compiled_split.use_compiled(True, deepseek_classes=DS_CLASSES)
    assert_same(PATTERNS[2], "a\u0301b \u0301\u0301c a \u00ab\u00bbb")
