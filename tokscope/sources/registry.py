"""Encodings by name: list them, say where they come from, load them (lazily, once per process).

A name is an OpenAI encoding from tiktoken's registry (``o200k_base``, with short aliases such as
``o200k``), or a path to a tokenizer file tokscope saved, or the name of one saved in the user's
data directory.
"""

from __future__ import annotations

import threading

from ..core.display import safe_text
from ..core.tokenizer import Tokenizer
from . import builtin, saved
from . import tiktoken_adapter as tk
from .errors import SourceError
from .info import EncodingInfo
from .names import ALIASES, DEFAULT_ENCODING, builtin_names, canonical_name, saved_dir, user_data_dir

__all__ = [
    "ALIASES", "DEFAULT_ENCODING", "EncodingInfo", "SourceError", "builtin_names", "canonical_name", "forget",
    "list_encodings", "load", "saved_dir", "user_data_dir",
]


def list_encodings() -> list[EncodingInfo]:
    """Every encoding tokscope offers: the OpenAI ones first, then saved tokenizers."""
    out = []
    for name in builtin_names():
        spec = tk.encoding_spec(name)
        where = builtin.origin(name)
        out.append(EncodingInfo(name, spec.n_vocab, "builtin", where.kind, where.detail, where.available))
    out.extend(list_saved())
    return out


def list_saved() -> list[EncodingInfo]:
    """Tokenizers saved in the user's data directory (the trainer writes them there)."""
    return saved.list_saved(saved_dir())


_loaded: dict[object, Tokenizer] = {}
_lock = threading.Lock()


def load(name: str) -> Tokenizer:
    """The tokenizer for an encoding name, an alias, a saved name or a file path (cached; a file
    that changed since it was loaded is read again)."""
    key = _key(canonical_name(name))
    tokenizer = _loaded.get(key)
    if tokenizer is not None:
        return tokenizer
    with _lock:
        tokenizer = _loaded.get(key)
        if tokenizer is None:
            tokenizer = _load_uncached(canonical_name(name))
            _loaded[key] = tokenizer
    return tokenizer


def _key(name: str) -> object:
    """The cache key: a built-in's name, or a file's path with its size and modification time."""
    if name in builtin_names():
        return name
    path = saved.find(name, saved_dir())
    if path is None:
        return name
    try:
        stat = path.stat()
    except OSError:
        return name
    return (name, str(path.resolve()), stat.st_size, stat.st_mtime_ns)


def _load_uncached(name: str) -> Tokenizer:
    if name in builtin_names():
        spec = tk.encoding_spec(name)
        ranks = builtin.load_ranks(name)
        return Tokenizer(spec.name, ranks, spec.pattern, spec.special_tokens, n_vocab=spec.n_vocab)
    path = saved.find(name, saved_dir())
    if path is not None:
        return saved.load_file(path)
    known = ", ".join(builtin_names())
    raise SourceError(f"unknown encoding {safe_text(name)!r}; choose one of {known}, or give a saved tokenizer's "
                      f"name or path")


def forget(name: str | None = None) -> None:
    """Drop loaded tokenizers from the process cache (all of them when ``name`` is None)."""
    with _lock:
        if name is None:
            _loaded.clear()
            return
        name = canonical_name(name)
        for key in [k for k in _loaded if k == name or (isinstance(k, tuple) and k[0] == name)]:
            del _loaded[key]
