r"""Hugging Face's pre-tokenizers, each matching ``tokenizers`` on the chunks and their alignment.

One module per family, as Hugging Face's ``pre_tokenizers`` crate lays them out (base, byte_level,
split, whitespace, punctuation, bert, digits, delimiter, metaspace, fixed_length,
unicode_scripts, sequence; pattern_split for tiktoken's patterns); this package reads the
``"pre_tokenizer"`` object of a ``tokenizer.json`` (:func:`from_json`: a new pre-tokenizer is a
module here and a line in ``_build``) and re-exports every class. Every class satisfies
:class:`~tokscope.core.tokenizer.stages.PreTokenizer`: ``pre_tokenize`` cuts each
:class:`~.normalized.NormalizedText` into chunks (empty chunks dropped), each still aligned to the
original text; ByteLevel and Metaspace also rewrite them (a ByteLevel chunk's stand-in characters
each align to the original character of their byte). :func:`from_json` reads the
``"pre_tokenizer"`` object of a ``tokenizer.json``.

>>> bl = ByteLevel(add_prefix_space=False)
>>> [(c.text, c.original_start, c.original_end) for c in bl.pre_tokenize([NormalizedText.identity("Hi é!")])]
[('Hi', 0, 2), ('ĠÃ©', 2, 4), ('!', 4, 5)]
>>> ms = Metaspace()
>>> [c.text for c in ms.pre_tokenize([NormalizedText.identity("Hey friend")])]
['▁Hey', '▁friend']
"""

from __future__ import annotations

from typing import Any

from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..text.normalized import NormalizedText  # noqa: F401 - the docstring's example uses it
from .base import PreTokenizerBase, isolated_strs, slices, split_text
from .bert import BertPreTokenizer
from .byte_level import ByteLevel, GPT2_PATTERN, byte_level_str
from .delimiter import CharDelimiterSplit
from .digits import Digits
from .fixed_length import FixedLength
from .metaspace import Metaspace
from .punctuation import Punctuation
from .sequence import Sequence
from .split import Split
from .unicode_scripts import UnicodeScripts
from .whitespace import Whitespace, WhitespaceSplit

__all__ = [
    "BertPreTokenizer",
    "ByteLevel",
    "CharDelimiterSplit",
    "Digits",
    "FixedLength",
    "GPT2_PATTERN",
    "Metaspace",
    "PreTokenizerBase",
    "Punctuation",
    "Sequence",
    "Split",
    "UnicodeScripts",
    "Whitespace",
    "WhitespaceSplit",
    "byte_level_str",
    "from_json",
    "isolated_strs",
    "slices",
    "split_text",
]


def _field(obj: dict, name: str, kind: type, default: Any = ..., *, type_name: str) -> Any:
    if name not in obj or (obj[name] is None and default is not ...):
        if default is ...:
            raise TokenizerFileError(f"pre-tokenizer {type_name!r} has no {name!r}")
        return default
    value = obj[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TokenizerFileError(f"pre-tokenizer {type_name!r}: {name!r} is not a {kind.__name__}")
    return value


_BEHAVIOR_NAMES = {
    "Removed": "removed", "Isolated": "isolated", "MergedWithPrevious": "merged_with_previous",
    "MergedWithNext": "merged_with_next", "Contiguous": "contiguous",
}


def _behavior(obj: dict, type_name: str, default: str | None = None) -> str:
    value = obj.get("behavior", default)
    if value is None:
        raise TokenizerFileError(f"pre-tokenizer {type_name!r} has no 'behavior'")
    if value not in _BEHAVIOR_NAMES:
        raise TokenizerFileError(f"pre-tokenizer {type_name!r}: unknown behavior {value!r}")
    return _BEHAVIOR_NAMES[value]


def _build(obj: Any) -> Any:
    if not isinstance(obj, dict):
        raise TokenizerFileError("a pre-tokenizer must be a JSON object")
    t = obj.get("type")
    if t is None:
        raise UnsupportedComponentError("pre-tokenizer", "(no type)", "an untagged legacy pre-tokenizer")
    if t == "ByteLevel":
        return ByteLevel(
            _field(obj, "add_prefix_space", bool, type_name=t),
            _field(obj, "trim_offsets", bool, type_name=t),
            _field(obj, "use_regex", bool, True, type_name=t),
        )
    if t == "Split":
        pattern = obj.get("pattern")
        if not isinstance(pattern, dict) or len(pattern) != 1:
            raise TokenizerFileError("pre-tokenizer 'Split': 'pattern' must be {'String': ...} or {'Regex': ...}")
        (kind, value), = pattern.items()
        if kind not in ("String", "Regex") or not isinstance(value, str):
            raise TokenizerFileError("pre-tokenizer 'Split': 'pattern' must be {'String': ...} or {'Regex': ...}")
        return Split(value, _behavior(obj, t), _field(obj, "invert", bool, type_name=t), regex=kind == "Regex")
    if t == "Metaspace":
        replacement = _field(obj, "replacement", str, type_name=t)
        scheme = obj.get("prepend_scheme", "always")
        if scheme not in ("always", "first", "never"):
            raise TokenizerFileError(f"pre-tokenizer 'Metaspace': unknown prepend_scheme {scheme!r}")
        if obj.get("add_prefix_space") is False:
            # as HF: the legacy field may only say what prepend_scheme says (default "always")
            if scheme != "never":
                raise TokenizerFileError("pre-tokenizer 'Metaspace': add_prefix_space does not match prepend_scheme")
        split = obj.get("split")
        return Metaspace(replacement, scheme, True if split is None else bool(split))
    if t == "Whitespace":
        return Whitespace()
    if t == "WhitespaceSplit":
        return WhitespaceSplit()
    if t == "BertPreTokenizer":
        return BertPreTokenizer()
    if t == "Punctuation":
        return Punctuation(_behavior(obj, t, "Isolated"))
    if t == "Digits":
        return Digits(_field(obj, "individual_digits", bool, type_name=t))
    if t == "CharDelimiterSplit":
        return CharDelimiterSplit(_field(obj, "delimiter", str, type_name=t))
    if t == "UnicodeScripts":
        return UnicodeScripts()
    if t == "FixedLength":
        return FixedLength(_field(obj, "length", int, 5, type_name=t))
    if t == "Sequence":
        items = _field(obj, "pretokenizers", list, type_name=t)
        return Sequence([_build(item) for item in items])
    raise UnsupportedComponentError("pre-tokenizer", str(t))


def from_json(obj: dict | None) -> Any:
    """The pre-tokenizer of a ``tokenizer.json``'s ``"pre_tokenizer"`` object (``None``: none).

    >>> from_json({"type": "Digits", "individual_digits": True})
    Digits(individual_digits=True)
    """
    if obj is None:
        return None
    return _build(obj)
