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
import shutil
import subprocess
import sys
import tarfile
import tempfile
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
    """Only the wanted files, into a temporary folder beside ``target``, then renamed into place
    (a run that stops half-way leaves no half-filled ``target``)."""
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.isfile() and _wanted(m.name)]
            if not members:
                raise tarfile.TarError("no vendor/llama.cpp/models/ggml-vocab-* files in it")
            tar.extractall(tmp, members=members, filter="data")
        inner = tmp / members[0].name.split("/")[0] / "vendor" / "llama.cpp"
        try:
            inner.rename(target)
        except OSError:
            if not target.is_dir():  # another session may have put it there first
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class download_lock:
    """One download at a time across the test processes (pytest-xdist's workers share the cache):
    an exclusive ``flock`` on ``<cache>/.lock`` while a test file is fetched and unpacked."""

    def __enter__(self) -> None:
        import fcntl

        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self._file = open(folder / ".lock", "w")  # noqa: SIM115 - closed in __exit__
        fcntl.flock(self._file, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        self._file.close()


def llama_cpp_dir() -> Path:
    """The extracted ``vendor/llama.cpp`` folder (``models/`` and ``src/llama-vocab.cpp``);
    :func:`pytest.skip` when the sdist cannot be had."""
    with download_lock():
        return _llama_cpp_dir()


def _llama_cpp_dir() -> Path:
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
    except (OSError, tarfile.TarError) as exc:
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


def copy_tokenizer(source: Path, target: Path, *, pre: str | None = "keep", tensor_bytes: int = 0,
                   chat_template: str | None = None, big_endian: bool = False, **overrides) -> Path:
    """Write ``target`` with the ``gguf`` package's writer: ``source``'s tokenizer (tokens, types,
    merges, special ids, flags; ``pre`` replaces its pre-tokenizer name, None drops it) and, with
    ``tensor_bytes``, one tensor of that many bytes whose data is a hole in a sparse file (the
    size of a model's weights without their cost on disk)."""
    import gguf as gguf_package
    import numpy as np

    from tokscope.core.formats import gguf as reader

    meta = reader.read_metadata(source)
    endian = gguf_package.GGUFEndian.BIG if big_endian else gguf_package.GGUFEndian.LITTLE
    writer = gguf_package.GGUFWriter(target, arch=meta.get("general.architecture", "llama"), endianess=endian)
    writer.add_tokenizer_model(meta["tokenizer.ggml.model"])
    name = meta.get("tokenizer.ggml.pre") if pre == "keep" else pre
    if name is not None:
        writer.add_tokenizer_pre(name)
    writer.add_token_list(list(meta["tokenizer.ggml.tokens"]))
    if "tokenizer.ggml.token_type" in meta:
        writer.add_token_types(list(meta["tokenizer.ggml.token_type"]))
    if "tokenizer.ggml.merges" in meta:
        writer.add_token_merges(list(meta["tokenizer.ggml.merges"]))
    for key, value in meta.items():
        if key.endswith("_token_id"):
            writer.add_uint32(key, value)
        elif key.startswith("tokenizer.ggml.add_") or key.startswith("tokenizer.ggml.normalizer."):
            writer.add_bool(key, value)
    if chat_template is not None:
        writer.add_chat_template(chat_template)
    for key, value in overrides.items():
        writer.add_key_value(key.replace("__", "."), value, _value_type(value))
    if tensor_bytes:
        writer.add_tensor_info("weights", (tensor_bytes,), np.dtype(np.int8), tensor_bytes)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    if tensor_bytes:
        with open(target, "r+b") as handle:  # the data as a hole: the file has its full size
            handle.truncate(os.path.getsize(target) + tensor_bytes + 64)
    return target


def _value_type(value):
    import gguf as gguf_package

    types = gguf_package.GGUFValueType
    if isinstance(value, bool):
        return types.BOOL
    if isinstance(value, int):
        return types.UINT32
    if isinstance(value, float):
        return types.FLOAT32
    return types.STRING
