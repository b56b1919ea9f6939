"""A tokenizer.json Split with Llama 3's or Qwen2's Oniguruma pattern, and the ByteLevel pre-tokenizer's
GPT-2 pattern, are cut by the compiled scanner
(``_tokscope_split``) with a table of the classes as Oniguruma's tables give them, and cuts exactly
as the regex path does (:meth:`OnigPattern.for_text`'s translation: plain, or pinned on text that
holds a code point where Oniguruma's tables and the ``regex`` module's disagree).

The oracle is the regex path (whose parity with ``tokenizers`` tests/core/test_hf_text_onig.py
proves) and ``tokenizers`` itself: hypothesis text of any code point (lone surrogates too) and
text biased to the pinned code points, spaces, line breaks, contractions, digits and marks; every
pinned code point and every code point of the Basic Multilingual Plane in contexts that show its
class; each Split behavior, inverted or not, with its offsets; a llama3 tokenizer.json's ids on
the multi-script samples; and wrong class tables, which must be caught.
"""

from __future__ import annotations

import pickle
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
from tokscope.core.pre_tokenizers.compiled_split import (
    BYTE_LEVEL_PATTERN,
    CLASSES,
    FOLDS,
    LLAMA3_PATTERN,
    ONIG_KINDS,
    QWEN_PATTERN,
    ScannedOnigPattern,
    compile_onig_split,
)
from tokscope.core.pre_tokenizers.byte_level import ByteLevel
from tokscope.core.pre_tokenizers.split import Split

tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers library is an oracle of these tests")

PATTERNS = [LLAMA3_PATTERN, QWEN_PATTERN, BYTE_LEVEL_PATTERN]
IDS = ["llama3", "qwen2", "bytelevel"]
FUZZ = settings(max_examples=150, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: the code points whose classes the pinned translation of Llama 3's pattern pins (Oniguruma's
#: tables say otherwise than the regex module's, or might)
PINNED = sorted(translate_onig(LLAMA3_PATTERN)[1])

INTERESTING = list(
    " \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
    "'\u2019sStTdDmMlLvVrReEkK\u212a\u017f\u0130\u0131iI"
    "aZ\u00e9\u01c5\u02b0\u4e00\u3042\u05d0\u0301\u0903\u20dd\u0300"
    "09\u0660\u0966\u2167\u00bd\u00b2/.,!?-_\u00a7\u20ac\U0001F600\u200d\ufe0f"
    "\ud800\udc00\udfff\u0378\ue000\U0010FFFF\U000E0100\u0897\u1c89\U00013460"
) + ["\r\n", "'s", "'LL", "'Ve", "'\u017f", "  ", "\n\n", "123456", "AB", "1\u0301AB"]

pinned_char = st.sampled_from(PINNED).map(chr)
biased = st.lists(st.one_of(st.sampled_from(INTERESTING), pinned_char), max_size=40).map("".join)
any_text = st.text(st.characters(exclude_categories=()), max_size=40)
mixed = st.lists(st.one_of(biased, any_text), max_size=4).map("".join)


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """The compiled scanner in use for this module (the installed one, else one built here)."""
    module = split_module()
    if module is None:
        pytest.skip("no compiled split: not installed, and no C compiler to build one")
    was = compiled_split.compiled_in_use()
    compiled_split.use_compiled(True, module)
    yield module
    compiled_split.use_compiled(was)


def regex_path(pattern: str) -> OnigPattern:
    """The regex path's pattern (compile_onig never gives the scanned one)."""
    found = compile_onig(pattern)
    assert type(found) is OnigPattern
    return found


def assert_same(pattern: str, text: str) -> None:
    """The scanner's chunks and spans are the regex path's (for_text: plain or pinned)."""
    want = regex_path(pattern).for_text(text).findall(text)
    scanned = compile_onig_split(pattern)
    assert scanned.isolated(text) == want, (pattern, text)
    assert scanned.spans(text) == regex_path(pattern).spans(text), (pattern, text)


def test_the_split_patterns_are_scanned():
    """transformers' Llama 3 and Qwen2 files spell the patterns the scanner knows; an Oniguruma
    pattern one character away is the regex path's alone."""
    assert hf_files.LLAMA3 == LLAMA3_PATTERN and hf_files.QWEN2 == QWEN_PATTERN
    assert set(ONIG_KINDS) == set(PATTERNS) | set(compiled_split.DEEPSEEK_PATTERNS)  # those: test_deepseek_compiled_split.py
    for pattern in PATTERNS:
        assert isinstance(Split(pattern, regex=True)._onig, ScannedOnigPattern)  # noqa: SLF001 - what the test is about
    assert isinstance(ByteLevel()._pattern, ScannedOnigPattern)  # noqa: SLF001 - what the test is about
    assert ByteLevel(use_regex=False)._pattern is None  # noqa: SLF001 - what the test is about
    near = LLAMA3_PATTERN.replace("{1,3}", "{1,2}")
    assert type(compile_onig_split(near)) is OnigPattern
    assert compile_onig_split(near).isolated("12345") == ["12", "34", "5"]


# ----- hypothesis ---------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
@FUZZ
@given(text=mixed)
def test_same_chunks_as_the_regex_path(pattern, text):
    assert_same(pattern, text)


@FUZZ
@given(text=biased, behavior=st.sampled_from(["isolated", "removed", "merged_with_previous", "merged_with_next",
                                              "contiguous"]), invert=st.booleans())
def test_the_split_pre_tokenizer_keeps_behavior_and_offsets(text, behavior, invert):
    """Split's chunks and offsets, every behavior, inverted or not, are those of the regex path and
    (on text without lone surrogates, which tokenizers cannot take) of ``tokenizers``' Split."""
    split = Split(LLAMA3_PATTERN, behavior, invert, regex=True)
    got, want = scanned_and_regex(lambda: (split.split_str(text), split.pre_tokenize_str(text)))
    assert got == want
    if not any("\ud800" <= c <= "\udfff" for c in text):
        ref = tokenizers.pre_tokenizers.Split(tokenizers.Regex(LLAMA3_PATTERN), behavior, invert)
        assert got[1] == ref.pre_tokenize_str(text)


@FUZZ
@given(text=mixed, prefix=st.booleans())
def test_the_byte_level_pre_tokenizer_is_the_libraries(text, prefix):
    """HF's ByteLevel pre-tokenizer (GPT-2's pattern, then the bytes' stand-ins): chunks and offsets
    with the scanner are those of the regex path and (without lone surrogates) of ``tokenizers``."""
    pre = ByteLevel(add_prefix_space=prefix)
    got, want = scanned_and_regex(lambda: (pre.split_str(text), pre.pre_tokenize_str(text)))
    assert got == want
    if not any("\ud800" <= c <= "\udfff" for c in text):
        ref = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=prefix)
        assert got[1] == ref.pre_tokenize_str(text)


