"""``tokscope diff A B [TEXT | -f FILE]`` in a real child process: exit codes 0 (same), 1 (differ),
2 (error), the report's first line, ``--json``'s schema, TEXT and ``-f FILE``.

The tokenizer.json files are built here by Hugging Face ``tokenizers`` from GPT-2's first ranks
(see ``tests/core/test_diff.py``), once as converted, once with Llama 3's pre-tokenizer pattern.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

import hf_files  # noqa: E402
import tokenizers  # noqa: E402
from tokenizers import AddedToken, Regex, decoders, models, pre_tokenizers  # noqa: E402

SMALL = 2000


def _write(folder: Path, name: str, ranks: dict[bytes, int], pre=None) -> Path:
    vocab, merges = hf_files.tiktoken_to_hf(ranks)
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre or pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    path = folder / f"{name}.json"
    tok.save(str(path))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory, load):
    folder = tmp_path_factory.mktemp("diff")
    ranks = {data: rank for data, rank in load("gpt2").ranks.items() if rank < SMALL}
    changed = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(hf_files.LLAMA3), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=True),
    ])
    a = _write(folder, "a", ranks)
    copy = folder / "copy.json"
    copy.write_bytes(a.read_bytes())
    return {"a": str(a), "copy": str(copy), "changed": str(_write(folder, "changed", ranks, changed)),
            "folder": folder}


def lines(result) -> list[str]:
    return result.stdout.decode("utf-8").splitlines()


def test_same_exits_0(tokscope, files):
    result = tokscope("diff", files["a"], files["copy"], "--seconds", "0.5")
    assert result.returncode == 0, result.stderr
    out = lines(result)
    assert out[0].startswith("same: same vocabulary and ids")
    assert any(line.startswith("splits (special tokens encoded as ordinary text; compared by ids)") for line in out)
    assert result.stderr == b""


def test_differ_exits_1_and_shows_both_splits(tokscope, files):
    result = tokscope("diff", files["a"], files["changed"], "--seconds", "20")
    assert result.returncode == 1, result.stderr
    out = lines(result)
    assert out[0].startswith("differ: same vocabulary and ids; split differently on a ")
    at = next(k for k, line in enumerate(out) if line.startswith("  shortest text found: "))
    assert out[at + 1].startswith("  A ") and out[at + 2].startswith("  B ")
    assert out[at + 1].split("(")[-1] != out[at + 2].split("(")[-1]  # other ids
    assert "≠ A" in next(line for line in out if line.lstrip().startswith("pre-tokenizer"))


def test_openai_encodings_differ(tokscope):
    result = tokscope("diff", "cl100k_base", "o200k_base", "--seconds", "5")
    assert result.returncode == 1, result.stderr
    assert lines(result)[0].startswith("differ: ")


def test_json_schema(tokscope, files):
    result = tokscope("diff", files["a"], files["changed"], "--seconds", "20", "--json")
    assert result.returncode == 1, result.stderr
    out = json.loads(result.stdout)
    assert out["schema"] == 1 and out["verdict"] == "differ"
    assert set(out) == {"schema", "verdict", "a", "b", "vocab", "added", "stages", "search"}
    assert set(out["a"]) == {"name", "kind", "n_vocab"}
    assert out["vocab"]["same_ids"] is True and out["vocab"]["only_a"] == 0
    assert [s["stage"] for s in out["stages"]][:3] == ["kind", "normalizer", "pre-tokenizer"]
    search = out["search"]
    assert search["special_tokens"] == "text" and search["compared"] == "ids" and search["text_given"] is False
    found = search["difference"]
    assert set(found) == {"text", "chars", "source", "category", "minimal", "first_char", "a", "b"}
    assert found["chars"] == len(found["text"]) and found["minimal"] is True
    for side in ("a", "b"):
        pieces = found[side]
        assert set(pieces[0]) == {"id", "token", "bytes", "start", "end", "byte_start", "byte_end"}
        assert b"".join(bytes.fromhex(p["bytes"]) for p in pieces) == found["text"].encode()
    assert [p["id"] for p in found["a"]] != [p["id"] for p in found["b"]]


def test_text_argument_is_searched_first(tokscope, files):
    result = tokscope("diff", files["a"], files["copy"], "hello <|endoftext|> world", "--seconds", "0", "--json")
    assert result.returncode == 0
    search = json.loads(result.stdout)["search"]
    assert search["text_given"] is True and search["text_differs"] is False and search["tried"] == 1


def test_file_text_that_differs_is_shrunk(tokscope, files, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("Both cut this line alike.\nIn 1999 they part.\n", encoding="utf-8")
    result = tokscope("diff", files["a"], files["changed"], "-f", str(text), "--seconds", "20", "--json")
    assert result.returncode == 1
    search = json.loads(result.stdout)["search"]
    assert search["text_given"] is True and search["text_differs"] is True
    assert len(search["difference"]["text"]) <= 3


@pytest.mark.parametrize("args", [
    ("gpt2", "no-such-encoding"),
    ("gpt2", "gpt2", "-f", "/no/such/file.txt"),
    ("gpt2", "{bad}.json"),
])
def test_errors_exit_2_with_one_line(tokscope, files, args):
    bad = files["folder"] / "{bad}.json"
    bad.write_text("{not json", encoding="utf-8")
    args = tuple(str(bad) if a == "{bad}.json" else a for a in args)
    result = tokscope("diff", *args)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert err.startswith("tokscope: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert result.stdout == b""


def test_usage_errors_exit_2(tokscope):
    assert tokscope("diff", "gpt2").returncode == 2
    assert tokscope("diff", "gpt2", "gpt2", "--seconds", "-1").returncode == 2
    assert tokscope("diff", "gpt2", "gpt2", "TEXT", "-f", "x").returncode == 2
