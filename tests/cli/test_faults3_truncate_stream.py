"""Issue 21, item 8 (last part): ``truncate --max-tokens N`` (and ``encode --truncate N``) read only
what the first N tokens need from ``-f FILE`` or standard input, and give the answer the whole
input gives, byte for byte."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.cli import main
from tokscope.core.document import cuts
from tokscope.sample_texts import read_sample

tokenizers = pytest.importorskip("tokenizers")

#: pieces texts are made of: scripts, marks that join the letter before them, line breaks that
#: are and are not cuts, special-token and added-token look-alikes
ALPHABET = [*"ab Z9 日本語👍é\u0301\u0308\n\t.,'!", " \n", "\n\n", "\n ", "\r\n", "Hello", " world", "'s", "12345",
            "<|endoftext|>", "<|endoftext", "[UNK]", "[CLS]", "##", "▁", "ÅÄ", "ﬁ", "Ⅳ"]


def _wordpiece_json() -> str:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator([read_sample("prose.txt")],
                            trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]", "[CLS]", "[SEP]"]))
    return tok.to_str()


def _unigram_json(prepend: str) -> str:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=prepend)
    tok.train_from_iterator([read_sample("prose.txt")],
                            trainers.UnigramTrainer(vocab_size=200, special_tokens=["<unk>", "<|endoftext|>"],
                                                    unk_token="<unk>"))
    return tok.to_str()


KINDS = {
    "cl100k_base": None,  # byte-level BPE from ranks, a line-safe pattern: cut at line breaks
    "gpt2": None,  # byte-level BPE from ranks, a pattern that is not line-safe: cut between chunks
    "wordpiece": _wordpiece_json,  # BertNormalizer (NFD, accents, lowercase) and BertPreTokenizer
    "unigram": lambda: _unigram_json("never"),  # NFKC and Metaspace that splits: local
    "unigram-first": lambda: _unigram_json("first"),  # not local: the whole input is read
}


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    from tokscope.sources import model_files, registry

    folder = tmp_path_factory.mktemp("kinds")
    out = {}
    for name, build in KINDS.items():
        if build is None:
            out[name] = registry.load(name)
        else:
            path = folder / f"{name}.json"
            path.write_text(build(), encoding="utf-8")
            out[name] = model_files.load_path(path)
    return out


def _pieces(text: str, cuts_at: list[int]):
    """``more()`` for a text given in pieces cut at ``cuts_at``; counts what was handed out."""
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts_at)})
    parts = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    state = {"given": 0}

    def more() -> str:
        if not parts:
            return ""
        part = parts.pop(0)
        state["given"] += len(part)
        return part

    return more, state


@pytest.mark.parametrize("kind", list(KINDS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(ALPHABET), max_size=80), cuts_at=st.lists(st.integers(0, 400), max_size=6),
       n=st.integers(0, 30), special=st.sampled_from(["all", "text"]))
def test_reading_a_prefix_gives_what_the_whole_input_gives(kinds, monkeypatch, kind, words, cuts_at, n, special):
    # a small margin makes small texts settle, so the rule is tried where it is tightest
    monkeypatch.setattr(cuts, "SETTLE_MARGIN", 3)
    tok = kinds[kind]
    text = "".join(words)
    args = {"allowed_special": "all"} if special == "all" else {"disallowed_special": ()}
    whole = cuts.truncate(tok, text, n, **args)
    more, _ = _pieces(text, cuts_at)
    got = cuts.truncate_stream(tok, more, n, **args)
    assert (got.text, got.start, got.end, got.ids, got.truncated) == \
        (whole.text, whole.start, whole.end, whole.ids, whole.truncated)


@pytest.mark.parametrize("kind", ["cl100k_base", "gpt2", "wordpiece", "unigram"])
@pytest.mark.parametrize("lines", [True, False], ids=["lines", "one-line"])
def test_a_long_text_is_read_only_as_far_as_the_cut_needs(kinds, kind, lines):
    tok = kinds[kind]
    text = read_sample("prose.txt")
    text = text * (400_000 // len(text) + 1)
    if not lines:  # no line break to cut at: chunks settle it
        text = text.replace("\n", " ")
    more, state = _pieces(text, list(range(4096, len(text), 4096)))
    got = cuts.truncate_stream(tok, more, 100)
    assert got == cuts.truncate(tok, text, 100)
    assert state["given"] < 64 * 1024  # settled within the first blocks, far from the end


@pytest.fixture
def huge_file(tmp_path):
    """2 GB that cost nothing: some lines of prose, then a hole (NUL bytes) to 2**31."""
    path = tmp_path / "huge.txt"
    head = read_sample("prose.txt") * 20
    path.write_text(head, encoding="utf-8")
    os.truncate(path, 2**31)
    return path, head


def _count_reads(monkeypatch, path):
    """Count the bytes read from ``path`` (any descriptor open on it) through ``os.read``."""
    target = os.stat(path).st_ino
    real = os.read
    got = {"bytes": 0}

    def counting(fd, n):
        data = real(fd, n)
        try:
            if os.fstat(fd).st_ino == target:
                got["bytes"] += len(data)
        except OSError:
            pass
        return data

    monkeypatch.setattr(os, "read", counting)
    return got


@pytest.mark.parametrize("argv", [["truncate", "--max-tokens", "100", "--json"],
                                  ["encode", "--truncate", "100", "--json"]])
def test_a_huge_file_is_read_only_as_far_as_100_tokens_need(capsys, monkeypatch, load, huge_file, argv):
    path, head = huge_file
    read = _count_reads(monkeypatch, path)
    code = main([*argv, "-e", "cl100k_base", "-f", str(path)])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    expected = cuts.truncate(load("cl100k_base"), head, 100)
    doc = json.loads(out)
    if argv[0] == "truncate":
        assert (doc["text"], doc["tokens"], doc["truncated"]) == (expected.text, len(expected.ids), True)
    else:
        assert [t["id"] for t in doc["tokens"]] == expected.ids
    assert 0 < read["bytes"] <= 2 * 64 * 1024  # of 2 GB (and over the default 64 MB --max-bytes)


def test_a_pipe_that_never_closes_is_cut_once_it_has_given_enough(cli_env):
    """A FIFO fed 30 KB of prose and held open: the cut comes from what it gave, without waiting
    for an end that never comes (the timeout only guards the suite against the old hang)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        fifo = os.path.join(folder, "pipe")
        os.mkfifo(fifo)
        text = read_sample("prose.txt") * 10
        proc = subprocess.Popen([sys.executable, "-m", "tokscope.cli", "truncate", "-e", "cl100k_base", "--max-tokens", "100", "-f", fifo],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env)
        writer = os.open(fifo, os.O_WRONLY)  # held open until the command has answered
        try:
            os.write(writer, text.encode()[:30_000])
            out, err = proc.communicate(timeout=120)
        finally:
            os.close(writer)
    assert proc.returncode == 0, err
    from tokscope.sources import registry

    assert out == cuts.truncate(registry.load("cl100k_base"), text, 100).text.encode()


def test_standard_input_is_read_a_prefix_at_a_time(capsys, monkeypatch, load):
    text = read_sample("prose.txt") * 200
    stream = io.BytesIO(text.encode())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stream, encoding="utf-8"))
    code = main(["truncate", "-e", "cl100k_base", "--max-tokens", "50", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["text"] == cuts.truncate(load("cl100k_base"), text, 50).text
    assert stream.tell() <= 2 * 64 * 1024 < len(text.encode())


def test_from_end_and_limits_still_read_the_whole_input(tokscope, tmp_path):
    path = tmp_path / "t.txt"
    text = read_sample("prose.txt")
    path.write_text(text, encoding="utf-8")
    done = tokscope("truncate", "--max-tokens", "3", "--from-end", "-f", str(path))
    assert done.returncode == 0 and text.endswith(done.stdout.decode()) and done.stdout
    # what is read is bounded by --max-bytes: a cut that needs more than that is refused
    done = tokscope("truncate", "--max-tokens", "100000", "--max-bytes", "1000", "-f", str(path), text=True)
    assert done.returncode == 1 and "1,000-byte limit" in done.stderr and "Traceback" not in done.stderr
