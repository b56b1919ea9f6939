"""Starting the explorer: files, standard input, bad input (no terminal needed)."""

from __future__ import annotations

import argparse
import io

import pytest

from tokscope import cli
from tokscope.app import main as app_main
from tokscope.app.main import StartupProblem, read_input
from tokscope.inputs.text_input import head_cut


def args(**kw) -> argparse.Namespace:
    base = {"file": None, "encoding": "o200k_base", "errors": "strict", "max_bytes": cli.DEFAULT_MAX_BYTES}
    base.update(kw)
    return argparse.Namespace(**base)


class FakeStdin:
    def __init__(self, data: bytes, tty: bool = False) -> None:
        self.buffer = io.BytesIO(data)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_no_file_opens_the_sample(monkeypatch):
    from tokscope.sample_texts import read_sample

    monkeypatch.setattr("sys.stdin", FakeStdin(b"", tty=True))
    text, path, source, notice, _ = read_input(args())
    assert text == read_sample("default.txt") and source == "sample" and path is None and notice is None


def test_file_and_stdin(tmp_path, monkeypatch):
    f = tmp_path / "a.txt"
    f.write_text("héllo\r\n", encoding="utf-8")
    assert read_input(args(file=str(f)))[:3] == ("héllo\r\n", str(f), "file")
    monkeypatch.setattr("sys.stdin", FakeStdin("piped ✓".encode()))
    assert read_input(args())[:3] == ("piped ✓", None, "stdin")


def test_binary_file_is_refused_unless_replacement_is_asked_for(tmp_path):
    f = tmp_path / "bin.dat"
    f.write_bytes(b"ab\x00\xff\xfe")
    with pytest.raises(StartupProblem, match="binary file: byte 0xff at offset 3"):
        read_input(args(file=str(f)))
    text, path, _, notice, _ = read_input(args(file=str(f)), ask=lambda q, c: "replace")
    assert text == "ab\x00\ufffd\ufffd" and path is None and "U+FFFD" in notice
    assert read_input(args(file=str(f), errors="replace"))[0] == "ab\x00\ufffd\ufffd"
    with pytest.raises(StartupProblem, match="not valid UTF-8"):
        f.write_bytes(b"caf\xe9")
        read_input(args(file=str(f)), ask=lambda q, c: "quit")


def test_file_over_the_limit_offers_its_head(tmp_path):
    f = tmp_path / "big.txt"
    f.write_text("é" * 100, encoding="utf-8")  # 200 bytes
    with pytest.raises(StartupProblem, match="200 bytes, over the explorer's 51-byte limit"):
        read_input(args(file=str(f), max_bytes=51))
    asked = []
    text, path, _, notice, _ = read_input(args(file=str(f), max_bytes=51), ask=lambda q, c: asked.append(c) or "head")
    assert text == "é" * 25 and path is None and "first 50 bytes" in notice
    assert [k for k, _ in asked[0]] == ["head", "quit"]


def test_head_cut_keeps_whole_characters():
    data = "a👍b".encode()
    assert [head_cut(data, n).decode() for n in range(1, 7)] == ["a", "a", "a", "a", "a👍", "a👍b"]


def test_missing_file_and_unknown_encoding_exit_1(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", FakeStdin(b"", tty=True))
    assert cli.main([str(tmp_path / "nope.txt")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert cli.main([str(tmp_path)]) == 1
    assert "is a directory" in capsys.readouterr().err
    assert cli.main(["-e", "nonsense", str(tmp_path)]) == 1
    assert "unknown encoding 'nonsense'" in capsys.readouterr().err


def test_run_explorer_passes_the_text_to_the_app(tmp_path, monkeypatch):
    f = tmp_path / "t.txt"
    f.write_text("from a file", encoding="utf-8")
    seen = {}

    class FakeApp:
        def __init__(self, text, **kw):
            seen.update(kw, text=text)
            self.return_code = 0

        def run(self):
            seen["ran"] = True

    monkeypatch.setattr("tokscope.app.app.ExplorerApp", FakeApp)
    monkeypatch.setattr("sys.stdin", FakeStdin(b"", tty=True))
    assert app_main.run_explorer(args(file=str(f), encoding="cl100k")) == 0
    assert seen == {"text": "from a file", "encoding": "cl100k", "path": str(f), "source": "file",
                    "notice": None, "file_encoding": "utf-8", "origin": None, "ran": True}
