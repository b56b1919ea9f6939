"""Bad input a user can type or a hostile file can hold gets a one-line error that says what is
wrong, with the right exit code, never "internal error ... please report it" (issue 21, items 16-21)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tokscope.cli import main

NINES_5000 = "9" * 5000
NINES_4000 = "9" * 4000


def run(capsys, *argv):
    """``tokscope ARGV`` in this process: (exit code, standard output, standard error)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(result, code: int, *words: str) -> str:
    err = result.stderr.decode() if isinstance(result.stderr, bytes) else result.stderr
    assert result.returncode == code, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return err


# ----- item 16: huge numbers and deeply nested templates ------------------------------------------


def test_decode_of_an_id_with_5000_digits_is_an_unknown_id(tokscope):
    err = _one_line_error(tokscope("decode", NINES_5000), 1, "unknown token id", "5,000 digits")
    assert len(err) < 200  # the digits are not spelled out


def test_train_sweep_of_a_size_with_5000_digits_is_too_large(tokscope, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 10)
    _one_line_error(tokscope("train", "--vocab-size", "300", "--sweep", NINES_5000, str(corpus)), 2,
                    "--sweep", "too large")
    _one_line_error(tokscope("train", "--vocab-size", NINES_5000, str(corpus)), 2, "--vocab-size", "too large")


@pytest.mark.parametrize("option", ["--width", "--top"])
def test_stats_with_a_number_of_4000_digits_says_which_option(tokscope, option):
    err = _one_line_error(tokscope("stats", option, NINES_4000, "hello"), 2, option, "4,000 digits")
    assert len(err) < 200


@pytest.mark.parametrize("template", [
    "{% for a in messages %}" * 25 + "x" + "{% endfor %}" * 25,
    "{% if messages %}" * 200 + "x" + "{% endif %}" * 200,
], ids=["25 for", "200 if"])
def test_a_chat_template_nested_too_deeply_is_named(tokscope, tmp_path, template):
    conversation = tmp_path / "conv.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    jinja = tmp_path / "deep.jinja"
    jinja.write_text(template)
    _one_line_error(tokscope("chat", "-f", str(conversation), "--template", str(jinja)), 1,
                    "too deeply")


# ----- item 17: chat -f on odd JSON is an input error (exit 1); a --save race loser exits as a
# ----- name taken before the run would ----------------------------------------------------------

HI = '[{"role": "user", "content": "hi"}]'


@pytest.mark.parametrize(("content", "words"), [
    (HI + " trailing", ("not valid JSON", "more after the value", "line 1")),
    ('[{"role": "user", "content": "hi", "n": ' + "9" * 5000 + "}]", ("number of 5,000 digits",)),
    ("[" * 100_000 + "]" * 100_000, ("nests too deeply",)),
    ('"hello"', ("is a JSON string", "not a list of messages")),
    ("3", ("is a JSON number",)),
    ("[1,", ("not valid JSON", "line 1, column 4")),
], ids=["trailing data", "huge int", "deep nesting", "a string", "a number", "cut short"])
def test_chat_file_that_is_not_a_conversation_exits_1(tokscope, tmp_path, content, words):
    path = tmp_path / "c.json"
    path.write_text(content, encoding="utf-8")
    result = tokscope("chat", "-f", str(path))
    _one_line_error(result, 1, str(path), *words)
    assert result.stdout == b""


def test_chat_file_with_a_byte_order_mark_is_read(tokscope, tmp_path):
    path = tmp_path / "c.json"
    path.write_bytes(b"\xef\xbb\xbf" + HI.encode())
    plain = tmp_path / "plain.json"
    plain.write_text(HI)
    result = tokscope("chat", "-f", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ids"] == json.loads(tokscope("chat", "-f", str(plain), "--json").stdout)["ids"]


def test_a_save_race_loser_exits_as_a_name_taken_before_the_run(tmp_path, monkeypatch, capsys):
    """The loser of two runs saving one new name (the other saves it between the check and the
    write) exits 2 with the same words as a run started after the name was taken."""
    from tokscope.core.train import trainer
    from tokscope.sources import registry, saved

    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path / "data"))
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world, hello there " * 20)
    real_train = trainer.train

    def train_while_another_saves(*args, **kwargs):
        result = real_train(*args, **kwargs)
        from tokscope.core.formats import saved as serialize

        saved.save_named(serialize.from_result(result, "race"), "race", registry.saved_dir())
        return result

    monkeypatch.setattr(trainer, "train", train_while_another_saves)
    late = run(capsys, "train", str(corpus), "--merges", "5", "--save", "--name", "race")
    monkeypatch.setattr(trainer, "train", real_train)
    early = run(capsys, "train", str(corpus), "--merges", "5", "--save", "--name", "race")
    assert late[0] == early[0] == 2
    assert "already exists" in late[2] and late[2].count("\n") == 1
    assert late[2] == early[2]


