"""Load time of each OpenAI encoding, cold (empty rank cache) and cached, each in a fresh process.

    python bench/bench_load.py [ENCODING ...]

Cold: a new empty ``TOKSCOPE_CACHE_DIR`` (the files are read from the tiktoken cache or the
carriers, sha256-checked, parsed, and the rank cache written). Cached: the same again, now served
by the rank cache. The time covers ``registry.load(name)`` only (not the interpreter start).
Target: under 1 s for o200k_base.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

NAMES = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
CHILD = (
    "import time, sys\n"
    "from tokscope.sources import registry\n"
    "t = time.perf_counter(); tok = registry.load(sys.argv[1]); dt = time.perf_counter() - t\n"
    "print(dt, tok.n_vocab)\n"
)


def timed_load(name: str, cache_dir: str) -> float:
    env = dict(os.environ, TOKSCOPE_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", CHILD, name], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])


def main(argv: list[str]) -> int:
    names = argv or NAMES
    print(f"{'encoding':<14} {'cold':>8} {'cached':>8}")
    worst = 0.0
    for name in names:
        with tempfile.TemporaryDirectory() as cache_dir:
            cold = timed_load(name, cache_dir)
            cached = min(timed_load(name, cache_dir) for _ in range(3))
        if name == "o200k_base":
            worst = max(cold, cached)
        print(f"{name:<14} {cold * 1e3:6.0f}ms {cached * 1e3:6.0f}ms")
    if "o200k_base" in names:
        print(f"o200k_base target < 1 s: {'ok' if worst < 1 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
