"""``tokscope compare`` and ``tokscope languages`` through ``cli.main`` (no subprocess, no network)."""

from __future__ import annotations

import json

import pytest

from tokscope.cli import main

TEXT = "Tokens 👩\u200d👩\u200d👧 and 🇫🇷, 日本語, cafe\u0301."


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def plain_boundaries(tok, text):
    pos, out = 0, set()
    for i in tok.encode(text, disallowed_special=())[:-1]:
        pos += len(tok.decode_bytes([i]))
        out.add(pos)
    return out


def test_compare_json_has_ids_stats_agreement(capsys, load):
    code, out, err = run(capsys, "compare", "-e", "gpt2", "-e", "cl100k_base", "-e", "o200k_base", TEXT, "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    names = [e["name"] for e in doc["encodings"]]
    assert names == ["gpt2", "cl100k_base", "o200k_base"]
    for enc in doc["encodings"]:
        ids = load(enc["name"]).encode(TEXT)
        assert enc["tokens"] == ids and enc["count"] == len(ids)
        assert enc["chars_per_token"] == pytest.approx(len(TEXT) / len(ids))
        assert enc["tokens_per_word"] == pytest.approx(len(ids) / len(TEXT.split()))
    sets = [plain_boundaries(load(n), TEXT) for n in names]
    agreed, union = set.intersection(*sets), set().union(*sets)
    assert doc["agreement"]["agreed"] == len(agreed) and doc["agreement"]["boundaries"] == len(union)
    assert doc["agreement"]["differ"] == len(union - agreed)
    assert doc["text"] == {"chars": len(TEXT), "bytes": len(TEXT.encode()), "words": len(TEXT.split())}
    assert doc["cost"] is None and doc["failed"] == []


def test_compare_default_encodings_and_plain_table_fits_80(capsys):
    code, out, _ = run(capsys, "compare", TEXT, "--price-in", "2.5", "--price-out", "10", "--copies", "1000")
    assert code == 0
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert [line.split()[0] for line in lines[2:5]] == ["gpt2", "cl100k_base", "o200k_base"]
    assert any(line.startswith("cost at $2.5/M input, $10/M output; x1,000") for line in lines)


def test_compare_cost_json(capsys, load):
    code, out, _ = run(capsys, "compare", "-e", "o200k", TEXT, "--json", "--price-in", "3", "--price-out", "$15",
                       "--copies", "1,000")
    assert code == 0
    cost = json.loads(out)["cost"]
    n = len(load("o200k_base").encode(TEXT))
    assert cost["copies"] == 1000 and cost["price_in"] == 3 and cost["price_out"] == 15
    assert cost["encodings"][0]["input"] == pytest.approx(n * 3 / 1e6)
    assert cost["encodings"][0]["output_total"] == pytest.approx(n * 1000 * 15 / 1e6)


def test_compare_cuts_lists_disagreements(capsys, load):
    code, out, _ = run(capsys, "compare", "-e", "gpt2", "-e", "o200k_base", "😀 x", "--json", "--cuts")
    doc = json.loads(out)
    sets = [plain_boundaries(load(n), "😀 x") for n in ("gpt2", "o200k_base")]
    differ = sorted(set().union(*sets) - set.intersection(*sets))
    assert [c["byte"] for c in doc["cuts"]] == differ
    assert any(c["inside"] > 0 for c in doc["cuts"])  # gpt2 cuts inside the emoji
    code, out, _ = run(capsys, "compare", "-e", "gpt2", "-e", "o200k_base", "😀 x", "--cuts")
    inside = next(c for c in doc["cuts"] if c["inside"])
    assert "cuts where not all agree" in out and f"{inside['char']}+{inside['inside']}  gpt2" in out


def test_same_encoding_twice_is_compared_once(capsys):
    code, out, err = run(capsys, "compare", "-e", "o200k", "-e", "o200k_base", "-e", "gpt2", "hi", "--json")
    assert code == 0
    assert [e["name"] for e in json.loads(out)["encodings"]] == ["o200k_base", "gpt2"]
    assert "same encoding" in err and err.count("\n") == 1


def test_one_encoding_fails_others_still_shown(capsys, tmp_path):
    broken = tmp_path / "broken.tiktoken"
    broken.write_text("this is not a tokenizer file\n")
    code, out, err = run(capsys, "compare", "-e", "gpt2", "-e", "no-such-encoding", "-e", str(broken), "hello", "--json")
    assert code == 1
    doc = json.loads(out)
    assert [e["name"] for e in doc["encodings"]] == ["gpt2"]
    assert [f["name"] for f in doc["failed"]] == ["no-such-encoding", str(broken)]
    assert "cannot load 'no-such-encoding'" in err
    assert "Traceback" not in err
    # plain output too: the table is printed, the failure said, exit 1
    code, out, err = run(capsys, "compare", "-e", "no-such-encoding", "-e", "gpt2", "hello")
    assert code == 1 and "gpt2" in out and "no-such-encoding" in err


def test_all_encodings_fail(capsys):
    code, out, err = run(capsys, "compare", "-e", "nope1", "-e", "nope2", "hello")
    assert code == 1 and out == ""
    assert err.strip().splitlines()[-1] == "tokscope: error: no encoding could be compared"


def test_special_token_refused_once_with_hint(capsys):
    code, out, err = run(capsys, "compare", "a<|endoftext|>")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--special-as-text" in err
    code, out, _ = run(capsys, "compare", "a<|endoftext|>", "--special-as-text", "--json")
    assert code == 0
    code, out, _ = run(capsys, "compare", "a<|endoftext|>", "--allow-special", "all", "--json")
    assert code == 0 and all(e["special"] == 1 for e in json.loads(out)["encodings"])


def test_special_only_some_encodings_know(capsys):
    code, out, err = run(capsys, "compare", "-e", "gpt2", "-e", "cl100k", "x<|fim_prefix|>", "--allow-special",
                         "<|fim_prefix|>", "--json")
    # as tiktoken does, a string that is not a special token of an encoding is encoded as text there
    assert code == 0
    doc = json.loads(out)
    assert [e["name"] for e in doc["encodings"]] == ["gpt2", "cl100k_base"]
    assert [e["special"] for e in doc["encodings"]] == [0, 1]
    assert "'<|fim_prefix|>' is not a special token of gpt2; it is encoded as text" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--price-in", "-1"],
        ["--price-in", "abc"],
        ["--price-out", "nan"],
        ["--price-in", "inf"],
        ["--price-in", "1", "--copies", "0"],
        ["--price-in", "1", "--copies", "2.5"],
        ["--copies", "10"],
    ],
)
def test_bad_prices_are_usage_errors(capsys, args):
    code, out, err = run(capsys, "compare", "-e", "gpt2", "hello", *args)
    assert code == 2 and out == ""
    assert err.startswith("tokscope") and len(err.strip().splitlines()) == 1


