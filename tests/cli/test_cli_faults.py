"""Issue 14 outside the explorer, as a user meets it: full and closed streams, signals, limits on
every input, outputs that must not clobber anything, names and the data folder checked before the
work, concurrent saves, and the small things (strict base64, ASCII ids, a command that does not
exist). Most run the real command in a child process."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from tokscope.cli import main
from tokscope.core.formats import saved as serialize
from tokscope.sample_texts import samples_dir
from tokscope.sources import registry, saved

PROSE = str(samples_dir() / "prose.txt")


def one_line_error(err: bytes | str) -> str:
    text = err.decode("utf-8", "replace") if isinstance(err, bytes) else err
    assert "Traceback" not in text, text
    assert text.count("\n") == 1, text
    return text


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(folder))
    yield folder
    registry.forget()


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# ----- Medium 5: output errors ----------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["encode", "hi"], ["encode", "--json", "hi"], ["decode", "-e", "gpt2", "31373"],
                                  ["explain", "-e", "gpt2", "hi"], ["stats", "hi"], ["encodings"],
                                  ["count", "README.md"], ["count", "--json", "README.md"],
                                  ["truncate", "--max-tokens", "1", "hi"]])
def test_a_full_disk_on_standard_output_is_one_line_and_exit_1(tokscope, argv):
    with open("/dev/full", "wb") as full:
        done = tokscope(*argv, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 1
    assert "No space left on device" in one_line_error(done.stderr)


@pytest.mark.parametrize("argv", [["encode", "hi"], ["encode", "--json", "hi"], ["decode", "-e", "gpt2", "31373"],
                                  ["explain", "-e", "gpt2", "hi"], ["stats", "hi"], ["count", "README.md"],
                                  ["truncate", "--max-tokens", "1", "hi"]])
def test_a_closed_standard_output_is_one_line_and_exit_1(tokscope, cli_env, argv):
    done = subprocess.run([sys.executable, "-c", "import os, subprocess, sys; os.close(1); "
                           "sys.exit(subprocess.call(sys.argv[1:]))", sys.executable, "-m", "tokscope.cli", *argv],
                          stderr=subprocess.PIPE, env=cli_env, timeout=120)
    assert done.returncode == 1
    assert "standard output is closed" in one_line_error(done.stderr)


def test_a_reader_that_goes_away_is_not_an_error(cli_env, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text(open(PROSE, encoding="utf-8").read() * 50, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "tokscope.cli", "encode", "-f", str(big)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=cli_env)
    proc.stdout.read(10)
    proc.stdout.close()  # as `| head -c 10` does
    proc.wait(timeout=120)
    assert proc.returncode == 0 and proc.stderr.read() == b""


# ----- signals: a real child process ------------------------------------------------------------


def test_sigterm_while_saving_leaves_the_old_file_and_no_temporary(tmp_path, cli_env):
    """SIGTERM arrives in the middle of an atomic write (between the data and the rename): the
    command stops with 128+15 and one line, the old file is intact, no temporary file is left."""
    target = tmp_path / "out.tiktoken"
    target.write_bytes(b"the old contents\n")
    script = (
        "import os, signal, sys\n"
        "from tokscope import cli\n"
        "real = os.fsync\n"
        "def fsync(fd):\n"
        "    real(fd)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "os.fsync = fsync\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, "export", "-e", "gpt2", "-o", str(target), "--force"],
                          capture_output=True, env=cli_env, timeout=120)
    assert done.returncode == 128 + signal.SIGTERM
    assert "stopped by SIGTERM" in one_line_error(done.stderr)
    assert target.read_bytes() == b"the old contents\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "data") == ["out.tiktoken"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_training_stops_it_cleanly(tmp_path, cli_env, signum):
    import random

    rng = random.Random(0)  # 300,000 random words: training to 200,000 merges takes half a minute
    corpus = tmp_path / "big.txt"
    corpus.write_text(" ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
                               for _ in range(300_000)))
    proc = subprocess.Popen([sys.executable, "-m", "tokscope.cli", "train", str(corpus), "--merges", "200000",
                             "--min-frequency", "1", "--save", "--name", "sig"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=cli_env)
    time.sleep(3)
    assert proc.poll() is None, "the run ended before the signal"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum
    assert f"stopped by {signal.Signals(signum).name}" in one_line_error(err)
    folder = tmp_path / "data" / "tokenizers"
    assert not folder.exists() or list(folder.iterdir()) == []


# ----- Medium 3 and 4: the input limit --------------------------------------------------------------


def test_max_bytes_holds_on_a_pipe(tokscope):
    done = tokscope("encode", "-f", "/dev/stdin", "--max-bytes", "100", input=b"\0" * 1000)
    assert done.returncode == 1 and "over the 100-byte limit" in one_line_error(done.stderr)
    assert done.stdout == b""
    done = tokscope("encode", "--max-bytes", "100", input=b"a" * 101)
    assert done.returncode == 1 and "over the 100-byte limit" in one_line_error(done.stderr)
    done = tokscope("encode", "--max-bytes", "100", input=b"a" * 100)
    assert done.returncode == 0


def test_max_bytes_holds_on_a_fifo_and_a_proc_file(tmp_path, tokscope, cli_env):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "tokscope.cli", "encode", "-f", str(fifo), "--max-bytes", "100"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env)
    with open(fifo, "wb") as writer:
        try:
            writer.write(b"x" * 5000)
        except BrokenPipeError:
            pass
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "over the 100-byte limit" in one_line_error(err) and out == b""
    done = tokscope("encode", "-f", "/proc/self/maps", "--max-bytes", "10")
    assert done.returncode == 1 and "over the 10-byte limit" in one_line_error(done.stderr)


def test_a_file_that_grows_is_cut_at_the_limit(tmp_path):
    from tokscope.inputs.text_input import InputError, read_file_bytes

    path = tmp_path / "growing.txt"
    path.write_bytes(b"a" * 10)
    real_fstat = os.fstat  # the file grows after its size was taken, as a log being written does

    def fstat_then_grow(fd):
        info = real_fstat(fd)
        with open(path, "ab") as more:
            more.write(b"b" * 1000)
        return info

    os.fstat = fstat_then_grow
    try:
        with pytest.raises(InputError, match="over the 100-byte limit") as info:
            read_file_bytes(str(path), 100)
    finally:
        os.fstat = real_fstat
    assert info.value.kind == "too-large" and len(info.value.data) == 101


@pytest.mark.parametrize("value", [str(10**12), str(10**30)])
def test_a_huge_max_bytes_reads_a_small_file(tmp_path, capsys, value):
    path = tmp_path / "small.txt"
    path.write_text("twelve bytes")
    code, out, err = run(capsys, "encode", "-f", str(path), "--max-bytes", value)
    assert code == 0 and out.strip() and err == ""


@pytest.mark.parametrize("value, message", [("-1", "0 or more"), ("x", "whole number"), ("1.5", "whole number")])
def test_a_bad_max_bytes_is_a_usage_error(capsys, value, message):
    code, out, err = run(capsys, "encode", "hi", "--max-bytes", value)
    assert code == 2 and message in one_line_error(err)


# ----- the typed input error the explorer's dialog catches ------------------------------------------


def test_input_error_carries_what_a_dialog_needs(tmp_path):
    from tokscope.inputs.text_input import InputError, read_input

    big = tmp_path / "big.txt"
    big.write_bytes("é".encode() * 100)
    with pytest.raises(InputError) as info:
        read_input(str(big), limit=51)
    exc = info.value
    assert (exc.kind, exc.path, exc.limit, exc.size, exc.can_head) == ("too-large", str(big), 51, 200, True)
    head = exc.accept(head=True)
    assert head.text == "é" * 25 and head.head and head.path == str(big)

    binary = tmp_path / "bin.dat"
    binary.write_bytes(b"ab\x00\xff\xfe")
    with pytest.raises(InputError) as info:
        read_input(str(binary))
    exc = info.value
    assert (exc.kind, exc.offset, exc.byte, exc.can_replace) == ("binary", 3, 0xFF, True)
    assert exc.accept(errors="replace").text == "ab\x00\ufffd\ufffd"
    with pytest.raises(InputError) as info:
        read_input(str(tmp_path / "missing.txt"))
    assert info.value.kind == "missing" and not info.value.can_head and not info.value.can_replace

    # standard input cannot be read twice: the error holds what was read
    import io

    with pytest.raises(InputError) as info:
        read_input(None, limit=4, stdin=io.BytesIO("ab€cd".encode()))
    assert info.value.kind == "too-large" and info.value.accept(head=True).text == "ab"


# ----- Medium 6: names that are not UTF-8, checked before training ----------------------------------


@pytest.mark.parametrize("argv, message", [
    (["--name", b"\xff".decode("utf-8", "surrogateescape")], "not valid UTF-8"),
    (["--special", b"\xff".decode("utf-8", "surrogateescape")], "not valid UTF-8"),
    (["--name", "clip\x1b]52;c;aGk=\x07", "--save"], "control"),
])
def test_bad_names_are_refused_before_training(capsys, argv, message, monkeypatch):
    from tokscope.core.train import trainer

    monkeypatch.setattr(trainer, "train", lambda *a, **k: pytest.fail("trained although the name is bad"))
    code, out, err = run(capsys, "train", PROSE, "--merges", "5", *argv)
    assert code == 2 and message in one_line_error(err) and out == ""
    assert "\x1b" not in err and "\x07" not in err


def test_a_corpus_named_with_bytes_that_are_not_utf8(tmp_path, tokscope):
    name = os.fsdecode(b"n\xffame.txt")
    corpus = tmp_path / name
    corpus.write_text("low lower lowest " * 20)
    done = tokscope("train", str(corpus), "--merges", "5", "--save")
    assert done.returncode == 2 and b"give one with --name" in done.stderr
    assert "‹ff›".encode() in done.stderr  # the byte, shown as a byte
    one_line_error(done.stderr)
    out = tmp_path / "out.json"
    done = tokscope("train", str(corpus), "--merges", "5", "--name", "fine", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert serialize.load(out).metadata["files"] == [str(tmp_path / "n\ufffdame.txt")]
    done = tokscope("train", str(corpus), "--merges", "5", "--name", "fine", "--json", "-o", str(tmp_path / "o2.json"))
    assert done.returncode == 0 and json.loads(done.stdout)["name"] == "fine"


def test_a_strict_ascii_standard_output_is_one_line(tokscope, cli_env):
    env = dict(cli_env, PYTHONIOENCODING="ascii:strict")
    done = tokscope("encode", "--json", "héllo", env=env)
    assert done.returncode == 1 and "PYTHONIOENCODING" in one_line_error(done.stderr)


# ----- Medium 7: -o never clobbers ---------------------------------------------------------------------


def test_o_refuses_to_overwrite_an_input(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest " * 10)
    before = corpus.read_bytes()
    for force in ([], ["--force"]):
        code, out, err = run(capsys, "train", str(corpus), "--merges", "3", "-o", str(corpus), *force)
        assert code == 1 and "it is the input" in one_line_error(err)
    link = tmp_path / "link.json"
    link.symlink_to(corpus)
    code, out, err = run(capsys, "train", str(corpus), "--merges", "3", "-o", str(link), "--force")
    assert code == 1 and "it is the input" in err
    assert corpus.read_bytes() == before

    ranks = tmp_path / "x.tiktoken"
    run(capsys, "export", "-e", "gpt2", "-o", str(ranks))
    code, out, err = run(capsys, "import", str(ranks), "--pattern", "gpt2", "-o", str(ranks), "--force")
    assert code == 1 and "it is the input" in one_line_error(err)


def test_o_needs_force_to_replace_and_keeps_mode_and_links(tmp_path, capsys):
    out_path = tmp_path / "mine.json"
    out_path.write_text("precious")
    code, out, err = run(capsys, "train", PROSE, "--merges", "3", "-o", str(out_path))
    assert code == 1 and "--force" in one_line_error(err) and out_path.read_text() == "precious"
    os.chmod(out_path, 0o640)
    code, out, err = run(capsys, "train", PROSE, "--merges", "3", "-o", str(out_path), "--force")
    assert code == 0, err
    assert serialize.load(out_path).vocab_size == 259 and stat.S_IMODE(out_path.stat().st_mode) == 0o640
    # through a symbolic link: the target is replaced, the link stays a link
    real = tmp_path / "real.tiktoken"
    real.write_text("old")
    link = tmp_path / "link.tiktoken"
    link.symlink_to(real)
    code, out, err = run(capsys, "export", "-e", "gpt2", "-o", str(link), "--force")
    assert code == 0, err
    assert link.is_symlink() and real.stat().st_size > 100_000


def test_new_files_get_the_mode_a_plain_write_gives(tmp_path, capsys):
    old = os.umask(0o022)
    try:
        out_path = tmp_path / "new.json"
        code, _, err = run(capsys, "train", PROSE, "--merges", "3", "-o", str(out_path), "--save", "--name", "modes")
        assert code == 0, err
        saved_path = tmp_path / "data" / "tokenizers" / "modes.json"
        for path in (out_path, saved_path):
            assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    finally:
        os.umask(old)


@pytest.mark.parametrize("target", ["/dev/null", "{d}", "{d}/fifo"])
def test_o_refuses_targets_that_are_not_regular_files(tmp_path, capsys, target):
    os.mkfifo(tmp_path / "fifo")
    code, out, err = run(capsys, "train", PROSE, "--merges", "3", "-o", target.replace("{d}", str(tmp_path)), "--force")
    assert code == 1 and ("not a regular file" in err or "is a directory" in err)
    one_line_error(err)


# ----- Medium 8 and High 3: --save is checked first and creates exclusively -------------------------------


def test_an_unusable_data_folder_is_reported_before_training(tmp_path, capsys, monkeypatch):
    from tokscope.core.train import trainer

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(blocker / "data"))
    monkeypatch.setattr(trainer, "train", lambda *a, **k: pytest.fail("trained although the save must fail"))
    code, out, err = run(capsys, "train", PROSE, "--merges", "5", "--save", "--name", "never")
    assert code == 1 and "cannot create" in one_line_error(err)


@pytest.mark.parametrize("name", ["gpt2", "O200K_base", "cl100k", "harmony"])
def test_names_of_built_in_encodings_are_refused(capsys, name):
    code, out, err = run(capsys, "train", PROSE, "--merges", "3", "--save", "--name", name)
    assert code == 2 and "built-in encoding" in one_line_error(err)


def test_two_concurrent_saves_of_one_name_never_both_succeed(tmp_path, cli_env):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(open(PROSE, encoding="utf-8").read() * 3, encoding="utf-8")
    argv = [sys.executable, "-m", "tokscope.cli", "train", str(corpus), "--merges", "300", "--save", "--name", "conc"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env) for _ in range(2)]
    results = [(p.wait(timeout=180), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes[0] == 0 and codes[1] in (1, 2), results
    loser = next(err for code, err in results if code)
    assert b"already exists" in loser
    assert sorted(p.name for p in (tmp_path / "data" / "tokenizers").iterdir()) == ["conc.json"]


def test_save_named_is_exclusive(tmp_path):
    from tokscope.core.train.trainer import train

    tok = serialize.from_result(train("ab ab ab", merges=1, min_frequency=1), "x")
    folder = tmp_path / "folder"
    first = saved.save_named(tok, "x", folder)
    from tokscope.sources.errors import SourceError

    with pytest.raises(SourceError, match="already exists"):
        saved.save_named(tok, "x", folder)
    assert saved.save_named(tok, "x", folder, overwrite=True) == first


def test_a_listing_never_stops_on_odd_names(tmp_path, capsys, data_dir):
    folder = data_dir / "tokenizers"
    folder.mkdir(parents=True)
    from tokscope.core.train.trainer import train

    good = serialize.dumps(serialize.from_result(train("ab ab ab", merges=1, min_frequency=1), "fine"))
    for name in [b"gpt2.json", b"n\xffame.json", b"esc\x1b[31m.json", b"rlo\xe2\x80\xae.json", b"deep.json"]:
        (folder / os.fsdecode(name)).write_bytes(good if name != b"deep.json" else b"[" * 100_000)
    code, out, err = run(capsys, "encodings")
    assert code == 0 and err == ""
    assert "\x1b" not in out and "\u202e" not in out and "\udcff" not in out
    assert "n‹ff›ame" in out and "esc␛[31m" in out and "rlo⟨RLO⟩" in out
    assert "gpt2.json" in out and "named like the built-in" in out and "nested too deeply" in out
    names = [e["name"] for e in json.loads(run(capsys, "encodings", "--json")[1])["encodings"]]
    assert len(names) == len(set(names))  # a picker can use them as ids


# ----- Low ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("line", [b"Y*W*I= 256\n", b"!!!! 256\n", b"YWI 256\n", b"YWI= 2_56\n"])
def test_tiktoken_import_decodes_base64_strictly(tmp_path, capsys, line):
    ranks = tmp_path / "r.tiktoken"
    run(capsys, "export", "-e", "gpt2", "-o", str(ranks))
    ranks.write_bytes(b"".join(ranks.read_bytes().splitlines(keepends=True)[:256]) + line)
    code, out, err = run(capsys, "import", str(ranks), "--pattern", "gpt2", "-o", str(tmp_path / "x.json"))
    assert code == 1 and "line 257" in one_line_error(err)


def test_a_wrong_sha256_in_the_tiktoken_cache_is_not_available(tmp_path, monkeypatch, capsys):
    from tokscope.sources import builtin
    from tokscope.sources import tiktoken_adapter as tk

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tt"))
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "ours"))
    (tmp_path / "tt").mkdir()
    file = tk.encoding_spec("cl100k_base").files[0]
    tk.tiktoken_cache_path(file.url).write_bytes(b"IQ== 0\n")
    monkeypatch.setattr(builtin, "_carrier_path", lambda basename: None)
    origin = builtin.origin("cl100k_base")
    assert not origin.available and "wrong sha256" in origin.detail
    with pytest.raises(builtin.SourceError, match="wrong sha256"):
        builtin.load_ranks("cl100k_base")


def test_compare_json_has_no_infinity(capsys):
    code, out, err = run(capsys, "compare", "hi", "--price-in", "1e308", "--json")
    assert code == 2 and "at most" in one_line_error(err)
    code, out, err = run(capsys, "compare", "hi", "--price-in", "1e9", "--copies", "1000000000000", "--json")
    assert code == 0, err
    assert "Infinity" not in out and json.loads(out)["cost"]["encodings"][0]["input_total"] > 0


def test_tree_text_that_is_not_utf8(capsys):
    code, out, err = run(capsys, "tree", "-e", "gpt2", "--text", b"\xff".decode("utf-8", "surrogateescape"))
    assert code == 1 and "not valid UTF-8" in one_line_error(err) and "tokens" not in err
    code, out, err = run(capsys, "tree", "-e", "gpt2", "--text", "hello world")
    assert "encodes to 2 tokens" in err
    code, out, err = run(capsys, "tree", "-e", "gpt2", "--hex", "68656c6c6f20")
    assert code == 1 and "2 tokens" in err


@pytest.mark.parametrize("ids", ["١٢٣", "1_0", "-1", "12a"])
def test_decode_takes_ascii_digits_only(capsys, ids):
    code, out, err = run(capsys, "decode", "-e", "gpt2", ids)
    assert code == 2 and "not a token id" in one_line_error(err)


def test_decode_writes_exact_bytes_into_a_pipe(tokscope, load):
    tok = load("gpt2")
    lone = next(i for i in range(256) if tok.token_bytes(i) == b"\xab")  # a lone continuation byte
    done = tokscope("decode", "-e", "gpt2", str(lone), "31373")
    assert done.returncode == 0 and done.stdout == b"\xabhello"


def test_baselines_top_must_not_be_negative(capsys):
    code, out, err = run(capsys, "baselines", PROSE, "--top", "-5")
    assert code == 2 and "0 or more" in one_line_error(err)


def test_an_unknown_command_is_named(capsys):
    code, out, err = run(capsys, "encde", "hi")
    assert code == 2 and "unknown command 'encde'; did you mean 'encode'?" in one_line_error(err)


def test_languages_says_a_load_error_once(capsys):
    code, out, err = run(capsys, "languages", "-e", "nope")
    assert code == 1 and err.count("unknown encoding") == 1
    one_line_error(err)


def test_a_bom_tokenizer_file_loads(tmp_path, capsys):
    path = tmp_path / "bom.json"
    run(capsys, "train", PROSE, "--merges", "3", "-o", str(path))
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    code, out, err = run(capsys, "encode", "-e", str(path), "hello")
    assert code == 0, err


def test_a_pattern_that_drops_text_is_warned_about(capsys):
    code, out, err = run(capsys, "train", PROSE, "--merges", "3", "--pattern", r"\w+")
    assert code == 0 and "cannot encode it back" in err
    code, out, err = run(capsys, "train", PROSE, "--merges", "3", "--pattern", "words")
    assert code == 0 and "cannot encode" not in err


def test_a_closed_standard_error_keeps_notes_out_of_the_output(tokscope, cli_env):
    """print(file=None) writes to standard output: with 2>&- a note must go nowhere, not into the ids."""
    done = subprocess.run([sys.executable, "-c", "import os, subprocess, sys; os.close(2); "
                           "sys.exit(subprocess.call(sys.argv[1:]))", sys.executable, "-m", "tokscope.cli",
                           "encode", "-e", "gpt2", "hi", "--allow-special", "<|nope|>"],
                          stdout=subprocess.PIPE, env=cli_env, timeout=120)
    assert done.returncode == 0 and done.stdout == b"5303\n"


# ----- issue 21, Low 10: Ctrl+C during start-up ---------------------------------------------------------

#: what the installed ``tokscope`` script runs, after a word that the interpreter itself is up
_STARTED = "import os, sys; os.write(2, b'up\\n'); sys.argv[0] = 'tokscope'; from tokscope.cli import main; sys.exit(main())"


@pytest.mark.parametrize("delay", [0.03, 0.06, 0.1, 0.15, 0.2, 0.3, 0.4])
def test_sigint_at_any_moment_of_start_up_is_interrupted_and_130(tmp_path, cli_env, delay):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the keeper's lamp\n" * 20_000)
    child = subprocess.Popen([sys.executable, "-c", _STARTED, "encode", "-f", str(corpus)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=cli_env)
    try:
        # the interpreter is up: tokscope's own start-up begins (the few milliseconds before cli.py's
        # first lines run, importing the package, are the interpreter's)
        assert child.stderr.readline() == b"up\n"
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    if child.returncode == 0:
        return  # it finished before the signal came
    assert child.returncode == 130, err
    assert one_line_error(err) == "tokscope: interrupted\n"


# ----- issue 21, Medium 14: import of a rank file with one long token -----------------------------------


def _rank_file(tokens: list[bytes]) -> bytes:
    import base64

    lines = [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(256)]
    lines += [f"{base64.b64encode(t).decode()} {256 + k}" for k, t in enumerate(tokens)]
    return ("\n".join(lines) + "\n").encode()


def test_import_of_one_long_token_that_is_no_merge_is_quick_and_short(tmp_path, tokscope):
    path = tmp_path / "long.tiktoken"
    path.write_bytes(_rank_file([b"a" * 1_000_000]))
    done = tokscope("import", str(path), "--pattern", r"\S+|\s+", "-o", str(tmp_path / "out.json"), timeout=60)
    assert done.returncode == 1
    message = one_line_error(done.stderr)
    assert "is not two lower-ranked tokens joined" in message and len(message) < 300


def test_import_of_a_long_token_built_by_doubling(tmp_path, tokscope):
    path = tmp_path / "doubling.tiktoken"
    path.write_bytes(_rank_file([b"a" * 2**k for k in range(1, 19)]))  # up to 256 KB
    done = tokscope("import", str(path), "--pattern", r"\S+|\s+", "-o", str(tmp_path / "out.json"), "--json",
                    timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["merges"] == 18
    text = tmp_path / "text.txt"
    text.write_text("a" * 2**18 + "a" * 4)
    done = tokscope("encode", "-e", str(tmp_path / "out.json"), "-f", str(text), timeout=60)
    assert done.returncode == 0 and done.stdout.split() == [b"273", b"257"], done.stderr[-300:]


# ----- issue 21, Medium 9: a dead worker in count -----------------------------------------------------


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


@pytest.mark.parametrize("value", ["-1", "0", "x", "1e3"])
def test_jobs_must_be_a_number_of_workers(capsys, value):
    code, _, err = run(capsys, "count", "-j", value, "README.md")
    assert code == 2 and "a number of worker processes" in err and "tokens" not in err


# ----- issue 21, Low 16-21: one-line errors that say what is wrong ------------------------------------


@pytest.mark.parametrize("argv, message", [
    (["decode", "9" * 5000], "5,000 digits"),
    (["train", "--vocab-size", "300", "--sweep", "9" * 5000, "README.md"], "5,000 digits"),
    (["stats", "--width", "9" * 4000, "hi"], "--width must be a positive number of at most 7 digits"),
    (["encode", "--max-bytes", "1", "hello"], "TEXT is 5 bytes, over the 1-byte limit"),
])
def test_expected_bad_input_is_no_internal_error(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code in (1, 2) and message in err and "internal error" not in err
    one_line_error(err)


@pytest.mark.parametrize("source", ["{% for i in [1] %}" * 25 + "x" + "{% endfor %}" * 25,
                                    "{% if 1 %}" * 200 + "x" + "{% endif %}" * 200])
def test_templates_nested_past_pythons_limits_are_one_line(tmp_path, capsys, source):
    template = tmp_path / "deep.jinja"
    template.write_text(source)
    conversation = tmp_path / "c.json"
    conversation.write_text('[{"role": "user", "content": "hi"}]')
    code, _, err = run(capsys, "chat", "--template", str(template), "-f", str(conversation))
    assert code == 1 and "nests its blocks too deeply" in one_line_error(err)


@pytest.mark.parametrize("content, code", [
    ('[{"role": "user", "content": "hi"}] trailing', 1),
    ('[{"role": "user", "content": 1' + "0" * 5000 + "}]", 1),
    ("[" * 100_000, 1),
    ('\ufeff[{"role": "user", "content": "hi"}]', 0),
])
def test_chat_file_problems_are_input_errors_not_usage(tmp_path, capsys, content, code):
    path = tmp_path / "c.json"
    path.write_text(content, encoding="utf-8")
    got, _, err = run(capsys, "chat", "-f", str(path))
    assert got == code, err
    if code:
        one_line_error(err)


def test_a_broken_pipe_keeps_counts_gate(tmp_path, cli_env):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(300):
        (folder / f"f{i}.txt").write_text(f"some text {i} here and more\n")
    done = subprocess.run(f"{sys.executable} -m tokscope.cli count --max-tokens 1 --json {folder} | head -c 10; "
                          "exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", capture_output=True, env=cli_env,
                          timeout=120)
    assert done.returncode == 3, done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("name, message", [("llama3", "open model"), ("Qwen", "open model"),
                                            ("my tok", "cannot be a saved tokenizer's name")])
def test_saved_names_an_open_model_or_a_space_takes_are_refused(capsys, name, message):
    code, _, err = run(capsys, "train", "README.md", "--vocab-size", "300", "--save", "--name", name)
    assert code == 2 and message in one_line_error(err)


@pytest.mark.parametrize("argv", [["--help"], ["encode", "--help"]])
def test_help_into_a_full_disk_is_exit_1(tokscope, argv):
    with open("/dev/full", "wb") as full:
        done = tokscope(*argv, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 1 and b"cannot write the output" in done.stderr


def test_ctrl_c_at_exit_after_the_work_is_done_is_not_a_kill(cli_env):
    """Python's finalization gives SIGINT its default action back (a bare kill by the signal,
    exit -2, not a word) once a Python handler is gone; tokscope ignores Ctrl+C from its exit on.
    A Ctrl+C sent from an exit hook that runs after tokscope's (hooks run last-registered first)
    finds the command's own code, 0."""
    script = ("import atexit, os, signal, sys; atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT)); "
              "sys.argv[0] = 'tokscope'; from tokscope.cli import main; sys.exit(main())")
    done = subprocess.run([sys.executable, "-c", script, "encode", "-e", "gpt2", "hi"], capture_output=True,
                          env=cli_env, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"5303\n", b"")
