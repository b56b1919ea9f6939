"""Unsaved edits kept when tokscope is stopped by a signal (SIGTERM, SIGHUP: an SSH drop).

The text goes to a recovery file in the user's state directory (``TOKSCOPE_STATE_DIR``, else
``$XDG_STATE_HOME/tokscope``, else ``~/.local/state/tokscope``), one file per opened file (named by
a hash of its real path; one for text that has no file). The next start of the same file offers
it back and says where it is.

The copy is as private as the text may be: the file is ``0600`` in a ``0700`` folder, and a
recovery file that another user owns or could have written (or that is not a regular file) is
never offered back.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.formats import saved as serialize

#: the key of text that has no file (the sample, standard input)
UNTITLED = "(no file)"


def state_dir() -> Path:
    if os.environ.get("TOKSCOPE_STATE_DIR"):
        return Path(os.environ["TOKSCOPE_STATE_DIR"])
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "tokscope"


def key_of(path: str | None) -> str:
    if not path:
        return UNTITLED
    try:
        return os.path.realpath(os.path.expanduser(path))
    except ValueError:  # a NUL in the name: no such file can exist
        return path


def recovery_path(path: str | None) -> Path:
    """The recovery file for the text of ``path`` (None: text without a file)."""
    digest = hashlib.sha256(key_of(path).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return state_dir() / "recovery" / f"{digest}.json"


@dataclass(frozen=True)
class Recovered:
    """Edits found in a recovery file."""

    file: Path  #: the recovery file
    path: str  #: the file the edits belong to (or :data:`UNTITLED`)
    text: str
    reason: str  #: what stopped tokscope (``SIGTERM``, ``SIGHUP``)
    when: float  #: seconds since the epoch


#: a recovery file larger than this is not read (the explorer opens at most a few megabytes)
MAX_RECOVERY_BYTES = 512 * 1024 * 1024


def _trusted(info: os.stat_result, kind: int = stat.S_IFREG) -> bool:
    """This user's, of the right kind, and writable by nobody else."""
    if stat.S_IFMT(info.st_mode) != kind or info.st_mode & 0o022:
        return False
    return not hasattr(os, "getuid") or info.st_uid == os.getuid()


def _private_folder(folder: Path) -> None:
    """``folder`` made (``0700``) or checked: this user's and closed to others, else ``OSError``."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.stat(folder, follow_symlinks=False)
    if stat.S_ISDIR(info.st_mode) and (not hasattr(os, "getuid") or info.st_uid == os.getuid()):
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.chmod(folder, 0o700)
        return
    raise PermissionError(f"{folder} is not a folder of this user's")


def write(path: str | None, text: str, reason: str) -> Path:
    """Keep ``text`` (the unsaved edits of ``path``); returns the recovery file (``0600``)."""
    target = recovery_path(path)
    _private_folder(target.parent)
    try:
        info = os.stat(target, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and not _trusted(info):
        target.unlink()  # not ours to update (a link, another user's): replaced, never followed
    record = {"format": "tokscope-recovery", "version": 1, "path": key_of(path), "reason": reason,
              "time": time.time(), "text": text}
    serialize.write_atomic(target, json.dumps(record).encode("ascii"), mode=0o600)
    return target


def _read_private(target: Path) -> bytes | None:
    """The bytes of a recovery file this user owns and only this user can write (else None)."""
    try:
        if not _trusted(os.stat(target, follow_symlinks=False)):
            return None
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not _trusted(info) or info.st_size > MAX_RECOVERY_BYTES:
            return None
        return handle.read(MAX_RECOVERY_BYTES + 1)


def find(path: str | None) -> Recovered | None:
    """The edits kept for ``path``, if any (a file that does not read, or that is not private to
    this user, is ignored)."""
    target = recovery_path(path)
    try:
        data = _read_private(target)
        if data is None:
            return None
        record = json.loads(data.decode("ascii"))
        if record.get("format") != "tokscope-recovery" or record.get("path") != key_of(path):
            return None
        return Recovered(target, record["path"], str(record["text"]), str(record.get("reason", "")),
                         float(record.get("time", 0)))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, UnicodeError):
        return None


def discard(path: str | None) -> None:
    try:
        recovery_path(path).unlink()
    except OSError:
        pass
