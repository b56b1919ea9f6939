"""Hostile inputs of issue 21, each in a fresh process: peak resident memory and seconds.

    python bench/bench_hostile.py [--only NAME ...] [--mb N]

Each case runs the real command line (``python -m tokscope.cli ...``) on files built here in a
temporary folder; the peak resident memory is the child's own (``RUSAGE_CHILDREN`` of a wrapper
that runs only it). The reference is the same process's ``tokscope encode hi`` (the cost of
starting at all), so each line shows the case's seconds and memory and their ratios to it.

* templates (Medium 5): ``chat --template`` with ``tojson`` of a dict holding one 9 MB string
  100,000 times, ``join`` of it, ``expandtabs``, ``indent``, ``wordwrap``;
* file patterns (Medium 6): a tokenizer.json whose Split is ``a{1000000000}``, whose Replace
  content or Prepend string is 10 MB;
* side files (Medium 7): ``config.json`` linked to ``/dev/zero``, a 3 GB sparse
  ``chat_template.jinja``;
* huge chunks (Medium 8): ``encode -f`` of ``--mb`` MB of spaces and of emoji, and
  ``truncate --max-tokens 100`` of the spaces;
* import (Medium 14): a rank file with one 1 MB token, and one with tokens doubling to 256 KB.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_WRAP = """
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
took = time.perf_counter() - start
print(took, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.returncode)
sys.stderr.write(done.stderr.decode("utf-8", "replace")[-300:])
"""


def measure(args: list[str], env: dict) -> tuple[float, float, int, str]:
    out = subprocess.run([sys.executable, "-c", _WRAP, sys.executable, "-m", "tokscope.cli", *args],
                         capture_output=True, text=True, env=env, timeout=900)
    seconds, rss_kb, code = out.stdout.split()
    return float(seconds), int(rss_kb) / 1024, int(code), out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ""


def wordlevel(**stages) -> str:
    return json.dumps({"version": "1.0", "model": {"type": "WordLevel", "vocab": {"a": 0, "<unk>": 1},
                                                   "unk_token": "<unk>"}, **stages})


def rank_file(tokens: list[bytes]) -> bytes:
    lines = [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(256)]
    lines += [f"{base64.b64encode(t).decode()} {256 + k}" for k, t in enumerate(tokens)]
    return ("\n".join(lines) + "\n").encode()


def cases(tmp: Path, mb: int) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    chat = tmp / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    templates = {
        "template tojson": "{{ dict.fromkeys(range(100000), 'x' * 9000000)|tojson }}",
        "template join": "{{ (['x' * 9000000] * 1000)|join }}",
        "template expandtabs": "{{ ('\\t' * 9000000).expandtabs(1000) }}",
        "template indent": "{{ ('\\n' * 9000000)|indent(1000) }}",
        "template wordwrap": "{{ ('x' * 1000000)|wordwrap(1) }}",
    }
    for name, source in templates.items():
        path = tmp / f"{name.split()[1]}.jinja"
        path.write_text(source)
        out[name] = ["chat", "--template", str(path), "-f", str(chat)]
    huge = "x" * 10_000_000
    files = {
        "file Split a{1000000000}": wordlevel(pre_tokenizer={"type": "Split", "pattern": {"Regex": "a{1000000000}"},
                                                             "behavior": "Isolated", "invert": False}),
        "file Replace 10 MB content": wordlevel(normalizer={"type": "Replace", "pattern": {"Regex": "x*"},
                                                            "content": huge}),
        "file Prepend 10 MB": wordlevel(normalizer={"type": "Prepend", "prepend": huge}),
    }
    for i, (name, text) in enumerate(files.items()):
        path = tmp / f"file{i}.json"
        path.write_text(text)
        out[name] = ["encode", "-e", str(path), "a" * 70]
    for name, link in (("side config.json -> /dev/zero", "config.json"), ("side 3 GB chat_template.jinja", None)):
        folder = tmp / f"model-{len(out)}"
        folder.mkdir()
        (folder / "tokenizer.json").write_text(wordlevel())
        if link:
            (folder / link).symlink_to("/dev/zero")
        else:
            with open(folder / "chat_template.jinja", "wb") as handle:
                handle.truncate(3 * 1024**3)
        out[name] = ["encode", "-e", str(folder), "a"]
    spaces = tmp / "spaces.txt"
    spaces.write_text(" " * (mb * 1_000_000))
    emoji = tmp / "emoji.txt"
    emoji.write_text("😀" * (mb * 250_000))
    out[f"chunk encode {mb} MB of spaces"] = ["encode", "-f", str(spaces), "--max-bytes", str(10**10)]
    out[f"chunk encode {mb} MB of emoji"] = ["encode", "-f", str(emoji), "--max-bytes", str(10**10)]
    out[f"chunk truncate {mb} MB of spaces"] = ["truncate", "--max-tokens", "100", "-f", str(spaces),
                                                "--max-bytes", str(10**10)]
    long = tmp / "long.tiktoken"
    long.write_bytes(rank_file([b"a" * 1_000_000]))
    doubling = tmp / "doubling.tiktoken"
    doubling.write_bytes(rank_file([b"a" * 2**k for k in range(1, 19)]))
    out["import one 1 MB token"] = ["import", str(long), "--pattern", r"\S+|\s+", "-o", str(tmp / "i1.json"), "--force"]
    out["import doubling to 256 KB"] = ["import", str(doubling), "--pattern", r"\S+|\s+", "-o", str(tmp / "i2.json"),
                                        "--force"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="cases whose name contains any of these words")
    parser.add_argument("--mb", type=int, default=5, help="megabytes of the huge-chunk inputs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TOKSCOPE_CACHE_DIR": str(Path(tmp) / "cache"),
               "TOKSCOPE_DATA_DIR": str(Path(tmp) / "data")}
        base_s, base_mb, _, _ = measure(["encode", "hi"], env)
        print(f"reference: tokscope encode hi  {base_s:.2f} s  {base_mb:.0f} MB")
        print(f"{'case':34s} {'s':>7s} {'MB':>7s} {'s/ref':>6s} {'MB/ref':>6s} exit  message")
        for name, argv in cases(Path(tmp), args.mb).items():
            if args.only and not any(word in name for word in args.only):
                continue
            seconds, mb, code, message = measure(argv, env)
            print(f"{name:34s} {seconds:7.2f} {mb:7.0f} {seconds / base_s:6.1f} {mb / base_mb:6.1f} {code:4d}  "
                  f"{message[:90]}", flush=True)


if __name__ == "__main__":
    main()
