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

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.formats import gguf
from ..core.formats.sniff import FOLDER_FILES
from .regular_files import SourceError, read_head, read_regular

#: files that hold a tokenizer, in the order a model folder is searched
TOKENIZER_FILES = FOLDER_FILES  # the one table: core/formats/sniff.py

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def cache_dirs() -> list[Path]:
    """Where the hub cache is looked for, in order (only the first existing one is used, as the
    hub library does; every candidate is listed so an error can say where it looked)."""
    return list(_cache_dirs_for(_cache_env()))


#: the environment variables :func:`cache_dirs` depends on (``HOME``: through ``~``)
_CACHE_VARS = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME")


def _cache_env() -> tuple[str | None, ...]:
    return tuple(map(os.environ.get, _CACHE_VARS))


@functools.lru_cache(maxsize=8)
def _cache_dirs_for(env: tuple[str | None, ...]) -> tuple[Path, ...]:
    """:func:`cache_dirs` for the values of :data:`_CACHE_VARS` (kept: every path load asks)."""
    hub_cache, legacy, hf_home, xdg, _ = env
    for value in (hub_cache, legacy):
        if value:
            return (Path(value).expanduser(),)
    if hf_home:
        return (Path(hf_home).expanduser() / "hub",)
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return (base / "huggingface" / "hub",)


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
                # a regular file only: a named pipe planted here would block for ever
                commit = read_regular(ref, 4096, what="a hub ref").decode("utf-8").strip()
            except (SourceError, UnicodeDecodeError):
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


def cache_root_of(path: Path) -> Path | None:
    """The hub cache folder ``path`` lies in (as written, links not followed), or None. Inside
    it, only links that stay inside it are followed: the hub links a snapshot's files to its
    ``blobs``, never elsewhere.

    >>> import os; os.environ["HF_HUB_CACHE"] = "/c/hub"
    >>> cache_root_of(Path("/c/hub/models--a--b/snapshots/x/tokenizer.json")), cache_root_of(Path("/tmp/t.json"))
    (PosixPath('/c/hub'), None)
    >>> del os.environ["HF_HUB_CACHE"]
    """
    absolute = os.path.abspath(path)
    for cache in _cache_dirs_for(_cache_env()):
        root = os.path.abspath(cache)
        if os.name == "posix" and not absolute.startswith("//") and not root.startswith("//"):
            # both normalized, under the one root "/": a path's parts start with the root's as strings
            if absolute != root and absolute.startswith(root if root == "/" else root + "/"):
                return Path(root)
        elif Path(absolute) != Path(root) and Path(absolute).is_relative_to(root):
            return Path(root)
    return None


def tokenizer_file(folder: Path) -> Path | None:
    """The tokenizer file of a model folder (``tokenizer.json`` first), else its GGUF file when it
    holds exactly one (told by its content)."""
    for name in TOKENIZER_FILES:
        path = folder / name
        if path.is_file():
            return path
    try:
        ggufs = [p for p in sorted(folder.glob("*.gguf")) if p.is_file() and _is_gguf(p)]
    except OSError:
        return None
    return ggufs[0] if len(ggufs) == 1 else None


def _is_gguf(path: Path) -> bool:
    try:  # a regular file only, opened without blocking (a FIFO named *.gguf must not hang a listing)
        return gguf.looks_like(read_head(path, 4))
    except SourceError:
        return False


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
