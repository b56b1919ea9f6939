"""A SentencePiece ``.model`` file (T5's ``spiece.model``, DeBERTa's ``spm.model``, Mistral's
``tokenizer.model.v3``, older Llama and Gemma ``tokenizer.model``) read into the core's pipeline.

The file is a serialized ``ModelProto`` (SentencePiece's ``sentencepiece_model.proto``). It is
read here by a small reader of the protocol-buffer wire format that knows the fields tokenizing
needs (the pieces with their scores and types, the trainer's model type and flags, the
normalizer's rules); every other field is skipped by its wire type, so files from any release
read alike. A hand-written reader keeps ``protobuf`` out of the dependencies and loads faster:
protobuf's import alone costs more than the library's whole load. The pieces are read by the
compiled reader of the optional extension when it is installed (``merge.c``'s
``spm_model_pieces``), else by the Python one, which gives the same answers and errors and is
the tests' oracle (the figures are in ``bench/README.md``).

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

import operator
import re
import struct
import sys
from array import array
from itertools import repeat
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
from ..text.compiled import CompiledPart

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
#
# The compiled reader (``merge.c``'s ``spm_model_pieces``, in the optional ``_tokscope_merge``
# extension) reads the top level as :func:`_top` does, check for check; without it (no C compiler
# at install, or switched off) :func:`_top` runs, and it stays the tests' oracle.


compiled_part = CompiledPart("SPM_ABI")


def use_compiled(on: bool, module: Any = None) -> None:
    """Read the pieces with the compiled reader when installed (the default), or with the Python
    one (tests and benches compare the two); ``module`` puts in a compiled one built elsewhere.

    >>> was = compiled_reader() is not None
    >>> use_compiled(False); compiled_reader() is None
    True
    >>> use_compiled(True); (compiled_reader() is not None) == was
    True
    """
    compiled_part.use(on, module)


def compiled_reader() -> Any:
    """The compiled reader's module in use, or None (the Python reader)."""
    return compiled_part.get()



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
        key = data[pos]  # one-byte varints (nearly every key and length) read inline
        if key < 0x80:
            pos += 1
        else:
            key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length = data[pos] if pos < end else 0x80
            if length < 0x80:
                pos += 1
            else:
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


class _NotUtf8(Exception):
    pass


def _piece_text(raw: bytes) -> str:
    """A piece's text; bytes that are not UTF-8 are :class:`_NotUtf8` (the library refuses them)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotUtf8 from None


def _piece_fields(data: bytes, start: int, end: int) -> tuple[str, bytes, int]:
    """One ``SentencePiece`` message read field by field (the slow path)."""
    piece, score, kind = "", b"\0\0\0\0", NORMAL
    for number, wire, value in _fields(data, start, end):
        if number == 1 and wire == 2:
            piece = _piece_text(data[value[0]:value[1]])
        elif number == 2 and wire == 5:
            score = value
        elif number == 3 and wire == 0:
            kind = _int32(value)
    return piece, score, kind


def _read_top(data: bytes) -> tuple[list[str], array, list[int], list[tuple[int, int]], list[tuple[int, int]]]:
    """:func:`_top`'s answer, from the compiled reader when there is one (its errors turned into
    the Python reader's)."""
    module = compiled_reader()
    if module is None:
        return _top(data)
    try:
        pieces, raw, types, trainer, normalizer = module.spm_model_pieces(data)
    except ValueError as exc:
        kind, detail = exc.args
        if kind == "truncated":
            raise _Truncated from None
        if kind == "utf8":
            raise _NotUtf8 from None
        raise TokenizerFileError(detail) from None
    scores = array("f")
    scores.frombytes(raw)
    if sys.byteorder != "little":
        scores.byteswap()
    return pieces, scores, types, trainer, normalizer


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
    window = _WINDOW[0]
    while pos < n:
        pos, window = _common_run(data, pos, window, pieces, score_bytes, types)
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
                        append_piece(_piece_text(data[start + 2:p]))
                        score_bytes += data[p + 1:p + 5]
                        append_type(NORMAL)
                        pos = end
                        continue
                    if rest == 2 and data[p + 5] == 0x18 and data[p + 6] < 0x80:
                        append_piece(_piece_text(data[start + 2:p]))
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
        elif wire == 0:
            start = end = _varint(data, after)[1]
        elif wire in (1, 5):
            start = end = after + (4 if wire == 5 else 8)
        else:
            raise TokenizerFileError(f"the SentencePiece model has a field of wire type {wire} at its top level")
        if end > n:
            raise _Truncated
        if number == 0:
            raise TokenizerFileError("the SentencePiece model has a field numbered 0")
        if wire == 2 and number == 1:
            piece, score, kind = _piece_fields(data, start, end)
            append_piece(piece)
            score_bytes += score
            append_type(kind)
        elif wire == 2 and number == 2:
            trainer.append((start, end))
        elif wire == 2 and number == 3:
            normalizer.append((start, end))
        pos = end
    scores = array("f")
    scores.frombytes(bytes(score_bytes))
    if sys.byteorder != "little":
        scores.byteswap()
    return pieces, scores, types, trainer, normalizer


