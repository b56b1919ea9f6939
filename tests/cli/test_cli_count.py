"""``tokscope count``: files, folders, globs, standard input, skipped files, the --max-tokens gate,
--json, several encodings (a Hugging Face tokenizer.json among them), worker processes, hostile
names, links and unreadable entries; one line per problem, never a traceback."""

from __future__ import annotations

import io
import json
import os
import re
import sys
import threading
from pathlib import Path

import pytest

from tokscope.cli import main
from tokscope.commands import common, count
from tokscope.inputs import text_input, walk

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"
#: what must never reach the output from a file name (as in test_cli_no_injection)
FORBIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def run(capsys, monkeypatch, *args, stdin: bytes | None = None):
    if stdin is not None:
        fake = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", fake)
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def n_tokens(tok, text: str) -> int:
    return len(tok.encode_ordinary(text))


@pytest.fixture
def tree(tmp_path):
    """A folder with text at two levels, a binary, a Latin-1 file, a hidden folder and a hidden file."""
    root = tmp_path / "docs"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "a.txt").write_text("Hello, world\n", encoding="utf-8")
    (root / "b.md").write_text("# Title\n\nSome *markdown* text.\n", encoding="utf-8")
    (root / "logo.png").write_bytes(PNG)
    (root / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    (root / ".hidden.txt").write_text("secret\n", encoding="utf-8")
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (root / "sub" / "c.txt").write_text("deeper text 日本語 👍\n", encoding="utf-8")
    (root / "sub" / "deeper" / "d.md").write_text("deepest\n", encoding="utf-8")
    return root


def test_files_give_a_row_each_and_a_total(capsys, monkeypatch, tree, load):
    tok = load("o200k_base")
    a, b = tree / "a.txt", tree / "b.md"
    code, out, err = run(capsys, monkeypatch, "count", str(a), str(b))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["o200k_base", "path"]
    want_a, want_b = n_tokens(tok, a.read_text()), n_tokens(tok, b.read_text())
    assert lines[1].split() == [str(want_a), str(a)]
    assert lines[2].split() == [str(want_b), str(b)]
    assert lines[3].split() == [str(want_a + want_b), "total", "(2", "files)"]
    code, out, _ = run(capsys, monkeypatch, "count", "--total", str(a), str(b))
    assert out == f"{want_a + want_b}\n"


def test_a_folder_counts_its_top_level_and_r_goes_below(capsys, monkeypatch, tree):
    code, out, err = run(capsys, monkeypatch, "count", "--json", str(tree))
    assert code == 0
    doc = json.loads(out)
    assert [Path(f["path"]).name for f in doc["files"]] == ["a.txt", "b.md"]
    reasons = {Path(s["path"]).name: s["reason"] for s in doc["skipped"]}
    assert reasons == {".git": "hidden", ".hidden.txt": "hidden", "latin1.txt": "not-utf8", "logo.png": "binary",
                       "sub": "folder"}
    assert "-r counts" in err and "2 hidden" in err  # the quiet kinds are summed up in one line
    code, out, _ = run(capsys, monkeypatch, "count", "--json", "-r", str(tree))
    doc = json.loads(out)
    assert [os.path.relpath(f["path"], tree) for f in doc["files"]] == ["a.txt", "b.md", "sub/c.txt",
                                                                        "sub/deeper/d.md"]
    code, out, _ = run(capsys, monkeypatch, "count", "--json", "-r", "--hidden", str(tree))
    names = [os.path.relpath(f["path"], tree) for f in json.loads(out)["files"]]
    assert ".git/HEAD" in names and ".hidden.txt" in names


def test_globs_and_excludes(capsys, monkeypatch, tree):
    def files(*args):
        code, out, _ = run(capsys, monkeypatch, "count", "--json", "-r", *args)
        assert code == 0
        return [os.path.relpath(f["path"], tree) for f in json.loads(out)["files"]]

    assert files("--glob", "*.md", str(tree)) == ["b.md", "sub/deeper/d.md"]
    assert files("--glob", "*.md", "--glob", "c.*", str(tree)) == ["b.md", "sub/c.txt", "sub/deeper/d.md"]
    assert files("--glob", "sub/*", str(tree)) == ["sub/c.txt", "sub/deeper/d.md"]  # "*" also matches "/"
    assert files("--exclude", "deeper", str(tree)) == ["a.txt", "b.md", "sub/c.txt"]
    assert files("--exclude", "*.txt", str(tree)) == ["b.md", "sub/deeper/d.md"]
    # a file named on the command line is counted whatever the globs say
    assert files("--glob", "*.md", str(tree / "a.txt")) == ["a.txt"]
    # a hidden file the globs would not keep is not reported as skipped
    code, out, _ = run(capsys, monkeypatch, "count", "--json", "--glob", "*.md", str(tree))
    assert {Path(s["path"]).name for s in json.loads(out)["skipped"] if s["reason"] == "hidden"} == {".git"}


def test_standard_input_piped_or_named(capsys, monkeypatch, load, tmp_path):
    tok = load("o200k_base")
    text = "piped text, counted\n"
    code, out, _ = run(capsys, monkeypatch, "count", stdin=text.encode())
    assert code == 0 and out.splitlines()[1].split() == [str(n_tokens(tok, text)), "-"]
    f = tmp_path / "f.txt"
    f.write_text("file\n", encoding="utf-8")
    code, out, _ = run(capsys, monkeypatch, "count", "--json", str(f), "-", stdin=text.encode())
    doc = json.loads(out)
    assert [x["path"] for x in doc["files"]] == [str(f), "-"]
    assert doc["totals"]["tokens"]["o200k_base"] == n_tokens(tok, text) + n_tokens(tok, "file\n")


def test_no_input_or_a_dash_twice_is_a_usage_error(tokscope):
    primary, secondary = os.openpty()  # standard input a terminal: nothing is piped in
    try:
        done = tokscope("count", stdin=secondary)
        assert done.returncode == 2 and b"no input" in done.stderr and done.stderr.count(b"\n") == 1
        done = tokscope("count", "-", stdin=secondary)
        assert done.returncode == 2 and b"nothing is piped in" in done.stderr
    finally:
        os.close(primary)
        os.close(secondary)
    done = tokscope("count", "-", "-", input=b"x")
    assert done.returncode == 2 and b"once" in done.stderr and done.stderr.count(b"\n") == 1


def test_binary_and_non_utf8_files_are_skipped_with_a_note_and_counted(capsys, monkeypatch, tree, load):
    png, latin = tree / "logo.png", tree / "latin1.txt"
    code, out, err = run(capsys, monkeypatch, "count", "--json", str(png), str(latin), str(tree / "a.txt"))
    assert code == 0  # skipped, not failed
    doc = json.loads(out)
    assert [s["reason"] for s in doc["skipped"]] == ["binary", "not-utf8"]
    assert all(s["error"] is False for s in doc["skipped"])
    assert doc["totals"]["skipped"] == 2 and doc["totals"]["files"] == 1
    lines = err.splitlines()
    assert any("logo.png: a binary file" in line and "skipped" in line for line in lines)
    assert any("latin1.txt: not UTF-8 (byte 0xe9 at offset 3)" in line for line in lines)
    assert lines[-1] == "tokscope: note: 2 skipped: 1 binary, 1 not UTF-8"
    # --errors replace counts the Latin-1 file with U+FFFD, never the binary
    code, out, _ = run(capsys, monkeypatch, "count", "--json", "--errors", "replace", str(png), str(latin))
    doc = json.loads(out)
    assert [s["reason"] for s in doc["skipped"]] == ["binary"]
    assert doc["files"][0]["replaced"] is True
    want = n_tokens(load("o200k_base"), latin.read_bytes().decode("utf-8", "replace"))
    assert doc["files"][0]["tokens"]["o200k_base"] == want


def test_max_tokens_gates_with_its_own_exit_code(tokscope, tree, load):
    tok = load("o200k_base")
    total = n_tokens(tok, (tree / "a.txt").read_text()) + n_tokens(tok, (tree / "b.md").read_text())
    args = ["count", str(tree / "a.txt"), str(tree / "b.md")]
    done = tokscope(*args, "--max-tokens", str(total))
    assert done.returncode == 0 and done.stderr == b""  # at the limit is within it
    done = tokscope(*args, "--max-tokens", str(total - 1))
    assert done.returncode == count.EXIT_OVER_LIMIT == 3
    assert done.stderr.decode() == f"tokscope: over the limit of {total - 1:,} tokens (--max-tokens): o200k_base {total:,}\n"
    assert done.stdout.decode().splitlines()[-1].split()[0] == str(total)  # the table is still printed
    # several encodings: each one over the limit is named, on one line
    gpt2 = n_tokens(load("gpt2"), (tree / "a.txt").read_text() + (tree / "b.md").read_text())
    done = tokscope(*args, "-e", "gpt2", "-e", "o200k_base", "--max-tokens", str(min(gpt2, total)), "--json")
    doc = json.loads(done.stdout)
    over = {k: v for k, v in {"gpt2": gpt2, "o200k_base": total}.items() if v > min(gpt2, total)}
    assert doc["max_tokens"] == min(gpt2, total) and doc["over"] == over and doc["exceeded"] == bool(over)
    assert done.returncode == (3 if over else 0)
    # an input that cannot be counted is exit code 1, even when a total is over the limit
    done = tokscope(*args, str(tree / "missing.txt"), "--max-tokens", "0")
    assert done.returncode == 1
    err = done.stderr.decode().splitlines()
    assert "tokscope: error: " in err[0] and "missing.txt: no such file or folder" in err[0]
    assert err[-1].startswith("tokscope: over the limit")


def test_json_shape(capsys, monkeypatch, tree, load):
    code, out, _ = run(capsys, monkeypatch, "count", "--json", "-e", "cl100k", "-e", "gpt2", "--max-tokens", "1000",
                       str(tree), str(tree / "nope"))
    assert code == 1
    doc = json.loads(out)
    assert set(doc) == {"encodings", "files", "skipped", "totals", "max_tokens", "exceeded", "over"}
    assert doc["encodings"] == ["cl100k", "gpt2"]
    a = doc["files"][0]
    assert set(a) == {"path", "bytes", "characters", "tokens", "replaced", "special_text"}
    text = (tree / "a.txt").read_text()
    assert a["bytes"] == len(text.encode()) and a["characters"] == len(text)
    assert a["tokens"] == {"cl100k": n_tokens(load("cl100k_base"), text), "gpt2": n_tokens(load("gpt2"), text)}
    missing = next(s for s in doc["skipped"] if s["reason"] == "missing")
    assert missing["error"] is True and set(missing) == {"path", "reason", "error", "message"}
    totals = doc["totals"]
    assert totals["files"] == len(doc["files"]) and totals["skipped"] == len(doc["skipped"]) and totals["errors"] == 1
    for name in ("cl100k", "gpt2"):
        assert totals["tokens"][name] == sum(f["tokens"][name] for f in doc["files"])
    assert totals["bytes"] == sum(f["bytes"] for f in doc["files"])
    assert doc["max_tokens"] == 1000 and doc["exceeded"] is False and doc["over"] == {}


def test_the_same_encoding_twice_is_counted_once(capsys, monkeypatch, tree):
    code, out, err = run(capsys, monkeypatch, "count", "-e", "o200k", "-e", "o200k_base", str(tree / "a.txt"))
    assert code == 0 and out.splitlines()[0].split() == ["o200k", "path"]
    assert "counting it once" in err


def test_a_hugging_face_tokenizer_json_is_a_column_too(capsys, monkeypatch, tmp_path, tree, load):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<eos>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    corpus = [p.read_text() for p in (tree / "a.txt", tree / "b.md", tree / "sub" / "c.txt")] * 20
    hf.train_from_iterator(corpus, trainer)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    code, out, _ = run(capsys, monkeypatch, "count", "--json", "-r", "-e", str(path), "-e", "gpt2", str(tree))
    assert code == 0
    doc = json.loads(out)
    for f in doc["files"]:
        text = Path(f["path"]).read_text(encoding="utf-8")
        assert f["tokens"][str(path)] == len(hf.encode(text, add_special_tokens=False).ids)
        assert f["tokens"]["gpt2"] == n_tokens(load("gpt2"), text)


def test_special_token_text_is_counted_as_text_with_a_note(capsys, monkeypatch, tmp_path, load):
    tok = load("o200k_base")
    f = tmp_path / "prompt.txt"
    text = "before <|endoftext|> after\n"
    f.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, "count", "--json", str(f))
    assert code == 0
    doc = json.loads(out)
    assert doc["files"][0]["tokens"]["o200k_base"] == n_tokens(tok, text)
    assert doc["files"][0]["special_text"] == "<|endoftext|>"
    assert err.count("\n") == 1 and "prompt.txt holds special-token text ('<|endoftext|>')" in err
    code, out, err = run(capsys, monkeypatch, "count", "--total", "--allow-special", "all", str(f))
    assert int(out) == len(tok.encode(text, allowed_special="all")) < n_tokens(tok, text) and err == ""
    code, out, err = run(capsys, monkeypatch, "count", "--total", "--special-as-text", str(f))
    assert int(out) == n_tokens(tok, text) and err == ""


