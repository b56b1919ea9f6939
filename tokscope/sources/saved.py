"""Tokenizers the user saved: find them by name or path, list them, load them, save them.

(The file format itself lives in the core: ``tokscope.core.serialize``.)
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core import serialize
from ..core.tokenizer import Tokenizer
from .builtin import SourceError
from .info import EncodingInfo

#: The file suffix of saved tokenizers in the data directory.
SUFFIX = ".json"


def find(name: str, folder: Path) -> Path | None:
    """A saved tokenizer's path: ``name`` as a path to a file, or a name in ``folder``."""
    path = Path(name).expanduser()
    if path.is_file():
        return path
    if "/" in name or os.sep in name or not name:
        return None
    candidate = folder / f"{name}{SUFFIX}"
    if candidate.is_file():
        return candidate
    return None


def list_saved(folder: Path) -> list:
    """One ``EncodingInfo`` per ``*.json`` file in ``folder`` (name = file name without .json).

    A file that does not load is still listed, marked unavailable with the reason.
    """
    out = []
    try:
        paths = sorted(p for p in folder.glob(f"*{SUFFIX}") if p.is_file())
    except OSError:
        return []
    for path in paths:
        try:
            saved = serialize.load(path)
        except serialize.SavedFormatError as exc:
            reason = str(exc).removeprefix(f"{path}: ")
            out.append(EncodingInfo(path.stem, None, "saved", "file", f"{path} (unreadable: {reason})", False))
            continue
        origin = saved.metadata.get("source", "saved") if isinstance(saved.metadata, dict) else "saved"
        pattern = saved.pattern_name or "custom pattern"
        detail = f"{path} ({origin}, {len(saved.merges):,} merges, {pattern})"
        out.append(EncodingInfo(path.stem, saved.n_vocab, "saved", "file", detail, True))
    return out


def is_saved_file(path: Path) -> bool:
    """Whether ``path`` looks like a tokenizer tokscope saved (its JSON says ``"format": "tokscope-bpe"``)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return serialize.FORMAT_NAME.encode() in head


def load_file(path: Path) -> Tokenizer:
    """The tokenizer in a saved file (errors are one-line :class:`SourceError`)."""
    try:
        return serialize.load(path).tokenizer()
    except serialize.SavedFormatError as exc:
        raise SourceError(str(exc)) from None


def saved_path(name: str, folder: Path) -> Path:
    """Where a tokenizer saved under ``name`` goes; the name must be a plain file name."""
    if not name or name.startswith(".") or "/" in name or os.sep in name or name != name.strip():
        raise SourceError(f"{name!r} cannot be a saved tokenizer's name (use letters, digits, '-', '_' or '.')")
    return folder / f"{name}{SUFFIX}"


def save_named(saved: serialize.SavedTokenizer, name: str, folder: Path, *, overwrite: bool = False) -> Path:
    """Save into the data directory under ``name``; refuses to replace one unless ``overwrite``."""
    path = saved_path(name, folder)
    if path.exists() and not overwrite:
        raise SourceError(f"a saved tokenizer named {name!r} already exists ({path}); choose another name or overwrite it")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SourceError(f"cannot create {folder}: {exc.strerror or exc}") from None
    serialize.save(path, saved)
    return path
