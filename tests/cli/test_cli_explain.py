"""``tokscope explain``, ``tree``, ``vocab`` and ``encode --max-rank`` through ``cli.main``."""

from __future__ import annotations

import json

import pytest

from tokscope.cli import main
from tokscope.core.models.ranks import merge


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# ----- explain ---------------------------------------------------------------------------------


def test_explain_json_steps_replay_to_the_encoding(capsys, load):
    text = "Hello, tokenizers! I'm 12345 \n\n x"
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        code, out, err = run(capsys, "explain", "-e", name, text, "--json")
        assert code == 0 and err == ""
        doc = json.loads(out)
        tok = load(name)
        assert doc["tokens"] == tok.encode(text)
        assert "".join(c["text"] for c in doc["chunks"]) == text
        for c in doc["chunks"]:
            assert text[c["start"] : c["end"]] == c["text"]
            data = c["text"].encode()
            parts = [data[i : i + 1] for i in range(len(data))]
            for step in c["steps"]:
                left, right = bytes.fromhex(step["left"]), bytes.fromhex(step["right"])
                assert step["left"] == step["left"].lower() and isinstance(step["rank"], int)
                i = step["position"]
                assert (parts[i], parts[i + 1]) == (left, right)
                assert tok.rank_of(left + right) == step["rank"]
                parts[i : i + 2] = [left + right]
            assert [tok.rank_of(p) for p in parts] == c["tokens"]
            assert c["category"] in ("letters", "digits", "punctuation", "whitespace", "contraction")
            assert "summary" in c["why"]
        words = [c for c in doc["chunks"] if c["text"] == " tokenizers"]
        assert words and {v["label"] for v in words[0]["variants"]} >= {"bare", "leading space", "capitalised",
                                                                          "upper case", "after a newline"}


def test_explain_plain_has_numbered_steps(capsys):
    code, out, err = run(capsys, "explain", "-e", "gpt2", "hello")
    assert code == 0
    assert "chunk 1: \"hello\"" in out and "letters" in out
    assert '  1. "h" + "e" -> "he"  rank 258 (the lowest)' in out  # the merge step in the why screen's words
    assert "why: \"hello\" is one token: id 31373." in out
    assert "variants:" in out and "\" Hello\"" in out


