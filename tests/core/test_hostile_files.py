"""Issue 14, Medium 1, 2 and 10: crafted tokenizer files and user regexes are one-line errors,
never a traceback, a hang or the OOM killer; explain is linear in its text."""

from __future__ import annotations

import json
import time

import pytest

from tokscope.cli import main
from tokscope.core.patterns import guard as regex_guard
from tokscope.core.formats import saved as serialize
from tokscope.core.text.errors import TokscopeError
from tokscope.core.patterns.guard import PatternError, PatternTimeoutError, check_pattern
from tokscope.core.tokenizer.tokenizer import Tokenizer
from tokscope.sources import registry

BYTES = {bytes([i]): i for i in range(256)}


def doc(**changes):
    base = {"format": "tokscope-bpe", "version": 1, "name": "t", "pattern": r"\S+|\s+", "merges": [["61", "62"]],
            "special_tokens": {}, "metadata": {}}
    base.update(changes)
    return base


def cli(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err and err.count("\n") <= 1, err
    return code, out, err


@pytest.fixture
def fast_budget(monkeypatch):
    """A short time budget, so a pattern that backtracks without end is stopped quickly."""
    monkeypatch.setattr(regex_guard, "BASE_SECONDS", 0.3)


# ----- Medium 1: crafted files ------------------------------------------------------------------------


@pytest.mark.parametrize("data, message", [
    (json.dumps(doc(pattern="(" * 2000 + "a" + ")" * 2000)).encode(), "nested more than"),
    (b"[" * 100_000, "nested too deeply"),
    (json.dumps(doc(metadata={"n": 0})).replace('"n": 0', '"n": ' + "9" * 5000).encode(), "5,000 digits"),
    (json.dumps(doc(pattern="a{1000000000}")).encode(), "repeat count"),
    (json.dumps(doc(pattern="(?:a{1000}){1000}")).encode(), "expand"),
    (json.dumps(doc(special_tokens={"<x>": 10**300})).replace(str(10**300), "1" + "0" * 300).encode(), "digits"),
    (json.dumps(doc(special_tokens={"<x>": 2**40})).encode(), "ids are at most"),
    (b'{"format": "tokscope-bpe", "version": NaN}', "NaN"),
])
def test_crafted_files_are_one_line_errors(data, message):
    start = time.monotonic()
    with pytest.raises(serialize.SavedFormatError, match=message) as info:
        serialize.loads(data, "evil.json")
    assert "\n" not in str(info.value)
    assert time.monotonic() - start < 30  # not a hang (a generous bound, not a benchmark)


def test_one_bad_file_does_not_break_the_listing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path))
    folder = tmp_path / "tokenizers"
    folder.mkdir()
    (folder / "deep.json").write_bytes(b"[" * 100_000)
    (folder / "digits.json").write_text('{"format": "tokscope-bpe", "version": ' + "9" * 5000 + "}")
    (folder / "bomb.json").write_text(json.dumps(doc(pattern="a{1000000000}")))
    (folder / "good.json").write_text(json.dumps(doc(name="good")))
    code, out, err = cli(capsys, "encodings")
    assert code == 0 and err == ""
    for name in ("deep", "digits", "bomb"):
        assert any(line.startswith(name) and "MISSING" in line for line in out.splitlines()), out
    assert any(line.startswith("good") and "available" in line for line in out.splitlines())


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(serialize, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc(metadata={"pad": "x" * 5000})))
    with pytest.raises(serialize.SavedFormatError, match="over 1,000 bytes"):
        serialize.load(path)


def test_a_bom_is_accepted():
    assert serialize.loads(b"\xef\xbb\xbf" + json.dumps(doc()).encode()).name == "t"


# ----- Medium 2: patterns that backtrack without end ---------------------------------------------------


def test_a_saved_pattern_that_backtracks_is_stopped(tmp_path, capsys, fast_budget):
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(doc(pattern=r"(?:(?:a|a)+)+b|\S+|\s+")))
    try:
        code, out, err = cli(capsys, "encode", "-e", str(path), "a" * 30)
        assert code == 1 and "took too long" in err and out == ""
    finally:
        registry.forget(str(path))


def test_vocab_regex_that_backtracks_is_stopped(capsys, monkeypatch):
    from tokscope.core.explain import vocab_search as vocab

    monkeypatch.setattr(vocab, "SEARCH_SECONDS", 0.5)
    code, out, err = cli(capsys, "vocab", "-e", "gpt2", "--regex", "(?:(?:=|=)+)+x")
    assert code == 1 and "took too long" in err


def test_train_pattern_that_backtracks_is_stopped(tmp_path, capsys, fast_budget):
    corpus = tmp_path / "c.txt"
    corpus.write_text("a" * 30 + " " + "a" * 30)
    code, out, err = cli(capsys, "train", str(corpus), "--merges", "3", "--pattern", r"(?:(?:a|a)+)+b|\S+|\s+")
    assert code == 1 and "took too long" in err


@pytest.mark.parametrize("argv", [
    ["train", "{corpus}", "--merges", "3", "--pattern", "a{1000000000}"],
    ["import", "{ranks}", "--pattern", "(" * 500 + ")" * 500, "-o", "{d}/x.json"],
    ["vocab", "-e", "gpt2", "--regex", "(?:a{1000}){1000}"],
])
def test_bomb_patterns_are_refused_everywhere(tmp_path, capsys, argv):
    corpus = tmp_path / "c.txt"
    corpus.write_text("some text")
    ranks = tmp_path / "r.tiktoken"
    cli(capsys, "export", "-e", "gpt2", "-o", str(ranks))
    argv = [a.replace("{corpus}", str(corpus)).replace("{ranks}", str(ranks)).replace("{d}", str(tmp_path))
            for a in argv]
    code, out, err = cli(capsys, *argv)
    assert code in (1, 2) and ("repeat count" in err or "nested" in err or "expand" in err)


