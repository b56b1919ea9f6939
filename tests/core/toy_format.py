"""A toy tokenizer file format, in one module: the first line ``TOYTOK v1``, then the alphabet of
the toy kind of ``test_toy_kind.py`` (one piece per character). It is known to tokscope by one row
of the sniffing table, :data:`ROW` (``tokscope.core.formats.sniff.FORMATS``), which a test adds."""

from __future__ import annotations

from test_toy_kind import ALPHABET, toy

from tokscope.core.formats.sniff import FileFormat
from tokscope.core.text.errors import TokenizerFileError
from tokscope.core.tokenizer.tokenizer import Tokenizer

MAGIC = b"TOYTOK v1\n"


def looks_like(head: bytes) -> bool:
    return head.startswith(MAGIC)


def dump() -> bytes:
    return MAGIC + ALPHABET.encode().replace(b"\n", b"\\n") + b"\n"


def load(data: bytes, name: str, source: str) -> Tokenizer:
    body = data[len(MAGIC):].rstrip(b"\n").replace(b"\\n", b"\n")
    if body != ALPHABET.encode():
        raise TokenizerFileError(f"{source}: not the toy alphabet")
    tokenizer = toy()
    tokenizer.name = name
    return tokenizer


ROW = FileFormat("toy", ("tokenizer.toy",), looks_like, load)
