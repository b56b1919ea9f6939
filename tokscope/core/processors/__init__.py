"""Post-processors: the templates that add a model's special tokens (``[CLS] … [SEP]``, ``<s> …``).

Each works as Hugging Face's ``process_encodings``: on a list of encodings (one, or two for a
pair), returning a list of encodings that the caller joins. :meth:`process` starts from the
encoding of ``ids`` (and of ``pair``) and returns the joined result as ``(id, source)``, where
``source`` is the index of the input token it came from (``pair``'s tokens are numbered after
``ids``'s) or ``None`` for a token the template added; :meth:`process_typed` also gives each
token's type id.

Ids and type ids are modelled here. ``RobertaProcessing`` and ``ByteLevel`` also trim the spaces
off the offsets of byte-level tokens (``trim_offsets``); that moves offsets, never ids: each
processor says how as :class:`TrimStep` values (:meth:`trim_steps`), which :mod:`.offsets` applies
to the pieces' spans (the tokenizer's ``model_offsets``).

One module per post-processor as Hugging Face's crate lays them out (bert, roberta, byte_level,
template, sequence; base for the encoding they work on); this package reads the
``"post_processor"`` object of a ``tokenizer.json`` (:func:`from_json`: a new one is a module here
and a line in it) and re-exports every class.

>>> bert = BertProcessing(sep=("[SEP]", 102), cls=("[CLS]", 101))
>>> bert.process([7, 8], [9])
[(101, None), (7, 0), (8, 1), (102, None), (9, 2), (102, None)]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..text.errors import TokenizerFileError, UnsupportedComponentError
from .base import Encoding, Item
from .bert import BertProcessing
from .byte_level import ByteLevel
from .roberta import RobertaProcessing
from .sequence import Sequence
from .offsets import TrimStep, model_span
from .template import TemplatePiece, TemplateProcessing

__all__ = [
    "BertProcessing",
    "ByteLevel",
    "Encoding",
    "Item",
    "RobertaProcessing",
    "Sequence",
    "TemplatePiece",
    "TemplateProcessing",
    "TrimStep",
    "from_json",
    "model_span",
]


PostProcessorStage = BertProcessing | RobertaProcessing | ByteLevel | TemplateProcessing | Sequence


def _bool(obj: Mapping[str, Any], name: str, default: bool) -> bool:
    value = obj.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise TokenizerFileError(f"post-processor {obj.get('type')} {name} {value!r} is not a boolean")
    return value


def from_json(obj: Any) -> PostProcessorStage | None:
    """The post-processor of a ``tokenizer.json`` (its ``"post_processor"`` object), ``None`` for
    none. A type tokscope does not know is an :class:`UnsupportedComponentError`.

    >>> from_json({"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}).process([9])
    [(2, None), (9, 0), (3, None)]
    >>> from_json(None) is None
    True
    """
    if obj is None:
        return None
    if not isinstance(obj, Mapping):
        raise TokenizerFileError("the post-processor is not an object")
    kind = obj.get("type")
    if kind == "BertProcessing":
        return BertProcessing(obj.get("sep"), obj.get("cls"))
    if kind == "RobertaProcessing":
        return RobertaProcessing(
            obj.get("sep"), obj.get("cls"),
            trim_offsets=_bool(obj, "trim_offsets", True), add_prefix_space=_bool(obj, "add_prefix_space", True),
        )
    if kind == "ByteLevel":
        return ByteLevel(
            add_prefix_space=_bool(obj, "add_prefix_space", True),
            trim_offsets=_bool(obj, "trim_offsets", True),
            use_regex=_bool(obj, "use_regex", True),
        )
    if kind == "TemplateProcessing":
        for name in ("single", "pair", "special_tokens"):
            if name not in obj:
                raise TokenizerFileError(f"TemplateProcessing without {name}")
        return TemplateProcessing(obj["single"], obj["pair"], obj["special_tokens"])
    if kind == "Sequence":
        processors = obj.get("processors")
        if not isinstance(processors, list):
            raise TokenizerFileError("Sequence post-processor without its list of processors")
        inner = []
        for item in processors:
            found = from_json(item)
            if found is None:
                raise TokenizerFileError("Sequence post-processor with a null processor")
            inner.append(found)
        return Sequence(inner)
    if not isinstance(kind, str):
        raise TokenizerFileError("post-processor without a type")
    raise UnsupportedComponentError("post-processor", kind)