def test_explain_max_rank(capsys, load):
    code, out, _ = run(capsys, "explain", "-e", "gpt2", "hello", "--max-rank", "0", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["max_rank"] == 0 and doc["merges_kept"] == 0
    assert doc["tokens"] == [load("gpt2").rank_of(bytes([b])) for b in b"hello"]
    code, out, _ = run(capsys, "explain", "-e", "gpt2", "hello", "--max-rank", "300")
    assert "cut-off 300" in out and "44 merges" in out


def test_explain_pairs_and_special_tokens(capsys):
    code, out, _ = run(capsys, "explain", "-e", "gpt2", "abc", "--pairs", "--no-variants")
    assert code == 0 and "candidates:" in out and "variants" not in out
    code, out, err = run(capsys, "explain", "-e", "gpt2", "a<|endoftext|>")
    assert code == 1 and "--allow-special" in err and "Traceback" not in err
    code, out, _ = run(capsys, "explain", "-e", "gpt2", "a<|endoftext|>", "--allow-special", "all", "--json")
    assert code == 0 and json.loads(out)["tokens"] == [64, 50256]


@pytest.mark.parametrize("value", ["-1", "x", "1.5"])
def test_explain_bad_max_rank_is_a_usage_error(capsys, value):
    code, out, err = run(capsys, "explain", "hello", "--max-rank", value)
    assert code == 2 and "--max-rank" in err and "Traceback" not in err


# ----- encode --max-rank -----------------------------------------------------------------------


def test_encode_max_rank(capsys, load):
    tok = load("o200k_base")
    text = "Tokenization, step by step."
    code, out, _ = run(capsys, "encode", text, "--max-rank", "0")
    assert code == 0 and [int(i) for i in out.split()] == [tok.rank_of(bytes([b])) for b in text.encode()]
    code, out, _ = run(capsys, "encode", text, "--max-rank", str(tok.n_vocab))
    assert [int(i) for i in out.split()] == tok.encode(text)
    code, out, _ = run(capsys, "encode", text, "--max-rank", "1000", "--json")
    ids = [t["id"] for t in json.loads(out)["tokens"]]
    assert all(i < 1000 for i in ids) and ids == tok.encode(text, max_rank=1000)
    code, _, err = run(capsys, "encode", text, "--max-rank", "-5")
    assert code == 2 and "0 or more" in err


# ----- tree ------------------------------------------------------------------------------------


def _check_node(tok, d):
    data = bytes.fromhex(d["bytes"])
    assert tok.token_bytes(d["id"]) == data and d["rank"] == d["id"]
    assert len(d["children"]) in (0, 2)
    if d["children"]:
        assert b"".join(bytes.fromhex(c["bytes"]) for c in d["children"]) == data
        assert all(c["rank"] < d["rank"] for c in d["children"])
    else:
        assert len(data) == 1
    for c in d["children"]:
        _check_node(tok, c)


def test_tree_by_id_text_and_hex_agree(capsys, load):
    tok = load("o200k_base")
    token_id = tok.rank_of(b" tokenizer")
    docs = []
    for args in ([str(token_id)], ["--text", " tokenizer"], ["--hex", b" tokenizer".hex()]):
        code, out, err = run(capsys, "tree", *args, "--json")
        assert code == 0 and err == ""
        docs.append(json.loads(out))
    assert docs[0] == docs[1] == docs[2]
    assert docs[0]["id"] == token_id and docs[0]["unreachable"] is False
    _check_node(tok, docs[0])


def test_tree_plain_is_drawn(capsys, load):
    code, out, _ = run(capsys, "tree", "-e", "gpt2", "--text", "hello")
    lines = out.splitlines()
    assert code == 0 and lines[0] == '31373 "hello" 68656c6c6f rank 31373'
    assert any(line.startswith("├─ ") for line in lines) and any(line.startswith("└─ ") for line in lines)
    assert any("│  " in line for line in lines) or len(lines) <= 3
    assert sum(1 for line in lines if '" ' in line and "rank" in line) == 2 * 5 - 1  # 5 leaves, 4 merges


def test_tree_used_in(capsys, load):
    tok = load("gpt2")
    code, out, _ = run(capsys, "tree", "-e", "gpt2", "--text", "hell", "--used-in", "--json")
    doc = json.loads(out)
    hell = tok.rank_of(b"hell")
    assert doc["used_in"]
    for use in doc["used_in"]:
        pair = tok.parents(use["id"])
        assert hell in (pair.left, pair.right)
    assert tok.rank_of(b"hello") in [u["id"] for u in doc["used_in"]]
    code, out, _ = run(capsys, "tree", "-e", "gpt2", "--text", "hell", "--used-in")
    assert "used in" in out and '"hello"' in out


def test_tree_special_token(capsys):
    code, out, _ = run(capsys, "tree", "-e", "gpt2", "50256")
    assert code == 0 and "special" in out
    code, out, _ = run(capsys, "tree", "-e", "gpt2", "50256", "--json")
    doc = json.loads(out)
    assert doc["rank"] is None and doc["children"] == [] and doc["special"] is True


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["99999999"], 1, "unknown token id 99999999"),
        (["-e", "gpt2", "50257"], 1, "unknown token id"),
        (["--text", "hello world"], 1, "encodes to 2 tokens: "),
        (["--hex", "zz"], 1, "invalid hex"),
        (["--hex", "686"], 1, "odd number"),
        (["abc"], 2, "not a token id"),
        ([], 2, "give exactly one"),
        (["5", "--text", "a"], 2, "give exactly one"),
        (["--text", "a", "--hex", "61"], 2, "not allowed with"),
    ],
)
def test_tree_bad_input(capsys, args, code, words):
    got, out, err = run(capsys, "tree", *args)
    assert got == code and words in err and out == ""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


# ----- vocab -----------------------------------------------------------------------------------


