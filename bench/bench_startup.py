"""Start-up of the command line, whole processes: ``tokscope --version`` against a bare ``python -c
pass``, and ``tokscope encode -e cl100k_base hello`` against the same with tiktoken
(``python -c "import tiktoken; print(tiktoken.get_encoding('cl100k_base').encode('hello'))"``).

Targets: ``--version`` within 60 ms of wall time; ``encode`` at most 1.0x tiktoken's. Each figure is
the median of several runs, the two sides interleaved so that a busy machine shifts both alike.

    python bench/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(argv: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # an installed package has its bytecode compiled; without it every run measures the compiler
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def measure(pairs: dict[str, tuple[list[str], list[str]]], runs: int) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in pairs}
    for name, (ours, theirs) in pairs.items():
        _run(ours), _run(theirs)  # warm the file cache (and tokscope's parsed-file cache)
        for _ in range(runs):
            out[name][0].append(_run(ours))
            out[name][1].append(_run(theirs))
    return {k: (statistics.median(a), statistics.median(b)) for k, (a, b) in out.items()}


def tiktoken_cache() -> str:
    """A tiktoken cache holding cl100k_base, as a user of tiktoken has after its first run (tiktoken
    would download the file; here it is written from the offline copy tokscope reads)."""
    import tempfile

    folder = tempfile.mkdtemp(prefix="bench-startup-")
    os.environ["TIKTOKEN_CACHE_DIR"] = folder
    sys.path.insert(0, str(ROOT))
    import tiktoken
    import tiktoken.load

    from tokscope.core.formats.tiktoken_ranks import dump_tiktoken_bpe
    from tokscope.sources import builtin

    data = dump_tiktoken_bpe(builtin.load_ranks("cl100k_base"))
    fetch = tiktoken.load.read_file
    tiktoken.load.read_file = lambda path: data  # tiktoken checks the sha256 and writes its cache
    try:
        tiktoken.get_encoding("cl100k_base")
    finally:
        tiktoken.load.read_file = fetch
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    py = sys.executable
    tiktoken_cache()  # both sides see it (TIKTOKEN_CACHE_DIR): the same bytes on disk
    pairs = {
        "--version vs python -c pass": ([py, "-m", "tokscope", "--version"], [py, "-c", "pass"]),
        "encode -e cl100k_base hello vs tiktoken": (
            [py, "-m", "tokscope", "encode", "-e", "cl100k_base", "hello"],
            [py, "-c", "import tiktoken; print(tiktoken.get_encoding('cl100k_base').encode('hello'))"],
        ),
    }
    for name, (ours, theirs) in measure(pairs, args.runs).items():
        extra = f"  (+{(ours - theirs) * 1000:.0f} ms over the interpreter)" if "--version" in name else ""
        print(f"{name:<42} {ours * 1000:7.0f} ms vs {theirs * 1000:7.0f} ms  ratio {ours / theirs:5.2f}x{extra}")


if __name__ == "__main__":
    main()
