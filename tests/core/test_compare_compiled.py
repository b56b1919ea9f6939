"""The compiled half of ``tokscope compare`` (``merge.c``'s ``tile_*``, ``bits_*`` and
``text_words``, part ``TILE_ABI`` of ``_tokscope_merge``) against the Python paths it stands in
for: ``start_map`` and its counts, the big-integer operations of ``Boundaries`` and
``count_words``.

Every summary, comparison and command output is made twice, once with the compiled code and once
without (``use_compiled``), and must be the same, on Unicode-wide texts: emoji that byte-level
BPE cuts mid-character, CJK, combining marks, lone surrogates, special-token look-alikes, every
kind of whitespace. The low-level calls are held to plain Python on arbitrary bytes, and hostile
arguments must give one error, never a crash.
"""

from __future__ import annotations

import sys
from array import array
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compiled_merge import _with_abi  # noqa: E402

from tokscope.cli import main  # noqa: E402
from tokscope.core.insights import compare as cmp  # noqa: E402
from tokscope.core.insights.compare import Boundaries, compare, summarize  # noqa: E402
from tokscope.core.text.errors import UnknownTokenError  # noqa: E402
from tokscope.core.text.measure import count_words  # noqa: E402
from tokscope.core.text.types import is_whole_utf8  # noqa: E402
from tokscope.sample_texts import read_sample  # noqa: E402

#: the tokenizers whose pieces tile the text's bytes (byte-level BPE from ranks): the ones whose
#: summaries come from a start map (tokenizer.json files are segmented, and their cuts combined by
#: the same Boundaries operations that the tests below hold to the int ones)
OPENAI = ("gpt2", "cl100k_base", "o200k_base")

FAMILY = "👩\u200d👩\u200d👧"
ALPHABET = st.sampled_from(
    list("ab Zq1 9\n\t'sdltrevm.,/!?-") + ["  ", "\n\n", "\n   ", "'s", "'ll", "😀", FAMILY, "🇫🇷", "日本語", "中文",
                                          "é", "e\u0301", "\u0301", "ß", "Ω", "ﬁ", "ＨＥＬＬＯ", "\u200d", "\r\n", "\x1c",
                                          "\u2028", "\u3000", "\xa0", "\x85", "123456", "\x00", "<|endoftext|>",
                                          "<|endoftext", "<|fim_prefix|>", "[CLS]", "</s>", "\ud800", "\udfff",
                                          "\U0001d11e", "🏳️‍🌈"]
)
TEXT = st.one_of(st.lists(ALPHABET, max_size=40).map("".join), st.text(max_size=30))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def module():
    found = _with_abi("TILE_ABI")
    if found is None:
        pytest.skip("no compiled start maps: not installed, and no C compiler to build one")
    return found


@pytest.fixture
def compiled(module):
    """Run the body's ``on(True/False)`` switches, then leave the default (compiled when installed)."""
    was = cmp.compiled_bitmaps()

    def on(flag: bool) -> None:
        cmp.use_compiled(flag, module)

    yield on
    cmp.use_compiled(True, was) if was is not None else cmp.use_compiled(False)


@pytest.fixture(scope="module")
def toks(load):
    return [load(n) for n in OPENAI]


def both(compiled, fn):
    """``fn()`` with the compiled code, then without."""
    compiled(True)
    fast = fn()
    compiled(False)
    return fast, fn()


def same_summary(a, b) -> None:
    assert (a.name, a.count, a.n_chars, a.n_bytes, a.partial, a.single_byte, a.special) == (
        b.name, b.count, b.n_chars, b.n_bytes, b.partial, b.single_byte, b.special)
    assert a.cuts._bits == b.cuts._bits and len(a.cuts) == len(b.cuts)
    assert list(a.ids) == list(b.ids)


def test_the_switch_is_honoured(compiled, module):
    compiled(True)
    assert cmp.compiled_bitmaps() is module
    compiled(False)
    assert cmp.compiled_bitmaps() is None


