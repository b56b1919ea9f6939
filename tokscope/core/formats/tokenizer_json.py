"""A Hugging Face ``tokenizer.json`` read into the core's pipeline.

Each stage of the file is read by its stage's module (:mod:`.normalizers`, :mod:`.pretokenizers`,
:mod:`.models`, :mod:`.added_tokens`, :mod:`.postprocessors`, :mod:`.decoders`); a component
tokscope does not implement is refused by name (:class:`~.errors.UnsupportedComponentError`),
never guessed. The ids then equal those of the ``tokenizers`` library on any text: ``encode``
gives the tokens of the text itself (the library's ``add_special_tokens=False``), and
``encode(..., add_special_tokens=True)`` applies the file's template as the library does by
default, with the file's ``truncation`` and ``padding`` (:mod:`..processors.truncation`,
:mod:`..processors.padding`), as the library's ``encode`` applies them.

>>> data = '''{"version": "1.0", "added_tokens": [{"id": 2, "content": "[X]", "special": true}],
...   "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "WhitespaceSplit"},
...   "model": {"type": "WordLevel", "vocab": {"hi": 0, "<unk>": 1}, "unk_token": "<unk>"}}'''
>>> tok = from_json_text(data, "tiny")
>>> tok.kind, tok.encode("HI there"), tok.encode("hi [X]", allowed_special="all")
('WordLevel', [0, 1], [0, 2])
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .. import decoders
from .. import normalizers
from .. import processors as postprocessors
from .. import pre_tokenizers as pretokenizers
from ..added_tokens.added_vocabulary import AddedVocabulary
from ..processors.padding import padding_from_json
from ..processors.truncation import truncation_from_json
from ..text.compiled import CompiledPart
from ..text.errors import TokenizerFileError, TokscopeError
from .tokenizer_json_models import from_json as model_from_json
from .tokenizer_json_models import json_float
from ..tokenizer.tokenizer import Tokenizer

#: the top-level keys of a ``tokenizer.json``
KEYS = frozenset({"version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "model",
                  "post_processor", "decoder"})

#: files larger than this are refused before they are read whole (Gemma 3's is 33 MB)
MAX_FILE_BYTES = 256 * 1024 * 1024


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector held off while a file's objects are made: a parse makes a few
    hundred thousand lists and dicts at once (a merge list of pairs), none of them garbage, and
    each full collection on the way walks all of them again. Restored as it was afterwards.

    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def looks_like(obj: Any) -> bool:
    """True for the object of a ``tokenizer.json`` (a ``model`` object and no unknown keys)."""
    return isinstance(obj, dict) and isinstance(obj.get("model"), dict) and not (set(obj) - KEYS - {"name"})


def parse(text: str | bytes, source: str = "tokenizer.json") -> dict:
    """The JSON object of a ``tokenizer.json``, read as the ``tokenizers`` library reads its
    numbers; malformed or truncated JSON is a one-line :class:`TokenizerFileError`. The bytes of a
    file whose Precompiled normalizer holds a long charsmap are read without it, and a model's
    ``{token: id}`` vocabulary is read by the compiled module, and they are put back
    (:func:`parse_lifted`): the same object, with most of the bytes neither decoded nor scanned twice."""
    if isinstance(text, bytes):
        if len(text) > MAX_FILE_BYTES:
            raise TokenizerFileError(f"{source} is {len(text):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit")
        with gc_paused():  # the vocabulary's lists are made here
            lifted = lift_charsmap(text)
            rest, charsmap = lifted if lifted is not None else (text, None)
            cut = lift_vocab(rest) if len(text) <= LIFT_MAX_BYTES else None
            rest, vocab = cut if cut is not None else (rest, None)
            obj = parse_lifted(rest, charsmap, vocab) if lifted is not None or cut is not None else None
        if obj is not None:
            return obj
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise TokenizerFileError(f"{source} is not UTF-8 (byte {exc.start})") from None
    elif text.startswith("\ufeff"):
        text = text[1:]
    try:
        with gc_paused():
            obj = json.loads(text, parse_float=json_float)
    except RecursionError:
        raise TokenizerFileError(f"{source} nests too deeply to be a tokenizer file") from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated string"):
            raise TokenizerFileError(f"{source} is not valid JSON: truncated (it ends early)") from None
        raise TokenizerFileError(f"{source} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise TokenizerFileError(f"{source} is not a usable tokenizer file ({str(exc).splitlines()[0]})") from None
    if not isinstance(obj, dict):
        raise TokenizerFileError(f"{source} is not a tokenizer file (a JSON object is expected)")
    return obj


# ----- the charsmap lifted out -------------------------------------------------------------------
#
# A SentencePiece-converted file (T5, XLM-R, ALBERT ...) is mostly one string: its Precompiled
# normalizer's ``precompiled_charsmap``, a few hundred kilobytes of base64. Decoding the file to a
# str (four bytes a character when the file holds one emoji) and scanning that string is most of
# its parse. So the bytes are parsed with that string's content replaced by PLACEHOLDER, and the
# content put back where the parse left PLACEHOLDER. That is the plain parse exactly, because:
#
# * the content replaced, R, runs from the '"' after ``"precompiled_charsmap"``, a colon and JSON
#   whitespace, to the next '"', and holds only base64 characters. None of the key's closing quote
#   and R's two quotes follows a backslash, so in any JSON text the three are string delimiters,
#   with only the colon and whitespace, then R, between them. Bare letters (PLACEHOLDER's) cannot
#   stand outside a string, so in a text that parses the key's quote closes a string, the colon is
#   structural and R is a whole string after it: an object member's value. R and PLACEHOLDER hold
#   no quote, backslash or control character, so the original bytes have the same tokens but for
#   that string, whose value is R itself: they parse alike but for it.
# * no other string of the parsed text can be PLACEHOLDER: it does not occur in the bytes but at R,
#   and its characters (lowercase letters and '-') could be written otherwise only as \u00XX
#   escapes, of which the bytes hold none (a ``\u00`` followed by 2 to 7).
#
# So the one PLACEHOLDER of the parse is R's member, which is where a Precompiled normalizer (in
# a Sequence or not) reads its charsmap, or the parse is not used: a second
# ``"precompiled_charsmap"``, a value that is not base64, a key look-alike inside another string,
# a later duplicate key, a malformed file all fall back to the plain parse (and its error).
#
# A model's vocabulary, ``{token: id}`` (WordLevel, WordPiece, BPE) or ``[[piece, score], ...]``
# (Unigram), is lifted the same way, with the compiled module reading it (``json_vocab``,
# ``json_scores``; without it nothing is lifted): the bytes R from the '{' or '[' after
# ``"vocab"``, a colon and whitespace, to its closing bracket are replaced by the string
# ``"VOCAB_PLACEHOLDER"``. The readers accept only strings (JSON's escapes but a surrogate's) and
# plain numbers in that shape, so R starts and ends outside any string and holds a whole JSON
# value; the same reasoning about the key's closing quote and the placeholder's letters makes
# that string a member's value in a text that parses, so the original bytes parse alike but for
# that value, which is R's value (the dict json makes of it: keys set in order, the last of a
# repeated key winning; the lists, ints and floats, by json_float, it makes). The placeholder is unique by the same two checks, and must be the
# ``"model"`` object's ``"vocab"``. Both may be lifted from one file: the vocabulary from the bytes
# the charsmap was lifted from, each with its own checks on the bytes it made.

#: a ``precompiled_charsmap`` of fewer bytes than this is parsed with the rest of the file
LIFT_MIN_BYTES = 16 * 1024
#: what stands for the lifted charsmap in the text parsed (lowercase letters and '-' only)
PLACEHOLDER = "tokscope-lifted-precompiled-charsmap"
_KEY = b'"precompiled_charsmap"'
_COLON = re.compile(rb"[ \t\n\r]*:[ \t\n\r]*\"")
#: a ``\u`` escape that could write a character of PLACEHOLDER (or any other printable ASCII)
_ASCII_ESCAPE = re.compile(rb"\\u00[2-7]")
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
#: the compiled base64 check (``base64_end``), when installed
compiled_part = CompiledPart("JLOAD_ABI")


def charsmap_span(data: bytes) -> tuple[int, int] | None:
    """Where the content of the first ``"precompiled_charsmap"`` string of ``data`` lies: from
    after the key, a colon, JSON whitespace and a '"', to the next '"' (so no byte of it is a
    quote); None without such a key.

    >>> charsmap_span(b'{"precompiled_charsmap": "QUJD"}'), charsmap_span(b'{"x": "QUJD"}')
    ((26, 30), None)
    """
    key = data.find(_KEY)
    if key < 0:
        return None
    colon = _COLON.match(data, key + len(_KEY))
    if colon is None:
        return None
    start = colon.end()
    end = data.find(b'"', start)
    return None if end < 0 else (start, end)


def lift_charsmap(data: bytes, min_bytes: int | None = None) -> tuple[bytes, str] | None:
    """``data`` with the content of its one ``"precompiled_charsmap"`` string replaced by
    :data:`PLACEHOLDER`, and that content; None when there is none of at least ``min_bytes``
    (:data:`LIFT_MIN_BYTES`), or more than one, or it is not all base64 characters, or the rest of
    the bytes could write PLACEHOLDER (see the proof above).

    >>> lift_charsmap(b'{"normalizer": {"type": "Precompiled", "precompiled_charsmap" : "AAAA"}}', 1)
    (b'{"normalizer": {"type": "Precompiled", "precompiled_charsmap" : "tokscope-lifted-precompiled-charsmap"}}', 'AAAA')
    >>> lift_charsmap(b'{"precompiled_charsmap": "AA\\\\u0041A"}', 1) is None  # not all base64
    True
    """
    span = charsmap_span(data)
    if span is None:
        return None
    start, end = span
    if end - start < (LIFT_MIN_BYTES if min_bytes is None else min_bytes) or data.find(_KEY, end) >= 0:
        return None
    module = compiled_part.get()
    if module is not None:
        if module.base64_end(data, start) != end:
            return None
    elif data[start:end].translate(None, _BASE64):
        return None
    rest = b"".join((data[:start], _PLACEHOLDER_BYTES, data[end:]))
    if rest.count(_PLACEHOLDER_BYTES) != 1 or _ASCII_ESCAPE.search(rest) is not None:
        return None
    return rest, data[start:end].decode("ascii")


_PLACEHOLDER_BYTES = PLACEHOLDER.encode("ascii")


def parse_lifted(rest: bytes, charsmap: str | None = None, vocab: dict | list | None = None) -> dict | None:
    """The object of a file that :func:`lift_charsmap` and :func:`lift_vocab` cut into ``rest``,
    ``charsmap`` and ``vocab``: ``rest`` parsed, ``vocab`` put back where the model holds
    :data:`VOCAB_PLACEHOLDER` and ``charsmap`` where a Precompiled normalizer holds
    :data:`PLACEHOLDER`; None when ``rest`` does not parse to that (the caller parses the whole
    file instead).

    >>> parse_lifted(*lift_charsmap(b'{"normalizer": {"type": "Precompiled", "precompiled_charsmap": "AAAA"}}', 1))
    {'normalizer': {'type': 'Precompiled', 'precompiled_charsmap': 'AAAA'}}
    >>> parse_lifted(*lift_charsmap(b'{"normalizer": {"type": "Replace", "precompiled_charsmap": "AAAA"}}', 1)) is None
    True
    >>> parse_lifted(b'{"model": {"vocab": "tokscope-lifted-vocabulary"}}', vocab={"a": 0})
    {'model': {'vocab': {'a': 0}}}
    """
    try:
        with gc_paused():
            obj = json.loads(rest.decode("utf-8-sig"), parse_float=json_float)
    except (ValueError, RecursionError):  # a malformed file: the plain parse names what is wrong
        return None
    if type(obj) is not dict:
        return None
    if vocab is not None:
        model = obj.get("model")
        if type(model) is not dict or model.get("vocab") != VOCAB_PLACEHOLDER:
            return None
        model["vocab"] = vocab
    if charsmap is not None:
        holder = _placeholder_holder(obj.get("normalizer"))
        if holder is None:
            return None
        holder["precompiled_charsmap"] = charsmap
    return obj


#: a model's vocabulary of fewer bytes than this is parsed with the rest of the file
LIFT_MIN_VOCAB_BYTES = 4096
#: a file over this size is parsed with its vocabulary: there, reading the vocabulary from the bytes
#: saves no more than the copies of the rest of them (most of it a merge list) cost, and those
#: copies would be held beside the file's bytes
LIFT_MAX_BYTES = 16 * 1024 * 1024
#: what stands for a lifted vocabulary in the text parsed (lowercase letters and '-' only)
VOCAB_PLACEHOLDER = "tokscope-lifted-vocabulary"
_VOCAB_PLACEHOLDER_BYTES = b'"' + VOCAB_PLACEHOLDER.encode("ascii") + b'"'
_VOCAB_KEY = b'"vocab"'
_VOCAB_COLON = re.compile(rb"[ \t\n\r]*:[ \t\n\r]*[{\[]")


def lift_vocab(data: bytes, min_bytes: int | None = None) -> tuple[bytes, dict | list] | None:
    """``data`` with the value after its one ``"vocab"`` key replaced by the string
    :data:`VOCAB_PLACEHOLDER`, and that value as the compiled module reads it: ``json_vocab`` a
    plain ``{token: id}`` (string keys, whole numbers), ``json_scores`` a Unigram's
    ``[[piece, score], ...]`` (scores as :func:`json_float` reads them); None without the compiled module,
    when there is no such value of at least ``min_bytes`` (:data:`LIFT_MIN_VOCAB_BYTES`), or the
    rest of the bytes could write the placeholder (see the proof above). Another ``"vocab"`` is no
    reason to refuse (a merge list may hold the word): the placeholder must be the model's.

    >>> cut = lift_vocab(b'{"model": {"vocab" : {"a": 0, "b": 1}}}', 1)
    >>> cut if compiled_part.get() else (b'{"model": {"vocab" : "tokscope-lifted-vocabulary"}}', {"a": 0, "b": 1})
    (b'{"model": {"vocab" : "tokscope-lifted-vocabulary"}}', {'a': 0, 'b': 1})
    """
    module = compiled_part.get()
    key = data.find(_VOCAB_KEY) if module is not None else -1
    if key < 0:
        return None
    colon = _VOCAB_COLON.match(data, key + len(_VOCAB_KEY))
    if colon is None:
        return None
    start = colon.end() - 1
    # the checks on the bytes around the value first, on the whole file (it holds the bytes of the
    # rest, and no placeholder or escape can span the placeholder's quotes), so that a file that
    # fails them is not read twice
    if _VOCAB_PLACEHOLDER_BYTES[1:-1] in data or _ASCII_ESCAPE.search(data, 0, start) is not None:
        return None
    found = (module.json_vocab if data[start] == 0x7B else module.json_scores)(data, start)  # '{' or '['
    if found is None:
        return None
    vocab, end = found
    if end - start < (LIFT_MIN_VOCAB_BYTES if min_bytes is None else min_bytes) or _ASCII_ESCAPE.search(data, end):
        return None
    return b"".join((data[:start], _VOCAB_PLACEHOLDER_BYTES, data[end:])), vocab


def _placeholder_holder(normalizer: Any) -> dict | None:
    """The Precompiled normalizer object (the normalizer or one in its Sequences, at any depth)
    whose ``precompiled_charsmap`` is :data:`PLACEHOLDER`, when there is exactly one; None else.

    >>> found = {"type": "Precompiled", "precompiled_charsmap": PLACEHOLDER}
    >>> _placeholder_holder({"type": "Sequence", "normalizers": [{"type": "NFC"}, found]}) is found
    True
    >>> _placeholder_holder({"type": "Sequence", "normalizers": [found, found]}) is None
    True
    """
    found = []
    stack = [normalizer]
    while stack:
        item = stack.pop()
        if type(item) is not dict:
            continue
        kind = item.get("type")
        if kind == "Precompiled" and item.get("precompiled_charsmap") == PLACEHOLDER:
            found.append(item)
        elif kind == "Sequence" and type(item.get("normalizers")) is list:
            stack.extend(item["normalizers"])
    return found[0] if len(found) == 1 else None


def from_json(obj: dict, name: str, source: str = "tokenizer.json", *, model: Any = None) -> Tokenizer:
    """A tokenizer from the object of a ``tokenizer.json``; ``model``, when given, is used instead
    of reading the ``"model"`` object's tables (a cache that keeps the model's tables itself)."""
    if not isinstance(obj.get("model"), dict):
        raise TokenizerFileError(f"{source} has no 'model' object: not a Hugging Face tokenizer.json")
    try:
        with gc_paused():
            return _from_json(obj, name, source, model)
    except TokscopeError:
        raise
    except RecursionError:
        raise TokenizerFileError(f"{source} nests its stages too deeply") from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise TokenizerFileError(f"{source} is malformed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None


def _from_json(obj: dict, name: str, source: str, model: Any) -> Tokenizer:
    """:func:`from_json`'s stages, each read by its stage's module."""
    normalizer = normalizers.from_json(obj.get("normalizer"))
    pre_tokenizer = pretokenizers.from_json(obj.get("pre_tokenizer"))
    model = model_from_json(obj["model"]) if model is None else model
    added = AddedVocabulary.from_json(obj.get("added_tokens"), normalizer)
    return Tokenizer.from_stages(name, model=model, normalizer=normalizer, pre_tokenizer=pre_tokenizer,
                                 added_tokens=added, post_processor=postprocessors.from_json(obj.get("post_processor")),
                                 decoder=decoders.from_json(obj.get("decoder")),
                                 truncation=truncation_from_json(obj.get("truncation")),
                                 padding=padding_from_json(obj.get("padding")))


def from_json_text(text: str | bytes, name: str, source: str = "tokenizer.json") -> Tokenizer:
    """A tokenizer from the text of a ``tokenizer.json``."""
    return from_json(parse(text, source), name, source)
