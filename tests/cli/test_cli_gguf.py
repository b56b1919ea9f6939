"""GGUF files on the command line (issue 19): a truncated or corrupt file, a FIFO, a file with the
GGUF magic and nothing else, are each one line on standard error and exit code 1; a GGUF whose
pre-tokenizer is llama.cpp's default says so on standard error and still encodes."""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sources"))

from ollama_store import tiny_gguf  # noqa: E402


def one_line(err: bytes) -> str:
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    assert text.count("\n") == 1, text
    return text


def test_truncated_and_corrupt_files_are_one_line_errors(tokscope, tmp_path):
    data = tiny_gguf()
    cases = {
        "truncated.gguf": (data[: len(data) // 2], "truncated"),
        "magic-only.gguf": (b"GGUF", "truncated"),
        "corrupt-type.gguf": (data[:24] + struct.pack("<Q", 3) + b"abc" + struct.pack("<I", 77) + data[40:],
                              "unknown value type 77"),
        "huge-array.gguf": (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"k"
                            + struct.pack("<IIQ", 9, 8, 2**60) + b"\0" * 32, "more than the file holds"),
        "no-tokenizer.gguf": (b"GGUF" + struct.pack("<IQQ", 3, 0, 0), "no tokenizer.ggml.model"),
    }
    for name, (content, expected) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        done = tokscope("encode", "-e", str(path), "hello")
        assert done.returncode == 1, (name, done.stderr)
        line = one_line(done.stderr)
        assert expected in line and name in line, (name, line)
        assert done.stdout == b""


def test_a_fifo_is_refused_without_blocking(tokscope, tmp_path):
    fifo = tmp_path / "model.gguf"
    os.mkfifo(fifo)
    done = tokscope("encode", "-e", str(fifo), "hello", timeout=60)
    assert done.returncode == 1 and "not a regular file" in one_line(done.stderr)


def test_a_default_pre_tokenizer_is_said_on_stderr(tokscope, tmp_path):
    path = tmp_path / "default.gguf"
    path.write_bytes(tiny_gguf(pre="default"))
    done = tokscope("encode", "-e", str(path), "hello world")
    assert done.returncode == 0 and done.stdout.split()
    line = one_line(done.stderr)
    assert "note:" in line and "pre-tokenizer 'default'" in line and "llama.cpp" in line
    named = tmp_path / "named.gguf"
    named.write_bytes(tiny_gguf(pre="gpt-2"))
    quiet = tokscope("encode", "-e", str(named), "hello world")
    assert quiet.returncode == 0 and quiet.stderr == b""
    assert quiet.stdout == done.stdout  # on this text the two splits agree


@pytest.mark.parametrize("pre", ["mystery-model", "kimi-k2"])
def test_an_unknown_or_unsupported_pre_tokenizer_is_named(tokscope, tmp_path, pre):
    path = tmp_path / "odd.gguf"
    path.write_bytes(tiny_gguf(pre=pre))
    done = tokscope("encode", "-e", str(path), "hello")
    assert done.returncode == 1 and f"'{pre}'" in one_line(done.stderr)
