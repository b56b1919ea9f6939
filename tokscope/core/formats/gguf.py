"""The metadata of a GGUF file (llama.cpp's model format): its header and key-value section only.

A GGUF file is a header (``GGUF``, version, tensor count, key-value count), the key-value
section (the tokenizer lives here: ``tokenizer.ggml.tokens``, ``tokenizer.ggml.merges`` ...),
then the tensor infos and the tensor data. :func:`read_metadata` reads the file front to back
and stops where the key-value section ends, so a 40 GB model loads its tokenizer as fast as a
vocabulary-only file: no tensor info or data is ever read or mapped.

Versions 2 and 3, little-endian (a big-endian file is refused by name). Every value type is
read: the integers and floats, ``bool``, strings (as ``str``), and arrays, nested ones too;
an array of numbers is an :class:`array.array`, any other array a tuple. Every length the file
claims is checked against what is left of the file before anything is read or allocated, so a
corrupt or hostile file costs no more memory than its own size; any fault is one line naming
the file and what is wrong (:class:`~..text.errors.TokenizerFileError`).

:func:`tokenizer_from_metadata` builds the tokenizer the metadata describes, as llama.cpp runs it,
from :data:`BUILDERS` by ``tokenizer.ggml.model``: ``gpt2`` (byte-level BPE from the file's merges,
split by the regexes its ``tokenizer.ggml.pre`` names in llama.cpp's table,
:mod:`..pre_tokenizers.llama_cpp`), ``gemma4`` (Gemma 4's SentencePiece-style BPE: spaces as
``▁``, lines cut from newline runs, merges on the text itself with ``<0xE2>`` byte fallback, a
newline run that is a token taken whole, BOS always added) and ``bert`` (WordPiece). Token types
decide what is matched in the text first: control and unknown tokens are special tokens,
user-defined ones always match, the longest first as llama.cpp cuts them, with its corrections by text and strip attributes
(:mod:`.gguf_attributes`). BOS/EOS are added by ``add_special_tokens`` as llama.cpp adds them
(``tokenizer.ggml.add_bos_token``/``add_eos_token``, else its default for the model and
pre-tokenizer). ``add_space_prefix`` and ``remove_extra_whitespaces`` change nothing here, as in
llama.cpp, where only SentencePiece models read them. The regexes run with full Unicode classes,
as the original models' tokenizers do (and llama.cpp's hand-written GPT-2 and Llama 3 splitters);
llama.cpp's generic regex fallback approximates non-ASCII classes and is not imitated.
:func:`facts` gives what the file says beside the tokenizer (:class:`GGUFFacts`).

>>> import io
>>> data = build_metadata({"general.name": "tiny", "tokenizer.ggml.tokens": ["a", "b"],
...                        "tokenizer.ggml.token_type": [1, 3]})
>>> meta = read_metadata_from(io.BytesIO(data), "tiny.gguf", len(data))
>>> meta["general.name"], meta["tokenizer.ggml.tokens"], list(meta["tokenizer.ggml.token_type"])
('tiny', ('a', 'b'), [1, 3])
>>> looks_like(data[:16]), looks_like(b'{"model": 1}')
(True, False)
"""

from __future__ import annotations

import operator
import os
import stat
import struct
import sys
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, BinaryIO

from .. import decoders, normalizers, processors
from .. import pre_tokenizers
from ..added_tokens.added_vocabulary import AddedVocabulary
from ..models import bpe as bpe_model
from ..models import newline_runs_bpe
from ..pre_tokenizers import llama_cpp
from . import gguf_attributes
from ..text.display import safe_text
from ..text.errors import TokenizerFileError, TokscopeError, UnsupportedComponentError
from ..tokenizer.tokenizer import Tokenizer
from ..text.compiled import CompiledPart

MAGIC = b"GGUF"
VERSIONS = (2, 3)

# value types, as the GGUF specification numbers them
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)

#: struct format of each scalar type (little-endian)
_SCALAR = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i", FLOAT32: "<f",
           BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}
#: array typecode of each numeric type, for arrays of numbers (read at C speed)
_TYPECODE = {UINT8: "B", INT8: "b", UINT16: "H", INT16: "h", UINT32: "I", INT32: "i", FLOAT32: "f",
             UINT64: "Q", INT64: "q", FLOAT64: "d"}
_TYPE_NAMES = {UINT8: "uint8", INT8: "int8", UINT16: "uint16", INT16: "int16", UINT32: "uint32", INT32: "int32",
               FLOAT32: "float32", BOOL: "bool", STRING: "string", ARRAY: "array", UINT64: "uint64",
               INT64: "int64", FLOAT64: "float64"}

#: bytes read from the file at a time
READ_CHUNK = 1 << 20
#: arrays nest at most this deep (the format allows any depth; no real file nests more than one)
MAX_DEPTH = 16
#: a key longer than this is corrupt (real keys are a few dozen bytes)
MAX_KEY_BYTES = 1 << 16
_LITTLE = sys.byteorder == "little"
_U64 = struct.Struct("<Q")


# The compiled reader of string arrays (``merge.c``'s ``gguf_strings``, in the optional
# ``_tokscope_merge`` extension); without it :meth:`_Source.strings_python` runs.
compiled_part = CompiledPart("GGUF_ABI")


