"""Issue 22 item 4 (load9): the plain load of a small file without a merge list (never cached) does
what it did, with less on the way: its parse is let go with the collector off; its ``"merges"``
check skips a charsmap's base64; where the hub cache lies is worked out once per environment. Each
held to what it replaces: the same answers on random inputs, the same tokenizers from real files."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

import hf_files  # noqa: E402

from tokscope.core.formats import tokenizer_json as hf  # noqa: E402
from tokscope.sources import cache, hub, model_files  # noqa: E402
from tokscope.sources.cache import Built  # noqa: E402

TEXT = "Hello, wörld: 中文 and 😀 <s> </s> <unk> e\u0301 \u3000x\t\n"


# ----- the collector ------------------------------------------------------------------------------


class Watched:
    """Records whether the collector was on when it was freed (a stand-in for a parse's objects)."""

    freed_with_gc_on: list[bool] = []

    def __del__(self) -> None:
        Watched.freed_with_gc_on.append(gc.isenabled())


def test_a_small_parse_is_built_and_freed_with_the_collector_off(tmp_path, cache_dir):
    path = tmp_path / "t.json"
    data = (b'{"normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "WhitespaceSplit"}, '
            b'"model": {"type": "WordLevel", "vocab": {"hi": 0, "<unk>": 1}, "unk_token": "<unk>"}}')
    seen = []

    def build(data: bytes) -> Built:
        seen.append(gc.isenabled())
        return Built(hf.from_json(hf.parse(data), "t"), {"watched": Watched()})

    Watched.freed_with_gc_on.clear()
    assert gc.isenabled()
    tokenizer = cache.cached_file(path, "json-tokenizer", build, data)
    assert gc.isenabled() and seen == [False] and Watched.freed_with_gc_on == [False]
    assert tokenizer.encode("HI there") == [0, 1]
    assert not list(cache_dir.rglob("*.tables"))  # never cached: no merge list, under a megabyte


# ----- the "merges" check -------------------------------------------------------------------------

FRAGMENTS = ['"merges"', '"merges', 'merges"', '"', '"precompiled_charsmap"', ": ", ':"', "QUJD", "bWVyZ2Vz", "=", "\\",
             '\\"', "{", "}", ",", " ", "\n", "m", "e", "r", "g", "s", "é", "😀"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=20))
def test_names_merges_is_a_plain_search(parts):
    data = "".join(parts).encode()
    assert cache._names_merges(data) == (b'"merges"' in data)


def test_names_merges_on_real_files():
    for name in ("t5", "xlmr-bytefallback", "wordlevel", "gpt2"):
        try:
            data = hf_files.build(name).encode()
        except hf_files.Missing:
            continue
        assert cache._names_merges(data) == (b'"merges"' in data) == (name == "gpt2")
    charsmap = b'{"normalizer": {"type": "Precompiled", "precompiled_charsmap": "' + b"QUJD" * 5000 + b'"}, '
    assert cache._names_merges(charsmap + b'"model": {"merges": []}}')
    assert not cache._names_merges(charsmap + b'"model": {"vocab": []}}')


# ----- where the hub cache lies -------------------------------------------------------------------

VARS = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME")


def path_cache_dirs() -> list[Path]:
    """:func:`hub.cache_dirs` as it was (the oracle): read from the environment each time."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return [Path(os.environ[var]).expanduser()]
    if os.environ.get("HF_HOME"):
        return [Path(os.environ["HF_HOME"]).expanduser() / "hub"]
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return [base / "huggingface" / "hub"]


def path_cache_root_of(path: Path) -> Path | None:
    """:func:`hub.cache_root_of` as it was (the oracle): by :mod:`pathlib`'s parts."""
    absolute = Path(os.path.abspath(path))
    for cache_dir in path_cache_dirs():
        root = Path(os.path.abspath(cache_dir))
        if absolute != root and absolute.is_relative_to(root):
            return root
    return None


def answer(fn, *args) -> tuple:
    try:
        found = fn(*args)
        return type(found).__name__, found
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc)


PARTS = ["", "/", "//", "///", "a", "hub", "..", ".", "x y", "é", "hub2", "~", "~root", "\udcff"]
paths = st.lists(st.sampled_from(PARTS + ["/"] * 4), max_size=8).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.tuples(*[st.none() | paths for _ in VARS]), paths)
def test_cache_root_of_is_the_pathlib_answer(env, path):
    with pytest.MonkeyPatch.context() as mp:
        for var, value in zip(VARS, env):
            if value is None:
                mp.delenv(var, raising=False)
            else:
                mp.setenv(var, value)
        assert answer(hub.cache_dirs) == answer(path_cache_dirs)
        assert answer(hub.cache_root_of, Path(path or ".")) == answer(path_cache_root_of, Path(path or "."))


def test_a_changed_environment_is_seen(monkeypatch, tmp_path):
    inside = tmp_path / "hub" / "models--a--b" / "snapshots" / "c" / "tokenizer.json"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert hub.cache_root_of(inside) == tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert hub.cache_root_of(inside) is None
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert hub.cache_root_of(inside) == tmp_path / "hub"


# ----- the loads themselves -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["t5", "xlmr-bytefallback", "wordlevel"])
def test_small_files_load_as_tokenizers_reads_them(name, tmp_path, cache_dir):
    tokenizers = pytest.importorskip("tokenizers")
    try:
        path = hf_files.save(name, tmp_path)
    except hf_files.Missing as exc:
        pytest.skip(str(exc))
    ref = tokenizers.Tokenizer.from_file(str(path))
    for _ in range(2):  # cold and "warm": both the plain parse
        ours = model_files.load_path(path)
        assert ours.encode(TEXT, allowed_special="all") == ref.encode(TEXT, add_special_tokens=False).ids
        assert ours.encode(TEXT, allowed_special="all", add_special_tokens=True) == ref.encode(TEXT).ids
    assert not list(cache_dir.rglob("*.tables"))
