"""``tokscope truncate`` and ``encode --truncate N``: a text cut to at most N tokens, never inside a
character, byte for byte into a pipe; ``--from-end``; special tokens as ``encode`` treats them."""

from __future__ import annotations

import io
import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.cli import main

SAMPLE = "Hello 👩‍👩‍👧 world, 日本語のテキスト and naïve café\n"


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


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(st.sampled_from(list("ab 日本語👍é\u0301\n\t\u200d") + ["👩‍👩‍👧", "Hello", " world"]),
                    max_size=20).map("".join),
       n=st.integers(min_value=0, max_value=25), from_end=st.booleans())
def test_the_kept_text_splits_no_character_and_reencodes_within_the_budget(capsys, monkeypatch, load, name, text, n,
                                                                           from_end):
    tok = load(name)
    code, out, _ = run(capsys, monkeypatch, "truncate", "-e", name, "--max-tokens", str(n), "--json",
                       *(["--from-end"] if from_end else []), "--", text)
    assert code == 0
    doc = json.loads(out)
    kept = doc["text"]
    assert (text.endswith(kept) if from_end else text.startswith(kept))
    assert len(tok.encode(kept)) == doc["tokens"] <= n
    assert doc["truncated"] == (kept != text)
    assert doc["bytes"] == len(kept.encode()) and text[doc["start"]:doc["end"]] == kept
    # on a token boundary of the whole text: its bytes are whole tokens of the text's own encoding
    ids = tok.encode(text)
    pieces = [tok.token_bytes(i) for i in ids]
    data = kept.encode()
    joined = [b"".join(pieces[len(pieces) - k:]) if from_end else b"".join(pieces[:k]) for k in range(len(pieces) + 1)]
    assert data in joined


def test_into_a_pipe_the_text_comes_out_byte_for_byte(tokscope, tmp_path):
    text = "  spaces, a tab\t, CRLF\r\nand no final newline"
    done = tokscope("truncate", "--max-tokens", "1000", text)
    assert done.returncode == 0 and done.stdout == text.encode()
    f = tmp_path / "t.txt"
    f.write_bytes(text.encode())
    done = tokscope("truncate", "--max-tokens", "1000", "-f", str(f))
    assert done.stdout == text.encode()
    done = tokscope("truncate", "--max-tokens", "1000", input=text.encode())
    assert done.stdout == text.encode()
    done = tokscope("truncate", "--max-tokens", "0", text)
    assert done.returncode == 0 and done.stdout == b""
    # escape sequences in the text are the text: written as they are into a pipe
    done = tokscope("truncate", "--max-tokens", "50", "a\x1b[31mred")
    assert done.stdout == b"a\x1b[31mred"


def test_emoji_and_cjk_are_cut_before_the_character(capsys, monkeypatch, load):
    tok = load("gpt2")
    text = "Hello 👍"
    ids = tok.encode(text)
    assert tok.decode_bytes(ids[-1:]) != "👍".encode()  # gpt2 cuts 👍 in bytes
    for n in range(1, len(ids)):  # every budget short of the whole text ends inside 👍: cut before it
        code, out, _ = run(capsys, monkeypatch, "truncate", "-e", "gpt2", "--max-tokens", str(n), "--json", text)
        kept = json.loads(out)["text"]
        assert kept in ("Hello", "Hello ") and "\ufffd" not in kept
    code, out, _ = run(capsys, monkeypatch, "truncate", "-e", "gpt2", "--max-tokens", "1", "--json", "--from-end",
                       "日本")
    doc = json.loads(out)
    assert doc["text"] in ("", "本") and doc["tokens"] <= 1
    code, out, _ = run(capsys, monkeypatch, "truncate", "-e", "o200k_base", "--max-tokens", "2", "--json", "日本語のテキスト")
    doc = json.loads(out)
    assert "日本語のテキスト".startswith(doc["text"]) and doc["text"] and doc["tokens"] <= 2


def test_from_end_keeps_the_tail(capsys, monkeypatch, load):
    tok = load("o200k_base")
    code, out, _ = run(capsys, monkeypatch, "truncate", "--max-tokens", "3", "--from-end", "--json", SAMPLE)
    doc = json.loads(out)
    assert SAMPLE.endswith(doc["text"]) and doc["tokens"] == 3 and doc["end"] == len(SAMPLE)
    assert tok.encode(doc["text"]) == tok.encode(SAMPLE)[-3:]


