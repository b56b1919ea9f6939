"""Tokenizers the user saved: find them by name or path, list them, load them, save them.

(The file format itself lives in the core: ``tokscope.core.formats.saved``.)

Saving by name is one validated path for the command line and the explorer's training screen::

    path = prepare_save(name, folder, overwrite=False)   # before training: name, folder, clash
    ...                                                  # the long work
    path = save_named(saved, name, folder, overwrite=False)   # exclusive unless overwrite

:func:`prepare_save` refuses a bad name (:func:`~tokscope.sources.names.check_saved_name`), a
folder that cannot be created or written, and an existing tokenizer of that name unless
``overwrite``; :func:`save_named` then creates the file exclusively, so of two saves of one new
name at once exactly one succeeds and the other gets a one-line ``already exists`` error.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.formats import saved as serialize
from ..core.text.display import safe_text
from ..core.formats.files import ExistsError, SaveError, check_target
from ..core.tokenizer.tokenizer import Tokenizer
from .errors import BadNameError, SourceError
from .info import EncodingInfo
from . import names, open_models
from .errors import BadNameError
from .names import builtin_names

#: The file suffix of saved tokenizers in the data directory.

def taken_by(name: str) -> str | None:
    """What ``-e NAME`` loads before a saved tokenizer of that name, in any letter case: a
    built-in encoding or its alias, or an open model tokscope knows by name (Meta's Llama 3,
    Qwen, Mistral's Tekken). ``None`` when the name is free.

    >>> taken_by("O200K"), taken_by("qwen"), taken_by("mine")
    ('built-in encoding o200k_base', 'open model qwen (Qwen (Alibaba; Qwen-7B/14B/72B))', None)
    """
    taken = names.taken_by(name)
    if taken is not None:
        return taken
    folded = name.casefold()
    for model in open_models.names():
        if folded == model.casefold():
            by_name = open_models.by_name(model)
            title = by_name.title if by_name is not None else open_models.TEKKEN_CARRIED[model][1]
            return f"open model {model} ({title})"
    return None


def check_saved_name(name: object, what: str = "name") -> str:
    """``name`` if it can be a saved tokenizer's name (:func:`tokscope.sources.names.check_saved_name`)
    and no open model takes it for ``-e`` (:func:`taken_by`), else :class:`BadNameError`.

    >>> check_saved_name("llama3")
    Traceback (most recent call last):
    ...
    tokscope.sources.errors.BadNameError: 'llama3' is the name of the open model llama3 (Llama 3.1-3.3 (Meta)); choose another name
    """
    checked = names.check_saved_name(name, what)
    taken = taken_by(checked)
    if taken is not None:
        raise BadNameError(f"{safe_text(checked)!r} is the name of the {taken}; choose another {what}")
    return checked

SUFFIX = ".json"


def find(name: str, folder: Path) -> Path | None:
    """A saved tokenizer's path: ``name`` as a path to a file, or a name in ``folder``."""
    try:
        path = Path(name).expanduser()
        if path.is_file():
            return path
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a name too long, no home folder
        return None
    if "/" in name or os.sep in name or not name or "\x00" in name:
        return None
    candidate = folder / f"{name}{SUFFIX}"
    try:
        if candidate.is_file():
            return candidate
    except (OSError, ValueError):
        return None
    return None




def list_saved(folder: Path) -> list[EncodingInfo]:
    """One ``EncodingInfo`` per ``*.json`` file in ``folder`` (name = file name without .json).

    A file that does not load is still listed, marked unavailable with the reason; so is a file
    named like a built-in encoding (listed under its file name, so names in a listing never
    repeat). No file, however odd its name or contents, stops the listing.
    """
    out = []
    try:
        paths = sorted(p for p in folder.glob(f"*{SUFFIX}") if p.is_file())
    except OSError:
        return []
    seen = set(builtin_names())
    for path in paths:
        stem = path.stem
        shown_path = safe_text(str(path))
        taken = taken_by(stem)  # -e NAME picks that instead
        if taken is not None or stem in seen:
            reason = (f"named like the {taken}, which -e {safe_text(stem)} picks; rename the file"
                      if taken is not None else "listed twice")
            out.append(EncodingInfo(path.name, None, "saved", "file", f"{shown_path} (unusable: {reason})", False))
            seen.add(path.name)
            continue
        seen.add(stem)
        try:
            saved = serialize.load(path)
        except serialize.SavedFormatError as exc:
            reason = str(exc).removeprefix(f"{shown_path}: ").removeprefix(f"{path}: ")
            out.append(EncodingInfo(stem, None, "saved", "file", f"{shown_path} (unreadable: {reason})", False))
            continue
        except (RecursionError, MemoryError, ValueError, OSError) as exc:  # belt and braces: never stop the listing
            out.append(EncodingInfo(stem, None, "saved", "file",
                                    f"{shown_path} (unreadable: {type(exc).__name__})", False))
            continue
        origin = saved.metadata.get("source", "saved") if isinstance(saved.metadata, dict) else "saved"
        pattern = saved.pattern_name or "custom pattern"
        detail = (f"{shown_path} ({safe_text(origin)}, {len(saved.merges):,} merges, {safe_text(pattern)})")
        out.append(EncodingInfo(stem, saved.n_vocab, "saved", "file", detail, True))
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
    except (ValueError, RecursionError, OverflowError) as exc:  # load() checks what a tokenizer needs; in case
        raise SourceError(f"{safe_text(str(path))}: cannot build the tokenizer ({type(exc).__name__})") from None


def saved_path(name: str, folder: Path) -> Path:
    """Where a tokenizer saved under ``name`` goes; :class:`~tokscope.sources.errors.BadNameError`
    when the name cannot be one (see :func:`~tokscope.sources.names.check_saved_name`)."""
    return folder / f"{check_open_model_name(check_saved_name(name))}{SUFFIX}"


def check_open_model_name(name: str, what: str = "name") -> str:
    """``name``, unless it is a known open model's (``llama3``, ``qwen`` ...), which ``-e NAME``
    would pick instead of the saved tokenizer: :class:`BadNameError` then, as for built-ins.

    >>> check_open_model_name("LLAMA3")
    Traceback (most recent call last):
    ...
    tokscope.sources.errors.BadNameError: 'LLAMA3' is the name of an open model tokscope knows (llama3); choose another name
    """
    from .open_models import names as open_model_names

    folded = name.casefold()
    for model in open_model_names():
        if folded == model.casefold():
            raise BadNameError(f"{safe_text(name)!r} is the name of an open model tokscope knows ({model}); "
                               f"choose another {what}")
    return name


def _exists_message(name: str, path: Path) -> str:
    return (f"a saved tokenizer named {safe_text(name)!r} already exists ({safe_text(str(path))}); "
            f"choose another name or overwrite it")


def prepare_save(name: str, folder: Path, *, overwrite: bool = False) -> Path:
    """Check, before any long work, that a tokenizer can be saved under ``name`` in ``folder``:
    the name is valid, the folder exists (it is created) and takes new files, and no tokenizer of
    that name exists unless ``overwrite``. Returns the path :func:`save_named` will write.

    Raises :class:`~tokscope.sources.errors.BadNameError` for the name, :class:`SourceError` for
    an existing one, :class:`~tokscope.core.formats.files.SaveError` for the folder.
    """
    path = saved_path(name, folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SaveError(f"cannot create {safe_text(str(folder))}: {exc.strerror or exc}", path=folder) from None
    try:
        check_target(path, overwrite=overwrite)
    except ExistsError:
        raise SourceError(_exists_message(name, path)) from None
    return path


def save_named(saved: serialize.SavedTokenizer, name: str, folder: Path, *, overwrite: bool = False) -> Path:
    """Save into the data directory under ``name``. Without ``overwrite`` the file is created
    exclusively: if a tokenizer of that name exists, or appears while this one is written (another
    process saving the same name), :class:`SourceError` says so and nothing is replaced."""
    path = prepare_save(name, folder, overwrite=True)
    try:
        serialize.save(path, saved, exclusive=not overwrite)
    except ExistsError:
        raise SourceError(_exists_message(name, path)) from None
    return path