#: a run of piece messages in the usual layout: ``0a <size> 0a <length> <text> 15 <float>
#: [18 <type>]`` with one-byte lengths (where it ends is found at C speed)
_RUN = re.compile(rb"(?:\x0a[\x07-\x7f]\x0a[\x00-\x7f][^\x15]*\x15....(?:\x18[\x00-\x7f])?)*", re.DOTALL)
#: what lies between the texts of two pieces of such a run: the first one's score and type, the
#: second one's two lengths
_BETWEEN = re.compile(rb"\x15(....)(?:\x18([\x00-\x7f]))?\x0a([\x07-\x7f])\x0a([\x00-\x7f])", re.DOTALL)
#: a closing header after a run, so that its last piece is followed like the others
_SENTINEL = b"\x0a\x07\x0a\x00"
#: a message's size over its text's length: 7 without a type field, 9 with one
_OVERHEAD = bytes.maketrans(b"\x00\x01", b"\x07\x09")
_NORMAL_TYPE = bytes((NORMAL,))
_FLAGGED = re.compile(b"\x01")
#: bytes a run is first looked for in, and at most (it doubles while whole windows read right)
_WINDOW = (1 << 12, 1 << 22)


def _common_run(data: bytes, pos: int, window: int, pieces: list[str], score_bytes: bytearray,
                types: list[int]) -> tuple[int, int]:
    """Read the run of pieces in the usual layout from ``pos`` (a file written by SentencePiece
    puts its pieces first), looking at most ``window`` bytes ahead; returns where the run read
    ends (``pos`` when the piece there is not in that layout) and the next window. The run's end
    is one regex match; its texts, scores, types and lengths one ``split`` of it; every length
    the file states is then checked against what the split found, as whole byte strings (no step
    per piece in Python), and the pieces are kept up to the first that differs (a text holding
    the byte 0x15, a NUL, or what looks like the next header is read by the caller, field by
    field). The window grows while whole windows read right and shrinks after a piece that did
    not, so a file of such pieces is never scanned again and again."""
    limit = min(len(data), pos + window)
    end = _RUN.match(data, pos, limit).end()
    if end == pos:
        return pos, _WINDOW[0]
    parts = _BETWEEN.split(data[pos + 4:end] + _SENTINEL)
    texts = parts[0::5]
    texts.pop()  # what follows the last separator: the sentinel's empty rest, when the run reads right
    kinds = parts[2::5]
    stated_sizes = bytes((data[pos + 1],)) + b"".join(parts[3::5][:-1])
    stated_lengths = bytes((data[pos + 3],)) + b"".join(parts[4::5][:-1])
    # a text too long for a one-byte length, or holding a NUL (the texts are joined by NULs
    # below), counts as 240 bytes: more than any piece of the run states
    try:
        lengths = bytes(map(len, texts))
    except ValueError:
        lengths = bytes(map(min, map(len, texts), repeat(240)))
    blob = b"\x00".join(texts)
    if blob.count(0) != len(texts) - 1:
        nul = bytes(map(operator.contains, texts, repeat(b"\x00"))).find(1)
        lengths = lengths[:nul] + b"\xf0" + lengths[nul + 1:]
    flags = bytes(map(bool, kinds))
    sizes = bytes(map(operator.add, lengths, flags.translate(_OVERHEAD)))
    complete = lengths == stated_lengths and sizes == stated_sizes
    if not complete:
        good = _agreeing(lengths, stated_lengths, sizes, stated_sizes)
        if not good:
            return pos, _WINDOW[0]
        texts, kinds, parts, flags = texts[:good], kinds[:good], parts[:5 * good], flags[:good]
        end = pos + sum(stated_sizes[:good]) + 2 * good
        blob = b"\x00".join(texts)
    pieces.extend(_piece_text(blob).split("\x00"))
    score_bytes += b"".join(parts[1::5])
    typed = flags.count(1)
    if typed == len(kinds):  # every piece states its type (Mistral's v2 and later files)
        types.extend(b"".join(kinds))
    elif typed * 8 < len(kinds):  # the few pieces with a type field (control, byte ...)
        start = len(types)
        types.extend(bytes((NORMAL,)) * len(kinds))
        for found in _FLAGGED.finditer(flags):
            types[start + found.start()] = kinds[found.start()][0]
    else:
        types.extend(b"".join([k or _NORMAL_TYPE for k in kinds]))
    grown = window * 2 if complete and limit - end < 256 else _WINDOW[0]
    return end, min(grown, _WINDOW[1])


