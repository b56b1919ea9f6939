"""Peak memory and time of the command line on hostile inputs (issue 21, items 8, 9 and 14),
against a reference process in the same run.

Each row runs one whole process and reads its peak resident memory from the kernel (``wait4``'s
``ru_maxrss``):

- ``encode -f`` of one giant chunk (megabytes of spaces; of emoji) against tiktoken encoding the
  same file (tiktoken's regex gives up on a few MB of spaces: then the row says so);
- ``count -j 2`` of a folder holding one giant-chunk file, against the same ``encode``;
- ``truncate --max-tokens 100`` of the giant chunk, and of 50 MB of prose (``--prose-mb``)
  against a process that reads the whole file and truncates it with the same core call (the
  way ``truncate`` read its input before it read only the prefix it needs);
- ``import`` of a rank file with one 1 MB token (refused), against a process that only reads
  the same file with tiktoken's loader.

Ratios are printed (tokscope / reference). Not a test: run it by hand.

Run: python bench/bench_hostile_inputs.py [--mb 20] [--emoji 5000000]
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tokscope.sample_texts import read_sample  # noqa: E402

# tiktoken built from the same official files (tiktoken.get_encoding would download them)
REFERENCE = """
import sys
from tokscope.sources import builtin, tiktoken_adapter as tk
name = sys.argv[2]
text = open(sys.argv[1], encoding="utf-8").read()
spec = tk.encoding_spec(name)
enc = tk.reference_encoding(name, builtin.load_ranks(name), spec.pattern, spec.special_tokens)
try:
    ids = enc.encode(text, disallowed_special=())
except ValueError as exc:  # its regex runs out of stack on a few MB of spaces
    sys.exit(f"tiktoken: {exc}")
sys.stdout.write(" ".join(map(str, ids)) + "\\n")
"""

WHOLE_TRUNCATE = """
import sys
from tokscope.core.document.cuts import truncate
from tokscope.sources import registry
text = open(sys.argv[1], encoding="utf-8").read()
sys.stdout.write(truncate(registry.load(sys.argv[2]), text, 100).text)
"""

RANK_READER = """
import sys
from tiktoken.load import load_tiktoken_bpe
print(len(load_tiktoken_bpe(sys.argv[1])))
"""


BLOCK_CHARS = 1 << 20


def _blocks(total: int):
    """Sizes of the blocks that make ``total``."""
    while total > 0:
        yield min(BLOCK_CHARS, total)
        total -= BLOCK_CHARS


def write_blocks(path: Path, blocks) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for block in blocks:
            out.write(block)


def run(argv: list[str]) -> tuple[float, float, int, str]:
    """(seconds, peak MB, exit code, last line of stderr) of one process, its output thrown away."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace").strip().splitlines() if proc.stderr else []
    return seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), (err[-1][:90] if err else "")


def row(label: str, mine: list[str], reference: list[str] | None) -> None:
    s, mb, code, err = run(mine)
    line = f"{label:<40} {s:7.2f} s {mb:8.0f} MB  exit {code}"
    if reference is not None:
        rs, rmb, rcode, rerr = run(reference)
        if rcode == 0:
            line += f"   reference {rs:7.2f} s {rmb:8.0f} MB   ratio {s / rs:5.2f}x time {mb / rmb:5.2f}x memory"
        else:
            line += f"   reference failed ({rerr})"
    print(line + (f"   [{err}]" if code else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="MB of spaces in one chunk (default 20)")
    parser.add_argument("--emoji", type=int, default=5_000_000, help="emoji in one chunk (default 5,000,000)")
    parser.add_argument("--prose-mb", type=float, default=50.0, help="MB of prose for truncate (default 50)")
    parser.add_argument("--encoding", default="o200k_base")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "tokscope.cli"]
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as folder:
        spaces = Path(folder) / "spaces.txt"
        # every file is written a block at a time: a child's peak memory (ru_maxrss) starts from
        # this process's own peak, which a whole 50 MB string here would raise for every row
        write_blocks(spaces, (" " * min(BLOCK_CHARS, n) for n in _blocks(int(args.mb * 1_000_000))))
        emoji = Path(folder) / "emoji.txt"
        faces = [chr(c) for c in range(0x1F600, 0x1F650)]
        write_blocks(emoji, ("".join(rng.choice(faces) for _ in range(n)) for n in _blocks(args.emoji)))
        tree = Path(folder) / "tree"
        tree.mkdir()
        (tree / "spaces.txt").symlink_to(spaces)
        ranks = Path(folder) / "long.tiktoken"
        lines = [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(256)]
        lines.append(f"{base64.b64encode(b'a' * 1_000_000).decode()} 256")
        ranks.write_text("\n".join(lines) + "\n")
        limit = ["--max-bytes", str(200_000_000)]
        print(f"load {os.getloadavg()[0]:.2f}; {args.mb:g} MB of spaces, {args.emoji:,} emoji; {args.encoding}")
        for name, path in (("spaces", spaces), ("emoji", emoji)):
            ref = [sys.executable, "-c", REFERENCE, str(path), args.encoding]
            row(f"encode -f ({name})", cli + ["encode", "-e", args.encoding, "-f", str(path), *limit], ref)
        row("count -j 2 (folder: spaces)", cli + ["count", "-j", "2", "-e", args.encoding, str(tree), *limit], None)
        row("truncate --max-tokens 100 (spaces)",
            cli + ["truncate", "--max-tokens", "100", "-e", args.encoding, "-f", str(spaces), *limit], None)
        prose = Path(folder) / "prose.txt"
        sample = read_sample("prose.txt")
        write_blocks(prose, (sample for _ in range(int(args.prose_mb * 1_000_000 / len(sample.encode())) + 1)))
        row(f"truncate --max-tokens 100 ({args.prose_mb:g} MB prose)",
            cli + ["truncate", "--max-tokens", "100", "-e", args.encoding, "-f", str(prose)],
            [sys.executable, "-c", WHOLE_TRUNCATE, str(prose), args.encoding])
        row("import (one 1 MB token)", cli + ["import", str(ranks), "--pattern", "gpt2", "-o",
                                               str(Path(folder) / "out.json")],
            [sys.executable, "-c", RANK_READER, str(ranks)])


if __name__ == "__main__":
    main()
