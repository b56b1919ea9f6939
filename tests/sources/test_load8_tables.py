"""Issue 22 item 4 (load8): the cache's tables written with fewer passes (strings joined once by a
separator checked by counting it; whole numbers checked by the array itself) still read back as
they were written, on any strings, and still refuse what has no form."""

from __future__ import annotations

import sys
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.sources import cache

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from compiled_merge import _with_abi  # noqa: E402

#: every separator the tables may use, and text around them: strings that hold one force the next
SEPARATORS = "".join(cache._SEPARATORS)
TEXT = st.text(st.one_of(st.sampled_from(SEPARATORS + "a é😀\u0301中\ud800\udfff<|>"), st.characters()), max_size=8)


def round_trip(items: list[str]) -> list[str]:
    tables = cache._Tables()
    ref = tables.strings(items)
    payload = b"".join(tables.blobs)
    return cache._Reader(tables.specs, memoryview(payload)).strings(ref)


@settings(max_examples=150, deadline=None)
@given(st.lists(TEXT, max_size=12))
def test_strings_read_back_as_written(items):
    assert round_trip(items) == items


@pytest.mark.parametrize("items", [[], [""], ["", ""], ["\x00"], list(SEPARATORS), ["a\x00b", "\ufdd0", "\ufdd1\ufdef"],
                                   ["\ud800", "x\udfff"]])
def test_strings_with_separators_empty_or_surrogates(items):
    assert round_trip(items) == items


def test_a_string_that_holds_every_separator_takes_the_lengths_form():
    tables = cache._Tables()
    ref = tables.strings([SEPARATORS, "b"])
    assert len(ref) == 2  # the blob and the lengths, no separator
    assert round_trip([SEPARATORS, "b"]) == [SEPARATORS, "b"]


def test_a_key_that_is_not_a_string_has_no_form():
    with pytest.raises(cache._Unfit):
        cache._Tables().strings(["a", 1])  # type: ignore[list-item]


@pytest.mark.parametrize("values", [[1.0], ["1"], [None], [2**63], [-(2**63) - 1]])
def test_ints_refuse_what_is_not_a_64_bit_whole_number(values):
    with pytest.raises(cache._Unfit):
        cache._Tables().ints(values)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=20))
def test_ints_read_back_as_written(values):
    tables = cache._Tables()
    index = tables.ints(iter(values))
    reader = cache._Reader(tables.specs, memoryview(b"".join(tables.blobs)))
    assert reader.ints(index, len(values)) == values
    assert isinstance(reader.get(index, array), array)


@pytest.mark.parametrize("compiled", [False, True])
@settings(max_examples=60, deadline=None)
@given(st.dictionaries(TEXT, st.integers(0, 2**32 - 1), max_size=12))
def test_a_vocabulary_reads_back_from_its_tables_either_way(compiled, vocab):
    from tokscope.core.models import base

    module = _with_abi("VOCAB_ABI") if compiled else None
    if compiled and module is None:
        pytest.skip("no C compiler for the compiled vocabulary table")
    base.use_compiled(compiled, module)
    try:
        tables = cache._Tables()
        spec = cache._vocab_tables(vocab, tables)
        got = cache._vocab_from(spec, cache._Reader(tables.specs, memoryview(b"".join(tables.blobs))))
    finally:
        base.use_compiled(True)
    assert list(got.items()) == list(vocab.items())
