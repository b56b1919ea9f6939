"""Byte-level BPE from ranks on fresh text: the merge loop and the split against tiktoken, in one process.

    python bench/bench_merge.py [--size CHARS] [--repeat N] [--pure] [ENCODING ...]

For cl100k_base and o200k_base on ~1 MB of English prose (``_corpus.prose``) and ~1 MB of fresh
multilingual text (``_fresh_text.multilingual``: 23 languages, never-repeated paragraphs) it times
``encode_ordinary`` of a fresh Tokenizer (empty chunk cache: every distinct chunk goes through
the merge loop once) against tiktoken's ``encode_ordinary`` on the same ranks and pattern, and
prints the ratio; each time is the best of ``--repeat`` alternating runs, and the ids are checked
identical to tiktoken's in the same run. With the compiled merge loop installed it also times the
pure-Python loop (``--pure`` times only that one), so both figures come from one run. The split is
the compiled scanner (``_tokscope_split``) when installed; the *regex* rows time the compiled merge
loop with the regex split instead, and the last lines time the split alone, both ways.

Targets (issue 22, item 1): English <= 1.5x, multilingual <= 2.5x tiktoken.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import prose  # noqa: E402
from _fresh_text import fresh_multilingual  # noqa: E402

from tokscope.core import Tokenizer  # noqa: E402
from tokscope.core.models import ranks as ranks_module  # noqa: E402
from tokscope.core.pre_tokenizers import compiled_split  # noqa: E402
from tokscope.sources import registry  # noqa: E402
from tokscope.sources.tiktoken_adapter import reference_for  # noqa: E402

TARGETS = {"english": 1.5, "multilingual": 2.5}


def timed(fn) -> tuple[float, object]:
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def loops(pure_only: bool) -> list[str]:
    """The merge loops to time: the compiled one when it is installed (with the regex split too,
    when the compiled split is installed), and the pure-Python one."""
    if pure_only or not ranks_module.compiled_available():
        return ["pure"]
    return ["compiled", "regex", "pure"] if compiled_split.compiled_available() else ["compiled", "pure"]


def split_times(pattern, text: str, repeat: int) -> dict[str, float]:
    """The best time of the split alone (line-safe segments, as ``encode_ordinary`` cuts them), with
    the compiled scanner and with the regex path; the chunks are checked equal."""
    segments = pattern.segments(text)
    out: dict[str, float] = {}
    chunks: dict[str, list] = {}
    for way in ("compiled", "regex"):
        compiled_split.use_compiled(way == "compiled")
        try:
            best = float("inf")
            for _ in range(repeat):
                t, got = timed(lambda: [pattern.split(s) for s in segments])
                best = min(best, t)
            out[way], chunks[way] = best, got
        finally:
            compiled_split.use_compiled(True)
    if chunks["compiled"] != chunks["regex"]:
        raise SystemExit("MISMATCH: the compiled split's chunks differ from the regex's")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("encodings", nargs="*", default=["cl100k_base", "o200k_base"])
    parser.add_argument("--size", type=int, default=1_000_000, help="characters per corpus")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pure", action="store_true", help="time only the pure-Python merge loop")
    args = parser.parse_args(argv)

    corpora = {"english": prose(args.size), "multilingual": fresh_multilingual(args.size)}
    which = loops(args.pure)
    print(f"compiled merge loop: {'installed' if ranks_module.compiled_available() else 'not installed'}; "
          f"compiled split: {'installed' if compiled_split.compiled_available() else 'not installed'}")
    print(f"{'encoding':<12} {'corpus':<12} {'loop':<8} {'MB':>5} {'tiktoken':>9} {'tokscope':>9} {'ratio':>7}  target")
    ok = True
    for name in args.encodings:
        base = registry.load(name)
        ref = reference_for(base)
        for corpus, text in corpora.items():
            ref_times: list[float] = []
            times: dict[str, list[float]] = {loop: [] for loop in which}
            want = ref.encode_ordinary(text)
            for _ in range(args.repeat):
                t, got = timed(lambda: ref.encode_ordinary(text))
                ref_times.append(t)
                for loop in which:
                    ranks_module.use_compiled(loop != "pure")
                    compiled_split.use_compiled(loop != "regex")
                    try:
                        fresh = Tokenizer(base.name, base.ranks, base.pattern, base.special_tokens)
                        t, got = timed(lambda: fresh.encode_ordinary(text))
                    finally:
                        ranks_module.use_compiled(True)
                        compiled_split.use_compiled(True)
                    if got != want:
                        print(f"MISMATCH: {name} {corpus} ({loop} loop): ids differ from tiktoken's")
                        return 1
                    times[loop].append(t)
            t_ref = min(ref_times)
            for loop in which:
                ratio = min(times[loop]) / t_ref
                target = TARGETS[corpus]
                meets = ratio <= target
                if loop == which[0]:
                    ok &= meets
                print(f"{name:<12} {corpus:<12} {loop:<8} {len(text.encode()) / 1e6:5.2f} {t_ref * 1e3:7.0f}ms "
                      f"{min(times[loop]) * 1e3:7.0f}ms {ratio:6.2f}x  <={target:g}x {'ok' if meets else 'MISSED'}")
            if compiled_split.compiled_available() and base.pattern in compiled_split.KINDS:
                split = split_times(Tokenizer(base.name, base.ranks, base.pattern)._pat, text, args.repeat)
                print(f"{name:<12} {corpus:<12} split alone: compiled {split['compiled'] * 1e3:.0f}ms, regex "
                      f"{split['regex'] * 1e3:.0f}ms ({split['regex'] / split['compiled']:.1f}x faster)")
    print("ids identical to tiktoken's in every run; " + ("all targets met" if ok else "some targets missed"))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
