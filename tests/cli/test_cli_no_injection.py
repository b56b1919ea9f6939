"""Issue 14, High 4: nothing from outside reaches the terminal as a command.

A hostile string (escape sequences, OSC 52 clipboard writes, C1 controls, bidirectional overrides,
newlines, bytes that are not UTF-8) is put everywhere a user's or a file's string enters the command
line: a tokenizer file's name, ``metadata.source``, ``pattern_name`` and special tokens, the file's
own name, corpus text (``train --verbose``, ``--special``, ``baselines``), paths in error messages.
Every command's plain output, standard output and standard error alike, must then hold no C0 or
C1 control (but the newlines tokscope writes) and no bidirectional control, and where the string
is shown between markers, nothing but inert glyphs in between.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.cli import main
from tokscope.core.formats import saved as serialize
from tokscope.core.train.trainer import train
from tokscope.sources import registry

#: what must never be printed: C0 controls but the newline, DEL, C1 controls, bidirectional controls
FORBIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: the markers around a hostile string where it is shown whole (printable, kept by safe_text)
OPEN, CLOSE = "⟪", "⟫"
SPAN = re.compile(f"{OPEN}(.*?){CLOSE}", re.S)

PIECES = ["\x1b[2J", "\x1b]52;c;aGVsbG8=\x07", "\x1b]0;title\x07", "\x9b31m", "\x85", "\x00", "\r", "\n", "\t",
          "\x7f", "\u202e", "\u2066", "\u200f", "\u061c", "\u2028", "a", "é", "日", "[/x]", "%s", "\\", "\udcff"]
hostile = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join)


def check(text: str) -> None:
    found = FORBIDDEN.search(text)
    assert found is None, f"{found.group()!r} reached the output: {text!r}"
    for span in SPAN.findall(text):
        assert "\n" not in span, f"a newline from outside reached the output: {text!r}"


def run(capsys, *argv) -> tuple[int, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out + err


@pytest.fixture(scope="module")
def base_tokenizer():
    return train("the cat sat on the mat, the dog sat on the log " * 5, merges=8, min_frequency=1)


def fs_name(text: str) -> str:
    """``text`` as a file name (no slash, no NUL; surrogates stand for bytes that are not UTF-8)."""
    return text.replace("/", "_").replace("\x00", "_")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=hostile)
def test_hostile_tokenizer_files_print_nothing_that_acts(tmp_path_factory, capsys, monkeypatch, base_tokenizer, h):
    folder = tmp_path_factory.mktemp("hostile")
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(folder / "data"))
    marked = OPEN + h + CLOSE
    doc = serialize.to_document(serialize.from_result(base_tokenizer, marked, metadata={"source": marked}))
    doc["pattern_name"] = marked
    doc["special_tokens"] = {marked: 264}
    data = json.dumps(doc, ensure_ascii=True).encode()  # \\u escapes: surrogates and controls survive JSON
    saved = folder / "data" / "tokenizers"
    saved.mkdir(parents=True)
    path = saved / fs_name(marked + ".json")
    path.write_bytes(data)
    spath = str(path)
    try:
        for argv in (
            ["encodings"],
            ["encode", "-e", spath, "the cat"],
            ["encode", "-e", spath, "the cat" + marked, "--allow-special", "all"],
            ["explain", "-e", spath, "the cat"],
            ["stats", "-e", spath, "the cat sat"],
            ["compare", "-e", spath, "-e", "gpt2", "the cat sat", "--price-in", "1"],
            ["languages", "-e", spath, "--no-chart"],
            ["tree", "-e", spath, "256", "--used-in"],
            ["vocab", "-e", spath, "--search", "at"],
            ["export", "-e", spath, "-o", str(folder / fs_name(marked + ".tiktoken"))],
            ["encode", "-e", str(folder / fs_name(marked + "-missing.json")), "x"],
            ["encode", "-e", fs_name(marked), "x"],
            ["encode", "-f", str(folder / fs_name(marked + ".txt"))],
            ["decode", "-e", spath, fs_name(marked)],
        ):
            code, text = run(capsys, *argv)
            check(text)
    finally:
        registry.forget()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=hostile)
def test_hostile_corpus_text_prints_nothing_that_acts(tmp_path_factory, capsys, monkeypatch, h):
    folder = tmp_path_factory.mktemp("corpus")
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(folder / "data"))
    corpus = folder / fs_name(OPEN + h + CLOSE + ".txt")
    words = ["the", "cat", h, "sat", "on", h + "mat", "dog"]
    corpus.write_text(" ".join(words * 8), encoding="utf-8", errors="surrogateescape")
    try:
        for argv in (
            ["train", str(corpus), "--merges", "6", "--verbose", "--min-frequency", "1", "--pattern", "none"],
            ["train", str(corpus), "--merges", "6", "--special", h, "--name", "x", "--errors", "replace"],
            ["train", str(corpus), "--merges", "6", "--errors", "replace", "--sweep", "258"],
            ["baselines", str(corpus), "--vocab-size", "270", "--errors", "replace"],
            ["import", str(corpus), "--pattern", "gpt2", "-o", str(folder / "x.json")],
            ["stats", "-f", str(corpus), "--errors", "replace", "--top", "20"],
            ["count", str(corpus), str(folder), "-r", "--errors", "replace", "-e", "gpt2", "-e", "o200k_base"],
            ["count", str(corpus), str(folder / fs_name(h + "-missing")), "--max-tokens", "1"],
            ["count", "--json", str(folder), "-r", "--hidden"],
            ["truncate", "--max-tokens", "5", "-f", str(corpus), "--errors", "replace", "--json"],
            ["truncate", "--max-tokens", "5", "-f", str(corpus) + "-missing"],
        ):
            code, text = run(capsys, *argv)
            check(text)
            if "--verbose" in argv and code == 0:
                prefixes = ("corpus:", "merge ", "  now:", "trained ", "length:", "stop:", "special tokens:", "saved")
                for line in text.splitlines():
                    assert line.startswith(prefixes) or not line, f"a line from outside: {line!r}"
    finally:
        registry.forget()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=hostile)
def test_count_and_truncate_show_hostile_names_and_text_inert(tmp_path_factory, capsys, monkeypatch, h):
    """File names in count's table and notes (binaries, not UTF-8, links to nothing, special-token
    text), and truncate's text on a terminal, print nothing that acts."""
    from tokscope.commands import common

    folder = tmp_path_factory.mktemp("names")
    marked = OPEN + h + CLOSE
    (folder / fs_name(marked + ".txt")).write_text("text <|endoftext|> " + h, encoding="utf-8", errors="surrogateescape")
    (folder / fs_name(marked + ".bin")).write_bytes(b"\x89PNG\x00\xff")
    (folder / fs_name(marked + ".latin")).write_bytes(b"caf\xe9")
    os.symlink("nowhere", folder / fs_name(marked + ".link"))
    for argv in (["count", str(folder)], ["count", "--total", str(folder), str(folder / fs_name(marked + "-gone"))]):
        code, text = run(capsys, *argv)
        check(text)
    monkeypatch.setattr(common, "is_terminal", lambda stream: True)  # the text itself, shown on a terminal
    code, text = run(capsys, "truncate", "--max-tokens", "4", "--special-as-text", "--errors", "replace", "-f",
                     str(folder / fs_name(marked + ".txt")))
    check(text)


