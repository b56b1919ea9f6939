"""Tokenizers found offline: a tokenizer.json by path, a model folder, a model id in a (fake) hub
cache; listings; a second load from tokscope's cache; every bad input a one-line error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")

from tokscope.sample_texts import read_sample  # noqa: E402
from tokscope.sources import cache, hub, model_files, registry  # noqa: E402
from tokscope.sources.builtin import SourceError  # noqa: E402

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def wordpiece_json() -> str:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator([read_sample("prose.txt")], trainers.WordPieceTrainer(
        vocab_size=400, special_tokens=["[UNK]", "[CLS]", "[SEP]"]))
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")), ("[CLS]", tok.token_to_id("[CLS]")))
    return tok.to_str()


def bytelevel_json() -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator([read_sample("prose.txt")], trainers.BpeTrainer(
        vocab_size=500, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok.to_str()


@pytest.fixture()
def hub_cache(tmp_path, monkeypatch):
    """A hub cache with two models (as the hub library lays it out) and one without a tokenizer."""
    root = tmp_path / "hub"
    for model_id, text, extra in (("acme/tiny-bert", wordpiece_json(), {}),
                                  ("acme/tiny-gpt", bytelevel_json(), {"chat_template": "{{ messages }}"})):
        org, name = model_id.split("/")
        folder = root / f"models--{org}--{name}"
        snap = folder / "snapshots" / COMMIT
        snap.mkdir(parents=True)
        (folder / "refs").mkdir()
        (folder / "refs" / "main").write_text(COMMIT)
        (snap / "tokenizer.json").write_text(text)
        (snap / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 2048, **extra}))
    (root / "models--acme--weights-only" / "snapshots" / COMMIT).mkdir(parents=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "tokscope-cache"))
    registry.forget()
    yield root
    registry.forget()


def test_a_model_id_loads_from_the_hub_cache(hub_cache):
    ref = tokenizers.Tokenizer.from_file(str(hub_cache / "models--acme--tiny-bert" / "snapshots" / COMMIT / "tokenizer.json"))
    tok = registry.load("acme/tiny-bert")
    text = "The keeper's Ledger, naïve café!"
    assert tok.name == "acme/tiny-bert" and tok.kind == "WordPiece"
    assert tok.encode(text) == ref.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, add_special_tokens=True) == ref.encode(text).ids
    files = model_files.describe(tok)
    assert files is not None and files.model_id == "acme/tiny-bert" and files.context == 2048
    gpt = registry.load("acme/tiny-gpt")
    assert model_files.describe(gpt).chat_templates == {"default": "{{ messages }}"}


def test_listings_show_cached_models_and_skip_those_without_a_tokenizer(hub_cache):
    ids = [m.id for m in hub.cached_models()]
    assert ids == ["acme/tiny-bert", "acme/tiny-gpt"]
    names = [i.name for i in registry.list_encodings()]
    assert "acme/tiny-bert" in names and "acme/weights-only" not in names


def test_a_model_id_not_in_the_cache_says_where_it_looked(hub_cache):
    with pytest.raises(SourceError) as info:
        registry.load("meta-llama/Meta-Llama-3-8B")
    message = str(info.value)
    assert str(hub_cache) in message and "never downloads" in message and "\n" not in message


def test_paths_to_a_file_and_to_a_folder(hub_cache, tmp_path):
    snap = hub_cache / "models--acme--tiny-gpt" / "snapshots" / COMMIT
    by_file = registry.load(str(snap / "tokenizer.json"))
    by_folder = registry.load(str(snap))
    assert by_file.encode("Hello there") == by_folder.encode("Hello there")
    assert by_file.kind == "byte-level BPE"


def test_a_second_load_comes_from_tokscopes_cache(hub_cache, monkeypatch):
    snap = hub_cache / "models--acme--tiny-gpt" / "snapshots" / COMMIT
    first = model_files.load_path(snap)
    entries = list(Path(os.environ["TOKSCOPE_CACHE_DIR"]).rglob("*.tables"))
    assert len(entries) == 1
    calls = []
    with monkeypatch.context() as patched:
        patched.setattr(model_files, "_json_tokenizer", lambda *a: calls.append(a))
        second = model_files.load_path(snap)
    assert calls == [] and second.encode("a b c") == first.encode("a b c")
    # an edited file is parsed again (the cache is keyed by the file's sha256) ...
    data = json.loads((snap / "tokenizer.json").read_text())
    data["added_tokens"].append({"id": 500, "content": "<extra>", "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": True})
    (snap / "tokenizer.json").write_text(json.dumps(data))
    assert model_files.load_path(snap).special_tokens["<extra>"] == 500
    # ... and a corrupt cache entry is rebuilt, not trusted
    for entry in Path(os.environ["TOKSCOPE_CACHE_DIR"]).rglob("*.tables"):
        entry.write_bytes(entry.read_bytes()[:200])
    assert model_files.load_path(snap).encode("a b c") == first.encode("a b c")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{", "not valid JSON"),
        ('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}', "b"),
        ('{"model": {"type": "Mystery"}}', "unsupported model 'Mystery'"),
        ('{"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"}, "normalizer": {"type": "Nope"}}',
         "unsupported normalizer 'Nope'"),
        ("[" * 100_000, "nests too deeply"),
        ('{"model": {"type": "WordLevel", "vocab": {"a": 1' + "0" * 5000 + '}}}', "not a usable tokenizer file"),
        ("\ufeff" + '{"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}', None),
        ('{"weights": []}', "not a tokenizer file"),
        ("binary\x00\x01\x02 garbage", "not a tokenizer file tokscope can read"),
    ],
    ids=["truncated", "missing-merge-part", "unknown-model", "unknown-normalizer", "deep-nesting", "huge-int",
         "utf8-bom", "not-a-tokenizer", "binary"],
)
def test_bad_tokenizer_files_are_one_line_errors(tmp_path, monkeypatch, content, expected):
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "c"))
    path = tmp_path / "tokenizer.json"
    path.write_text(content, encoding="utf-8")
    if expected is None:  # a UTF-8 BOM is fine
        assert model_files.load_path(path).encode("a") == [0]
        return
    with pytest.raises(SourceError) as info:
        model_files.load_path(path)
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_the_cli_reads_a_cached_model_and_lists_it(hub_cache, tmp_path):
    env = {**os.environ, "HF_HUB_CACHE": str(hub_cache), "TOKSCOPE_CACHE_DIR": str(tmp_path / "c")}
    run = [sys.executable, "-m", "tokscope.cli"]
    done = subprocess.run([*run, "encode", "-e", "acme/tiny-bert", "The keeper"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()
    done = subprocess.run([*run, "encodings"], capture_output=True, text=True, env=env)
    assert "acme/tiny-gpt" in done.stdout
    done = subprocess.run([*run, "encode", "-e", "nobody/nothing", "x"], capture_output=True, text=True, env=env)
    assert done.returncode == 1 and "not in the local Hugging Face cache" in done.stderr
    assert done.stderr.count("\n") == 1


def test_cache_entries_are_written_atomically(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "c"))
    path = tmp_path / "tokenizer.json"
    path.write_text(bytelevel_json())
    model_files.load_path(path)
    leftovers = [p for p in (tmp_path / "c").rglob("*") if p.suffix == ".tmp"]
    assert leftovers == []
    assert cache.CACHE_FORMAT >= 1


def test_check_names_without_loading_and_says_what_load_would(hub_cache, monkeypatch):
    monkeypatch.setattr(registry, "_load_uncached", lambda name: pytest.fail(f"{name} was loaded"))
    for name in ("o200k_base", "cl100k", "llama3", "acme/tiny-bert", str(hub_cache / "models--acme--tiny-gpt" / "snapshots" / COMMIT)):
        registry.check(name)
    with pytest.raises(SourceError, match="not in the local Hugging Face cache"):
        registry.check("acme/absent")
    monkeypatch.undo()
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    with pytest.raises(SourceError, match="unknown encoding 'nonsense'"):
        registry.check("nonsense")


def test_the_explorer_starts_on_a_cached_model_id(hub_cache, monkeypatch, tmp_path):
    from tokscope.app import main as app_main

    seen = {}

    class FakeApp:
        def __init__(self, text, **kw):
            seen.update(kw)
            self.return_code = 0

        def run(self):
            pass

    f = tmp_path / "t.txt"
    f.write_text("hi", encoding="utf-8")
    monkeypatch.setattr("tokscope.app.app.ExplorerApp", FakeApp)
    monkeypatch.setattr("sys.stdin", type("T", (), {"isatty": lambda self: True})())
    args = type("A", (), {"file": str(f), "encoding": "acme/tiny-bert", "text": None})()
    assert app_main.run_explorer(args) == 0 and seen["encoding"] == "acme/tiny-bert"
    args.encoding = "acme/absent"
    with pytest.raises(app_main.StartupProblem, match="never downloads"):
        app_main.run_explorer(args)
