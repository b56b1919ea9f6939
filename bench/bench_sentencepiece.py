"""SentencePiece ``.model`` files: tokscope against the sentencepiece library, in one process.

    python bench/bench_sentencepiece.py [--load-only] [MODEL ...]

For each model (default: every Mistral model in ``mistral_common``'s data, v1 to v7, and the
sentencepiece sdist's botchan BPE and Unigram and kyoto Unigram models when the test cache holds
them):

* load: ``from_model_bytes`` (read the file, parse the ModelProto, build the pipeline) against
  ``SentencePieceProcessor(model_file=...)``, the least CPU time of 15 each. Target: <= 2x.
* cached: the same file through tokscope's data-only cache (``sources.cache.cached_sentencepiece``,
  a temporary cache folder holding the file's parse: read, hash, tables, build), as a second load
  of the explorer or the command line reads it.
* encode: 1 MB of English prose (``_corpus.prose``), a fresh tokenizer (cold: empty caches) and
  the same text again (warm), against the library's ``encode``. Target: <= 3x.

Ratios are tokscope's time over the library's; ids are checked equal.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _corpus import prose  # noqa: E402

from tokscope.core.formats.sentencepiece_model import from_model_bytes  # noqa: E402


def default_models() -> list[Path]:
    out = []
    spec = importlib.util.find_spec("mistral_common")
    if spec is not None and spec.submodule_search_locations:
        data = Path(list(spec.submodule_search_locations)[0]) / "data"
        out += sorted(p for p in data.glob("*.model*") if p.is_file())
    cache = Path(os.environ.get("TOKSCOPE_TEST_CACHE") or Path.home() / ".cache" / "tokscope-tests")
    test = cache / "sentencepiece-0.2.3" / "test"
    out += [p for p in sorted(test.glob("*.model"))]
    return out


def best(fn, runs: int = 5, clock=time.perf_counter) -> float:
    times = []
    for _ in range(runs):
        t = clock()
        fn()
        times.append(clock() - t)
    return min(times)


def best_cpu(fn, runs: int = 15) -> float:
    """The least CPU time of ``fn`` (loads are single-threaded work on both sides; on a shared
    machine their wall times mostly measure the neighbours)."""
    return best(fn, runs, time.process_time)


def main(argv: list[str]) -> int:
    import sentencepiece as spm

    os.environ["TOKSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-spm-cache-")
    from tokscope.sources import cache

    load_only = "--load-only" in argv
    argv = [a for a in argv if a != "--load-only"]
    models = [Path(a) for a in argv] or default_models()
    text = prose()
    print(f"text: {len(text):,} characters of prose")
    print(f"{'model':<44} {'load':>7} {'spm':>7} {'ratio':>6} {'cached':>7} {'ratio':>6}   {'cold':>7} {'warm':>7} "
          f"{'spm':>7} {'cold x':>6} {'warm x':>6}")
    for path in models:
        data = path.read_bytes()
        ours_load = best_cpu(lambda: from_model_bytes(path.read_bytes(), path.name))
        ref_load = best_cpu(lambda: spm.SentencePieceProcessor(model_file=str(path)))
        if hasattr(cache, "cached_sentencepiece"):
            cache.cached_sentencepiece(path, path.name)
            cached_load = best_cpu(lambda: cache.cached_sentencepiece(path, path.name))
        else:  # a tree without the SentencePiece cache
            cached_load = float("nan")
        if load_only:
            print(f"{path.name[:44]:<44} {ours_load * 1e3:5.1f}ms {ref_load * 1e3:5.1f}ms {ours_load / ref_load:5.1f}x "
                  f"{cached_load * 1e3:5.1f}ms {cached_load / ref_load:5.1f}x")
            continue
        ref = spm.SentencePieceProcessor(model_file=str(path))
        t = time.perf_counter()
        want = ref.encode(text)
        ref_encode = time.perf_counter() - t
        tok = from_model_bytes(data, path.name)
        t = time.perf_counter()
        got = tok.encode(text, disallowed_special=())
        cold = time.perf_counter() - t
        t = time.perf_counter()
        tok.encode(text, disallowed_special=())
        warm = time.perf_counter() - t
        same = "" if got == want else "  IDS DIFFER"
        print(f"{path.name[:44]:<44} {ours_load * 1e3:5.1f}ms {ref_load * 1e3:5.1f}ms {ours_load / ref_load:5.1f}x "
              f"{cached_load * 1e3:5.1f}ms {cached_load / ref_load:5.1f}x   "
              f"{cold:6.2f}s {warm:6.2f}s {ref_encode:6.2f}s {cold / ref_encode:5.1f}x {warm / ref_encode:5.1f}x{same}")
    print("targets: load <= 2x, encode 1 MB <= 3x")
    shutil.rmtree(os.environ["TOKSCOPE_CACHE_DIR"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
