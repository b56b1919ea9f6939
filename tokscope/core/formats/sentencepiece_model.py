"""A SentencePiece ``.model`` file (T5's ``spiece.model``, DeBERTa's ``spm.model``, Mistral's
``tokenizer.model.v3``, older Llama and Gemma ``tokenizer.model``) read into the core's pipeline.

The file is a serialized ``ModelProto`` (SentencePiece's ``sentencepiece_model.proto``). It is
read here by a small reader of the protocol-buffer wire format that knows the fields tokenizing
needs (the pieces with their scores and types, the trainer's model type and flags, the
normalizer's rules); every other field is skipped by its wire type, so files from any release
read alike. A hand-written reader keeps ``protobuf`` out of the dependencies and loads faster
(the figures are in ``bench/README.md``).

The pipeline is the library's: :class:`.SentencePieceNormalizer` (charsmap, user-defined pieces,
whitespace rules), no pre-tokenizer (the library runs its model over the whole normalized text),
then the model of the file's type: unigram (:mod:`.sentencepiece_unigram`), BPE by score
(:mod:`.sentencepiece_bpe`), characters or words. Ids equal ``SentencePieceProcessor.encode``'s.

>>> from tokscope.core.models.sentencepiece_pieces import NORMAL, UNKNOWN
>>> data = build_model([("<unk>", 0.0, UNKNOWN), ("▁hi", -1.0, NORMAL), ("h", -2.0, NORMAL)])
>>> looks_like(data), looks_like(b"IQ== 0\\n")
(True, False)
>>> tok = from_model_bytes(data, "tiny")
>>> tok.kind, tok.encode("hi  hi"), tok.encode("hx")
('Unigram (SentencePiece)', [1, 1], [0, 2, 0])

Control pieces (``<s>``, ``</s>``) are special tokens: refused in a text unless allowed, and with
``disallowed_special=()`` encoded as text, as the library always does.
"""

from __future__ import annotations

import re
import struct
import sys
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..added_tokens.specials import SpecialTokens
from ..decoders.sentencepiece import SentencePieceDecoder
from ..models.sentencepiece_bpe import SentencePieceBPE
from ..models.sentencepiece_char import SentencePieceChar
from ..models.sentencepiece_pieces import CONTROL, NORMAL, UNKNOWN, USER_DEFINED, Pieces
from ..models.sentencepiece_unigram import SentencePieceUnigram
from ..models.sentencepiece_word import SentencePieceWord
from ..normalizers.precompiled import CharsMap
from ..normalizers.sentencepiece import SentencePieceNormalizer
from ..processors import TemplateProcessing
from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..tokenizer.tokenizer import Tokenizer

#: files larger than this are refused before they are read (Gemma 3's is 4.7 MB)
MAX_FILE_BYTES = 256 * 1024 * 1024
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


@dataclass(frozen=True, slots=True)
class TrainerSpec:
    """The trainer fields that change tokens (defaults as SentencePiece's schema gives them).
    ``split_digits``, ``split_by_whitespace``, ``split_by_unicode_script``, ``split_by_number`` and
    ``max_sentencepiece_length`` shape training only: the library does not read them when it
    encodes (the tests hold models trained with each to its ids)."""

    model_type: int = 1
    byte_fallback: bool = False
    treat_whitespace_as_suffix: bool = False
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    unk_surface: str = " \u2047 "


@dataclass(frozen=True, slots=True)
class NormalizerSpec:
    name: str = ""
    precompiled_charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True


@dataclass(frozen=True, slots=True)
class ModelProto:
    """The parts of a ``ModelProto`` that tokenizing needs."""

    pieces: list[str]
    scores: list[float]
    types: list[int]
    trainer: TrainerSpec = field(default_factory=TrainerSpec)
    normalizer: NormalizerSpec = field(default_factory=NormalizerSpec)


# ----- the wire format ---------------------------------------------------------------------------


class _Truncated(Exception):
    pass


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise _Truncated
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise TokenizerFileError("a varint of the SentencePiece model is longer than 10 bytes")