# ----- summaries and comparisons, compiled and not -------------------------------------------------


@SETTINGS
@given(text=TEXT, allowed=st.sampled_from([(), "all"]))
def test_summaries_are_the_same_both_ways(toks, compiled, text, allowed):
    tiled = [t for t in toks if t.pieces_tile_bytes]
    assert len(tiled) == len(OPENAI)
    special = {"allowed_special": allowed, "disallowed_special": ()}
    fast, slow = both(compiled, lambda: [summarize(t, text, ids=True, **special) for t in tiled])
    for a, b in zip(fast, slow):
        same_summary(a, b)
    fast_cmp, slow_cmp = both(compiled, lambda: compare(text, fast))
    assert fast_cmp == slow_cmp
    assert both(compiled, lambda: compare(text, slow)) == (slow_cmp, slow_cmp)


@pytest.mark.parametrize("text", [read_sample("multiscript.txt"), f"{FAMILY}🇫🇷 e\u0301\ud800 <|endoftext|>" * 50])
def test_real_text_is_the_same_both_ways(toks, compiled, text):
    for tok in toks:
        a, b = both(compiled, lambda: summarize(tok, text))
        same_summary(a, b)
        if tok.name == "gpt2":
            assert a.partial > 0  # emoji cut into byte pieces that end mid-character


def test_a_fresh_tokenizer_fills_its_table_as_the_marks_say(load, compiled, module):
    """A tokenizer's first summary builds the table (from the ranks, all at once); every entry the
    text needs is the token's length and kind as ``start_mark`` makes them."""
    from tokscope.sources.registry import forget

    forget("gpt2")
    tok = load("gpt2")
    text = read_sample("multiscript.txt") + "<|endoftext|>"
    compiled(True)
    summarize(tok, text, allowed_special="all")
    table = tok.derived("compare.mark_table", lambda: None)
    assert table is not None and len(table) == tok.n_vocab
    ids = tok.encode(text, allowed_special="all")
    for token_id in set(ids) | {0, 255, 50255, 50256}:
        length, kind = cmp._length_and_kind(tok, token_id)
        assert cmp.start_mark(length, kind) == bytes([1 + kind]) + bytes(length - 1)
        assert table[token_id] == length << 4 | (1 + kind), token_id
    assert tok.is_special(50256) and table[50256] & 0xF == 1 + cmp._SPECIAL


def test_an_id_outside_the_vocabulary_is_the_tokenizers_error(load, module):
    tok = load("gpt2")
    with pytest.raises(UnknownTokenError):
        cmp._tiled_bits(tok, [1, 10**12], 2, module)
    with pytest.raises(UnknownTokenError):
        cmp._tiled_bits(tok, [1, -3], 2, module)


@pytest.mark.parametrize("options", [[], ["--json"], ["--cuts", "--price-in", "3", "--copies", "7"]])
def test_the_command_prints_the_same_both_ways(capsys, compiled, options):
    text = read_sample("multiscript.txt") + f" {FAMILY} e\u0301 <|endoftext|>"  # (an argument is UTF-8)
    outs = []
    for flag in (True, False):
        compiled(flag)
        code = main(["compare", "-e", "gpt2", "-e", "o200k", "-e", "cl100k_base", "--special-as-text", text, *options])
        outs.append((code, *capsys.readouterr()))
    assert outs[0] == outs[1] and outs[0][0] == 0 and outs[0][1]


# ----- the low-level calls against plain Python -------------------------------------------------------

PAIRS = st.integers(0, 40).flatmap(lambda n: st.tuples(*[st.binary(min_size=n, max_size=n)] * 2))
BITMAPS = st.integers(0, 40).flatmap(
    lambda n: st.tuples(*[st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n).map(bytes)] * 2))


