"""``tokscope stats``: the same figures as the core, plain and ``--json``, and clear errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter

import pytest

from tokscope import cli
from tokscope.sample_texts import samples_dir


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_figures_match_independent_counts(capsys, load):
    path = samples_dir() / "prose.txt"
    code, out, err = run(capsys, "stats", "-e", "cl100k_base", "-f", str(path), "--json", "--top", "5",
                         "--width", "768")
    assert code == 0, err
    data = json.loads(out)
    text = path.read_text(encoding="utf-8")
    tok = load("cl100k_base")
    pieces = tok.pieces(text)
    assert data["encoding"] == "cl100k_base"
    assert data["tokens"] == len(pieces)
    assert data["chars"] == len(text)
    by_bytes = Counter(len(p.bytes) for p in pieces)
    assert {n: c for n, c in data["lengths"]["bytes"]["bins"] if c} == dict(by_bytes)
    freq = Counter(p.id for p in pieces)
    assert data["rank_frequency"] == sorted(freq.values(), reverse=True)
    expected_top = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert [(t["id"], t["count"]) for t in data["top"]] == expected_top
    assert [bytes.fromhex(t["bytes"]) for t in data["top"]] == [tok.token_bytes(i) for i, _ in expected_top]
    assert data["coverage"] == {"distinct": len(freq), "n_vocab": tok.n_vocab, "fraction": len(freq) / tok.n_vocab}
    assert data["embedding"]["params"] == tok.n_vocab * 768
    assert data["zipf"]["slope"] < 0 and data["zipf"]["points"] == len(freq)
    assert data["normalization"] is None


def test_json_digit_groups(capsys):
    code, out, _ = run(capsys, "stats", "-e", "o200k", "--json", "pi is 3141592 and e is 2718")
    assert code == 0
    digits = json.loads(out)["digits"]
    assert [n["groups"] for n in digits["numbers"]] == [["314", "159", "2"], ["271", "8"]]
    assert digits["summary"] == "left-to-right groups of up to 3"
    code, out, _ = run(capsys, "stats", "-e", "gpt2", "--json", "pi is 3141592 and e is 2718")
    digits = json.loads(out)["digits"]
    assert "".join(digits["numbers"][0]["groups"]) == "3141592"
    assert json.loads(out)["digit_probe"]["summary"] == "irregular"


def test_plain_output_has_every_section(capsys):
    code, out, _ = run(capsys, "stats", "-e", "gpt2", "--normalize", "café 12345 café")
    assert code == 0
    for heading in ("token lengths in bytes", "token lengths in characters", "Zipf: slope", "most frequent tokens",
                    "vocabulary coverage:", "digit groups in the text:", "embedding table: 50,257 x 4,096",
                    "normalisation: tokens after each form"):
        assert heading in out
    assert "[123][45]" in out
    assert "█" in out


def test_normalize_counts_differ_for_decomposed_accents(capsys):
    code, out, _ = run(capsys, "stats", "-e", "o200k_base", "--normalize", "--json", "cafe\u0301 re\u0301sume\u0301")
    rows = {r["form"]: r for r in json.loads(out)["normalization"]}
    assert rows["none"]["tokens"] == rows["NFD"]["tokens"]
    assert rows["NFC"]["tokens"] != rows["NFD"]["tokens"]
    assert rows["NFC"]["changed"] and not rows["NFD"]["changed"]
    assert rows["NFC"]["chars"] == rows["NFD"]["chars"] - 3


def test_ascii_fallback_with_no_color(capsys, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _ = run(capsys, "stats", "hello hello world 1234")
    assert code == 0
    assert "#" in out
    assert not set(out) & set("█▏▎▍▌▋▊▉⠁")


def test_reads_standard_input(capsys, monkeypatch):
    class FakeStdin(io.TextIOWrapper):
        def isatty(self):
            return False

    monkeypatch.setattr(sys, "stdin", FakeStdin(io.BytesIO("one two two".encode())))
    code, out, _ = run(capsys, "stats", "--json")
    assert code == 0
    assert json.loads(out)["tokens"] == 3


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["stats", "-f", "/no/such/file"], 1, "no such file"),
        (["stats", "--width", "0", "x"], 2, "--width must be a positive number"),
        (["stats", "--top", "-1", "x"], 2, "--top must be zero or more"),
        (["stats", "-e", "nope", "x"], 1, "unknown encoding"),
        (["stats", "<|endoftext|>"], 1, "--allow-special"),
        (["stats", "x", "-f", "y"], 2, "either TEXT or -f FILE"),
    ],
)
def test_bad_input_is_one_line(capsys, argv, code, message):
    got, out, err = run(capsys, *argv)
    assert got == code
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_binary_file_is_refused(capsys, tmp_path):
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\x00\xff\xfe binary")
    code, _, err = run(capsys, "stats", "-f", str(path))
    assert code == 1 and "binary" in err


def test_special_tokens_allowed(capsys):
    code, out, _ = run(capsys, "stats", "-e", "cl100k", "--allow-special", "all", "--json", "a<|endoftext|>")
    assert code == 0
    top = json.loads(out)["top"]
    assert any(t["special"] and t["text"] == "<|endoftext|>" for t in top)


def test_runs_as_a_program():
    out = subprocess.run([sys.executable, "-m", "tokscope.cli", "stats", "--json", "ok 1000"],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["tokens"] >= 2
