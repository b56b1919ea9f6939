"""The compiled reading of a JSON float (``hf_json_float`` of ``merge.c``, the ``parse_float`` of
every ``tokenizer.json`` read) held to the Python ``hf_json_float`` (itself held to what
``tokenizers`` reads by ``test_hf_models_unigram``): the same float, with the same sign of zero,
and the same error for what is not a number."""

from __future__ import annotations

import json
import math
import struct

import pytest
from compiled_merge import _with_abi
from hf_text_support import FUZZ
from hypothesis import given
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json_models as models
from tokscope.core.formats.tokenizer_json_models import hf_json_float

MODULE = _with_abi("HFFLOAT_ABI")
pytestmark = pytest.mark.skipif(MODULE is None, reason="no C compiler to build the compiled float reader")

NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(width=32, allow_nan=False, allow_infinity=False).map(repr),
    st.from_regex(r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?", fullmatch=True),
    st.text(st.sampled_from("0123456789.-eE+ １"), max_size=24),
)


def same(a: float, b: float) -> bool:
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def compiled(text: str):
    calls = []

    def fallback(t: str) -> float:
        calls.append(t)
        return hf_json_float(t)

    return MODULE.hf_json_float(fallback, text), calls


@FUZZ
@given(NUMBERS)
def test_compiled_float_is_the_python_one(text):
    try:
        want = hf_json_float(text)
    except ValueError:
        with pytest.raises(ValueError):
            compiled(text)
        return
    got, _ = compiled(text)
    assert same(got, want), text


def test_the_usual_scores_never_leave_c_and_the_rest_do():
    scores = [repr(struct.unpack("f", struct.pack("f", -x / 997))[0]) for x in range(1, 3000)]
    for text in [*scores, "-0.0", "0.5", "922337203685477580.7", "-0.0030090271029621363", "0.000000000000000000000000000001"]:
        got, calls = compiled(text)
        assert same(got, hf_json_float(text)) and calls == [], text
    for text in ["1e5", "-2.5E-3", "9223372036854775808.0", "12345678901234567890.5", "1.", "-.5", "x",
                 "0.0000000000000000000000000000001"]:
        try:
            want = hf_json_float(text)
        except ValueError:
            with pytest.raises(ValueError):
                compiled(text)
            continue
        got, calls = compiled(text)
        assert same(got, want) and calls == [text], text


def test_the_reader_in_use_reads_a_file_as_the_python_one():
    text = json.dumps({"vocab": [["a", -7.3218854949502745], ["b", -0.0], ["c", 1e-300], ["d", 12.5]]})
    want = json.loads(text, parse_float=hf_json_float)
    got = json.loads(text, parse_float=models.json_float)
    assert [s for _, s in got["vocab"]] == [s for _, s in want["vocab"]]
    with pytest.raises(TypeError):
        MODULE.hf_json_float(hf_json_float)


def test_every_power_of_ten_in_c_is_pythons():
    for k in range(1, 31):
        for digit in "137":
            text = "-0." + "0" * (k - 1) + digit
            got, calls = compiled(text)
            assert calls == [] and same(got, hf_json_float(text)), text
