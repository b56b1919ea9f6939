"""SentencePiece ``.model`` files for the tests, obtained at test time (never committed).

* the ``sentencepiece==0.2.3`` sdist's ``test/*.model`` (botchan BPE and Unigram, kyoto Japanese
  Unigram): looked for in the test cache (``$TOKSCOPE_TEST_CACHE``, else
  ``~/.cache/tokscope-tests``), else the sdist is fetched there with ``pip download`` and the
  models extracted;
* Mistral's real ``.model`` files (v1 to v7) from the installed ``mistral_common``;
* models trained here by ``sentencepiece.SentencePieceTrainer`` on tokscope's multi-script
  samples, one per configuration (:data:`CONFIGS`), once per session.

Each fixture skips with the reason when its source is missing.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

SDIST = "sentencepiece==0.2.3"
SDIST_NAME = "sentencepiece-0.2.3"
SDIST_MODELS = ("botchan_en_bpe_1000.model", "botchan_en_unigram_1000.model", "kyoto_ja_unigram_8000.model")
ROOT = Path(__file__).resolve().parents[1]

#: trained configurations: name -> trainer options (beyond the corpus and a small vocabulary)
CONFIGS: dict[str, dict] = {
    "unigram": dict(model_type="unigram"),
    "bpe": dict(model_type="bpe"),
    "char": dict(model_type="char"),
    "word": dict(model_type="word"),
    "unigram_byte_fallback": dict(model_type="unigram", byte_fallback=True, character_coverage=0.98),
    "bpe_byte_fallback": dict(model_type="bpe", byte_fallback=True, character_coverage=0.98),
    "no_dummy_prefix": dict(model_type="unigram", add_dummy_prefix=False),
    "bpe_no_dummy_prefix": dict(model_type="bpe", add_dummy_prefix=False),
    "suffix": dict(model_type="unigram", treat_whitespace_as_suffix=True),
    "bpe_suffix": dict(model_type="bpe", treat_whitespace_as_suffix=True),
    "case_fold": dict(model_type="unigram", normalization_rule_name="nmt_nfkc_cf"),
    "nfkc": dict(model_type="bpe", normalization_rule_name="nfkc"),
    "identity": dict(model_type="unigram", normalization_rule_name="identity", remove_extra_whitespaces=False),
    "user_defined": dict(model_type="unigram", user_defined_symbols=["<tool>", "@@", "foo", "▁bar", "ab"],
                         control_symbols=["<ctl>"]),
    "bpe_user_defined": dict(model_type="bpe", user_defined_symbols=["<tool>", "@@", "foo", "ab"],
                             control_symbols=["<ctl>"]),
    "split_digits": dict(model_type="bpe", split_digits=True),
    "whitespace_pieces": dict(model_type="bpe", split_by_whitespace=False, allow_whitespace_only_pieces=True,
                              remove_extra_whitespaces=False),
    "unigram_whitespace_pieces": dict(model_type="unigram", split_by_whitespace=False,
                                      allow_whitespace_only_pieces=True, remove_extra_whitespaces=False),
    "no_script_split": dict(model_type="unigram", split_by_unicode_script=False, split_by_number=False,
                            max_sentencepiece_length=4),
}


class Missing(Exception):
    """A source of models is not available (the tests skip)."""


def cache_dir() -> Path:
    """Where downloaded test files are kept between runs."""
    found = os.environ.get("TOKSCOPE_TEST_CACHE")
    return Path(found) if found else Path.home() / ".cache" / "tokscope-tests"


def _extract_models(archive: Path, target: Path) -> None:
    """The sdist's ``test/*.model`` files, and nothing else, into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            name = member.name.rsplit("/", 1)[-1]
            if member.isfile() and name in SDIST_MODELS and "/test/" in member.name:
                data = tar.extractfile(member)
                if data is not None:
                    tmp = target / (name + ".part")
                    tmp.write_bytes(data.read())
                    tmp.replace(target / name)


def sdist_models() -> Path:
    """The folder holding the sdist's test models (fetched on first use, one process at a time)."""
    from gguf_files import download_lock

    with download_lock():
        return _sdist_models()


def _sdist_models() -> Path:
    cache = cache_dir()
    target = cache / SDIST_NAME / "test"
    if all((target / name).is_file() for name in SDIST_MODELS):
        return target
    archive = cache / f"{SDIST_NAME}.tar.gz"
    if not archive.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", SDIST,
                            "-d", str(cache)], check=True, capture_output=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as exc:
            raise Missing(f"cannot fetch the {SDIST} sdist for its test models: {type(exc).__name__}") from None
    if not archive.is_file():
        raise Missing(f"pip download left no {archive.name} in {cache}")
    _extract_models(archive, target)
    if not all((target / name).is_file() for name in SDIST_MODELS):
        raise Missing(f"the {SDIST} sdist lacks some of its test models")
    return target


