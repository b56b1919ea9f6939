"""Files tokscope reads as data (tokenizer files, model folders' JSON and templates, the hub
cache's refs, its own cache): regular files only, opened without blocking, never read past a limit.

A named pipe would block ``open`` until a writer comes (for ever, in a planted cache); a device
such as ``/dev/zero`` never ends; a sparse file can claim gigabytes. Each is refused with a
one-line :class:`SourceError` that names the file and the limit. The path is checked before it is
opened, opened with ``O_NONBLOCK``, and checked again on the open descriptor (it may have been
swapped in between).

>>> import tempfile, os
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "f.json")
>>> _ = open(path, "w").write("{}")
>>> read_regular(path, 10)
b'{}'
>>> read_regular(path, 1, what="a test file")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
tokscope.sources.errors.SourceError: .../f.json is 2 bytes, over the 1-byte limit for a test file
>>> os.mkfifo(os.path.join(folder, "pipe"))
>>> read_regular(os.path.join(folder, "pipe"), 10)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
tokscope.sources.errors.SourceError: .../pipe is not a regular file (a named pipe): refused
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.text.display import safe_text
from ..inputs.file_kinds import kind_of
from .errors import SourceError


BLOCK = 1 << 20


def _refusal(path: str | os.PathLike, mode: int) -> SourceError:
    return SourceError(f"{safe_text(path)} is not a regular file ({kind_of(mode)}): refused")


def read_regular(path: str | os.PathLike, limit: int, *, what: str = "this file", within: Path | None = None,
                 known: os.stat_result | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them; a :class:`SourceError`
    for anything else (missing, unreadable, a FIFO or device, over the limit, or, with ``within``,
    a link that leads outside that folder). ``known`` is the caller's ``os.stat`` of ``path``
    (the check before the open is then not made again; the open descriptor is still checked)."""
    shown = safe_text(path)
    try:
        before = os.stat(path) if known is None else known
        if not stat.S_ISREG(before.st_mode):
            raise _refusal(path, before.st_mode)
        if within is not None and not is_within(path, within):
            raise SourceError(f"{shown} links outside {safe_text(within)}: refused (only links within it are followed)")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SourceError(f"cannot read {shown}: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL in the path
        raise SourceError(f"cannot read {shown}: {exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refusal(path, info.st_mode)
        if info.st_size > limit:
            raise SourceError(f"{shown} is {info.st_size:,} bytes, over the {limit:,}-byte limit for {what}")
        parts: list[bytes] = []
        got = 0
        # the first read asks for the size the descriptor gave and one byte more, and the read
        # that finds the end for one byte (os.read makes a buffer of the size asked for); a file
        # that says 0 (procfs) or grows is read on by blocks
        ask = info.st_size + 1 if 0 < info.st_size < BLOCK else BLOCK
        while got <= limit:
            block = os.read(fd, min(ask, limit + 1 - got))
            ask = 1 if got == 0 and len(block) == info.st_size else BLOCK
            if not block:
                break
            parts.append(block)
            got += len(block)
        if got > limit:  # it grew while it was read
            raise SourceError(f"{shown} is over the {limit:,}-byte limit for {what}")
        return b"".join(parts)
    except OSError as exc:
        raise SourceError(f"cannot read {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_head(path: str | os.PathLike, size: int) -> bytes:
    """The first ``size`` bytes of the regular file at ``path`` (however large it is), opened
    without blocking; a :class:`SourceError` for anything else (missing, a FIFO or device).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(suffix=".gguf") as f:
    ...     _ = f.write(b"GGUF" + bytes(100)); f.flush()
    ...     read_head(f.name, 4)
    b'GGUF'
    """
    shown = safe_text(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SourceError(f"cannot read {shown}: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL in the path
        raise SourceError(f"cannot read {shown}: {exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _refusal(path, mode)
        return os.read(fd, size)
    except OSError as exc:
        raise SourceError(f"cannot read {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def is_within(path: str | os.PathLike, folder: Path) -> bool:
    """Whether ``path``, with every link followed, lies inside ``folder`` (also followed).

    >>> is_within("/usr/lib", Path("/usr")), is_within("/etc/passwd", Path("/usr"))
    (True, False)
    """
    try:
        real = os.path.realpath(path, strict=True)
        root = os.path.realpath(folder, strict=True)
    except (OSError, ValueError, RuntimeError):
        return False
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)
