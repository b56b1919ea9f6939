"""Encodings by name: list them, say where they come from, load them (lazily, once per process).

A name is an OpenAI encoding from tiktoken's registry (``o200k_base``, with short aliases such as
``o200k``), or a path to a tokenizer file tokscope saved, or the name of one saved in the user's
data directory.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ..core.tokenizer import Tokenizer
from . import builtin
from . import tiktoken_adapter as tk
from .builtin import SourceError

DEFAULT_ENCODING = "o200k_base"

#: short names a user may type
ALIASES = {
    "o200k": "o200k_base",
    "cl100k": "cl100k_base",
    "p50k": "p50k_base",
    "r50k": "r50k_base",
    "harmony": "o200k_harmony",
}


@dataclass(frozen=True, slots=True)
class EncodingInfo:
    """One encoding a user can pick: ``kind`` is ``builtin`` or ``saved``; ``source`` is the origin
    kind (``tiktoken-cache``, ``carrier``, ``file`` or ``missing``) and ``detail`` says more."""

    name: str
    n_vocab: int | None
    kind: str
    source: str
    detail: str
    available: bool


def user_data_dir() -> Path:
    """Where saved tokenizers live (``TOKSCOPE_DATA_DIR``, else the XDG data home)."""
    if os.environ.get("TOKSCOPE_DATA_DIR"):
        return Path(os.environ["TOKSCOPE_DATA_DIR"])
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "tokscope"


def saved_dir() -> Path:
    return user_data_dir() / "tokenizers"


def builtin_names() -> list[str]:
    return tk.encoding_names()


def canonical_name(name: str) -> str:
    return ALIASES.get(name, name)


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
    from . import saved

    return saved.list_saved(saved_dir())


_loaded: dict[str, Tokenizer] = {}
_lock = threading.Lock()


def load(name: str) -> Tokenizer:
    """The tokenizer for an encoding name, an alias, a saved name or a file path (cached)."""
    key = canonical_name(name)
    tokenizer = _loaded.get(key)
    if tokenizer is not None:
        return tokenizer
    with _lock:
        tokenizer = _loaded.get(key)
        if tokenizer is None:
            tokenizer = _load_uncached(key)
            _loaded[key] = tokenizer
    return tokenizer


def _load_uncached(name: str) -> Tokenizer:
    if name in builtin_names():
        spec = tk.encoding_spec(name)
        ranks = builtin.load_ranks(name)
        return Tokenizer(spec.name, ranks, spec.pattern, spec.special_tokens, n_vocab=spec.n_vocab)
    from . import saved

    path = saved.find(name, saved_dir())
    if path is not None:
        return saved.load_file(path)
    known = ", ".join(builtin_names())
    raise SourceError(f"unknown encoding {name!r}; choose one of {known}, or give a saved tokenizer's name or path")


def forget(name: str | None = None) -> None:
    """Drop loaded tokenizers from the process cache (all of them when ``name`` is None)."""
    with _lock:
        if name is None:
            _loaded.clear()
        else:
            _loaded.pop(canonical_name(name), None)
