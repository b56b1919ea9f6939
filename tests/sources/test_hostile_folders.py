"""Issue 21, High 3 / Medium 7 / Medium 15: named pipes, devices, huge files and links out of the
hub cache, in the places tokscope reads model files, as a user meets them (the real command in a
child process, with a timeout: a hang fails the test). Every hostile file is built here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def wordlevel_json() -> str:
    return json.dumps({"version": "1.0", "pre_tokenizer": {"type": "WhitespaceSplit"},
                       "model": {"type": "WordLevel", "vocab": {"hi": 0, "there": 1, "<unk>": 2}, "unk_token": "<unk>"}})


def run(env: dict, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokscope.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=timeout, cwd=env.get("CWD", "/"))


def one_line(done: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


@pytest.fixture
def hub(tmp_path) -> tuple[Path, dict]:
    """A hub cache laid out as the hub library lays it out: snapshot files link to blobs."""
    root = tmp_path / "hub"
    folder = root / "models--acme--tiny"
    snap = folder / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    (folder / "blobs").mkdir()
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(COMMIT)
    for name, text in (("tokenizer.json", wordlevel_json()),
                       ("tokenizer_config.json", json.dumps({"chat_template": "{{ messages[0]['content'] }}"}))):
        blob = folder / "blobs" / f"blob-{name}"
        blob.write_text(text)
        (snap / name).symlink_to(os.path.relpath(blob, snap))
    env = {"HF_HUB_CACHE": str(root), "TOKSCOPE_CACHE_DIR": str(tmp_path / "cache"),
           "TOKSCOPE_DATA_DIR": str(tmp_path / "data")}
    return snap, env


def test_the_hub_layout_with_links_to_blobs_loads(hub):
    snap, env = hub
    done = run(env, "encode", "-e", "acme/tiny", "hi there")
    assert done.returncode == 0 and done.stdout.split() == ["0", "1"], done.stderr


def test_a_fifo_as_the_hub_ref_does_not_hang(hub):
    snap, env = hub
    ref = snap.parent.parent / "refs" / "main"
    ref.unlink()
    os.mkfifo(ref)
    done = run(env, "encode", "-e", "acme/tiny", "hi there")
    assert done.returncode == 0 and done.stdout.split() == ["0", "1"], done.stderr  # the only snapshot
    done = run(env, "encodings")
    assert done.returncode == 0 and "acme/tiny" in done.stdout


@pytest.mark.parametrize("name", ["tokenizer_config.json", "config.json", "chat_template.jinja"])
def test_a_fifo_in_a_model_folder_is_refused_by_name(tmp_path, name):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(wordlevel_json())
    os.mkfifo(folder / name)
    done = run({"TOKSCOPE_CACHE_DIR": str(tmp_path / "c")}, "encode", "-e", str(folder), "hi")
    assert done.returncode == 1
    assert f"{name} is not a regular file (a named pipe)" in one_line(done)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("name", ["tokenizer_config.json", "config.json"])
def test_a_device_as_a_side_file_is_refused_by_name(tmp_path, name, device):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(wordlevel_json())
    (folder / name).symlink_to(device)
    done = run({"TOKSCOPE_CACHE_DIR": str(tmp_path / "c")}, "encode", "-e", str(folder), "hi")
    assert done.returncode == 1
    assert f"{name} is not a regular file (a character device)" in one_line(done)


def test_a_huge_sparse_chat_template_is_refused_with_its_limit(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(wordlevel_json())
    with open(folder / "chat_template.jinja", "wb") as handle:
        handle.truncate(3 * 1024**3)  # 3 GB that take no disk
    done = run({"TOKSCOPE_CACHE_DIR": str(tmp_path / "c")}, "encode", "-e", str(folder), "hi")
    assert done.returncode == 1
    message = one_line(done)
    assert "chat_template.jinja is 3,221,225,472 bytes, over the 4,194,304-byte limit" in message


def test_a_device_as_the_tokenizer_file_is_refused(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.symlink_to("/dev/zero")
    done = run({"TOKSCOPE_CACHE_DIR": str(tmp_path / "c")}, "encode", "-e", str(path), "hi")
    assert done.returncode == 1 and "not a regular file" in one_line(done)


def test_a_link_out_of_the_hub_cache_is_not_followed(hub, tmp_path):
    snap, env = hub
    secret = tmp_path / "secret.txt"
    secret.write_text("{{ 'TOP SECRET' }}")
    secret.chmod(0o600)
    (snap / "chat_template.jinja").symlink_to(secret)
    conversation = tmp_path / "chat.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    done = run(env, "chat", "-e", "acme/tiny", "-f", str(conversation))
    assert "TOP SECRET" not in done.stdout
    assert done.returncode == 1 and "links outside" in one_line(done)


def test_a_tokenizer_file_linked_out_of_the_hub_cache_is_not_followed(hub, tmp_path):
    snap, env = hub
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(wordlevel_json())
    (snap / "tokenizer.json").unlink()
    (snap / "tokenizer.json").symlink_to(elsewhere)
    done = run(env, "encode", "-e", "acme/tiny", "hi")
    assert done.returncode == 1 and "links outside" in one_line(done)


def test_a_symlink_loop_is_named_as_one(tmp_path):
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    done = run({"TOKSCOPE_CACHE_DIR": str(tmp_path / "c")}, "encode", "-e", str(loop), "hi")
    assert done.returncode == 1 and "symbolic link that loops" in one_line(done) and "unknown encoding" not in done.stderr
