"""llama.cpp's vocabulary-only GGUF files and their test vectors, fetched at test time.

llama.cpp keeps ``models/ggml-vocab-*.gguf`` (a model's tokenizer with no weights) beside
``.gguf.inp`` (inputs separated by a line ``__ggml_vocab_test__``) and ``.gguf.out`` (the ids
llama.cpp must give each input: no BOS, special-token text taken as text). The
``llama-cpp-python`` source distribution carries that folder under ``vendor/llama.cpp``. The
:func:`llama_cpp_models` fixture finds the sdist in the test cache folder
(``$TOKSCOPE_TEST_CACHE``, else ``~/.cache/tokscope-tests``), downloads it there with pip when it
is absent, and extracts only those files (and ``src/llama-vocab.cpp``, whose pre-tokenizer table
the tests compare with tokscope's). Nothing is committed; a failed download skips the tests.

Import the fixture into a test module: ``from gguf_files import llama_cpp_models  # noqa: F401``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

SDIST = "llama_cpp_python-0.3.36"
REQUIREMENT = "llama-cpp-python==0.3.36"
SEPARATOR = "\n__ggml_vocab_test__\n"


def cache_dir() -> Path:
    return Path(os.environ.get("TOKSCOPE_TEST_CACHE") or Path.home() / ".cache" / "tokscope-tests").expanduser()


def _wanted(name: str) -> bool:
    parts = name.split("/")
    if len(parts) < 4 or parts[1:3] != ["vendor", "llama.cpp"]:
        return False
    rest = "/".join(parts[3:])
    return (rest.startswith("models/ggml-vocab-") and "/" not in rest[len("models/"):]) or rest == "src/llama-vocab.cpp"


def _extract(archive: Path, target: Path) -> None:
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and _wanted(m.name)]
        tmp = target.with_name(target.name + ".partial")
        tar.extractall(tmp, members=members, filter="data")
    inner = tmp / members[0].name.split("/")[0] / "vendor" / "llama.cpp"
    inner.rename(target) if not target.exists() else None


def llama_cpp_dir() -> Path:
    """The extracted ``vendor/llama.cpp`` folder (``models/`` and ``src/llama-vocab.cpp``);
    :func:`pytest.skip` when the sdist cannot be had."""
    cache = cache_dir()
    target = cache / f"{SDIST}-vocab"
    if (target / "models").is_dir() and (target / "src" / "llama-vocab.cpp").is_file():
        return target
    archive = cache / f"{SDIST}.tar.gz"
    if not archive.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        try:
            result = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", REQUIREMENT,
                 "-d", str(cache)], capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"cannot download {REQUIREMENT}'s sdist for llama.cpp's vocab files: {exc}")
        if result.returncode != 0 or not archive.is_file():
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"cannot download {REQUIREMENT}'s sdist for llama.cpp's vocab files: {last}")
    try:
        _extract(archive, target)
    except (OSError, tarfile.TarError, IndexError) as exc:
        pytest.skip(f"cannot extract llama.cpp's vocab files from {archive}: {exc}")
    return target


@pytest.fixture(scope="session")
def llama_cpp_models() -> Path:
    """The folder of llama.cpp's ``ggml-vocab-*.gguf`` files and their test vectors."""
    return llama_cpp_dir() / "models"


def read_vectors(gguf: Path) -> list[tuple[str, list[int]]]:
    """The (input, expected ids) pairs of ``gguf``'s ``.inp``/``.out`` files, read as
    ``tests/test-tokenizer-0.cpp`` reads them."""
    raw = Path(str(gguf) + ".inp").read_bytes().decode("utf-8")
    inputs = []
    pos = 0
    while pos < len(raw):
        nxt = raw.find(SEPARATOR, pos)
        if nxt < 0:
            inputs.append(raw[pos:])
            break
        inputs.append(raw[pos:nxt])
        pos = nxt + len(SEPARATOR)
    outputs = Path(str(gguf) + ".out").read_text(encoding="utf-8").split("\n")
    if outputs and outputs[-1] == "":
        outputs.pop()
    assert len(inputs) == len(outputs), f"{gguf.name}: {len(inputs)} inputs, {len(outputs)} outputs"
    return [(text, [int(t) for t in line.split()]) for text, line in zip(inputs, outputs)]
