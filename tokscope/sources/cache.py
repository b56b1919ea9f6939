"""tokscope's own cache of parsed tokenizer files, so a second load skips parsing.

Each entry is keyed by the sha256 of the source file's bytes (so an edited file is parsed again)
and by the format version and tokscope's version (so an upgrade never reads an old layout). The
header repeats the key and is checked before the payload is read; an entry that does not check,
or does not unpickle to a tokenizer, is parsed again and replaced. Entries are written atomically
(temporary file in the same folder, then rename; the temporary file is removed on every failure)
in the user's own cache folder, which only the user can write.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..version import __version__
from ..core.tokenizer.tokenizer import Tokenizer
from .errors import SourceError
from .names import user_cache_dir

CACHE_FORMAT = 1


def _entry(kind: str, digest: str) -> Path:
    tag = f"v{CACHE_FORMAT}-{__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    return user_cache_dir() / "tokenizers" / f"{kind}.{digest[:32]}.{tag}.pickle"


def _header(kind: str, digest: str) -> bytes:
    return f"tokscope-tokenizer {CACHE_FORMAT} {__version__} {kind} {digest}\n".encode()


def read_source(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from None


def cached_file(path: Path, kind: str, build: Callable[[bytes], Tokenizer]) -> Tokenizer:
    """The tokenizer ``build(data)`` makes from ``path``'s bytes, from the cache when it holds it."""
    data = read_source(path)
    digest = hashlib.sha256(data).hexdigest()
    entry = _entry(kind, digest)
    header = _header(kind, digest)
    tokenizer = _load(entry, header)
    if tokenizer is not None:
        return tokenizer
    tokenizer = build(data)
    _store(entry, header, tokenizer)
    return tokenizer


def cached_value(kind: str, digest: str, build: Callable[[], Any], accept: Callable[[Any], bool]) -> Any:
    """What ``build()`` makes, from the cache entry ``kind``/``digest`` when it holds a value that
    ``accept`` takes (for a source whose identity is cheaper to compute than its bytes' hash: a
    multi-gigabyte GGUF file is keyed by its path, size, time and first bytes). The entry is
    written by a thread, so the caller has its value without waiting for the write (the process
    waits for it before exiting)."""
    entry = _entry(kind, digest)
    header = _header(kind, digest)
    value = _load(entry, header, accept)
    if value is not None:
        return value
    value = build()
    writer = threading.Thread(target=_store, args=(entry, header, value), name="tokscope-cache-write")
    with _writers_lock:
        _writers[:] = [w for w in _writers if w.is_alive()] + [writer]
    writer.start()
    return value


_writers: list[threading.Thread] = []
_writers_lock = threading.Lock()


def wait_for_writes() -> None:
    """Wait until the entries :func:`cached_value` is writing are written."""
    with _writers_lock:
        pending = list(_writers)
    for writer in pending:
        writer.join()


def _is_tokenizer(value: Any) -> bool:
    return isinstance(value, Tokenizer)


def _load(entry: Path, header: bytes, accept: Callable[[Any], bool] = _is_tokenizer) -> Any:
    try:
        with open(entry, "rb") as handle:
            if handle.readline() != header:
                return None
            value = pickle.load(handle)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError,
            IndexError, KeyError, MemoryError, RecursionError):
        return None
    return value if accept(value) else None


def _store(entry: Path, header: bytes, tokenizer: Any) -> None:
    tmp = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=entry.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(header)
            pickle.dump(tokenizer, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
        tmp = None
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError, RuntimeError, ValueError):
        pass  # a read-only or full cache only costs speed (or a tokenizer changing while it is written)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