def _fields(data: bytes, start: int, end: int) -> Iterator[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` of a message in ``data[start:end]``: an int for a
    varint, ``(start, end)`` for a length-delimited field, the raw 4 or 8 bytes otherwise."""
    pos = start
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > end:
                raise _Truncated
            value = (pos, pos + length)
            pos += length
        elif wire == 5:
            if pos + 4 > end:
                raise _Truncated
            value = data[pos:pos + 4]
            pos += 4
        elif wire == 1:
            if pos + 8 > end:
                raise _Truncated
            value = data[pos:pos + 8]
            pos += 8
        else:
            raise TokenizerFileError(f"the SentencePiece model has a field of wire type {wire}, which protobuf does not use")
        if number == 0:
            raise TokenizerFileError("the SentencePiece model has a field numbered 0")
        yield number, wire, value
    if pos != end:
        raise _Truncated


def _int32(value: int) -> int:
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(data: bytes, span: tuple[int, int], what: str) -> str:
    try:
        return data[span[0]:span[1]].decode("utf-8")
    except UnicodeDecodeError:
        raise TokenizerFileError(f"the SentencePiece model's {what} is not UTF-8") from None


_FLOAT = struct.Struct("<f")


def _piece_fields(data: bytes, start: int, end: int) -> tuple[str, bytes, int]:
    """One ``SentencePiece`` message read field by field (the slow path)."""
    piece, score, kind = "", b"\0\0\0\0", NORMAL
    for number, wire, value in _fields(data, start, end):
        if number == 1 and wire == 2:
            piece = data[value[0]:value[1]].decode("utf-8", "surrogateescape")
        elif number == 2 and wire == 5:
            score = value
        elif number == 3 and wire == 0:
            kind = _int32(value)
    return piece, score, kind


def _top(data: bytes) -> tuple[list[str], array, list[int], list[tuple[int, int]], list[tuple[int, int]]]:
    """The top-level fields: the pieces (text, scores as an ``array('f')``, types), and the spans
    of the trainer and normalizer messages. Most pieces are ``0a <len> 0a <len> <piece> 15
    <float> [18 <type>]`` with one-byte lengths: read in one step; any other layout (and every
    other field) goes through :func:`_fields`."""
    pieces: list[str] = []
    score_bytes = bytearray()
    types: list[int] = []
    trainer: list[tuple[int, int]] = []
    normalizer: list[tuple[int, int]] = []
    append_piece = pieces.append
    append_type = types.append
    n = len(data)
    pos = 0
    while pos < n:
        pos = _common_run(data, pos, pieces, score_bytes, types)
        if pos >= n:
            break
        if data[pos] == 0x0A and pos + 1 < n and data[pos + 1] < 0x80:
            # a piece message of fewer than 128 bytes
            size = data[pos + 1]
            start = pos + 2
            end = start + size
            if end > n:
                raise _Truncated
            if size >= 7 and data[start] == 0x0A:
                k = data[start + 1]
                p = start + 2 + k
                if k < 0x80 and p + 5 <= end and data[p] == 0x15:
                    rest = end - p - 5
                    if rest == 0:
                        append_piece(data[start + 2:p].decode("utf-8", "surrogateescape"))
                        score_bytes += data[p + 1:p + 5]
                        append_type(NORMAL)
                        pos = end
                        continue
                    if rest == 2 and data[p + 5] == 0x18 and data[p + 6] < 0x80:
                        append_piece(data[start + 2:p].decode("utf-8", "surrogateescape"))
                        score_bytes += data[p + 1:p + 5]
                        append_type(data[p + 6])
                        pos = end
                        continue
            piece, score, kind = _piece_fields(data, start, end)
            append_piece(piece)
            score_bytes += score
            append_type(kind)
            pos = end
            continue
        key, after = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 2:
            length, start = _varint(data, after)
            end = start + length
            if end > n:
                raise _Truncated
            if number == 1:
                piece, score, kind = _piece_fields(data, start, end)
                append_piece(piece)
                score_bytes += score
                append_type(kind)
            elif number == 2:
                trainer.append((start, end))
            elif number == 3:
                normalizer.append((start, end))
            pos = end
        else:
            for _ in _fields(data, pos, _field_end(data, pos)):
                pass
            pos = _field_end(data, pos)
    scores = array("f")
    scores.frombytes(bytes(score_bytes))
    if sys.byteorder != "little":
        scores.byteswap()
    return pieces, scores, types, trainer, normalizer


#: a piece message in the usual layout (one-byte lengths; a piece holding the byte 0x15 does not
#: match and is read field by field)
_COMMON = re.compile(rb"(\x0a([\x07-\x7f])\x0a([\x00-\x7f])([^\x15]*)\x15(....)(?:\x18([\x00-\x7f]))?)", re.DOTALL)


def _common_run(data: bytes, pos: int, pieces: list[str], score_bytes: bytearray, types: list[int]) -> int:
    """Read the run of pieces in the usual layout from ``pos`` in one regex pass (a file written
    by SentencePiece puts its pieces first); returns where the run ends (``pos`` when the piece
    there is not in the usual layout). Each match must start where the last one ended and its
    lengths must agree with its parts, else the run stops there."""
    found = _COMMON.findall(data, pos)
    good = 0
    at = pos
    startswith = data.startswith
    for whole, size, n, text, _, kind in found:
        if size[0] + 2 != len(whole) or n[0] != len(text) or not startswith(whole, at):
            break
        at += len(whole)
        good += 1
    if not good:
        return pos
    del found[good:]
    texts = b"\x00".join([f[3] for f in found]).decode("utf-8", "surrogateescape").split("\x00")
    if len(texts) != good:
        return pos
    pieces.extend(texts)
    score_bytes += b"".join([f[4] for f in found])
    types.extend([f[5][0] if f[5] else NORMAL for f in found])
    return at


def _field_end(data: bytes, pos: int) -> int:
    """Where the field at ``pos`` (not length-delimited) ends."""
    key, pos = _varint(data, pos)
    wire = key & 7
    if wire == 0:
        return _varint(data, pos)[1]
    if wire == 5:
        return pos + 4
    if wire == 1:
        return pos + 8
    raise TokenizerFileError(f"the SentencePiece model has a field of wire type {wire} at its top level")


_TRAINER_BOOLS = {35: "byte_fallback", 24: "treat_whitespace_as_suffix"}
_TRAINER_INTS = {3: "model_type", 40: "unk_id", 41: "bos_id", 42: "eos_id"}
_NORMALIZER_BOOLS = {3: "add_dummy_prefix", 4: "remove_extra_whitespaces", 5: "escape_whitespaces"}


def parse(data: bytes, source: str = "the SentencePiece model") -> ModelProto:
    """The :class:`ModelProto` in ``data``; a file that is not one is a one-line
    :class:`TokenizerFileError`."""
    if len(data) > MAX_FILE_BYTES:
        raise TokenizerFileError(f"{source} is {len(data):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit")
    data = bytes(data)
    try:
        pieces, scores, types, trainer_spans, normalizer_spans = _top(data)
        trainer: dict[str, Any] = {}
        normalizer: dict[str, Any] = {}
        for value in trainer_spans:
            for n, w, v in _fields(data, *value):
                if w == 0 and n in _TRAINER_BOOLS:
                    trainer[_TRAINER_BOOLS[n]] = bool(v)
                elif w == 0 and n in _TRAINER_INTS:
                    trainer[_TRAINER_INTS[n]] = _int32(v)
                elif w == 2 and n == 44:
                    trainer["unk_surface"] = _text(data, v, "unk_surface")
        for value in normalizer_spans:
            for n, w, v in _fields(data, *value):
                if w == 0 and n in _NORMALIZER_BOOLS:
                    normalizer[_NORMALIZER_BOOLS[n]] = bool(v)
                elif w == 2 and n == 1:
                    normalizer["name"] = _text(data, v, "normalizer name")
                elif w == 2 and n == 2:
                    normalizer["precompiled_charsmap"] = data[v[0]:v[1]]
    except (_Truncated, IndexError, struct.error):
        raise TokenizerFileError(f"{source} is not a SentencePiece model (truncated or not protobuf)") from None
    except TokenizerFileError as exc:
        raise TokenizerFileError(f"{source} is not a SentencePiece model ({str(exc).replace('the SentencePiece model ', '')})") from None
    if any("\udc80" <= c <= "\udcff" for c in _surrogates(pieces)):
        raise TokenizerFileError(f"{source} has a piece that is not UTF-8")
    if not pieces:
        raise TokenizerFileError(f"{source} is not a SentencePiece model (it has no pieces)")
    return ModelProto(pieces, scores, types, TrainerSpec(**trainer), NormalizerSpec(**normalizer))


def _surrogates(pieces: list[str]) -> str:
    """The characters of the pieces that may be bytes that were not UTF-8 (decoded as lone
    surrogates): found by one search over the pieces joined, not a loop over them."""
    joined = "".join(pieces)
    return "".join(_LONE.findall(joined)) if _LONE.search(joined) else ""


_LONE = re.compile("[\udc80-\udcff]")


def looks_like(head: bytes) -> bool:
    """True when ``head`` (the first bytes of a file) starts like a SentencePiece model: a
    ``pieces`` entry (field 1) whose own first field is the piece text, then its score. A
    tiktoken rank file (Llama 3's ``tokenizer.model``: base64 lines) starts with a letter, never
    with the byte ``0x0A``.

    >>> looks_like(b"\\x0a\\x0b\\x0a\\x05<unk>\\x15\\x00\\x00\\x00\\x00\\x18\\x02")
    True
    >>> looks_like(b"IQ== 0\\nIg== 1\\n"), looks_like(b"")
    (False, False)
    """
    if len(head) < 4 or head[0] != 0x0A:
        return False
    try:
        length, pos = _varint(head, 1)
        if length < 4 or head[pos] != 0x0A:
            return False
        n, pos = _varint(head, pos + 1)
        if n == 0 or n > length:
            return False
        stop = pos + n
        if stop < len(head) and head[stop] not in (0x15, 0x18):
            return False
        head[pos:min(stop, len(head))].decode("utf-8", "ignore")
    except (_Truncated, TokenizerFileError, IndexError):
        return False
    return True


# ----- the tokenizer -----------------------------------------------------------------------------


def from_model_bytes(data: bytes, name: str, source: str = "the SentencePiece model") -> Tokenizer:
    """A tokenizer from the bytes of a ``.model`` file."""
    return from_proto(parse(data, source), name, source)


def from_proto(proto: ModelProto, name: str, source: str = "the SentencePiece model") -> Tokenizer:
    trainer = proto.trainer
    kind = MODEL_TYPES.get(trainer.model_type)
    if kind is None:
        raise UnsupportedComponentError("model type", str(trainer.model_type), source)
    table = Pieces(proto.pieces, proto.scores, proto.types, byte_fallback=trainer.byte_fallback)
    spec = proto.normalizer
    charsmap = CharsMap(spec.precompiled_charsmap) if spec.precompiled_charsmap else None
    normalizer = SentencePieceNormalizer(
        charsmap, add_dummy_prefix=spec.add_dummy_prefix, remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces, treat_whitespace_as_suffix=trainer.treat_whitespace_as_suffix,
        user_symbols=table.user_symbols.symbols, name=spec.name)
    model: Any
    if kind == "unigram":
        model = SentencePieceUnigram(table, treat_whitespace_as_suffix=trainer.treat_whitespace_as_suffix)
    elif kind == "bpe":
        model = SentencePieceBPE(table, treat_whitespace_as_suffix=trainer.treat_whitespace_as_suffix)
    elif kind == "char":
        model = SentencePieceChar(table)
    else:
        model = SentencePieceWord(table)
    decoder = SentencePieceDecoder(
        control=[proto.pieces[i] for i in table.by_type.get(CONTROL, ())],
        unknown=[proto.pieces[i] for i in table.by_type.get(UNKNOWN, ())],
        strip_prefix=spec.add_dummy_prefix and not trainer.treat_whitespace_as_suffix, unk_surface=trainer.unk_surface)
    # control pieces (<s>, </s>) are special tokens: the library never finds them in a text, and
    # neither does tokscope unless they are allowed (text holding one is refused by default, as
    # for every special token; disallowed_special=() encodes it as text, the library's ids)
    specials = SpecialTokens({proto.pieces[i]: i for i in table.by_type.get(CONTROL, ())})
    return Tokenizer.from_stages(name, model=model, normalizer=normalizer, decoder=decoder, added_tokens=specials,
                                 post_processor=_template(table, trainer.bos_id, -1))


def _template(table: Pieces, bos_id: int, eos_id: int) -> TemplateProcessing | None:
    """The ids put around a text when the caller asks for the model's special tokens: BOS before
    it (as Llama and Mistral use their models), EOS after it when asked."""
    ends = [(table.id_to_token(i), i) for i in (bos_id, eos_id) if i is not None and 0 <= i < len(table)]
    if not ends:
        return None
    names = {i: p for p, i in ends}
    single = " ".join([*([names[bos_id]] if bos_id in names else []), "$A", *([names[eos_id]] if eos_id in names else [])])
    pair = single.replace("$A", "$A $B:1")
    return TemplateProcessing(single, pair, [(p, i) for p, i in ends])


def build_model(pieces: Sequence[tuple[str, float, int]], *, trainer: Mapping[int, int] | None = None,
                normalizer: Mapping[int, Any] | None = None) -> bytes:
    """The bytes of a ``ModelProto`` with ``pieces`` (``(piece, score, type)``) and the given
    trainer/normalizer fields (``{field number: value}``): for tests and examples.

    >>> parse(build_model([("<unk>", 0.0, UNKNOWN)], trainer={3: 2})).trainer.model_type
    2
    """
    def varint(v: int) -> bytes:
        v &= 0xFFFFFFFFFFFFFFFF
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    def field_bytes(number: int, value: Any) -> bytes:
        if isinstance(value, (bytes, str)):
            raw = value.encode("utf-8") if isinstance(value, str) else value
            return varint(number << 3 | 2) + varint(len(raw)) + raw
        if isinstance(value, float):
            return varint(number << 3 | 5) + _FLOAT.pack(value)
        return varint(number << 3) + varint(int(value))

    out = bytearray()
    for piece, score, kind in pieces:
        body = field_bytes(1, piece) + field_bytes(2, float(score)) + (field_bytes(3, kind) if kind != NORMAL else b"")
        out += field_bytes(1, body)
    if trainer:
        out += field_bytes(2, b"".join(field_bytes(n, v) for n, v in trainer.items()))
    if normalizer:
        out += field_bytes(3, b"".join(field_bytes(n, v) for n, v in normalizer.items()))
    return bytes(out)
