"""``tokscope count`` over a folder of 200 files (10 MB in all) against tiktoken's
``encode_ordinary_batch`` over the same texts, whole process against whole process.

    PYTHONPATH=$PWD python bench/bench_count.py [--mb 10] [--files 200] [--repeat 3] [--encoding o200k_base]

The folder is built at run time from ``_corpus.py``'s material, written once: half English prose
(the language reference, then standard-library docstrings), half Python code (the standard
library's modules), cut at line breaks into files of varied sizes (a few hundred bytes to ~150 KB).
Rows, each a fresh process on each side, run alternately (ours, theirs, ours, theirs ...), so a
busy machine shifts both alike:

- ``count DIR``: ``tokscope count DIR --total`` with its default workers, against a ``python -c``
  that builds tiktoken from the same official files (no download), reads the files and prints the
  total of ``encode_ordinary_batch`` over them;
- ``count -j 1 DIR``: the same in one process;
- ``count BIG``: the same 10 MB as one file, against ``encode_ordinary_batch`` of that one text;
- ``start-up``: both on a file of one line (loading the encoding is most of it).

``--mixed`` builds the folder issue 22 item 1 names instead: mostly languages other than English
(70% ``_fresh_text.fresh_multilingual``: real translations, every paragraph once), 15% prose, 15%
code. Target there: ``count -j 2 DIR`` at most 1.5x tiktoken.

Printed per row: median wall seconds and CPU seconds (user + system, workers included) of each
side, and the median of the pairs' wall ratios; the load average and the CPUs before and after.
The totals are checked equal. Not a test: run it by hand.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import code, prose  # noqa: E402
from _fresh_text import fresh_multilingual  # noqa: E402

REFERENCE = """
import sys
from pathlib import Path
from tokscope.sources import builtin, tiktoken_adapter as tk
name, paths = sys.argv[1], sys.argv[2:]
spec = tk.encoding_spec(name)
enc = tk.reference_encoding(name, builtin.load_ranks(name), spec.pattern, spec.special_tokens)
files = []
for p in paths:
    path = Path(p)
    files.extend(sorted(path.iterdir()) if path.is_dir() else [path])
texts = [f.read_bytes().decode("utf-8") for f in files]  # no newline translation
print(sum(map(len, enc.encode_ordinary_batch(texts))))
"""


def build_folder(folder: Path, mb: float, n_files: int, mixed: bool = False) -> str:
    """Write ``n_files`` files of about ``mb`` MB in all into ``folder``; returns the whole text."""
    size = int(mb * 1_000_000)
    if mixed:
        halves = [fresh_multilingual(size * 7 // 10) + prose(size * 15 // 100), code(size * 15 // 100)]
    else:
        halves = [prose(size // 2), code(size - size // 2)]
    # sizes from 1 to 100 parts (a fixed scramble), scaled to each half
    weights = [1 + (i * 7919) % 100 for i in range(n_files)]
    out = []
    index = 0
    for half, text in enumerate(halves):
        ws = weights[half::2]
        scale = len(text) / sum(ws)
        pos = 0
        for k, w in enumerate(ws):
            end = len(text) if k == len(ws) - 1 else text.find("\n", pos + int(w * scale)) + 1 or len(text)
            piece = text[pos:end]
            pos = end
            (folder / f"f{index:03d}.txt").write_text(piece, encoding="utf-8")
            out.append(piece)
            index += 1
    return "".join(out)


def run_timed(argv: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process and its children, standard output) of one process."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = os.times()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:6])} ... failed ({proc.returncode}): {proc.stderr.decode().strip()}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, proc.stdout.decode().strip()


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10.0, help="size of the folder in MB (default 10)")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs per row (default 3)")
    parser.add_argument("--encoding", default="o200k_base")
    parser.add_argument("--mixed", action="store_true", help="a folder mostly of other languages (issue 22 item 1)")
    parser.add_argument("-j", dest="jobs", default=None, help="workers for the first row (default: tokscope's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        folder.mkdir()
        whole = build_folder(folder, args.mb, args.files, args.mixed)
        big = Path(tmp) / "big.txt"
        big.write_text(whole, encoding="utf-8")
        tiny = Path(tmp) / "tiny.txt"
        tiny.write_text("Hello, world\n", encoding="utf-8")
        sizes = sorted(p.stat().st_size for p in folder.iterdir())
        print(f"folder: {len(sizes)} files, {sum(sizes) / 1e6:.2f} MB (files {sizes[0]:,} to {sizes[-1]:,} bytes); "
              f"encoding {args.encoding}")
        print(f"before: {load()}")
        cli = [sys.executable, "-m", "tokscope.cli", "count", "-e", args.encoding, "--total",
               "--max-bytes", str(int(args.mb * 4_000_000))]
        ref = [sys.executable, "-c", REFERENCE, args.encoding]
        rows = [
            ("count DIR" if args.jobs is None else f"count -j {args.jobs} DIR",
             cli + ([] if args.jobs is None else ["-j", args.jobs]) + [str(folder)], ref + [str(folder)]),
            ("count -j 1 DIR", cli + ["-j", "1", str(folder)], ref + [str(folder)]),
            ("count BIG", cli + [str(big)], ref + [str(big)]),
            ("start-up", cli + [str(tiny)], ref + [str(tiny)]),
        ]
        print(f"{'row':<16} {'tokscope wall':>13} {'cpu':>6} {'tiktoken wall':>14} {'cpu':>6} {'wall x':>7} "
              f"{'cpu x':>6}  totals")
        for label, ours, theirs in rows:
            mine, refs, ratios = [], [], []
            for _ in range(args.repeat):
                a = run_timed(ours)
                b = run_timed(theirs)
                if a[2] != b[2]:
                    raise SystemExit(f"{label}: tokscope counts {a[2]}, tiktoken {b[2]}")
                mine.append(a)
                refs.append(b)
                ratios.append(a[0] / b[0])
            w1, c1 = statistics.median(m[0] for m in mine), statistics.median(m[1] for m in mine)
            w2, c2 = statistics.median(r[0] for r in refs), statistics.median(r[1] for r in refs)
            print(f"{label:<16} {w1:>11.2f} s {c1:>6.2f} {w2:>12.2f} s {c2:>6.2f} {statistics.median(ratios):>7.2f} "
                  f"{c1 / c2:>6.2f}  {mine[0][2]}")
        print(f"after:  {load()}")


if __name__ == "__main__":
    main()