@settings(max_examples=150, deadline=None)
@given(pair=PAIRS)
def test_bit_operations_are_the_int_operations(module, pair):
    a, b = pair
    x, y, n = int.from_bytes(a, "little"), int.from_bytes(b, "little"), len(a)
    assert module.bits_op(a, b, 0) == (x & y).to_bytes(n, "little")
    assert module.bits_op(a, b, 1) == (x & ~y).to_bytes(n, "little")
    assert module.bits_op(a, b, 2) == (x | y).to_bytes(n, "little")
    assert module.bits_common(a, b) == (x & y).bit_count()
    assert module.bits_count(a) == a.count(1)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pair=BITMAPS)
def test_boundaries_combine_the_same_both_ways(compiled, pair):
    a, b = (Boundaries(bits=bits) for bits in pair)
    fast, slow = both(compiled, lambda: [(a & b)._bits, (a - b)._bits, (a | b)._bits, a.common(b), len(a), len(b)])
    assert fast == slow
    c = Boundaries(bits=pair[0] + b"\0")  # another length: the int path, either way
    assert both(compiled, lambda: [(a & c)._bits, (c - a)._bits, a.common(c)]) == ([(a & c)._bits, (c - a)._bits,
                                                                                     a.common(c)],) * 2


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.text(), st.lists(ALPHABET).map("".join),
                      st.text(alphabet=st.characters(categories=("Zs", "Zl", "Zp", "Cc", "Cs", "So", "Lo")))))
def test_words_are_counted_as_split_counts_them(module, text):
    assert module.text_words(text) == count_words(text) == len(text.split())


def test_words_across_every_character(module):
    every = "".join(map(chr, range(0x110000)))
    assert module.text_words(every) == len(every.split())
    assert module.text_words("a" + every[:0x3000] + "b") == len(("a" + every[:0x3000] + "b").split())


@settings(max_examples=300, deadline=None)
@given(data=st.one_of(st.binary(max_size=8), ALPHABET.map(lambda s: s.encode("utf-8", "surrogatepass")),
                      ALPHABET.map(lambda s: s.encode("utf-8", "surrogatepass")[1:]),
                      st.text(max_size=3).map(lambda s: s.encode("utf-8", "surrogatepass")[:-1])),
       special=st.booleans())
def test_entries_are_the_marks_of_the_bytes(module, data, special):
    """A token's entry, from ``tile_fill`` (any token) and ``tile_fill_ranks`` (the ranks): its
    length and kind (single byte, not whole UTF-8 as Python's strict decoder says, special)."""
    kind = (len(data) == 1) * cmp._SINGLE_BYTE | (not is_whole_utf8(data)) * cmp._PARTIAL
    table = array("I", [0, 0])
    assert module.tile_fill(table, [1], lambda i: data, lambda i: special) is True
    assert table[1] == len(data) << 4 | (1 + (kind | special * cmp._SPECIAL)) and table[0] == 0
    table = array("I", [0, 0])
    assert module.tile_fill_ranks(table, {data: 1, b"\xfe" * 40: 2}) == 1  # 2 is past the table's end
    assert table[1] == len(data) << 4 | (1 + kind) and table[0] == 0


@settings(max_examples=150, deadline=None)
@given(lengths=st.lists(st.integers(0, 5), max_size=12), kinds=st.lists(st.integers(0, 7), min_size=12, max_size=12),
       picks=st.lists(st.integers(0, 11), max_size=20), extra=st.integers(-2, 2))
def test_start_maps_are_the_python_start_maps(module, lengths, kinds, picks, extra):
    """``tile_starts`` against the marks joined as :func:`start_map` does, on made-up tables."""
    table = array("I", [n << 4 | (1 + k) for n, k in zip(lengths, kinds)] + [0] * (12 - len(lengths)))
    ids = [p for p in picks if p < len(lengths)]
    marks = b"".join(cmp.start_mark(lengths[i], kinds[i]) for i in ids)
    n_bytes = max(len(marks) + extra, 0)
    found = module.tile_starts(ids, table, n_bytes)
    if len(marks) != n_bytes or any(lengths[i] == 0 for i in ids):
        assert found is None
        return
    bits, counts = found
    assert bits == (b"\0" + marks[1:].translate(cmp._TO_ONE) + b"\0" if marks else b"\0")
    assert list(counts) == [sum(1 for i in ids if kinds[i] == k) for k in range(8)]


