"""GGUF files where users have them (issue 19): by path whatever their name, in a model folder, and
in Ollama's local store (a fake one built in a temporary folder), by name, listed, with Ollama's Go
template shown and never run; nothing contacts the network; bad stores are one-line errors."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ollama_store import CHAT_TEMPLATE, GO_TEMPLATE, make_store, tiny_gguf  # noqa: E402

from tokscope.sources import model_files, ollama, registry  # noqa: E402
from tokscope.sources.errors import SourceError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """An empty fake store (``OLLAMA_MODELS``), tokscope's folders in tmp, and no network."""
    root = tmp_path / "ollama-models"
    root.mkdir()
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "cache"))

    def refuse(*args, **kwargs):
        raise AssertionError("tokscope tried to open a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    registry.forget()
    yield root
    registry.forget()


def ids_of(tokenizer, *pieces: str) -> list[int]:
    return [tokenizer.token_to_id(p) for p in pieces]


def test_a_model_loads_by_name_with_the_default_tag(store):
    make_store(store, tiny_gguf())
    tokenizer = registry.load("ollama:tiny")
    assert tokenizer.name == "ollama:tiny"
    assert tokenizer.encode("hello world") == ids_of(tokenizer, "hello", "Ġworld")
    assert tokenizer.encode("<|im_end|>", allowed_special="all") == ids_of(tokenizer, "<|im_end|>")
    assert registry.load("ollama:tiny:latest") is not None
    files = model_files.describe(tokenizer)
    assert files is not None and files.ollama_template == GO_TEMPLATE and files.context == 4096
    assert "Go template" in files.chat_note and "embedded Jinja" in files.chat_note


@pytest.mark.parametrize(("name", "where"), [
    ("ollama:tiny:q4_0", dict(tag="q4_0")),
    ("ollama:someone/tiny", dict(namespace="someone")),
    ("ollama:someone/tiny:v2", dict(namespace="someone", tag="v2")),
    ("ollama:hf.co/org/tiny-GGUF:Q8_0", dict(host="hf.co", namespace="org", name="tiny-GGUF", tag="Q8_0")),
])
def test_tags_namespaces_and_registries(store, name, where):
    make_store(store, tiny_gguf(), **where)
    assert registry.load(name).encode("hello")
    assert [m.name for m in ollama.local_models()] == [name.replace(":latest", "")]


def test_the_chat_template_is_the_ggufs_jinja_and_the_note_says_which(store):
    make_store(store, tiny_gguf(), name="withjinja")
    make_store(store, tiny_gguf(chat_template=None), name="nojinja")
    make_store(store, tiny_gguf(chat_template=None), name="bare", template=None)
    template = model_files.chat_template_of(registry.load("ollama:withjinja"))
    assert template is not None and template.names == ("default",) and CHAT_TEMPLATE in dict(template.templates).values()
    assert model_files.chat_template_of(registry.load("ollama:nojinja")) is None
    assert "no Jinja" in model_files.describe(registry.load("ollama:nojinja")).chat_note
    bare = model_files.describe(registry.load("ollama:bare"))
    assert bare.ollama_template is None and "embeds no Jinja chat template" in bare.chat_note


def test_the_store_is_listed_beside_the_other_encodings(store):
    make_store(store, tiny_gguf())
    make_store(store, tiny_gguf(), namespace="me", name="other", tag="7b")
    listed = {info.name: info for info in registry.list_encodings()}
    assert {"ollama:tiny", "ollama:me/other:7b"} <= set(listed)
    assert listed["ollama:tiny"].kind == "ollama" and listed["ollama:tiny"].available
    assert "o200k_base" in listed  # the others are still there


def test_a_missing_model_blob_or_bad_manifest_is_one_line(store):
    with pytest.raises(SourceError, match="not in Ollama's local store.*never downloads") as caught:
        registry.load("ollama:absent")
    assert str(store) in str(caught.value) and "\n" not in str(caught.value)
    manifest = make_store(store, tiny_gguf(), name="broken")
    for blob in (store / "blobs").iterdir():
        blob.unlink()
    with pytest.raises(SourceError, match="blob .* is missing"):
        registry.load("ollama:broken")
    manifest.write_text("{not json", encoding="utf-8")
    registry.forget()
    with pytest.raises(SourceError, match="not valid JSON"):
        registry.load("ollama:broken")
    manifest.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.template"}]}))
    with pytest.raises(SourceError, match="no model layer"):
        registry.check("ollama:broken")
    for bad in ("ollama:a/b/c/d", "ollama:../etc", "ollama:"):
        with pytest.raises(SourceError, match="not an Ollama model name"):
            registry.load(bad)
    assert [m.name for m in ollama.local_models()] == []  # the broken manifest is left out of listings


def test_a_gguf_is_known_by_its_content_and_a_folder_by_its_one_gguf(store, tmp_path):
    data = tiny_gguf()
    odd = tmp_path / "weights.bin"
    odd.write_bytes(data)
    assert registry.load(str(odd)).encode("hello") == [registry.load(str(odd)).token_to_id("hello")]
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model-q4.gguf").write_bytes(data)
    (folder / "README.md").write_text("a model")
    assert registry.load(str(folder)).name == "model-q4"
    (folder / "model-q8.gguf").write_bytes(data)
    registry.forget()
    with pytest.raises(SourceError, match="holds 2 GGUF files"):
        registry.load(str(folder))


def test_a_second_load_comes_from_the_registry_without_reading_the_metadata(store, tmp_path, monkeypatch):
    path = tmp_path / "m.gguf"
    path.write_bytes(tiny_gguf(pre="default"))
    registry.forget()
    first = registry.load(str(path))
    from tokscope.core.formats import gguf

    def fail(*args, **kwargs):
        raise AssertionError("the metadata was read again")

    monkeypatch.setattr(gguf, "read_metadata", fail)
    again = registry.load(str(path))
    assert again.encode("hello world") == first.encode("hello world")
    assert model_files.notes_of(again) == model_files.notes_of(first) != ()
    registry.forget()  # a new process (or a forgotten name): the unchanged file's tables are in the disk cache
    assert registry.load(str(path)).encode("hello world") == first.encode("hello world")
    stamp = path.stat()
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))
    registry.forget()  # a changed file is read again
    with pytest.raises(Exception, match="read again"):
        registry.load(str(path))


