"""``encode_batch``: tokscope's against a plain loop, tiktoken's and Hugging Face's, in one process.

    python bench/bench_batch.py [--repeat N] [--sizes 8x100,1000x1000,4000x1000] [ENCODING ...]

For each batch (N texts of about M characters, cut from ``_corpus.prose`` and the fresh
multilingual text of ``_fresh_text``, never repeated) and each encoding it times, alternating,
each on a fresh tokenizer (empty caches): a plain loop of ``encode`` (*loop*); the threads of
earlier tokscope releases (8 threads, *threads*: the interpreter lock makes them slower than the
loop); ``encode_batch`` as it is now (*batch*: a loop for small batches, worker processes for
large ones); tiktoken's ``encode_batch`` (8 threads in Rust) on the same ranks; and for llama3,
``tokenizers``' ``encode_batch_fast`` single-threaded (``RAYON_NUM_THREADS=1``) on the same
model's ``tokenizer.json``. Every output is checked identical to tiktoken's. Printed: the best of
``--repeat`` runs and the ratios.

Targets (issue 22, item 2): batch <= 1.5x tiktoken's ``encode_batch``, <= 1.0x HF's
single-threaded ``encode_batch``, and never slower than the loop.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent), str(ROOT / "tests" / "core")]

from _corpus import prose  # noqa: E402
from _fresh_text import fresh_multilingual  # noqa: E402

from tokscope.core import Tokenizer  # noqa: E402
from tokscope.sources import registry  # noqa: E402
from tokscope.sources.tiktoken_adapter import reference_for  # noqa: E402


def texts(count: int, size: int) -> list[str]:
    """``count`` texts of about ``size`` characters, half English, half other languages."""
    total = count * size
    pool = prose(total // 2 + size) + fresh_multilingual(total // 2 + size)
    return [pool[i * size : (i + 1) * size] for i in range(count)]


def timed(fn):
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def fresh(base):
    return Tokenizer(base.name, base.ranks, base.pattern, base.special_tokens)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("encodings", nargs="*", default=["cl100k_base", "o200k_base", "llama3"])
    parser.add_argument("--sizes", default="8x100,1000x1000,4000x1000", help="COUNTxCHARS,...")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    batches = [tuple(map(int, s.split("x"))) for s in args.sizes.split(",")]
    print(f"{'encoding':<12} {'batch':>10} {'MB':>5} {'tiktoken':>9} {'HF 1 thr':>9} {'loop':>8} {'threads':>8} "
          f"{'batch':>8} {'b/loop':>7} {'b/tik':>6} {'b/HF':>6}")
    ok = True
    for name in args.encodings:
        base = registry.load(name)
        ref = reference_for(base)
        hf = None
        if name == "llama3":
            import hf_files

            hf = hf_files.hf_tokenizer("llama3")
        for count, size in batches:
            batch = texts(count, size)
            want = ref.encode_batch(batch, disallowed_special=())
            runs: dict[str, list[float]] = {k: [] for k in ("tiktoken", "hf", "loop", "threads", "batch")}
            for _ in range(args.repeat):
                t, got = timed(lambda: ref.encode_batch(batch, disallowed_special=()))
                runs["tiktoken"].append(t)
                if hf is not None:
                    t, enc = timed(lambda: hf.encode_batch_fast(batch, add_special_tokens=False))
                    runs["hf"].append(t)
                    assert [e.ids for e in enc] == want, "HF differs"
                tok = fresh(base)
                t, got = timed(lambda: [tok.encode(x, disallowed_special=()) for x in batch])
                runs["loop"].append(t)
                assert got == want, "loop differs"
                tok = fresh(base)
                with ThreadPoolExecutor(8) as pool:
                    t, got = timed(lambda: list(pool.map(lambda x: tok.encode(x, disallowed_special=()), batch)))
                runs["threads"].append(t)
                assert got == want, "threads differ"
                tok = fresh(base)
                t, got = timed(lambda: tok.encode_batch(batch, disallowed_special=()))
                runs["batch"].append(t)
                assert got == want, "encode_batch differs"
            best = {k: min(v) if v else None for k, v in runs.items()}
            vs_loop = best["batch"] / best["loop"]
            vs_tik = best["batch"] / best["tiktoken"]
            vs_hf = best["batch"] / best["hf"] if best["hf"] else None
            ok &= vs_loop <= 1.05 and vs_tik <= 1.5 and (vs_hf is None or vs_hf <= 1.0)
            mb = sum(len(x.encode()) for x in batch) / 1e6
            hf_s = f"{best['hf'] * 1e3:7.0f}ms" if best["hf"] else f"{'-':>9}"
            hf_r = f"{vs_hf:5.2f}x" if vs_hf else f"{'-':>6}"
            print(f"{name:<12} {count:>5}x{size:<4} {mb:5.2f} {best['tiktoken'] * 1e3:7.1f}ms {hf_s} "
                  f"{best['loop'] * 1e3:6.0f}ms {best['threads'] * 1e3:6.0f}ms {best['batch'] * 1e3:6.0f}ms "
                  f"{vs_loop:6.2f}x {vs_tik:5.2f}x {hf_r}", flush=True)
    print("outputs identical to tiktoken's (and HF's) in every run; " + ("all targets met" if ok else "some targets missed"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
