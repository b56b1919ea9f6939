"""Why-does-it-split timings on o200k_base: merge tree, "used in", explain, vocabulary search.

Measured (median of several runs each):

- tree:       ``merge_tree`` of the longest token (fresh ``Tokenizer.parents`` cache, so it is
              the cold cost a user sees the first time);                   target < 5 ms
- used in:    ``used_in`` of an uncommon token before the index exists (answered from the tokens
              that start or end with it), of a space the first time (builds the whole index)
              and after;                                                  target < 50 ms after
- explain:    ``explain`` of one 20-character chunk with replay, why-not and variants;  target < 5 ms
- vocab:      ``search_vocab`` by regular expression over the whole vocabulary (table warm);
              target < 200 ms

The reference, measured in the same process, is ``Tokenizer.encode_ordinary`` of a 20-character
text (nothing else can be cheaper per request); ratios against it are printed so a slow or busy
machine shows the same ratio. A "1x pass" reference is also shown for the vocabulary search:
``len(text)`` over every token's text (the least any full scan must cost).

Run: python bench/bench_explain.py [--encoding o200k_base] [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import time

from tokscope.core.explain import merge_trees as merges
from tokscope.core.explain.ranks import explain
from tokscope.core.tokenizer.tokenizer import Tokenizer
from tokscope.core.explain.vocab_search import _table, search_vocab
from tokscope.sources.registry import load

TARGETS_MS = {"tree": 5.0, "explain": 5.0, "used in (after)": 50.0, "vocab regex": 200.0}
CHUNK = " internationalisation"[:20]  # one chunk of 20 characters
REGEXES = [r"^ [A-Z][a-z]+ing$", r"\p{Han}{2,}", r"(?i)token", r"^\s+$"]


def ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoding", default="o200k_base")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    base = load(args.encoding)
    n = args.repeat

    reference = ms(lambda: base.encode_ordinary("hello world, twenty!"), 200)
    print(f"{base.name}: {len(base.ranks):,} mergeable tokens; reference encode of 20 chars: {reference:.4f} ms")

    rows: list[tuple[str, float]] = []

    # tree: the longest tokens have the deepest trees; use a fresh tokenizer each time so the
    # parents cache is cold (the cost of a first look at a token)
    longest = max(base.ranks.items(), key=lambda item: (len(item[0]), -item[1]))[1]
    word = base.rank_of(b" tokenizer") or longest
    fresh = [Tokenizer(base.name, base.ranks, base.pattern, base.special_tokens) for _ in range(n)]
    for tok in fresh:
        tok.token_bytes(0)  # build the id -> bytes table (a per-encoding cost, not the tree's)
    cold = iter(fresh)
    rows.append(("tree", ms(lambda: merges.merge_tree(next(cold), longest), n)))
    rows.append(("tree (warm cache)", ms(lambda: merges.merge_tree(base, word), n)))

    # used in, before the index: an uncommon token is answered from the tokens that start or
    # end with its bytes (the first such call also builds the search table)
    early = Tokenizer(base.name, base.ranks, base.pattern, base.special_tokens)
    early.token_bytes(0)
    t0 = time.perf_counter()
    merges.used_in(early, early.rank_of(b" token"))
    rows.append(("used in, no index (first, with table)", (time.perf_counter() - t0) * 1000))
    rows.append(("used in, no index (' the')", ms(lambda: merges.used_in(early, early.rank_of(b" the")), n)))

    # used in a common token (a space): the first call builds the index; later calls are lookups
    victim = Tokenizer(base.name, base.ranks, base.pattern, base.special_tokens)
    t0 = time.perf_counter()
    merges.used_in(victim, victim.rank_of(b" "))
    rows.append(("used in (first call)", (time.perf_counter() - t0) * 1000))
    rows.append(("used in (after)", ms(lambda: merges.used_in(victim, victim.rank_of(b" ")), n)))
    rows.append(("used in (after, word)", ms(lambda: merges.used_in(victim, victim.rank_of(b" token")), n)))

    # explain one 20-character chunk (cold variants use the chunk cache; replay is always fresh)
    assert len(CHUNK) == 20 and len(base.chunks(CHUNK)) == 1
    rows.append(("explain", ms(lambda: explain(base, CHUNK), n)))
    rows.append(("explain (no variants)", ms(lambda: explain(base, CHUNK, with_variants=False), n)))

    # vocabulary search by regex (the decoded table is built once per encoding)
    t0 = time.perf_counter()
    _table(base)
    rows.append(("vocab table (first use)", (time.perf_counter() - t0) * 1000))
    texts = _table(base).texts
    scan = ms(lambda: sum(map(len, texts)), 5)
    worst = 0.0
    for pattern in REGEXES:
        took = ms(lambda p=pattern: search_vocab(base, pattern=p, limit=100), max(3, n // 3))
        worst = max(worst, took)
        rows.append((f"vocab regex {pattern!r}", took))
    rows.append(("vocab regex", worst))
    rows.append(("vocab substring 'ing'", ms(lambda: search_vocab(base, substring="ing", limit=100), max(3, n // 3))))

    print(f"{'measure':<40} {'ms':>10} {'x ref':>10}  target")
    for name, took in rows:
        target = TARGETS_MS.get(name)
        verdict = "" if target is None else f"< {target:g} ms  {'ok' if took < target else 'OVER'}"
        print(f"{name:<40} {took:>10.3f} {took / reference:>10.0f}  {verdict}")
    print(f"(a plain pass over every token's text takes {scan:.1f} ms: the regex search is "
          f"{worst / scan:.1f}x that)")


if __name__ == "__main__":
    main()
