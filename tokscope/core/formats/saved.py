"""Saved tokenizers: tokscope's own file format, and tiktoken's ``.tiktoken`` rank files.

**The tokscope format** (version 1) is one UTF-8 JSON object::

    {
      "format": "tokscope-bpe",            # always this string: says what the file is
      "version": 1,                        # the format version (files from a newer tokscope are refused)
      "name": "my-bpe",                    # the tokenizer's name (shown in lists; not the file name)
      "pattern": "\\\\S+",                 # the pre-tokenization regex (Python 'regex' syntax)
      "pattern_name": "words",             # optional: the name the pattern was chosen by, or null
      "merges": [["6c", "6f"], ...],       # the merges in learned order: the left and right parts'
                                           #   bytes as lowercase hex; merge i makes token id 256 + i
      "merge_counts": [3, ...],            # optional: each pair's count when it was merged, or null
      "special_tokens": {"<eos>": 259},    # special token -> id (ids after the last merge, distinct)
      "metadata": {                        # free-form but tokscope writes:
        "created": "2025-01-31T12:00:00Z", #   when (UTC),
        "tokscope_version": "0.1.0",       #   by which version,
        "source": "trained",               #   trained, or imported from a .tiktoken file,
        "options": {...},                  #   the training options (size, pattern, tie, ...),
        "corpus": {...},                   #   corpus statistics (texts, chars, bytes, chunks, ...),
        "stop_reason": "target"            #   why training stopped
      }
    }

Ids 0..255 are the single bytes 0x00..0xFF; each merge's parts must already be tokens (bytes or
earlier merges) and its joined bytes must be new, so a file always describes a valid byte-level
BPE whose ranks are its ids. :func:`load` checks all of this and names the first problem in a
one-line :class:`SavedFormatError` (not JSON, truncated, another format, a newer version, a bad
merge, clashing special tokens, an invalid pattern). Files are written atomically by
:func:`tokscope.core.formats.files.write_atomic`, so a crash never leaves half a file behind.

**tiktoken's format** holds ranks only (``base64(token) rank`` per line, no pattern, no special
tokens). :func:`export_tiktoken` writes one; :func:`import_tiktoken` reads one together with a
pattern. Importing needs ranks 0..255 to be the bytes in order and every other token to be two
lower-ranked tokens joined (true of every file tokscope exports).

>>> saved = SavedTokenizer("tiny", r"\\S+", ((b"a", b"b"),), {"<eos>": 257})
>>> again = loads(dumps(saved))
>>> again.ranks[b"ab"], again.special_tokens, again.name
(256, {'<eos>': 257}, 'tiny')
"""

from __future__ import annotations

import binascii
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import regex

from ..models.ranks import merge as bpe_merge
from .files import ExistsError, SaveError, check_target, write_atomic
from ..text.display import safe_text
from .tiktoken_ranks import FormatError, dump_tiktoken_bpe, parse_tiktoken_bpe
from ..patterns.guard import PatternError, compile_checked
from ..tokenizer.tokenizer import Tokenizer

__all__ = [
    "ExistsError", "FORMAT_NAME", "FORMAT_VERSION", "SaveError", "SavedFormatError", "SavedTokenizer", "check_writable",
    "dumps", "export_tiktoken", "from_document", "from_result", "import_tiktoken", "load", "loads", "merges_from_ranks",
    "save", "to_document", "write_atomic",
]

FORMAT_NAME = "tokscope-bpe"
FORMAT_VERSION = 1

#: Files larger than this are refused before they are read (a 1M-merge tokenizer is about 40 MB).
MAX_FILE_BYTES = 256 * 1024 * 1024
#: The most merges a file may hold (four times the trainer's own limit).
MAX_MERGES = 4 * (1 << 20)
#: The largest token id (tiktoken keeps ids in 32 bits).
MAX_TOKEN_ID = 2**31 - 1
#: Numbers in a file longer than this many digits are refused (counts and ids fit in far fewer).
MAX_DIGITS = 18


class SavedFormatError(FormatError):
    """A saved tokenizer file that cannot be read (one-line message naming the file)."""


@dataclass(frozen=True)
class SavedTokenizer:
    """What a saved file holds. ``merges`` are ``(left bytes, right bytes)`` in learned order."""

    name: str
    pattern: str
    merges: tuple[tuple[bytes, bytes], ...]
    special_tokens: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    merge_counts: tuple[int, ...] | None = None
    pattern_name: str | None = None

    @property
    def ranks(self) -> dict[bytes, int]:
        ranks = {bytes([i]): i for i in range(256)}
        for i, (left, right) in enumerate(self.merges):
            ranks[left + right] = 256 + i
        return ranks

    @property
    def vocab_size(self) -> int:
        return 256 + len(self.merges)

    @property
    def n_vocab(self) -> int:
        return max([self.vocab_size - 1, *self.special_tokens.values()]) + 1

    def tokenizer(self) -> Tokenizer:
        return Tokenizer(self.name, self.ranks, self.pattern, dict(self.special_tokens))


