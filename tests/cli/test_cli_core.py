"""The first CLI: encodings, encode, decode; one-line errors with exit codes, never a traceback."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from tokscope.cli import main


def run(capsys, monkeypatch, args, stdin: bytes | None = None):
    if stdin is not None:
        fake = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", fake)
    code = main(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_encodings_plain_and_json(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["encodings"])
    assert code == 0
    for name in ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]:
        assert name in out
    assert "200,019" in out and "available" in out
    code, out, _ = run(capsys, monkeypatch, ["encodings", "--json"])
    data = json.loads(out)
    by_name = {e["name"]: e for e in data["encodings"]}
    assert by_name["cl100k_base"]["n_vocab"] == 100277 and by_name["cl100k_base"]["available"] is True
    assert set(by_name["gpt2"]) >= {"name", "n_vocab", "source", "detail", "available"}


def test_encode_plain_matches_the_core(capsys, monkeypatch, load):
    code, out, _ = run(capsys, monkeypatch, ["encode", "Hello, world"])
    assert code == 0
    assert out.split() == [str(i) for i in load("o200k_base").encode("Hello, world")]
    code, out, _ = run(capsys, monkeypatch, ["encode", "-e", "gpt2", "Hello, world"])
    assert out.split() == ["15496", "11", "995"]


def test_encode_json_fields(capsys, monkeypatch):
    text = "héllo 👋"
    code, out, _ = run(capsys, monkeypatch, ["encode", "-e", "cl100k_base", "--json", text])
    assert code == 0
    data = json.loads(out)
    tokens = data["tokens"]
    assert data["encoding"] == "cl100k_base" and data["count"] == len(tokens)
    assert bytes.fromhex("".join(t["bytes"] for t in tokens)) == text.encode()
    for t in tokens:
        assert t["bytes"] == t["bytes"].lower()
        assert 0 <= t["start"] < t["end"] <= len(text)
        if t["partial"]:
            assert "\ufffd" in t["text"]
        else:
            assert t["text"] == text[t["start"] : t["end"]]
    assert any(t["partial"] for t in tokens)  # the emoji is split inside its bytes


def test_encode_stdin_and_file(capsys, monkeypatch, tmp_path, load):
    want = [str(i) for i in load("o200k_base").encode("from stdin\n")]
    code, out, _ = run(capsys, monkeypatch, ["encode"], stdin=b"from stdin\n")
    assert code == 0 and out.split() == want
    path = tmp_path / "t.txt"
    path.write_text("from stdin\n", encoding="utf-8")
    code, out, _ = run(capsys, monkeypatch, ["encode", "-f", str(path)])
    assert code == 0 and out.split() == want


def test_special_tokens_refused_allowed_or_text(capsys, monkeypatch, load):
    tok = load("o200k_base")
    text = "a<|endoftext|>b"
    code, out, err = run(capsys, monkeypatch, ["encode", text])
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "--allow-special" in err and "<|endoftext|>" in err
    code, out, _ = run(capsys, monkeypatch, ["encode", "--allow-special", "all", text])
    assert code == 0 and out.split() == [str(i) for i in tok.encode(text, allowed_special="all")]
    assert str(tok.special_tokens["<|endoftext|>"]) in out.split()
    code, out, _ = run(capsys, monkeypatch, ["encode", "--allow-special", "<|endoftext|>", text])
    assert code == 0 and str(tok.special_tokens["<|endoftext|>"]) in out.split()
    code, out, _ = run(capsys, monkeypatch, ["encode", "--special-as-text", text])
    assert code == 0 and out.split() == [str(i) for i in tok.encode_ordinary(text)]
    # a name that is not a special token here is ignored, as tiktoken does, with a note
    code, out, err = run(capsys, monkeypatch, ["encode", "--allow-special", "<|nope|>", "x<|nope|>"])
    assert code == 0 and out.split() == [str(i) for i in tok.encode("x<|nope|>")]
    assert "<|nope|>" in err and "not a special token of o200k_base" in err and err.count("\n") == 1


def test_decode_args_stdin_and_errors(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["decode", "-e", "gpt2", "15496", "11", "995"])
    assert code == 0 and out == "Hello, world"
    code, out, _ = run(capsys, monkeypatch, ["decode", "-e", "gpt2"], stdin=b"15496 11 995\n")
    assert code == 0 and out == "Hello, world"
    code, out, _ = run(capsys, monkeypatch, ["decode", "-e", "gpt2", "--json", "15496"])
    assert json.loads(out)["text"] == "Hello"
    code, _, err = run(capsys, monkeypatch, ["decode", "-e", "gpt2", "15496", "999999"])
    assert code == 1 and "999999" in err and err.count("\n") == 1
    code, _, err = run(capsys, monkeypatch, ["decode", "-e", "gpt2", "15496", "abc"])
    assert code == 2 and "'abc'" in err


def test_invalid_utf8_names_the_first_bad_byte(capsys, monkeypatch, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good text \xff more")
    code, _, err = run(capsys, monkeypatch, ["encode", "-f", str(path)])
    assert code == 1 and "offset 10" in err and "0xff" in err and err.count("\n") == 1
    code, out, _ = run(capsys, monkeypatch, ["encode", "--json", "--errors", "replace", "-f", str(path)])
    assert code == 0 and "\ufffd" in "".join(t["text"] for t in json.loads(out)["tokens"])
    code, _, err = run(capsys, monkeypatch, ["encode"], stdin=b"ok \xc3")
    assert code == 1 and "offset 3" in err


def test_file_errors_and_size_limit(capsys, monkeypatch, tmp_path):
    code, _, err = run(capsys, monkeypatch, ["encode", "-f", str(tmp_path)])
    assert code == 1 and "directory" in err
    code, _, err = run(capsys, monkeypatch, ["encode", "-f", str(tmp_path / "missing.txt")])
    assert code == 1 and "no such file" in err
    path = tmp_path / "big.txt"
    path.write_text("x" * 100)
    code, _, err = run(capsys, monkeypatch, ["encode", "--max-bytes", "10", "-f", str(path)])
    assert code == 1 and "limit" in err
    code, _, err = run(capsys, monkeypatch, ["encode", "-e", "nope_base", "x"])
    assert code == 1 and "o200k_base" in err and err.count("\n") == 1
    code, _, err = run(capsys, monkeypatch, ["encode", "text", "-f", str(path)])
    assert code == 2


@pytest.mark.parametrize("sub", [[], ["encodings"], ["encode"], ["decode"]])
def test_help_exits_zero(capsys, sub):
    with pytest.raises(SystemExit) as info:
        main([*sub, "--help"])
    assert info.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_usage_error_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["encode", "--no-such-flag"])
    assert info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_real_process_stdin_and_no_traceback(tmp_path):
    exe = [sys.executable, "-m", "tokscope.cli"]
    done = subprocess.run([*exe, "encode", "-e", "gpt2"], input=b"Hello, world", capture_output=True)
    assert done.returncode == 0 and done.stdout.split() == [b"15496", b"11", b"995"]
    done = subprocess.run([*exe, "decode", "-e", "gpt2", "50257"], capture_output=True, text=True)
    # 50256 is <|endoftext|>; 50257 is past the vocabulary
    assert done.returncode == 1 and "50257" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([*exe, "decode", "-e", "gpt2"], input="1 x", capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