def test_the_limits_let_real_patterns_through(load):
    from tokscope.sources import tiktoken_adapter as tk

    for name in tk.encoding_names():
        check_pattern(tk.encoding_spec(name).pattern)
        assert tk.encoding_spec(name).pattern in regex_guard.TRUSTED_PATTERNS
    from tokscope.core.train.trainer import CORE_PATTERNS

    assert set(CORE_PATTERNS.values()) <= regex_guard.TRUSTED_PATTERNS
    for pattern in [r"\w+|\W", r"[[:alpha:]]{1,3}|\p{N}{1,3}|\s+|.", r"(?i:'s|'t)|[^\r\n\p{L}]?\p{L}+", "a{10000}"]:
        check_pattern(pattern)
    with pytest.raises(PatternError):
        check_pattern("a{10001}")


def test_a_slow_but_finite_user_pattern_still_works(fast_budget):
    tok = Tokenizer("custom", BYTES, r"\w+|\s+|[^\w\s]+")
    text = "word, " * 20_000
    assert tok.decode(tok.encode(text)) == text


def test_a_timed_out_pattern_is_a_tokscope_error(fast_budget):
    tok = Tokenizer("evil", BYTES, r"(?:(?:a|a)+)+b|\S+|\s+")
    with pytest.raises(PatternTimeoutError) as info:
        tok.encode("a" * 30)
    assert isinstance(info.value, TokscopeError) and isinstance(info.value, TimeoutError)


# ----- Medium 10: explain is linear ---------------------------------------------------------------------


def test_explain_chooses_the_regex_engine_once_per_text(load, monkeypatch):
    """The quadratic cost was one look over the rest of the text per chunk, to pick the engine;
    now the number of such looks does not grow with the text."""
    from tokscope.core.patterns import tiktoken_syntax as unicode_pattern
    from tokscope.core.explain.ranks import explain

    calls = []
    real = unicode_pattern.ChunkPattern.for_text

    def counting(self, text, pos=None, endpos=None):
        calls.append(len(text) - (pos or 0))
        return real(self, text, pos, endpos)

    monkeypatch.setattr(unicode_pattern.ChunkPattern, "for_text", counting)
    tok = load("o200k_base")
    base = "Ünïcödé текст 日本語 مرحبا 😀 mixed, text! 123 "
    looked = []
    for copies in (10, 40):
        calls.clear()
        explain(tok, base * copies, with_variants=False)
        looked.append(sum(calls))
    # characters looked at to choose: linear in the text (4x the text, about 4x, not 16x)
    assert looked[1] <= 5 * looked[0]


def test_longest_prefix_is_bounded_by_the_longest_token(load):
    from tokscope.core.explain.ranks import longest_token_prefix

    tok = load("gpt2")
    data = b"x" * 200_000  # tried from every length down, this was 200,000 slices of up to 200 KB
    prefix, rank = longest_token_prefix(tok, data)
    assert prefix and rank is not None
    assert len(prefix) <= max(map(len, tok.ranks))


# ----- issue 21, Medium 6: patterns and strings inside tokenizer.json files ----------------------------

_WORDLEVEL = {"type": "WordLevel", "vocab": {"a": 0, "<unk>": 1}, "unk_token": "<unk>"}
_HUGE = "x" * 10_000_000

FILE_STAGES = {
    "Split a{1000000000}": ({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a{1000000000}"},
                                               "behavior": "Isolated", "invert": False}}, "repeat count"),
    "Replace normalizer a{1000000000}": ({"normalizer": {"type": "Replace", "pattern": {"Regex": "(?:a{1000}){1000}"},
                                                         "content": "b"}}, "expand"),
    "Replace normalizer, huge content": ({"normalizer": {"type": "Replace", "pattern": {"String": "a"},
                                                         "content": _HUGE}}, "at most 1,000"),
    "Replace normalizer, empty match, huge content": ({"normalizer": {"type": "Replace", "pattern": {"Regex": "x*"},
                                                                      "content": _HUGE}}, "at most 1,000"),
    "Prepend of a huge string": ({"normalizer": {"type": "Prepend", "prepend": _HUGE}}, "at most 1,000"),
    "Replace decoder, huge content": ({"decoder": {"type": "Replace", "pattern": {"String": "a"}, "content": _HUGE}},
                                      "at most 1,000"),
    "Replace decoder a{1000000000}": ({"decoder": {"type": "Replace", "pattern": {"Regex": "a{1000000000}"},
                                                   "content": "b"}}, "repeat count"),
}


@pytest.mark.parametrize("name", list(FILE_STAGES))
def test_a_files_patterns_and_strings_have_the_users_limits(tmp_path, name):
    import resource
    import subprocess
    import sys

    stages, message = FILE_STAGES[name]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"version": "1.0", "model": _WORDLEVEL, **stages}))
    cap = 1024 * 1024 * 1024

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    done = subprocess.run([sys.executable, "-m", "tokscope.cli", "decode", "-e", str(path), "0", "0", "0"],
                          capture_output=True, text=True, timeout=120, preexec_fn=limit,
                          env={**__import__("os").environ, "TOKSCOPE_CACHE_DIR": str(tmp_path / "c")})
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr
