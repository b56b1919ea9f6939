"""tokscope's own cache of parsed tokenizer files, so a second load skips parsing.

An entry holds data only, never code: one header line, one line of JSON, then raw tables (strings
as one UTF-8 block with their lengths, numbers as machine arrays). Loading one reads those and
builds the tokenizer through the same constructors a parse uses; nothing in it names a function or
a class to call (a pickle does, which is why there is none). What an entry holds:

* for a ``tokenizer.json``: the file's JSON without the model's two big tables (vocabulary and
  merges); the stages are rebuilt from that small rest. The vocabulary is a table; a BPE model's
  merges are kept as the model keeps them (pairs of ids and the merged id), so its merge list is
  not parsed again, which is most of a cold load.
* for a rank file (Llama 3's ``tokenizer.model``, a Tekken file): the ranks as a table, and the
  pattern, special tokens and vocabulary size.

A tokenizer of any other shape is simply not cached. Each entry is keyed by the sha256 of the
source file's bytes (so an edited file is parsed again) and by the format version, tokscope's
version and the machine's byte order; the header repeats the key and a sha256 of the rest, and an
entry that does not check, is not a regular file, is not owned by the user or can be written by
others is ignored (parsed again and replaced). Entries are written atomically (temporary file in
the same folder, then rename) in a folder only the user can read.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import sys
import tempfile
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from pathlib import Path
from typing import Any

from ..version import __version__
from ..core.added_tokens.specials import SpecialTokens
from ..core.formats import gguf
from ..core.models.base import vocab_from_table
from ..core.models.bpe import BPE
from ..core.models.ranks import RanksBPE
from ..core.tokenizer.tokenizer import Tokenizer
from ..core.text.errors import TokscopeError
from .names import user_cache_dir
from .regular_files import read_regular

CACHE_FORMAT = 2
#: tokenizer files larger than this are refused before they are read (Gemma 3's is 33 MB)
MAX_SOURCE_BYTES = 256 * 1024 * 1024  # tokenizer_json.MAX_FILE_BYTES (a test holds them equal)
#: an entry is never larger than its source's tables; this bounds what a planted one costs
MAX_ENTRY_BYTES = 2 * MAX_SOURCE_BYTES
_MAGIC = "tokscope-tokenizer-cache"


@dataclass(frozen=True, slots=True)
class Built:
    """What a parse made: the tokenizer and the ``tokenizer.json`` object it was made from (the
    cache keeps that object's small rest beside the tables)."""

    tokenizer: Tokenizer
    json: dict | None = None


def _entry(kind: str, digest: str) -> Path:
    tag = f"v{CACHE_FORMAT}-{__version__}-{sys.byteorder}"
    return user_cache_dir() / "tokenizers" / f"{kind}.{digest[:32]}.{tag}.tables"


def _header(kind: str, digest: str, payload_digest: str) -> bytes:
    return f"{_MAGIC} {CACHE_FORMAT} {__version__} {sys.byteorder} {kind} {digest} {payload_digest}\n".encode()


def read_source(path: Path, known: os.stat_result | None = None) -> bytes:
    """A tokenizer file's bytes (a regular file only, at most :data:`MAX_SOURCE_BYTES`); ``known``
    is the caller's ``os.stat`` of ``path``, when it has one."""
    return read_regular(path, MAX_SOURCE_BYTES, what="tokenizer files", known=known)


def cached_file(path: Path, kind: str, build: Callable[[bytes], Tokenizer | Built], data: bytes | None = None) -> Tokenizer:
    """The tokenizer ``build(data)`` makes from ``path``'s bytes (``data`` when the caller has read
    them, by :func:`read_source`), from the cache when it holds it."""
    if data is None:
        data = read_source(path)
    from ..core.formats.tokenizer_json import gc_paused

    if kind == "json-tokenizer" and len(data) < MIN_CACHED_BYTES and not _names_merges(data):
        # no merge list and under the size from which an entry pays (:func:`_pays`): never kept,
        # so neither hashed nor looked for; the parse's objects are let go with the collector off
        # (as below)
        with gc_paused():
            built = build(data)
            tokenizer = built.tokenizer if isinstance(built, Built) else built
            del built
        return tokenizer
    digest = hashlib.sha256(data).hexdigest()
    entry = _entry(kind, digest)
    tokenizer = _load(entry, kind, digest)
    if tokenizer is not None:
        return tokenizer

    # The collector stays off from the parse to the entry written, and the parse's objects are let
    # go before it is back on: they are freed by their counts and no collection ever walks them.
    with gc_paused():
        built = build(data)
        if isinstance(built, Built):
            tokenizer, source = built.tokenizer, built.json
        else:
            tokenizer, source = built, None
        if _pays(data, tokenizer):
            _store(entry, kind, digest, tokenizer, source)
        del built, source
    return tokenizer


def _names_merges(data: bytes) -> bool:
    """Whether ``data`` holds ``"merges"``. A charsmap's string holds no quote, so it is not
    searched: its few hundred kilobytes of base64 are the slowest bytes to search for this.

    >>> _names_merges(b'{"model": {"merges": []}}'), _names_merges(b'{"precompiled_charsmap": "bWVyZ2Vz"}')
    (True, False)
    """
    from ..core.formats.tokenizer_json import charsmap_span

    span = charsmap_span(data)
    if span is None:
        return b'"merges"' in data
    start, end = span
    return data.find(b'"merges"', 0, start) >= 0 or data.find(b'"merges"', end) >= 0


#: a file under this size whose model has no merge list is not cached (see :func:`_pays`)
MIN_CACHED_BYTES = 1024 * 1024


def _pays(data: bytes, tokenizer: Tokenizer) -> bool:
    """Whether an entry would save more than it costs: not for a file under a megabyte whose model
    keeps no merge list (a WordLevel, WordPiece or Unigram vocabulary of that size reads from an
    entry about as fast as from its JSON, and writing the entry costs more than a parse: a 30k
    WordPiece or a 0.4 MB Unigram file with its charsmap loads from its JSON in about the time its
    entry takes to read)."""
    return len(data) >= MIN_CACHED_BYTES or isinstance(tokenizer.model, (BPE, RanksBPE))


# ----- tables -------------------------------------------------------------------------------------


class _Unfit(Exception):
    """A value the entry layout has no form for: the tokenizer is not cached."""


class _Tables:
    """The raw tables of an entry, in order, with their descriptions for the JSON line."""

    def __init__(self) -> None:
        self.blobs: list[bytes] = []
        self.specs: list[list] = []

    def add(self, typecode: str, data: array | bytes) -> int:
        if isinstance(data, array):
            typecode = data.typecode
            count = len(data)
            data = data.tobytes()
        else:
            count = len(data)
        self.specs.append([typecode, count])
        self.blobs.append(bytes(data))
        return len(self.specs) - 1

    def strings(self, items: list[str]) -> list:
        """Strings as one UTF-8 block (lone surrogates kept): joined by a character none of them
        holds, which splits fastest, else with their lengths in characters."""
        if not items:
            return [self.add("B", b""), _SEPARATORS[0], 0]
        try:  # a string holds the separator when the joined text holds more of it than the joins
            for sep in _SEPARATORS:
                joined = sep.join(items)
                if joined.count(sep) == len(items) - 1:
                    return [self.add("B", joined.encode("utf-8", "surrogatepass")), sep, len(items)]
        except TypeError:
            raise _Unfit("a key that is not a string") from None
        joined = "".join(items)
        return [self.add("B", joined.encode("utf-8", "surrogatepass")), self.add("", array("Q", map(len, items)))]

    def byte_strings(self, items: list[bytes]) -> list[int]:
        if items and set(map(type, items)) != {bytes}:
            raise _Unfit("a key that is not bytes")
        return [self.add("B", b"".join(items)), self.add("", array("Q", map(len, items)))]

    def ints(self, values: Any) -> int:
        """Whole numbers as 64-bit ones (checked by the array at C speed: a float or a string is a
        TypeError; the values come from a model that accepted them, so none is a bool)."""
        try:
            return self.add("", array("q", values))
        except TypeError:
            raise _Unfit("a value that is not a whole number") from None
        except OverflowError:
            raise _Unfit("a number out of range") from None


class _Reader:
    """The tables of an entry read back, checked against their descriptions."""

    _SIZES = {"B": 1, "Q": 8, "q": 8, "I": 4, "d": 8}

    def __init__(self, specs: Any, payload: memoryview) -> None:
        if not isinstance(specs, list):
            raise ValueError("no tables")
        self.tables: list[bytes | array] = []
        at = 0
        for spec in specs:
            typecode, count = spec
            size = self._SIZES[typecode]
            if array(typecode).itemsize != size or type(count) is not int or count < 0:
                raise ValueError("a bad table")
            end = at + size * count
            if end > len(payload):
                raise ValueError("a short entry")
            part = payload[at:end]
            if typecode == "B":
                self.tables.append(bytes(part))
            else:
                values = array(typecode)
                values.frombytes(part)
                self.tables.append(values)
            at = end
        if at != len(payload):
            raise ValueError("trailing bytes")

    def get(self, index: Any, kind: type) -> Any:
        if type(index) is not int:
            raise ValueError("a bad table index")
        value = self.tables[index]
        if not isinstance(value, kind):
            raise ValueError("a table of the wrong type")
        return value

    def strings(self, ref: Any) -> list[str]:
        if len(ref) == 3:
            blob_index, sep, count = ref
            if sep not in _SEPARATORS or type(count) is not int:
                raise ValueError("a bad separator")
            items = self.get(blob_index, bytes).decode("utf-8", "surrogatepass").split(sep) if count else []
            if len(items) != count:
                raise ValueError("a wrong number of strings")
            return items
        blob_index, lengths_index = ref
        text = self.get(blob_index, bytes).decode("utf-8", "surrogatepass")
        ends = list(accumulate(self.get(lengths_index, array)))
        if (ends[-1] if ends else 0) != len(text):
            raise ValueError("string lengths do not add up")
        return [text[a:b] for a, b in zip([0, *ends], ends)]

    def byte_strings(self, ref: Any) -> list[bytes]:
        blob_index, lengths_index = ref
        blob = self.get(blob_index, bytes)
        ends = list(accumulate(self.get(lengths_index, array)))
        if (ends[-1] if ends else 0) != len(blob):
            raise ValueError("byte string lengths do not add up")
        return [blob[a:b] for a, b in zip([0, *ends], ends)]

    def ints(self, index: Any, count: int) -> list[int]:
        values = self.get(index, array)
        if values.typecode != "q" or len(values) != count:
            raise ValueError("a table of the wrong length")
        return values.tolist()


_SCALARS = (type(None), bool, int, float, str)
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
#: characters that may join a table's strings (a NUL, then noncharacters no text should hold)
_SEPARATORS = ("\x00", "\ufdd0", "\ufdd1", "\ufdef")


def _vocab_tables(vocab: Any, tables: _Tables) -> dict:
    """A ``tokenizer.json`` model's vocabulary (``{token: id}`` or ``[[piece, score], ...]``)."""
    if type(vocab) is dict:
        return {"map": tables.strings(list(vocab)), "ids": tables.ints(vocab.values())}
    if type(vocab) is list and set(map(type, vocab)) <= {list} and set(map(len, vocab)) <= {2}:
        scores = list(map(_SECOND, vocab))
        kinds = set(map(type, scores))
        if not kinds <= {int, float}:
            raise _Unfit("a score that is not a number")
        ints = [i for i, s in enumerate(scores) if type(s) is int] if int in kinds else []
        if any(abs(scores[i]) > 2**53 for i in ints):
            raise _Unfit("a score out of range")
        return {"pieces": tables.strings(list(map(_FIRST, vocab))),
                "scores": tables.add("", array("d", scores if kinds == {float} else map(float, scores))),
                "int_scores": ints}
    raise _Unfit("a vocabulary of another shape")


def _vocab_from(spec: Any, reader: _Reader) -> Any:
    if "map" in spec:
        ref = spec["map"]
        if len(ref) == 3 and ref[2]:  # joined by a separator: cut and paired with the ids in one pass
            blob_index, sep, count = ref
            ids = reader.get(spec["ids"], array)
            if sep not in _SEPARATORS or type(count) is not int or ids.typecode != "q" or len(ids) != count:
                raise ValueError("a bad vocabulary table")
            return vocab_from_table(reader.get(blob_index, bytes).decode("utf-8", "surrogatepass"), sep, ids)
        keys = reader.strings(ref)
        return dict(zip(keys, reader.ints(spec["ids"], len(keys))))
    pieces = reader.strings(spec["pieces"])
    scores: list = reader.get(spec["scores"], array).tolist()
    if len(scores) != len(pieces):
        raise ValueError("scores and pieces differ in number")
    for i in spec["int_scores"]:
        scores[i] = int(scores[i])
    return list(zip(pieces, scores))  # (piece, score) pairs: what the Unigram model reads


def _bpe_tables(model: BPE, tables: _Tables, token_ids: Callable[[Any], bool] | None = None) -> dict:
    """A BPE model as its pickling state gives it (vocabulary, merge arrays, options); a
    vocabulary for which ``token_ids`` holds (a GGUF file's tokens by position) is kept as a mark only."""
    out: dict[str, Any] = {}
    for key, value in model.__getstate__().items():
        if isinstance(value, _SCALARS):
            out[key] = ["scalar", value]
        elif isinstance(value, array):
            out[key] = ["array", tables.add("", value)]
        elif token_ids is not None and type(value) is dict and token_ids(value):
            out[key] = ["token_ids", None]
        elif type(value) is dict:
            out[key] = ["vocab", _vocab_tables(value, tables)]
        else:
            raise _Unfit(f"BPE state {key} of type {type(value).__name__}")
    return out


def _bpe_from(spec: Any, reader: _Reader) -> BPE:
    model = BPE.__new__(BPE)
    model.__setstate__(_bpe_state(spec, reader))
    return model


def _bpe_state(spec: Any, reader: _Reader, token_ids: Callable[[], dict] | None = None) -> dict[str, Any]:
    """A BPE model's pickling state from its tables (see :func:`_bpe_tables`; ``token_ids`` gives
    the vocabulary a mark stands for)."""
    state: dict[str, Any] = {}
    for key, (form, value) in spec.items():
        if form == "scalar":
            if not isinstance(value, _SCALARS):
                raise ValueError("a bad scalar")
            state[key] = value
        elif form == "array":
            state[key] = reader.get(value, array)
        elif form == "vocab":
            state[key] = _vocab_from(value, reader)
        elif form == "token_ids" and token_ids is not None:
            state[key] = token_ids()
        else:
            raise ValueError("a bad BPE field")
    return state


def _is_plain_ranks(tokenizer: Tokenizer) -> bool:
    """A tokenizer made by ``Tokenizer(name, ranks, pattern, specials, n_vocab=...)``."""
    return (isinstance(tokenizer.model, RanksBPE) and tokenizer.pattern is not None and tokenizer.normalizer is None
            and tokenizer.post_processor is None and tokenizer.decoder is None
            and isinstance(tokenizer.added, SpecialTokens))


def _describe(tokenizer: Tokenizer, source: dict | None) -> tuple[dict, _Tables]:
    """The JSON line and tables of an entry for ``tokenizer`` (:class:`_Unfit` when it has no form)."""
    tables = _Tables()
    if source is not None:
        model_obj = source.get("model")
        if not isinstance(model_obj, dict):
            raise _Unfit("no model object")
        rest = {k: v for k, v in source.items() if k != "model"}
        rest["model"] = {k: v for k, v in model_obj.items() if k not in ("vocab", "merges")}
        if type(tokenizer.model) is BPE:
            model = {"bpe": _bpe_tables(tokenizer.model, tables)}
        else:
            model = {"vocab": _vocab_tables(model_obj.get("vocab"), tables)}
        return {"recipe": "tokenizer.json", "name": tokenizer.name, "json": rest, "model": model}, tables
    if _is_plain_ranks(tokenizer):
        ranks = tokenizer.ranks
        return {"recipe": "ranks", "name": tokenizer.name, "pattern": tokenizer.pattern,
                "specials": dict(tokenizer.special_tokens), "n_vocab": tokenizer.n_vocab,
                "ranks": tables.byte_strings(list(ranks)), "ids": tables.ints(ranks.values())}, tables
    raise _Unfit("a tokenizer of another shape")


def _rebuild(meta: Any, reader: _Reader) -> Tokenizer:
    recipe = meta["recipe"]
    name = meta["name"]
    if not isinstance(name, str):
        raise ValueError("a bad name")
    if recipe == "ranks":
        tokens = reader.byte_strings(meta["ranks"])
        ranks = dict(zip(tokens, reader.ints(meta["ids"], len(tokens))))
        specials = meta["specials"]
        if not isinstance(meta["pattern"], str) or not isinstance(specials, dict) or type(meta["n_vocab"]) is not int:
            raise ValueError("a bad ranks entry")
        return Tokenizer(name, ranks, meta["pattern"], specials, n_vocab=meta["n_vocab"])
    if recipe == "tokenizer.json":
        # imported here: a GGUF or SentencePiece entry needs neither the JSON reader nor its models
        from ..core.formats import tokenizer_json as hf
        from ..core.formats.tokenizer_json_models import from_json as model_from_json

        obj = meta["json"]
        spec = meta["model"]
        if "bpe" in spec:
            model = _bpe_from(spec["bpe"], reader)
        else:
            model_obj = dict(obj["model"])
            model_obj["vocab"] = _vocab_from(spec["vocab"], reader)
            model = model_from_json(model_obj)
        return hf.from_json(obj, name, model=model)
    if recipe == "gguf":
        return _gguf_from(meta, reader)
    if recipe == "sentencepiece":
        return _sentencepiece_from(meta, reader)
    raise ValueError("an unknown recipe")


# ----- reading and writing entries ----------------------------------------------------------------


def _owned_regular(info: os.stat_result) -> bool:
    """A regular file of this user's that nobody else can write."""
    if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o022:
        return False
    return not hasattr(os, "getuid") or info.st_uid == os.getuid()


def read_owned(path: Path, limit: int) -> bytes | None:
    """The bytes of a cache file: ``None`` unless ``path`` is a regular file (not a link) of this
    user's that nobody else can write, of at most ``limit`` bytes. Every read of tokscope's caches
    goes through here. It is checked before it is opened (a named pipe is never opened) and again
    on the descriptor, opened without blocking or following a link.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> entry = folder / "e"
    >>> _ = entry.write_bytes(b"data"); entry.chmod(0o600)
    >>> read_owned(entry, 10), read_owned(entry, 3)
    (b'data', None)
    >>> entry.chmod(0o666); read_owned(entry, 10) is None
    True
    >>> os.mkfifo(folder / "pipe"); read_owned(folder / "pipe", 10) is None
    True
    """
    try:
        if not _owned_regular(os.stat(path, follow_symlinks=False)):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not _owned_regular(info) or info.st_size > limit:
                return None
            blob = handle.read(limit + 1)
    except (OSError, ValueError):
        return None
    return blob if len(blob) <= limit else None


def _read_entry(entry: Path, kind: str, digest: str) -> tuple[Any, _Reader] | None:
    """The JSON line and tables of ``entry``, or None when there is none or it fails any check."""
    blob = read_owned(entry, MAX_ENTRY_BYTES)
    if blob is None:
        return None
    head, newline, rest = blob.partition(b"\n")
    fields = head.split(b" ")
    if not newline or len(fields) != 7:
        return None
    payload_digest = hashlib.sha256(rest).hexdigest()
    if head + b"\n" != _header(kind, digest, payload_digest):
        return None
    line, newline, payload = rest.partition(b"\n")
    if not newline:
        return None
    try:
        meta = json.loads(line)
        return meta, _Reader(meta["tables"], memoryview(payload))
    except (ValueError, TypeError, KeyError, IndexError, UnicodeError, MemoryError, RecursionError):
        return None


def _load(entry: Path, kind: str, digest: str) -> Tokenizer | None:
    """The tokenizer in ``entry``, or None when there is none or it fails any check."""
    got = _read_entry(entry, kind, digest)
    if got is None:
        return None
    try:
        return _rebuild(*got)
    except (TokscopeError, ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError,
            UnicodeError, MemoryError, RecursionError):
        return None


def entry_path(kind: str, digest: str) -> Path:
    """Where the entry of ``kind`` for a source whose sha256 is ``digest`` is kept."""
    return _entry(kind, digest)


def load_ranks(kind: str, digest: str) -> dict[bytes, int] | None:
    """The ranks of the entry :func:`store_ranks` wrote, or None when there is none or it fails a
    check: the entry's own (see :func:`read_owned` and the header), and its tokens must be distinct
    and hold all 256 single bytes."""
    got = _read_entry(_entry(kind, digest), kind, digest)
    if got is None:
        return None
    meta, reader = got
    ranks: dict[bytes, int] = {}
    count = 0
    try:
        if meta["recipe"] != "rank-table":
            return None
        for length, blob_index, ids_index in meta["groups"]:
            blob = reader.get(blob_index, bytes)
            if type(length) is not int or length <= 0 or len(blob) % length:
                return None
            n = len(blob) // length
            # one C call splits a group's bytes into its tokens (a struct of n fixed-size strings)
            ranks.update(zip(struct.unpack(f"{length}s" * n, blob), reader.ints(ids_index, n)))
            count += n
    except (ValueError, TypeError, KeyError, IndexError, struct.error):
        return None
    if len(ranks) != count or not all(bytes([b]) in ranks for b in range(256)):
        return None
    return ranks


def store_ranks(kind: str, digest: str, ranks: dict[bytes, int]) -> None:
    """Keep ``ranks`` (parsed from a source whose sha256 is ``digest``) as an entry: per token
    length, the tokens' bytes joined and their ids."""
    tokens, ids = list(ranks), list(ranks.values())
    lengths = list(map(len, tokens))
    order = sorted(range(len(tokens)), key=lengths.__getitem__)  # stable: each group in the dict's order
    counts = Counter(lengths)
    tables = _Tables()
    groups = []
    at = 0
    try:
        for length in sorted(counts):
            chosen = order[at:at + counts[length]]
            at += len(chosen)
            groups.append([length, tables.add("B", b"".join(map(tokens.__getitem__, chosen))),
                           tables.ints(map(ids.__getitem__, chosen))])
    except (_Unfit, TypeError):
        return
    meta = {"recipe": "rank-table", "groups": groups}
    _write(_entry(kind, digest), kind, digest, meta, tables)


def cached_ranks(kind: str, digest: str, build: Callable[[], dict[bytes, int]]) -> dict[bytes, int]:
    """The ranks ``build()`` makes (parsing a vocabulary file whose sha256 is ``digest``), from the
    cache when it holds them (:func:`load_ranks`), else built and stored (:func:`store_ranks`).

    >>> import tempfile
    >>> os.environ["TOKSCOPE_CACHE_DIR"] = tempfile.mkdtemp()
    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> cached_ranks("doc", "0" * 64, lambda: ranks) == ranks  # built, then stored
    True
    >>> cached_ranks("doc", "0" * 64, lambda: {}) == ranks     # read back from the entry
    True
    >>> del os.environ["TOKSCOPE_CACHE_DIR"]
    """
    ranks = load_ranks(kind, digest)
    if ranks is None:
        ranks = build()
        store_ranks(kind, digest, ranks)
    return ranks


def _private_folder(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)


def _store(entry: Path, kind: str, digest: str, tokenizer: Tokenizer, source: dict | None) -> None:
    try:
        meta, tables = _describe(tokenizer, source)
    except (_Unfit, TypeError, ValueError, RecursionError, UnicodeError, OverflowError):
        return  # not cached: it is parsed each time
    _write(entry, kind, digest, meta, tables)


def _write(entry: Path, kind: str, digest: str, meta: dict, tables: _Tables) -> None:
    """Write an entry atomically: the header, the JSON line (``meta`` with the tables' descriptions), the tables."""
    try:
        meta["tables"] = tables.specs
        line = json.dumps(meta, ensure_ascii=True, separators=(",", ":"), allow_nan=True).encode("ascii")
    except (TypeError, ValueError, RecursionError, UnicodeError, OverflowError):
        return
    body = [line, b"\n", *tables.blobs]
    hasher = hashlib.sha256()
    for part in body:
        hasher.update(part)
    header = _header(kind, digest, hasher.hexdigest())
    tmp = None
    try:
        _private_folder(entry.parent)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=entry.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(header)
            for part in body:
                out.write(part)
        os.replace(tmp, entry)
        tmp = None
    except OSError:
        pass  # a read-only or full cache only costs speed
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


# ----- GGUF files ---------------------------------------------------------------------------------
#
# A GGUF file can be a model of many gigabytes, so it is never hashed: its entry is keyed by the
# file's identity (real path, device, inode, size, modification time in nanoseconds), and a file
# changed in any of those is read again. The entry holds the file's metadata (scalars in the JSON
# line; token, score and type arrays, the merges and the charsmap as tables) and, for a BPE model,
# the model's own tables (its vocabulary and merge arrays, as a tokenizer.json entry keeps them),
# so neither the file nor its merge list is read again. The tokenizer and its facts are rebuilt
# from that through :func:`~..core.formats.gguf.tokenizer_from_metadata` and
# :func:`~..core.formats.gguf.facts`, as a first load builds them.

#: the key of a cached GGUF tokenizer's :class:`~..core.formats.gguf.GGUFFacts` in
#: :meth:`~..core.tokenizer.tokenizer.Tokenizer.derived`
GGUF_FACTS = "sources.cache.gguf_facts"
_GGUF = "gguf"
#: numeric array types, and the table type each is kept as (``B`` tables come back as bytes)
_GGUF_ARRAYS = {"b": "q", "B": "B", "h": "q", "H": "q", "i": "q", "I": "q", "l": "q", "L": "q", "q": "q",
                "Q": "Q", "f": "d", "d": "d"}


def gguf_digest(path: str, info: os.stat_result) -> str:
    """The key of a GGUF file's entry: its real path and identity (never its bytes).

    >>> info = os.stat_result((0o100644, 7, 1, 1, 0, 0, 10, 0, 0, 0))
    >>> gguf_digest("/m.gguf", info) == gguf_digest("/m.gguf", info), len(gguf_digest("/m.gguf", info))
    (True, 64)
    """
    ident = f"{os.path.realpath(path)}\0{info.st_dev}\0{info.st_ino}\0{info.st_size}\0{info.st_mtime_ns}"
    return hashlib.sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def cached_gguf(path: Path, label: str) -> tuple[Tokenizer, gguf.GGUFFacts]:
    """The tokenizer of the GGUF file at ``path`` and its facts (:func:`~..core.formats.gguf.load`),
    from the cache when the file is unchanged; read and kept there otherwise."""
    name = os.fspath(path)
    try:
        before = os.stat(name)
    except OSError:
        before = None
    digest = entry = None
    if before is not None and stat.S_ISREG(before.st_mode):
        digest = gguf_digest(name, before)
        entry = _entry(_GGUF, digest)
        tokenizer = _load(entry, _GGUF, digest)
        if tokenizer is not None:
            facts = tokenizer.derived(GGUF_FACTS, lambda: None)
            if isinstance(facts, gguf.GGUFFacts):
                tokenizer.name = label
                return tokenizer, facts
    meta = gguf.read_metadata(name)
    tokenizer = gguf.tokenizer_from_metadata(meta, label, name)
    facts = gguf.facts(meta, name)
    if entry is not None and digest is not None:
        try:
            after = os.stat(name)
        except OSError:
            after = None
        if after is not None and _identity(after) == _identity(before):  # not changed while it was read
            _store_gguf(entry, digest, name, tokenizer, meta)
    return tokenizer, facts


def _store_gguf(entry: Path, digest: str, source: str, tokenizer: Tokenizer, meta: Any) -> None:
    tables = _Tables()
    try:
        keep_model = gguf.restorable(meta) and isinstance(tokenizer.model, BPE)
        fields: list[list] = []
        for key, value in meta.items():
            if keep_model and key == "tokenizer.ggml.merges":
                continue  # the model's own tables replace them
            fields.append([key, *_gguf_value(value, tables)])
        described: dict[str, Any] = {"recipe": "gguf", "name": tokenizer.name, "source": source, "fields": fields}
        if keep_model:
            tokens = meta.get("tokenizer.ggml.tokens")
            if type(tokens) is not tuple:
                raise ValueError("no tokens")
            described["bpe"] = _bpe_tables(tokenizer.model, tables, lambda vocab: _is_token_ids(vocab, tokens))
    except (_Unfit, TypeError, ValueError, RecursionError, UnicodeError, OverflowError):
        return
    _write(entry, _GGUF, digest, described, tables)


def _gguf_value(value: Any, tables: _Tables) -> list:
    """A metadata value as ``[form, data]`` (see :func:`_gguf_field`)."""
    if value is None or type(value) in (bool, int, float, str):
        return ["scalar", value]
    if isinstance(value, array):
        kept = _GGUF_ARRAYS.get(value.typecode)
        if kept is None:
            raise _Unfit(f"an array of type {value.typecode}")
        if kept == "B":
            return ["array", value.typecode, tables.add("B", value.tobytes())]
        return ["array", value.typecode, tables.add("", value if value.typecode == kept else array(kept, value))]
    if type(value) is tuple and (not value or set(map(type, value)) == {str}):
        return ["strings", tables.strings(list(value))]
    if type(value) is tuple and all(type(v) is bool for v in value):
        return ["bools", list(value)]
    raise _Unfit("a nested or mixed array")


def _gguf_field(form: Any, data: list, reader: _Reader) -> Any:
    """A metadata value from its ``[form, data]`` (the types the GGUF reader gives)."""
    if form == "scalar":
        value = data[0]
        if value is not None and type(value) not in (bool, int, float, str):
            raise ValueError("a bad scalar")
        return value
    if form == "array":
        typecode, index = data
        kept = _GGUF_ARRAYS.get(typecode) if isinstance(typecode, str) else None
        if kept is None:
            raise ValueError("a bad array type")
        if kept == "B":
            values = array("B")
            values.frombytes(reader.get(index, bytes))
            return values
        table = reader.get(index, array)
        if table.typecode != kept:
            raise ValueError("a table of the wrong type")
        return table if typecode == kept else array(typecode, table)
    if form == "strings":
        return tuple(reader.strings(data[0]))
    if form == "bools":
        if not isinstance(data[0], list) or not all(type(v) is bool for v in data[0]):
            raise ValueError("a bad list of booleans")
        return tuple(data[0])
    raise ValueError("an unknown metadata form")


def _is_token_ids(vocab: dict, tokens: tuple) -> bool:
    """Whether ``vocab`` is ``{token: id}`` of ``tokens`` by position (:func:`_token_ids`), told
    by comparing its keys and ids in order (C speed) when the tokens are distinct.

    >>> _is_token_ids({"a": 0, "b": 1}, ("a", "b")), _is_token_ids({"b": 1, "a": 0}, ("a", "b"))
    (True, True)
    >>> _is_token_ids({"a": 1}, ("a", "a")), _is_token_ids({"a": 0, "b": 2}, ("a", "b"))
    (True, False)
    """
    if len(vocab) == len(tokens) and list(vocab) == list(tokens) and list(vocab.values()) == list(range(len(tokens))):
        return True
    return vocab == dict(zip(tokens, range(len(tokens))))


def _token_ids(meta: Any) -> dict:
    """``{token: id}`` of a GGUF file's tokens by position (the last of two same tokens wins)."""
    tokens = meta.get("tokenizer.ggml.tokens")
    if type(tokens) is not tuple:
        raise ValueError("no tokens")
    return dict(zip(tokens, range(len(tokens))))


def _gguf_from(described: Any, reader: _Reader) -> Tokenizer:
    name, source, fields = described["name"], described["source"], described["fields"]
    if not isinstance(source, str) or not isinstance(fields, list):
        raise ValueError("a bad GGUF entry")
    meta: dict[str, Any] = {}
    for key, form, *data in fields:
        if not isinstance(key, str):
            raise ValueError("a bad metadata key")
        meta[key] = _gguf_field(form, data, reader)
    state = _bpe_state(described["bpe"], reader, lambda: _token_ids(meta)) if "bpe" in described else None
    if state is None and gguf.restorable(meta) and "tokenizer.ggml.merges" not in meta:
        raise ValueError("a BPE entry without its model")
    tokenizer = gguf.tokenizer_from_metadata(meta, name, source, model_state=state)
    facts = gguf.facts(meta, source)
    tokenizer.derived(GGUF_FACTS, lambda: facts)
    return tokenizer


# ----- SentencePiece .model files -----------------------------------------------------------------
#
# A ``.model`` file is keyed by its bytes' sha256 like a tokenizer.json; its entry holds the parsed
# ``ModelProto`` (pieces, scores, types, and the trainer's and normalizer's fields), so a second
# load skips the protobuf parse and builds the tokenizer from the tables. Only the Python reader
# is served: the compiled one parses a file faster than an entry is read (and a first load then
# writes nothing), and a model of fewer than SPM_CACHE_MIN_PIECES pieces parses about as fast as
# its entry reads (the figures are in bench/README.md).

_SPM = "spm-model"
#: the Python reader's models with fewer pieces than this are not cached
SPM_CACHE_MIN_PIECES = 4096


def cached_sentencepiece(path: Path, label: str) -> Tokenizer:
    """The tokenizer of the SentencePiece ``.model`` file at ``path``
    (:func:`~..core.formats.sentencepiece_model.from_model_bytes`), from the cache when it holds
    the file's parse (see above for when it does)."""
    from ..core.formats import sentencepiece_model

    data = read_source(path)
    source = os.fspath(path)
    if sentencepiece_model.compiled_reader() is not None:
        return sentencepiece_model.from_model_bytes(data, label, source)
    digest = hashlib.sha256(data).hexdigest()
    entry = _entry(_SPM, digest)
    tokenizer = _load(entry, _SPM, digest)
    if tokenizer is not None:
        tokenizer.name = label
        return tokenizer
    proto = sentencepiece_model.parse(data, source)
    tokenizer = sentencepiece_model.from_proto(proto, label, source)
    if len(proto.pieces) < SPM_CACHE_MIN_PIECES:
        return tokenizer
    tables = _Tables()
    try:
        described = {"recipe": "sentencepiece", "name": label, "source": source,
                     "pieces": tables.strings(list(proto.pieces)),
                     "scores": tables.add("B", _f32_bytes(proto.scores)),
                     "types": tables.add("B", bytes(proto.types)),
                     "trainer": _spec_fields(proto.trainer),
                     "normalizer": {**_spec_fields(proto.normalizer, skip="precompiled_charsmap"),
                                    "precompiled_charsmap": tables.add("B", proto.normalizer.precompiled_charsmap)}}
    except (_Unfit, TypeError, ValueError, OverflowError):
        return tokenizer
    _write(entry, _SPM, digest, described, tables)
    return tokenizer


def _f32_bytes(scores: Any) -> bytes:
    """Scores as float32 in this machine's byte order (what a ``.model`` file's parse holds)."""
    values = scores if isinstance(scores, array) and scores.typecode == "f" else array("f", scores)
    if values.itemsize != 4:
        raise _Unfit("no 4-byte floats")
    return values.tobytes()


def _spec_fields(spec: Any, skip: str = "") -> dict[str, Any]:
    return {name: getattr(spec, name) for name in spec.__dataclass_fields__ if name != skip}


def _spec_from(kind: Any, fields: Any, extra: dict[str, Any] | None = None) -> Any:
    """A trainer or normalizer spec from its fields, each of the type its default has."""
    if not isinstance(fields, dict):
        raise ValueError("a bad spec")
    defaults = kind()
    for name, value in fields.items():
        if name not in kind.__dataclass_fields__ or type(value) is not type(getattr(defaults, name)):
            raise ValueError("a bad spec field")
    return kind(**fields, **(extra or {}))


def _sentencepiece_from(described: Any, reader: _Reader) -> Tokenizer:
    from ..core.formats import sentencepiece_model

    name, source = described["name"], described["source"]
    if not isinstance(name, str) or not isinstance(source, str):
        raise ValueError("a bad SentencePiece entry")
    pieces = reader.strings(described["pieces"])
    scores = array("f")
    scores.frombytes(reader.get(described["scores"], bytes))  # this machine's byte order (the entry's key)
    types = reader.get(described["types"], bytes)
    normalizer = dict(described["normalizer"])
    charsmap = reader.get(normalizer.pop("precompiled_charsmap"), bytes)
    proto = sentencepiece_model.ModelProto(
        pieces, scores, types, _spec_from(sentencepiece_model.TrainerSpec, described["trainer"]),
        _spec_from(sentencepiece_model.NormalizerSpec, normalizer, {"precompiled_charsmap": charsmap}))
    return sentencepiece_model.from_proto(proto, name, source)
