"""The command line on ``tokenizer.json`` tokenizers of every kind (the families of
``tests/core/hf_files.py``): ``explain``, ``tree`` and ``vocab`` through ``core.why`` and
``core.facts``, unreachable tokens marked, and every other command swept across the kinds.

The files are built once per session; the commands run in this process through ``cli.main`` (the
registry keeps each file loaded), and a few in a child process to see the exit code and the one
line a user gets.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tokscope.cli import main
from tokscope.core.explain import merge_trees as core_merges
from tokscope.core.explain import why as core_why
from tokscope.sources import registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
pytest.importorskip("tokenizers")
import hf_files

FAMILIES = hf_files.FAMILIES
BPE = ("gpt2", "roberta", "llama3", "qwen2", "deepseek", "llama2", "mistral-metaspace", "gemma")
BYTE_LEVEL = ("gpt2", "roberta", "llama3", "qwen2", "deepseek")
KIND = {**{n: "byte-level BPE" for n in BYTE_LEVEL}, "llama2": "byte-fallback BPE", "mistral-metaspace":
        "byte-fallback BPE", "gemma": "byte-fallback BPE", "bert": "WordPiece", "t5": "Unigram",
        "xlmr-bytefallback": "Unigram", "wordlevel": "WordLevel"}
METHOD = {**{n: "BPE" for n in BPE}, "bert": "WordPiece", "t5": "Unigram", "xlmr-bytefallback": "Unigram",
          "wordlevel": "WordLevel"}
#: families whose decode gives back any text exactly (bytes, byte fallback, or Unigram with byte fallback)
#: (RoBERTa adds a space before the text; the Mistral family's decoder has no byte fallback)
LOSSLESS = ("gpt2", "llama3", "qwen2", "deepseek", "llama2", "gemma", "xlmr-bytefallback")
TEXT = "Naïve café, 12345 hello wörld! 𓀀x ok"


@pytest.fixture(scope="session")
def files(tmp_path_factory):
    """``family -> path`` of every family's tokenizer.json that can be built here."""
    folder = tmp_path_factory.mktemp("kinds")
    out = {}
    for name in FAMILIES:
        try:
            out[name] = str(hf_files.save(name, folder))
        except hf_files.Missing:
            pass
    return out


@pytest.fixture
def path_of(files):
    def get(name: str) -> str:
        if name not in files:
            pytest.skip(f"{name}: a package it needs is not installed")
        return files[name]

    return get