def test_links_loops_fifos_and_the_same_file_twice(capsys, monkeypatch, tree):
    sub = tree / "sub"
    os.symlink("..", sub / "up")  # a loop: sub/up/sub/up/...
    os.symlink("nowhere.txt", tree / "broken.txt")
    os.symlink("a.txt", tree / "alias.txt")
    os.mkfifo(tree / "pipe")
    code, out, err = run(capsys, monkeypatch, "count", "--json", "-r", str(tree), str(tree / "a.txt"))
    assert code == 0
    doc = json.loads(out)
    reasons = {os.path.relpath(s["path"], tree): s["reason"] for s in doc["skipped"]}
    assert reasons["sub/up"] == "link-loop"
    assert reasons["broken.txt"] == "broken-link"
    assert reasons["pipe"] == "not-regular"  # never opened: a FIFO in a folder would block
    # a.txt is found three times (by name, through alias.txt, named again) and counted once
    assert [os.path.relpath(f["path"], tree) for f in doc["files"]].count("a.txt") + \
        [os.path.relpath(f["path"], tree) for f in doc["files"]].count("alias.txt") == 1
    assert reasons.get("alias.txt") == "seen" or reasons.get("a.txt") == "seen"
    for line in err.splitlines():
        assert line.startswith("tokscope: ") and "Traceback" not in line
    # a broken link named on the command line is an error
    code, _, err = run(capsys, monkeypatch, "count", str(tree / "broken.txt"))
    assert code == 1 and "a symbolic link to nothing" in err