def use_compiled(on: bool, module: Any = None) -> None:
    """Read string arrays with the compiled reader when installed (the default), or in Python
    (tests and benches compare the two); ``module`` puts in a compiled one built elsewhere.

    >>> was = compiled_strings() is not None
    >>> use_compiled(False); compiled_strings() is None
    True
    >>> use_compiled(True); (compiled_strings() is not None) == was
    True
    """
    compiled_part.use(on, module)


def compiled_strings() -> Any:
    """The compiled reader's module in use, or None (the Python loop)."""
    return compiled_part.get()


def looks_like(head: bytes) -> bool:
    """Whether a file's first bytes are GGUF's magic (tell formats apart by content, not name).

    >>> looks_like(b"GGUF\\x03\\x00\\x00\\x00"), looks_like(b"GGML")
    (True, False)
    """
    return head[:4] == MAGIC


class _Source:
    """A file read forward in chunks, with the bytes left in it known, so that no claimed length
    is ever allocated before the file is known to hold it."""

    __slots__ = ("handle", "name", "left", "buf", "pos")

    def __init__(self, handle: BinaryIO, name: str, size: int) -> None:
        self.handle = handle
        self.name = name
        self.left = size  # bytes of the file not yet in buf
        self.buf = b""
        self.pos = 0

    def fail(self, what: str) -> TokenizerFileError:
        return TokenizerFileError(f"{safe_text(self.name)} is not a usable GGUF file: {what}")

    def available(self) -> int:
        """Bytes from the current position to the end of the file."""
        return len(self.buf) - self.pos + self.left

    def need(self, n: int, what: str) -> None:
        """Make ``n`` bytes from the current position readable in ``buf``; a file too short is
        an error saying it is truncated."""
        have = len(self.buf) - self.pos
        if have >= n:
            return
        if n - have > self.left:
            raise self.fail(f"truncated ({what} runs past the end of the file)")
        want = min(self.left, max(n - have, READ_CHUNK))
        data = self.handle.read(want)
        if len(data) < n - have:
            raise self.fail(f"truncated ({what} runs past the end of the file)")
        self.left -= len(data)
        self.buf = self.buf[self.pos:] + data
        self.pos = 0

    def unpack(self, fmt: str, size: int, what: str) -> Any:
        self.need(size, what)
        value = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += size
        return value

    def string(self, what: str) -> str:
        n = self.unpack("<Q", 8, what)
        if n > self.available():
            raise self.fail(f"{what} claims {n:,} bytes, more than the file holds")
        self.need(n, what)
        raw = self.buf[self.pos:self.pos + n]
        self.pos += n
        return _decode(raw)

    def strings(self, count: int, what: str) -> tuple[str, ...]:
        """``count`` strings (each a u64 length then its bytes), each one's bytes and a NUL copied
        into one buffer (no object per string) and decoded at once at the end (see
        :func:`_decode_joined`): by the compiled reader where it is installed, else by
        :meth:`strings_python`."""
        module = compiled_strings()
        if module is None:
            return self.strings_python(count, what)
        read = module.gguf_strings
        out = bytearray()
        lengths = array("Q")
        got = 0
        while True:
            joined, lens, self.pos, k = read(self.buf, self.pos, count - got)
            out += joined
            lengths.frombytes(lens)
            got += k
            if got == count:
                return _decode_joined(out, lengths)
            # the next string is not wholly in the buffer: read on (or name what is missing)
            self.need(8, what)
            n = _U64.unpack_from(self.buf, self.pos)[0]
            if n > self.available() - 8:
                raise self.fail(f"a string in {what} claims {n:,} bytes, more than the file holds")
            self.need(8 + n, what)

    def strings_python(self, count: int, what: str) -> tuple[str, ...]:
        """:meth:`strings` in Python: a tight loop that copies each string's bytes and a NUL into
        one buffer (the compiled reader's fallback and the tests' oracle)."""
        out = bytearray()
        lengths = array("Q")
        add_length = lengths.append
        unpack = _U64.unpack_from
        buf, pos = self.buf, self.pos
        view = memoryview(buf)
        end = len(buf)
        for _ in range(count):
            if pos + 8 > end:
                self.pos = pos
                self.need(8, what)
                buf, pos, end = self.buf, self.pos, len(self.buf)
                view = memoryview(buf)
            n = unpack(buf, pos)[0]
            stop = pos + 8 + n
            if stop > end:
                self.pos = pos + 8
                if n > self.available():
                    raise self.fail(f"a string in {what} claims {n:,} bytes, more than the file holds")
                self.need(n, what)
                buf, pos, end = self.buf, self.pos - 8, len(self.buf)
                view = memoryview(buf)
                stop = pos + 8 + n
            out += view[pos + 8:stop]
            out.append(0)
            add_length(n)
            pos = stop
        self.pos = pos
        return _decode_joined(out, lengths)

    def block(self, n: int, what: str) -> bytes:
        self.need(n, what)
        data = self.buf[self.pos:self.pos + n]
        self.pos += n
        return data


