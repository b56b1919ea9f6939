"""``encode --json`` gives each token's piece ``type`` for SentencePiece models and its
``gguf_type`` for GGUF files, as the files say (``sentencepiece`` and the GGUF metadata are the
references), through the public accessors (``Tokenizer.piece_type``, ``GGUFFacts.token_type``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

TEXT = "foo <tool> ab hello ⅷ 🦜 <ctl>"
NAMES = {1: "normal", 2: "unknown", 3: "control", 4: "user-defined", 5: "unused", 6: "byte"}


def _encode_json(path: Path, text: str) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "tokscope.cli", "encode", "-e", str(path), "--json", "--allow-special",
                          "all", "--add-special-tokens", text], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["tokens"]


def _spm_type(sp, token_id: int) -> str:
    if sp.is_control(token_id):
        return "control"
    if sp.is_unknown(token_id):
        return "unknown"
    if sp.is_byte(token_id):
        return "byte"
    if sp.is_unused(token_id):
        return "unused"
    return "user-defined" if sp.IdToPiece(token_id) in ("<tool>", "foo", "@@", "▁bar", "ab") else "normal"


@pytest.mark.parametrize("config", ["user_defined", "unigram_byte_fallback"])
def test_sentencepiece_types_in_encode_json(tmp_path, config):
    spm = pytest.importorskip("sentencepiece")
    import spm_files

    model = spm_files.train(config, tmp_path)
    sp = spm.SentencePieceProcessor(model_file=str(model))
    rows = _encode_json(model, TEXT)
    typed = [r for r in rows if "type" in r]
    assert typed
    for r in typed:
        assert r["type"] == _spm_type(sp, r["id"]), r
        assert "gguf_type" not in r
    if config == "unigram_byte_fallback":
        assert "byte" in {r["type"] for r in typed}


def test_gguf_types_in_encode_json():
    import gguf_files

    from tokscope.core.formats import gguf

    folder = gguf_files.llama_cpp_dir() / "models"
    for name, piece_types in (("ggml-vocab-llama-spm.gguf", True), ("ggml-vocab-gpt-2.gguf", False)):
        path = folder / name
        if not path.is_file():
            pytest.skip(f"{name} is not among llama.cpp's vocab files")
        raw = list(gguf.read_metadata(path)["tokenizer.ggml.token_type"])
        rows = _encode_json(path, "Hi ⅷ there <s>")
        assert rows
        for r in rows:
            assert r["gguf_type"] == NAMES[raw[r["id"]]], r
            assert ("type" in r) == piece_types