def test_unreadable_files_and_folders_are_errors_one_line_each(capsys, monkeypatch, tree):
    real_open = open
    real_scandir = os.scandir

    def fake_open(path, *args, **kw):
        if str(path).endswith("b.md"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kw)

    def fake_scandir(path):
        if str(path).endswith("deeper"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(text_input, "open", fake_open, raising=False)
    monkeypatch.setattr(walk.os, "scandir", fake_scandir)
    code, out, err = run(capsys, monkeypatch, "count", "-r", str(tree))
    assert code == 1
    errors = [line for line in err.splitlines() if line.startswith("tokscope: error: ")]
    assert len(errors) == 2
    assert any("b.md: permission denied" in line for line in errors)
    assert any("deeper: permission denied" in line for line in errors)
    assert "a.txt" in out and "c.txt" in out  # the rest is counted


def test_too_large_is_an_error_and_the_rest_is_counted(capsys, monkeypatch, tree):
    code, out, err = run(capsys, monkeypatch, "count", "--json", "--max-bytes", "20", str(tree))
    assert code == 1
    doc = json.loads(out)
    assert [Path(f["path"]).name for f in doc["files"]] == ["a.txt"]
    big = next(s for s in doc["skipped"] if Path(s["path"]).name == "b.md")
    assert big["reason"] == "too-large" and big["error"] is True and "--max-bytes" in big["message"]


def test_hostile_file_names_print_nothing_that_acts(capsys, monkeypatch, tmp_path):
    folder = tmp_path / "h"
    folder.mkdir()
    names = ["esc\x1b[2J.txt", "nl\nname.txt", "bidi\u202etxt.md", "c1\x9b31m.txt"]
    for name in names:
        (folder / name).write_text("some text\n", encoding="utf-8")
    raw = os.fsencode(str(folder)) + b"/bad\xffbyte.txt"
    with open(raw, "wb") as handle:
        handle.write(b"more text\n")
    with open(os.fsencode(str(folder)) + b"/bin\x1b]52;c;x\x07.dat", "wb") as handle:
        handle.write(PNG)
    code, out, err = run(capsys, monkeypatch, "count", str(folder), str(folder / "gone\x1b[31m.txt"))
    assert code == 1
    assert FORBIDDEN.search(out.replace("\n", "")) is None and FORBIDDEN.search(err.replace("\n", "")) is None
    assert len(out.splitlines()) == 2 + 5  # header, five files, the total: one line each, newlines shown as ⏎
    assert "nl⏎name.txt" in out and "bad‹ff›byte.txt" in out and "esc␛[2J.txt" in out
    code, out, _ = run(capsys, monkeypatch, "count", "--json", str(folder))
    doc = json.loads(out)
    assert FORBIDDEN.search(out) is None  # escaped: \u001b, \u202e, \udcff
    paths = {os.fsencode(f["path"]) for f in doc["files"]}
    assert raw in paths  # the escapes parse back to the very name


def test_many_files_and_notes_are_capped(capsys, monkeypatch, tmp_path, load):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(300):
        (folder / f"f{i:03d}.txt").write_text(f"file number {i}\n", encoding="utf-8")
    for i in range(30):
        (folder / f"z{i:02d}.bin").write_bytes(PNG)
    code, out, err = run(capsys, monkeypatch, "count", "--total", str(folder))
    tok = load("o200k_base")
    assert code == 0 and int(out) == sum(n_tokens(tok, f"file number {i}\n") for i in range(300))
    lines = err.splitlines()
    assert len(lines) == count.MAX_LINES + 2
    assert lines[-2] == "tokscope: ... and 10 more lines like these (--json lists every file)"
    assert lines[-1] == "tokscope: note: 30 skipped: 30 binary"


def test_an_empty_folder_counts_nothing_and_says_so(capsys, monkeypatch, tmp_path):
    (tmp_path / "empty").mkdir()
    code, out, err = run(capsys, monkeypatch, "count", str(tmp_path / "empty"))
    assert code == 0 and out.splitlines()[-1].split()[:2] == ["0", "total"]
    assert "nothing to count" in err


# ----- worker processes ----------------------------------------------------------------------


def _corpus(folder: Path, n: int = 40, lines: int = 20000) -> dict[str, str]:
    folder.mkdir()
    texts = {}
    for i in range(n):
        body = "".join(f"Line {j} of file {i}: naïve café 日本語 👍 <|endoftext|> x = {i * j}\n" for j in range(60 + i))
        path = folder / f"f{i:02d}.txt"
        path.write_text(body, encoding="utf-8")
        texts[str(path)] = body
    big = "".join(f"big line {j}: the quick brown fox {j * j} 👩‍👩‍👧\n" for j in range(lines))
    (folder / "big.txt").write_text(big, encoding="utf-8")
    texts[str(folder / "big.txt")] = big
    return texts


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_workers_count_what_one_process_counts(capsys, monkeypatch, tmp_path, load, method):
    if method == "fork" and threading.active_count() > 1:
        pytest.skip("fork needs a process with one thread")
    texts = _corpus(tmp_path / "c")
    names = ["o200k_base", "gpt2"]
    want = {p: [n_tokens(load(n), t) for n in names] for p, t in texts.items()}
    # small thresholds, so this small corpus goes through the pool and the big file is cut in parts
    monkeypatch.setattr(count, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(count, "PARALLEL_BYTES_SPAWN", 0)
    monkeypatch.setattr(count, "SPLIT_BYTES", 100_000)
    monkeypatch.setattr(count, "PART_CHARS", 50_000)
    monkeypatch.setattr(count, "BATCH_FILES", 7)
    monkeypatch.setattr(count, "_start_method", lambda: method)
    code, out, _ = run(capsys, monkeypatch, "count", "--json", "-j", "2", "-e", "o200k_base", "-e", "gpt2",
                       str(tmp_path / "c"))
    assert code == 0
    doc = json.loads(out)
    got = {f["path"]: [f["tokens"][n] for n in names] for f in doc["files"]}
    assert got == want
    assert [f["path"] for f in doc["files"]] == sorted(want)  # in walk order, whatever order workers finish in
    assert all(f["special_text"] == "<|endoftext|>" for f in doc["files"] if "f0" in f["path"])


def test_a_real_child_with_workers_matches_one_process(tokscope, tmp_path):
    texts = _corpus(tmp_path / "c", n=60, lines=50000)  # standard input and big.txt over SPLIT_BYTES
    (tmp_path / "c" / "bin.dat").write_bytes(PNG * 100)
    stdin = "".join(texts.values()).encode()
    results = []
    for jobs in ("1", "2"):
        done = tokscope("count", "--json", "-j", jobs, "--special-as-text", str(tmp_path / "c"), "-", input=stdin)
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        results.append(doc)
    assert results[0] == results[1]
    doc = results[0]
    assert doc["files"][-1]["path"] == "-" and doc["files"][-1]["bytes"] == len(stdin)
    # the files joined (each ends in a line break) count what they count apart
    assert doc["files"][-1]["tokens"]["o200k_base"] == sum(f["tokens"]["o200k_base"] for f in doc["files"][:-1])
    assert [s["reason"] for s in doc["skipped"]] == ["binary"]


def test_ctrl_c_stops_the_workers_with_one_line(cli_env, tmp_path):
    import signal
    import subprocess
    import time

    folder = tmp_path / "c"
    folder.mkdir()
    body = "".join(f"line {j}: words and more words {j}\n" for j in range(200_000))
    for i in range(4):
        (folder / f"f{i}.txt").write_text(body.replace("words", f"w{i}"), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "tokscope.cli", "count", "-j", "2", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=Path(__file__).resolve().parents[2],
                            start_new_session=True, env=cli_env)
    time.sleep(1.5)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal sends it: to the whole group
    out, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the count finished before the signal")
    assert proc.returncode == 130
    assert err.decode().strip() == "tokscope: interrupted"


# ----- the progress bar -------------------------------------------------------------------------


def test_no_progress_bar_unless_standard_error_is_a_terminal(capsys, monkeypatch, tree):
    code, _, err = run(capsys, monkeypatch, "count", str(tree / "a.txt"))
    assert "\r" not in err and "counting [" not in err
    monkeypatch.setattr(common, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(count, "PROGRESS_DELAY", 0.0)
    code, out, err = run(capsys, monkeypatch, "count", "-r", "--json", str(tree))
    assert code == 0 and json.loads(out)  # standard output holds the result alone
    assert "\rcounting [" in err and "6/6 files" in err
    bar, _, notes = err.rpartition("\r" + " " * common.ProgressBar.WIDTH + "\r")  # drawn, then erased
    assert bar and "\n" not in bar and notes.startswith("tokscope: ")


def test_the_progress_bar_waits_before_it_draws():
    stream = io.StringIO()
    bar = common.ProgressBar(stream, "counting", delay=60)
    bar.draw(0.5, "x", final=True)
    bar.close()
    assert stream.getvalue() == ""


def test_a_file_the_tokenizer_fails_on_is_an_error_and_the_rest_is_counted(capsys, monkeypatch, tree):
    from tokscope.core.text.errors import TokscopeError

    real = count._count_text

    def failing(text, which):
        if "markdown" in text:
            raise TokscopeError("the pattern ran out of its time budget")
        return real(text, which)

    monkeypatch.setattr(count, "_count_text", failing)
    code, out, err = run(capsys, monkeypatch, "count", "--json", str(tree / "a.txt"), str(tree / "b.md"))
    assert code == 1
    doc = json.loads(out)
    assert [Path(f["path"]).name for f in doc["files"]] == ["a.txt"]
    assert doc["skipped"][0]["reason"] == "failed" and doc["skipped"][0]["error"] is True
    assert "b.md: the pattern ran out of its time budget" in err