def _decode_joined(blob: bytearray, lengths: array) -> tuple[str, ...]:
    """The strings of ``blob`` (each string's bytes then a NUL; ``lengths`` their byte lengths),
    each as :func:`_decode` gives it: in one pass at C speed when no string holds a NUL byte
    (decoded, split at the NULs; a decoder never joins bytes across a NUL, so each decodes exactly
    as it would alone), else cut by their lengths.

    >>> _decode_joined(bytearray(b"a\\0\\xc3\\xa9\\0\\xff\\0"), array("Q", [1, 2, 1]))
    ('a', 'é', '\\udcff')
    >>> _decode_joined(bytearray(b"a\\0b\\0\\0"), array("Q", [3, 0]))
    ('a\\x00b', '')
    """
    if blob.count(0) == len(lengths):
        parts = blob.decode("utf-8", "surrogateescape").split("\0")
        parts.pop()  # after the last NUL
        return tuple(parts)
    out = []
    at = 0
    for n in lengths:
        out.append(_decode(bytes(blob[at:at + n])))
        at += n + 1
    return tuple(out)


def _decode(raw: bytes) -> str:
    """A GGUF string as ``str``: UTF-8, with bytes that are not kept as surrogate escapes (a
    SentencePiece vocabulary can hold pieces that are not valid UTF-8)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")


def _value(src: _Source, kind: int, what: str, depth: int = 0) -> Any:
    if kind == STRING:
        return src.string(what)
    if kind == ARRAY:
        return _array(src, what, depth)
    fmt = _SCALAR.get(kind)
    if fmt is None:
        raise src.fail(f"{what} has unknown value type {kind}")
    return src.unpack(fmt, struct.calcsize(fmt), what)


def _array(src: _Source, what: str, depth: int) -> Any:
    if depth >= MAX_DEPTH:
        raise src.fail(f"{what} nests arrays more than {MAX_DEPTH} deep")
    kind = src.unpack("<I", 4, what)
    count = src.unpack("<Q", 8, what)
    if kind == STRING or kind == ARRAY:
        least = 8 if kind == STRING else 12  # a string's length; an array's type and count
    elif kind in _SCALAR:
        least = struct.calcsize(_SCALAR[kind])
    else:
        raise src.fail(f"{what} is an array of unknown value type {kind}")
    if count * least > src.available():
        raise src.fail(f"{what} claims {count:,} elements, more than the file holds (truncated or corrupt)")
    if kind == STRING:
        return src.strings(count, what)
    if kind == ARRAY:
        return tuple(_array(src, what, depth + 1) for _ in range(count))
    if kind == BOOL:
        return tuple(b != 0 for b in src.block(count, what))
    values = array(_TYPECODE[kind])
    if values.itemsize != least:  # a platform whose C types differ: read one by one
        return tuple(_value(src, kind, what) for _ in range(count))
    values.frombytes(src.block(count * least, what))
    if not _LITTLE:
        values.byteswap()
    return values


def read_metadata_from(handle: BinaryIO, name: str, size: int) -> dict[str, Any]:
    """The metadata of the GGUF file open as ``handle`` (positioned at its start; ``size`` its
    length in bytes), keys verbatim; ``GGUF.version``, ``GGUF.tensor_count`` and ``GGUF.kv_count``
    are added as the ``gguf`` package adds them."""
    src = _Source(handle, name, size)
    if size < 4:
        raise src.fail("truncated (shorter than its header)")
    magic = src.block(4, "the header")
    if magic != MAGIC:
        raise TokenizerFileError(f"{safe_text(name)} is not a GGUF file (it does not start with 'GGUF')")
    raw_version = src.block(4, "the header")
    version = int.from_bytes(raw_version, "little")
    if version not in VERSIONS:
        if int.from_bytes(raw_version, "big") in (*VERSIONS, 1):
            raise src.fail("it is big-endian, which tokscope does not read (convert it with llama.cpp's tools)")
        if version == 1:
            raise src.fail("it is GGUF version 1, which llama.cpp no longer reads (convert it to version 3)")
        raise src.fail(f"unknown GGUF version {version} (tokscope reads versions 2 and 3)")
    tensors = src.unpack("<Q", 8, "the header")
    count = src.unpack("<Q", 8, "the header")
    if count * 12 > src.available():  # a key's length, a type, and at least a byte of value
        raise src.fail(f"its header claims {count:,} keys, more than the file holds")
    meta: dict[str, Any] = {"GGUF.version": version, "GGUF.tensor_count": tensors, "GGUF.kv_count": count}
    for index in range(count):
        length = src.unpack("<Q", 8, f"key {index}")
        if length > MAX_KEY_BYTES or length > src.available():
            raise src.fail(f"key {index} claims {length:,} bytes")
        key = _decode(src.block(length, f"key {index}"))
        kind = src.unpack("<I", 4, f"the type of {key!r}")
        if kind not in _TYPE_NAMES:
            raise src.fail(f"{safe_text(key)!r} has unknown value type {kind}")
        meta[key] = _value(src, kind, repr(safe_text(key)))
    return meta


def read_metadata(path: str | os.PathLike[str]) -> Mapping[str, Any]:
    """The metadata of the GGUF file at ``path`` (see the module docstring). Only a regular file
    is opened (a FIFO or a device is refused before it is opened, so nothing blocks)."""
    name = os.fspath(path)
    try:
        info = os.stat(name)
    except OSError as exc:
        raise TokenizerFileError(f"cannot read {safe_text(name)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise TokenizerFileError(f"{safe_text(name)} is not a regular file")
    try:
        with open(name, "rb") as handle:
            return read_metadata_from(handle, name, os.fstat(handle.fileno()).st_size)
    except OSError as exc:
        raise TokenizerFileError(f"cannot read {safe_text(name)}: {exc.strerror or exc}") from None
    except MemoryError:
        raise TokenizerFileError(f"{safe_text(name)} is not a usable GGUF file: its metadata does not fit in memory") from None


def _pack_value(value: Any) -> tuple[int, bytes]:
    if isinstance(value, bool):
        return BOOL, struct.pack("<?", value)
    if isinstance(value, int):
        return (INT32, struct.pack("<i", value)) if -2**31 <= value < 2**31 else (INT64, struct.pack("<q", value))
    if isinstance(value, float):
        return FLOAT32, struct.pack("<f", value)
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogateescape")
        return STRING, struct.pack("<Q", len(data)) + data
    if isinstance(value, (list, tuple)):
        kinds = [_pack_value(v) for v in value]
        kind = kinds[0][0] if kinds else INT32
        if any(k != kind for k, _ in kinds):
            raise ValueError("an array's elements must share one type")
        return ARRAY, struct.pack("<IQ", kind, len(kinds)) + b"".join(d for _, d in kinds)
    raise TypeError(f"no GGUF type for {type(value).__name__}")


def build_metadata(meta: Mapping[str, Any], *, version: int = 3, tensors: int = 0) -> bytes:
    """A GGUF file's header and metadata holding ``meta`` (ints as int32, floats as float32, lists
    as arrays): the tests' and examples' writer; it writes no tensor infos.

    >>> build_metadata({})[:8]
    b'GGUF\\x03\\x00\\x00\\x00'
    """
    out = [MAGIC, struct.pack("<IQQ", version, tensors, len(meta))]
    for key, value in meta.items():
        raw = key.encode("utf-8")
        kind, data = _pack_value(value)
        out.append(struct.pack("<Q", len(raw)) + raw + struct.pack("<I", kind) + data)
    return b"".join(out)


# ----- GGUF -> Tokenizer ------------------------------------------------------------------------------

#: ``tokenizer.ggml.token_type`` values, as llama.cpp numbers them
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = (gguf_attributes.NORMAL, gguf_attributes.UNKNOWN,
                                                       gguf_attributes.CONTROL, gguf_attributes.USER_DEFINED,
                                                       gguf_attributes.UNUSED, gguf_attributes.BYTE)
#: llama.cpp's names of the token types
GGUF_TYPE_NAMES = {0: "undefined", NORMAL: "normal", UNKNOWN: "unknown", CONTROL: "control", USER_DEFINED: "user-defined",
                   UNUSED: "unused", BYTE: "byte"}

#: the special-token ids a GGUF file may give, by the name of a tokenizer_config.json field
SPECIAL_ID_KEYS = {
    "bos_token": "tokenizer.ggml.bos_token_id",
    "eos_token": "tokenizer.ggml.eos_token_id",
    "unk_token": "tokenizer.ggml.unknown_token_id",
    "pad_token": "tokenizer.ggml.padding_token_id",
    "sep_token": "tokenizer.ggml.seperator_token_id",  # sic: llama.cpp's spelling
    "cls_token": "tokenizer.ggml.cls_token_id",
    "mask_token": "tokenizer.ggml.mask_token_id",
}

#: llama.cpp's special-token ids for each model type where the file gives none (dropped when out
#: of the vocabulary's range)
DEFAULT_IDS: dict[str, dict[str, int | None]] = {
    "gpt2": {"bos_token": 11, "eos_token": 11},
    "bert": {"bos_token": 101, "unk_token": 100, "sep_token": 102, "pad_token": 0, "mask_token": 103},
    "llama": {"bos_token": 1, "eos_token": 2, "unk_token": 0},
    "t5": {"eos_token": 1, "unk_token": 2, "pad_token": 0},
    "gemma4": {},
}

#: tokens llama.cpp makes control tokens whatever the file says (they end generation)
_END_OF_GENERATION = gguf_attributes.END_OF_GENERATION
#: tokens llama.cpp always matches in text (gpt-oss's message markup)
_ALWAYS_USER_DEFINED = gguf_attributes.ALWAYS_USER_DEFINED


@dataclass(frozen=True, slots=True)
class GGUFFacts:
    """What a GGUF file says beside its tokenizer: the tokenizer model and pre-tokenizer names,
    notes the user should see (a ``default`` pre-tokenizer), the embedded chat templates (Jinja,
    by name: ``default`` is ``tokenizer.chat_template``), the special tokens by role, whether
    BOS/EOS are added, and the model's context length."""

    model: str
    pre: str | None = None
    notes: tuple[str, ...] = ()
    chat_templates: tuple[tuple[str, str], ...] = ()
    special_tokens: tuple[tuple[str, str], ...] = ()
    add_bos: bool = False
    add_eos: bool = False
    context: int | None = None
    architecture: str | None = None
    model_name: str | None = None
    #: each token's ``tokenizer.ggml.token_type`` as the file stores it (255 for a value over 254)
    token_types: bytes = b""

    def token_type(self, token_id: int) -> str | None:
        """Token ``token_id``'s GGUF token type as llama.cpp names it (``normal``, ``control`` ...;
        ``undefined`` for 0), ``None`` when the file gives none.

        >>> GGUFFacts("gpt2", token_types=bytes([1, 3, 0])).token_type(1), GGUFFacts("gpt2").token_type(1)
        ('control', None)
        """
        if not 0 <= token_id < len(self.token_types):
            return None
        value = self.token_types[token_id]
        return GGUF_TYPE_NAMES.get(value, f"type {value}" if value < 255 else "out of range")

    def tokenizer_config(self) -> dict[str, Any]:
        """The facts as a ``tokenizer_config.json`` would give them (chat templates, special
        tokens, ``add_bos_token``), for the chat code that reads such a config.

        >>> GGUFFacts("gpt2", chat_templates=(("default", "{{ x }}"),), special_tokens=(("eos_token", "</s>"),),
        ...           add_bos=True).tokenizer_config()
        {'bos_token': None, 'eos_token': '</s>', 'add_bos_token': True, 'add_eos_token': False, 'chat_template': '{{ x }}'}
        """
        config: dict[str, Any] = {"bos_token": None, **dict(self.special_tokens), "add_bos_token": self.add_bos,
                                  "add_eos_token": self.add_eos}
        if len(self.chat_templates) == 1 and self.chat_templates[0][0] == "default":
            config["chat_template"] = self.chat_templates[0][1]
        elif self.chat_templates:
            config["chat_template"] = [{"name": n, "template": t} for n, t in self.chat_templates]
        return config


