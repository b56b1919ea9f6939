"""Benchmark the insights and the training screen (run by hand: ``python bench/bench_insights.py``).

1. Insights on about 1 MB: :func:`tokscope.core.insights.stats.text_stats` (what ``tokscope stats`` and
   the insights screen compute) against a bare encode of the same text by tiktoken, measured in
   this process. Target: the insights under 1 s.
2. The training screen's overhead: train on the same corpus through the screen (driven headless
   with ``App.run_test``), from pressing Train to the first paint of the result, against a direct
   call of the trainer with the same progress callback. Target: within 20% at 1 MB, 1000 merges
   (5000 merges are measured too). Bare and screen runs alternate, and the median of the pairs'
   ratios is judged; CPU seconds (all threads) are printed too, the figure to trust when other
   programs load the machine.

Each insights figure is the best of ``--repeat`` runs. The corpus mixes the shipped samples' words and
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

from tokscope.core.insights import stats  # noqa: E402
from tokscope.core.tokenizer.tokenizer import Tokenizer  # noqa: E402
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
    """Bare trainer and screen runs, interleaved (so both see the same load; each goes first in
    every other pair), ``repeat`` pairs.

    The figure judged is the median over pairs of screen / bare wall-clock, the screen's time
    running from pressing Train to the first paint showing the result.
    """
    import gc
    import statistics

    try:
        import train_screen  # bench/train_screen.py, beside this file
    except ImportError as exc:
        print(f"training screen: not available ({exc})")
        return True
    n = len(text.encode("utf-8"))
    load_before = os.getloadavg()[0]
    print(f"training screen vs bare trainer on {n / 1e6:.2f} MB, {merges} merges ({repeat} interleaved pairs); "
          f"target within {TARGET_TRAIN_OVERHEAD - 1:.0%}")
    bare: list[tuple[float, float]] = []
    runs = []

    def bare_run() -> None:
        gc.collect()
        start, cpu = time.perf_counter(), train_screen.process_cpu()
        train_screen.bench_bare_train(text, merges)
        bare.append((time.perf_counter() - start, train_screen.process_cpu() - cpu))

    def screen_run() -> None:
        gc.collect()
        runs.append(asyncio.run(train_screen.bench_screen_train(text, merges)))

    for i in range(repeat):  # alternate which goes first, so neither always runs second
        for run in ((bare_run, screen_run) if i % 2 == 0 else (screen_run, bare_run)):
            run()
    med = statistics.median
    t_bare, c_bare = med(b[0] for b in bare), med(b[1] for b in bare)
    t_fin, t_shown = med(r.finished for r in runs), med(r.shown for r in runs)
    c_screen, c_ui = med(r.cpu for r in runs), med(r.ui_cpu for r in runs)
    ratio = med(r.shown / b[0] for r, b in zip(runs, bare))
    good = ratio <= TARGET_TRAIN_OVERHEAD
    print(f"  wall: bare {t_bare:.3f}s   screen {t_shown:.3f}s painted ({t_fin:.3f}s ready)   "
          f"ratio {ratio:.2f}x  {'ok' if good else 'MISSED'}")
    print(f"        best: bare {min(b[0] for b in bare):.3f}s   screen {min(r.shown for r in runs):.3f}s   "
          f"ratio {min(r.shown for r in runs) / min(b[0] for b in bare):.2f}x")
    print(f"  cpu:  bare {c_bare:.3f}s   screen {c_screen:.3f}s   ratio {c_screen / c_bare:.2f}x   "
          f"(all threads; the UI thread's share {c_ui:.3f}s)")
    load = max(load_before, os.getloadavg()[0])
    print(f"  load average {load:.1f} on {os.cpu_count()} CPUs"
          + (": wall times are unreliable, compare the CPU figures" if load > (os.cpu_count() or 1) else ""))
    print("  (medians; ratio = median of the pairs' ratios. Both pass the same progress callback, a\n"
          "   list's append; the screen takes the new reports every 0.2 s into the bar, the merge list\n"
          "   and the status line, and redraws the live curve every second)")
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0, help="corpus size in MB (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per insights figure (best of)")
    parser.add_argument("--repeat-train", type=int, default=11, help="bare/screen pairs per training figure")
    parser.add_argument("--merges", default="1000,5000",
                        help="merges for the training bench, comma-separated (default 1000,5000; the target is "
                             "documented at 1000)")
    parser.add_argument("--only", choices=("insights", "train"), help="run one part")
    parser.add_argument("-e", "--encoding", action="append", help="encodings for the insights (repeat)")
    args = parser.parse_args()
    text = corpus(int(args.mb * 1_000_000))
    ok = True
    if args.only in (None, "insights"):
        ok &= bench_insights(text, args.repeat, args.encoding or ["gpt2", "cl100k_base", "o200k_base"])
    if args.only in (None, "train"):
        for merges in (int(m) for m in args.merges.split(",") if m.strip()):
            ok &= bench_train_screen(text, args.repeat_train, merges)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