def run(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def ok(capsys, *argv) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 0 and "internal error" not in err, (argv, err)
    return out


def merge_lines(path: str) -> list[list[str]]:
    """The merge list of a tokenizer.json, each line as its two tokens, in file order."""
    found = json.loads(Path(path).read_text(encoding="utf-8"))["model"]["merges"]
    return [m if isinstance(m, list) else m.split(" ") for m in found]


def walk(node: dict):
    yield node
    for child in node["children"]:
        yield from walk(child)


def block(out: str, title: str) -> str:
    """The lines of plain ``explain`` output from the chunk whose title holds ``title`` to the next chunk."""
    parts = re.split(r"\n(?=chunk \d+: )", out)
    found = [p for p in parts if p.startswith("chunk ") and title in p.splitlines()[0]]
    assert found, (title, out)
    return found[0]


# ----- explain -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FAMILIES)
def test_explain_json_every_kind(capsys, path_of, name):
    path = path_of(name)
    tok = registry.load(path)
    doc = json.loads(ok(capsys, "explain", "-e", path, TEXT, "--json"))
    assert doc["kind"] == KIND[name] and doc["max_rank"] is None
    assert doc["tokens"] == tok.encode(TEXT, disallowed_special=())
    assert "".join(TEXT[c["start"]:c["end"]] for c in doc["chunks"]) == "".join(c["text"] for c in doc["chunks"])
    lines = merge_lines(path) if name in BPE else []
    for c in doc["chunks"]:
        assert [p["id"] for p in c["pieces"]] == c["tokens"] and c["summary"]
        assert all(p["token"] == tok.token_str(p["id"]) for p in c["pieces"])
        if c["special"]:  # an added token (some families add "hello world" or "Wörld")
            assert c["method"] == "added" and len(c["tokens"]) == 1 and c["form"] is None
            continue
        assert c["method"] == METHOD[name]
        assert c["form"] == (tok.chunk_form(TEXT, c["start"], c["end"]) or c["text"])
        if name in BPE:
            symbols = [s["id"] for s in c["bpe"]["initial"]]
            for step in c["bpe"]["steps"]:  # the rank of a merge is its line in the merge list
                assert lines[step["rank"]] == step["merge"] == [tok.token_str(step["left"]), tok.token_str(step["right"])]
                assert step["before"] == symbols
                i = step["position"]
                assert symbols[i:i + 2] == [step["left"], step["right"]]
                assert min(x["rank"] for x in step["candidates"] if x["rank"] is not None) == step["rank"]
                symbols[i:i + 2] = [step["result"]]
                assert step["after"] == symbols
            if c["bpe"]["replayed"] and not c["bpe"]["whole_word"]:
                assert symbols == c["tokens"]
            for tree in c["trees"]:
                for node in walk(tree):
                    if node["children"]:
                        left, right = node["children"]
                        assert lines[node["merge_rank"]] == [left["token"], right["token"]]
                assert bytes.fromhex(tree["bytes"]) == b"".join(
                    bytes.fromhex(n["bytes"]) for n in walk(tree) if not n["children"])
        elif name == "bert":
            assert [s["id"] for s in c["wordpiece"]["steps"]] == c["tokens"] or c["wordpiece"]["unknown"]
        elif METHOD[name] == "Unigram":
            u = c["unigram"]
            assert "".join(u["best"]["pieces"]) == c["form"]
            assert all(a["score"] <= u["best"]["score"] for a in u["alternatives"])
            if u["alternatives"]:
                assert u["margin"] == pytest.approx(u["best"]["score"] - u["alternatives"][0]["score"])
        else:
            assert c["wordlevel"]["known"] == (c["tokens"] != [tok.unknown_id])


@pytest.mark.parametrize("name", FAMILIES)
def test_explain_plain_every_kind(capsys, path_of, name):
    path = path_of(name)
    tok = registry.load(path)
    out = ok(capsys, "explain", "-e", path, TEXT, "--no-variants")
    n = len(tok.encode(TEXT, disallowed_special=()))
    assert out.splitlines()[0].startswith(f"{tok.name} ({KIND[name]}): ") and out.splitlines()[0].endswith(f", {n} tokens")
    ordinary = re.findall(r"^chunk \d+: .*  (\S+)$", out, re.MULTILINE)
    assert set(ordinary) <= {METHOD[name], "added"}
    assert out.count("  pieces: ") == ordinary.count(METHOD[name]) > 0 and "  why: " in out
    if name in BPE:
        assert re.search(r"^ +1\. .* -> .*  rank \d+ \(the lowest\)", out, re.MULTILINE)
        assert "merge trees (each token by its lowest-rank merge):" in out
    if "variants:" in ok(capsys, "explain", "-e", path, "hello"):
        assert "variants:" not in out


def test_bert_unknown_word_says_which_word_and_why(capsys, path_of):
    path = path_of("bert")
    out = ok(capsys, "explain", "-e", path, "hello 𓀀x world", "--no-variants")
    unknown = block(out, '"𓀀x"')
    assert 'no match at character 0: no entry matches the start of "𓀀x", not even "𓀀", so the whole word "𓀀x" is [UNK] 100' in unknown
    assert "why: no token matches at character 0 ('𓀀'), so the whole word is [UNK]" in unknown
    assert 'pieces: "[UNK]" 100' in unknown
    assert "[UNK]" not in block(out, '"hello"')
    doc = json.loads(ok(capsys, "explain", "-e", path, "hello 𓀀x world", "--json"))
    wp = next(c["wordpiece"] for c in doc["chunks"] if c["text"] == "𓀀x")
    assert wp["unknown"] and wp["reason"] == "no_match" and wp["failed_at"] == 0 and wp["word"] == "𓀀x"
    long = ok(capsys, "explain", "-e", path, "a" * 150, "--no-variants")
    assert "150 characters, more than max_input_chars_per_word (100): the whole word is [UNK] 100" in long
    assert '"[UNK]" 100' in long
    # the form the model saw: BERT lowercases and strips accents
    assert 'form (what the model saw): "naive"' in ok(capsys, "explain", "-e", path, "Naïve", "--no-variants")


def test_wordpiece_greedy_steps(capsys, path_of):
    path = path_of("bert")
    tok = registry.load(path)
    doc = json.loads(ok(capsys, "explain", "-e", path, "unaffable", "--json"))
    steps = doc["chunks"][0]["wordpiece"]["steps"]
    assert "".join(s["token"].removeprefix("##") for s in steps) == "unaffable" and len(steps) > 1
    assert all(s["token"].startswith("##") for s in steps[1:]) and not steps[0]["token"].startswith("##")
    assert [s["id"] for s in steps] == tok.encode("unaffable")
    out = ok(capsys, "explain", "-e", path, "unaffable", "--no-variants")
    for number, s in enumerate(steps, 1):
        assert f'{number}. [{s["start"]}:{s["end"]}] "{s["token"]}" {s["id"]}' in out


def test_llama2_byte_fallback_shows_the_bytes(capsys, path_of):
    path = path_of("llama2")
    tok = registry.load(path)
    out = ok(capsys, "explain", "-e", path, "x 𓀀 y", "--no-variants")
    assert re.search(r"^  symbols: .*‹f0› ‹93› ‹80› ‹80›", out, re.MULTILINE)
    assert 'byte fallback: "𓀀" is not in the vocabulary: its UTF-8 bytes ‹f0 93 80 80› are 4 byte tokens' in out
    pieces = next(line for line in out.splitlines() if line.startswith("  pieces: "))
    assert f"‹f0› {tok.token_to_id('<0xF0>')}" in pieces and "<0x" not in pieces
    assert 'form (what the model saw): "▁x▁𓀀▁y"' in out
    doc = json.loads(ok(capsys, "explain", "-e", path, "x 𓀀 y", "--json"))
    c = doc["chunks"][0]
    assert [p["byte"] for p in c["pieces"] if p["byte"] is not None] == [0xF0, 0x93, 0x80, 0x80]
    assert [s["byte"] for s in c["bpe"]["initial"] if s["kind"] == "byte"] == [0xF0, 0x93, 0x80, 0x80]


def test_a_paragraph_chunk_lists_its_merges_without_every_pair(capsys, path_of):
    """Llama 2 does not pre-split: a paragraph is one chunk; its merges are listed, but not the
    parts after each one (text) nor every candidate pair (JSON)."""
    path = path_of("llama2")
    text = "the keeper of the lighthouse " * 12
    out = ok(capsys, "explain", "-e", path, text, "--no-variants")
    steps = re.findall(r"^ +\d+\. .*  rank \d+ \(the lowest\)   (.*)$", out, re.MULTILINE)
    assert steps and all(s.startswith("at symbol ") for s in steps[:5])
    doc = json.loads(ok(capsys, "explain", "-e", path, text, "--json"))
    bpe = doc["chunks"][0]["bpe"]
    assert not bpe["detail"] and len(bpe["initial"]) > 256 and "candidates" not in bpe["steps"][0]
    symbols = [x["id"] for x in bpe["initial"]]
    for step in bpe["steps"]:
        i = step["position"]
        assert symbols[i:i + 2] == [step["left"], step["right"]]
        symbols[i:i + 2] = [step["result"]]
    assert symbols == doc["tokens"]
    short = json.loads(ok(capsys, "explain", "-e", path, "the keeper", "--json"))["chunks"][0]["bpe"]
    assert short["detail"] and "candidates" in short["steps"][0]


def test_t5_scores_beside_the_next_best(capsys, path_of):
    path = path_of("t5")
    tok = registry.load(path)
    text = "the lighthouse keeper"
    want = core_why.explain_at(tok, text, 6)
    out = ok(capsys, "explain", "-e", path, text, "--no-variants")
    chunk = block(out, '"lighthouse"')
    best = " + ".join(f'"{p}"' for p in want.unigram.best.pieces)
    assert f"  best: {best}  score {want.unigram.best.score:.3f}" in chunk
    nexts = [line for line in chunk.splitlines() if line.startswith("  next: ")]
    assert len(nexts) == len(want.unigram.alternatives) == core_why.NBEST
    first = want.unigram.alternatives[0]
    assert f"score {first.score:.3f} ({want.unigram.best.score - first.score:.3f} below the best)" in nexts[0]
    for t in want.tokens:
        assert f"{t} ({tok.model.score(t):.3f})" in chunk
    one = block(ok(capsys, "explain", "-e", path, text, "--no-variants", "--nbest", "1"), '"lighthouse"')
    assert len([line for line in one.splitlines() if line.startswith("  next: ")]) == 1
    doc = json.loads(ok(capsys, "explain", "-e", path, text, "--json", "--nbest", "2"))
    u = next(c["unigram"] for c in doc["chunks"] if c["text"] == "lighthouse")
    assert len(u["alternatives"]) == 2 and u["best"]["ids"] == list(want.unigram.best.ids)
    assert u["scores"] == [pytest.approx(tok.model.score(t)) for t in want.tokens]


def test_unigram_unknown_and_byte_fallback(capsys, path_of):
    out = ok(capsys, "explain", "-e", path_of("t5"), "☃", "--no-variants")
    assert '"☃" (unknown)' in out and '"<unk>" 0' in out
    out = ok(capsys, "explain", "-e", path_of("xlmr-bytefallback"), "☃", "--no-variants")
    assert "its UTF-8 bytes ‹e2 98 83› are 3 byte tokens" in out and re.search(r"‹e2› \d+ \(", out)


def test_byte_level_merge_list_shows_bytes_not_the_alphabet(capsys, path_of):
    path = path_of("gpt2")
    out = ok(capsys, "explain", "-e", path, " naïve", "--no-variants")
    assert "form (what the model saw)" not in out  # Ġnaïve is only the alphabet's spelling of the same bytes
    assert '"‹c3›"' in out and "Ã" not in out.split("  why: ")[0]
    # a normalizer that changes the text shows the form: Qwen 2 composes with NFC
    out = ok(capsys, "explain", "-e", path_of("qwen2"), "cafe\u0301", "--no-variants")
    assert 'form (what the model saw): "café"' in out  # decoded from the alphabet (cafÃ©)
    doc = json.loads(ok(capsys, "explain", "-e", path_of("qwen2"), "cafe\u0301", "--json"))
    assert doc["chunks"][0]["form"] == "cafÃ©"


def test_added_and_special_tokens_are_their_own_chunks(capsys, path_of):
    path = path_of("bert")
    out = ok(capsys, "explain", "-e", path, "[CLS] hi", "--allow-special", "all", "--no-variants")
    chunk = block(out, '"[CLS]"')
    assert chunk.splitlines()[0].endswith("added") and "is the special token 101" in chunk
    code, _, err = run(capsys, "explain", "-e", path, "[CLS] hi")
    assert code == 1 and "--allow-special" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("name", "args", "words"),
    [
        ("bert", ["--max-rank", "300"], "a rank cut-off (--max-rank) needs byte-level BPE from ranks; bert is WordPiece"),
        ("llama2", ["--max-rank", "0"], "llama2 is byte-fallback BPE"),
        ("t5", ["--pairs"], "--pairs (the candidate pairs of each merge) needs BPE; t5 is Unigram"),
        ("wordlevel", ["--pairs"], "wordlevel is WordLevel"),
        ("llama2", ["--nbest", "2"], "--nbest (the next-best segmentations) needs Unigram; llama2 is byte-fallback BPE"),
        ("gpt2", ["--nbest", "2"], "needs Unigram; gpt2 is byte-level BPE"),
    ],
)
def test_options_of_one_kind_name_the_kind(capsys, path_of, name, args, words):
    code, out, err = run(capsys, "explain", "-e", path_of(name), "hello", *args)
    assert code == 1 and out == "" and words in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_builtin_nbest_and_pairs(capsys):
    """The byte-level BPE from ranks explain is as it was; --nbest is refused for it."""
    code, _, err = run(capsys, "explain", "-e", "gpt2", "hello", "--nbest", "1")
    assert code == 1 and "gpt2 is byte-level BPE" in err
    out = ok(capsys, "explain", "-e", "gpt2", "hello", "--pairs")
    assert out.splitlines()[0] == "gpt2: 1 chunk, 1 token" and "candidates: " in out