def from_result(result: Any, name: str, *, metadata: Mapping[str, Any] | None = None) -> SavedTokenizer:
    """A :class:`SavedTokenizer` from a :class:`~tokscope.core.train.trainer.TrainResult`."""
    from dataclasses import asdict

    meta: dict[str, Any] = {
        "source": "trained",
        "options": dict(result.options),
        "corpus": asdict(result.stats),
        "stop_reason": result.stop_reason,
        "tokens_before": result.lengths[0],
        "tokens_after": result.lengths[-1],
    }
    meta.update(metadata or {})
    return SavedTokenizer(
        name=name,
        pattern=result.pattern,
        merges=tuple((m.left, m.right) for m in result.merges),
        special_tokens=dict(result.special_tokens),
        metadata=meta,
        merge_counts=tuple(m.count for m in result.merges),
        pattern_name=result.pattern_name,
    )


# ----- writing ------------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _version() -> str:
    """The installed tokscope's version, read from its metadata: the core does not import the
    package root (which offers ``get_encoding`` through the sources, a layer above the core)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tokscope")
    except PackageNotFoundError:
        return "unknown"


def to_document(saved: SavedTokenizer) -> dict[str, Any]:
    """The JSON object for ``saved`` (adds ``created``/``tokscope_version`` when missing)."""
    metadata = {"created": _now(), "tokscope_version": _version()}
    metadata.update(saved.metadata)
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "name": saved.name,
        "pattern": saved.pattern,
        "pattern_name": saved.pattern_name,
        "merges": [[left.hex(), right.hex()] for left, right in saved.merges],
        "merge_counts": list(saved.merge_counts) if saved.merge_counts is not None else None,
        "special_tokens": dict(saved.special_tokens),
        "metadata": metadata,
    }


def dumps(saved: SavedTokenizer) -> bytes:
    """The file's bytes: indented JSON with one merge per line, so the files read and diff well."""
    doc = to_document(saved)
    merges = doc.pop("merges")
    counts = doc.pop("merge_counts")
    head = json.dumps(doc, ensure_ascii=False, indent=1)[:-2]  # without the closing "\n}"
    pairs = ",\n  ".join(json.dumps(pair) for pair in merges)
    tail = f',\n "merge_counts": {json.dumps(counts, separators=(",", ":"))}'
    tail += ',\n "merges": [\n  ' + pairs + "\n ]\n}\n" if merges else ',\n "merges": []\n}\n'
    return (head + tail).encode("utf-8")


def check_writable(path: str | os.PathLike[str], *, overwrite: bool = True, inputs: Sequence[str] = ()) -> Path:
    """Raise :class:`SaveError` now if ``path`` cannot be written (see
    :func:`tokscope.core.formats.files.check_target`); ``path`` itself is not touched."""
    return check_target(path, overwrite=overwrite, inputs=inputs)


def save(path: str | os.PathLike[str], saved: SavedTokenizer, *, exclusive: bool = False) -> Path:
    """Write ``saved`` to ``path`` atomically (``exclusive``: only if no file has that name yet,
    else :class:`~tokscope.core.formats.files.ExistsError`); returns the file written."""
    return write_atomic(path, dumps(saved), exclusive=exclusive)


# ----- reading ------------------------------------------------------------------------------------


def _hex(value: Any, where: str) -> bytes:
    if not isinstance(value, str) or not value:
        raise SavedFormatError(f"{where} is not a hex string")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise SavedFormatError(f"{where} is not a hex string: {value[:20]!r}") from None