def mistral_models() -> list[Path]:
    """Mistral's SentencePiece models as ``mistral_common`` installs them."""
    spec = importlib.util.find_spec("mistral_common")
    if spec is None or not spec.submodule_search_locations:
        return []
    data = Path(list(spec.submodule_search_locations)[0]) / "data"
    return sorted(p for p in data.glob("*.model*") if p.is_file())


def corpus() -> list[str]:
    """The training lines: tokscope's samples in every language, plus digits and spaces."""
    lines = []
    for path in sorted((ROOT / "samples").rglob("*.txt")):
        lines.extend(line for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    lines += ["call 555 0123 at 10:45 on 2024-06-01, pay $1,234.56", "foo@@bar <tool> ab abab foobar  x   y"]
    return lines


def train(name: str, folder: Path) -> Path:
    """Train configuration ``name`` into ``folder``; the ``.model`` path."""
    import sentencepiece as spm

    options = dict(CONFIGS[name])
    text = folder / "corpus.txt"
    if not text.is_file():
        text.write_text("\n".join(corpus()) + "\n", encoding="utf-8")
    prefix = folder / name
    kind = options["model_type"]
    vocab = {"char": 300, "word": 600}.get(kind, 1000)
    options.setdefault("character_coverage", 0.995)
    spm.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(prefix), vocab_size=vocab, input_sentence_size=2000,
        shuffle_input_sentence=False, num_threads=1, minloglevel=2, hard_vocab_limit=False, **options)
    return prefix.with_suffix(".model")


@pytest.fixture(scope="session")
def spm_sdist_dir() -> Path:
    try:
        return sdist_models()
    except Missing as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def trained_spm(tmp_path_factory):
    """``name -> .model path`` for every configuration of :data:`CONFIGS` (trained on first use)."""
    pytest.importorskip("sentencepiece")
    folder = tmp_path_factory.mktemp("spm-trained")
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            made[name] = train(name, folder)
        return made[name]

    return get


# ----- llama.cpp's vocabulary GGUF files ---------------------------------------------------------

GGUF_SEPARATOR = "\n__ggml_vocab_test__\n"


@pytest.fixture(scope="session")
def gguf_models_dir() -> Path:
    """llama.cpp's ``models/ggml-vocab-*`` files and test vectors (:mod:`gguf_files` fetches them)."""
    from gguf_files import llama_cpp_dir

    return llama_cpp_dir() / "models"


def read_vectors(gguf: Path) -> list[tuple[str, list[int]]]:
    """The (input, ids) pairs of a vocab file's ``.inp``/``.out``, split as llama.cpp's
    ``tests/test-tokenizer-0.cpp`` splits them."""
    raw = Path(str(gguf) + ".inp").read_bytes().decode("utf-8")
    inputs = raw.split(GGUF_SEPARATOR)
    outputs = Path(str(gguf) + ".out").read_text(encoding="utf-8").split("\n")
    if outputs and outputs[-1] == "" and len(outputs) == len(inputs) + 1:
        outputs.pop()
    assert len(inputs) == len(outputs), gguf.name
    return [(text, [int(t) for t in line.split()]) for text, line in zip(inputs, outputs)]


def read_gguf_metadata(path: Path) -> dict:
    """A GGUF file's key-value section (test-only: the ``gguf`` package's reader takes a minute
    over a 250k vocabulary; this one is checked against it in the tests). Arrays of numbers are
    ``array.array``, other arrays lists."""
    import struct
    from array import array

    data = path.read_bytes()
    scalars = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
    if data[:4] != b"GGUF":
        raise ValueError("not a GGUF file")
    pos = 24
    (count,) = struct.unpack_from("<Q", data, 16)

    def string() -> str:
        nonlocal pos
        (n,) = struct.unpack_from("<Q", data, pos)
        pos += 8 + n
        return data[pos - n:pos].decode("utf-8")

    def value(kind: int):
        nonlocal pos
        if kind == 8:
            return string()
        if kind == 9:
            inner, n = struct.unpack_from("<IQ", data, pos)
            pos += 12
            if inner in scalars and inner != 7:
                out = array(scalars[inner])
                size = out.itemsize * n
                out.frombytes(data[pos:pos + size])
                pos += size
                return out
            return [value(inner) for _ in range(n)]
        fmt = "<" + scalars[kind]
        (v,) = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v

    meta = {}
    for _ in range(count):
        key = string()
        (kind,) = struct.unpack_from("<I", data, pos)
        pos += 4
        meta[key] = value(kind)
    return meta
