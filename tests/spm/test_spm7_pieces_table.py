"""The piece table's dicts (``Pieces``): the look-ups built at load (the reserved pieces taken out),
every piece's first id made on first use, and the files the library refuses (a piece defined
twice, an empty piece) refused at load with one line naming why, as the library refuses them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.formats.sentencepiece_model import build_model, from_model_bytes
from tokscope.core.models.sentencepiece_pieces import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, Pieces
from tokscope.core.text.errors import TokenizerFileError

spm = pytest.importorskip("sentencepiece")


def test_a_piece_defined_twice_is_refused_like_the_library():
    data = build_model([("<unk>", 0.0, UNKNOWN), ("▁a", -1.0, NORMAL), ("b", -2.0, NORMAL), ("▁a", -3.0, NORMAL)])
    with pytest.raises(RuntimeError):
        spm.SentencePieceProcessor(model_proto=data)
    with pytest.raises(TokenizerFileError, match="defines the piece '▁a' twice"):
        from_model_bytes(data, "m")


def test_an_empty_piece_is_refused_with_its_first_id():
    data = build_model([("<unk>", 0.0, UNKNOWN), ("a", -1.0, NORMAL), ("", -2.0, NORMAL), ("", -3.0, NORMAL)])
    with pytest.raises(RuntimeError):
        spm.SentencePieceProcessor(model_proto=data)
    with pytest.raises(TokenizerFileError, match="piece 2 is empty"):
        from_model_bytes(data, "m")


KINDS = st.sampled_from([NORMAL, NORMAL, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE])


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "ab", "<s>", "<0x41>", "▁"]), KINDS), min_size=1, max_size=12))
def test_lookups_and_first_ids_with_repeats(entries):
    """Non-strict tables (GGUF vocabularies may repeat a text): the first id of a text wins, and
    a text whose first id is reserved (unknown, control, byte) is no look-up."""
    pieces = [p for p, _ in entries]
    types = [t if t != BYTE or p == "<0x41>" else NORMAL for p, t in entries]
    table = Pieces(pieces, [0.0] * len(pieces), types, strict=False)
    first = {}
    for i, p in enumerate(pieces):
        first.setdefault(p, i)
    reserved = (UNKNOWN, CONTROL, BYTE)
    assert table.get_vocab() == first
    assert {p: table.token_to_id(p) for p in pieces} == first
    assert table.lookups == {p: i for p, i in first.items() if types[i] not in reserved}
    assert {p: table.lookup(p) for p in pieces} == {p: (i if types[i] not in reserved else None) for p, i in first.items()}


def test_real_model_ids_agree_with_the_library(spm_sdist_dir):
    path = spm_sdist_dir / "botchan_en_bpe_1000.model"
    tok = from_model_bytes(path.read_bytes(), path.name)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    table = tok.model.table
    assert all(table.token_to_id(sp.id_to_piece(i)) == i for i in range(sp.get_piece_size()))
    assert len(table.get_vocab()) == sp.get_piece_size()
