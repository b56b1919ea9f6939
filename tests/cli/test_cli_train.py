"""``tokscope train``, ``baselines``, ``import`` and ``export`` from the command line."""

from __future__ import annotations

import io
import json

import pytest

from tokscope.cli import main
from tokscope.commands.train_options import MergeProgressBar
from tokscope.core.formats import saved as serialize
from tokscope.core.train.trainer import TrainProgress, train
from tokscope.sample_texts import samples_dir
from tokscope.sources import names, registry, saved

PROSE = str(samples_dir() / "prose.txt")
CODE = str(samples_dir() / "code.py")


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(folder))
    yield folder
    for info in saved.list_saved(folder / "tokenizers"):
        registry.forget(info.name)


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_train_json_lists_the_merges_in_order(capsys):
    doc = run_json(capsys, "train", PROSE, CODE, "--vocab-size", "400", "--pattern", "gpt2")
    pattern, _ = names.pattern_for("gpt2")
    texts = [open(p, encoding="utf-8").read() for p in (PROSE, CODE)]
    expected = train(texts, vocab_size=400, pattern=pattern)
    assert [(m["left"], m["right"], m["count"]) for m in doc["merges"]] == [
        (m.left.hex(), m.right.hex(), m.count) for m in expected.merges]
    assert [m["id"] for m in doc["merges"]] == list(range(256, 400))
    assert doc["vocab_size"] == 400 and doc["stop_reason"] == "target" and doc["pattern_name"] == "gpt2"
    assert doc["corpus"]["texts"] == 2 and doc["tokens_after"] == expected.lengths[-1]
    assert doc["merges"][-1]["tokens_after"] == expected.lengths[-1]


def test_train_tie_and_min_frequency_flags(capsys):
    first = run_json(capsys, "train", PROSE, "--merges", "40", "--tie", "first", "--pattern", "words")
    lexical = run_json(capsys, "train", PROSE, "--merges", "40", "--tie", "lexical", "--pattern", "words")
    assert first["tie"] == "first" and lexical["tie"] == "lexical"
    assert [m["count"] for m in first["merges"]] == [m["count"] for m in lexical["merges"]]
    few = run_json(capsys, "train", PROSE, "--merges", "5000", "--min-frequency", "20")
    assert few["stop_reason"] == "min_frequency" and few["stopped_early"]
    assert all(m["count"] >= 20 for m in few["merges"]) and len(few["merges"]) < 5000


def test_train_verbose_shows_the_corpus_after_each_merge(tmp_path, capsys):
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("aaabdaaabac")
    code, out, err = run(capsys, "train", str(corpus), "--merges", "3", "--pattern", "none", "--verbose")
    assert code == 0
    # the tokens in tokscope's one notation (spaces inside a token show as ·), separated by spaces
    assert out.splitlines()[:7] == [
        "corpus: a a a b d a a a b a c  (11 tokens)",
        'merge 1: "a" + "a" -> "aa" (id 256, count 4)',
        "  now: aa a b d aa a b a c  (9 tokens)",
        'merge 2: "aa" + "a" -> "aaa" (id 257, count 2)',
        "  now: aaa b d aaa b a c  (7 tokens)",
        'merge 3: "aaa" + "b" -> "aaab" (id 258, count 2)',
        "  now: aaab d aaab a c  (5 tokens)",
    ]
    assert "length: 11 -> 5 tokens" in out


def test_train_sweep_text_and_json(capsys):
    code, out, err = run(capsys, "train", PROSE, "--vocab-size", "500", "--sweep", "300,400,500")
    assert code == 0 and "sweep:" in out
    doc = run_json(capsys, "train", PROSE, "--vocab-size", "500", "--sweep", "300,400,500")
    sweep = doc["sweep"]
    assert [p["vocab_size"] for p in sweep] == [300, 400, 500]
    assert [p["tokens"] for p in sweep] == [doc["merges"][p["merges"] - 1]["tokens_after"] for p in sweep]
    assert sweep[0]["tokens"] > sweep[1]["tokens"] > sweep[2]["tokens"]
    assert sweep[2]["chars_per_token"] == pytest.approx(doc["corpus"]["chunk_chars"] / sweep[2]["tokens"], abs=1e-3)
    for line in ("    300", "    400", "    500"):
        assert any(row.startswith(line) for row in out.splitlines())