def from_document(doc: Any, source: str = "tokenizer file") -> SavedTokenizer:
    """Validate a parsed JSON document and return what it holds (see the module docstring)."""

    def fail(message: str) -> SavedFormatError:
        return SavedFormatError(f"{source}: {message}")

    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise fail(f'not a tokscope tokenizer file (no "format": "{FORMAT_NAME}")')
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise fail(f"bad format version {version!r}")
    if version > FORMAT_VERSION:
        raise fail(f"written by a newer tokscope (format version {version}; this one reads {FORMAT_VERSION})")
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise fail('"name" must be a non-empty string')
    pattern = doc.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise fail('"pattern" must be a non-empty string')
    try:
        compile_checked(pattern)
    except PatternError as exc:
        raise fail(str(exc)) from None
    pattern_name = doc.get("pattern_name")
    if pattern_name is not None and not isinstance(pattern_name, str):
        raise fail('"pattern_name" must be a string or null')
    raw_merges = doc.get("merges")
    if not isinstance(raw_merges, list):
        raise fail('"merges" must be a list')
    if len(raw_merges) > MAX_MERGES:
        raise fail(f"{len(raw_merges):,} merges; at most {MAX_MERGES:,}")
    known = {bytes([i]) for i in range(256)}
    merges = []
    for i, pair in enumerate(raw_merges):
        where = f"merge {i} (id {256 + i})"
        if not isinstance(pair, list) or len(pair) != 2:
            raise fail(f"{where} is not a pair [left, right]")
        try:
            left = _hex(pair[0], f"{where} left part")
            right = _hex(pair[1], f"{where} right part")
        except SavedFormatError as exc:
            raise fail(str(exc)) from None
        if left not in known or right not in known:
            raise fail(f"{where} joins parts that are not tokens yet")
        joined = left + right
        if joined in known:
            raise fail(f"{where} makes bytes {joined.hex()} that are already a token")
        known.add(joined)
        merges.append((left, right))
    counts = doc.get("merge_counts")
    if counts is not None:
        if (
            not isinstance(counts, list)
            or len(counts) != len(merges)
            or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts)
        ):
            raise fail('"merge_counts" must be null or one whole number per merge')
        counts = tuple(counts)
    specials = doc.get("special_tokens", {})
    if not isinstance(specials, dict):
        raise fail('"special_tokens" must be an object {token: id}')
    first_free = 256 + len(merges)
    seen_ids: set[int] = set()
    for token, token_id in specials.items():
        if not token:
            raise fail("a special token is empty")
        if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < first_free:
            raise fail(f"special token {token!r} has id {token_id!r}; special ids start at {first_free}")
        if token_id > MAX_TOKEN_ID:
            raise fail(f"special token {token!r} has id {token_id:,}; ids are at most {MAX_TOKEN_ID:,}")
        if token_id in seen_ids:
            raise fail(f"special token {token!r} reuses id {token_id}")
        seen_ids.add(token_id)
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        raise fail('"metadata" must be an object')
    return SavedTokenizer(name, pattern, tuple(merges), dict(specials), metadata, counts, pattern_name)


class _NumberTooLong(ValueError):
    pass


def _parse_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_DIGITS:
        raise _NumberTooLong(digits)
    return int(digits)


def _parse_constant(name: str) -> Any:
    raise _NumberTooLong(name)  # NaN, Infinity: not JSON