def _fail(source: str, what: str) -> TokenizerFileError:
    return TokenizerFileError(f"{safe_text(source)} is not a usable GGUF tokenizer: {what}")


def _string(meta: Mapping[str, Any], key: str) -> str | None:
    value = meta.get(key)
    return value if isinstance(value, str) else None


def _flag(meta: Mapping[str, Any], key: str) -> bool | None:
    value = meta.get(key)
    return value if isinstance(value, bool) else None


def _int(meta: Mapping[str, Any], key: str) -> int | None:
    value = meta.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _tokens(meta: Mapping[str, Any], source: str) -> tuple[str, ...]:
    tokens = meta.get("tokenizer.ggml.tokens")
    if tokens is None:
        raise _fail(source, "it has no tokenizer.ggml.tokens (a model file converted without its vocabulary)")
    if not isinstance(tokens, tuple) or not all(isinstance(t, str) for t in tokens[:1]):
        raise _fail(source, "tokenizer.ggml.tokens is not an array of strings")
    # llama.cpp names an empty token by its index
    if "" in tokens:
        tokens = tuple(t or f"[EMPTY_{i}]" for i, t in enumerate(tokens))
    return tokens


def _types(meta: Mapping[str, Any], n: int, source: str) -> list[int]:
    """Each token's type as the file gives it (llama.cpp's corrections by text are
    :func:`_corrected_types` and, where tokens are matched, :mod:`.gguf_attributes`)."""
    raw = meta.get("tokenizer.ggml.token_type")
    if raw is None:
        types = [NORMAL] * n
    else:
        if not isinstance(raw, array) or raw.typecode not in "bBhHiIlLqQ":
            raise _fail(source, "tokenizer.ggml.token_type is not an array of integers")
        if len(raw) < n:
            raise _fail(source, f"tokenizer.ggml.token_type has {len(raw):,} entries for {n:,} tokens")
        types = list(raw[:n])
    return types


