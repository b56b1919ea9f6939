"""The GGUF reader's string arrays (``core/formats/gguf.py``, ``_Source.strings``): every string
comes back as written, whatever it holds (NUL bytes, bytes that are not UTF-8, empty strings) and
wherever the reader's buffer ends (the chunk size is shrunk so that lengths and strings straddle
refills); a string or an array claiming more than the file holds is one error, never an allocation
of the claimed size. Every test runs with the compiled reader (``merge.c``'s ``gguf_strings``)
and with the Python loop it falls back to."""

from __future__ import annotations

import io
import struct
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compiled_merge import gguf_reader_module  # noqa: E402

from tokscope.core.formats import gguf  # noqa: E402
from tokscope.core.text.errors import TokenizerFileError  # noqa: E402

# str as the reader gives it: any text, bytes that are not UTF-8 as surrogate escapes
_BYTES = st.binary(max_size=12)
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
STRINGS = st.lists(st.one_of(_BYTES.map(lambda b: b.decode("utf-8", "surrogateescape")), _TEXT), min_size=1, max_size=40)


@pytest.fixture(autouse=True, params=["compiled", "python"])
def reader(request):
    if request.param == "compiled":
        module = gguf_reader_module()
        if module is None:
            pytest.skip("no C compiler for the compiled reader")
        gguf.use_compiled(True, module)
    else:
        gguf.use_compiled(False)
    yield request.param
    gguf.use_compiled(True)


def test_the_reader_in_use_is_the_one_asked_for(reader):
    assert (gguf.compiled_strings() is not None) == (reader == "compiled")


def _read(data: bytes) -> dict:
    return gguf.read_metadata_from(io.BytesIO(data), "t.gguf", len(data))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(strings=STRINGS)
def test_string_arrays_come_back_as_written(strings):
    data = gguf.build_metadata({"general.name": "t", "tokenizer.ggml.tokens": strings, "after": 7})
    meta = _read(data)
    assert meta["tokenizer.ggml.tokens"] == tuple(strings)
    assert meta["after"] == 7  # the reader stopped exactly at the array's end


@pytest.mark.parametrize("shift", range(0, 64))
def test_strings_straddling_the_readers_chunks(shift):
    """A padding key puts the token array's lengths and strings across the reader's first chunk
    boundary at every alignment (a NUL-holding string and an empty one among them)."""
    strings = ["ab", "", "c\x00d", "\udcff", "é" * 3, "x" * 9] * 3
    head = gguf.build_metadata({"pad": ""})
    # the strings start 48 bytes before the boundary, and shift moves them over it byte by byte
    key = len(gguf.build_metadata({"tokenizer.ggml.tokens": strings})) - 24 - sum(8 + len(t.encode("utf-8", "surrogateescape")) for t in strings)
    pad = "p" * (gguf.READ_CHUNK - len(head) - key - 48 + shift)
    data = gguf.build_metadata({"pad": pad, "tokenizer.ggml.tokens": strings, "after": 7})
    meta = _read(data)
    assert meta["tokenizer.ggml.tokens"] == tuple(strings) and meta["after"] == 7


def test_nul_bytes_and_invalid_utf8_inside_strings():
    strings = ["a\x00b", "", "\x00", "\udcff\udcfe", "é", "x"]
    data = gguf.build_metadata({"tokenizer.ggml.tokens": strings})
    assert _read(data)["tokenizer.ggml.tokens"] == tuple(strings)


@pytest.mark.parametrize("claimed", [1 << 40, (1 << 64) - 1])
def test_a_string_claiming_more_than_the_file_is_one_error(claimed):
    data = bytearray(gguf.build_metadata({"tokenizer.ggml.tokens": ["ab", "cd", "ef"]}))
    at = data.rindex(b"cd") - 8  # the second string's length
    struct.pack_into("<Q", data, at, claimed)
    with pytest.raises(TokenizerFileError, match="claims .* bytes, more than the file holds"):
        _read(bytes(data))


def test_a_truncated_string_array_is_one_error():
    data = gguf.build_metadata({"tokenizer.ggml.tokens": ["ab", "cd", "ef"]})
    for cut in range(len(data) - 12, len(data)):
        with pytest.raises(TokenizerFileError, match="truncated|claims"):
            _read(data[:cut])