def test_train_save_output_export_then_use_everywhere(tmp_path, capsys, data_dir):
    out_json = tmp_path / "mine.json"
    out_tt = tmp_path / "mine.tiktoken"
    code, out, err = run(capsys, "train", PROSE, "--vocab-size", "300", "-o", str(out_json), "--save",
                         "--name", "cli-mine", "--special", "<eos>", "--export-tiktoken", str(out_tt))
    assert code == 0, err
    assert "use it with -e cli-mine" in out
    assert (data_dir / "tokenizers" / "cli-mine.json").is_file() and out_json.is_file() and out_tt.is_file()
    listed = run_json(capsys, "encodings")["encodings"]
    mine = [e for e in listed if e["name"] == "cli-mine"]
    assert mine and mine[0]["kind"] == "saved" and mine[0]["n_vocab"] == 301
    by_name = run_json(capsys, "encode", "-e", "cli-mine", "the museum<eos>", "--allow-special", "all")
    by_path = run_json(capsys, "encode", "-e", str(out_json), "the museum<eos>", "--allow-special", "all")
    assert [t["id"] for t in by_name["tokens"]] == [t["id"] for t in by_path["tokens"]]
    assert by_name["tokens"][-1]["id"] == 300 and by_name["tokens"][-1]["special"]
    # the same name again is refused (before training) unless --force
    code, out, err = run(capsys, "train", PROSE, "--vocab-size", "300", "--save", "--name", "cli-mine")
    assert code == 2 and "already exists" in err
    code, out, err = run(capsys, "train", PROSE, "--vocab-size", "290", "--save", "--name", "cli-mine", "--force")
    assert code == 0
    assert run_json(capsys, "encodings")["encodings"][-1]["n_vocab"] == 290

    # import the exported ranks back: same encodings
    back = tmp_path / "back.json"
    doc = run_json(capsys, "import", str(out_tt), "--pattern", "gpt2", "--special", "<eos>", "-o", str(back))
    assert doc["vocab_size"] == 300 and doc["written"]["output"] == str(back)
    text = open(CODE, encoding="utf-8").read()
    a = run_json(capsys, "encode", "-e", str(out_json), "-f", CODE)
    b = run_json(capsys, "encode", "-e", str(back), "-f", CODE)
    assert [t["id"] for t in a["tokens"]] == [t["id"] for t in b["tokens"]]
    assert "".join(t["text"] for t in a["tokens"]) == text
    # export any encoding, then import it
    exported = tmp_path / "again.tiktoken"
    code, out, err = run(capsys, "export", "-e", str(back), "-o", str(exported))
    assert code == 0 and exported.read_bytes() == out_tt.read_bytes()


def test_baselines_cli(capsys):
    doc = run_json(capsys, "baselines", PROSE, "--split", "0.5", "--vocab-size", "400", "--pattern", "words")
    assert set(doc) >= {"character", "word", "bpe", "unseen_words", "crossing", "split_at"}
    assert doc["bpe"]["test_oov"] == 0 and doc["word"]["oov_rate"] > 0
    assert doc["crossing"]["with_pattern"]["crossing"] == 0
    assert doc["crossing"]["without_pattern"]["crossing"] > 0
    assert all("".join(u["bpe_text"]) == u["word"] for u in doc["unseen_words"])
    code, out, err = run(capsys, "baselines", PROSE, "--vocab-size", "400")
    assert code == 0 and "most common unseen words" in out and "crossing a word boundary" in out