def test_a_budget_larger_than_the_text_changes_nothing(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "truncate", "--max-tokens", "1_000_000", "--json", SAMPLE)
    doc = json.loads(out)
    assert doc["text"] == SAMPLE and doc["truncated"] is False and doc["start"] == 0 and doc["end"] == len(SAMPLE)


def test_special_tokens_as_encode_treats_them(capsys, monkeypatch, load):
    text = "one <|endoftext|> two"
    code, out, err = run(capsys, monkeypatch, "truncate", "--max-tokens", "2", text)
    assert code == 1 and out == "" and err.count("\n") == 1 and "--allow-special" in err
    code, out, _ = run(capsys, monkeypatch, "truncate", "--max-tokens", "3", "--allow-special", "all", "--json", text)
    assert json.loads(out)["text"] == "one <|endoftext|>"
    code, out, _ = run(capsys, monkeypatch, "truncate", "--max-tokens", "3", "--special-as-text", "--json", text)
    doc = json.loads(out)
    assert doc["tokens"] <= 3 and text.startswith(doc["text"]) and "<|endoftext|>" not in doc["text"]


def test_usage_errors(tokscope):
    for args in (["truncate", "x"], ["truncate", "--max-tokens", "-1", "x"], ["truncate", "--max-tokens", "1.5", "x"],
                 ["truncate", "--max-tokens", "١", "x"], ["encode", "--from-end", "x"],
                 ["encode", "--truncate", "2", "--max-rank", "300", "x"]):
        done = tokscope(*args)
        assert done.returncode == 2, args
        assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr


def test_encode_truncate_prints_the_kept_ids(capsys, monkeypatch, load):
    tok = load("o200k_base")
    for extra in ([], ["--from-end"]):
        code, kept, _ = run(capsys, monkeypatch, "truncate", "--max-tokens", "5", "--json", *extra, SAMPLE)
        kept = json.loads(kept)["text"]
        code, out, _ = run(capsys, monkeypatch, "encode", "--truncate", "5", *extra, SAMPLE)
        assert code == 0 and out.split() == [str(i) for i in tok.encode(kept)]
        code, out, _ = run(capsys, monkeypatch, "encode", "--truncate", "5", "--json", *extra, SAMPLE)
        doc = json.loads(out)
        assert doc["count"] == len(tok.encode(kept)) <= 5
        assert b"".join(bytes.fromhex(t["bytes"]) for t in doc["tokens"]) == kept.encode()
    code, out, _ = run(capsys, monkeypatch, "encode", "-e", "gpt2", "--truncate", "2", "Hello 👍")
    assert out.split() == [str(i) for i in load("gpt2").encode("Hello")]  # the next token holds half of 👍


def test_a_hugging_face_tokenizer_that_normalizes_keeps_the_original_text(capsys, monkeypatch, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, normalizers, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]"))
    hf.normalizer = normalizers.Lowercase()
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=200, special_tokens=["[UNK]"], show_progress=False)
    hf.train_from_iterator(["The Quick Brown Fox jumps over the lazy dog"] * 20, trainer)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    text = "The Quick Brown Fox jumps"
    for n in range(0, 8):
        code, out, _ = run(capsys, monkeypatch, "truncate", "-e", str(path), "--max-tokens", str(n), "--json", text)
        assert code == 0
        doc = json.loads(out)
        assert text.startswith(doc["text"])  # the input's own letters, not the lower-cased form
        assert len(hf.encode(doc["text"], add_special_tokens=False).ids) == doc["tokens"] <= n
    full = len(hf.encode(text, add_special_tokens=False).ids)
    code, out, _ = run(capsys, monkeypatch, "truncate", "-e", str(path), "--max-tokens", str(full - 1), "--json",
                       "--from-end", text)
    doc = json.loads(out)
    assert text.endswith(doc["text"]) and doc["tokens"] == full - 1 and doc["text"][0].isupper()


def test_a_big_file_is_cut_from_its_head_quickly(tokscope, tmp_path, load):
    line = "the quick brown fox jumps over the lazy dog 👍 日本語\n"
    f = tmp_path / "big.txt"
    f.write_text(line * 200_000, encoding="utf-8")  # 11 MB
    done = tokscope("truncate", "--max-tokens", "100", "-f", str(f))
    assert done.returncode == 0
    assert len(load("o200k_base").encode(done.stdout.decode())) <= 100
    assert (line * 200_000).startswith(done.stdout.decode())
    done = tokscope("truncate", "--max-tokens", "100", "--from-end", "-f", str(f))
    assert (line * 200_000).endswith(done.stdout.decode()) and done.stdout.decode().startswith(("the", " ", "\n"))
