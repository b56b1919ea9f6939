"""The models of a ``tokenizer.json``: :func:`from_json` reads its ``"model"`` object.

>>> model = from_json({"type": "WordLevel", "vocab": {"hi": 0, "<unk>": 1}, "unk_token": "<unk>"})
>>> model.kind, model.tokenize("hi")
('wordlevel', [(0, 0, 2)])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import bpe_merges, unigram, wordlevel, wordpiece
from .bpe_merges import BPE
from .errors import TokenizerFileError, UnsupportedComponentError
from .unigram import Unigram
from .wordlevel import WordLevel
from .wordpiece import WordPiece

HFModel = BPE | WordPiece | Unigram | WordLevel

_READERS = {
    "BPE": bpe_merges.from_json,
    "WordPiece": wordpiece.from_json,
    "WordLevel": wordlevel.from_json,
    "Unigram": unigram.from_json,
}


def _legacy_type(obj: Mapping[str, Any]) -> str:
    """The model type of an old file whose model has no ``"type"``, as Hugging Face guesses it
    (it tries BPE, WordPiece, WordLevel, then Unigram)."""
    if "merges" in obj:
        return "BPE"
    if isinstance(obj.get("vocab"), list):
        return "Unigram"
    if "continuing_subword_prefix" in obj or "max_input_chars_per_word" in obj:
        return "WordPiece"
    return "WordLevel"


def from_json(obj: Any) -> HFModel:
    """The model described by the ``"model"`` object of a ``tokenizer.json``: BPE, WordPiece,
    Unigram or WordLevel. Another type is an :class:`UnsupportedComponentError`.

    >>> from_json({"type": "Mystery"})
    Traceback (most recent call last):
    ...
    tokscope.core.errors.UnsupportedComponentError: unsupported model 'Mystery' in this tokenizer file
    """
    if not isinstance(obj, Mapping):
        raise TokenizerFileError("the tokenizer file's model is not an object")
    kind = obj.get("type")
    if kind is None:
        kind = _legacy_type(obj)
    if not isinstance(kind, str):
        raise TokenizerFileError(f"model type {kind!r} is not a string")
    reader = _READERS.get(kind)
    if reader is None:
        raise UnsupportedComponentError("model", kind)
    return reader(obj)
