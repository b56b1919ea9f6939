"""Hugging Face's normalizers, each matching ``tokenizers`` on the text and on the alignment.

One module per family, as Hugging Face's ``normalizers`` crate lays them out (unicode, utils,
strip, prepend, replace, byte_level, bert, precompiled); this package reads the ``"normalizer"``
object of a ``tokenizer.json`` (:func:`from_json`: a new normalizer is a module here and a line in
``_build``) and re-exports every class. Every class satisfies
:class:`~tokscope.core.tokenizer.stages.Normalizer`: ``normalize`` rewrites a
:class:`~.normalized.NormalizedText` (keeping each character aligned to the original text as HF
does), ``normalize_str`` gives the characters only.

>>> n = from_json({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]})
>>> n.normalize_str("Ｈｅｌｌｏ")
'hello'
>>> t = n.normalize(NormalizedText.identity("ﬁ!"))
>>> t.text, t.alignments()
('fi!', [(0, 1), (0, 1), (1, 2)])
"""

from __future__ import annotations

from typing import Any

from ..patterns.guard import check_file_string
from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..text.normalized import NormalizedText  # noqa: F401 - the docstring's example uses it
from .bert import BertNormalizer
from .byte_level import ByteLevel
from .precompiled import Precompiled, charsmap_from_base64
from .prepend import Prepend
from .replace import Replace
from .strip import Strip, StripAccents
from .unicode import NFC, NFD, NFKC, NFKD, Nmt
from .utils import Lowercase, Sequence

__all__ = [
    "BertNormalizer",
    "ByteLevel",
    "Lowercase",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Nmt",
    "Precompiled",
    "Prepend",
    "Replace",
    "Sequence",
    "Strip",
    "StripAccents",
    "from_json",
]


def _field(obj: dict, name: str, kind: type | tuple[type, ...], default: Any = ..., *, type_name: str) -> Any:
    if name not in obj:
        if default is ...:
            raise TokenizerFileError(f"normalizer {type_name!r} has no {name!r}")
        return default
    value = obj[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TokenizerFileError(f"normalizer {type_name!r}: {name!r} is not a {getattr(kind, '__name__', kind)}")
    return value


def _pattern(obj: dict, type_name: str) -> tuple[str, bool]:
    pattern = obj.get("pattern")
    if not isinstance(pattern, dict) or len(pattern) != 1:
        raise TokenizerFileError(f"{type_name}: 'pattern' must be {{'String': ...}} or {{'Regex': ...}}")
    (kind, value), = pattern.items()
    if kind not in ("String", "Regex") or not isinstance(value, str):
        raise TokenizerFileError(f"{type_name}: 'pattern' must be {{'String': ...}} or {{'Regex': ...}}")
    return value, kind == "Regex"


def _build(obj: Any) -> Any:
    if not isinstance(obj, dict):
        raise TokenizerFileError("a normalizer must be a JSON object")
    t = obj.get("type")
    if t is None:
        raise UnsupportedComponentError("normalizer", "(no type)", "an untagged legacy normalizer")
    if t in ("NFC", "NFD", "NFKC", "NFKD"):
        return {"NFC": NFC, "NFD": NFD, "NFKC": NFKC, "NFKD": NFKD}[t]()
    if t == "Lowercase":
        return Lowercase()
    if t == "Strip":
        return Strip(
            _field(obj, "strip_left", bool, type_name=t), _field(obj, "strip_right", bool, type_name=t)
        )
    if t == "StripAccents":
        return StripAccents()
    if t == "Prepend":
        return Prepend(check_file_string(_field(obj, "prepend", str, type_name=t), "normalizer Prepend 'prepend'"))
    if t == "Replace":
        pattern, is_regex = _pattern(obj, t)
        content = check_file_string(_field(obj, "content", str, type_name=t), "normalizer Replace 'content'")
        return Replace(pattern, content, regex=is_regex)
    if t in ("BertNormalizer", "Bert"):
        strip = obj.get("strip_accents")
        if strip is not None and not isinstance(strip, bool):
            raise TokenizerFileError("normalizer 'BertNormalizer': 'strip_accents' is not a bool or null")
        return BertNormalizer(
            _field(obj, "clean_text", bool, True, type_name=t),
            _field(obj, "handle_chinese_chars", bool, True, type_name=t),
            strip,
            _field(obj, "lowercase", bool, True, type_name=t),
        )
    if t == "Precompiled":
        return Precompiled(charsmap_from_base64(_field(obj, "precompiled_charsmap", str, type_name=t)))
    if t == "Nmt":
        return Nmt()
    if t == "ByteLevel":
        return ByteLevel()
    if t == "Sequence":
        items = _field(obj, "normalizers", list, type_name=t)
        return Sequence([_build(item) for item in items])
    raise UnsupportedComponentError("normalizer", str(t))


def from_json(obj: dict | None) -> Any:
    """The normalizer of a ``tokenizer.json``'s ``"normalizer"`` object (``None`` for none).

    >>> from_json({"type": "Lowercase"})
    Lowercase()
    >>> from_json(None) is None
    True
    """
    if obj is None:
        return None
    return _build(obj)
