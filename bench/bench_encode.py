"""Encode throughput of the core against tiktoken, in the same process, single thread.

    python bench/bench_encode.py [--size BYTES] [--repeat N] [ENCODING ...]

For cl100k_base and o200k_base on ~1 MB of English prose and ~1 MB of Python code (built at run
time from ``pydoc_data.topics`` and the standard library, see ``_corpus.py``) it prints the core's
time cold (a fresh Tokenizer: empty chunk cache) and warm (the same text again), tiktoken's
``encode_ordinary`` time on the same ranks and pattern, and the ratios. Each time is the best of
``--repeat`` runs. The ids are checked to be identical.

Targets: cold <= 3x tiktoken for cl100k_base and <= 5x for o200k_base; warm <= 2x.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import CORPORA  # noqa: E402

from tokscope.core import Tokenizer  # noqa: E402
from tokscope.sources import registry  # noqa: E402
from tokscope.sources.tiktoken_adapter import reference_for  # noqa: E402

TARGETS = {"cl100k_base": (3.0, 2.0), "o200k_base": (5.0, 2.0)}


def best(fn, repeat: int) -> tuple[float, object]:
    times = []
    result = None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("encodings", nargs="*", default=list(TARGETS))
    parser.add_argument("--size", type=int, default=1_000_000, help="characters per corpus")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    corpora = {name: build(args.size) for name, build in CORPORA.items()}
    print(f"{'encoding':<13} {'corpus':<6} {'MB':>5} {'tiktoken':>9} {'cold':>8} {'warm':>8} "
          f"{'cold x':>7} {'warm x':>7}  targets")
    ok = True
    for name in args.encodings:
        base = registry.load(name)
        ref = reference_for(base)
        cold_target, warm_target = TARGETS.get(name, (5.0, 2.0))
        for corpus, text in corpora.items():
            t_ref, want = best(lambda: ref.encode_ordinary(text), args.repeat)

            def cold() -> list[int]:
                fresh = Tokenizer(base.name, base.ranks, base.pattern, base.special_tokens)
                return fresh.encode_ordinary(text)

            t_cold, got = best(cold, args.repeat)
            warm_tok = Tokenizer(base.name, base.ranks, base.pattern, base.special_tokens)
            warm_tok.encode_ordinary(text)
            t_warm, got_warm = best(lambda: warm_tok.encode_ordinary(text), args.repeat)
            if got != want or got_warm != want:
                print(f"MISMATCH: {name} {corpus}: the core's ids differ from tiktoken's")
                return 1
            rc, rw = t_cold / t_ref, t_warm / t_ref
            meets = rc <= cold_target and rw <= warm_target
            ok &= meets
            print(f"{name:<13} {corpus:<6} {len(text.encode()) / 1e6:5.2f} {t_ref * 1e3:7.0f}ms "
                  f"{t_cold * 1e3:6.0f}ms {t_warm * 1e3:6.0f}ms {rc:6.2f}x {rw:6.2f}x  "
                  f"<={cold_target:g}x/<={warm_target:g}x {'ok' if meets else 'MISSED'}")
    print("all targets met" if ok else "some targets missed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