def test_the_reported_crashes_in_a_child_process(tokscope, path_of):
    """The commands of the report: one line on error, never 'internal error'; here they work."""
    for name, words in (("bert", '"[UNK]" 100'), ("llama2", '"☃" 31666')):
        done = tokscope("explain", "-e", path_of(name), "naïve ☃ hello", text=True)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert words in done.stdout
    done = tokscope("explain", "-e", path_of("llama2"), "𓀀", text=True)
    assert done.returncode == 0 and "‹f0› ‹93› ‹80› ‹80›" in done.stdout
    done = tokscope("explain", "-e", path_of("t5"), "hi", "--max-rank", "3", text=True)
    assert done.returncode == 1 and done.stdout == "" and done.stderr.strip().endswith("t5 is Unigram")


# ----- explain --token, tree and vocab: unreachable tokens -------------------------------------------


#: a token of each family that ordinary encoding never produces, by spelling, and why
UNREACHABLE = {
    "llama2": ("<0x41>", "the character 'A', which is itself a token"),
    "gemma": ("<0x41>", "the character 'A', which is itself a token"),
    "bert": ("[unused0]", "turns its text into '[' + 'unused' + '##0' + ']'"),
    "xlmr-bytefallback": ("<0x21>", "the character '!', which is itself a token"),
}


