"""The inspector at 80x24 says what the model knows about a piece that the token view cannot draw:

* a SentencePiece ``.model`` (trained here with ``sentencepiece``, user-defined and control
  symbols included) and a GGUF file (llama.cpp's ``ggml-vocab-llama-spm.gguf`` and the BPE
  ``ggml-vocab-gpt-2.gguf``): each piece's score and piece type, and the GGUF token type;
* a RoBERTa-style file whose post-processor trims offsets: the model's offsets, without the
  spaces the view draws, as Hugging Face's ``tokenizers`` reports them;
* the pieces NFKC makes of ``ⅷ``: each shows its own text and that it shares the character.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import tokenizers

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hf_files
from helpers import idle, settle

from tokscope.app.app import ExplorerApp
from tokscope.app.widgets.inspector import Inspector
from tokscope.sources import registry


def shown(app) -> str:
    return str(app.query_one(Inspector).render())


async def select(pilot, i: int) -> str:
    pilot.app.select_piece(i)
    await idle(pilot)
    return shown(pilot.app)


def _rows(text: str) -> list[str]:
    return text.splitlines()


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    pytest.importorskip("sentencepiece")
    import spm_files

    folder = tmp_path_factory.mktemp("spm")
    return spm_files.train("user_defined", folder)


async def test_sentencepiece_model_shows_score_and_piece_type(spm_model):
    import sentencepiece as spm

    reference = spm.SentencePieceProcessor(model_file=str(spm_model))
    text = "foo <tool> ab hello"
    app = ExplorerApp(text, tokenizer=registry.load(str(spm_model)), palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        doc = app.doc
        seen = set()
        for i, token_id in enumerate(doc.ids):
            screen = await select(pilot, i)
            assert len(_rows(screen)) <= 5, screen
            if reference.is_control(token_id):
                kind = "control"
            elif reference.is_unknown(token_id):
                kind = "unknown"
            elif reference.is_byte(token_id):
                kind = "byte"
            elif reference.IdToPiece(token_id) in ("<tool>", "foo", "@@", "▁bar", "ab"):
                kind = "user-defined"
            else:
                kind = "normal"
            assert f"type {kind}" in screen, (reference.IdToPiece(token_id), screen)
            if kind == "normal":
                assert f"score {reference.GetScore(token_id):.2f}" in screen
            seen.add(kind)
        assert {"normal", "user-defined"} <= seen


async def test_gguf_files_show_their_token_types():
    import gguf_files

    folder = gguf_files.llama_cpp_dir() / "models"
    from tokscope.core.formats import gguf

    for name, expect_piece_type in (("ggml-vocab-llama-spm.gguf", True), ("ggml-vocab-gpt-2.gguf", False)):
        path = folder / name
        if not path.is_file():
            pytest.skip(f"{name} is not in llama.cpp's vocab files")
        meta = gguf.read_metadata(path)
        raw = list(meta["tokenizer.ggml.token_type"])
        names = {1: "normal", 2: "unknown", 3: "control", 4: "user-defined", 5: "unused", 6: "byte"}
        app = ExplorerApp("Hi ⅷ there", tokenizer=registry.load(str(path)), palette="truecolor")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            for i, token_id in enumerate(app.doc.ids):
                screen = await select(pilot, i)
                assert len(_rows(screen)) <= 5, screen
                gguf_type = names[raw[token_id]]
                if expect_piece_type:
                    assert f"(GGUF: {gguf_type})" in screen, screen
                    if gguf_type == "normal":
                        assert "score " in screen
                else:
                    assert f"type GGUF {gguf_type}" in screen, screen


async def test_trimmed_offsets_are_in_the_inspector(tmp_path):
    obj = json.loads(hf_files.build("roberta"))
    path = tmp_path / "roberta.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    text = "hello  world"
    expected = tokenizers.Tokenizer.from_str(json.dumps(obj)).encode(text, add_special_tokens=False).offsets
    app = ExplorerApp(text, tokenizer=registry.load(str(path)), palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        doc = app.doc
        moved = 0
        for i in range(len(doc.ids)):
            screen = await select(pilot, i)
            piece = doc.piece(i)
            start, end = expected[i]
            if (start, end) != (piece.start, piece.end):
                moved += 1
                assert f"model offsets [{start}:{end}]" in screen, screen
            else:
                assert "model offsets" not in screen
        assert moved >= 1


async def test_pieces_sharing_a_character_show_their_own_text():
    try:
        path = hf_files.build("t5")
    except hf_files.Missing as exc:
        pytest.skip(str(exc))
    from tokscope.core.formats.tokenizer_json import from_json_text

    tok = from_json_text(path, "t5")
    app = ExplorerApp("aⅷb", tokenizer=tok, palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        doc = app.doc
        shared = [i for i in range(len(doc.ids)) if doc.piece(i).start == 1]
        assert len(shared) > 1
        for i in shared:
            screen = await select(pilot, i)
            own = doc.piece(i).bytes.decode()
            assert "ⅷ" not in own and own.strip() in ("v", "i", "ii", "iii", "vi", "vii", "viii")
            assert "shares ⅷ with" in screen and "partial" not in screen
            assert _rows(screen)[1].startswith(f"text {own.replace(' ', '·')}")
