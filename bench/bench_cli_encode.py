"""``tokscope encode`` as a user runs it, whole process, against the same job done with tiktoken.

    python bench/bench_cli_encode.py [--pairs N] [--profile] [ENCODING ...]

Each side is a fresh process that starts the interpreter, loads the encoding, reads 1 MB of
English prose (``_corpus.prose``, written to a temporary file), encodes it and prints the ids
(separated by spaces, one line):

* tokscope: ``tokscope encode -e NAME -f FILE`` (this checkout's package, its rank cache warm);
* tiktoken: ``python -c`` with ``tiktoken.get_encoding(NAME)``, ``encode(text)`` and
  ``print(" ".join(map(str, ids)))``, its cache warm: the official vocabulary files (the ones
  tokscope verifies) are put in a temporary ``TIKTOKEN_CACHE_DIR``, so it loads them as a user's
  tiktoken loads its cached downloads, without network.

Runs alternate (tokscope, tiktoken, ...); the median of the pairs' ratios is the figure, with the
median ratio of the processes' CPU times beside it (it moves less on a busy machine). The printed
ids are checked to be identical. ``--profile`` also splits one tokscope run into its
phases (interpreter start, imports, vocabulary load, reading, encoding, printing), in-process.
Each pair also runs a third process, *ids-only*: the command's imports and load, then ``encode``
instead of ``pieces`` and the ids printed (what the CLI's ids-only fast path would cost).

Compiled modules are cached (``PYTHONPYCACHEPREFIX`` in the temporary folder, warmed by a first
run), as they are after ``pip install``; with ``PYTHONDONTWRITEBYTECODE=1`` (``--no-pyc``) every
start compiles tokscope's ~60 modules again, which adds ~100 ms to each tokscope run (tiktoken's
installed modules ship compiled).

Target: at most 2.5x for cl100k_base and o200k_base.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _corpus import prose  # noqa: E402

TARGET = 2.5

#: what ``tokscope encode`` would cost on the ids-only path: the same imports as the command, the same
#: load, ``encode`` instead of ``pieces``, the ids joined by ``map(str, ...)``
WHAT_IF = """
import sys
from tokscope.cli import main
from tokscope.sources.registry import load
tok = load(sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as f:
    text = f.read()
print(" ".join(map(str, tok.encode(text))))
"""

TIKTOKEN = """
import sys, tiktoken
enc = tiktoken.get_encoding(sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as f:
    text = f.read()
print(" ".join(map(str, enc.encode(text))))
"""

PROFILE = """
import time
t0 = time.perf_counter()
import sys
from tokscope.cli import main  # what the tokscope script imports
t1 = time.perf_counter()
from tokscope.sources import registry
tok = registry.load(sys.argv[1])
t2 = time.perf_counter()
with open(sys.argv[2], encoding="utf-8") as f:
    text = f.read()
t3 = time.perf_counter()
pieces = tok.pieces(text)  # what `tokscope encode` computes today
t4 = time.perf_counter()
line = " ".join(str(p.id) for p in pieces)
t5 = time.perf_counter()
with open(sys.argv[3], "w") as out:
    print(line, file=out)
t6 = time.perf_counter()
fresh = type(tok)(tok.name, tok.ranks, tok.pattern, tok.special_tokens)
t7 = time.perf_counter()
ids = fresh.encode(text)  # the ids-only path, on a tokenizer with cold caches
t8 = time.perf_counter()
line2 = " ".join(map(str, ids))
t9 = time.perf_counter()
assert line2 == line
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t8 - t7, t9 - t8)
"""

TIKTOKEN_PROFILE = """
import time
t0 = time.perf_counter()
import sys, tiktoken
t1 = time.perf_counter()
enc = tiktoken.get_encoding(sys.argv[1])
t2 = time.perf_counter()
with open(sys.argv[2], encoding="utf-8") as f:
    text = f.read()
t3 = time.perf_counter()
ids = enc.encode(text)
t4 = time.perf_counter()
line = " ".join(map(str, ids))
print(line, file=open(sys.argv[3], "w"))
t5 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)
"""


def tiktoken_cache(folder: Path, names: list[str]) -> None:
    """Put the official vocabulary files of ``names`` where tiktoken looks for its downloads."""
    from tokscope.sources import builtin, tiktoken_adapter

    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    for name in names:
        for file in tiktoken_adapter.encoding_spec(name).files:
            path = tiktoken_adapter.tiktoken_cache_path(file.url)
            assert path is not None
            path.write_bytes(builtin._fetch_bytes(file))


def tokscope_cmd() -> list[str]:
    script = shutil.which("tokscope") or str(Path(sys.executable).with_name("tokscope"))
    return [sys.executable, script]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


last_cpu = 0.0


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall time and standard output of one process (its CPU time goes to ``last_cpu``)."""
    global last_cpu
    cpu0 = cpu()
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    last_cpu = cpu() - cpu0
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd[:4])} ...\n{done.stderr}")
    return elapsed, done.stdout


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def startup(env: dict[str, str], repeat: int = 5) -> float:
    return statistics.median(run([sys.executable, "-c", "pass"], env)[0] for _ in range(repeat))


