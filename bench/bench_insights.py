"""Benchmark the insights and the training screen (run by hand: ``python bench/bench_insights.py``).

1. Insights on about 1 MB: :func:`tokscope.core.stats.text_stats` (what ``tokscope stats`` and
   the insights screen compute) against a bare encode of the same text by tiktoken, measured in
   this process. Target: the insights under 1 s.
2. The training screen's overhead: train on the same corpus through the screen (driven headless
   with ``App.run_test``), against a direct call of the trainer. Target: within 20%.

Each figure is the best of ``--repeat`` runs. The corpus mixes the shipped samples' words and
lines in a seeded random order, so it is varied like real text rather than one text repeated.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tokscope.core import stats  # noqa: E402
from tokscope.core.tokenizer import Tokenizer  # noqa: E402
from tokscope.sample_texts import language_text, languages, read_sample  # noqa: E402
from tokscope.sources import registry  # noqa: E402

TARGET_INSIGHTS_S = 1.0
TARGET_TRAIN_OVERHEAD = 1.20


def corpus(n_bytes: int, seed: int = 0) -> str:
    """About ``n_bytes`` of text: sample lines, some with their words shuffled, in random order."""
    rng = random.Random(seed)
    lines: list[str] = []
    for name in ("default.txt", "prose.txt", "numbers.txt", "multiscript.txt", "code.py", "data.json"):
        lines.extend(line for line in read_sample(name).splitlines() if line.strip())
    for lang in languages():
        lines.extend(line for line in language_text(lang["code"]).splitlines() if line.strip())
    out: list[str] = []
    size = 0
    while size < n_bytes:
        line = rng.choice(lines)
        if rng.random() < 0.5:
            words = line.split()
            rng.shuffle(words)
            line = " ".join(words)
        if rng.random() < 0.2:
            line += f" {rng.randrange(10 ** rng.randrange(1, 12))}"
        out.append(line)
        size += len(line.encode("utf-8")) + 1
    return "\n".join(out) + "\n"


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def fresh(name: str) -> Tokenizer:
    """A tokenizer with empty caches (the registry's copy keeps its chunk cache between runs)."""
    tok = registry.load(name)
    return Tokenizer(tok.name, tok.ranks, tok.pattern, tok.special_tokens, n_vocab=tok.n_vocab)


def bench_insights(text: str, repeat: int, encodings: list[str]) -> bool:
    from tokscope.sources.tiktoken_adapter import reference_for

    n = len(text.encode("utf-8"))
    print(f"insights on {n / 1e6:.2f} MB (best of {repeat}); target < {TARGET_INSIGHTS_S:.1f} s")
    print(f"  {'encoding':<12} {'tiktoken':>9} {'encode':>9} {'insights':>9} {'+norm':>9}  {'vs tiktoken':>11}  target")
    ok = True
    for name in encodings:
        ref = reference_for(registry.load(name))
        t_ref = best_of(repeat, lambda: ref.encode_ordinary(text))
        t_enc = best_of(repeat, lambda: fresh(name).encode(text, disallowed_special=()))
        t_all = best_of(repeat, lambda: stats.text_stats(fresh(name), text))
        t_norm = best_of(1, lambda: stats.text_stats(fresh(name), text, normalization=True))
        good = t_all < TARGET_INSIGHTS_S
        ok &= good
        print(f"  {name:<12} {t_ref:>8.3f}s {t_enc:>8.3f}s {t_all:>8.3f}s {t_norm:>8.3f}s  {t_all / t_ref:>10.1f}x  "
              f"{'ok' if good else 'MISSED'}")
    print("  (+norm adds the four normalisation forms' encodes; the screen paints the other figures first\n"
          "   and counts these afterwards in the same worker)")
    return ok


def bench_train_screen(text: str, repeat: int, merges: int) -> bool:
    try:
        from tokscope.app.screens import train as train_screen
        from tokscope.core import trainer
    except ImportError as exc:
        print(f"training screen: not available ({exc})")
        return True
    n = len(text.encode("utf-8"))
    print(f"training screen vs bare trainer on {n / 1e6:.2f} MB, {merges} merges (best of {repeat}); "
          f"target within {TARGET_TRAIN_OVERHEAD - 1:.0%}")
    bare_wall, bare_cpu = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), train_screen.process_cpu()
        train_screen.bench_bare_train(text, merges)
        bare_wall.append(time.perf_counter() - start)
        bare_cpu.append(train_screen.process_cpu() - cpu)
    runs = [asyncio.run(train_screen.bench_screen_train(text, merges)) for _ in range(repeat)]
    t_bare, c_bare = min(bare_wall), min(bare_cpu)
    t_screen, c_screen = min(r[0] for r in runs), min(r[1] for r in runs)
    ratio = t_screen / t_bare
    good = ratio <= TARGET_TRAIN_OVERHEAD
    print(f"  wall: bare trainer {t_bare:.3f}s   screen {t_screen:.3f}s   ratio {ratio:.2f}x  {'ok' if good else 'MISSED'}")
    print(f"  cpu:  bare trainer {c_bare:.3f}s   screen {c_screen:.3f}s   ratio {c_screen / c_bare:.2f}x"
          f"  (all threads; the figure to trust when the machine is busy)")
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        print(f"  note: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: wall times are unreliable")
    print("  (screen: from pressing Train to the finished result shown, in a headless app; both runs pass a\n"
          "   progress callback; the screen drains a queue every 0.2 s)")
    del trainer
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="corpus size in MB (default 1)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--merges", type=int, default=1000, help="merges for the training bench")
    parser.add_argument("--only", choices=("insights", "train"), help="run one part")
    parser.add_argument("-e", "--encoding", action="append", help="encodings for the insights (repeat)")
    args = parser.parse_args()
    text = corpus(int(args.mb * 1_000_000))
    ok = True
    if args.only in (None, "insights"):
        ok &= bench_insights(text, args.repeat, args.encoding or ["gpt2", "cl100k_base", "o200k_base"])
    if args.only in (None, "train"):
        ok &= bench_train_screen(text, args.repeat, args.merges)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
