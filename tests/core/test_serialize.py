"""Saved tokenizers: the round trip train -> save -> load -> .tiktoken -> import, validation of
corrupt and foreign files, atomic writes, and the registry finding saved tokenizers."""

from __future__ import annotations

import json
import os

import pytest

from tokscope.core.formats import saved as serialize
from tokscope.core.formats.tiktoken_ranks import dump_tiktoken_bpe
from tokscope.core.formats.saved import SavedFormatError, SaveError, SavedTokenizer
from tokscope.core.train.trainer import PATTERN_WORDS, train
from tokscope.sample_texts import samples_dir
from tokscope.sources import names, registry, saved
from tokscope.sources.builtin import SourceError


def sample_texts() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted(samples_dir().rglob("*"))
            if p.suffix in (".txt", ".py", ".json")]


@pytest.fixture(scope="module")
def trained():
    pattern, name = names.pattern_for("gpt2")
    return train(sample_texts(), vocab_size=1200, pattern=pattern, pattern_name=name,
                 special_tokens=["<|endoftext|>", "<pad>"])


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(folder))
    return folder


def test_round_trip_train_save_load_export_import(trained, tmp_path):
    texts = sample_texts()
    original = trained.tokenizer("mine")
    path = tmp_path / "mine.json"
    serialize.save(path, serialize.from_result(trained, "mine"))
    loaded = serialize.load(path)
    assert loaded.name == "mine" and loaded.pattern == trained.pattern and loaded.pattern_name == "gpt2"
    assert loaded.ranks == trained.ranks
    assert loaded.special_tokens == {"<|endoftext|>": 1200, "<pad>": 1201}
    assert loaded.merge_counts == tuple(m.count for m in trained.merges)
    assert loaded.metadata["corpus"]["chunks"] == trained.stats.chunks
    assert loaded.metadata["options"]["vocab_size"] == 1200 and "created" in loaded.metadata

    tiktoken_path = tmp_path / "mine.tiktoken"
    serialize.export_tiktoken(tiktoken_path, loaded.ranks)
    assert tiktoken_path.read_bytes() == dump_tiktoken_bpe(trained.ranks)
    imported = serialize.import_tiktoken(tiktoken_path.read_bytes(), name="back", pattern=trained.pattern,
                                         special_tokens=["<|endoftext|>", "<pad>"])
    assert imported.ranks == trained.ranks and imported.special_tokens == loaded.special_tokens

    again = tmp_path / "back.json"
    serialize.save(again, imported)
    tokenizers = [original, serialize.load(path).tokenizer(), serialize.load(again).tokenizer()]
    for text in texts:
        ids = [t.encode(text + "<pad>", allowed_special="all") for t in tokenizers]
        assert ids[0] == ids[1] == ids[2]
        assert tokenizers[2].decode(ids[2]) == text + "<pad>"


def test_exported_file_matches_tiktoken(trained, tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    path = tmp_path / "t.tiktoken"
    serialize.export_tiktoken(path, trained.ranks)
    ranks = load_tiktoken_bpe(str(path))
    assert ranks == trained.ranks
    enc = tiktoken.Encoding("t", pat_str=trained.pattern, mergeable_ranks=ranks, special_tokens=trained.special_tokens)
    ours = trained.tokenizer()
    for text in sample_texts():
        assert ours.encode_ordinary(text) == enc.encode_ordinary(text)


def test_the_file_is_the_documented_json(trained, tmp_path):
    path = tmp_path / "doc.json"
    serialize.save(path, serialize.from_result(trained, "doc"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "tokscope-bpe" and doc["version"] == 1
    assert doc["merges"][0] == [trained.merges[0].left.hex(), trained.merges[0].right.hex()]
    assert len(doc["merges"]) == len(doc["merge_counts"]) == 1200 - 256
    assert set(doc["metadata"]) >= {"created", "tokscope_version", "options", "corpus", "stop_reason"}


def test_merges_from_ranks_falls_back_to_any_split():
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"bc": 256, b"ab": 257, b"cd": 258, b"abcd": 259})
    # BPE of "abcd" below rank 259 gives a|bc|d (three parts); ab + cd is the split
    assert serialize.merges_from_ranks(ranks)[-1] == (b"ab", b"cd")
    ranks[b"xyz"] = 260
    with pytest.raises(SavedFormatError, match="rank 260"):
        serialize.merges_from_ranks(ranks)


def test_import_refuses_foreign_rank_files():
    swapped = {bytes([i]): i for i in range(256)}
    swapped[b"\x00"], swapped[b"\x01"] = 1, 0
    with pytest.raises(SavedFormatError, match="byte order"):
        serialize.import_tiktoken(dump_tiktoken_bpe(swapped), name="x", pattern=PATTERN_WORDS)
    gap = {bytes([i]): i for i in range(256)} | {b"ab": 257}
    with pytest.raises(SavedFormatError, match="rank 256 is missing"):
        serialize.import_tiktoken(dump_tiktoken_bpe(gap), name="x", pattern=PATTERN_WORDS)
    with pytest.raises(SavedFormatError, match="line 1"):
        serialize.import_tiktoken(b"hello world\n", name="x", pattern=PATTERN_WORDS)
    with pytest.raises(SavedFormatError, match="empty"):
        serialize.import_tiktoken(b"", name="x", pattern=PATTERN_WORDS)
    ok = dump_tiktoken_bpe({bytes([i]): i for i in range(256)})
    with pytest.raises(SavedFormatError, match="invalid pattern"):
        serialize.import_tiktoken(ok, name="x", pattern="(")


def _valid_doc() -> dict:
    return serialize.to_document(SavedTokenizer("t", PATTERN_WORDS, ((b"a", b"b"), (b"ab", b"c")), {"<s>": 258}))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(format="other"), "not a tokscope tokenizer file"),
        (lambda d: d.pop("format"), "not a tokscope tokenizer file"),
        (lambda d: d.update(version=2), "newer tokscope"),
        (lambda d: d.update(version="1"), "bad format version"),
        (lambda d: d.update(name=""), '"name"'),
        (lambda d: d.update(pattern="("), "invalid pattern"),
        (lambda d: d.update(merges="6162"), '"merges" must be a list'),
        (lambda d: d["merges"].append(["zz", "61"]), "not a hex string"),
        (lambda d: d["merges"].append(["61"]), "not a pair"),
        (lambda d: d["merges"].insert(0, ["6162", "63"]), "not tokens yet"),
        (lambda d: d["merges"].append(["61", "62"]), "already a token"),
        (lambda d: d.update(special_tokens={"<s>": 257}), "special ids start at 258"),
        (lambda d: d.update(special_tokens={"<s>": 258, "<t>": 258}), "reuses id 258"),
        (lambda d: d.update(special_tokens=[]), '"special_tokens"'),
        (lambda d: d.update(merge_counts=[1]), '"merge_counts"'),
        (lambda d: d.update(metadata=3), '"metadata"'),
    ],
)
def test_invalid_documents_are_refused_with_one_line(change, message):
    doc = _valid_doc()
    change(doc)
    with pytest.raises(SavedFormatError, match=message) as info:
        serialize.loads(json.dumps(doc).encode(), "f.json")
    assert "\n" not in str(info.value) and str(info.value).startswith("f.json")


