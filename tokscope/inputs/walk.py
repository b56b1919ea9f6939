"""The files a command names: paths as given, and the files inside folders (``tokscope count``).

:func:`walk` yields a :class:`Found` for each file to read and a :class:`Skipped` for each entry it
passes over, with its reason, so a caller refuses nothing silently:

* a folder named on the command line gives the files directly inside it, and with ``recursive``
  every file below it; without ``recursive`` the folders inside it are skipped (``folder``);
* hidden entries (a name starting with ``.``) inside a folder are skipped (``hidden``) unless
  ``hidden=True``; a hidden path named on the command line is read;
* ``globs`` keep only the files inside folders whose name matches one of them (a pattern with a
  ``/`` matches the path below the named folder instead, and ``*`` also matches ``/``); ``excludes``
  drop files and folders that match. A file named on the command line is always read;
* symbolic links are followed; a folder is walked once, so a link back to a folder that holds it
  (``link-loop``) or a second way to a folder or file already found (``seen``) is skipped;
* a link to nothing (``broken-link``) and devices, FIFOs and sockets inside a folder
  (``not-regular``, which could block or never end) are skipped; named on the command line, a
  FIFO or a device is read like a file (the reader's size limit holds);
* a path that does not exist (``missing``), a folder that cannot be listed (``permission``,
  ``unreadable``) are errors (``Skipped.error``): something the user asked for cannot be read.

Entries come in a stable order: the paths as given, each folder's entries sorted by their bytes,
depth first. Messages are one line, with the path made safe to print.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..core.text.display import safe_text

__all__ = ["Found", "Skipped", "walk"]


@dataclass(frozen=True, slots=True)
class Found:
    """A file to read: ``path`` as given or joined to its folder; ``size`` its bytes on disk
    (None when that says nothing: a FIFO, a device); ``named`` when given on the command line."""

    path: str
    size: int | None
    named: bool = False


@dataclass(frozen=True, slots=True)
class Skipped:
    """An entry passed over: ``reason`` (see the module docstring), ``message`` one safe line,
    ``error`` True when the user asked for it and it cannot be read."""

    path: str
    reason: str
    message: str
    error: bool = False


def _matches(patterns: Iterable[str], name: str, relative: str) -> bool:
    return any(fnmatchcase(relative if "/" in p else name, p) for p in patterns)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def link_problem(path: str) -> str | None:
    """Why ``path`` names nothing although something is there: a symbolic link that loops or
    leads nowhere (one line, safe to print); ``None`` when that is not the case.

    >>> import os, tempfile
    >>> loop = os.path.join(tempfile.mkdtemp(), "loop")
    >>> os.symlink(loop, loop)
    >>> link_problem(loop).endswith("loop: a symbolic link that loops (it leads back to itself)")
    True
    >>> link_problem(os.devnull) is None
    True
    """
    try:
        if not os.path.islink(path):
            return None
        os.stat(path)
    except FileNotFoundError:
        return f"{safe_text(path)}: a symbolic link to nothing"
    except OSError as exc:
        return _list_error(path, exc).message
    except ValueError:  # a NUL byte
        return None
    return None


def _list_error(path: str, exc: OSError) -> Skipped:
    """What a path that cannot be looked at is skipped as.

    >>> import errno
    >>> _list_error("a", OSError(errno.ELOOP, "Too many levels of symbolic links")).message
    'a: a symbolic link that loops (it leads back to itself)'
    """
    shown = safe_text(path)
    if isinstance(exc, PermissionError):
        return Skipped(path, "permission", f"{shown}: permission denied", True)
    if exc.errno == errno.ELOOP:
        return Skipped(path, "unreadable", f"{shown}: a symbolic link that loops (it leads back to itself)", True)
    return Skipped(path, "unreadable", f"{shown}: cannot list it ({exc.strerror or type(exc).__name__})", True)


def walk(paths: Iterable[str], *, recursive: bool = False, globs: Iterable[str] = (), excludes: Iterable[str] = (),
         hidden: bool = False, seen: dict[tuple[int, int], str] | None = None) -> Iterator[Found | Skipped]:
    """Each file of ``paths`` and of the folders among them (see the module docstring).

    ``seen`` maps the ``(device, inode)`` of each file and folder found to its path; pass the same
    dict to several calls to find each file once across them."""
    globs, excludes = tuple(globs), tuple(excludes)
    if seen is None:
        seen = {}

    def first_time(info: os.stat_result, path: str, what: str) -> Skipped | None:
        key = (info.st_dev, info.st_ino)
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = path
            return None
        return Skipped(path, "seen", f"{safe_text(path)}: the same {what} as {safe_text(earlier)}, counted once")

    for path in paths:
        try:
            info = os.stat(path)
        except FileNotFoundError:
            if os.path.lexists(path):
                yield Skipped(path, "broken-link", f"{safe_text(path)}: a symbolic link to nothing", True)
            else:
                yield Skipped(path, "missing", f"{safe_text(path)}: no such file or folder", True)
            continue
        except OSError as exc:
            yield _list_error(path, exc)
            continue
        if not stat.S_ISDIR(info.st_mode):
            again = first_time(info, path, "file") if stat.S_ISREG(info.st_mode) else None
            yield again or Found(path, info.st_size if stat.S_ISREG(info.st_mode) else None, named=True)
            continue
        again = first_time(info, path, "folder")
        if again is not None:
            yield again
            continue
        yield from _walk_folder(path, info, recursive, globs, excludes, hidden, first_time)


def _walk_folder(top: str, top_info: os.stat_result, recursive: bool, globs: tuple[str, ...],
                 excludes: tuple[str, ...], hidden: bool, first_time) -> Iterator[Found | Skipped]:
    # a stack of (folder path, its path below top, its sorted entries, next index, its (dev, ino))
    ancestors: list[tuple[int, int]] = [(top_info.st_dev, top_info.st_ino)]
    stack: list[tuple[str, str, list[os.DirEntry[str]], int]] = []
    entries = _listing(top)
    if isinstance(entries, Skipped):
        yield entries
        return
    stack.append((top, "", entries, 0))
    while stack:
        folder, below, entries, index = stack[-1]
        if index >= len(entries):
            stack.pop()
            ancestors.pop()
            continue
        stack[-1] = (folder, below, entries, index + 1)
        entry = entries[index]
        name = entry.name
        path = os.path.join(folder, name)
        relative = f"{below}/{name}" if below else name
        if excludes and _matches(excludes, name, relative):
            continue
        if not hidden and name.startswith("."):
            try:
                folder_entry = entry.is_dir()
            except OSError:
                folder_entry = False
            # a hidden file the globs would not keep is not reported
            if folder_entry or not globs or _matches(globs, name, relative):
                yield Skipped(path, "hidden", f"{safe_text(path)}: hidden (--hidden counts it)")
            continue
        try:
            info = entry.stat()  # follows a symbolic link
        except FileNotFoundError:
            yield Skipped(path, "broken-link", f"{safe_text(path)}: a symbolic link to nothing")
            continue
        except OSError as exc:
            yield _list_error(path, exc)
            continue
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            if not recursive:
                yield Skipped(path, "folder", f"{safe_text(path)}: a folder (-r counts the files inside it)")
                continue
            key = (info.st_dev, info.st_ino)
            if key in ancestors:
                yield Skipped(path, "link-loop", f"{safe_text(path)}: a link back to a folder that holds it, skipped")
                continue
            again = first_time(info, path, "folder")
            if again is not None:
                yield again
                continue
            listing = _listing(path)
            if isinstance(listing, Skipped):
                yield listing
                continue
            ancestors.append(key)
            stack.append((path, relative, listing, 0))
            continue
        if not stat.S_ISREG(mode):
            yield Skipped(path, "not-regular", f"{safe_text(path)}: {_kind(mode)}, not read")
            continue
        if globs and not _matches(globs, name, relative):
            continue
        again = first_time(info, path, "file")
        yield again or Found(path, info.st_size)


def _listing(folder: str) -> list[os.DirEntry[str]] | Skipped:
    try:
        with os.scandir(folder) as found:
            entries = list(found)
    except OSError as exc:
        return _list_error(folder, exc)
    entries.sort(key=lambda e: os.fsencode(e.name))
    return entries
