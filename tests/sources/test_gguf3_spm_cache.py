"""SentencePiece ``.model`` files in tokscope's data-only cache (``sources/cache.py``, SentencePiece
section): a second load of the same bytes does not parse the protobuf again and gives the same
tokenizer; an edited file is parsed again; an entry others can write is ignored. The models are
Mistral's (``mistral-common``) and the sentencepiece sdist's test models (tests/spm_files.py)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spm"))

from spm_files import trained_spm  # noqa: E402,F401

from tokscope.core.formats import sentencepiece_model  # noqa: E402
from tokscope.sources import cache, model_files  # noqa: E402

TEXTS = ["Hello world! It's 3:45pm 1234567", "我想在apple工作 吾輩は猫である。 안녕하세요 नमस्ते мир", "e\u0301 ﬁ 😶‍🌫️ ａｂｃ",
         "  spaces   and\ttabs\nnewlines ", "<s> </s> <unk> [INST] look-alikes", ""]


def _models() -> list[Path]:
    out = []
    spec = importlib.util.find_spec("mistral_common")
    if spec is not None and spec.submodule_search_locations:
        out += sorted((Path(list(spec.submodule_search_locations)[0]) / "data").glob("*.model*"))
    if not out:
        pytest.skip("mistral-common is not installed")
    return out[:2] + out[-1:]


@pytest.fixture(autouse=True)
def python_reader(monkeypatch):
    """The cache serves the Python reader (the compiled one parses faster than an entry reads; see
    tests/spm/test_spm7_cache_policy.py); every model is cached here, small ones too."""
    monkeypatch.setattr(cache, "SPM_CACHE_MIN_PIECES", 0)
    sentencepiece_model.use_compiled(False)
    yield
    sentencepiece_model.use_compiled(True)


def _same(a, b) -> None:
    assert a.n_vocab == b.n_vocab and a.kind == b.kind
    for text in TEXTS:
        assert a.encode(text, disallowed_special=()) == b.encode(text, disallowed_special=()), text
        assert a.encode(text, allowed_special="all", add_special_tokens=True) == \
            b.encode(text, allowed_special="all", add_special_tokens=True), text
        ids = a.encode(text, disallowed_special=())
        assert a.decode(ids) == b.decode(ids)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_second_load_is_not_parsed_and_is_the_same(tmp_path, cache_dir, parses, index):
    source = _models()[index]
    path = tmp_path / source.name
    path.write_bytes(source.read_bytes())
    first = cache.cached_sentencepiece(path, "m")
    second = cache.cached_sentencepiece(path, "again")
    assert parses["n"] == 1 and second.name == "again"
    _same(first, second)
    _same(sentencepiece_model.from_model_bytes(path.read_bytes(), "fresh"), second)
    spm = pytest.importorskip("sentencepiece")
    reference = spm.SentencePieceProcessor(model_file=str(path))
    for text in TEXTS:
        assert second.encode(text, disallowed_special=()) == reference.encode(text), text


CONFIGS = ("unigram", "bpe", "char", "word", "bpe_byte_fallback", "suffix", "case_fold", "user_defined")


def test_trained_models_of_every_kind_round_trip(tmp_path, cache_dir, parses, trained_spm):
    for name in CONFIGS:
        path = trained_spm(name)
        first = cache.cached_sentencepiece(path, name)
        second = cache.cached_sentencepiece(path, name)
        _same(first, second)
    assert parses["n"] == len(CONFIGS)


def test_an_edited_file_is_parsed_again_and_a_bad_entry_ignored(tmp_path, cache_dir, parses):
    source = _models()[0]
    path = tmp_path / "tokenizer.model"
    data = source.read_bytes()
    path.write_bytes(data)
    cache.cached_sentencepiece(path, "m")
    path.write_bytes(sentencepiece_model.build_model([("<unk>", 0.0, 2), ("▁a", -1.0, 1), ("b", -2.0, 1)]))
    assert cache.cached_sentencepiece(path, "m").encode("a b") == [1, 0, 2]
    assert parses["n"] == 2
    path.write_bytes(data)
    entries = sorted((cache_dir / "tokenizers").glob("spm-model.*"))
    assert len(entries) == 2
    for entry in entries:
        os.chmod(entry, 0o666)
    cache.cached_sentencepiece(path, "m")
    assert parses["n"] == 3  # others could write it: parsed again


def test_model_files_reads_sentencepiece_through_the_cache(tmp_path, cache_dir, parses):
    source = _models()[1]
    path = tmp_path / "tokenizer.model"
    path.write_bytes(source.read_bytes())
    first = model_files.load_path(path)
    second = model_files.load_path(path)
    assert parses["n"] == 1 and second.name == first.name
    _same(first, second)
    path.write_bytes(b"\x0a\x0b\x0a\x05<unk>\x15\x00")  # looks like a model, is truncated: one line
    with pytest.raises(Exception, match="not a SentencePiece model \\(truncated"):
        model_files.load_path(path)