def test_vocab_json_and_plain(capsys, load):
    tok = load("gpt2")
    code, out, _ = run(capsys, "vocab", "-e", "gpt2", "--regex", r"^ th", "--json", "--limit", "0")
    doc = json.loads(out)
    assert code == 0 and doc["total"] == doc["count"] > 3
    assert all(bytes.fromhex(t["bytes"]).startswith(b" th") for t in doc["tokens"])
    code, out, err = run(capsys, "vocab", "-e", "gpt2", "--search", "ing", "--sort", "length", "--limit", "3")
    lines = out.splitlines()
    assert len(lines) == 3 and "matches; showing 3" in err
    lengths = [int(line.split()[1]) for line in lines]
    assert lengths == sorted(lengths, reverse=True)
    code, out, _ = run(capsys, "vocab", "-e", "gpt2", "--id", "31373")
    assert '"hello"' in out and "68656c6c6f" in out
    code, out, _ = run(capsys, "vocab", "-e", "gpt2", "--hex", "68656c6c6f", "--json")
    ids = [t["id"] for t in json.loads(out)["tokens"]]
    assert 31373 in ids and all(b"hello" in tok.token_bytes(i) for i in ids)


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["--regex", "a("], 1, "invalid regular expression"),
        (["--hex", "g0"], 1, "invalid hex"),
        (["--id", "10000000"], 1, "unknown token id"),
        (["--id", "x"], 2, "invalid int value"),
        (["--limit", "-2"], 2, "0 or more"),
        (["--sort", "size"], 2, "invalid choice"),
        (["--search", "a", "--regex", "b"], 2, "not allowed with"),
    ],
)
def test_vocab_bad_input(capsys, args, code, words):
    got, out, err = run(capsys, "vocab", *args)
    assert got == code and words in err and out == ""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_unreachable_flag_in_tree(capsys, tmp_path, monkeypatch):
    """A saved-tokenizer-like vocabulary where a token is unreachable (built via the registry's
    loaded cache so no file format is needed)."""
    from tokscope.core.tokenizer.tokenizer import Tokenizer
    from tokscope.sources import registry

    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"bc": 256, b"ab": 257, b"cd": 258, b"abcd": 259})
    monkeypatch.setitem(registry._loaded, "tiny-test", Tokenizer("tiny-test", ranks, r"\w+|\W+"))
    code, out, _ = run(capsys, "tree", "-e", "tiny-test", "--text", "abcd")
    assert code == 0 and "unreachable" in out and "no single merge" in out
    assert merge(b"abcd", ranks) == [b"a", b"bc", b"d"]
    code, out, _ = run(capsys, "tree", "-e", "tiny-test", "259", "--json")
    assert json.loads(out)["unreachable"] is True


def test_one_byte_notation_everywhere(capsys):
    """Bytes that are not whole characters are ‹f0 9f› in every command (issue 10 item 3)."""
    code, out, _ = run(capsys, "explain", "-e", "gpt2", "🦜\n", "--no-variants")
    assert code == 0 and "‹f0 9f" in out and "\\x" not in out and '"⏎"' in out
    code, out, _ = run(capsys, "tree", "-e", "gpt2", "--hex", "f0")
    assert code == 0 and '"‹f0›"' in out
    code, out, _ = run(capsys, "vocab", "-e", "gpt2", "--hex", "f09f")
    assert code == 0 and "‹f0 9f›" in out
    code, out, _ = run(capsys, "stats", "-e", "gpt2", "the the the 🦜")
    assert code == 0 and "·the" in out and "<f0>" not in out


def test_explain_says_the_cut_off_stopped_merging(capsys, load):
    # under --max-rank 300 " to" + "k" ... stop because the joining tokens rank at or above 300
    tok = load("gpt2")
    code, out, _ = run(capsys, "explain", "-e", "gpt2", " tokenization", "--max-rank", "300", "--no-variants")
    assert code == 0
    why = next(line for line in out.splitlines() if line.startswith("  why: "))
    assert "because of the cut-off" in why and "no adjacent pair of them is a token" not in why
    rank = tok.rank_of(b"ken")
    assert rank is not None and rank >= 300 and f'"k" + "en" is token {rank}' in why
    code, out, _ = run(capsys, "explain", "-e", "gpt2", "zq", "--max-rank", "256", "--no-variants")
    assert "no merge applies: no adjacent pair of bytes is a token\n" in out  # "zq" is no token at all
