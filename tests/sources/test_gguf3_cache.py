"""The GGUF form of tokscope's data-only tokenizer cache (``sources/cache.py``, GGUF section): a
second load of an unchanged file takes its tables from the cache and does not read the file's
metadata again; a file changed in size, time or inode is read again; the cached tokenizer is the
same tokenizer with the same facts; an entry that fails a check (others can write it, a flipped
byte) is ignored and replaced, never trusted, never a traceback. The vocab files come from the
llama-cpp-python sdist (tests/gguf_files.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gguf_files import copy_tokenizer, llama_cpp_models  # noqa: E402,F401

from tokscope.core.formats import gguf  # noqa: E402
from tokscope.core.models import newline_runs_bpe  # noqa: E402
from tokscope.sources import cache, model_files  # noqa: E402

TEXTS = ["Hello world! It's 3:45pm 1234567", "我想在apple工作 日本語 안녕하세요 नमस्ते мир", "e\u0301 ﬁ 😶‍🌫️ 👨‍👩‍👧‍👦",
         "<|eot_id|> <|begin_of_text|> <s></s> [CLS] <|im_start|>user\nhi<|im_end|> <mask>", "  code(x) {\r\n\t}\n\n\n",
         "<|user|>\nHi<|end|>\n<|assistant|>", ""]


@pytest.fixture
def reads(monkeypatch):
    """How many times a GGUF file's metadata is read."""
    count = {"n": 0}
    real = gguf.read_metadata

    def counting(path):
        count["n"] += 1
        return real(path)

    monkeypatch.setattr(gguf, "read_metadata", counting)
    return count


def _entries(folder: Path) -> list[Path]:
    return sorted((folder / "tokenizers").glob("gguf.*.tables"))


def _same(a, b) -> None:
    for text in TEXTS:
        for allowed in ((), "all"):
            assert a.encode(text, allowed_special=allowed, disallowed_special=()) == \
                b.encode(text, allowed_special=allowed, disallowed_special=()), (text, allowed)
        assert a.encode(text, add_special_tokens=True, disallowed_special=()) == \
            b.encode(text, add_special_tokens=True, disallowed_special=())
    assert a.n_vocab == b.n_vocab and a.kind == b.kind
    assert type(a.model) is type(b.model)


@pytest.mark.parametrize("name", ["llama-bpe", "gemma-4", "phi-3", "nomic-bert-moe", "bert-bge"])
def test_second_load_reads_no_metadata_and_is_the_same_tokenizer(tmp_path, llama_cpp_models, cache_dir, reads, name):
    path = tmp_path / f"{name}.gguf"
    path.write_bytes((llama_cpp_models / f"ggml-vocab-{name}.gguf").read_bytes())
    first, first_facts = cache.cached_gguf(path, name)
    assert reads["n"] == 1 and len(_entries(cache_dir)) == 1
    second, second_facts = cache.cached_gguf(path, "another label")
    assert reads["n"] == 1  # the tables came from the cache
    assert second.name == "another label" and second_facts == first_facts
    _same(first, second)
    fresh, fresh_facts = gguf.load(path)
    assert fresh_facts == second_facts
    _same(fresh, second)
    if name == "gemma-4":  # the model's own class is restored, not plain BPE
        assert type(second.model) is newline_runs_bpe.NewlineRunsBPE
    if name == "llama-bpe":  # the merge list is not kept: the model's tables replace it
        assert b"tokenizer.ggml.merges" not in _entries(cache_dir)[0].read_bytes()


def test_entries_hold_data_only(tmp_path, llama_cpp_models, cache_dir):
    path = tmp_path / "m.gguf"
    path.write_bytes((llama_cpp_models / "ggml-vocab-llama-bpe.gguf").read_bytes())
    cache.cached_gguf(path, "m")
    entry, = _entries(cache_dir)
    head, line, _ = entry.read_bytes().split(b"\n", 2)
    assert head.startswith(b"tokscope-tokenizer-cache ") and b" gguf " in head
    assert line.startswith(b'{"recipe":"gguf"')
    assert oct(entry.stat().st_mode & 0o777) == "0o600"
    assert oct((cache_dir / "tokenizers").stat().st_mode & 0o777) == "0o700"


def test_a_changed_file_is_read_again(tmp_path, llama_cpp_models, cache_dir, reads):
    path = tmp_path / "m.gguf"
    source = llama_cpp_models / "ggml-vocab-gpt-2.gguf"
    path.write_bytes(source.read_bytes())
    cache.cached_gguf(path, "m")
    stamp = path.stat()
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))  # touched: same bytes
    cache.cached_gguf(path, "m")
    assert reads["n"] == 2
    # rewritten with another pre-tokenizer, in place: read again, and the new file's answer
    copy_tokenizer(source, tmp_path / "default.gguf", pre="default")
    os.replace(tmp_path / "default.gguf", path)
    reads["n"] = 0  # the copy read its source
    tokenizer, facts = cache.cached_gguf(path, "m")
    assert reads["n"] == 1 and facts.pre == "default" and facts.notes
    assert tokenizer.encode("x!!y 12345") == gguf.load(path)[0].encode("x!!y 12345")
    reads["n"] = 0
    cache.cached_gguf(path, "m")
    assert reads["n"] == 0


def test_entries_that_fail_a_check_are_read_again(tmp_path, llama_cpp_models, cache_dir, reads):
    path = tmp_path / "m.gguf"
    path.write_bytes((llama_cpp_models / "ggml-vocab-gpt-2.gguf").read_bytes())
    want = gguf.load(path)[0].encode(TEXTS[0])
    reads["n"] = 0
    cache.cached_gguf(path, "m")
    entry, = _entries(cache_dir)
    os.chmod(entry, 0o666)  # others may write it: not trusted
    assert cache.cached_gguf(path, "m")[0].encode(TEXTS[0]) == want
    assert reads["n"] == 2
    data = bytearray(entry.read_bytes())  # replaced by a good one
    assert oct(entry.stat().st_mode & 0o777) == "0o600"
    data[len(data) // 2] ^= 0xFF  # a flipped byte: the payload's digest no longer checks
    entry.write_bytes(bytes(data))
    assert cache.cached_gguf(path, "m")[0].encode(TEXTS[0]) == want
    assert reads["n"] == 3
    cache.cached_gguf(path, "m")
    assert reads["n"] == 3


def test_model_files_loads_gguf_through_the_cache(tmp_path, llama_cpp_models, cache_dir, reads):
    path = tmp_path / "m.gguf"
    path.write_bytes((llama_cpp_models / "ggml-vocab-qwen2.gguf").read_bytes())
    first = model_files.load_path(path)
    second = model_files.load_path(path)
    assert reads["n"] == 1
    assert model_files.describe(second).gguf == model_files.describe(first).gguf
    assert second.encode(TEXTS[1]) == first.encode(TEXTS[1])


def test_a_file_that_is_not_a_gguf_is_still_one_error(tmp_path, cache_dir):
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 4)
    with pytest.raises(Exception, match="truncated"):
        cache.cached_gguf(path, "bad")
    assert _entries(cache_dir) == []
