"""When ``sources.cache.cached_sentencepiece`` keeps a ``.model`` file's parse: never with the
compiled reader (its parse is faster than an entry's read, and the first load writes nothing),
and with the Python reader only for models of ``SPM_CACHE_MIN_PIECES`` pieces or more."""

from __future__ import annotations

import pytest

from compiled_merge import spm_reader_module
from tokscope.core.formats import sentencepiece_model as sm
from tokscope.core.models.sentencepiece_pieces import NORMAL, UNKNOWN
from tokscope.sources import cache


def _model(tmp_path, n: int):
    pieces = [("<unk>", 0.0, UNKNOWN), ("▁", -1.0, NORMAL)] + [(f"▁w{i}", -2.0 - i, NORMAL) for i in range(n - 2)]
    path = tmp_path / f"m{n}.model"
    path.write_bytes(sm.build_model(pieces, trainer={3: 1}, normalizer={1: "identity", 3: 1, 4: 1, 5: 1}))
    return path


def _entries(cache_dir):
    return sorted((cache_dir / "tokenizers").glob("spm-model.*"))


def test_the_compiled_reader_writes_no_entry(tmp_path, cache_dir, parses):
    module = spm_reader_module()
    if module is None:
        pytest.skip("no compiled reader (no C compiler)")
    sm.use_compiled(True, module)
    path = _model(tmp_path, cache.SPM_CACHE_MIN_PIECES + 10)
    first = cache.cached_sentencepiece(path, "m")
    second = cache.cached_sentencepiece(path, "again")
    assert parses["n"] == 2 and not _entries(cache_dir)
    assert second.name == "again" and first.encode("w5 w7") == second.encode("w5 w7") == [7, 9]


@pytest.mark.parametrize("extra, cached", [(-1, False), (0, True)])
def test_the_python_reader_caches_large_models_only(tmp_path, cache_dir, parses, extra, cached):
    sm.use_compiled(False)
    try:
        path = _model(tmp_path, cache.SPM_CACHE_MIN_PIECES + extra)
        first = cache.cached_sentencepiece(path, "m")
        second = cache.cached_sentencepiece(path, "m")
    finally:
        sm.use_compiled(True)
    assert bool(_entries(cache_dir)) is cached
    assert parses["n"] == (1 if cached else 2)
    assert first.encode("w5 w7") == second.encode("w5 w7") == [7, 9]
