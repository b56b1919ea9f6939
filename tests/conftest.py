"""Shared fixtures: encodings are loaded once per session (they are cached by the registry)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# The tests never read or write the user's own recovery files and saved tokenizers: a recovery
# file left by a crashed explorer would open a dialog in every app test. Set before tokscope is
# imported, so the explorer's subprocesses and pytest-xdist's workers inherit it too.
for _var in ("TOKSCOPE_STATE_DIR", "TOKSCOPE_DATA_DIR"):
    os.environ.setdefault(_var, tempfile.mkdtemp(prefix=f"tokscope-tests-{_var[9:-4].lower()}-"))

from tokscope.sources import registry  # noqa: E402

OPENAI = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty tokscope cache folder of the test's own (``TOKSCOPE_CACHE_DIR``)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def parses(monkeypatch):
    """``{"n": how many times a SentencePiece .model file has been parsed}`` during the test."""
    from tokscope.core.formats import sentencepiece_model

    count = {"n": 0}
    real = sentencepiece_model.parse

    def counting(data, source="the SentencePiece model"):
        count["n"] += 1
        return real(data, source)

    monkeypatch.setattr(sentencepiece_model, "parse", counting)
    return count


@pytest.fixture(scope="session")
def load():
    return registry.load


# ----- both merge loops on the parity suites -------------------------------------------------------

#: the parity suites, run twice: with the compiled merge loop (its rank table from the first merge
#: on) and the compiled pattern split, and with the pure-Python loop and the regex split, each on
#: freshly loaded tokenizers (empty chunk caches)
BOTH_MERGE_LOOPS = ("core/test_parity.py", "tiktoken_suite/")


#: the suites of Hugging Face's merge-list BPE, run twice the same way: with the compiled
#: merge-list loop (``mlist_*``) and with the pure-Python one
BOTH_LIST_MERGE_LOOPS = ("core/test_hf_models_bpe.py", "core/test_hf_tokenizers.py")


def pytest_generate_tests(metafunc):
    where = Path(metafunc.module.__file__).resolve().as_posix()
    if any(part in where for part in BOTH_MERGE_LOOPS) and "merge_loop" not in metafunc.fixturenames:
        metafunc.fixturenames.append("merge_loop")
    if "merge_loop" in metafunc.fixturenames:
        metafunc.parametrize("merge_loop", ["compiled", "pure"], indirect=True, scope="module")
    if any(part in where for part in BOTH_LIST_MERGE_LOOPS) and "list_merge_loop" not in metafunc.fixturenames:
        metafunc.fixturenames.append("list_merge_loop")
    if "list_merge_loop" in metafunc.fixturenames:
        metafunc.parametrize("list_merge_loop", ["compiled", "pure"], indirect=True, scope="module")


@pytest.fixture(scope="module")
def list_merge_loop(request):
    """Hugging Face's merge-list BPE merged by the compiled loop or by the pure-Python one."""
    from compiled_merge import list_merge_module

    from tokscope.core.models import bpe

    compiled = request.param == "compiled"
    module = list_merge_module() if compiled else None
    if compiled and module is None:
        pytest.skip("no compiled merge-list loop: not installed, and no C compiler to build one")
    was = bpe.compiled_merge()
    bpe.use_compiled(compiled, module)
    yield request.param
    bpe.use_compiled(was is not None, was)


@pytest.fixture(scope="module")
def merge_loop(request):
    from compiled_merge import compiled_module, split_module

    from tokscope.core.models import ranks
    from tokscope.core.pre_tokenizers import compiled_split

    compiled = request.param == "compiled"
    module = compiled_module() if compiled else None
    if compiled and module is None:
        pytest.skip("no compiled merge loop: not installed, and no C compiler to build one")
    was_on, table_after = ranks.compiled_available(), ranks.TABLE_AFTER
    ranks.use_compiled(compiled, module)
    ranks.TABLE_AFTER = 0 if compiled else table_after
    # the pattern split too: the compiled scanner with the compiled loop, the regex path with the pure one
    split_was = compiled_split.compiled_in_use()
    compiled_split.use_compiled(compiled and split_module() is not None, split_module() if compiled else None)
    registry.forget()
    yield request.param
    ranks.TABLE_AFTER = table_after
    ranks.use_compiled(was_on)
    compiled_split.use_compiled(split_was)
    registry.forget()
