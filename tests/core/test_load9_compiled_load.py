"""The compiled load helpers (``merge.c``'s JLOAD part) held to their Python oracles:
``unigram_columns`` to :func:`~tokscope.core.models.unigram.vocab_columns` (result, or the same
exception), ``base64_end`` to a byte-by-byte walk; and Unigram files read with the part on and off."""

from __future__ import annotations

import hf_files
import pytest
from compiled_merge import _with_abi
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.models import unigram
from tokscope.core.models.unigram import vocab_columns

MODULE = _with_abi("JLOAD_ABI")
pytestmark = pytest.mark.skipif(MODULE is None, reason="no C compiler to build the compiled load helpers")

BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


class Str(str):
    pass


class Float(float):
    pass


def result(fn, vocab) -> tuple:
    """What ``fn(vocab)`` gives, comparable: ``("ok", repr)`` (NaN included) or the exception."""
    try:
        return "ok", repr(fn(vocab))
    except Exception as exc:  # noqa: BLE001 - the exception itself is compared
        return type(exc).__name__, str(exc)


def both(vocab) -> tuple:
    compiled = result(MODULE.unigram_columns, vocab)
    assert compiled == result(vocab_columns, vocab)
    return compiled


#: pieces and scores of every type the checks tell apart (subclasses are not str or float)
pieces = st.one_of(st.text(st.sampled_from("a\u2581\U0001F600\u4e2d\u0301\ud800 <>\"\\\x00"), max_size=4),
                   st.sampled_from([b"a", None, 3, Str("s")]))
scores = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**70, 2**70),
                   st.sampled_from([True, False, 10**400, -10**400, "1.0", None, Float(1.5), 0, -0.0]))
entries = st.one_of(st.tuples(pieces, scores).map(list), st.tuples(pieces, scores),
                    st.lists(st.one_of(pieces, scores), max_size=3), st.sampled_from(["ab", b"ab", None, {"a": 1}]))
good = st.lists(st.tuples(st.text(max_size=4), st.one_of(st.floats(-50, 0), st.integers(-50, 0))).map(list),
                min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(entries, max_size=12))
def test_unigram_columns_is_vocab_columns(vocab):
    both(vocab)


@settings(max_examples=100, deadline=None)
@given(good)
def test_well_formed_vocabularies_give_their_columns(vocab):
    kind, _ = both(vocab)
    assert kind == "ok" and MODULE.unigram_columns(vocab) == ([p for p, _ in vocab], [float(s) for _, s in vocab])


@pytest.mark.parametrize("vocab", [
    [], (), [["a", 1.0]] * 0, [("a", 1.0)], [["a", 1]], [["a", -1.5], ("b", 2)], [["a", True]], [["a", 1.0, 2]],
    [["a"]], [[Str("a"), 1.0]], [["a", Float(1.0)]], [["a", 10**400]], [["a", 10**400], ["b", True]],
    [["a", 10**400], [3, 1.0]], [["a", float("nan")]], [["a", float("-inf")], ["b", 2**53 + 1]], [["\ud800", 0]],
    "ab", [b"ab"], [["a", 1.0], None],
])
def test_edge_vocabularies(vocab):
    both(vocab if not isinstance(vocab, list) or vocab is None else list(vocab))


def test_a_list_subclass_is_left_to_python():
    class Vocab(list):
        pass

    assert both(Vocab([["a", 1.0]])) == ("ok", "None")


def test_the_float_scores_are_the_same_objects():
    vocab = [["a", -1.5], ["b", -2.25]]
    _, scores = MODULE.unigram_columns(vocab)
    assert all(s is entry[1] for s, entry in zip(scores, vocab))


def walk(data: bytes, start: int) -> int:
    i = min(max(start, 0), len(data))
    while i < len(data) and data[i] in BASE64:
        i += 1
    return i


def test_base64_end_every_byte_at_every_place():
    """Each byte value at each place of a run longer than the sixteen-byte steps, and each start."""
    for byte in range(256):
        for at in range(0, 40):
            data = b"QUJD" * 10
            data = data[:at] + bytes([byte]) + data[at + 1:]
            for start in (-1, 0, 1, 15, 16, 17, at, 45):
                assert MODULE.base64_end(data, start) == walk(data, start), (byte, at, start)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80) | st.lists(st.sampled_from([BASE64, b'"', b"\\", b"\x80", b"\xff", b"\x00"]),
                                          max_size=6).map(b"".join),
       st.integers(-3, 90))
def test_base64_end_is_the_walk(data, start):
    assert MODULE.base64_end(data, start) == walk(data, start)


def test_base64_end_wants_bytes():
    with pytest.raises(TypeError):
        MODULE.base64_end("AAAA", 0)


@pytest.mark.parametrize("name", ["t5", "xlmr-bytefallback"])
def test_unigram_files_read_the_same_with_the_part_on_and_off(name):
    try:
        data = hf_files.build(name).encode("utf-8")
    except hf_files.Missing as exc:
        pytest.skip(str(exc))
    made = []
    for on in (True, False):
        with unigram.columns_part.switched(on, MODULE), hf.compiled_part.switched(on, MODULE):
            tok = hf.from_json(hf.parse(data), name)
        model = tok.model
        made.append([(model.id_to_token(i), model.score(i)) for i in range(model.vocab_size)])
        text = "Hello wörld \U0001F600 \u4e2d\u6587 e\u0301 <s> </s> \ud800 x"
        made.append(tok.encode(text, disallowed_special=()))
    assert made[0] == made[2] and made[1] == made[3] and len(made[0]) > 1000
