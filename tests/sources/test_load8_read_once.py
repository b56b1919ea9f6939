"""Issue 22 item 4 (load8): a small tokenizer file is opened once per load (sniffed from the bytes
that are then parsed, one stat for what it is), cold and warm, and loads as it did; a larger one is
still sniffed from its head first (a GGUF model's weights are never read), and a file swapped for
something that is not a regular file is still refused in one line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

import hf_files  # noqa: E402

from tokscope.sources import model_files  # noqa: E402
from tokscope.sources.errors import SourceError  # noqa: E402

TEXT = "Hello, wörld: 中文 and 😀 <|endoftext|> \u0301x"


@pytest.fixture
def opens(monkeypatch):
    """The paths ``os.open`` was called with during the test."""
    seen: list[str] = []
    real = os.open

    def counting(path, *args, **kwargs):
        seen.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return seen


@pytest.mark.parametrize("name", ["gpt2", "wordlevel"])
def test_a_small_file_is_opened_once_cold_and_warm(name, tmp_path, cache_dir, opens):
    path = hf_files.save(name, tmp_path)
    want = tokenizers.Tokenizer.from_file(str(path)).encode(TEXT, add_special_tokens=False).ids
    for _ in ("cold", "warm"):
        opens.clear()
        tokenizer = model_files.load_path(path)
        assert opens.count(str(path)) == 1
        assert tokenizer.encode(TEXT, allowed_special="all") == want
    # gpt2's warm load read the entry the cold one wrote; wordlevel's small file has none (see below)
    assert len(list(cache_dir.rglob("*.tables"))) == (name == "gpt2")


def test_a_file_over_the_read_once_size_is_sniffed_first(tmp_path, cache_dir, opens, monkeypatch):
    path = hf_files.save("wordlevel", tmp_path)
    monkeypatch.setattr(model_files, "READ_ONCE_BYTES", 16)
    tokenizer = model_files.load_path(path)
    assert opens.count(str(path)) == 2  # its head, then all of it
    want = tokenizers.Tokenizer.from_file(str(path)).encode(TEXT, add_special_tokens=False).ids
    assert tokenizer.encode(TEXT, allowed_special="all") == want


def test_a_fifo_or_a_folder_without_a_tokenizer_is_one_line(tmp_path, cache_dir):
    fifo = tmp_path / "tokenizer.json"
    os.mkfifo(fifo)
    with pytest.raises(SourceError, match="not a regular file"):
        model_files.load_path(fifo)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceError, match="holds no tokenizer file"):
        model_files.load_path(empty)
    with pytest.raises(SourceError, match="cannot read"):
        model_files.load_path(tmp_path / "missing.json")


def test_a_small_file_without_a_merge_list_writes_no_entry_and_still_loads(tmp_path, cache_dir):
    from tokscope.sources import cache

    small = hf_files.save("wordlevel", tmp_path)  # a WordLevel model, 31 KB
    merges = hf_files.save("gpt2", tmp_path)  # a BPE model: its entry keeps the merge arrays
    assert small.stat().st_size < cache.MIN_CACHED_BYTES
    want = tokenizers.Tokenizer.from_file(str(small)).encode(TEXT, add_special_tokens=False).ids
    for _ in range(2):
        assert model_files.load_path(small).encode(TEXT, allowed_special="all") == want
    assert not list(cache_dir.rglob("*.tables"))
    model_files.load_path(merges)
    assert len(list(cache_dir.rglob("*.tables"))) == 1


@pytest.mark.parametrize("name", ["wordlevel", "t5", "bert"])
def test_a_file_that_is_never_cached_is_neither_hashed_nor_looked_for(tmp_path, cache_dir, monkeypatch, name):
    """A tokenizer.json under :data:`cache.MIN_CACHED_BYTES` with no merge list is built from its
    JSON at once: no sha256 of its bytes, no entry looked for (a BPE file of the same size still
    is hashed and gets its entry); the ids are the library's."""
    from tokscope.sources import cache

    path = hf_files.save(name, tmp_path)
    assert path.stat().st_size < cache.MIN_CACHED_BYTES
    hashed, looked = [], []
    real_sha, real_load = cache.hashlib.sha256, cache._load  # noqa: SLF001 - what the test counts
    monkeypatch.setattr(cache.hashlib, "sha256", lambda *a: hashed.append(1) or real_sha(*a))
    monkeypatch.setattr(cache, "_load", lambda *a: looked.append(1) or real_load(*a))
    want = tokenizers.Tokenizer.from_file(str(path)).encode(TEXT, add_special_tokens=False).ids
    assert model_files.load_path(path).encode(TEXT, allowed_special="all") == want
    assert (hashed, looked) == ([], [])
    model_files.load_path(hf_files.save("gpt2", tmp_path))
    assert hashed and looked == [1]
