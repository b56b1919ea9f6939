"""Parent recovery over the whole vocabulary of cl100k_base and o200k_base, timed.

    python bench/bench_parents.py [ENCODING ...]

For every multi-byte token: ``Tokenizer.parents`` (BPE of the token's own bytes with only lower
ranks allowed) must give exactly two tokens whose bytes concatenate to it and whose ranks are
lower. Prints the failures (none expected), the total time and the cost per token on a fresh
tokenizer (empty parent cache). Target: < 1 ms per token.
"""

from __future__ import annotations

import sys
import time

from tokscope.core import Tokenizer
from tokscope.sources import registry


def main(argv: list[str]) -> int:
    failures = 0
    for name in argv or ["cl100k_base", "o200k_base"]:
        base = registry.load(name)
        tok = Tokenizer(base.name, base.ranks, base.pattern, base.special_tokens)
        multi = sorted(rank for data, rank in tok.ranks.items() if len(data) > 1)
        tok.token_bytes(0)  # build the decoder outside the timing
        bad = []
        start = time.perf_counter()
        for token_id in multi:
            parents = tok.parents(token_id)
            if parents is None:
                bad.append(token_id)
                continue
            if (tok.token_bytes(parents.left) + tok.token_bytes(parents.right) != tok.token_bytes(token_id)
                    or parents.left >= token_id or parents.right >= token_id):
                bad.append(token_id)
        elapsed = time.perf_counter() - start
        failures += len(bad)
        per = elapsed / len(multi) * 1e3
        print(f"{name:<12} {len(multi):>7,} tokens  {elapsed:6.2f}s  {per:.4f} ms/token  "
              f"{'ok' if per < 1 else 'MISSED'} (target < 1 ms)  failures: {len(bad)} {bad[:5]}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
