"""The one table of tokenizer file formats: the names a model folder holds each under, and how its
first bytes look. Every place that looks for or recognises a tokenizer file asks this table (a
model folder's file, the hub cache's snapshots, ``-e PATH``).

A new format is a module in this folder with a ``looks_like(head: bytes) -> bool`` and a
``load(data: bytes, name: str, source: str) -> Tokenizer``, and one row in :data:`FORMATS` (a test
adds a toy format this way: ``tests/core/toy_format.py``). JSON formats share the ``json`` row: their
object tells them apart (:func:`tokscope.core.formats.tokenizer_json.looks_like`,
:func:`tokscope.core.formats.tekken.looks_like`); the ``json`` and ``ranks`` rows have no ``load``
because :mod:`tokscope.sources.model_files` reads them (a rank file is matched to a known model by
its sha256).

>>> sniff(b'{"model": {}}'), sniff(b"IQ== 0\\nIg== 1\\n"), sniff(b"\\x00\\x01"), sniff(b"GGUF\\x03\\x00\\x00\\x00")
('json', 'ranks', None, 'gguf')
>>> FOLDER_FILES  # doctest: +NORMALIZE_WHITESPACE
('tokenizer.json', 'tekken.json', 'tokenizer.model', 'tokenizer.tiktoken', 'spiece.model', 'spm.model',
 'sentencepiece.bpe.model')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tokenizer.tokenizer import Tokenizer

from . import gguf

#: how many bytes of a file :func:`sniff` looks at
HEAD_BYTES = 4096


@dataclass(frozen=True, slots=True)
class FileFormat:
    """A tokenizer file format: its name, the file names a model folder holds it under (in the
    order a folder's files are preferred), a test of the file's first :data:`HEAD_BYTES`, and the
    reader of the whole file's bytes (``load(data, name, source)``), when the core reads it alone."""

    name: str
    file_names: tuple[str, ...]
    looks_like: Callable[[bytes], bool]
    load: Callable[[bytes, str, str], Tokenizer] | None = None


def json_looks_like(head: bytes) -> bool:
    """A JSON document (after a byte-order mark and white space): an object or an array."""
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"{", b"["))


def ranks_looks_like(head: bytes) -> bool:
    """tiktoken's rank format: ``base64-token rank`` on the first line."""
    first = head.split(b"\n", 1)[0].split()
    return len(first) == 2 and first[1].isdigit()


def spm_looks_like(head: bytes) -> bool:
    """SentencePiece's protobuf (:func:`.sentencepiece_model.looks_like`; that module, and the models
    it builds, are imported when a file is tested, not when this table is)."""
    from . import sentencepiece_model

    return sentencepiece_model.looks_like(head)


def spm_load(data: bytes, name: str, source: str) -> Tokenizer:
    """:func:`.sentencepiece_model.from_model_bytes`, imported when a file is read."""
    from . import sentencepiece_model

    return sentencepiece_model.from_model_bytes(data, name, source)


#: the formats, in the order they are tried
FORMATS: tuple[FileFormat, ...] = (
    # GGUF (llama.cpp) files have no fixed name: a folder's one ``*.gguf`` is found by its magic
    FileFormat("gguf", (), gguf.looks_like),
    FileFormat("json", ("tokenizer.json", "tekken.json"), json_looks_like),
    FileFormat("ranks", ("tokenizer.model", "tokenizer.tiktoken"), ranks_looks_like),
    # SentencePiece's protobuf (T5's spiece.model, DeBERTa's spm.model, Llama 2's tokenizer.model)
    FileFormat("spm", ("tokenizer.model", "spiece.model", "spm.model", "sentencepiece.bpe.model"),
               spm_looks_like, spm_load),
)

#: the tokenizer file names a model folder may hold, preferred first
FOLDER_FILES: tuple[str, ...] = tuple(dict.fromkeys(n for f in FORMATS for n in f.file_names))


def format_of(head: bytes) -> FileFormat | None:
    """The first format whose test the file's first bytes pass (``None``: none)."""
    for fmt in FORMATS:
        if fmt.looks_like(head):
            return fmt
    return None


def sniff(head: bytes) -> str | None:
    """The name of :func:`format_of`'s format (``None``: none)."""
    found = format_of(head)
    return None if found is None else found.name
