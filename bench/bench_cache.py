"""tokscope's tokenizer cache (data tables, no pickle) against ``tokenizers.Tokenizer.from_file``.

    python bench/bench_cache.py [--repeat N]

The 9 MB (Llama 3 layout) and 36 MB (Gemma 3 layout) ``tokenizer.json`` files of
``bench_hf_tokenizers.py`` are built in a temporary folder; each is loaded once through
``model_files.load_path`` to fill a fresh cache, then, in fresh processes (``tokscope`` imported
first, as a running one has): the cached load, the cold load (empty cache: read, parse, build),
``tokenizers``' ``from_file``, and the old way for comparison (the same tokenizer unpickled). Printed:
the best of ``--repeat`` runs of each (seconds), the entry's size, and the ratios of the cached load
to ``from_file`` and to the unpickling. Also checks the cached tokenizer encodes as the cold one.

    python bench/bench_cache.py --ranks [--repeat N]

The OpenAI rank cache (cl100k_base, o200k_base) in this process: its entry (tables, read only) read
back by ``cache.load_ranks``, against the way it was kept before (a ``marshal`` payload read the
same way: file, sha256, ``marshal.loads``, the dict and its checks), alternating, best of N (ms).
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ["RAYON_NUM_THREADS"] = "1"
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent), str(ROOT / "tests" / "core")]

from bench_hf_tokenizers import big_files  # noqa: E402

_CHILD = """
import os, pickle, sys, time
from pathlib import Path
import tokscope.sources.model_files as model_files
import tokscope.core.formats.tokenizer_json
what, path = sys.argv[1], sys.argv[2]
text = "Hello, wörld: 中文 and 😀 emoji"
start = time.perf_counter()
if what == "tables":
    tok = model_files.load_path(Path(path))
elif what == "pickle":
    with open(path, "rb") as f:
        tok = pickle.load(f)
else:
    import tokenizers
    start = time.perf_counter()
    tok = tokenizers.Tokenizer.from_file(path)
    print(time.perf_counter() - start, tok.encode(text, add_special_tokens=False).ids)
    sys.exit()
took = time.perf_counter() - start
print(took, tok.encode(text, disallowed_special=()))
"""


def child(what: str, path: Path, cache: Path) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKSCOPE_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", _CHILD, what, str(path)], capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(out.stderr)
    seconds, ids = out.stdout.split(" ", 1)
    return float(seconds), ids.strip()


def _marshal_load(path: Path, count: int) -> dict[bytes, int] | None:
    """The former rank cache's load, for comparison: header line, sha256, marshal, checks."""
    import hashlib
    import marshal

    blob = path.read_bytes()
    header, _, payload = blob.partition(b"\n")
    if not header.endswith(hashlib.sha256(payload).hexdigest().encode()):
        return None
    tokens = marshal.loads(payload)
    if type(tokens) is not list or len(tokens) != count or not set(map(type, tokens)) <= {bytes, type(None)}:
        return None
    ranks = dict(zip(tokens, range(count)))
    if len(ranks) != count or any(bytes([b]) not in ranks for b in range(256)):
        return None
    return ranks


def bench_ranks(repeat: int) -> None:
    import hashlib
    import marshal
    import time

    from tokscope.sources import builtin, cache
    from tokscope.sources import tiktoken_adapter as tk

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TOKSCOPE_CACHE_DIR"] = tmp
        print(f"best of {repeat}, in this process (ms)")
        print(f"{'encoding':14s} {'tables':>7s} {'marshal':>8s} {'tables/marshal':>14s}")
        for name in ("cl100k_base", "o200k_base"):
            ranks = builtin.load_ranks(name)  # fills the cache
            file = tk.encoding_spec(name).files[0]
            tokens = [b""] * len(ranks)
            for token, rank in ranks.items():
                tokens[rank] = token
            payload = marshal.dumps(tokens)
            old = Path(tmp) / f"{name}.marshal"
            old.write_bytes(f"tokscope-ranks 2 {hashlib.sha256(payload).hexdigest()}".encode() + b"\n" + payload)
            new_times, old_times = [], []
            for _ in range(repeat):  # alternating, so a busy machine slows both alike
                start = time.perf_counter()
                got = cache.load_ranks(builtin._rank_cache_kind(file), file.sha256)
                new_times.append(time.perf_counter() - start)
                start = time.perf_counter()
                was = _marshal_load(old, len(tokens))
                old_times.append(time.perf_counter() - start)
                assert got == was == ranks, "ranks differ"
            print(f"{name:14s} {min(new_times) * 1e3:7.1f} {min(old_times) * 1e3:8.1f} "
                  f"{min(new_times) / min(old_times):14.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ranks", action="store_true", help="the OpenAI rank cache against its former marshal form")
    args = parser.parse_args()
    if args.ranks:
        bench_ranks(max(args.repeat, 5))
        return
    from tokscope.core.formats import tokenizer_json as hf

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = big_files(folder)
        print(f"best of {args.repeat} fresh processes (s)")
        print(f"{'file':28s} {'tk':>6s} {'cold':>6s} {'cached':>6s} {'pickle':>6s} {'entryMB':>7s} {'pickleMB':>8s} "
              f"{'cached/tk':>9s} {'cached/pickle':>13s}")
        for label, path in files.items():
            cache = folder / f"cache-{path.stem}"
            blob = pickle.dumps(hf.from_json_text(path.read_bytes(), label), protocol=pickle.HIGHEST_PROTOCOL)
            pickled = folder / f"{path.stem}.pickle"
            pickled.write_bytes(blob)
            tk = min(child("tokenizers", path, cache)[0] for _ in range(args.repeat))
            cold = []
            for i in range(args.repeat):
                empty = folder / f"cold-{path.stem}-{i}"
                cold.append(child("tables", path, empty))
            cached, old = [], []
            for _ in range(args.repeat):  # alternating, so a busy machine slows both alike
                cached.append(child("tables", path, folder / f"cold-{path.stem}-0"))
                old.append(child("pickle", pickled, cache))
            assert {ids for _, ids in cold} == {ids for _, ids in cached} == {ids for _, ids in old}, "ids differ"
            entry = sum(p.stat().st_size for p in (folder / f"cold-{path.stem}-0").rglob("*.tables"))
            best = min(s for s, _ in cached)
            unpickle = min(s for s, _ in old)
            print(f"{label:28s} {tk:6.2f} {min(s for s, _ in cold):6.2f} {best:6.2f} {unpickle:6.2f} {entry / 1e6:7.1f} "
                  f"{len(blob) / 1e6:8.1f} {best / tk:9.2f} {best / unpickle:13.2f}", flush=True)


if __name__ == "__main__":
    main()