# ----- every code point in the contexts that show its class ---------------------------------------

CONTEXTS = ("a{}b", "A{}a", " {}1", "'{}x", "{}\u0301a", "1{}2", "\n{} ", "'l{}", "{}Ab", "x {}\n", "1{}AB.", " {} ")


def _text(code_points, context: str) -> str:
    return "|".join(context.format(chr(c)) for c in code_points)


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
def test_every_pinned_code_point(pattern):
    """Each code point whose class the pinned translation pins, in every context (the text holds
    pinned code points, so the regex path runs the pinned translation)."""
    assert len(PINNED) > 1000
    for context in CONTEXTS:
        assert_same(pattern, _text(PINNED, context))


@pytest.mark.parametrize("pattern", [LLAMA3_PATTERN, BYTE_LEVEL_PATTERN], ids=["llama3", "bytelevel"])
def test_every_bmp_code_point(pattern):
    """Every code point of the Basic Multilingual Plane (lone surrogates too) and a sample of the
    others, each in one of the contexts in turn, in texts with a pinned code point and without."""
    rng = random.Random(7)
    code_points = list(range(0x10000)) + sorted(rng.sample(range(0x10000, 0x110000), 4000))
    for k, context in enumerate(CONTEXTS):
        chosen = [c for c in code_points if c % len(CONTEXTS) == k]
        assert_same(pattern, _text(chosen, context))
        plain = [c for c in chosen if c not in set(PINNED)]
        assert regex_path(pattern).for_text(_text(plain, context)) is regex_path(pattern).plain
        assert_same(pattern, _text(plain, context))


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
def test_multi_script_samples(pattern):
    texts = sample_texts()
    assert len(texts) > 10
    for text in texts.values():
        assert_same(pattern, text)
        assert_same(pattern, text.replace("\n", "\r\n").replace(". ", ".\u00a0 \u3000"))


# ----- a llama3 tokenizer.json against tokenizers ------------------------------------------------


