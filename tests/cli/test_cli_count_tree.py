"""``tokscope count --tree``: per-folder sums (and costs) for several tokenizers at once, sorted,
down to ``--depth``; ``--json`` gives the tree. Every folder's sum is checked against the files'
own counts, each file against the tokenizer itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokscope.core.insights.tree import folder_tree, walk

from tokscope.cli import main
from tokscope.sources.errors import SourceError


def run(capsys, monkeypatch, *args):
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def n_tokens(tok, text: str) -> int:
    return len(tok.encode_ordinary(text))

TEXTS = {
    "README.md": "# Title\n\nSome *markdown* text, naïve café.\n",
    "src/a.py": "def f(x):\n    return x * 2  # 日本語 👍\n" * 3,
    "src/core/b.py": "import os\nprint(os.getcwd())\n",
    "src/core/deep/c.txt": "Ein kleiner Text auf Deutsch; Ελληνικά; русский текст.\n" * 5,
    "docs/guide.md": "Read me first. " * 40,
    "docs/img/notes.txt": "x",
}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    for rel, text in TEXTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def nodes(tree: dict) -> list[dict]:
    return [tree] + [n for child in tree.get("children", []) for n in nodes(child)]


def test_json_tree_sums_are_the_per_file_sums_for_every_tokenizer(capsys, monkeypatch, project, load):
    encodings = ["gpt2", "o200k_base", "llama3"]
    try:
        load("llama3")
    except SourceError:  # its carrier package is a test dependency; without it, two encodings
        encodings.pop()
    args = ["count", "--tree", "--json", "-r", str(project)] + [a for e in encodings for a in ("-e", e)]
    code, out, _ = run(capsys, monkeypatch, *args)
    assert code == 0
    doc = json.loads(out)
    per_file = {f["path"]: f["tokens"] for f in doc["files"]}
    for name in encodings:  # each file's count is the tokenizer's own
        for rel, text in TEXTS.items():
            assert per_file[str(project / rel)][name] == n_tokens(load(name), text)
    tree = doc["tree"]
    assert tree["path"] == str(project) and tree["files"] == len(TEXTS)
    assert tree["tokens"] == doc["totals"]["tokens"]
    for node in nodes(tree):
        below = {p: t for p, t in per_file.items() if p == node["path"] or p.startswith(node["path"] + "/")}
        assert node["files"] == len(below)
        for name in encodings:
            assert node["tokens"][name] == sum(t[name] for t in below.values()), (node["path"], name)
        children = node.get("children", [])
        first = [c["tokens"][encodings[0]] for c in children]
        assert first == sorted(first, reverse=True)  # biggest first


def test_prices_give_each_folder_its_cost(capsys, monkeypatch, project):
    code, out, _ = run(capsys, monkeypatch, "count", "--tree", "--json", "-r", str(project),
                       "-e", "gpt2", "-e", "cl100k_base", "--price", "2.50", "--price", "$10")
    assert code == 0
    for node in nodes(json.loads(out)["tree"]):
        assert node["cost"]["gpt2"] == pytest.approx(node["tokens"]["gpt2"] * 2.5 / 1e6)
        assert node["cost"]["cl100k_base"] == pytest.approx(node["tokens"]["cl100k_base"] * 10 / 1e6)


def test_the_table_is_indented_sorted_and_cut_at_the_depth(capsys, monkeypatch, project, load):
    code, out, _ = run(capsys, monkeypatch, "count", "--tree", "--depth", "1", "-r", str(project), "--price", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["o200k_base", "cost", "path"]
    tok = load("o200k_base")
    sums = {top: sum(n_tokens(tok, t) for rel, t in TEXTS.items() if rel.split("/")[0] == top)
            for top in ("src", "docs", "README.md")}
    total = sum(sums.values())
    assert lines[1].split()[0] == str(total) and lines[1].endswith(f"{project}/ (6 files)")
    rows = [line.split() for line in lines[2:]]
    assert len(rows) == 3  # depth 1: the three entries of the top folder, nothing below
    assert [r[2].rstrip("/") for r in rows] == sorted(sums, key=lambda k: -sums[k])
    assert "    src/ (3 files)" in out and "    README.md" in out  # one level in
    for row in rows:
        assert int(row[0]) == sums[row[2].rstrip("/")]
        assert row[1] == f"${sums[row[2].rstrip('/')] / 1e6:.4f}"


def test_files_from_several_places_meet_at_their_common_folder(capsys, monkeypatch, project):
    code, out, _ = run(capsys, monkeypatch, "count", "--tree", "--json", str(project / "src" / "a.py"),
                       str(project / "docs" / "guide.md"), str(project / "README.md"))
    assert code == 0
    tree = json.loads(out)["tree"]
    assert tree["path"] == str(project)
    assert sorted(c["name"] for c in tree["children"]) == ["README.md", "docs/", "src/"]


@pytest.mark.parametrize("argv, message", [
    (["--depth", "2"], "--depth goes with --tree"),
    (["--price", "1"], "--price goes with --tree"),
    (["--tree", "--total"], "--tree and --total"),
    (["--tree", "-e", "gpt2", "-e", "o200k_base", "-e", "cl100k_base", "--price", "1", "--price", "2"],
     "one --price for every encoding"),
])
def test_option_mistakes_are_usage_errors(capsys, monkeypatch, project, argv, message):
    code, out, err = run(capsys, monkeypatch, "count", "-r", str(project), *argv)
    assert code == 2 and message in err and out == ""


def test_the_core_tree_folds_paths_and_sums():
    root = folder_tree([("a/x.txt", (1, 2)), ("a/b/y.txt", (3, 4)), ("a/b/z.txt", (5, 6))], 2)
    assert root.path == "a" and root.tokens == (9, 12) and root.files == 3
    shown = [(d, n.name, n.tokens) for d, n in walk(root)]
    assert shown == [(0, "a", (9, 12)), (1, "b/", (8, 10)), (2, "z.txt", (5, 6)), (2, "y.txt", (3, 4)),
                     (1, "x.txt", (1, 2))]
    assert Path(root.children[0].children[0].path) == Path("a/b/z.txt")