def _agreeing(a: bytes, b: bytes, c: bytes, d: bytes) -> int:
    """How many leading positions ``a`` agrees with ``b`` and ``c`` with ``d`` (a binary search
    of whole-prefix comparisons).

    >>> _agreeing(b"abcd", b"abxd", b"wxyz", b"wxyz")
    2
    """
    lo, hi = 0, min(len(a), len(b), len(c), len(d))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid] and c[:mid] == d[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


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
        pieces, scores, types, trainer_spans, normalizer_spans = _read_top(data)
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
    except _NotUtf8:
        raise TokenizerFileError(f"{source} has a piece that is not UTF-8") from None
    except TokenizerFileError as exc:
        raise TokenizerFileError(f"{source} is not a SentencePiece model ({str(exc).replace('the SentencePiece model ', '')})") from None
    if not pieces:
        raise TokenizerFileError(f"{source} is not a SentencePiece model (it has no pieces)")
    return ModelProto(pieces, scores, types, TrainerSpec(**trainer), NormalizerSpec(**normalizer))


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
        # built at load, as the library builds its trie (a 250k-piece model's first encode
        # otherwise paid ~0.2 s for it; the load stays under the library's)
        model.build_lattice()
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


def varint_bytes(v: int) -> bytes:
    """``v`` (taken modulo 2**64) as a protobuf varint.

    >>> varint_bytes(1), varint_bytes(300), len(varint_bytes(-1))
    (b'\\x01', b'\\xac\\x02', 10)
    """
    v &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field_bytes(number: int, value: Any) -> bytes:
    """One protobuf field: bytes or str (UTF-8, lone surrogates kept as their bytes) length-
    delimited, a float as 32 bits, an int as a varint.

    >>> field_bytes(1, "a"), field_bytes(3, 2)
    (b'\\n\\x01a', b'\\x18\\x02')
    """
    if isinstance(value, (bytes, str)):
        raw = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
        return varint_bytes(number << 3 | 2) + varint_bytes(len(raw)) + raw
    if isinstance(value, float):
        return varint_bytes(number << 3 | 5) + _FLOAT.pack(value)
    return varint_bytes(number << 3) + varint_bytes(int(value))


def build_model(pieces: Sequence[tuple[str, float, int]], *, trainer: Mapping[int, int] | None = None,
                normalizer: Mapping[int, Any] | None = None) -> bytes:
    """The bytes of a ``ModelProto`` with ``pieces`` (``(piece, score, type)``) and the given
    trainer/normalizer fields (``{field number: value}``): for tests and examples.

    >>> parse(build_model([("<unk>", 0.0, UNKNOWN)], trainer={3: 2})).trainer.model_type
    2
    """
    out = bytearray()
    for piece, score, kind in pieces:
        body = field_bytes(1, piece) + field_bytes(2, float(score)) + (field_bytes(3, kind) if kind != NORMAL else b"")
        out += field_bytes(1, body)
    if trainer:
        out += field_bytes(2, b"".join(field_bytes(n, v) for n, v in trainer.items()))
    if normalizer:
        out += field_bytes(3, b"".join(field_bytes(n, v) for n, v in normalizer.items()))
    return bytes(out)