# ----- item 18: a reader that goes away does not swallow the gate's verdict ------------------------


@pytest.mark.parametrize(("limit", "code"), [("1", 3), ("100000", 0)])
def test_count_over_the_limit_exits_3_when_the_reader_goes_away(tmp_path, cli_env, limit, code):
    import subprocess
    import sys

    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(1500):  # JSON of more than a pipe's 64 KB, so the writer meets the closed pipe
        (folder / f"file_with_a_rather_long_name_number_{i:05d}.txt").write_text("hello")
    proc = subprocess.Popen([sys.executable, "-m", "tokscope.cli", "count", "--max-tokens", limit, "--json",
                             str(folder)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env)
    assert proc.stdout.read(10) == b'{"encoding'
    proc.stdout.close()  # as `| head -c 10` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == code, err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert ("over the limit of 1 tokens" in err) == (code == 3)


# ----- item 19 (and 21's name with a space): names -e would take for something else are refused ---

PROSE_LINE = "the museum opened its doors to the public, and the public came in numbers. "


@pytest.mark.parametrize(("name", "words"), [
    ("llama3", ("open model llama3", "Llama 3")),
    ("Qwen", ("open model qwen",)),
    ("tekken", ("open model tekken",)),
    ("o200k", ("built-in encoding o200k_base",)),
    ("my bpe", ("no spaces",)),
    ("tab\there", ("control",)),
])
def test_train_save_refuses_a_name_another_tokenizer_takes(tmp_path, capsys, monkeypatch, name, words):
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path / "data"))
    corpus = tmp_path / "c.txt"
    corpus.write_text(PROSE_LINE * 5)
    code, out, err = run(capsys, "train", str(corpus), "--merges", "3", "--save", "--name", name)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    for word in words:
        assert word in err
    assert not (tmp_path / "data" / "tokenizers").exists() or not any((tmp_path / "data" / "tokenizers").iterdir())


def test_a_saved_file_named_like_an_open_model_is_listed_as_unusable(tmp_path, capsys, monkeypatch):
    """A file saved as llama3.json by an earlier version: -e llama3 loads Meta's Llama 3, so the
    listing (the CLI's and the explorer's F2) says so instead of offering it under that name."""
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path / "data"))
    corpus = tmp_path / "c.txt"
    corpus.write_text(PROSE_LINE * 5)
    assert run(capsys, "train", str(corpus), "--merges", "3", "--save", "--name", "mine")[0] == 0
    folder = tmp_path / "data" / "tokenizers"
    (folder / "mine.json").rename(folder / "llama3.json")
    from tokscope.sources import registry

    registry.forget()
    code, out, err = run(capsys, "encodings", "--json")
    assert code == 0, err
    entry = next(e for e in json.loads(out)["encodings"] if e["name"] == "llama3.json")
    assert not entry["available"] and "open model llama3" in entry["detail"], entry


# ----- item 21: the small things -----------------------------------------------------------------


@pytest.mark.parametrize("how", ["loop", "pair", "dangling"])
def test_a_symbolic_link_that_leads_nowhere_is_named_as_such_not_as_an_unknown_encoding(tokscope, tmp_path, how):
    import os

    link = tmp_path / "tok.json"
    if how == "loop":
        os.symlink(link, link)
    elif how == "pair":
        os.symlink(tmp_path / "other.json", link)
        os.symlink(link, tmp_path / "other.json")
    else:
        os.symlink(tmp_path / "gone.json", link)
    err = _one_line_error(tokscope("encode", "-e", str(link), "hi"), 1, str(link))
    assert "unknown encoding" not in err
    assert ("a symbolic link to nothing" if how == "dangling" else "a symbolic link that loops") in err


def test_count_names_a_looping_link_in_a_folder(tokscope, tmp_path):
    import os

    (tmp_path / "a.txt").write_text("hello")
    os.symlink(tmp_path / "loop.txt", tmp_path / "loop.txt")
    result = tokscope("count", str(tmp_path))
    assert result.returncode == 1
    assert b"loop.txt: a symbolic link that loops" in result.stderr and b"Traceback" not in result.stderr