@pytest.mark.parametrize("name", FAMILIES)
def test_unreachable_flags_agree_with_the_core(capsys, path_of, name):
    """vocab --json marks exactly the tokens the core finds unreachable (a token is unreachable
    when encoding its own text does not give it back), for every kind."""
    path = path_of(name)
    tok = registry.load(path)
    doc = json.loads(ok(capsys, "vocab", "-e", path, "--hex", "30", "--limit", "0", "--json"))
    assert doc["count"] > 0
    flagged = {t["id"] for t in doc["tokens"] if t["unreachable"]}
    assert flagged == {t["id"] for t in doc["tokens"] if core_merges.is_unreachable(tok, t["id"])}
    assert all(t["token"] == tok.token_str(t["id"]) for t in doc["tokens"])
    reachable = tok.encode("hello", disallowed_special=())[0]
    for args in (["vocab", "--id", reachable], ["explain", "--token", reachable], ["tree", reachable]):
        out = ok(capsys, *args[:1], "-e", path, *args[1:])
        assert "unreachable" not in out


@pytest.mark.parametrize("name", sorted(UNREACHABLE))
def test_unreachable_token_is_flagged_and_explained(capsys, path_of, name):
    path = path_of(name)
    tok = registry.load(path)
    spelling, reason = UNREACHABLE[name]
    token_id = tok.token_to_id(spelling)
    assert core_merges.is_unreachable(tok, token_id)
    assert tok.encode(tok.token_bytes(token_id).decode("utf-8", "replace").strip(), disallowed_special=()) != [token_id]
    line = ok(capsys, "vocab", "-e", path, "--id", token_id)
    assert line.rstrip().endswith(" unreachable") and f'spelled "{spelling}"' in line
    out = ok(capsys, "explain", "-e", path, "--token", token_id, "--no-variants")
    assert "unreachable: ordinary encoding never produces this token" in out and reason in out
    doc = json.loads(ok(capsys, "explain", "-e", path, "--token", token_id, "--json"))
    assert doc["unreachable"] is True and doc["token"] == spelling and reason in doc["summary"]
    assert doc["chunk"]["tokens"] != [token_id]
    out = ok(capsys, "tree", "-e", path, token_id)
    assert "unreachable: ordinary encoding never produces this token" in out and reason in out
    assert json.loads(ok(capsys, "tree", "-e", path, token_id, "--json"))["unreachable"] is True


