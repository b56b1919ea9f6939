"""Comparing gpt2, cl100k_base and o200k_base on ~100 KB: time for a full update after an edit.

A "full update" re-encodes the text with all three encodings, aligns their boundaries and
computes the stats (what the comparison screen does after each keystroke). Two paths:

- full:        segment() each encoding on the whole new text, then compare()
- summaries:   summarize() each encoding (counts and cuts, no pieces: what ``tokscope compare``
               does), then compare()
- screen:      what the comparison screen does per pane: the incremental document's
               Document.edited() (re-encodes only the chunks near the edit) + from_document(),
               then compare(); its incremental row layout (render.relayout) is measured apart
               and added to the verdict

Target: under 150 ms. Times are the median of several edits at random places. The reference,
measured in the same process, is plain ``Tokenizer.encode_ordinary`` of the text with all three
encodings (the least any update must do without incremental re-encoding); ratios are printed
against it so that a slow or busy machine shows the same ratio.

Run: python bench/bench_compare.py [--kb 100] [--edits 15]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from tokscope.core.insights.compare import compare, from_document, segment, summarize
from tokscope.sample_texts import read_sample
from tokscope.sources.registry import load

NAMES = ("gpt2", "cl100k_base", "o200k_base")
TARGET_MS = 150.0


def build_text(kb: int) -> str:
    parts = ["prose.txt", "code.py", "data.json", "numbers.txt", "multiscript.txt", "default.txt"]
    text = ""
    while len(text.encode()) < kb * 1000:
        for name in parts:
            text += read_sample(name)
    return text.encode()[: kb * 1000].decode("utf-8", "ignore")


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=100)
    parser.add_argument("--edits", type=int, default=15)
    args = parser.parse_args()

    toks = [load(n) for n in NAMES]
    text = build_text(args.kb)
    rnd = random.Random(7)
    print(f"text: {len(text):,} chars, {len(text.encode()):,} bytes; encodings: {', '.join(NAMES)}")

    # warm the caches as an editor session would be warm (first open is measured separately)
    t_first = timed(lambda: compare(text, [segment(t, text) for t in toks]))

    from tokscope.app.render import TEXT, layout, relayout
    from tokscope.core.document.document import Document

    docs = [Document.build(t, text) for t in toks]
    rows = [layout(d, 50, TEXT, False) for d in docs]
    ref, full, seg_only, screen, lay, summed = [], [], [], [], [], []
    current = text
    for _ in range(args.edits):
        at = rnd.randrange(len(current))
        new = current[:at] + rnd.choice(["x", " the", "\n", "é", "😀", "42", ""]) + current[at + rnd.choice([0, 0, 1]):]
        ref.append(timed(lambda: [t.encode_ordinary(new) for t in toks]))
        full.append(timed(lambda: compare(new, [segment(t, new) for t in toks])))
        seg_only.append(timed(lambda: [segment(t, new) for t in toks]))
        summed.append(timed(lambda: compare(new, [summarize(t, new) for t in toks])))
        new_docs: list = []

        def screen_update() -> None:
            new_docs.extend(d.edited(new) for d in docs)
            compare(new, [from_document(d) for d in new_docs])

        screen.append(timed(screen_update))
        new_rows: list = []
        lay.append(timed(lambda: new_rows.extend(
            relayout(r, d, nd, 50, TEXT, False) for r, d, nd in zip(rows, docs, new_docs))))
        assert new_rows == [layout(d, 50, TEXT, False) for d in new_docs]
        rows = new_rows
        assert [list(d.ids) for d in new_docs] == [list(segment(t, new).ids) for t in toks]
        docs, current = new_docs, new

    med = statistics.median
    r = med(ref)
    print(f"first open (cold chunk caches): {t_first:7.1f} ms")
    print(f"reference encode_ordinary x3:   {r:7.1f} ms  (1.00)")
    print(f"full update (segment x3+align): {med(full):7.1f} ms  ({med(full) / r:.2f}x ref)   of which encoding {med(seg_only):.1f} ms")
    print(f"summaries (summarize x3+align): {med(summed):7.1f} ms  ({med(summed) / r:.2f}x ref)")
    print(f"screen (Document.edited x3 + from_document + align): {med(screen):.1f} ms  ({med(screen) / r:.2f}x ref); "
          f"+ incremental row layout x3 at 50 columns: {med(lay):.1f} ms")
    for label, value in (("full", med(full)), ("screen + layout", med(screen) + med(lay))):
        verdict = "meets" if value < TARGET_MS else "MISSES"
        print(f"{label}: {verdict} the {TARGET_MS:.0f} ms target ({value / TARGET_MS:.2f} of it)")


if __name__ == "__main__":
    main()
