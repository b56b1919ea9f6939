"""Training speed and memory: tokscope's trainer against Hugging Face ``tokenizers``.

Run by hand: ``python bench/bench_train.py``. Both train a byte-level BPE on the same ~1 MB of
English (``_corpus.prose``: the Python language reference's topics from ``pydoc_data``, repeated)
with the GPT-2 pre-tokenization pattern and minimum frequency 2, in this process, single-threaded
(``RAYON_RS_NUM_CPUS=1``). Printed: times and ratios (tokscope / tokenizers) for 256+1000 and for
training until the pairs run out (capped at 30,000 merges); then tokscope's peak traced memory
against the corpus size. Targets: at most 2x the tokenizers time, 1000 merges on 1 MB in under
2 s, memory at most 10x the corpus.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAYON_RS_NUM_CPUS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

from tokscope.core.train.trainer import PATTERN_NONE, train  # noqa: E402
from tokscope.sources.names import pattern_for  # noqa: E402

SIZE = 1_000_000
MAX_MERGES = 30_000


def corpus(size: int = SIZE) -> str:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _corpus import prose

    return prose(size)


def best_of(n: int, fn):
    times = []
    out = None
    for _ in range(n):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def hf_train(text: str, vocab_size: int) -> tuple[float, int]:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    def run():
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, min_frequency=2, show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        tok.train_from_iterator([text], trainer=trainer)
        return tok.get_vocab_size()

    return best_of(2, run)


def ours(text: str, pattern: str, merges: int, tie: str = "first"):
    return best_of(2, lambda: train(text, merges=merges, pattern=pattern, tie=tie))


def main() -> int:
    text = corpus()
    pattern, _ = pattern_for("gpt2")
    print(f"corpus: {len(text):,} characters, {len(text.encode()):,} bytes (pydoc_data topics), pattern gpt2")
    try:
        import tokenizers
    except ImportError:
        tokenizers = None
        print("(Hugging Face tokenizers is not installed: pip install 'tokscope[bench]'; ratios skipped)")
    rows = []
    for label, merges in (("256+1000", 1000), ("until pairs run out", MAX_MERGES)):
        for tie in ("first", "lexical"):
            t_ours, result = ours(text, pattern, merges, tie)
            row = [f"{label} (tie {tie})", len(result.merges), t_ours]
            if tokenizers is not None:
                t_hf, hf_vocab = hf_train(text, 256 + merges)
                row += [hf_vocab - 256, t_hf, t_ours / t_hf]
            rows.append(row)
    print(f"\n{'run':<34} {'merges':>7} {'tokscope':>9} {'hf merges':>9} {'tokenizers':>10} {'ratio':>6}")
    for row in rows:
        if len(row) == 3:
            print(f"{row[0]:<34} {row[1]:>7,} {row[2]:>8.3f}s")
        else:
            print(f"{row[0]:<34} {row[1]:>7,} {row[2]:>8.3f}s {row[3]:>9,} {row[4]:>9.3f}s {row[5]:>5.2f}x")
    t1000 = rows[0][2]
    print(f"\n1000 merges on 1 MB: {t1000:.3f}s (target < 2 s: {'met' if t1000 < 2 else 'MISSED'})")
    if tokenizers is not None:
        worst = max(r[5] for r in rows)
        print(f"worst ratio to tokenizers: {worst:.2f}x (target <= 2x: {'met' if worst <= 2 else 'MISSED'})")

    print(f"\n{'peak memory (tracemalloc)':<28} {'corpus':>10} {'peak':>10} {'ratio':>6}")
    for size in (250_000, 500_000, 1_000_000):
        part = text[:size]
        for label, pat in (("gpt2, 1000 merges", pattern), ("none, 300 merges", PATTERN_NONE)):
            if label.startswith("none") and size > 250_000 and "--all" not in sys.argv:
                continue
            merges = 1000 if label.startswith("gpt2") else 300
            tracemalloc.start()
            train(part, merges=merges, pattern=pat)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            nbytes = len(part.encode())
            print(f"{label:<28} {nbytes / 1e6:>8.2f}MB {peak / 1e6:>8.2f}MB {peak / nbytes:>5.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