def test_progress_bar_draws_on_one_line():
    stream = io.StringIO()
    bar = MergeProgressBar(stream)
    bar(TrainProgress(0, 10, b"", b"", 0, 100))
    bar(TrainProgress(10, 10, b"a", b"b", 7, 90))
    bar.close()
    text = stream.getvalue()
    assert "10/10 merges" in text and '"a" + "b" x7' in text and "\n" not in text


# ----- bad input: one line, exit 1 or 2, nothing written ---------------------------------------------


@pytest.mark.parametrize(
    "setup, argv, code, message",
    [
        (lambda d: d.joinpath("empty.txt").write_text(""), ["train", "{d}/empty.txt", "--merges", "5"], 1,
         "corpus is empty"),
        # nothing the pattern keeps (the named "words" pattern keeps whitespace, so a custom one here)
        (lambda d: d.joinpath("ws.txt").write_text(" \n "), ["train", "{d}/ws.txt", "--merges", "5", "--pattern",
                                                            r"\S+"], 1, "corpus is empty"),
        (lambda d: d.joinpath("bin.dat").write_bytes(b"PK\x03\x04\x00\xff\xfe"), ["train", "{d}/bin.dat",
                                                                                   "--merges", "5"], 1, "binary"),
        (None, ["train", "{d}/missing.txt", "--merges", "5"], 1, "no such file"),
        (None, ["train", PROSE, "--vocab-size", "100"], 2, "at least 256"),
        (None, ["train", PROSE], 2, "--vocab-size --merges is required"),
        (None, ["train", PROSE, "--merges", "5", "--vocab-size", "300"], 2, "not allowed with"),
        (None, ["train", PROSE, "--merges", "5", "--special", "<s>", "--special", "<s>"], 2, "given twice"),
        (None, ["train", PROSE, "--merges", "5", "--pattern", "(?<"], 2, "invalid pattern"),
        (None, ["train", PROSE, "--merges", "5", "--min-frequency", "0"], 2, "at least 1"),
        (None, ["train", PROSE, "--merges", "5", "--sweep", "100"], 2, "outside 256..261"),
        (None, ["train", PROSE, "--merges", "5", "--sweep", "x"], 2, "--sweep"),
        (None, ["train", PROSE, "--merges", "5", "-o", "{d}/nowhere/out.json"], 1, "does not exist"),
        (None, ["train", PROSE, "--merges", "5", "-o", "{d}"], 1, "is a directory"),
        (None, ["train", PROSE, "--merges", "5", "--save", "--name", "../up"], 2, "cannot be a saved"),
        (None, ["baselines", PROSE, "--split", "1.5"], 2, "between 0 and 1"),
        (lambda d: d.joinpath("one.txt").write_text("word"), ["baselines", "{d}/one.txt"], 1, "too short"),
        (None, ["import", PROSE, "--pattern", "gpt2", "-o", "{d}/x.json"], 1, "base64-token rank"),
        (None, ["import", PROSE, "--pattern", "gpt2"], 2, "-o OUT.json"),
        (lambda d: d.joinpath("bad.json").write_text('{"format": "tokscope-bpe", "version": 9}'),
         ["encode", "-e", "{d}/bad.json", "hi"], 1, "newer tokscope"),
    ],
)
def test_bad_input(tmp_path, capsys, setup, argv, code, message):
    if setup:
        setup(tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    got, out, err = run(capsys, *[a.replace("{d}", str(tmp_path)) for a in argv])
    assert got == code
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert out == ""
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no output file, half or whole


def test_small_corpus_trains_what_it_can_and_says_so(tmp_path, capsys):
    corpus = tmp_path / "small.txt"
    corpus.write_text("abab cd")
    out_path = tmp_path / "small.json"
    code, out, err = run(capsys, "train", str(corpus), "--vocab-size", "1000", "-o", str(out_path))
    assert code == 0
    assert "note: stopped after 1 of 744 merges" in err
    assert serialize.load(out_path).vocab_size == 257
