"""The fast path of tokscope's ``ModelProto`` reader (``core/formats/sentencepiece_model.py``: a run
of pieces read by one regex match and one split, every stated length checked as a whole byte
string) against protobuf's own parser and writer (the schema the sentencepiece package ships), on
models whose pieces hold the bytes the fast path must not trust: the score tag 0x15, what looks like
a piece header (0x0A), NUL, texts of 128 bytes and more, type fields present or left out, and
scores whose bytes look like any of those."""

from __future__ import annotations

import math
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.formats import sentencepiece_model as sm
from tokscope.core.text.errors import TokenizerFileError

pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])

_TRAPS = ["\x15", "\n", "\x00", "\x18", "\n\x07\n\x00", "\x15\x00\x00\x00\x00", "▁", "é", "中文", "👍🏽", "a" * 130,
          "x" * 127, "<0x41>", "\x7f", "\x15\x18\x01\n\x09\n\x02"]
PIECE = st.one_of(st.sampled_from(_TRAPS), st.text(min_size=1, max_size=6),
                  st.lists(st.sampled_from(_TRAPS), min_size=1, max_size=3).map("".join))
#: scores whose float32 bytes hold the framing bytes, and ordinary ones
SCORE = st.one_of(st.sampled_from([0.0, -0.0, -1.5, struct.unpack("<f", b"\x15\x0a\x07\x0a")[0],
                                   struct.unpack("<f", b"\x0a\x15\x18\x01")[0], struct.unpack("<f", b"\x00\x15\x00\x15")[0]]),
                  st.floats(width=32, allow_nan=False, allow_infinity=False))


def _write(entries: list[tuple[str, float, int | None]], control_symbols: int = 0) -> bytes:
    """A ``ModelProto`` serialized by protobuf; a type of None leaves the field out."""
    model = pb.ModelProto()
    for text, score, kind in entries:
        piece = model.pieces.add()
        piece.piece = text
        piece.score = score
        if kind is not None:
            piece.type = kind
    model.trainer_spec.model_type = 2
    model.trainer_spec.byte_fallback = False
    for i in range(control_symbols):
        model.trainer_spec.control_symbols.append(f"[control_{i}]")
    model.trainer_spec.unk_id = 0
    model.normalizer_spec.add_dummy_prefix = False
    return model.SerializeToString()


def _same_as_protobuf(data: bytes) -> None:
    ref = pb.ModelProto()
    ref.ParseFromString(data)
    ours = sm.parse(data)
    assert ours.pieces == [p.piece for p in ref.pieces]
    assert list(ours.types) == [p.type for p in ref.pieces]
    for got, want in zip(ours.scores, [p.score for p in ref.pieces]):
        assert got == want and math.copysign(1, got) == math.copysign(1, want)
    assert ours.trainer.model_type == ref.trainer_spec.model_type
    assert ours.normalizer.add_dummy_prefix == ref.normalizer_spec.add_dummy_prefix


@FUZZ
@given(entries=st.lists(st.tuples(PIECE, SCORE, st.sampled_from([None, 1, 1, 3, 4, 5, 6])), min_size=1, max_size=60,
                        unique_by=lambda e: e[0]),
       control_symbols=st.integers(0, 3))
def test_pieces_read_as_protobuf_reads_them(entries, control_symbols):
    _same_as_protobuf(_write([("<unk>", 0.0, 2), *[e for e in entries if e[0] != "<unk>"]], control_symbols))


@pytest.mark.parametrize("explicit", [False, True])
def test_a_long_run_with_traps_in_the_middle(explicit):
    """Thousands of usual pieces with the traps spread among them: the fast path keeps what
    agrees, the traps are read one by one, and the run goes on after each."""
    kind = 1 if explicit else None
    entries = [("<unk>", 0.0, 2)] + [(f"p{i}", -float(i), kind) for i in range(3000)]
    for k, trap in enumerate(_TRAPS):
        entries.insert(100 + 150 * k, (trap + f"#{k}", -0.5, 3 if k % 2 else kind))
    _same_as_protobuf(_write(entries, control_symbols=50))


def test_mistral_models_read_as_protobuf_reads_them():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("mistral_common")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("mistral-common is not installed")
    files = sorted((Path(list(spec.submodule_search_locations)[0]) / "data").glob("*.model*"))
    assert len(files) >= 5
    for path in files:
        _same_as_protobuf(path.read_bytes())


def test_a_piece_that_is_not_utf8_is_one_error():
    good = _write([("<unk>", 0.0, 2), ("ab", -1.0, None), ("cd", -2.0, None)])
    bad = good.replace(b"ab", b"a\xff")
    with pytest.raises(TokenizerFileError, match="has a piece that is not UTF-8"):
        sm.parse(bad)
    long_bad = _write([("<unk>", 0.0, 2), ("é" * 100, -1.0, None)]).replace("é".encode(), b"\xc3\x28", 1)
    with pytest.raises(TokenizerFileError, match="not UTF-8"):
        sm.parse(long_bad)
