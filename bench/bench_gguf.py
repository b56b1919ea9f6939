"""GGUF loading: a model-sized file against a vocabulary-only one, cold and cached, against Hugging
Face ``tokenizers`` loading the same tokenizer as a ``tokenizer.json``; tokscope's reader against
the ``gguf`` package's (import and read). Prints times and ratios; never asserts.

    python bench/bench_gguf.py [--vocab llama-bpe|gemma-4|...] [--weights-gb 16] [--repeat 3]

The vocabulary file is llama.cpp's ``ggml-vocab-NAME.gguf`` from the llama-cpp-python sdist
(tests/gguf_files.py finds or downloads it). The model-sized file is written by the ``gguf``
package's writer with one tensor of ``--weights-gb`` gigabytes whose data is a hole in a sparse
file: as large as a real model, cheap on disk. The ``tokenizer.json`` is built from the GGUF's own
vocabulary and merges with ``tokenizers`` (Llama 3's pre-tokenizer for a byte-level vocabulary;
for gemma-4, SentencePiece-style BPE with byte fallback), so both sides load the same tokenizer.

* *cold*: in a fresh process with an empty tokscope cache: import + read + build;
  ``tokenizers``: import + ``Tokenizer.from_file``, its first run (the file not yet in the page
  cache) and the median of the later ones (*warm*).
* *cached*: a fresh process whose tokscope cache holds the tokenizer (an unchanged GGUF file's
  tables come from the cache: the file's metadata is not read again).
* *read*: metadata only, in this process, model-sized vs vocab-only (the weights must cost nothing).
* *in-process*: CPU time of a cached load and of a build from the read metadata, this process
  (the import excluded), and the import of ``tokscope.sources.model_files`` in a fresh process.

The child processes run with bytecode written and used (``PYTHONDONTWRITEBYTECODE`` is dropped
from their environment), as an installed package runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def _child(code: str, env: dict[str, str], repeat: int) -> float:
    """The median wall time of ``code`` in fresh processes (the interpreter's start-up excluded:
    the code times itself and prints the seconds)."""
    return statistics.median(_children(code, env, repeat))


def _children(code: str, env: dict[str, str], repeat: int) -> list[float]:
    """The wall time of ``code`` in each of ``repeat`` fresh processes, in order."""
    times = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                              check=True)
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return times


def _drop_page_cache(path: Path) -> None:
    """Ask the kernel to forget ``path``'s pages (a cold read), where it can."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    except (OSError, AttributeError):
        pass


