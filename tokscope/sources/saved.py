"""Tokenizers the user saved: find them by name or path, list them, load them.

(The file format itself lives in the core: ``tokscope.core.serialize``.)
"""

from __future__ import annotations

from pathlib import Path

from ..core.tokenizer import Tokenizer
from .builtin import SourceError


def find(name: str, folder: Path) -> Path | None:
    """A saved tokenizer's path: ``name`` as a path to a file, or a name in ``folder``."""
    path = Path(name).expanduser()
    if path.is_file():
        return path
    candidate = folder / f"{name}.json"
    if "/" not in name and candidate.is_file():
        return candidate
    return None


def list_saved(folder: Path) -> list:
    return []


def load_file(path: Path) -> Tokenizer:
    raise SourceError(f"{path}: cannot load saved tokenizers yet")
