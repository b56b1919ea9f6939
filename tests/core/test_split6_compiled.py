"""The compiled pattern split (``_tokscope_split``, tokscope/core/pre_tokenizers/split.c) cuts text
exactly as the regex path does, chunk for chunk, for every pattern it knows.

The regex path (:class:`~tokscope.core.patterns.tiktoken_syntax.ChunkPattern`, whose parity with
tiktoken the parity suites prove) is the oracle: hypothesis text of any code point (lone
surrogates too) and text biased to the classes the patterns tell apart, every code point of the
Basic Multilingual Plane in the contexts that show its class, the multi-script samples, long
runs, and a wrong class table, which must be caught. The parity suites (test_parity.py, the
tiktoken suite) run through both splits too: the compiled one with the compiled merge loop, the
regex one with the pure loop (tests/conftest.py).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiled_merge import split_module

from tokscope.core.patterns.tiktoken_syntax import compile_pattern
from tokscope.core.pre_tokenizers import compiled_split
from tokscope.core.pre_tokenizers.compiled_split import CLASSES, FOLDS, KINDS, block_flags, compile_split
from tokscope.core.pre_tokenizers.pattern_split import PatternSplit

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
PATTERNS = sorted(KINDS, key=KINDS.get)
IDS = ["cl100k", "o200k", "gpt2", "llama3", "qwen"]
FUZZ = settings(max_examples=150, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: characters of every class the patterns tell apart: spaces of every kind (ASCII, NBSP, U+0085,
#: ideographic, line/paragraph separators, and U+001C, which is str.isspace but not \s), line
#: breaks, apostrophes and the letters of contractions with their case-insensitive twins (long s,
#: Kelvin sign, dotted/dotless i), letters of each category (Lu Ll Lt Lm Lo), marks (Mn Mc Me),
#: digits of other scripts and other numbers (Nl No), punctuation and symbols, '/', lone
#: surrogates, unassigned and private-use code points, emoji with joiners, and code points whose
#: class moved between Unicode versions (pinned by the regex path)
INTERESTING = list(
    " \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
    "'\u2019sStTdDmMlLvVrReEkK\u212a\u017f\u0130\u0131iI"
    "aZ\u00e9\u01c5\u02b0\u4e00\u3042\u05d0"
    "\u0301\u0903\u20dd\u0300"
    "09\u0660\u0966\u2167\u00bd\u00b2"
    "/.,!?-_\u00a7\u20ac\U0001F600\u200d\ufe0f"
    "\ud800\udc00\udfff\u0378\ue000\U0010FFFF\U000E0100"
    "\u0295\u0897\u1c89\U00013460\U00031350"
) + ["\r\n", "'s", "'LL", "'Ve", "'\u017f", "  ", "\n\n", "123456", "<|endoftext|>", "AB", "1\u0301AB", "A\u02b0B"]

biased = st.lists(st.sampled_from(INTERESTING), max_size=40).map("".join)
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


def both(pattern: str, text: str) -> tuple[list[str], list[str]]:
    """The regex path's chunks and the compiled scanner's."""
    return compile_pattern(pattern).findall(text), compile_split(pattern).split(text)


def assert_same(pattern: str, text: str) -> None:
    want, got = both(pattern, text)
    assert got == want, (IDS[KINDS[pattern] - 1], text)


# ----- hypothesis ---------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
@FUZZ
@given(text=mixed)
def test_same_chunks_as_the_regex(pattern, text):
    assert_same(pattern, text)


@given(text=biased)
@FUZZ
def test_findall_and_the_pre_tokenizer_use_it(text):
    """PatternSplit's split_str and findall go through the scanner and give the regex's chunks."""
    for pattern in PATTERNS:
        pre = PatternSplit(pattern)
        want = compile_pattern(pattern).findall(text)
        assert pre.split_str(text) == want
        assert pre.compiled.findall(text) == want


LINE_PIECES = list("a/ \n\t\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\u00e9\U0001F600\ud800") + ["\n\n", "\r\n"]
LINES = st.lists(st.sampled_from(LINE_PIECES), max_size=30).map("".join)


@given(text=st.one_of(LINES, mixed))
@FUZZ
def test_segments_are_the_regex_cuts(text):
    """The compiled segments cut where the regex ``\\n(?=[^\\s/])`` cuts (\\s as the stdlib's), and
    the chunks of the segments, one after another, are the chunks of the whole text."""
    for pattern in PATTERNS[:2]:
        want = compile_pattern(pattern).segments(text)
        got = compile_split(pattern).segments(text)
        assert got == want
        chunks = [c for segment in got for c in compile_split(pattern).split(segment)]
        assert chunks == compile_pattern(pattern).findall(text)


# ----- every code point in the contexts that show its class ---------------------------------------

#: each code point X in contexts where its classes decide the chunks: after a space, between
#: letters of each case, before and after digits and marks, after an apostrophe, before a line break
CONTEXTS = ("a{}b", "A{}a", " {}1", "'{}x", "{}\u0301a", "1{}2", "\n{} ", "'l{}", "'v{}", "{}Ab", "x {}\n", "1{}AB.")


def _code_point_text(code_points, context: str) -> str:
    return "|".join(context.format(chr(c)) for c in code_points)


#: each code point in every context (TOKSCOPE_SLOW=1), or in a quarter of them (three of twelve)
EVERY_CONTEXT = os.environ.get("TOKSCOPE_SLOW") == "1"


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
def test_every_bmp_code_point(pattern):
    """Every code point of the Basic Multilingual Plane (lone surrogates too), and a sample of the
    others, in three of the contexts (all of them with TOKSCOPE_SLOW=1): the compiled chunks are
    the regex path's."""
    rng = random.Random(7)
    code_points = list(range(0x10000)) + sorted(rng.sample(range(0x10000, 0x110000), 4000))
    for k, context in enumerate(CONTEXTS):
        chosen = code_points if EVERY_CONTEXT else [c for c in code_points if (c + k) % 4 == 0]
        assert_same(pattern, _code_point_text(chosen, context))


def test_every_code_point_of_the_moved_classes():
    """The code points whose class moved between Unicode versions (the regex path pins them to
    tiktoken's version): the scanner's table is filled with the pinned classes."""
    from tokscope.core.patterns.tiktoken_syntax import moved_ranges

    moved = [c for first, last in moved_ranges() for c in range(first, last + 1)]
    assert len(moved) > 1000
    for pattern in PATTERNS:
        for k, context in enumerate(CONTEXTS):
            assert_same(pattern, _code_point_text(moved if EVERY_CONTEXT else moved[k % 4 :: 4], context))


# ----- real text and long runs --------------------------------------------------------------------


def _sample_texts() -> list[str]:
    files = sorted((SAMPLES / "languages").glob("*.txt")) + sorted(SAMPLES.glob("*.txt"))
    assert len(files) > 10
    return [f.read_text(encoding="utf-8") for f in files]


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
def test_multi_script_samples(pattern):
    for text in _sample_texts():
        assert_same(pattern, text)
        # the same text with Windows line ends and runs of mixed Unicode spaces
        assert_same(pattern, text.replace("\n", "\r\n").replace(". ", ".\u00a0 \u3000"))


LONG = 300_000


@pytest.mark.parametrize("pattern", PATTERNS, ids=IDS)
@pytest.mark.parametrize("unit", [" ", "a", "A", "\u0301", "\u4e00", "1", "!", "\n", " \n", "\r\n ", "Aa'", "\u02b0A"])
def test_long_runs(pattern, unit):
    """Long runs of one class (and of the same few characters over and over) split as the regex
    splits them; each state machine scans a run a bounded number of times (a quadratic scan of
    300,000 characters would not finish)."""
    for text in (unit * (LONG // len(unit)), unit * (LONG // len(unit)) + "x", "y" + unit * (LONG // len(unit)) + " z"):
        assert_same(pattern, text)


def test_one_megabyte_of_spaces_is_one_chunk():
    text = " " * 1_000_000
    for pattern in PATTERNS:
        assert compile_split(pattern).split(text) == [text]
        assert compile_split(pattern).split(text + "a") == [text[:-1], " a"]


# ----- the class table -----------------------------------------------------------------------------


def test_block_flags_are_the_regex_classes():
    """The table's flags of a few blocks, bit by bit, against the regex path's compiled classes
    (pinned where the regex path pins them)."""
    for block in (0x00, 0x01, 0x02, 0x03, 0x20, 0x4E, 0x130, 0x134, 0x313, 0xE01):
        flags = block_flags(block)
        chars = [chr(c) for c in range(block * 256, block * 256 + 256)]
        for bit, body in CLASSES:
            members = compile_pattern(body)
            for i, char in enumerate(chars):
                assert bool(flags[i] & bit) == (members.fullmatch(char) is not None), (hex(ord(char)), body)
        for code, body in FOLDS:  # bits 5-7: one code per character
            members = compile_pattern(body)
            for i, char in enumerate(chars):
                assert (flags[i] & 0xE0 == code) == (members.fullmatch(char) is not None), (hex(ord(char)), body)


def test_case_insensitive_contractions_follow_regex():
    """``(?i:'s ...)``: the long s (U+017F) folds to s in the regex module, so "'\u017f" is a
    contraction; the Kelvin sign (which folds to k) and the dotted capital I are not contraction
    letters."""
    flags = block_flags(1)
    assert flags[0x7F] >> 5 == 1  # U+017F
    assert block_flags(0x21)[0x2A] >> 5 == 0  # U+212A KELVIN SIGN
    for pattern, contraction in ((PATTERNS[0], "'\u017f"), (PATTERNS[1], "it'\u017f"), (PATTERNS[3], "'\u017f")):
        want, got = both(pattern, "it'\u017f it'S IT'LL it'\u212a \u0130'S")
        assert got == want
        assert contraction in got


def test_a_wrong_class_table_is_caught():
    """The checks above can fail: a table whose \\s is Python's ASCII whitespace, or whose upper
    class leaves out the titlecase letters, splits differently from the regex on text that holds
    them, and the comparison says so."""
    wrong_space = tuple((bit, r"[ \t\n\r\f\v]" if body == r"\s" else body) for bit, body in CLASSES) + FOLDS
    wrong_upper = tuple((bit, body.replace(r"\p{Lt}", "") if bit == 0x08 else body) for bit, body in CLASSES) + FOLDS
    try:
        compiled_split.use_compiled(True, classes=wrong_space)
        want, got = both(PATTERNS[1], "a\u00a0\u00a0b")
        assert got != want
        compiled_split.use_compiled(True, classes=wrong_upper)
        want, got = both(PATTERNS[1], "x \u01c5ungla")
        assert got != want
    finally:
        compiled_split.use_compiled(True, classes=CLASSES + FOLDS)
    assert_same(PATTERNS[1], "a\u00a0\u00a0b x \u01c5ungla")


def test_the_regex_path_when_off():
    """Switched off, the same pattern objects split with the regex path (and still agree)."""
    text = "Hello, World's  \u00a0 end\r\n"
    for pattern in PATTERNS:
        compiled_split.use_compiled(False)
        try:
            off = compile_split(pattern).split(text)
        finally:
            compiled_split.use_compiled(True)
        assert off == compile_split(pattern).split(text) == compile_pattern(pattern).findall(text)


def test_known_patterns_only_by_exact_string():
    """A pattern differing by one character is not the scanner's (it is the regex's alone)."""
    from tokscope.core.patterns.tiktoken_syntax import ChunkPattern

    near = PATTERNS[0].replace("{1,3}", "{1,2}")
    assert type(compile_split(near)) is ChunkPattern
    assert compile_split(near).split("12345") == ["12", "34", "5"]
    assert {type(compile_split(p)).__name__ for p in PATTERNS} == {"ScannedPattern"}


def test_open_models_patterns_are_the_scanners():
    """Llama 3's and Qwen's patterns as the sources spell them are the ones the scanner knows."""
    from tokscope.sources.open_models import LLAMA3_PATTERN, QWEN_PATTERN

    assert KINDS[LLAMA3_PATTERN] == 4 and KINDS[QWEN_PATTERN] == 5


def test_findall_with_bounds_is_the_regex():
    pattern = compile_split(PATTERNS[1])
    assert pattern.findall("ab cd ef", 3, 8) == compile_pattern(PATTERNS[1]).findall("ab cd ef", 3, 8) == ["cd", " ef"]


def test_bad_calls_are_one_line_errors(compiled):
    table = compiled.new_table()
    with pytest.raises(ValueError):
        compiled.split(table, 99, "x")
    with pytest.raises(ValueError):
        compiled.fill(table, 5000, bytes(256))
    with pytest.raises(ValueError):
        compiled.fill(table, 0, bytes(255))
    with pytest.raises(TypeError):
        compiled.split(table, 1, b"bytes")
    assert compiled.split(table, 1, "x") is None  # block 0 not filled yet
    assert compiled.missing(table, "x\u4e00\U0001F600x") == [0, 0x4E, 0x1F6]
    assert compiled.split(table, 1, "") == []