def test_compare_reads_file_and_stdin(capsys, tmp_path, monkeypatch):
    path = tmp_path / "t.txt"
    path.write_text(TEXT, encoding="utf-8")
    code, out, _ = run(capsys, "compare", "-e", "gpt2", "-f", str(path), "--json")
    assert code == 0 and json.loads(out)["text"]["chars"] == len(TEXT)
    code, out, err = run(capsys, "compare", "-e", "gpt2", "-f", str(tmp_path / "missing.txt"))
    assert code == 1 and "no such file" in err


def test_languages_json_counts(capsys, load):
    from tokscope.sample_texts import language_text, languages

    code, out, err = run(capsys, "languages", "-e", "gpt2", "-e", "o200k_base", "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    codes = [lang["code"] for lang in languages()]
    assert [r["code"] for r in doc["languages"]] == codes and doc["reference"] == "en"
    en = {n: len(load(n).encode(language_text("en"))) for n in ("gpt2", "o200k_base")}
    for row in doc["languages"]:
        for n in ("gpt2", "o200k_base"):
            count = len(load(n).encode(language_text(row["code"])))
            assert row["counts"][n] == count
            assert row["premiums"][n] == pytest.approx(count / en[n])


def test_languages_table_and_chart(capsys):
    code, out, _ = run(capsys, "languages")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["language", "gpt2"]
    assert all(len(line) <= 80 for line in lines)
    assert any("█" in line for line in lines)
    code, out, _ = run(capsys, "languages", "--ascii", "-e", "cl100k")
    assert "#" in out and "█" not in out and "▏" not in out
    code, out, _ = run(capsys, "languages", "--no-chart", "-e", "cl100k")
    assert "tokens per language" not in out


def test_languages_failing_encoding(capsys):
    code, out, err = run(capsys, "languages", "-e", "gpt2", "-e", "bogus", "--no-chart")
    assert code == 1 and "gpt2" in out and "bogus" in err
    code, out, err = run(capsys, "languages", "-e", "bogus")
    assert code == 1 and out == "" and "bogus" in err


def test_compare_takes_more_encodings_than_the_screen_shows(capsys, load):
    names = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
    code, out, _ = run(capsys, "compare", *[a for n in names for a in ("-e", n)], TEXT, "--json")
    assert code == 0
    doc = json.loads(out)
    assert [e["count"] for e in doc["encodings"]] == [len(load(n).encode(TEXT)) for n in names]