def profile(name: str, corpus: Path, tmp: str, env: dict[str, str]) -> None:
    out = str(Path(tmp, "ids.txt"))
    ours = [float(x) for x in run([sys.executable, "-c", PROFILE, name, str(corpus), out], env)[1].split()]
    theirs = [float(x) for x in run([sys.executable, "-c", TIKTOKEN_PROFILE, name, str(corpus), out], env)[1].split()]
    start = startup(env)
    print(f"\n{name}: where one run's time goes (in-process, ms; interpreter start {start * 1e3:.0f} ms for both)")
    print(f"  {'phase':<34} {'tokscope':>9} {'tiktoken':>9}")
    rows = [("imports (tokscope.cli / tiktoken)", ours[0], theirs[0]), ("vocabulary load", ours[1], theirs[1]),
            ("read the file", ours[2], theirs[2]), ("encode: pieces() (today's CLI)", ours[3], theirs[3]),
            ("ids to one line + print", ours[4] + ours[5], theirs[4])]
    for label, a, b in rows:
        print(f"  {label:<34} {a * 1e3:>8.0f}  {b * 1e3:>8.0f}")
    print(f"  {'sum (without interpreter start)':<34} {sum(r[1] for r in rows) * 1e3:>8.0f}  "
          f"{sum(r[2] for r in rows) * 1e3:>8.0f}")
    print(f"  encode() ids only, cold caches: {ours[6] * 1e3:.0f} ms; ' '.join(map(str, ids)): {ours[7] * 1e3:.0f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("encodings", nargs="*", default=["cl100k_base", "o200k_base"])
    parser.add_argument("--pairs", type=int, default=7, help="alternating pairs per encoding (default: 7)")
    parser.add_argument("--profile", action="store_true", help="also split one run into its phases")
    parser.add_argument("--no-pyc", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE from the environment: every start compiles tokscope")
    args = parser.parse_args(argv)

    print(f"load average before: {load()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp, "tiktoken-cache")
        cache.mkdir()
        tiktoken_cache(cache, args.encodings)
        env = dict(os.environ, PYTHONPATH=str(ROOT), TIKTOKEN_CACHE_DIR=str(cache),
                   PYTHONPYCACHEPREFIX=str(Path(tmp, "pycache")))
        if not args.no_pyc:
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled modules are cached, as after pip install
        corpus = Path(tmp, "prose.txt")
        corpus.write_text(prose(1_000_000), encoding="utf-8")
        for name in args.encodings:
            ours = [*tokscope_cmd(), "encode", "-e", name, "-f", str(corpus)]
            theirs = [sys.executable, "-c", TIKTOKEN, name, str(corpus)]
            fast = [sys.executable, "-c", WHAT_IF, name, str(corpus)]
            _, want = run(theirs, env)  # warm both caches (and the file system's)
            for cmd in (ours, fast):
                if run(cmd, env)[1].split() != want.split():
                    print(f"MISMATCH: {name}: {cmd[1]} printed other ids than tiktoken")
                    return 1
            t_ours, t_theirs, ratios, fast_ratios, cpu_ratios = [], [], [], [], []
            for _ in range(args.pairs):
                a, _ = run(ours, env)
                ca = last_cpu
                b, _ = run(theirs, env)
                cb = last_cpu
                c, _ = run(fast, env)
                t_ours.append(a)
                t_theirs.append(b)
                ratios.append(a / b)
                cpu_ratios.append(ca / cb)
                fast_ratios.append(c / b)
            rows.append((name, statistics.median(t_ours), statistics.median(t_theirs), statistics.median(ratios),
                         min(ratios), max(ratios), len(want.split()), statistics.median(fast_ratios),
                         statistics.median(cpu_ratios)))
        if args.profile:
            for name in args.encodings:
                profile(name, corpus, tmp, env)
    print(f"load average after:  {load()}")
    print(f"\n{'encoding':<12} {'tokscope':>9} {'tiktoken':>9} {'ratio':>6} {'range':>12} {'cpu ratio':>9} "
          f"{'tokens':>8}  ids-only")
    ok = True
    for name, a, b, r, lo, hi, n, fr, cr in rows:
        ok &= r <= TARGET
        print(f"{name:<12} {a:>8.3f}s {b:>8.3f}s {r:>5.2f}x {lo:>5.2f}-{hi:.2f}x {cr:>8.2f}x {n:>8,}  {fr:.2f}x  "
              f"{'ok' if r <= TARGET else 'MISSED'} (<= {TARGET}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
