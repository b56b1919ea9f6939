"""SentencePiece ``.model`` files as files: told apart from tiktoken rank files by content, opened
by path or folder from the command line, and refused in one line when corrupt."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spm_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.formats import sentencepiece_model as spmf
from tokscope.core.models.sentencepiece_pieces import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED
from tokscope.core.text.errors import TokenizerFileError

ROOT = Path(__file__).resolve().parents[2]


def llama3_rank_file() -> Path | None:
    spec = importlib.util.find_spec("llama_models")
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        path = Path(base) / "llama3" / "tokenizer.model"
        if path.is_file():
            return path
    return None


def test_looks_like_tells_models_from_rank_files(spm_sdist_dir, trained_spm):
    models = [spm_sdist_dir / n for n in spm_files.SDIST_MODELS] + spm_files.mistral_models()
    models += [trained_spm(c) for c in ("unigram", "char", "word")]
    for path in models:
        assert spmf.looks_like(path.read_bytes()[:4096]), path
    rank = llama3_rank_file()
    if rank is not None:
        assert not spmf.looks_like(rank.read_bytes()[:4096])
    for head in (b"", b"\n", b'{"model": {}}', b"IQ== 0\nIg== 1\n", b"\x0a\x00", b"\x0a\x05\x12\x03abc", bytes(64)):
        assert not spmf.looks_like(head), head


def test_llama3_rank_file_still_opens_as_ranks(tmp_path):
    rank = llama3_rank_file()
    if rank is None:
        pytest.skip("llama-models is not installed")
    from tokscope.sources import model_files

    tok = model_files.load_path(rank)
    assert tok.kind == "byte-level BPE"


def _small_model(trainer=None) -> bytes:
    pieces = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL), ("▁a", -1.0, NORMAL),
              ("b", -2.0, NORMAL), ("<x>", 0.0, USER_DEFINED), ("zz", -3.0, UNUSED)]
    return spmf.build_model(pieces, trainer=trainer)


def test_built_models_follow_the_schema():
    sp = pytest.importorskip("sentencepiece")
    for trainer, kind in ((None, "Unigram (SentencePiece)"), ({3: 2}, "BPE by score (SentencePiece)")):
        data = _small_model(trainer)
        tok = spmf.from_model_bytes(data, "t")
        ref = sp.SentencePieceProcessor(model_proto=data)
        assert tok.kind == kind
        assert tok.encode("a<x>b") == ref.encode("a<x>b") == [3, 5, 4]
        assert tok.encode("zz a") == ref.encode("zz a") == [0, 3]  # an unused piece is never emitted


@pytest.mark.parametrize("data, why", [
    (b"", "no pieces"),
    (b"\x0a", "truncated"),
    (b"\x0a\x10\x0a\x05<unk>", "truncated"),
    (b"\x0f\x00", "wire type 7"),
    (spmf.build_model([("a", 0.0, NORMAL)]), "no unknown piece"),
    (spmf.build_model([("<unk>", 0.0, UNKNOWN), ("a", 0.0, NORMAL), ("a", 0.0, NORMAL)]), "twice"),
    (spmf.build_model([("<unk>", 0.0, UNKNOWN), ("", 0.0, NORMAL)]), "empty"),
    (spmf.build_model([("<unk>", 0.0, UNKNOWN), ("<0x41>", 0.0, BYTE)], trainer={35: 1}), "256 byte pieces"),
    (spmf.build_model([("<unk>", 0.0, UNKNOWN), ("a", 0.0, 9)]), "unknown type"),
    (spmf.build_model([("<unk>", 0.0, UNKNOWN)], trainer={3: 7}), "model type"),
    (b"\x0a\x0a\x0a\x01\xff\x15\x00\x00\x00\x00\x18\x01", "UTF-8"),
])
def test_corrupt_models_are_one_line_errors(data, why):
    with pytest.raises(TokenizerFileError) as info:
        spmf.from_model_bytes(data, "t", "bad.model")
    message = str(info.value)
    assert why in message and "\n" not in message


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(cut=st.integers(0, 4000), flips=st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 255)), max_size=4))
def test_mutated_models_load_or_fail_in_one_line(spm_sdist_dir, cut, flips):
    data = bytearray((spm_sdist_dir / "botchan_en_unigram_1000.model").read_bytes()[: 4000 + cut * 3])
    for where, value in flips:
        data[where % len(data)] = value
    try:
        tok = spmf.from_model_bytes(bytes(data), "t")
    except TokenizerFileError as exc:
        assert "\n" not in str(exc)
        return
    tok.encode("Hello world 中文 🎉")


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "tokscope.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, env=env)


@pytest.fixture
def cli_env(tmp_path):
    import os

    env = dict(os.environ)
    env["TOKSCOPE_CACHE_DIR"] = str(tmp_path / "cache")
    env["TOKSCOPE_DATA_DIR"] = str(tmp_path / "data")
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_cli_encode_model_file_and_folder(spm_sdist_dir, tmp_path, cli_env):
    sp = pytest.importorskip("sentencepiece")
    model = spm_sdist_dir / "botchan_en_unigram_1000.model"
    text = "Hello  world, naïve café 🎉"
    want = " ".join(map(str, sp.SentencePieceProcessor(model_file=str(model)).encode(text)))
    done = run_cli("encode", "-e", str(model), text, env=cli_env)
    assert done.returncode == 0 and done.stdout.strip() == want, done.stderr
    for name in ("spiece.model", "spm.model", "tokenizer.model"):
        folder = tmp_path / name.replace(".", "_")
        folder.mkdir()
        shutil.copy(model, folder / name)
        done = run_cli("encode", "-e", str(folder), text, env=cli_env)
        assert done.returncode == 0 and done.stdout.strip() == want, (name, done.stderr)


def test_cli_corrupt_model_is_one_line(spm_sdist_dir, tmp_path, cli_env):
    bad = tmp_path / "spiece.model"
    bad.write_bytes((spm_sdist_dir / "botchan_en_bpe_1000.model").read_bytes()[:300])
    done = run_cli("encode", "-e", str(bad), "x", env=cli_env)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "SentencePiece model" in lines[0] and "Traceback" not in done.stderr
