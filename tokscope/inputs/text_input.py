"""Where a text comes from: files, standard input and command-line arguments, read with a size
limit and checked as UTF-8.

The one place tokscope reads a user's text, for the command line and the explorer alike, so both
refuse the same input with the same one-line message. A refusal is an :class:`InputError` whose
fields say what a dialog needs to offer a way on (open the head, open with U+FFFD) without reading
the input again, which standard input would not allow::

    try:
        got = read_input(path, limit=limit)
    except InputError as exc:
        if exc.can_head:           # over the limit: the first `limit` bytes are at hand
            got = exc.accept(head=True)           # may raise again: the head may not be UTF-8
        elif exc.can_replace:      # not UTF-8 (exc.offset, exc.byte name the first bad byte)
            got = exc.accept(errors="replace")
    got.text, got.path, got.replaced, got.head

The limit holds for every kind of input, whatever its size claims: standard input, pipes, FIFOs,
``/proc`` files and files that grow while they are read are read in blocks and stopped one byte
past the limit, and never more than that is held in memory.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from typing import Any, BinaryIO, NamedTuple

from ..core.text.display import safe_text
from ..core.text.errors import TokscopeError

#: Inputs larger than this are refused unless ``--max-bytes`` raises the limit.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: The explorer's own limit when the user gave none (a bigger text is offered by its head).
EXPLORER_MAX_BYTES = 8 * 1024 * 1024
#: A limit above this is no limit (Python cannot hold more in one string anyway).
UNLIMITED = sys.maxsize
#: Input is read in blocks of this many bytes, so a huge limit costs nothing until data comes.
BLOCK = 1 << 20
#: The binary check looks for a NUL byte in this many leading bytes.
SNIFF = 8192

STDIN = "standard input"


class InputText(NamedTuple):
    """A text as it was read: ``where`` names it for messages (a path or ``standard input``,
    not escaped: pass it through :func:`~tokscope.core.text.display.safe_text` to show it); ``path``
    is the file (``None`` for standard input and arguments); ``size`` the bytes read.
    ``replaced``: bytes that were not UTF-8 became U+FFFD; ``head``: only the first bytes (up to
    the limit, cut back to a whole character). A text with either must not be saved over the
    original file."""

    text: str
    where: str
    path: str | None
    size: int
    replaced: bool = False
    head: bool = False


class InputError(TokscopeError):
    """Input that cannot be read as text; ``str(exc)`` is one line, safe to print.

    ``kind`` is one of ``missing``, ``directory``, ``permission``, ``unreadable``, ``closed``
    (no standard input), ``too-large``, ``binary`` (not UTF-8, with a NUL byte near the start),
    ``not-utf8``, ``empty`` (a corpus with no text), or ``not-json`` (:func:`read_json`). ``where``/``path`` name the input as :class:`InputText` does; ``limit`` is the
    size limit; ``size`` the bytes read so far (at least ``limit + 1`` for ``too-large``; for a
    regular file its size on disk when that is known); ``offset`` and ``byte`` the first byte that
    does not decode. ``data`` holds what was read (at most ``limit + 1`` bytes) when
    :meth:`accept` can go on from it.
    """

    def __init__(self, message: str, *, kind: str = "other", where: str = "", path: str | None = None, limit: int | None = None,
                 size: int | None = None, offset: int | None = None, byte: int | None = None,
                 data: bytes | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.where = where
        self.path = path
        self.limit = limit
        self.size = size
        self.offset = offset
        self.byte = byte
        self.data = data

    @property
    def can_head(self) -> bool:
        """Over the limit, with the first bytes at hand: ``accept(head=True)`` opens them."""
        return self.kind == "too-large" and self.data is not None and self.limit is not None

    @property
    def can_replace(self) -> bool:
        """Not UTF-8: ``accept(errors="replace")`` opens it with U+FFFD for the bad bytes."""
        return self.kind in ("binary", "not-utf8") and self.data is not None

    def accept(self, *, head: bool = False, errors: str = "strict") -> InputText:
        """Go on with what was read: its head (``too-large``) and/or with replacements. Raises a
        new :class:`InputError` when that is still not enough (a head that is not UTF-8)."""
        if self.data is None:
            raise self
        data = self.data
        cut = False
        if self.kind == "too-large":
            if not head or self.limit is None:
                raise self
            data, cut = head_cut(data, self.limit), True
        elif errors != "replace":
            raise self
        return decode_input(data, self.where, errors, path=self.path, limit=self.limit, head=cut)


# ----- the limit ----------------------------------------------------------------------------------


def parse_max_bytes(value: str) -> int:
    """A ``--max-bytes`` value: a whole number of bytes >= 0 (``_`` allowed between digits); any
    number above :data:`UNLIMITED` means no limit. ``ValueError`` with a one-line message else
    (argparse shows it).

    >>> parse_max_bytes("1_000"), parse_max_bytes(str(10**30)) == UNLIMITED
    (1000, True)
    >>> parse_max_bytes("-1")
    Traceback (most recent call last):
    ...
    ValueError: --max-bytes must be 0 or more, not '-1'
    """
    text = value.strip().replace("_", "")
    if not (text.isascii() and text.lstrip("-+").isdigit()):
        raise ValueError(f"--max-bytes takes a whole number of bytes, not {safe_text(value)!r}")
    if text.startswith("-"):
        raise ValueError(f"--max-bytes must be 0 or more, not {safe_text(value)!r}")
    if len(text) > 19:  # beyond any size a file or a string can have
        return UNLIMITED
    return min(int(text), UNLIMITED)


def check_limit(limit: int) -> int:
    """``limit`` as a number of bytes, or ``ValueError`` (negative, not a whole number)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"the size limit must be a whole number of bytes >= 0, not {limit!r}")
    return min(limit, UNLIMITED)


