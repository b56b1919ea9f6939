"""The user's text file: how it was opened, how it is saved (atomically, keeping its mode).

Saving never truncates the file first: the text goes to a temporary file in the same folder,
is flushed to disk, and replaces the file in one rename (a full disk leaves the old file whole).
A symlink is followed (its target is replaced, the link stays), and the file keeps its mode.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..core import serialize
from ..core.display import safe_text
from ..core.errors import TokscopeError

class SaveProblem(TokscopeError):
    """The text could not be saved (the message is one line for the user)."""


@dataclass(frozen=True)
class Stamp:
    """What the file looked like when it was opened or last saved (to notice other writers)."""

    mtime_ns: int
    size: int


def stamp_of(path: str | os.PathLike[str]) -> Stamp | None:
    """The file's modification time and size, or None when it does not exist."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None
    return Stamp(st.st_mtime_ns, st.st_size)


def target_of(path: str | os.PathLike[str]) -> Path:
    """Where a save of ``path`` writes: the file a symlink points to, ``~`` expanded."""
    try:
        return Path(os.path.realpath(Path(path).expanduser()))
    except ValueError:  # a NUL in the name (writing it fails with a message)
        return Path(path)


def encode_text(text: str, encoding: str) -> bytes:
    """The bytes a save writes (a character Latin-1 cannot hold is a one-line error).

    >>> encode_text("café", "latin-1"), encode_text("café", "utf-8")
    (b'caf\\xe9', b'caf\\xc3\\xa9')
    """
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise SaveProblem(f"the text has {bad!r} (U+{ord(bad):04X}), which {encoding} cannot hold; "
                          "save it as UTF-8 (Save as…) instead") from None


def save_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Stamp | None:
    """Write ``text`` to ``path`` atomically; returns the new :class:`Stamp`.

    The file keeps its mode (a new file gets the mode a plain write would give it).
    """
    data = encode_text(text, encoding)
    target = target_of(path)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except ValueError:
        raise SaveProblem(f"cannot save {safe_text(target)}: the name holds a NUL character") from None
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    except OSError as exc:
        raise SaveProblem(f"cannot save {target}: {exc.strerror or exc}") from None
    if target.exists() and not target.is_file():
        raise SaveProblem(f"cannot save {target}: it is not a regular file")
    try:
        serialize.write_atomic(target, data)
    except (serialize.SaveError, OSError) as exc:
        raise SaveProblem(str(exc)) from None
    try:
        os.chmod(target, mode)
    except OSError:
        pass
    return stamp_of(target)
