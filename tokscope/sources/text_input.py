"""Where a text comes from: files and standard input, read with a size limit and checked as UTF-8.

The command line and the explorer read their input here, so both refuse the same files with the
same one-line messages (:class:`InputError`).
"""

from __future__ import annotations

import os
import sys

from ..core.errors import TokscopeError

#: Inputs larger than this are refused unless ``--max-bytes`` raises the limit.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


class InputError(TokscopeError):
    """Input that cannot be read as text."""


def decode_input(data: bytes, where: str, errors: str = "strict") -> str:
    """Decode UTF-8 input; name the first bad byte's offset when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if errors == "replace":
            return data.decode("utf-8", errors="replace")
        kind = "a binary file" if b"\x00" in data[:8192] else "not valid UTF-8"
        raise InputError(
            f"{where} is {kind}: byte 0x{data[exc.start]:02x} at offset {exc.start} does not decode "
            f"(use --errors replace to read it anyway)"
        ) from None


def read_bytes_limited(path: str, limit: int) -> bytes:
    try:
        size = os.path.getsize(path)
        if size > limit:
            raise InputError(f"{path} is {size:,} bytes, over the {limit:,}-byte limit (raise it with --max-bytes)")
        with open(path, "rb") as handle:
            return handle.read(limit + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None


def read_stdin(limit: int, errors: str = "strict") -> str:
    """Standard input as text, refused over ``limit`` bytes."""
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"standard input is over the {limit:,}-byte limit (raise it with --max-bytes)")
    return decode_input(data, "standard input", errors)