def test_byte_fallback_tokens_are_bytes_in_vocab(capsys, path_of):
    path = path_of("llama2")
    out = ok(capsys, "vocab", "-e", path, "--regex", "^<0xE[23]>$")
    rows = out.splitlines()
    assert len(rows) == 2
    assert "‹e2›" in rows[0] and 'spelled "<0xE2>"' in rows[0] and rows[0].split()[3] == "e2"
    e2 = registry.load(path).token_to_id("<0xE2>")
    token = ok(capsys, "explain", "-e", path, "--token", e2)
    assert token.splitlines()[0] == f"llama2 (byte-fallback BPE): token {e2} ‹e2›"
    assert "stands for the byte e2" in token and "unreachable" not in token


# ----- tree ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FAMILIES)
def test_tree_every_kind(capsys, path_of, name):
    path = path_of(name)
    tok = registry.load(path)
    ids = [i for i in tok.encode("the keeper of lighthouses", disallowed_special=()) if not tok.is_added(i)]
    token_id = max(ids, key=lambda i: len(tok.token_bytes(i)))
    doc = json.loads(ok(capsys, "tree", "-e", path, token_id, "--json"))
    assert doc["id"] == token_id and doc["kind"] == KIND[name] and doc["token"] == tok.token_str(token_id)
    out = ok(capsys, "tree", "-e", path, token_id)
    if name in BPE:
        lines = merge_lines(path)
        nodes = list(walk(doc))
        assert len(out.splitlines()) >= len(nodes) > 1
        for node, line in zip(nodes, out.splitlines()):
            assert str(node["id"]) in line
            if node["children"]:
                assert line.endswith(f" rank {node['merge_rank']}")
                assert lines[node["merge_rank"]] == [c["token"] for c in node["children"]]
        assert b"".join(bytes.fromhex(n["bytes"]) for n in nodes if not n["children"]) == tok.token_bytes(token_id)
        uses = json.loads(ok(capsys, "tree", "-e", path, doc["children"][0]["id"], "--used-in", "--json"))["used_in"]
        assert any(u["id"] == token_id for u in uses)
    else:
        assert doc["children"] == [] and f"{KIND[name]} has no merges" in out
        code, _, err = run(capsys, "tree", "-e", path, token_id, "--used-in")
        assert code == 1 and f"is {KIND[name]}" in err and len(err.strip().splitlines()) == 1


