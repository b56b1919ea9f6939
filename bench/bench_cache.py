"""tokscope's tokenizer cache (data tables, no pickle) against ``tokenizers.Tokenizer.from_file``.

    python bench/bench_cache.py [--repeat N]

The 9 MB (Llama 3 layout) and 36 MB (Gemma 3 layout) ``tokenizer.json`` files of
``bench_hf_tokenizers.py`` are built in a temporary folder; each is loaded once through
``model_files.load_path`` to fill a fresh cache, then, in fresh processes (``tokscope`` imported
first, as a running one has): the cached load, the cold load (empty cache: read, parse, build),
``tokenizers``' ``from_file``, and the old way for comparison (the same tokenizer unpickled). Printed:
the best of ``--repeat`` runs of each (seconds), the entry's size, and the ratios of the cached load
to ``from_file`` and to the unpickling. Also checks the cached tokenizer encodes as the cold one.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
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