def test_llama3_file_ids_are_the_libraries():
    """A llama3 tokenizer.json (transformers' conversion of Meta's file): tokscope's ids, with the
    scanner cutting its Split, are ``tokenizers``' on the multi-script samples, line by line and
    whole, and the same file unpickled (as worker processes get it) cuts with the scanner too."""
    try:
        text = hf_files.build("llama3")
    except hf_files.Missing as exc:
        pytest.skip(str(exc))
    ref = tokenizers.Tokenizer.from_str(text)
    ours = hf.from_json_text(text, "llama3")
    again = pickle.loads(pickle.dumps(ours))
    samples = list(sample_texts().values())
    lines = [line for sample in samples for line in sample.splitlines()]
    for piece in samples + lines + ["".join(map(chr, PINNED[::50])), "I'LL  \u00a0\u3000 1234567\r\n\r\n\u0301x"]:
        want = ref.encode(piece, add_special_tokens=False).ids
        assert ours.encode(piece, allowed_special="all") == want, piece[:80]
        assert again.encode(piece, allowed_special="all") == want, piece[:80]
    encodings = ref.encode_batch(samples, add_special_tokens=False)
    assert ours.encode_batch(samples, allowed_special="all") == [e.ids for e in encodings]


# ----- the class table -----------------------------------------------------------------------------


def test_the_table_is_oniguruma_s_classes():
    """The flags of every block with a pinned code point, bit by bit, against the pinned
    translation's own classes (the Oniguruma tables), and no pinned code point outside the blocks
    the table pins."""
    import regex

    from tokscope.core.pre_tokenizers.compiled_split import _onig_suspect_blocks, block_flags

    blocks = sorted({c // 256 for c in PINNED})
    assert set(blocks) <= _onig_suspect_blocks()
    for body_bit, body in CLASSES:
        translated, suspects = translate_onig(body)
        assert {c // 256 for c in suspects} <= _onig_suspect_blocks()
        members = regex.compile(translated)
        for block in blocks[::3] + [0, 0x4E]:
            flags = block_flags(block, onig=True)
            for i in range(256):
                char = chr(block * 256 + i)
                assert bool(flags[i] & body_bit) == (members.fullmatch(char) is not None), (hex(ord(char)), body)


def _moved_letter() -> int:
    """A pinned code point that the regex module calls a letter and Oniguruma's tables do not."""
    import regex

    plain = regex.compile(r"\p{L}")
    pinned = regex.compile(translate_onig(r"\p{L}")[0])
    for c in PINNED:
        if plain.fullmatch(chr(c)) and not pinned.fullmatch(chr(c)):
            return c
    raise AssertionError("no code point left the letters")


def test_a_wrong_class_table_is_caught():
    """The checks above can fail: a table whose \\s is ASCII whitespace, or whose letters keep the
    regex module's class for a code point Oniguruma's tables do not call a letter, splits
    differently from the regex path on text that holds them, and the comparison says so."""
    moved = _moved_letter()
    wrong_space = tuple((bit, r"[ \t\n\r\f\v]" if body == r"\s" else body) for bit, body in CLASSES) + FOLDS
    wrong_letter = tuple((bit, r"[\p{L}\x{%X}]" % moved if body == r"\p{L}" else body) for bit, body in CLASSES) + FOLDS
    letter_text = "a{0}b {0}.".format(chr(moved))
    try:
        compiled_split.use_compiled(True, onig_classes=wrong_space)
        with pytest.raises(AssertionError):
            assert_same(LLAMA3_PATTERN, "a\u00a0\u00a0b")
        compiled_split.use_compiled(True, onig_classes=wrong_letter)
        with pytest.raises(AssertionError):
            assert_same(LLAMA3_PATTERN, letter_text)
    finally:
        compiled_split.use_compiled(True, onig_classes=CLASSES + FOLDS)
    assert_same(LLAMA3_PATTERN, "a\u00a0\u00a0b " + letter_text)


@pytest.mark.parametrize("name", ["gpt2", "roberta"])
def test_byte_level_files_ids_are_the_libraries(name):
    """GPT-2-style files (HF's ByteLevel pre-tokenizer cutting with its own regex): tokscope's ids,
    with the scanner cutting, are ``tokenizers``' on the multi-script samples, whole and line by
    line, and through ``encode_batch``."""
    text = hf_files.build(name)
    ref = tokenizers.Tokenizer.from_str(text)
    ref.encode_special_tokens = True
    ours = hf.from_json_text(text, name)
    assert isinstance(ours.pre_tokenizer._pattern, ScannedOnigPattern)  # noqa: SLF001 - what the test is about
    samples = list(sample_texts().values())
    lines = [line for sample in samples for line in sample.splitlines()]
    pieces = samples + lines + ["".join(map(chr, PINNED[::50])), "I'LL  \u00a0\u3000 1234567\r\n\r\n\u0301x  "]
    for piece in pieces:
        assert ours.encode(piece, disallowed_special=()) == ref.encode(piece, add_special_tokens=False).ids, piece[:80]
    want = [e.ids for e in ref.encode_batch(pieces, add_special_tokens=False)]
    assert ours.encode_batch(pieces, disallowed_special=()) == want