def _special_ids(meta: Mapping[str, Any], n: int, defaults: Mapping[str, int | None]) -> dict[str, int]:
    """Each role's id: the file's where it gives one in range, else llama.cpp's default for the
    model type (dropped when out of range)."""
    out: dict[str, int] = {}
    for role, key in SPECIAL_ID_KEYS.items():
        value = _int(meta, key)
        default = defaults.get(role)
        if value is not None and 0 <= value < n:
            out[role] = value
        elif default is not None and 0 <= default < n:
            out[role] = default
    return out


def _corrected_types(tokens: tuple[str, ...], types: list[int]) -> list[int]:
    # llama.cpp keeps token attributes as bits; a type here stands for the same matching rule
    present = _END_OF_GENERATION.intersection(tokens)
    for text in present:
        for i in gguf_attributes.indices(tokens, text):
            types[i] = CONTROL
    for text in _ALWAYS_USER_DEFINED.intersection(tokens):
        for i in gguf_attributes.indices(tokens, text):
            types[i] = USER_DEFINED
    if {"<|return|>", "<|call|>", "<|end|>"} <= present or {"<|calls|>", "<|flush|>", "<|end|>"} <= present:
        types[tokens.index("<|end|>")] = USER_DEFINED
    if {"<|tool_response>", "</s>"} <= present:  # Gemma 4's </s> is plain text
        types[tokens.index("</s>")] = NORMAL
    return types


def _added_tokens(meta: Mapping[str, Any], tokens: tuple[str, ...], types: list[int],
                  contents: Sequence[str] | None = None, normalizer: Any = None) -> AddedVocabulary:
    """The tokens llama.cpp matches in text before the model runs: control and unknown tokens
    (special: matched only where special tokens are allowed) and user-defined ones (always), with
    the strip attributes llama.cpp gives some models (:mod:`.gguf_attributes`)."""
    added = gguf_attributes.matched_tokens(meta, tokens, types, contents)
    return AddedVocabulary(added, normalizer, strip=gguf_attributes.C_SPACE, longest_first=True)


