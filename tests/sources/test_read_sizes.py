"""Reading a small tokenizer file takes few system calls (each costs tens of microseconds on some
machines): ``load_path`` stats the file once and ``read_regular`` trusts that stat for the check
before the open (the open descriptor is still checked); the first read asks for the file's size
and one byte more, the read that finds the end for one byte. A file that grows or shrinks while it
is read, or whose size says 0 (procfs), is still read whole; a file swapped for a FIFO after the
caller's stat is still refused."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

import hf_files  # noqa: E402

from tokscope.sources import model_files, regular_files  # noqa: E402
from tokscope.sources.errors import SourceError  # noqa: E402
from tokscope.sources.regular_files import BLOCK, read_regular  # noqa: E402


@pytest.fixture
def calls(monkeypatch):
    """The paths ``os.stat`` was called with and the sizes ``os.read`` was asked for."""
    seen: dict[str, list] = {"stat": [], "read": []}
    real_stat, real_read = os.stat, os.read

    def stat(path, *args, **kwargs):
        seen["stat"].append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    def read(fd, size):
        seen["read"].append(size)
        return real_read(fd, size)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "read", read)
    return seen


def test_a_small_file_is_stat_once_and_read_in_two_small_reads(tmp_path, cache_dir, calls):
    path = hf_files.save("wordlevel", tmp_path)
    size = path.stat().st_size
    calls["stat"].clear()
    model_files.load_path(path)
    assert calls["stat"].count(str(path)) == 1
    assert calls["read"] == [size + 1, 1]


@pytest.mark.parametrize("told", [0, 5, 40, 100, 5000])
def test_the_whole_file_is_read_whatever_size_the_descriptor_says(tmp_path, monkeypatch, told):
    """A file that grew after its size was told (told < real), shrank (told > real) or says 0."""
    path = tmp_path / "f.json"
    data = bytes(range(256)) * 3
    path.write_bytes(data)
    real_fstat = os.fstat

    class Told:
        def __init__(self, info):
            self._info = info

        def __getattr__(self, name):
            return told if name == "st_size" else getattr(self._info, name)

    monkeypatch.setattr(os, "fstat", lambda fd: Told(real_fstat(fd)))
    assert read_regular(path, 10_000) == data


def test_a_file_over_the_limit_as_it_is_read_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "f.json"
    path.write_bytes(b"x" * 100)
    real_fstat = os.fstat

    class Small:
        def __init__(self, info):
            self._info = info

        def __getattr__(self, name):
            return 10 if name == "st_size" else getattr(self._info, name)

    monkeypatch.setattr(os, "fstat", lambda fd: Small(real_fstat(fd)))
    with pytest.raises(SourceError, match="over the 50-byte limit"):
        read_regular(path, 50)


def test_a_large_file_is_read_in_blocks(tmp_path, calls):
    path = tmp_path / "big.bin"
    data = os.urandom(BLOCK + 12345)
    path.write_bytes(data)
    assert read_regular(path, 10 * BLOCK) == data
    assert calls["read"][0] == BLOCK


def test_a_file_swapped_for_a_fifo_after_the_callers_stat_is_refused(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("{}")
    known = os.stat(path)
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(SourceError, match="not a regular file"):
        read_regular(path, 100, known=known)