def loads(data: bytes, source: str = "tokenizer file") -> SavedTokenizer:
    """Parse and validate a saved file's bytes (a UTF-8 byte order mark is allowed). Whatever the
    bytes, the result is a :class:`SavedTokenizer` or a one-line :class:`SavedFormatError`: nesting
    too deep for the parser, numbers of thousands of digits and the like included."""
    source = safe_text(source)
    if len(data) > MAX_FILE_BYTES:
        raise SavedFormatError(f"{source}: the file is {len(data):,} bytes; tokenizer files are at most "
                               f"{MAX_FILE_BYTES:,}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SavedFormatError(f"{source}: not a tokscope tokenizer file (not UTF-8 text)") from None
    if not text.strip():
        raise SavedFormatError(f"{source}: the file is empty")
    try:
        doc = json.loads(text, parse_int=_parse_int, parse_constant=_parse_constant)
    except json.JSONDecodeError as exc:
        if _looks_like_tiktoken(data):
            raise SavedFormatError(
                f"{source}: this is a .tiktoken rank file; import it with a pattern "
                f"(tokscope import FILE --pattern NAME)"
            ) from None
        truncated = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        what = "truncated" if truncated else f"not valid JSON at line {exc.lineno} column {exc.colno}"
        raise SavedFormatError(f"{source}: not a tokscope tokenizer file ({what})") from None
    except _NumberTooLong as exc:
        what = "NaN or Infinity" if exc.args[0] in ("NaN", "Infinity", "-Infinity") else \
            f"a number of {len(exc.args[0].lstrip('-')):,} digits"
        raise SavedFormatError(f"{source}: the file holds {what}, which no tokenizer field takes") from None
    except RecursionError:
        raise SavedFormatError(f"{source}: not a tokscope tokenizer file (nested too deeply)") from None
    return from_document(doc, source)


def _looks_like_tiktoken(data: bytes) -> bool:
    first = data.split(b"\n", 1)[0].strip()
    return regex.fullmatch(rb"[A-Za-z0-9+/]+={0,2} [0-9]+", first) is not None


def load(path: str | os.PathLike[str]) -> SavedTokenizer:
    """Read and validate a saved tokenizer file (at most :data:`MAX_FILE_BYTES` are read)."""
    shown = safe_text(os.fspath(path))
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise SavedFormatError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise SavedFormatError(f"{shown} is a directory, not a file") from None
    except PermissionError:
        raise SavedFormatError(f"{shown}: permission denied") from None
    except OSError as exc:
        raise SavedFormatError(f"{shown}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise SavedFormatError(f"{shown}: the file is over {MAX_FILE_BYTES:,} bytes; tokenizer files are smaller")
    return loads(data, os.fspath(path))


# ----- tiktoken's .tiktoken files -------------------------------------------------------------------


def export_tiktoken(path: str | os.PathLike[str], ranks: Mapping[bytes, int]) -> Path:
    """Write ``ranks`` in tiktoken's ``.tiktoken`` format, atomically."""
    return write_atomic(path, dump_tiktoken_bpe(ranks))


def merges_from_ranks(ranks: Mapping[bytes, int], source: str = "rank file") -> list[tuple[bytes, bytes]]:
    """Recover a merge list from ``bytes -> rank`` (ranks 0..255 the bytes in order, dense above).

    Each token's parts are what BPE makes of its bytes with only lower ranks when that is two
    parts, else the first split into two lower-ranked tokens. Either way the ranks rebuilt from
    the merges equal ``ranks``, so encodings are identical.

    >>> ranks = {bytes([i]): i for i in range(256)} | {b"ab": 256, b"abc": 257}
    >>> merges_from_ranks(ranks)
    [(b'a', b'b'), (b'ab', b'c')]
    """
    for i in range(256):
        if ranks.get(bytes([i])) != i:
            raise SavedFormatError(
                f"{source}: ranks 0..255 must be the single bytes in byte order "
                f"(byte 0x{i:02x} has rank {ranks.get(bytes([i]))}); tokscope can only import such files"
            )
    order = sorted((rank, token) for token, rank in ranks.items() if len(token) > 1)
    merges: list[tuple[bytes, bytes]] = []
    longest = 1  # the longest token of a lower rank: no part can be longer (so a long token costs linear time)
    for expected, (rank, token) in enumerate(order, 256):
        if rank != expected:
            raise SavedFormatError(f"{source}: ranks are not consecutive (rank {expected} is missing)")
        parts = bpe_merge(token, ranks, max_rank=rank)
        if len(parts) != 2:
            for cut in range(max(1, len(token) - longest), min(len(token) - 1, longest) + 1):
                left_rank = ranks.get(token[:cut])
                right_rank = ranks.get(token[cut:])
                if left_rank is not None and right_rank is not None and left_rank < rank and right_rank < rank:
                    parts = [token[:cut], token[cut:]]
                    break
            else:
                shown = token.hex() if len(token) <= 32 else f"{token[:32].hex()}... {len(token):,} bytes"
                raise SavedFormatError(f"{source}: token of rank {rank} ({shown}) is not two lower-ranked tokens joined")
        merges.append((parts[0], parts[1]))
        longest = max(longest, len(token))
    return merges


def import_tiktoken(
    data: bytes,
    *,
    name: str,
    pattern: str,
    pattern_name: str | None = None,
    special_tokens: Sequence[str] | Mapping[str, int] = (),
    source: str = "rank file",
) -> SavedTokenizer:
    """A :class:`SavedTokenizer` from a ``.tiktoken`` file's bytes and a pattern.

    ``special_tokens`` given as a list take the ids after the last rank, in order.
    """
    if not data.strip():
        raise SavedFormatError(f"{source}: the file is empty")
    try:
        compile_checked(pattern)
    except PatternError as exc:
        raise SavedFormatError(str(exc)) from None
    try:
        ranks = parse_tiktoken_bpe(data, source=source)
    except FormatError as exc:
        raise SavedFormatError(str(exc)) from None
    except binascii.Error:  # pragma: no cover - parse_tiktoken_bpe maps these already
        raise SavedFormatError(f"{source}: not a .tiktoken rank file") from None
    if len(set(ranks.values())) != len(ranks):
        raise SavedFormatError(f"{source}: two tokens share a rank")
    merges = merges_from_ranks(ranks, source)
    first_free = 256 + len(merges)
    if isinstance(special_tokens, Mapping):
        specials = dict(special_tokens)
    else:
        if len(set(special_tokens)) != len(special_tokens):
            raise SavedFormatError("a special token is given twice")
        specials = {token: first_free + i for i, token in enumerate(special_tokens)}
    saved = SavedTokenizer(
        name=name,
        pattern=pattern,
        merges=tuple(merges),
        special_tokens=specials,
        metadata={"source": f"imported from {source}"},
        merge_counts=None,
        pattern_name=pattern_name,
    )
    # the same checks as loading a file: clashing special ids and the like
    return from_document(to_document(saved), source)