def test_valid_document_loads():
    loaded = serialize.loads(json.dumps(_valid_doc()).encode())
    assert loaded.ranks[b"abc"] == 257 and loaded.tokenizer().encode("<s>abc", allowed_special="all") == [258, 257]


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "empty"),
        (b"\xff\xfe\x00binary", "not UTF-8"),
        (b"[1, 2", "truncated"),
        (b"{\"format\": nonsense}", "not valid JSON at line 1"),
        (b"[]", "not a tokscope tokenizer file"),
        (b"YQ== 0\nYg== 1\n", "tokscope import"),
    ],
)
def test_corrupt_files_are_refused(data, message):
    with pytest.raises(SavedFormatError, match=message):
        serialize.loads(data, "x.json")


def test_truncated_real_file(trained, tmp_path):
    data = serialize.dumps(serialize.from_result(trained, "t"))
    for cut in (len(data) // 3, len(data) - 5):
        with pytest.raises(SavedFormatError, match="truncated"):
            serialize.loads(data[:cut], "t.json")


def test_atomic_write_leaves_no_half_file(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    path.write_bytes(b"old")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(SaveError, match="No space left"):
        serialize.write_atomic(path, b"new contents")
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_unwritable_targets(tmp_path):
    with pytest.raises(SaveError, match="does not exist"):
        serialize.check_writable(tmp_path / "missing" / "x.json")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SaveError, match="not a folder"):
        serialize.write_atomic(tmp_path / "file" / "x.json", b"data")
    with pytest.raises(SaveError, match="is a directory"):
        serialize.write_atomic(tmp_path, b"data")
    serialize.check_writable(tmp_path / "fine.json")
    assert not (tmp_path / "fine.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_load_errors_for_paths(tmp_path):
    with pytest.raises(SavedFormatError, match="no such file"):
        serialize.load(tmp_path / "nope.json")
    with pytest.raises(SavedFormatError, match="directory"):
        serialize.load(tmp_path)


# ----- the registry sees saved tokenizers -------------------------------------------------------------


def test_saved_tokenizers_are_listed_and_loadable(data_dir, tmp_path):
    r = train("low lower lowest " * 3, merges=4, pattern=PATTERN_WORDS, special_tokens=["<eos>"])
    name = "test-serialize-listed"
    path = saved.save_named(serialize.from_result(r, name), name, registry.saved_dir())
    assert path == data_dir / "tokenizers" / f"{name}.json"
    with pytest.raises(SourceError, match="already exists"):
        saved.save_named(serialize.from_result(r, name), name, registry.saved_dir())
    (data_dir / "tokenizers" / "broken.json").write_text("{")
    infos = {i.name: i for i in registry.list_encodings()}
    assert infos[name].kind == "saved" and infos[name].source == "file" and infos[name].available
    assert infos[name].n_vocab == 256 + 4 + 1
    assert not infos["broken"].available and "truncated" in infos["broken"].detail
    try:
        by_name = registry.load(name)
        by_path = registry.load(str(path))
        # merges: lo, low, lowe (x6), lower (x3, first of three ties) -> lowest is lowe|s|t
        assert by_name.encode("lowest<eos>", allowed_special="all") == by_path.encode(
            "lowest<eos>", allowed_special="all") == [258, ord("s"), ord("t"), 260]
        with pytest.raises(SourceError, match="truncated"):
            registry.load(str(data_dir / "tokenizers" / "broken.json"))
    finally:
        registry.forget(name)
        registry.forget(str(path))


def test_saved_names_must_be_plain(data_dir):
    for bad in ("", "../x", ".hidden", "a/b"):
        with pytest.raises(SourceError):
            saved.saved_path(bad, registry.saved_dir())


def test_pattern_names_resolve():
    from tokscope.sources.tiktoken_adapter import encoding_spec

    assert names.pattern_for("words") == (PATTERN_WORDS, "words")
    assert names.pattern_for("cl100k") == (encoding_spec("cl100k_base").pattern, "cl100k")
    assert names.pattern_for("o200k") == (encoding_spec("o200k_base").pattern, "o200k")
    assert names.pattern_for(r"\w+") == (r"\w+", None)
    with pytest.raises(Exception, match="invalid pattern"):
        names.pattern_for("[")
