"""SentencePiece ``.model`` files: tokscope against the sentencepiece library, in one process.

    python bench/bench_sentencepiece.py [--no-python] [--load-only] [MODEL ...]

For each model (default: every Mistral model in ``mistral_common``'s data, v1 to v7 (BPE), the
sentencepiece sdist's botchan BPE and Unigram and kyoto Unigram models when the test cache holds
them, and a T5-style Unigram: XLM-R's 250k pieces with their precompiled charsmap, from llama.cpp's
``nomic-bert-moe`` vocabulary GGUF in the test cache, written out as a ``.model``):

* load: ``from_model_bytes`` (parse the ModelProto, build the pipeline; a Unigram model's
  compiled lattice too) against ``SentencePieceProcessor(model_proto=...)``, the least CPU time
  of 15 each, the two run alternately (loads are single-threaded work on both sides; on a shared
  machine their wall times mostly measure the neighbours). Target: <= 2x. The pieces are read by the compiled reader
  (``merge.c``) when it is installed; ``py load`` is the ratio with the Python reader.
* py cached: the same file through tokscope's data-only cache (``sources.cache.cached_sentencepiece``,
  a temporary cache folder) with the Python reader, as a second load reads it: the cache serves
  only the Python reader, and only models of ``SPM_CACHE_MIN_PIECES`` pieces or more (smaller
  ones are parsed again). With the compiled reader nothing is cached. ``--load-only`` stops after
  the load columns.
* encode, on 1 MB of English prose (``_corpus.prose``) and 1 MB of multilingual text
  (``_fresh_text.multilingual``: 23 languages, never-repeated words): a fresh tokenizer (cold:
  empty caches; the least of 3 fresh tokenizers) and the same text again (warm, the best of 3),
  against the library's ``encode`` of the same text (the best of 3), all in CPU time (both sides
  encode on one thread). Target: <= 3x. For a Unigram model the walk over the lattice is the
  compiled one (``merge.c``) when it is installed; ``python x`` is the cold ratio with the
  pure-Python walk (the walk before the compiled lattice; ``--no-python`` skips it, it takes
  seconds).

Ratios are tokscope's time over the library's; ids are checked equal. The load average is
printed before and after.
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
from _fresh_text import multilingual  # noqa: E402

from tokscope.core.formats import sentencepiece_model  # noqa: E402
from tokscope.core.formats.sentencepiece_model import build_model, from_model_bytes  # noqa: E402
from tokscope.core.models import unigram  # noqa: E402
from tokscope.core.models.sentencepiece_unigram import SentencePieceUnigram  # noqa: E402

T5_NAME = "t5-style xlm-r (nomic-bert-moe)"


def _cache() -> Path:
    return Path(os.environ.get("TOKSCOPE_TEST_CACHE") or Path.home() / ".cache" / "tokscope-tests")


def default_models() -> list[Path]:
    out = []
    spec = importlib.util.find_spec("mistral_common")
    if spec is not None and spec.submodule_search_locations:
        data = Path(list(spec.submodule_search_locations)[0]) / "data"
        out += sorted(p for p in data.glob("*.model*") if p.is_file())
    test = _cache() / "sentencepiece-0.2.3" / "test"
    out += [p for p in sorted(test.glob("*.model"))]
    return out


def t5_model() -> bytes | None:
    """XLM-R's pieces and charsmap (as T5 and mT5 models carry them) as a Unigram ``.model``, from
    llama.cpp's vocabulary GGUF in the test cache (None when it is not there)."""
    from tokscope.core.formats.gguf import read_metadata

    path = _cache() / "llama_cpp_python-0.3.36-vocab" / "models" / "ggml-vocab-nomic-bert-moe.gguf"
    if not path.is_file():
        return None
    meta = read_metadata(path)
    pieces = list(zip(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"], meta["tokenizer.ggml.token_type"]))
    return build_model(pieces, trainer={3: 1}, normalizer={1: "nmt_nfkc", 2: bytes(meta["tokenizer.ggml.precompiled_charsmap"]),
                                                           3: 1, 4: 1, 5: 1})


def best(fn, runs: int = 5, clock=time.perf_counter) -> float:
    times = []
    for _ in range(runs):
        t = clock()
        fn()
        times.append(clock() - t)
    return min(times)


def best_cpu(fn, runs: int = 15) -> float:
    """The least CPU time of ``fn``."""
    return best(fn, runs, time.process_time)


def best_cpu_pair(ours, theirs, runs: int = 15) -> tuple[float, float]:
    """The least CPU time of each of two functions, run alternately (so both meet the same
    neighbours on a shared machine)."""
    a, b = [], []
    for _ in range(runs):
        for fn, times in ((ours, a), (theirs, b)):
            t = time.process_time()
            fn()
            times.append(time.process_time() - t)
    return min(a), min(b)


def timed(fn, clock=time.process_time):
    t = clock()
    out = fn()
    return out, clock() - t


def python_reader(fn):
    """``fn()`` with the Python ``.model`` reader (the only one before the compiled reader)."""
    switch = getattr(sentencepiece_model, "use_compiled", None)
    if switch is None:
        return fn()
    switch(False)
    try:
        return fn()
    finally:
        switch(True)


def main(argv: list[str]) -> int:
    import sentencepiece as spm

    os.environ["TOKSCOPE_CACHE_DIR"] = folder = tempfile.mkdtemp(prefix="bench-spm-cache-")
    from tokscope.sources import cache

    python_walk = "--no-python" not in argv
    load_only = "--load-only" in argv
    args = [a for a in argv if a not in ("--no-python", "--load-only")]
    models: list[tuple[str, bytes]] = [(p.name, p.read_bytes()) for p in map(Path, args or [])]
    if not args:
        models = [(p.name, p.read_bytes()) for p in default_models()]
        t5 = t5_model()
        if t5 is not None:
            models.append((T5_NAME, t5))
    texts = {"English": prose(), "multilingual": multilingual(1_000_000)}
    compiled = unigram.compiled_available()
    reader = getattr(sentencepiece_model, "compiled_reader", lambda: None)() is not None
    print(f"load average {os.getloadavg()[0]:.1f}; texts: {', '.join(f'{k} {len(v):,} characters' for k, v in texts.items())}; "
          f"compiled lattice: {'yes' if compiled else 'NOT INSTALLED'}; compiled reader: {'yes' if reader else 'NOT INSTALLED'}")
    print(f"{'model':<34} {'load':>7} {'spm':>7} {'ratio':>5} {'py load':>7} {'py cached':>9}  {'text':<12} {'spm':>6} "
          f"{'cold':>6} {'warm':>6} {'cold x':>6} {'warm x':>6} {'python x':>8}")
    for name, data in models:
        ours_load, ref_load = best_cpu_pair(lambda: from_model_bytes(data, name),
                                            lambda: spm.SentencePieceProcessor(model_proto=data))
        python_load = python_reader(lambda: best_cpu(lambda: from_model_bytes(data, name)))
        path = Path(folder) / "model.model"
        path.write_bytes(data)
        python_reader(lambda: cache.cached_sentencepiece(path, name))  # written once (a large model), then read back
        cached_load = python_reader(lambda: best_cpu(lambda: cache.cached_sentencepiece(path, name)))
        ref = spm.SentencePieceProcessor(model_proto=data)
        head = (f"{name[:34]:<34} {ours_load * 1e3:5.1f}ms {ref_load * 1e3:5.1f}ms {ours_load / ref_load:4.1f}x "
                f"{python_load / ref_load:6.1f}x {cached_load / ref_load:8.1f}x")
        if load_only:
            print(head)
            continue
        for label, text in texts.items():
            want = ref.encode(text)
            ref_encode = best(lambda: ref.encode(text), 3, time.process_time)
            colds = []
            for _ in range(3):
                tok = from_model_bytes(data, name)
                got, cold = timed(lambda: tok.encode(text, disallowed_special=()))
                colds.append(cold)
            cold = min(colds)
            warm = best(lambda: tok.encode(text, disallowed_special=()), 3, time.process_time)
            same = "" if got == want else "  IDS DIFFER"
            before = ""
            if python_walk and compiled and isinstance(tok.model, SentencePieceUnigram):
                unigram.use_compiled(False)
                try:
                    slow = from_model_bytes(data, name)
                    got, cold_python = timed(lambda: slow.encode(text, disallowed_special=()))
                finally:
                    unigram.use_compiled(True)
                before = f"{cold_python / ref_encode:7.1f}x"
                same += "" if got == want else "  PYTHON IDS DIFFER"
            print(f"{head:<75}  {label:<12} {ref_encode:5.2f}s {cold:5.2f}s {warm:5.2f}s "
                  f"{cold / ref_encode:5.1f}x {warm / ref_encode:5.1f}x {before:>8}{same}")
            head = ""
    print(f"targets: load <= 2x, encode 1 MB <= 3x; load average {os.getloadavg()[0]:.1f}")
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
