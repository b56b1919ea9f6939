"""``tokscope train`` as a user runs it, whole process, against Hugging Face ``tokenizers``.

    python bench/bench_cli_train.py [--pairs N] [--only 1000|30000]

Each side is a fresh process that starts the interpreter, imports its library, reads the corpus
file, trains a byte-level BPE with the GPT-2 pre-tokenization pattern, minimum frequency 2, and
writes the tokenizer file:

* tokscope: ``tokscope train FILE --merges N -o OUT.json --force`` (this checkout's package; the file is replaced on each run);
* tokenizers: ``python -c`` with ``models.BPE``, ``pre_tokenizers.ByteLevel`` (its GPT-2 regex),
  ``BpeTrainer(vocab_size=256 + N, min_frequency=2, initial_alphabet=ByteLevel.alphabet())``,
  ``train_from_iterator([text])`` and ``save(OUT)``, one thread (``RAYON_NUM_THREADS=1``).

Runs alternate (tokscope, tokenizers, tokscope, ...); each pair gives a ratio and the median of the
pairs' ratios is the figure (the machine is shared, so absolute times drift; ratios of neighbours
drift less). The median ratio of the processes' CPU times (user + system) is printed too: on a busy
machine it moves less than wall time. The load average is printed before and after.

Corpora (``_corpus.py``, built at run time, written to a temporary file):

* 1,000 merges: 1 MB of English prose (``prose``);
* 30,000 merges: 1 MB of ``lexicon`` text (Zipf-distributed made-up words), because 1 MB of
  English prose runs out of pairs seen twice after ~10,000 merges.

Compiled modules are cached (``PYTHONPYCACHEPREFIX`` in the temporary folder, warmed by a first
run), as after ``pip install``; ``--no-pyc`` keeps ``PYTHONDONTWRITEBYTECODE`` from the
environment, so every tokscope start compiles its modules again (~100 ms).

Target: at most 1.5x for both.
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

from _corpus import lexicon, prose  # noqa: E402

TARGET = 1.5
RUNS = {1000: ("prose", prose), 30000: ("lexicon", lexicon)}

HF = """
import sys
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
path, merges, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, encoding="utf-8") as f:
    text = f.read()
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
trainer = trainers.BpeTrainer(vocab_size=256 + merges, min_frequency=2, show_progress=False,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train_from_iterator([text], trainer=trainer)
tok.save(out)
print(tok.get_vocab_size() - 256)
"""


def tokscope_cmd() -> list[str]:
    script = shutil.which("tokscope") or str(Path(sys.executable).with_name("tokscope"))
    return [sys.executable, script]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str, float]:
    """Wall time, standard output and CPU time (user + system) of one process."""
    cpu0 = cpu()
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{done.stderr}")
    return elapsed, done.stdout, cpu() - cpu0


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7, help="alternating pairs per run (default: 7)")
    parser.add_argument("--only", type=int, choices=sorted(RUNS), help="one of the two runs")
    parser.add_argument("--no-pyc", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE from the environment: every start compiles tokscope")
    args = parser.parse_args(argv)

    env = dict(os.environ, RAYON_NUM_THREADS="1", RAYON_RS_NUM_CPUS="1", PYTHONPATH=str(ROOT))
    env.pop("TOKSCOPE_DATA_DIR", None)
    if not args.no_pyc:
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled modules are cached, as after pip install
    print(f"load average before: {load()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp, "pycache"))
        for merges, (corpus_name, build) in RUNS.items():
            if args.only and merges != args.only:
                continue
            corpus = Path(tmp, f"{corpus_name}.txt")
            corpus.write_text(build(1_000_000), encoding="utf-8")
            ours = [*tokscope_cmd(), "train", str(corpus), "--merges", str(merges), "-o", str(Path(tmp, "ours.json")), "--force"]
            theirs = [sys.executable, "-c", HF, str(corpus), str(merges), str(Path(tmp, "hf.json"))]
            timed(ours, env)  # warm the bytecode cache and the file system
            timed(theirs, env)
            t_ours, t_hf, ratios, cpu_ratios = [], [], [], []
            for _ in range(args.pairs):
                a, _, ca = timed(ours, env)
                b, hf_out, cb = timed(theirs, env)
                t_ours.append(a)
                t_hf.append(b)
                ratios.append(a / b)
                cpu_ratios.append(ca / cb)
            learned = int(hf_out.strip())
            rows.append((merges, corpus_name, statistics.median(t_ours), statistics.median(t_hf),
                         statistics.median(ratios), min(ratios), max(ratios), learned, statistics.median(cpu_ratios)))
    print(f"load average after:  {load()}")
    print(f"\n{'merges':>7} {'corpus':<8} {'tokscope':>9} {'tokenizers':>10} {'ratio':>6} {'range':>12} "
          f"{'cpu ratio':>9}  hf merges")
    ok = True
    for merges, name, a, b, r, lo, hi, learned, cr in rows:
        ok &= r <= TARGET
        print(f"{merges:>7,} {name:<8} {a:>8.3f}s {b:>9.3f}s {r:>5.2f}x {lo:>5.2f}-{hi:.2f}x {cr:>8.2f}x  {learned:,}"
              f"  {'ok' if r <= TARGET else 'MISSED'} (<= {TARGET}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