def test_tree_text_that_is_one_token_by_another_spelling(capsys, path_of):
    """``--text hello`` means ``▁hello`` for a SentencePiece vocabulary."""
    path = path_of("t5")
    tok = registry.load(path)
    out = ok(capsys, "tree", "-e", path, "--text", "hello")
    assert out.startswith(f'{tok.token_to_id("▁hello")} "▁hello" ') and "score -" in out
    code, _, err = run(capsys, "tree", "-e", path, "--text", "hello hello")
    assert code == 1 and "not a single token" in err


# ----- vocab -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FAMILIES)
def test_vocab_every_kind(capsys, path_of, name):
    path = path_of(name)
    tok = registry.load(path)
    doc = json.loads(ok(capsys, "vocab", "-e", path, "--search", "he", "--limit", "20", "--json"))
    assert doc["count"] > 0
    for t in doc["tokens"]:
        assert b"he" in bytes.fromhex(t["bytes"]) and t["token"] == tok.token_str(t["id"])
    out = ok(capsys, "vocab", "-e", path, "--search", "he", "--limit", "20")
    assert [int(line.split()[0]) for line in out.splitlines()] == [t["id"] for t in doc["tokens"]]
    spelled = [t for t in doc["tokens"] if t["token"] != t["text"] and not t["special"]]
    for t in spelled:
        assert f'spelled "{t["token"]}"' in out


# ----- every other command across the kinds -------------------------------------------------------