def _cli(env_store: Path, tmp_path: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, OLLAMA_MODELS=str(env_store), TOKSCOPE_DATA_DIR=str(tmp_path / "data"),
               TOKSCOPE_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-m", "tokscope.cli", *args], capture_output=True, env=env, cwd=ROOT,
                          input=stdin, timeout=120)


def test_the_command_line_lists_encodes_and_counts_a_chat(store, tmp_path):
    make_store(store, tiny_gguf())
    listed = _cli(store, tmp_path, "encodings")
    assert listed.returncode == 0 and b"ollama:tiny" in listed.stdout
    encoded = _cli(store, tmp_path, "encode", "-e", "ollama:tiny", "hello world")
    assert encoded.returncode == 0 and encoded.stderr == b""
    tokenizer = registry.load("ollama:tiny")
    assert encoded.stdout.split() == [str(i).encode() for i in ids_of(tokenizer, "hello", "Ġworld")]
    conversation = json.dumps([{"role": "user", "content": "hello"}]).encode()
    chat = _cli(store, tmp_path, "chat", "-e", "ollama:tiny", stdin=conversation)
    assert chat.returncode == 0, chat.stderr
    assert b"<|im_start|>user" in chat.stdout
    assert chat.stderr.count(b"\n") == 1 and b"Go template syntax, not Jinja" in chat.stderr
    missing = _cli(store, tmp_path, "encode", "-e", "ollama:absent", "x")
    assert missing.returncode == 1 and missing.stderr.count(b"\n") == 1 and b"Traceback" not in missing.stderr


def test_a_hub_snapshot_holding_one_gguf_loads_by_model_id(store, tmp_path, monkeypatch):
    commit = "0123456789abcdef0123456789abcdef01234567"
    folder = tmp_path / "hub" / "models--someone--tiny-GGUF"
    snap = folder / "snapshots" / commit
    snap.mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit)
    (snap / "tiny-Q4_K_M.gguf").write_bytes(tiny_gguf())
    (snap / "README.md").write_text("a model card")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    tokenizer = registry.load("someone/tiny-GGUF")
    assert tokenizer.encode("hello") == [tokenizer.token_to_id("hello")]
    assert "someone/tiny-GGUF" in {info.name for info in registry.list_encodings()}
    (snap / "tiny-Q8_0.gguf").write_bytes(tiny_gguf())  # two quantizations: which one is not guessed
    registry.forget()
    with pytest.raises(SourceError, match="not in the local Hugging Face cache"):
        registry.load("someone/tiny-GGUF")