def _tokenizer_json(gguf_path: Path, target: Path) -> None:
    import tokenizers
    from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers

    from tokscope.core.formats import gguf

    meta = gguf.read_metadata(gguf_path)
    vocab = {t: i for i, t in enumerate(meta["tokenizer.ggml.tokens"])}
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    if meta["tokenizer.ggml.model"] == "gemma4":  # SentencePiece-style BPE, as Gemma's own tokenizer.json
        tok = tokenizers.Tokenizer(models.BPE(vocab, merges, byte_fallback=True))
        tok.normalizer = normalizers.Replace(" ", "\u2581")
        tok.pre_tokenizer = pre_tokenizers.Split(Regex("[^\n]+|[\n]+"), "isolated")
        tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
        tok.save(str(target))
        return
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(LLAMA3), "isolated"),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.save(str(target))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", default="llama-bpe", help="which ggml-vocab-NAME.gguf (default llama-bpe)")
    parser.add_argument("--weights-gb", type=float, default=16.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-package", action="store_true", help="skip the gguf package's reader (it takes a minute)")
    args = parser.parse_args()

    from gguf_files import llama_cpp_dir

    vocab_file = llama_cpp_dir() / "models" / f"ggml-vocab-{args.vocab}.gguf"
    work = Path(tempfile.mkdtemp(prefix="bench-gguf-"))
    try:
        _run(args, vocab_file, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(args: argparse.Namespace, vocab_file: Path, work: Path) -> None:
    from gguf_files import copy_tokenizer

    from tokscope.core.formats import gguf

    model_file = copy_tokenizer(vocab_file, work / "model.gguf", tensor_bytes=int(args.weights_gb * (1 << 30)))
    json_file = work / "tokenizer.json"
    _tokenizer_json(vocab_file, json_file)
    n = len(gguf.read_metadata(vocab_file)["tokenizer.ggml.tokens"])
    print(f"{vocab_file.name}: {n:,} tokens; model-sized copy {model_file.stat().st_size / 1e9:.1f} GB "
          f"({model_file.stat().st_blocks * 512 / 1e6:.1f} MB on disk); tokenizer.json {json_file.stat().st_size / 1e6:.1f} MB")

    # metadata only, this process
    for label, path in (("vocab-only", vocab_file), ("model-sized", model_file)):
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            gguf.read_metadata(path)
            times.append(time.perf_counter() - start)
        print(f"read metadata, {label:<11}: {statistics.median(times) * 1000:7.0f} ms")

    env = dict(os.environ, PYTHONPATH=str(ROOT), TOKSCOPE_CACHE_DIR=str(work / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    timer = "import time; _t = time.perf_counter()\n{}\nprint(time.perf_counter() - _t)"
    _drop_page_cache(json_file)
    hf_times = _children(timer.format(f"import tokenizers; tokenizers.Tokenizer.from_file({str(json_file)!r})"), env,
                         args.repeat + 1)
    hf_cold, hf = hf_times[0], statistics.median(hf_times[1:])
    print(f"tokenizers, import + from_file(tokenizer.json): first {hf_cold:6.2f} s, warm {hf:6.2f} s")

    # the gguf package against tokscope's reader: import, then the metadata of the model-sized file
    own = _child(timer.format(f"from tokscope.core.formats import gguf; gguf.read_metadata({str(model_file)!r})"),
                 env, args.repeat)
    if args.no_package:
        print(f"tokscope's reader, import + read: {own:6.2f} s")
    else:
        package = _child(timer.format(f"import gguf; gguf.GGUFReader({str(model_file)!r})"), env, 1)
        print(f"gguf package, import + GGUFReader(): {package:6.2f} s; tokscope's reader, import + read: "
              f"{own:6.2f} s ({own / package:.2f}x)")

    load = (f"from pathlib import Path; from tokscope.sources import model_files; "
            f"model_files.load_path(Path({str(model_file)!r}))")
    cold_times = []
    for _ in range(args.repeat):
        for entry in (work / "cache").rglob("*"):
            if entry.is_file():
                entry.unlink()
        cold_times.append(_child(timer.format(load), env, 1))
    cold = statistics.median(cold_times)
    cached = _child(timer.format(load), env, args.repeat)
    print(f"tokscope, model-sized GGUF, cold:   {cold:6.2f} s  ({cold / hf:.2f}x tokenizers warm, "
          f"{cold / hf_cold:.2f}x its first run)")
    print(f"tokscope, model-sized GGUF, cached: {cached:6.2f} s  ({cached / hf:.2f}x tokenizers warm)")

    # where a cached load's time goes: the import, and the load itself in this process (CPU)
    imported = _child(timer.format("from tokscope.sources import model_files"), env, args.repeat)
    os.environ["TOKSCOPE_CACHE_DIR"] = str(work / "cache")
    from tokscope.sources import cache

    def cpu(fn) -> float:
        times = []
        for _ in range(args.repeat):
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
        return statistics.median(times)

    meta = gguf.read_metadata(model_file)
    loaded = cpu(lambda: cache.cached_gguf(model_file, "bench"))
    built = cpu(lambda: gguf.tokenizer_from_metadata(meta, "bench"))
    read = cpu(lambda: gguf.read_metadata(model_file))
    print(f"import tokscope.sources.model_files, fresh process: {imported:6.2f} s")
    print(f"CPU, this process: cached load {loaded:5.2f} s; read metadata {read:5.2f} s + build {built:5.2f} s")


if __name__ == "__main__":
    main()
