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
    numbers; malformed or truncated JSON is a one-line :class:`TokenizerFileError`."""
    if isinstance(text, bytes):
        if len(text) > MAX_FILE_BYTES:
            raise TokenizerFileError(f"{source} is {len(text):,} bytes, over the {MAX_FILE_BYTES:,}-byte limit")
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
