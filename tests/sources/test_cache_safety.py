"""Issue 21, High 1: tokscope's tokenizer cache holds data, never code. Entries are planted as an
attacker would (a pickle with a side effect, a file others can write, one owned by someone else,
a FIFO) and the real command is run on them; the pickle never runs and the answer stays right."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")

from tokscope import __version__  # noqa: E402
from tokscope.sample_texts import read_sample  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TEXT = "The keeper's lamp, 1898: ünïcödé and 😀"


class SideEffect:
    """A pickle that creates ``marker`` when it is loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def bytelevel_json() -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator([read_sample("prose.txt")], trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok.to_str()


@pytest.fixture(scope="module")
def tokenizer_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    path.write_text(bytelevel_json(), encoding="utf-8")
    return path


def encode(tokenizer_file: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TOKSCOPE_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "tokscope.cli", "encode", "--json", "-e", str(tokenizer_file), TEXT],
                          capture_output=True, text=True, env=env, cwd=tokenizer_file.parent, timeout=60)


def expected_ids(tokenizer_file: Path) -> list[int]:
    return tokenizers.Tokenizer.from_file(str(tokenizer_file)).encode(TEXT, add_special_tokens=False).ids


def ids_of(done: subprocess.CompletedProcess) -> list[int]:
    assert done.returncode == 0, done.stderr
    return [t["id"] for t in json.loads(done.stdout)["tokens"]]


def entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "tokenizers").iterdir() if not p.name.endswith(".tmp"))


def test_a_planted_pickle_is_never_run(tokenizer_file, tmp_path):
    cache = tmp_path / "cache"
    want = expected_ids(tokenizer_file)
    assert ids_of(encode(tokenizer_file, cache)) == want
    (entry,) = entries(cache)
    marker = tmp_path / "ran"
    bomb = pickle.dumps(SideEffect(marker), protocol=pickle.HIGHEST_PROTOCOL)
    # the entry's own header line followed by the pickle, the bare pickle under the entry's name,
    # and a pickle under every name the old cache read
    header = entry.read_bytes().split(b"\n", 1)[0] + b"\n"
    digest = hashlib.sha256(tokenizer_file.read_bytes()).hexdigest()
    planted = []
    for tag in (f"v1-{__version__}-py{sys.version_info[0]}{sys.version_info[1]}", "v1"):
        old = cache / "tokenizers" / f"json-tokenizer.{digest[:32]}.{tag}.pickle"
        old.write_bytes(f"tokscope-tokenizer 1 {__version__} json-tokenizer {digest}\n".encode() + bomb)
        planted.append(old)
    for content in (header + bomb, bomb):
        entry.write_bytes(content)
        entry.chmod(0o600)
        assert ids_of(encode(tokenizer_file, cache)) == want
        assert not marker.exists(), "the cache ran code from a pickle"
    for old in planted:
        assert old.read_bytes().endswith(bomb)  # left alone, never read


def test_no_cache_file_mentions_pickle(tokenizer_file, tmp_path):
    cache = tmp_path / "cache"
    ids_of(encode(tokenizer_file, cache))
    (entry,) = entries(cache)
    blob = entry.read_bytes()
    assert blob.startswith(b"tokscope-tokenizer-cache ")
    assert not blob.split(b"\n", 2)[2].startswith(b"\x80")  # no pickle protocol mark after the JSON line
    meta = json.loads(blob.split(b"\n", 2)[1])
    assert meta["recipe"] == "tokenizer.json" and "vocab" not in meta["json"]["model"]


def test_an_entry_others_can_write_is_not_trusted(tokenizer_file, tmp_path):
    cache = tmp_path / "cache"
    want = expected_ids(tokenizer_file)
    ids_of(encode(tokenizer_file, cache))
    (entry,) = entries(cache)
    entry.chmod(0o666)
    before = entry.stat().st_ino
    assert ids_of(encode(tokenizer_file, cache)) == want
    (again,) = entries(cache)
    assert again.stat().st_ino != before  # refused, parsed again and replaced
    assert stat.S_IMODE(again.stat().st_mode) == 0o600


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a file away")
def test_an_entry_another_user_owns_is_not_trusted(tokenizer_file, tmp_path):
    cache = tmp_path / "cache"
    ids_of(encode(tokenizer_file, cache))
    (entry,) = entries(cache)
    os.chown(entry, 65534, 65534)
    entry.chmod(0o600)
    before = entry.stat().st_ino
    assert ids_of(encode(tokenizer_file, cache)) == expected_ids(tokenizer_file)
    (again,) = entries(cache)
    assert again.stat().st_ino != before and again.stat().st_uid == os.getuid()


def test_a_fifo_as_an_entry_does_not_hang(tokenizer_file, tmp_path):
    cache = tmp_path / "cache"
    ids_of(encode(tokenizer_file, cache))
    (entry,) = entries(cache)
    entry.unlink()
    os.mkfifo(entry, 0o600)
    assert ids_of(encode(tokenizer_file, cache)) == expected_ids(tokenizer_file)


def test_a_corrupt_table_is_rebuilt_not_trusted(tokenizer_file, tmp_path):
    cache = tmp_path / "cache"
    want = expected_ids(tokenizer_file)
    ids_of(encode(tokenizer_file, cache))
    (entry,) = entries(cache)
    blob = bytearray(entry.read_bytes())
    blob[-5] ^= 0xFF  # one id of the last table
    entry.write_bytes(bytes(blob))
    assert ids_of(encode(tokenizer_file, cache)) == want
    assert entries(cache)[0].read_bytes() != bytes(blob)


def test_the_cache_folder_is_private(tokenizer_file, tmp_path):
    cache = tmp_path / "cache"
    ids_of(encode(tokenizer_file, cache))
    assert stat.S_IMODE((cache / "tokenizers").stat().st_mode) == 0o700