def _template(ids: Sequence[int], tokens: tuple[str, ...], after: Sequence[int] = ()) -> dict[str, Any] | None:
    """A TemplateProcessing object adding ``ids`` before and ``after`` after the text."""
    if not ids and not after:
        return None
    single = ([{"SpecialToken": {"id": tokens[i], "type_id": 0}} for i in ids] + [{"Sequence": {"id": "A", "type_id": 0}}]
              + [{"SpecialToken": {"id": tokens[i], "type_id": 0}} for i in after])
    pair = single + [{"Sequence": {"id": "B", "type_id": 1}}] + [{"SpecialToken": {"id": tokens[i], "type_id": 1}}
                                                               for i in after]
    specials = {tokens[i]: {"id": tokens[i], "ids": [i], "tokens": [tokens[i]]} for i in (*ids, *after)}
    return {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": specials}


def _merges(meta: Mapping[str, Any], source: str) -> bpe_model.MergeColumns:
    """The file's merges cut as llama.cpp cuts them (at the first space after the first byte).

    >>> _merges({"tokenizer.ggml.merges": ("a b", "▁ ▁", "  x", "nospace")}, "f")
    MergeColumns(lefts=['a', '▁', ' ', ''], rights=['b', '▁', 'x', ''])
    """
    merges = meta.get("tokenizer.ggml.merges")
    if merges is None:
        raise _fail(source, "a BPE tokenizer without tokenizer.ggml.merges")
    if not isinstance(merges, tuple) or not all(isinstance(m, str) for m in merges[:1]):
        raise _fail(source, "tokenizer.ggml.merges is not an array of strings")
    if not merges:
        return bpe_model.MergeColumns([], [])
    # the common case, checked and cut at C speed: one space in each merge, never at its start
    joined = "\0".join(merges)
    if _one_space_each(joined, len(merges)):
        parts = joined.replace(" ", "\0").split("\0")
        return bpe_model.MergeColumns(parts[0::2], parts[1::2])
    lefts: list[str] = []
    rights: list[str] = []
    for m in merges:
        cut = m.find(" ", 1)
        lefts.append(m[:cut] if cut > 0 else "")
        rights.append(m[cut + 1:] if cut > 0 else "")
    return bpe_model.MergeColumns(lefts, rights)


def _one_space_each(joined: str, n: int) -> bool:
    """Whether each of the ``n`` merges joined by NULs in ``joined`` holds exactly one space, not at
    its start (then llama.cpp's cut is the split at that space), at C speed: with ``n`` spaces and
    ``n - 1`` NULs in all, each stretch between two spaces must hold a NUL (a merge without a space
    puts two NULs in one stretch, so another has none), and the text before the first space and
    after the last none.

    >>> _one_space_each("a b\\0c d", 2), _one_space_each("a b c\\0cd", 2), _one_space_each("a b\\0xy\\0c d e", 3)
    (True, False, False)
    >>> _one_space_each("a b\\0 c", 2), _one_space_each("ab\\0a b c", 2), _one_space_each("a b", 1)
    (False, False, True)
    """
    if joined.count(" ") != n or joined.count("\0") != n - 1 or "\0 " in joined or joined.startswith(" "):
        return False
    pieces = joined.split(" ")
    return "\0" not in pieces[0] and "\0" not in pieces[-1] and all(map(operator.contains, pieces[1:-1], repeat("\0")))


def _gpt2(meta: Mapping[str, Any], name: str, source: str, model_state: dict | None = None) -> Tokenizer:
    """Byte-level BPE: the merges of the file, the pre-tokenizer its ``tokenizer.ggml.pre`` names."""
    return _bpe(meta, name, source, llama_cpp.lookup(_string(meta, "tokenizer.ggml.pre")), "gpt2", model_state)


def _gemma4(meta: Mapping[str, Any], name: str, source: str, model_state: dict | None = None) -> Tokenizer:
    """Gemma 4's SentencePiece-style BPE: llama.cpp reads the merges and gives it pre-tokenizer
    ``gemma4`` whatever the file names (spaces as ``▁``, lines cut from newline runs, merges on the
    text itself with ``<0xE2>``-style byte fallback, BOS always added)."""
    return _bpe(meta, name, source, llama_cpp.lookup("gemma4"), "gemma4", model_state)


#: the decoder of SentencePiece-style BPE (``▁`` for spaces, ``<0xE2>`` byte tokens)
_SPM_DECODER = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}]}


