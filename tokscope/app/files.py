"""The user's text file: how it was opened, how it is saved (atomically, keeping its mode).

Saving never truncates the file first: the text goes to a temporary file in the same folder,
is flushed to disk, and replaces the file in one rename (a full disk leaves the old file whole).
A symlink is followed (its target is replaced, the link stays), and the file keeps its mode.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.formats import files as core_files
from ..core.text.display import safe_text
from ..core.text.errors import TokscopeError
from ..core.formats.files import FileStamp as Stamp


class SaveProblem(TokscopeError):
    """The text could not be saved (the message is one line for the user)."""


def stamp_of(path: str | os.PathLike[str]) -> Stamp | None:
    """The file's size, modification time and identity, or None when it does not exist."""
    try:
        return core_files.stamp(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None


def target_of(path: str | os.PathLike[str]) -> Path:
    """Where a save of ``path`` writes: the file a symlink points to, ``~`` expanded."""
    try:
        return core_files.resolve(Path(path).expanduser())
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
        raise SaveProblem(f"the text has {safe_text(repr(bad))} (U+{ord(bad):04X}), which {encoding} cannot hold; "
                          "save it as UTF-8 (Save as…) instead") from None


def save_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Stamp | None:
    """Write ``text`` to ``path`` atomically through the core's one save helper
    (:func:`tokscope.core.formats.files.write_atomic`: a temporary file in the same folder, fsync, rename;
    the file keeps its mode, a symlink is followed); returns the new :class:`Stamp`."""
    data = encode_text(text, encoding)
    try:
        written = core_files.write_atomic(target_of(path), data)
    except (core_files.SaveError, OSError, ValueError) as exc:
        raise SaveProblem(str(exc) if isinstance(exc, core_files.SaveError)
                          else f"cannot save {safe_text(os.fspath(path))}: {getattr(exc, 'strerror', None) or exc}") from None
    return stamp_of(written)
