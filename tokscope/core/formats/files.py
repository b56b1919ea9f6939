"""Writing files safely: the one helper every save in tokscope goes through.

:func:`write_atomic` writes to a temporary file in the target's own folder, flushes it to disk
(``fsync``), then renames it over the target, so the target always holds either its old contents
or the new ones, never half of them: a full disk, a crash, a signal or a kill in the middle leaves
the old file as it was and no temporary file behind (the temporary file is removed on every path
Python still runs). It also

* follows a symbolic link and replaces the file it points to (the link stays a link);
* keeps an existing file's permission bits, and gives a new file the mode a plain ``open(path,
  "w")`` would (``0o666`` less the umask), unless a ``mode`` is asked for;
* refuses targets that are not regular files (a directory, a device, a FIFO, a socket), and
  targets that exist when asked to create the file ``exclusive``-ly: then two processes saving
  the same new name at once cannot both succeed (a hard link, which fails if the name exists,
  publishes the file; file systems without hard links reserve the name with ``O_EXCL``);
* with ``expect``, refuses to replace a file that changed on disk since it was read
  (:class:`ChangedOnDiskError`; compare :func:`stamp`).

:func:`check_target` runs the same checks before long work (training), so a bad output path is
reported at once, not after the work. :func:`save_text` saves a user's text.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> path = write_atomic(folder / "notes.txt", b"first")
>>> _ = write_atomic(folder / "notes.txt", b"second")
>>> path.read_bytes(), sorted(p.name for p in folder.iterdir())
(b'second', ['notes.txt'])
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..text.display import safe_text
from ..text.errors import TokscopeError

#: the mode of a new file before the umask, as ``open(path, "w")`` creates it
NEW_FILE_MODE = 0o666
#: errors of ``os.link`` that mean "this file system has no hard links", not "the name exists"
_NO_LINKS = {errno.EPERM, errno.EACCES, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}


class SaveError(TokscopeError):
    """A file that cannot be written (one-line message naming it, safe to print)."""

    def __init__(self, message: str, *, path: str | os.PathLike[str] | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.path = None if path is None else str(path)
        self.reason = reason


class ExistsError(SaveError):
    """The target exists, and the caller asked not to replace it."""


class ChangedOnDiskError(SaveError):
    """The target changed on disk since it was read (another program wrote it)."""


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What identifies one version of a file: size, modification time, inode and device."""

    size: int
    mtime_ns: int
    inode: int
    device: int