def _bpe(meta: Mapping[str, Any], name: str, source: str, pre: llama_cpp.LlamaCppPre, model_type: str,
         model_state: dict | None = None) -> Tokenizer:
    """llama.cpp's BPE tokenizer for ``pre``: byte-level (GPT-2's stand-ins, ``gpt2``) or, where
    ``pre`` turns byte encoding off, on the text itself with byte fallback (``gemma4``). With
    ``model_state`` (what the model's ``__getstate__`` gave for this file before) the merges are
    not read: the model is restored from it."""
    tokens = _tokens(meta, source)
    types = _types(meta, len(tokens), source)  # corrected by text where they are matched (_added_tokens)
    defaults = DEFAULT_IDS[model_type]
    if model_type == "gpt2":
        defaults = {**defaults, "bos_token": None if pre.no_bos else 11}
    ids = _special_ids(meta, len(tokens), defaults)
    add_bos = _flag(meta, "tokenizer.ggml.add_bos_token")
    add_bos = pre.force_bos or (add_bos if add_bos is not None else bool(pre.add_bos))
    add_eos = bool(_flag(meta, "tokenizer.ggml.add_eos_token"))
    kind = newline_runs_bpe.NewlineRunsBPE if pre.whole_newline_runs else bpe_model.BPE
    if model_state is not None:  # the model this file made before, as its pickling state (a cache's)
        model = kind.__new__(kind)
        model.__setstate__(model_state)
    else:
        vocab = dict(zip(tokens, range(len(tokens))))
        if not pre.byte_encode and any(b not in vocab for b in bpe_model.BYTE_TOKENS):
            # llama.cpp would drop only the missing bytes of a character; Hugging Face's fallback drops it all
            raise _fail(source, "a BPE vocabulary on raw UTF-8 without all 256 <0xXX> byte tokens")
        model = kind(vocab, _merges(meta, source), ignore_merges=pre.ignore_merges, byte_fallback=not pre.byte_encode)
    before = [ids["bos_token"]] if add_bos and "bos_token" in ids else []
    after = [ids["eos_token"]] if add_eos and "eos_token" in ids else []
    added = _added_tokens(meta, tokens, types)
    normalizer = None
    if pre.escape_whitespaces:
        normalizer = normalizers.from_json({"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"})
    decoder = _SPM_DECODER if not pre.byte_encode else {"type": "ByteLevel", "add_prefix_space": False,
                                                        "trim_offsets": False, "use_regex": False}
    return Tokenizer.from_stages(name, model=model, normalizer=normalizer, pre_tokenizer=llama_cpp.pre_tokenizer(pre),
                                 added_tokens=added, post_processor=processors.from_json(_template(before, tokens, after)),
                                 decoder=decoders.from_json(decoder))


def _wordpiece_token(token: str, kind: int) -> str:
    """A GGUF BERT token in ``vocab.txt``'s spelling: llama.cpp's converter writes a word's first
    piece with a phantom space (``▁hello``) and a continuation bare (``llo``, for ``##llo``);
    bracketed and special tokens stay as they are.

    >>> _wordpiece_token("▁hello", NORMAL), _wordpiece_token("llo", NORMAL), _wordpiece_token("[CLS]", CONTROL)
    ('hello', '##llo', '[CLS]')
    """
    if kind in (CONTROL, UNKNOWN, USER_DEFINED) or (token.startswith("[") and token.endswith("]")):
        return token
    if token.startswith("\u2581") and len(token) > 1:
        return token[1:]
    return "##" + token


def _bert(meta: Mapping[str, Any], name: str, source: str) -> Tokenizer:
    """WordPiece with BERT's normalization and splits, as llama.cpp runs a ``bert`` vocabulary:
    no limit on a word's length (Hugging Face makes a word over 100 characters one unknown token),
    BOS and SEP added around the text (llama.cpp reads no ``cls_token_id``: BOS is the file's
    ``bos_token_id``, else id 101, bert-base's ``[CLS]``)."""
    from ..models import wordpiece as wordpiece_model  # imported by the models that need it

    tokens = _tokens(meta, source)
    types = _corrected_types(tokens, _types(meta, len(tokens), source))
    ids = _special_ids(meta, len(tokens), DEFAULT_IDS["bert"])
    pieces = [_wordpiece_token(t, k) for t, k in zip(tokens, types)]
    vocab = {piece: i for i, piece in enumerate(pieces)}
    if "unk_token" not in ids:
        raise _fail(source, "a bert tokenizer without an unknown token")
    lowercase = _flag(meta, "tokenizer.ggml.normalizer.lowercase")
    lowercase = True if lowercase is None else lowercase
    strip_accents = _flag(meta, "tokenizer.ggml.normalizer.strip_accents")
    model = wordpiece_model.WordPiece(vocab, unk_token=pieces[ids["unk_token"]], continuing_subword_prefix="##",
                                      max_input_chars_per_word=2**31 - 1)
    before = [ids["bos_token"]] if "bos_token" in ids else []
    after = [ids["sep_token"]] if "sep_token" in ids else []
    normalizer = normalizers.from_json({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                        "strip_accents": lowercase if strip_accents is None else strip_accents,
                                        "lowercase": lowercase})
    return Tokenizer.from_stages(name, model=model, normalizer=normalizer,
                                 pre_tokenizer=pre_tokenizers.BertPreTokenizer(),
                                 added_tokens=_added_tokens(meta, tokens, types, pieces, normalizer),
                                 post_processor=processors.from_json(_template(before, pieces, after)),
                                 decoder=decoders.from_json({"type": "WordPiece", "prefix": "##", "cleanup": True}))


def _sentencepiece(meta: Mapping[str, Any], name: str, source: str) -> Tokenizer:
    """``llama`` (llama.cpp's SPM) and ``t5`` (its UGM): :mod:`.gguf_sentencepiece`."""
    from . import gguf_sentencepiece  # imported by the models that need it

    return gguf_sentencepiece.tokenizer_from_gguf(meta, name)


#: ``tokenizer.ggml.model`` -> the builder of its tokenizer (metadata, name, source)
BUILDERS: dict[str, Callable[[Mapping[str, Any], str, str], Tokenizer]] = {
    "gpt2": _gpt2,
    "bert": _bert,
    "gemma4": _gemma4,
    "llama": _sentencepiece,
    "t5": _sentencepiece,
}