def test_ids_without_an_entry_are_listed_once(module):
    table = array("I", [0, 1 << 4 | 1, 0, 0])
    assert module.tile_starts([1, 2, 0, 2, 7, -1, 7, 0, 1], table, 9) == [2, 0, 7, -1, 7]
    assert list(table) == [0, 1 << 4 | 1, 0, 0]  # as it was
    assert module.tile_starts([1, 1], table, 2) == (b"\0\1\0", (2, 0, 0, 0, 0, 0, 0, 0))


def test_hostile_arguments_are_one_error(module):
    table = array("I", [1 << 4 | 1, 0x20, 0xFFFFFFFF])
    with pytest.raises(TypeError):
        module.tile_starts([0, "1"], table, 2)
    with pytest.raises(TypeError):
        module.tile_starts([0, 1.0], table, 2)
    with pytest.raises(TypeError):
        module.tile_starts(5, table, 2)
    with pytest.raises(ValueError):
        module.tile_starts([0, 1], table, 2)  # an entry without its mark
    with pytest.raises(ValueError):
        module.tile_starts([2], table, 2)  # not an entry at all
    with pytest.raises(ValueError):
        module.tile_starts([0], array("H", [17]), 1)  # 2-byte entries
    with pytest.raises(ValueError):
        module.tile_starts([0], table, -1)
    with pytest.raises(BufferError):
        module.tile_starts([0], b"\x11\0\0\0", 1)  # read-only: the table is completed in place
    assert module.tile_starts([0, 0], table, 10**15) is None  # more than two tokens hold: no 1 PB bitmap
    assert module.tile_starts([10**30, 0], table, 1) == [10**30]
    with pytest.raises(TypeError):
        module.tile_fill(table, [0], lambda i: "a", lambda i: False)
    with pytest.raises(ZeroDivisionError):
        module.tile_fill(table, [0], lambda i: 1 // 0, lambda i: False)
    with pytest.raises(ValueError):
        module.tile_fill(table, [5], lambda i: b"a", lambda i: False)
    with pytest.raises(TypeError):
        module.tile_fill_ranks(table, {"a": 0})
    with pytest.raises(ValueError):
        module.bits_op(b"ab", b"a", 0)
    with pytest.raises(ValueError):
        module.bits_op(b"a", b"a", 3)
    with pytest.raises(ValueError):
        module.bits_common(b"ab", b"abc")
    with pytest.raises(TypeError):
        module.text_words(b"a b")


@settings(max_examples=200, deadline=None)
@given(entries=st.lists(st.one_of(st.integers(0, 2**32 - 1), st.integers(0, 300)), max_size=6),
       ids=st.lists(st.integers(-3, 8), max_size=12), n_bytes=st.integers(0, 40))
def test_any_table_is_an_answer_or_one_error(module, entries, ids, n_bytes):
    """Garbage in a table (marks out of range, lengths past the text) is a ValueError or a
    not-tiling None, never a write outside the bitmap; the table is left as it was."""
    table = array("I", entries)
    try:
        found = module.tile_starts(ids, table, n_bytes)
    except ValueError:
        found = "error"
    assert list(table) == entries
    if isinstance(found, tuple):
        bits, counts = found
        assert len(bits) == n_bytes + 1 and sum(counts) == len(ids) and set(bits) <= {0, 1}
        assert bits.count(1) == max(len(ids) - 1, 0) and bits[0] == bits[-1] == 0
    elif isinstance(found, list):
        assert all(i < 0 or i >= len(entries) or entries[i] == 0 for i in found)