def test_the_guard_is_the_second_line_of_defence(capsys):
    """Even a message that forgot safe_text reaches the terminal inert (the output guard)."""
    from tokscope.cli import GuardedStream

    import io

    raw = io.StringIO()
    GuardedStream(raw).write("ok\x1b]52;c;x\x07\u202e\n")
    assert raw.getvalue() == "ok␛]52;c;x␇⟨RLO⟩\n"


def test_the_json_output_escapes_what_json_leaves_raw(capsys, tmp_path, monkeypatch, base_tokenizer):
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path))
    name = "c1\x9b\u202e\udcff"
    path = tmp_path / "t.json"
    path.write_bytes(json.dumps(serialize.to_document(serialize.from_result(base_tokenizer, name))).encode())
    code, out = run(capsys, "encode", "-e", str(path), "--json", "hi")
    assert code == 0 and FORBIDDEN.search(out) is None
    assert json.loads(out)["encoding"] == name  # the escapes parse back to the same string
    registry.forget()


def test_no_injection_in_paths_of_error_messages(capsys, tmp_path):
    bad = str(tmp_path / "a\x1b[31mb\u202e.txt")
    for argv in (["encode", "-f", bad], ["train", bad, "--merges", "3"], ["baselines", bad],
                 ["encode", "-e", bad, "x"], ["train", "-", "--merges", "3", "-o", bad + "/x.json"]):
        code, text = run(capsys, *argv)
        assert code in (1, 2)
        check(text)
    assert os.listdir(tmp_path) == []