def facts(meta: Mapping[str, Any], source: str = "GGUF file") -> GGUFFacts:
    """What the file says beside the tokenizer (see :class:`GGUFFacts`)."""
    model = _string(meta, "tokenizer.ggml.model") or ""
    pre_name = _string(meta, "tokenizer.ggml.pre")
    notes: list[str] = []
    if model == "gpt2":
        try:
            warning = llama_cpp.lookup(pre_name).warning
        except UnsupportedComponentError:
            warning = None
        if warning:
            notes.append(warning)
    templates: list[tuple[str, str]] = []
    default = _string(meta, "tokenizer.chat_template")
    if default:
        templates.append(("default", default))
    names = meta.get("tokenizer.chat_templates")
    for extra in names if isinstance(names, tuple) else ():
        text = _string(meta, f"tokenizer.chat_template.{extra}") if isinstance(extra, str) else None
        if text:
            templates.append((extra, text))
    tokens = meta.get("tokenizer.ggml.tokens")
    n = len(tokens) if isinstance(tokens, tuple) else 0
    ids = _special_ids(meta, n, DEFAULT_IDS.get(model, {}))
    specials = tuple((role, tokens[i]) for role, i in ids.items()) if n else ()
    add_bos = _flag(meta, "tokenizer.ggml.add_bos_token")
    bpe_pre = _bpe_pre(model, pre_name)
    if add_bos is None or (bpe_pre is not None and bpe_pre.force_bos):
        add_bos = model in ("bert", "llama") or bool(bpe_pre is not None and bpe_pre.add_bos)
    add_eos = _flag(meta, "tokenizer.ggml.add_eos_token")
    if add_eos is None:
        add_eos = model == "t5"
    arch = _string(meta, "general.architecture")
    context = _int(meta, f"{arch}.context_length") if arch else None
    raw = meta.get("tokenizer.ggml.token_type")
    types = _type_bytes(raw[:n]) if isinstance(raw, array) and raw.typecode in "bBhHiIlLqQ" else b""
    return GGUFFacts(model, pre_name, tuple(notes), tuple(templates), specials, add_bos, add_eos,
                     context if context and context > 0 else None, arch, _string(meta, "general.name"), types)


def _type_bytes(types: array) -> bytes:
    """Token types as one byte each, clamped to 0-255 (at C speed when all fit, as in every real file).

    >>> _type_bytes(array("i", [1, 3, 6])), _type_bytes(array("i", [-1, 300, 2]))
    (b'\\x01\\x03\\x06', b'\\x00\\xff\\x02')
    """
    try:
        return array("B", types).tobytes()
    except OverflowError:
        return bytes(min(max(t, 0), 255) for t in types)


def _bpe_pre(model: str, name: str | None) -> llama_cpp.LlamaCppPre | None:
    """The pre-tokenizer llama.cpp runs a BPE model with (``gemma4`` whatever the file names for a
    ``gemma4`` model), or None (not BPE, or a name tokscope refuses)."""
    if model not in ("gpt2", "gemma4"):
        return None
    try:
        return llama_cpp.lookup("gemma4" if model == "gemma4" else name)
    except UnsupportedComponentError:
        return None


#: the builders that take a BPE model's saved state (:func:`tokenizer_from_metadata`)
_RESTORABLE = frozenset({"gpt2", "gemma4"})


def restorable(meta: Mapping[str, Any]) -> bool:
    """Whether :func:`tokenizer_from_metadata` can restore this file's model from a saved state
    (``model_state``) instead of building it from the merges: a BPE model (``gpt2``, ``gemma4``).

    >>> restorable({"tokenizer.ggml.model": "gpt2"}), restorable({"tokenizer.ggml.model": "llama"})
    (True, False)
    """
    return meta.get("tokenizer.ggml.model") in _RESTORABLE


def tokenizer_from_metadata(meta: Mapping[str, Any], name: str, source: str = "GGUF file", *,
                            model_state: dict | None = None) -> Tokenizer:
    """The tokenizer a GGUF file's metadata describes, as llama.cpp runs it. An unknown
    ``tokenizer.ggml.model`` (or pre-tokenizer) is a one-line error naming it. ``model_state``
    (for a :func:`restorable` file: its BPE model's ``__getstate__()`` from an earlier build, as a
    cache keeps it) restores the model instead of building it, so ``tokenizer.ggml.merges`` is not
    needed."""
    model = meta.get("tokenizer.ggml.model")
    if not isinstance(model, str):
        raise _fail(source, "it has no tokenizer.ggml.model (it holds no tokenizer)")
    builder = BUILDERS.get(model)
    if builder is None:
        raise UnsupportedComponentError("model", model, "a GGUF tokenizer model tokscope does not know")
    try:
        if model_state is not None and model in _RESTORABLE:
            return builder(meta, name, source, model_state)
        return builder(meta, name, source)
    except UnsupportedComponentError:
        raise
    except TokenizerFileError as exc:  # a stage's own complaint: say which file
        message = str(exc)
        raise (exc if safe_text(source) in message else _fail(source, message)) from None
    except TokscopeError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
        raise _fail(source, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None


def load(path: str | os.PathLike[str], name: str | None = None) -> tuple[Tokenizer, GGUFFacts]:
    """The tokenizer of the GGUF file at ``path`` and the facts beside it, reading only the file's
    metadata."""
    source = os.fspath(path)
    meta = read_metadata(source)
    label = name or os.path.basename(source).removesuffix(".gguf")
    return tokenizer_from_metadata(meta, label, source), facts(meta, source)
