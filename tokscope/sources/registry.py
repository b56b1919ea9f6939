"""Encodings by name: list them, say where they come from, load them (lazily, once per process).

A name is, in the order tried:

1. an OpenAI encoding from tiktoken's registry (``o200k_base``, with short aliases such as ``o200k``);
2. an open model tokscope knows by name (``llama3``, ``llama4``, ``qwen``, ``tekken``), whose files
   come from registry packages that carry them;
3. a path: a tokenizer tokscope saved, a Hugging Face ``tokenizer.json``, a model folder, a Tekken
   file, a known model's ``tokenizer.model``;
4. the name of a tokenizer saved in the user's data directory;
5. a model id (``meta-llama/Meta-Llama-3-8B``) found in the local Hugging Face hub cache;
6. ``ollama:NAME[:TAG]``, a model in Ollama's local store (its GGUF's tokenizer).

Nothing is downloaded.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..core.text.display import safe_text
from ..core.tokenizer.tokenizer import Tokenizer
from ..inputs import walk
from . import builtin, hub, model_files, ollama, open_models, saved
from . import tiktoken_adapter as tk
from .errors import SourceError
from .info import EncodingInfo
from .names import (
    ALIASES,
    DEFAULT_ENCODING,
    builtin_names,
    canonical_name,
    saved_dir,
    user_data_dir,
)

__all__ = [
    "ALIASES", "DEFAULT_ENCODING", "EncodingInfo", "SourceError", "builtin_names", "canonical_name", "check", "forget",
    "list_encodings", "load", "saved_dir", "user_data_dir",
]


def list_encodings() -> list[EncodingInfo]:
    """Every encoding tokscope offers: the OpenAI ones first, the open models it knows by name,
    the tokenizers saved in the data directory, then the models in the Hugging Face hub cache."""
    out = []
    for name in builtin_names():
        spec = tk.encoding_spec(name)
        where = builtin.origin(name)
        out.append(EncodingInfo(name, spec.n_vocab, "builtin", where.kind, where.detail, where.available))
    out.extend(open_models.listing())
    out.extend(list_saved())
    out.extend(list_cached_models())
    out.extend(list_ollama_models())
    return out


def list_ollama_models() -> list[EncodingInfo]:
    """The models in Ollama's local store (not loaded)."""
    return [EncodingInfo(m.name, None, "ollama", "ollama", f"GGUF {m.blob}", True) for m in ollama.local_models()]


def list_cached_models() -> list[EncodingInfo]:
    """The models in the local Hugging Face hub cache that hold a tokenizer file (not loaded)."""
    return [EncodingInfo(m.id, None, "hub cache", "hub-cache", f"{m.file.name} in {m.path}", True)
            for m in hub.cached_models()]


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
    if _is_builtin(name) or name in open_models.names():
        return name
    path = _path_of(name)
    if path is None:
        return name
    try:
        stat = path.stat()
    except OSError:
        return name
    return (name, str(path.resolve()), stat.st_size, stat.st_mtime_ns)


def _path_of(name: str) -> Path | None:
    """The file or folder ``name`` stands for: a path, a saved name, or a cached model's snapshot."""
    if model_files.is_tokenizer_path(name):
        return Path(name).expanduser()
    if ollama.is_ollama_name(name):
        model = ollama.find(name)
        return model.manifest if model is not None else None
    found = saved.find(name, saved_dir())
    if found is not None:
        return found
    cached = hub.resolve(name)
    return cached.path if cached is not None else None


def _is_builtin(name: str) -> bool:
    """Whether ``name`` is an OpenAI encoding's (:func:`builtin_names`). tiktoken's names are
    letters, digits and underscores (a test holds them to it), so a path or an ``ollama:`` name is
    told without importing tiktoken.

    >>> _is_builtin("o200k_base"), _is_builtin("./o200k_base"), _is_builtin("ollama:llama3")
    (True, False, False)
    """
    return name.replace("_", "").isalnum() and name.isascii() and name in builtin_names()


def _load_uncached(name: str) -> Tokenizer:
    if _is_builtin(name):
        spec = tk.encoding_spec(name)
        ranks = builtin.load_ranks(name)
        return Tokenizer(spec.name, ranks, spec.pattern, spec.special_tokens, n_vocab=spec.n_vocab)
    found = open_models.load_named(name)
    if found is not None:
        return found
    if ollama.is_ollama_name(name) and not model_files.is_tokenizer_path(name):
        return ollama.load(name)
    if model_files.is_tokenizer_path(name):
        link = walk.link_problem(os.path.expanduser(name))
        if link is not None:  # a link that loops or leads nowhere: say so, not "cannot read"
            raise SourceError(link)
        path = Path(name).expanduser()
        if path.is_file() and saved.is_saved_file(path):
            return saved.load_file(path)
        return model_files.load_path(path)
    path = saved.find(name, saved_dir())
    if path is not None:
        return saved.load_file(path)
    if hub.is_model_id(name):
        cached = hub.resolve(name)
        if cached is None:
            raise SourceError(hub.not_found_message(name))
        return model_files.load_path(cached.path, name=cached.id, model_id=cached.id)
    link = walk.link_problem(os.path.expanduser(name))
    if link is not None:  # a path that is there but leads nowhere is no unknown encoding
        raise SourceError(link)
    known = ", ".join([*builtin_names(), *open_models.names()])
    raise SourceError(f"unknown encoding {safe_text(name)!r}; choose one of {known}, or give a path to a tokenizer "
                      f"file or folder, a saved tokenizer's name, or a model id in the Hugging Face cache")


def check(name: str) -> None:
    """Raise the :class:`SourceError` that :func:`load` would for a name that stands for nothing,
    without reading any tokenizer file (the explorer checks ``-e`` before it starts)."""
    name = canonical_name(name)
    if name in builtin_names() or name in open_models.names():
        return
    if model_files.is_tokenizer_path(name) or saved.find(name, saved_dir()) is not None:
        return
    if ollama.is_ollama_name(name):
        if ollama.find(name) is None:
            raise SourceError(ollama.not_found_message(name))
        return
    if hub.is_model_id(name):
        if hub.resolve(name) is None:
            raise SourceError(hub.not_found_message(name))
        return
    _load_uncached(name)


def forget(name: str | None = None) -> None:
    """Drop loaded tokenizers from the process cache (all of them when ``name`` is None)."""
    with _lock:
        if name is None:
            _loaded.clear()
            return
        name = canonical_name(name)
        for key in [k for k in _loaded if k == name or (isinstance(k, tuple) and k[0] == name)]:
            del _loaded[key]
