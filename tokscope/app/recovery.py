"""Unsaved edits kept when tokscope is stopped by a signal (SIGTERM, SIGHUP: an SSH drop).

The text goes to a recovery file in the user's state directory (``TOKSCOPE_STATE_DIR``, else
``$XDG_STATE_HOME/tokscope``, else ``~/.local/state/tokscope``), one file per opened file (named by
a hash of its real path; one for text that has no file). The next start of the same file offers
it back and says where it is.
"""

from __future__ import annotations

import hashlib
import json
import os
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


def write(path: str | None, text: str, reason: str) -> Path:
    """Keep ``text`` (the unsaved edits of ``path``); returns the recovery file."""
    target = recovery_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    record = {"format": "tokscope-recovery", "version": 1, "path": key_of(path), "reason": reason,
              "time": time.time(), "text": text}
    serialize.write_atomic(target, json.dumps(record).encode("ascii"))
    return target


def find(path: str | None) -> Recovered | None:
    """The edits kept for ``path``, if any (a file that does not read is ignored)."""
    target = recovery_path(path)
    try:
        record = json.loads(target.read_text("ascii"))
        if record.get("format") != "tokscope-recovery" or record.get("path") != key_of(path):
            return None
        return Recovered(target, record["path"], str(record["text"]), str(record.get("reason", "")),
                         float(record.get("time", 0)))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def discard(path: str | None) -> None:
    try:
        recovery_path(path).unlink()
    except OSError:
        pass