@pytest.mark.parametrize("value", ["-1", "0", "x", "9" * 5000])
def test_count_jobs_that_are_not_a_number_of_workers(tokscope, value):
    err = _one_line_error(tokscope("count", "-j", value, "x"), 2, "-j/--jobs", "worker processes")
    assert "tokens" not in err


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["encode", "--help"], ["count", "--help"]])
def test_help_that_cannot_be_written_exits_1(tokscope, argv):
    with open("/dev/full", "wb") as full:
        result = tokscope(*argv, stdout=full, stderr=subprocess.PIPE)
    _one_line_error(result, 1, "cannot write the output")


def test_help_into_a_pipe_that_closes_exits_0(cli_env):
    proc = subprocess.Popen([sys.executable, "-m", "tokscope.cli", "--help"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=cli_env)
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0 and proc.stderr.read() == b""


@pytest.mark.parametrize("command", ["encode", "stats", "truncate --max-tokens 1", "explain"])
def test_max_bytes_holds_for_a_text_argument_as_for_a_file(tokscope, tmp_path, command):
    words = command.split()
    err = _one_line_error(tokscope(*words, "--max-bytes", "4", "hello"), 1, "TEXT is 5 bytes", "4-byte limit")
    path = tmp_path / "hello.txt"
    path.write_text("hello")
    _one_line_error(tokscope(*words, "--max-bytes", "4", "-f", str(path)), 1, "5 bytes", "4-byte limit")
    assert tokscope(*words, "--max-bytes", "5", "hello").returncode == 0, err


# ----- item 9 (Medium): a worker that dies is an error naming its file; the count goes on ----------


def _children(pid: int) -> list[int]:
    import os

    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _cpu_ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the workers in /proc")
def test_count_names_the_file_of_a_worker_killed_with_sigkill_and_counts_the_rest(tmp_path, cli_env):
    import os
    import random
    import signal
    import time

    rng = random.Random(1)
    words = ["token", "museum", "the", "of", "naïve", "日本語", "count", "42", "and", "a"]
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i in range(4):  # under the size at which count cuts a file into parts: one file per batch
        (folder / f"f{i}.txt").write_text(" ".join(rng.choice(words) for _ in range(330_000))[:1_900_000])
    proc = subprocess.Popen([sys.executable, "-m", "tokscope.cli", "count", "-j", "2", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env)
    victim = None
    deadline = time.monotonic() + 60
    while victim is None and time.monotonic() < deadline and proc.poll() is None:
        busy = [c for c in _children(proc.pid) if _cpu_ticks(c) >= 5]  # counting a file by now
        victim = busy[0] if busy else None
        time.sleep(0.01)
    assert victim is not None, "no worker was seen counting"
    os.kill(victim, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    out, err = out.decode(), err.decode()
    assert proc.returncode == 1, err
    died = [line for line in err.splitlines() if "a worker process died while counting it (killed by SIGKILL)" in line]
    assert len(died) == 1 and any(f"f{i}.txt" in died[0] for i in range(4)), err
    dead_file = next(f"f{i}.txt" for i in range(4) if f"f{i}.txt" in died[0])
    counted = [line for line in out.splitlines() if line.rstrip().endswith(".txt")]
    assert len(counted) == 3 and all(dead_file not in line for line in counted), out
    assert "total (3 files)" in out and "Traceback" not in err


# ----- item 14 (Medium): a rank file with one long token is read in linear time ------------------


def _rank_file(path, tokens: list[bytes]) -> None:
    import base64

    lines = [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(256)]
    lines += [f"{base64.b64encode(t).decode()} {256 + k}" for k, t in enumerate(tokens)]
    path.write_text("\n".join(lines) + "\n")


def test_import_of_one_long_token_that_is_not_two_tokens_is_a_short_error(tokscope, tmp_path):
    ranks = tmp_path / "long.tiktoken"
    _rank_file(ranks, [b"a" * 1_000_000])  # the probe's file: 1 MB in one token (minutes before)
    err = _one_line_error(tokscope("import", str(ranks), "--pattern", "gpt2", "-o", str(tmp_path / "t.json")), 1,
                          "rank 256", "1,000,000 bytes", "is not two lower-ranked tokens joined")
    assert len(err) < 300  # the token's hex is cut short


def test_import_of_long_tokens_made_by_doubling_encodes_as_the_ranks_say(tokscope, tmp_path):
    ranks = tmp_path / "doubling.tiktoken"
    _rank_file(ranks, [b"a" * 2**k for k in range(1, 15)] + [b"b" + b"a" * 2])  # up to 16 KB
    out = tmp_path / "t.json"
    assert tokscope("import", str(ranks), "--pattern", "none", "-o", str(out)).returncode == 0
    result = tokscope("encode", "-e", str(out), "a" * 2**14 + "baa")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(256 + 13).encode(), str(256 + 14).encode()]
