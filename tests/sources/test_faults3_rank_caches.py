"""Issue 21, High 1 (the rank caches): every cache tokscope reads goes through one check
(:func:`tokscope.sources.cache.read_owned`): a regular file of the user's that nobody else can
write, under a size limit, never a named pipe. The OpenAI rank cache is a data entry (no marshal,
no pickle). Entries are planted as another user would plant them and the real command is run."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from tokscope.sources import builtin, cache
from tokscope.sources import tiktoken_adapter as tk

NAME = "cl100k_base"
TEXT = "Hello world"
RIGHT = "9906 1917"


def run_encode(cache_dir) -> subprocess.CompletedProcess:
    env = {**os.environ, "TOKSCOPE_CACHE_DIR": str(cache_dir)}
    # the timeout only guards the suite against a hang (the defect a FIFO caused); nothing is timed
    return subprocess.run([sys.executable, "-m", "tokscope.cli", "encode", "-e", NAME, TEXT],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """A fresh cache holding a tampered cl100k_base entry (``Hello`` and `` world`` swap ids), with
    a good header: a command that used it would print the ids swapped."""
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path))
    ranks = dict(builtin.load_ranks(NAME))
    file = tk.encoding_spec(NAME).files[0]
    kind = builtin._rank_cache_kind(file)
    ranks[b"Hello"], ranks[b" world"] = ranks[b" world"], ranks[b"Hello"]
    cache.store_ranks(kind, file.sha256, ranks)
    path = builtin._rank_cache_path(file)
    assert cache.load_ranks(kind, file.sha256) == ranks  # as planted, it reads back
    return tmp_path, path


def test_the_planted_entry_would_change_the_answer(planted):
    # the control: owned by the user and private, the planted entry is used (so the tests below
    # would see it if it were read)
    folder, _ = planted
    out = run_encode(folder)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1917", "9906"]


def test_an_entry_others_can_write_is_ignored_and_rebuilt(planted):
    folder, path = planted
    os.chmod(path, 0o666)
    out = run_encode(folder)
    assert (out.returncode, out.stdout.strip()) == (0, RIGHT), out.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # written again, privately
    out = run_encode(folder)
    assert out.stdout.strip() == RIGHT


def test_an_entry_another_user_owns_is_ignored_and_rebuilt(planted):
    if not hasattr(os, "getuid") or os.getuid() != 0:
        pytest.skip("giving a file to another user (os.chown) needs root; the 0666 case runs instead")
    folder, path = planted
    os.chown(path, 65534, 65534)  # nobody
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    out = run_encode(folder)
    assert (out.returncode, out.stdout.strip()) == (0, RIGHT), out.stderr
    assert os.stat(path).st_uid == os.getuid()  # rebuilt by the user


def test_a_fifo_in_the_cache_is_not_opened(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path))
    file = tk.encoding_spec(NAME).files[0]
    path = builtin._rank_cache_path(file)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    out = run_encode(tmp_path)  # opening the FIFO would block for ever: no writer ever comes
    assert (out.returncode, out.stdout.strip()) == (0, RIGHT), out.stderr
    assert stat.S_ISREG(os.stat(path).st_mode)  # replaced by a real entry


def test_read_owned_refuses_what_it_must(tmp_path):
    entry = tmp_path / "entry"
    entry.write_bytes(b"data")
    entry.chmod(0o600)
    assert cache.read_owned(entry, 4) == b"data"
    assert cache.read_owned(entry, 3) is None  # over the size limit
    (tmp_path / "link").symlink_to(entry)
    assert cache.read_owned(tmp_path / "link", 4) is None  # a link is not followed
    entry.chmod(0o620)
    assert cache.read_owned(entry, 4) is None  # writable by the group
    os.mkfifo(tmp_path / "pipe", 0o600)
    assert cache.read_owned(tmp_path / "pipe", 4) is None


def test_the_rank_cache_holds_no_marshal_or_pickle(planted):
    import marshal
    import pickle

    _, path = planted
    source = (builtin.__file__, cache.__file__)
    for module in source:
        text = open(module, encoding="utf-8").read()
        assert "marshal" not in text and "import pickle" not in text and "pickle.load" not in text
    # a marshal payload with the old header is no entry: it is rebuilt, never loaded
    payload = marshal.dumps([bytes([b]) for b in range(256)])
    path.write_bytes(b"tokscope-ranks 2 x 256 y\n" + payload)
    os.chmod(path, 0o600)
    file = tk.encoding_spec(NAME).files[0]
    assert cache.load_ranks(builtin._rank_cache_kind(file), file.sha256) is None
    path.write_bytes(pickle.dumps({b"a": 0}))
    assert cache.load_ranks(builtin._rank_cache_kind(file), file.sha256) is None