def head_cut(data: bytes, limit: int) -> bytes:
    """The first ``limit`` bytes, cut back to a whole UTF-8 character.

    >>> head_cut("aé".encode(), 2), head_cut("a👍b".encode(), 4), head_cut(b"abc", 5)
    (b'a', b'a', b'abc')
    """
    cut = data[:limit]
    i = len(cut)
    while i > 0 and 0x80 <= cut[i - 1] < 0xC0 and len(cut) - i < 3:
        i -= 1
    if i > 0 and cut[i - 1] >= 0xC0:
        need = 2 if cut[i - 1] < 0xE0 else 3 if cut[i - 1] < 0xF0 else 4
        if len(cut) - (i - 1) < need:
            return cut[: i - 1]
    return cut


# ----- reading ------------------------------------------------------------------------------------


def _read_limited(stream: BinaryIO, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``stream``, read in blocks (never a buffer of ``limit``)."""
    parts: list[bytes] = []
    got = 0
    while got <= limit:
        block = stream.read(min(BLOCK, limit + 1 - got))
        if not block:
            break
        parts.append(block)
        got += len(block)
    return b"".join(parts)


def _too_large(where: str, path: str | None, limit: int, data: bytes | None, size: int | None) -> InputError:
    if size is not None and size > limit:
        amount = f"{size:,} bytes"
    else:
        amount = f"more than {limit:,} bytes"
    return InputError(
        f"{safe_text(where)} is {amount}, over the {limit:,}-byte limit (raise it with --max-bytes)",
        kind="too-large", where=where, path=path, limit=limit, size=max(size or 0, len(data or b"")), data=data,
    )


def _os_error(exc: OSError, where: str, path: str | None) -> InputError:
    shown = safe_text(where)
    if isinstance(exc, FileNotFoundError):
        return InputError(f"{shown}: no such file", kind="missing", where=where, path=path)
    if isinstance(exc, IsADirectoryError):
        return InputError(f"{shown} is a directory, not a file", kind="directory", where=where, path=path)
    if isinstance(exc, PermissionError):
        return InputError(f"{shown}: permission denied", kind="permission", where=where, path=path)
    reason = exc.strerror or exc.__class__.__name__
    return InputError(f"{shown}: cannot read it ({reason})", kind="unreadable", where=where, path=path)


def _not_regular(path: str, mode: int) -> InputError:
    from .file_kinds import kind_of

    return InputError(f"{safe_text(path)} is not a regular file ({kind_of(mode)}): refused", kind="unreadable",
                      where=path, path=path)


def read_file_bytes(path: str, limit: int = DEFAULT_MAX_BYTES, *, keep_head: bool = True,
                    regular_only: bool = False) -> bytes:
    """The bytes of the file at ``path``; :class:`InputError` when it cannot be read or holds
    more than ``limit`` bytes (whatever its size says: FIFOs and ``/proc`` files say 0).

    ``keep_head``: a regular file whose size is over the limit is still read up to the limit, so
    the error can offer its head (:meth:`InputError.accept`); without it, it is refused unread.
    ``regular_only``: refuse a named pipe or device before opening it (and open without blocking),
    for the explorer, which must never wait on a pipe with no writer."""
    limit = check_limit(limit)
    try:
        if regular_only:
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                raise _not_regular(path, mode)
        flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
        with (os.fdopen(os.open(path, flags), "rb") if regular_only else open(path, "rb")) as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(path)
            if regular_only and not stat.S_ISREG(info.st_mode):
                raise _not_regular(path, info.st_mode)
            size = info.st_size if stat.S_ISREG(info.st_mode) else None
            if size is not None and size > limit:
                head = _read_limited(handle, limit) if keep_head else None
                raise _too_large(path, path, limit, head, size)
            data = _read_limited(handle, limit)
    except OSError as exc:
        raise _os_error(exc, path, path) from None
    if len(data) > limit:
        raise _too_large(path, path, limit, data, size)
    return data


def read_stream_bytes(stream: BinaryIO | None, limit: int = DEFAULT_MAX_BYTES, where: str = STDIN) -> bytes:
    """At most ``limit`` bytes of a binary stream (standard input's ``buffer``)."""
    limit = check_limit(limit)
    if stream is None:
        raise InputError(f"{where} is closed", kind="closed", where=where)
    try:
        data = _read_limited(stream, limit)
    except OSError as exc:
        raise _os_error(exc, where, None) from None
    except ValueError:  # a closed file object
        raise InputError(f"{where} is closed", kind="closed", where=where) from None
    if len(data) > limit:
        raise _too_large(where, None, limit, data, None)
    return data


def stdin_bytes_stream() -> BinaryIO | None:
    """Standard input as a binary stream (``None`` when the process has none)."""
    stdin = sys.stdin
    if stdin is None:
        return None
    return getattr(stdin, "buffer", None)


def decode_input(data: bytes, where: str, errors: str = "strict", *, path: str | None = None,
                 limit: int | None = None, head: bool = False) -> InputText:
    """Decode UTF-8 input; :class:`InputError` naming the first bad byte's offset when it is not
    UTF-8 (unless ``errors="replace"``).

    >>> decode_input(b"caf\\xc3\\xa9", "x").text
    'café'
    >>> decode_input(b"caf\\xe9", "x")
    Traceback (most recent call last):
    ...
    tokscope.inputs.text_input.InputError: x is not valid UTF-8: byte 0xe9 at offset 3 does not decode (use --errors replace to read it anyway)
    """
    try:
        return InputText(data.decode("utf-8"), where, path, len(data), head=head)
    except UnicodeDecodeError as exc:
        if errors == "replace":
            return InputText(data.decode("utf-8", errors="replace"), where, path, len(data), replaced=True, head=head)
        binary = b"\x00" in data[:SNIFF]
        kind = "binary" if binary else "not-utf8"
        what = "a binary file" if binary else "not valid UTF-8"
        raise InputError(
            f"{safe_text(where)} is {what}: byte 0x{data[exc.start]:02x} at offset {exc.start} does not decode "
            f"(use --errors replace to read it anyway)",
            kind=kind, where=where, path=path, limit=limit, size=len(data), offset=exc.start, byte=data[exc.start],
            data=data,
        ) from None


def read_input(source: str | None, *, limit: int = DEFAULT_MAX_BYTES, errors: str = "strict",
               stdin: BinaryIO | None = None, keep_head: bool = True, regular_only: bool = False) -> InputText:
    """The text of a file, or of standard input when ``source`` is ``None`` or ``-``.

    ``stdin`` is the binary stream to read for standard input (default: ``sys.stdin.buffer``).
    Raises :class:`InputError`; see the module docstring for going on from one (``keep_head=False``
    refuses a file over the limit without reading it, for callers that will not offer its head).
    """
    limit = check_limit(limit)
    if source is None or source == "-":
        stream = stdin if stdin is not None else stdin_bytes_stream()
        return decode_input(read_stream_bytes(stream, limit), STDIN, errors, limit=limit)
    return decode_input(read_file_bytes(source, limit, keep_head=keep_head, regular_only=regular_only), source, errors,
                        path=source, limit=limit)


def read_json(source: str | None, what: str, *, limit: int = DEFAULT_MAX_BYTES, stdin: BinaryIO | None = None,
              regular_only: bool = False) -> Any:
    """The JSON data of a file (or standard input), read as :func:`read_input` reads text: ``what``
    names it in the one-line :class:`InputError` (kind ``not-json`` when it does not parse).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write("[1, 2")
    >>> read_json(f.name, "the conversation")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tokscope.inputs.text_input.InputError: the conversation /... is not valid JSON (Expecting ',' delimiter: line 1 column 6 (char 5))
    """
    read = read_input(source, limit=limit, keep_head=False, stdin=stdin, regular_only=regular_only)
    where = safe_text(read.where)
    try:
        return json.loads(read.text.removeprefix("\ufeff"))  # a BOM, as editors on Windows write it
    except RecursionError:
        raise InputError(f"{what} {where} nests too deeply", kind="not-json", where=read.where, path=read.path) from None
    except ValueError as exc:
        raise InputError(f"{what} {where} is not valid JSON ({exc})", kind="not-json", where=read.where,
                         path=read.path) from None


def decode_argument(text: str, what: str = "TEXT", errors: str = "strict") -> str:
    """A text given on the command line, checked as UTF-8 the way a file is.

    Python hands bytes of an argument that are not UTF-8 over as lone surrogates
    (``surrogateescape``); they are refused with the offset of the first one, or replaced with
    U+FFFD with ``errors="replace"``.

    >>> decode_argument("café")
    'café'
    >>> decode_argument("caf\\udce9", errors="replace")
    'caf\\ufffd'
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    data = text.encode("utf-8", "surrogateescape") if _escaped_only(text) else text.encode("utf-8", "surrogatepass")
    return decode_input(data, what, errors).text


def _escaped_only(text: str) -> bool:
    return all(not ("\ud800" <= ch <= "\udfff") or "\udc80" <= ch <= "\udcff" for ch in text)


# ----- reading a prefix at a time -----------------------------------------------------------------

#: the first block :class:`PrefixReader` reads; each next one is as large as all read before it
FIRST_BLOCK = 1 << 16


class PrefixReader:
    """A text read a growing prefix at a time, for a caller that may need only its head
    (``truncate``): each :meth:`read` returns the text of the next block (:data:`FIRST_BLOCK`
    bytes, then as many as all read so far), ``""`` at the end. The same checks as
    :func:`read_input`, on what is read: :class:`InputError` when more than ``limit`` bytes would
    be read, or a byte read does not decode (``errors="strict"``). A pipe that has given some text
    and has no more ready yet returns what it has rather than waiting for a whole block.

    >>> import io
    >>> reader = PrefixReader(None, stdin=io.BytesIO("a€b".encode()))
    >>> reader.read(), reader.read(), reader.size
    ('a€b', '', 5)
    """

    def __init__(self, source: str | None, *, limit: int = DEFAULT_MAX_BYTES, errors: str = "strict",
                 stdin: BinaryIO | None = None) -> None:
        import codecs

        self.limit = check_limit(limit)
        self.errors = errors
        self.size = 0
        self._raw: list[bytes] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace" if errors == "replace" else "strict")
        self._fd: int | None = None
        self._stream: BinaryIO | None = None
        self._done = False
        self._file_size: int | None = None
        if source is None or source == "-":
            self.where, self.path = STDIN, None
            self._stream = stdin if stdin is not None else stdin_bytes_stream()
            if self._stream is None:
                raise InputError(f"{STDIN} is closed", kind="closed", where=STDIN)
            return
        self.where, self.path = source, source
        try:
            fd = os.open(source, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise _os_error(exc, source, source) from None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(source)
            self._file_size = info.st_size if stat.S_ISREG(info.st_mode) else None
        except OSError as exc:
            os.close(fd)
            raise _os_error(exc, source, source) from None
        self._fd = fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> PrefixReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ready(self) -> bool:
        """Whether more bytes can be read now without waiting (always, where that cannot be asked)."""
        import select

        try:
            fd = self._fd if self._fd is not None else self._stream.fileno()  # type: ignore[union-attr]
            return bool(select.select([fd], [], [], 0)[0])
        except (OSError, ValueError, AttributeError, TypeError):  # io.UnsupportedOperation is both of the first two
            return True

    def _read_block(self, want: int) -> bytes:
        parts: list[bytes] = []
        got = 0
        while got < want:
            if got and not self._ready():
                break
            try:
                if self._fd is not None:
                    block = os.read(self._fd, min(want - got, BLOCK))
                else:
                    stream = self._stream
                    read = getattr(stream, "read1", None) or stream.read  # type: ignore[union-attr]
                    block = read(min(want - got, BLOCK))
            except OSError as exc:
                raise _os_error(exc, self.where, self.path) from None
            except ValueError:  # a closed file object
                raise InputError(f"{self.where} is closed", kind="closed", where=self.where) from None
            if not block:
                self._done = True
                break
            parts.append(block)
            got += len(block)
        return b"".join(parts)

    def read(self) -> str:
        """The text of the next block (at least one character), or ``""`` at the end."""
        while not self._done:
            # up to the limit; one byte past it only when more is asked for there
            want = min(max(FIRST_BLOCK, self.size), self.limit - self.size) or 1
            data = self._read_block(want)
            if not data:
                break
            self.size += len(data)
            if self.size > self.limit:
                raise _too_large(self.where, self.path, self.limit, None, self._file_size)
            self._raw.append(data)
            text = self._decode(data, final=False)
            if text:
                return text
        return self._decode(b"", final=True)

    def _decode(self, data: bytes, final: bool) -> str:
        try:
            return self._decoder.decode(data, final)
        except UnicodeDecodeError:
            # the message names the first bad byte as reading the whole input would (it is in what was read)
            decode_input(b"".join(self._raw), self.where, self.errors, path=self.path, limit=self.limit)
            raise  # not reached: the bytes read do not decode