@pytest.mark.parametrize("name", FAMILIES)
def test_other_commands_every_kind(capsys, path_of, tmp_path, name):
    path = path_of(name)
    tok = registry.load(path)
    ids = tok.encode(TEXT, disallowed_special=())
    assert [int(i) for i in ok(capsys, "encode", "-e", path, TEXT).split()] == ids
    doc = json.loads(ok(capsys, "encode", "-e", path, TEXT, "--json"))
    assert [p["id"] for p in doc["tokens"]] == ids and doc["count"] == len(ids)
    assert all(0 <= p["start"] <= p["end"] <= len(TEXT) for p in doc["tokens"])
    decoded = json.loads(ok(capsys, "decode", "-e", path, "--json", *ids))
    assert decoded["count"] == len(ids) and bytes.fromhex(decoded["bytes"]) == tok.decode_bytes(ids)
    if name in LOSSLESS:
        assert decoded["text"] == TEXT
    stats = json.loads(ok(capsys, "stats", "-e", path, TEXT, "--json"))
    assert json.dumps(stats) and str(len(ids)) in ok(capsys, "stats", "-e", path, TEXT)
    compared = json.loads(ok(capsys, "compare", "-e", path, "-e", "gpt2", TEXT, "--json", "--cuts"))
    assert compared["encodings"][0]["count"] == len(ids) and not compared["failed"]
    langs = json.loads(ok(capsys, "languages", "-e", path, "--json"))
    assert all(row["counts"][tok.name] > 0 for row in langs["languages"]) and not langs["failed"]
    text_file = tmp_path / "in.txt"
    text_file.write_text(TEXT, encoding="utf-8")
    counted = json.loads(ok(capsys, "count", "-e", path, str(text_file), "--json"))
    assert counted["totals"]["tokens"][path] == len(ids)
    cut = json.loads(ok(capsys, "truncate", "-e", path, "--max-tokens", "3", TEXT, "--json"))
    assert cut["tokens"] <= 3 and TEXT.startswith(cut["text"]) and cut["truncated"]
    conversation = tmp_path / "chat.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "hi there"},
                                        {"role": "assistant", "content": "hello"}]))
    chat = json.loads(ok(capsys, "chat", "-e", path, "-f", str(conversation), "--json"))
    assert chat["total"] == len(chat["ids"]) > 0
    code, out, err = run(capsys, "export", "-e", path, "-o", tmp_path / "out.tiktoken")
    assert code == 1 and out == "" and f"{tok.name} is {KIND[name]}" in err
    assert not (tmp_path / "out.tiktoken").exists()
    assert any(line.startswith("gpt2 ") for line in ok(capsys, "encodings").splitlines())


