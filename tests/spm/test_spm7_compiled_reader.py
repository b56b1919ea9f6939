"""The compiled ``.model`` reader (``merge.c``'s ``spm_model_pieces``) against the Python reader
(``core/formats/sentencepiece_model.py``'s ``_top``, the oracle): the same pieces, scores, types
and spans, or the same one-line error, on real models, on generated ``ModelProto`` bytes, and on
those bytes cut short, flipped, spliced and padded with what a corrupt file holds."""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiled_merge import spm_reader_module
from spm_files import Missing, mistral_models, sdist_models
from tokscope.core.formats import sentencepiece_model as sm
from tokscope.core.models.sentencepiece_pieces import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED
from tokscope.core.text.errors import TokenizerFileError

EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])

MODULE = spm_reader_module()
pytestmark = pytest.mark.skipif(MODULE is None, reason="no compiled reader (no C compiler)")


def _outcome(data: bytes, compiled: bool) -> tuple:
    """What ``parse`` makes of ``data`` with one reader: the parse's fields, or the error."""
    sm.use_compiled(compiled, MODULE if compiled else None)
    try:
        proto = sm.parse(data, "m.model")
    except TokenizerFileError as exc:
        return ("error", str(exc))
    finally:
        sm.use_compiled(True)
    return ("ok", proto.pieces, proto.scores.tobytes(), list(proto.types), proto.trainer, proto.normalizer)


def _same(data: bytes) -> tuple:
    want = _outcome(data, False)
    got = _outcome(data, True)
    assert got == want
    assert want[0] == "ok" or "\n" not in want[1]
    return want


def test_the_compiled_reader_is_in_use_when_installed():
    sm.use_compiled(True, MODULE)
    assert sm.compiled_reader() is MODULE
    sm.use_compiled(False)
    assert sm.compiled_reader() is None
    sm.use_compiled(True)


def test_real_models_read_alike():
    files = []
    try:
        files += mistral_models()
    except Missing:
        pass
    try:
        folder = sdist_models()
        files += sorted(folder.glob("*.model"))
    except Missing:
        pass
    if not files:
        pytest.skip("no SentencePiece model files here")
    for path in files:
        out = _same(path.read_bytes())
        assert out[0] == "ok" and len(out[1]) >= 1000, path


_TEXTS = ["<unk>", "▁", "a", "é", "中文", "👍🏽", "\ud800", "a\udfff", "\x15", "\n", "\x00", "\x18", "\x7f", "a" * 130, "<0x41>",
          "\n\x07\n\x00", "\x15\x00\x00\x00\x00"]
PIECE = st.one_of(st.sampled_from(_TEXTS), st.text(min_size=0, max_size=8),
                  st.lists(st.sampled_from(_TEXTS), min_size=1, max_size=3).map("".join))
SCORE = st.one_of(st.sampled_from([0.0, -0.0, -1.5, struct.unpack("<f", b"\x15\x0a\x07\x0a")[0]]),
                  st.floats(width=32, allow_nan=False))
KIND = st.sampled_from([NORMAL, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE, 0, 7, -1, 300, 2**40])
#: the extra fields a piece or the top level may carry: (field number, value)
EXTRA = st.tuples(st.integers(1, 60), st.one_of(st.integers(0, 2**64 - 1), st.binary(max_size=6),
                                                st.floats(width=32, allow_nan=False)))




@st.composite
def models(draw) -> bytes:
    """A ``ModelProto``: pieces (some with fields out of order, repeated, unknown or left out),
    top-level fields of every kind between them, a trainer and a normalizer message."""
    out = bytearray()
    for _ in range(draw(st.integers(0, 12))):
        text, score, kind = draw(PIECE), draw(SCORE), draw(KIND)
        fields = [(1, text), (2, score)] + ([(3, kind)] if kind != NORMAL or draw(st.booleans()) else [])
        fields += draw(st.lists(EXTRA, max_size=2))
        if draw(st.booleans()):
            fields = draw(st.permutations(fields))
        out += sm.field_bytes(1, b"".join(sm.field_bytes(n, v) for n, v in fields))
        if draw(st.integers(0, 5)) == 0:
            out += sm.field_bytes(*draw(EXTRA))
    out += sm.field_bytes(2, sm.field_bytes(3, draw(st.integers(1, 4))) + sm.field_bytes(35, draw(st.integers(0, 1))) + sm.field_bytes(44, "<?>"))
    out += sm.field_bytes(3, sm.field_bytes(1, "nmt_nfkc") + sm.field_bytes(2, draw(st.binary(max_size=8))) + sm.field_bytes(3, draw(st.integers(0, 1))))
    return bytes(out)


