"""Models already in the local Hugging Face hub cache, found by id (``meta-llama/Meta-Llama-3-8B``).

Nothing is ever downloaded. The cache is read in its documented layout::

    <cache>/models--ORG--NAME/refs/main          a commit hash
    <cache>/models--ORG--NAME/snapshots/<hash>/  the files of that commit (tokenizer.json, ...)

where ``<cache>`` is ``HF_HUB_CACHE`` (or the older ``HUGGINGFACE_HUB_CACHE``), else ``HF_HOME/hub``,
else ``~/.cache/huggingface/hub`` — the order ``huggingface_hub`` itself uses. Reading the layout
directly keeps ``tokscope`` free of that package (and of its import time); the layout is the
same one ``huggingface_hub``'s own cache scanner reads.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

#: files that hold a tokenizer, in the order a model folder is searched
TOKENIZER_FILES = ("tokenizer.json", "tekken.json", "tokenizer.model", "tokenizer.tiktoken", "spiece.model", "spm.model",
                   "sentencepiece.bpe.model")

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def cache_dirs() -> list[Path]:
    """Where the hub cache is looked for, in order (only the first existing one is used, as the
    hub library does; every candidate is listed so an error can say where it looked)."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return [Path(os.environ[var]).expanduser()]
    if os.environ.get("HF_HOME"):
        return [Path(os.environ["HF_HOME"]).expanduser() / "hub"]
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return [base / "huggingface" / "hub"]


def is_model_id(name: str) -> bool:
    """``ORG/NAME`` as the hub spells model ids (optionally ``@revision``).

    >>> is_model_id("meta-llama/Meta-Llama-3-8B"), is_model_id("gpt2"), is_model_id("a/b/c")
    (True, False, False)
    """
    return bool(_ID.match(name.partition("@")[0]))


def _folder(cache: Path, model_id: str) -> Path:
    org, _, name = model_id.partition("/")
    return cache / f"models--{org}--{name}"


@dataclass(frozen=True, slots=True)
class CachedModel:
    """A model in the hub cache that holds a tokenizer file."""

    id: str
    revision: str
    path: Path
    #: the tokenizer file found in the snapshot (see :data:`TOKENIZER_FILES`)
    file: Path


def snapshot(model_id: str, revision: str = "main") -> Path | None:
    """The snapshot folder of ``model_id`` at ``revision`` (a ref such as ``main``, or a commit)
    in the first cache folder, or None when it is not cached."""
    for cache in cache_dirs():
        folder = _folder(cache, model_id)
        commit = revision
        if not _COMMIT.match(revision):
            ref = folder / "refs" / revision
            try:
                commit = ref.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                commit = ""
            if not _COMMIT.match(commit):
                # no ref (e.g. a cache filled by hand): the only snapshot, if there is one
                snaps = sorted(p for p in (folder / "snapshots").glob("*") if p.is_dir()) if folder.is_dir() else []
                if len(snaps) == 1:
                    return snaps[0]
                continue
        path = folder / "snapshots" / commit
        if path.is_dir():
            return path
    return None


def tokenizer_file(folder: Path) -> Path | None:
    """The tokenizer file of a model folder (``tokenizer.json`` first)."""
    for name in TOKENIZER_FILES:
        path = folder / name
        if path.is_file():
            return path
    return None


def resolve(name: str) -> CachedModel | None:
    """``ORG/NAME[@revision]`` in the hub cache, when it holds a tokenizer file."""
    model_id, _, revision = name.partition("@")
    if not is_model_id(model_id):
        return None
    path = snapshot(model_id, revision or "main")
    if path is None:
        return None
    file = tokenizer_file(path)
    if file is None:
        return None
    return CachedModel(model_id, revision or "main", path, file)


def cached_models() -> list[CachedModel]:
    """Every model in the hub cache whose ``main`` snapshot holds a tokenizer file, by id."""
    out = []
    for cache in cache_dirs():
        try:
            folders = sorted(p for p in cache.glob("models--*--*") if p.is_dir())
        except OSError:
            continue
        for folder in folders:
            _, org, name = folder.name.split("--", 2)
            model_id = f"{org}/{name}"
            if not is_model_id(model_id):
                continue
            found = resolve(model_id)
            if found is not None:
                out.append(found)
    return out


def not_found_message(name: str) -> str:
    """Where a model id was looked for, for the one-line error."""
    where = ", ".join(str(c) for c in cache_dirs())
    return (f"{name!r} is not in the local Hugging Face cache (looked in {where}; tokscope never downloads: "
            f"fetch it once with the hub's own tools, or give a path to its tokenizer.json)")