@pytest.mark.skipif(not Path("/tmp/hub").is_dir(), reason="no Hugging Face hub cache at /tmp/hub")
def test_models_from_the_hub_cache(capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", "/tmp/hub")
    for name, words in (("google-bert/bert-base-uncased", '"[UNK]" 100'), ("google-t5/t5-small", "  best: "),
                        ("meta-llama/Llama-2-7b-hf", "rank "), ("meta-llama/Meta-Llama-3-8B", "(byte-level BPE)")):
        try:
            registry.load(name)
        except Exception as exc:  # noqa: BLE001 - a cache that is not there or not complete
            pytest.skip(f"{name}: {exc}")
        out = ok(capsys, "explain", "-e", name, "naïve ☃ hello", "--no-variants")
        assert words in out, (name, out)


# ----- nothing from a tokenizer.json acts on the terminal ----------------------------------------------


def test_hostile_spellings_print_inert(capsys, tmp_path):
    """A vocabulary whose entries hold newlines, escape sequences and bidirectional overrides: every
    kind's plain output shows them as inert glyphs, never a raw newline between the markers."""
    from test_cli_no_injection import FORBIDDEN, check

    bad = ["⟪a\nb⟫", "⟪\x1b]52;c;aGk=\x07⟫", "⟪\u202eevil⟫", "⟪\x85\t⟫"]
    unigram = {"version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None, "decoder": None,
               "pre_tokenizer": None,
               "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                         "vocab": [["<unk>", 0.0], *[[t, -1.0] for t in bad], *[[c, -5.0] for c in "⟪⟫ab"]]}}
    wordlevel = {"version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None, "decoder": None,
                 "pre_tokenizer": None,
                 "model": {"type": "WordLevel", "unk_token": "<unk>",
                           "vocab": {"<unk>": 0, **{t: i for i, t in enumerate(bad, 1)}}}}
    for doc in (unigram, wordlevel):
        path = tmp_path / f"{doc['model']['type']}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        for argv in (["explain", "-e", path, bad[0] + bad[2]], ["explain", "-e", path, "--token", "1"],
                     ["tree", "-e", path, "2"], ["vocab", "-e", path, "--search", "⟪"],
                     ["explain", "-e", path, bad[1], "--json"]):
            code, out, err = run(capsys, *argv)
            assert code == 0, err
            check(out + err)
            assert FORBIDDEN.search(out) is None
        listed = ok(capsys, "vocab", "-e", path, "--search", "⟪")
        assert len(listed.splitlines()) == len(bad) + (doc is unigram)  # Unigram also has "⟪" alone
        assert '"⟪a⏎b⟫"' in listed and "⟨RLO⟩" in listed


# ----- encode --add-special-tokens --------------------------------------------------------------


@pytest.mark.parametrize("name", ["bert", "roberta", "t5", "xlmr-bytefallback", "deepseek", "gpt2", "wordlevel"])
def test_encode_add_special_tokens_gives_the_librarys_default_ids(name, path_of, capsys):
    path = path_of(name)
    ref = hf_files.hf_tokenizer(name)
    text = "Hello wörld, naïve café 𓀀"
    assert main(["encode", "-e", path, text]) == 0
    assert [int(t) for t in capsys.readouterr().out.split()] == ref.encode(text, add_special_tokens=False).ids
    assert main(["encode", "-e", path, "--add-special-tokens", text]) == 0
    want = ref.encode(text).ids
    assert [int(t) for t in capsys.readouterr().out.split()] == want
    assert main(["encode", "-e", path, "--add-special-tokens", "--json", text]) == 0
    tokens = json.loads(capsys.readouterr().out)["tokens"]
    assert [t["id"] for t in tokens] == want
    template = [t for t in tokens if t.get("template")]
    own = ref.encode(text, add_special_tokens=False).ids
    assert len(template) == len(want) - len(own)
    for t in template:  # no text of their own: at the start or the end of the text
        assert t["start"] == t["end"] in (0, len(text)) and t["byte_start"] == t["byte_end"]


def test_encode_add_special_tokens_on_an_encoding_without_a_template(capsys):
    assert main(["encode", "--add-special-tokens", "hi there"]) == 0
    assert main(["encode", "hi there"]) == 0
    with_flag, without = capsys.readouterr().out.splitlines()
    assert with_flag == without


def test_encode_add_special_tokens_with_truncate(path_of, capsys):
    path = path_of("bert")
    ref = hf_files.hf_tokenizer("bert")
    assert main(["encode", "-e", path, "--add-special-tokens", "--truncate", "2", "hello there world"]) == 0
    ids = [int(t) for t in capsys.readouterr().out.split()]
    cls, sep = ref.token_to_id("[CLS]"), ref.token_to_id("[SEP]")
    assert ids[0] == cls and ids[-1] == sep and len(ids) == 4


def test_tree_text_takes_the_one_token_a_text_encodes_to(path_of, capsys):
    """t5 spells "hello" as ▁hello: the text that encodes to that one token names it (in the core,
    so every caller of resolve_token agrees); a text of several tokens says how many, made safe."""
    from tokscope.core.explain.merge_trees import resolve_token

    tok = registry.load(path_of("t5"))
    assert resolve_token(tok, text="hello") == tok.token_to_id("▁hello")
    code, out, err = run(capsys, "tree", "-e", path_of("t5"), "--text", "hello there\x1b[31m")
    assert code == 1 and "tokens:" in err and "\x1b" not in err and "1 tokens" not in err