@st.composite
def damaged(draw) -> bytes:
    """A model cut short, with bytes flipped, spliced in or taken out."""
    data = bytearray(draw(models()))
    for _ in range(draw(st.integers(1, 4))):
        what = draw(st.sampled_from(["cut", "flip", "insert", "delete"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if what == "cut":
            del data[at:]
        elif what == "flip" and data:
            data[at] = draw(st.sampled_from([0x00, 0x07, 0x0A, 0x15, 0x18, 0x7F, 0x80, 0xFF, 0xC3, 0xED]))
        elif what == "insert":
            data[at:at] = draw(st.sampled_from([b"\x80" * 11, b"\xff" * 10 + b"\x01", b"\x0b", b"\x0c", b"\x02\x01x",
                                                b"\x0a\xff\xff\xff\xff\x0f", b"\x0d\x00", b"\x09",
                                                b"\x0a\x09\x0a\x02\xed\xa0\x15\x00\x00\x00\x00",
                                                b"\x12" + b"\x80" * 9 + b"\x02", b"\xf4\x90\x80\x80", b"\xe0\x9f\xbf"]))
        elif data:
            del data[at:at + draw(st.integers(1, 3))]
    return bytes(data)


@FUZZ
@given(models())
def test_generated_models_read_alike(data):
    _same(data)


@FUZZ
@given(damaged())
def test_damaged_models_read_alike(data):
    _same(data)


@FUZZ
@given(st.binary(max_size=64))
def test_any_bytes_read_alike(data):
    _same(b"\x0a\x07\x0a\x00\x15\x00\x00\x00\x00" + data)


@pytest.mark.parametrize("data, message", [
    (b"\x0a\x0b\x0a\x05<unk>\x15\x00\x00\x00", "truncated or not protobuf"),
    (b"\x0a\x09\x0a\x02\xed\xa0\x15\x00\x00\x00\x00", "has a piece that is not UTF-8"),
    (b"\x0a\x0a\x0a\x03\xed\xa0\x80\x15\x00\x00\x00\x00", "has a piece that is not UTF-8"),
    (b"\x0a\x0b\x0a\x04\xf4\x90\x80\x80\x15\x00\x00\x00\x00", "has a piece that is not UTF-8"),
    (b"\x0a\x0a\x0a\x03\xe0\x9f\xbf\x15\x00\x00\x00\x00", "has a piece that is not UTF-8"),
    (b"\x0a\x12\x15\x00\x00\x00\x00\x22" + b"\x80" * 9 + b"\x02" + b"\x0a\x00", "truncated or not protobuf"),
    (b"\x12" + b"\x80" * 9 + b"\x02", "truncated or not protobuf"),
    (b"\x0a\x07\x0a\x00\x15\x00\x00\x00\x00" + b"\x08" + b"\x80" * 10 + b"\x01", "longer than 10 bytes"),
    (b"\x0a\x07\x0a\x00\x15\x00\x00\x00\x00\x0b", "wire type 3 at its top level"),
    (b"\x0a\x07\x0a\x00\x15\x00\x00\x00\x00\x02\x00", "a field numbered 0"),
    (b"\x0a\x07\x0a\x00\x15\x00\x00\x00\x00\x0d\x00", "truncated or not protobuf"),
    (b"\x0a\x09\x0a\x00\x15\x00\x00\x00\x00\x1c\x00", "wire type 4, which protobuf does not use"),
    (b"\x0a\x0a\x0a\x00\x15\x00\x00\x00\x00\x18\x80\x80", "truncated or not protobuf"),
    (b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "truncated or not protobuf"),
])
def test_each_fault_is_one_line_from_both_readers(data, message):
    out = _same(data)
    assert out[0] == "error" and message in out[1] and out[1].startswith("m.model ")