def stamp(path: str | os.PathLike[str]) -> FileStamp | None:
    """The file's current :class:`FileStamp` (through symbolic links); ``None`` if it is missing."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return FileStamp(info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)


def _shown(path: str | os.PathLike[str]) -> str:
    return safe_text(os.fspath(path))


def _fail(path: str | os.PathLike[str], reason: str, kind: type[SaveError] = SaveError) -> SaveError:
    return kind(f"cannot write {_shown(path)}: {reason}", path=path, reason=reason)


def _reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or exc.__class__.__name__


def resolve(path: str | os.PathLike[str]) -> Path:
    """The file a save of ``path`` writes: the target of a symbolic link (even a dangling one),
    else ``path`` itself (made absolute)."""
    return Path(os.path.realpath(os.fspath(path)))


def _folder_problem(folder: Path) -> str | None:
    if not folder.exists():
        return f"folder {_shown(folder)} does not exist"
    if not folder.is_dir():
        return f"{_shown(folder)} is not a folder"
    return None


def _existing(target: Path, shown_as: str | os.PathLike[str]) -> os.stat_result | None:
    """The target's status when it exists; :class:`SaveError` when it is not a regular file."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise _fail(shown_as, f"{_shown(target.parent)} is not a folder") from None
    except OSError as exc:
        raise _fail(shown_as, _reason(exc)) from None
    if stat.S_ISDIR(info.st_mode):
        raise _fail(shown_as, "it is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise _fail(shown_as, "it is not a regular file (a device, a FIFO or a socket)")
    return info


def _same_file(target: Path, info: os.stat_result, inputs: Iterable[str | os.PathLike[str]]) -> str | None:
    for item in inputs:
        try:
            other = os.stat(item)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
            return os.fspath(item)
    return None


def check_target(path: str | os.PathLike[str], *, overwrite: bool = True,
                 inputs: Iterable[str | os.PathLike[str]] = (), force_hint: str = "--force") -> Path:
    """Check now that ``path`` can be written, before long work: the folder exists and takes new
    files (a temporary file is made and removed; ``path`` itself is not touched), the target is a
    regular file or missing, it is none of ``inputs`` (the same file through any name or link), and
    it does not exist unless ``overwrite``. Returns the file a save will write (see :func:`resolve`).
    """
    target = resolve(path)
    info = _existing(target, path)
    if info is not None:
        same = _same_file(target, info, inputs)
        if same is not None:
            raise _fail(path, f"it is the input {_shown(same)}; choose another output", SaveError)
        if not overwrite:
            raise _fail(path, f"it exists; pass {force_hint} to replace it", ExistsError)
    fd, tmp = _temp_file(target, path)
    os.close(fd)
    os.unlink(tmp)
    if info is not None and not os.access(target, os.W_OK):
        raise _fail(path, "permission denied")
    return target


def _temp_file(target: Path, shown_as: str | os.PathLike[str], mode: int = NEW_FILE_MODE) -> tuple[int, str]:
    """A new temporary file next to ``target`` (same file system, so the rename is atomic),
    created with ``mode`` less the umask, as a plain write would create ``target``."""
    folder = target.parent
    problem = _folder_problem(folder)
    if problem is not None:
        raise _fail(shown_as, problem)
    for _ in range(100):
        tmp = folder / f".{target.name[:200]}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _fail(shown_as, _reason(exc) if isinstance(exc, PermissionError)
                        else f"cannot create files in {_shown(folder)} ({_reason(exc)})") from None
        return fd, str(tmp)
    raise _fail(shown_as, f"cannot create a temporary file in {_shown(folder)}")  # pragma: no cover


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _publish_exclusive(tmp: str, target: Path, shown_as: str | os.PathLike[str], force_hint: str) -> None:
    """Give the finished temporary file the target's name only if no file has it yet."""
    exists = _fail(shown_as, f"it exists; pass {force_hint} to replace it", ExistsError)
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise exists from None
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        # no hard links here: reserve the name (fails if it exists), then rename over it
        try:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            raise exists from None
        os.replace(tmp, target)
        return
    os.unlink(tmp)


def write_atomic(path: str | os.PathLike[str], data: bytes, *, exclusive: bool = False, mode: int | None = None,
                 expect: FileStamp | None = None, force_hint: str = "--force") -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring); returns the file written.

    ``exclusive``: fail with :class:`ExistsError` if the file exists (checked when the file is
    published, so a file that appeared during the write is not replaced). ``mode``: the new
    file's permission bits (default: an existing file's, else what a plain write would give).
    ``expect``: the :class:`FileStamp` the file had when it was read; a file that changed since
    raises :class:`ChangedOnDiskError` (``None`` skips the check). Any failure is a one-line :class:`SaveError` and leaves the old
    file untouched.
    """
    target = resolve(path)
    info = _existing(target, path)
    if info is not None and exclusive:
        raise _fail(path, f"it exists; pass {force_hint} to replace it", ExistsError)
    fd, tmp = _temp_file(target, path)
    published = False
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            elif info is not None:
                os.fchmod(fd, stat.S_IMODE(info.st_mode))
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if exclusive:
            _publish_exclusive(tmp, target, path, force_hint)
        else:
            if expect is not None and stamp(target) != expect:
                raise _fail(path, "it changed on disk since it was opened", ChangedOnDiskError)
            os.replace(tmp, target)
        published = True
        _fsync_folder(target.parent)
    except OSError as exc:
        raise _fail(path, _reason(exc)) from None
    finally:
        if not published:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return target


def save_text(path: str | os.PathLike[str], text: str, *, expect: FileStamp | None = None,
              exclusive: bool = False) -> FileStamp:
    """Save a user's text as UTF-8 through :func:`write_atomic`; returns the saved file's
    :class:`FileStamp` (keep it and pass it as ``expect`` to the next save, to be told when
    another program changed the file in between).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> first = save_text(path, "héllo")
    >>> _ = save_text(path, "again", expect=first)
    >>> save_text(path, "lost?", expect=first)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tokscope.core.formats.files.ChangedOnDiskError: cannot write ... it changed on disk since it was opened
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail(path, f"the text holds a lone surrogate (U+{ord(text[exc.start]):04X}) at offset "
                          f"{exc.start}, which UTF-8 cannot store") from None
    written = write_atomic(path, data, expect=expect, exclusive=exclusive)
    result = stamp(written)
    assert result is not None
    return result
