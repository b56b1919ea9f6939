"""Post-processors: the templates that add a model's special tokens (``[CLS] … [SEP]``, ``<s> …``).

Each works as Hugging Face's ``process_encodings``: on a list of encodings (one, or two for a
pair), returning a list of encodings that the caller joins. :meth:`process` starts from the
encoding of ``ids`` (and of ``pair``) and returns the joined result as ``(id, source)``, where
``source`` is the index of the input token it came from (``pair``'s tokens are numbered after
``ids``'s) or ``None`` for a token the template added; :meth:`process_typed` also gives each
token's type id.

Only ids and type ids are modelled. ``RobertaProcessing`` and ``ByteLevel`` also trim the spaces
off the offsets of byte-level tokens (``trim_offsets``); that moves offsets, never ids, so it is
left to whoever places pieces on the text.

>>> bert = BertProcessing(sep=("[SEP]", 102), cls=("[CLS]", 101))
>>> bert.process([7, 8], [9])
[(101, None), (7, 0), (8, 1), (102, None), (9, 2), (102, None)]
"""

from __future__ import annotations

from collections import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..text.errors import TokenizerFileError, TokscopeError, UnsupportedComponentError

#: One token of an encoding: ``(id, source, type_id)``.
Item = tuple[int, int | None, int]
Encoding = list[Item]


class _Processor:
    """What every post-processor shares: :meth:`process` over :meth:`process_encodings`."""

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        raise NotImplementedError

    def added_tokens(self, is_pair: bool) -> int:
        raise NotImplementedError

    def process_typed(
        self, ids: abc.Sequence[int], pair: abc.Sequence[int] | None = None, *, add_special_tokens: bool = True
    ) -> list[Item]:
        """The template applied, as ``(id, source, type_id)``."""
        encodings: list[Encoding] = [[(t, i, 0) for i, t in enumerate(ids)]]
        if pair is not None:
            base = len(ids)
            encodings.append([(t, base + i, 1) for i, t in enumerate(pair)])
        return [item for encoding in self.process_encodings(encodings, add_special_tokens) for item in encoding]

    def process(
        self, ids: abc.Sequence[int], pair: abc.Sequence[int] | None = None, *, add_special_tokens: bool = True
    ) -> list[tuple[int, int | None]]:
        """The template applied, as ``(id, source)`` (see the module docstring)."""
        return [(t, s) for t, s, _ in self.process_typed(ids, pair, add_special_tokens=add_special_tokens)]


def _pair_of(value: Any, what: str) -> tuple[str, int]:
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, abc.Sequence)
        or len(value) != 2
        or not isinstance(value[0], str)
        or isinstance(value[1], bool)
        or not isinstance(value[1], int)
        or value[1] < 0
    ):
        raise TokenizerFileError(f"{what} {value!r} is not a [token, id] pair")
    return value[0], value[1]


class BertProcessing(_Processor):
    """``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]`` (B's tokens and its ``[SEP]`` of type 1)."""

    def __init__(self, sep: tuple[str, int] = ("[SEP]", 102), cls: tuple[str, int] = ("[CLS]", 101)) -> None:
        self.sep = _pair_of(sep, "BertProcessing sep")
        self.cls = _pair_of(cls, "BertProcessing cls")

    def added_tokens(self, is_pair: bool) -> int:
        return 3 if is_pair else 2

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        if not add_special_tokens:
            return encodings
        cls, sep = self.cls[1], self.sep[1]
        out = []
        for i, encoding in enumerate(encodings):
            if i == 0:
                out.append([(cls, None, 0), *encoding, (sep, None, 0)])
            else:
                out.append([*encoding, (sep, None, 1)])
        return out


class RobertaProcessing(_Processor):
    """``<s> A </s>`` and ``<s> A </s> </s> B </s>``, every type id 0. ``trim_offsets`` and
    ``add_prefix_space`` only move offsets (see the module docstring)."""

    def __init__(
        self,
        sep: tuple[str, int] = ("</s>", 2),
        cls: tuple[str, int] = ("<s>", 0),
        *,
        trim_offsets: bool = True,
        add_prefix_space: bool = True,
    ) -> None:
        self.sep = _pair_of(sep, "RobertaProcessing sep")
        self.cls = _pair_of(cls, "RobertaProcessing cls")
        self.trim_offsets = bool(trim_offsets)
        self.add_prefix_space = bool(add_prefix_space)

    def added_tokens(self, is_pair: bool) -> int:
        return 4 if is_pair else 2

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        encodings = [[(t, s, 0) for t, s, _ in encoding] for encoding in encodings]
        if not add_special_tokens:
            return encodings
        cls, sep = self.cls[1], self.sep[1]
        out = []
        for i, encoding in enumerate(encodings):
            first = cls if i == 0 else sep
            out.append([(first, None, 0), *encoding, (sep, None, 0)])
        return out


class ByteLevel(_Processor):
    """Adds no token; in Hugging Face it trims spaces off byte-level offsets (ids unchanged)."""

    def __init__(self, *, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = bool(add_prefix_space)
        self.trim_offsets = bool(trim_offsets)
        self.use_regex = bool(use_regex)

    def added_tokens(self, is_pair: bool) -> int:
        return 0

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        return encodings


@dataclass(frozen=True, slots=True)
class TemplatePiece:
    """One element of a template: a sequence (``sequence`` is ``"A"`` or ``"B"``) or a special
    token (``special`` is its key in the special-token map), with the type id it carries."""

    sequence: str | None
    special: str | None
    type_id: int

    @staticmethod
    def parse(text: str) -> TemplatePiece:
        """One piece of Hugging Face's template syntax: ``$A``, ``$B``, ``$`` (A), ``$1`` (A with
        type id 1), ``[CLS]``, each optionally ``:type_id``.

        >>> TemplatePiece.parse("$B:1"), TemplatePiece.parse("[CLS]")
        (TemplatePiece(sequence='B', special=None, type_id=1), TemplatePiece(sequence=None, special='[CLS]', type_id=0))
        """
        parts = text.split(":")
        if len(parts) > 2:
            raise TokenizerFileError(f"cannot read the template piece {text!r}")
        type_id = 0
        if len(parts) == 2:
            if not parts[1].isdigit() or not parts[1].isascii():
                raise TokenizerFileError(f"cannot read the template piece {text!r}")
            type_id = int(parts[1])
        name = parts[0]
        if name.startswith("$"):
            rest = name[1:]
            if rest in ("", "A", "a"):
                piece = TemplatePiece("A", None, 0)
            elif rest in ("B", "b"):
                piece = TemplatePiece("B", None, 0)
            elif rest.isdigit() and rest.isascii():
                piece = TemplatePiece("A", None, int(rest))
            else:
                raise TokenizerFileError(f"cannot read the template piece {text!r}")
            if len(parts) == 2:
                piece = TemplatePiece(piece.sequence, None, type_id)
            return piece
        return TemplatePiece(None, name, type_id)


def _template(value: Any, what: str) -> tuple[TemplatePiece, ...]:
    """A template from its ``tokenizer.json`` form (a list of ``{"Sequence": …}`` and
    ``{"SpecialToken": …}`` objects) or from Hugging Face's string syntax."""
    if isinstance(value, str):
        return tuple(TemplatePiece.parse(p) for p in value.split(" "))
    if not isinstance(value, list):
        raise TokenizerFileError(f"TemplateProcessing {what} template {value!r} is not a list")
    out = []
    for item in value:
        if isinstance(item, str):
            out.append(TemplatePiece.parse(item))
            continue
        if not isinstance(item, Mapping) or len(item) != 1:
            raise TokenizerFileError(f"TemplateProcessing {what} template piece {item!r} is not understood")
        (kind, body), = item.items()
        if not isinstance(body, Mapping):
            raise TokenizerFileError(f"TemplateProcessing {what} template piece {item!r} is not understood")
        type_id = body.get("type_id", 0)
        if isinstance(type_id, bool) or not isinstance(type_id, int) or type_id < 0:
            raise TokenizerFileError(f"TemplateProcessing {what} template piece {item!r} has a bad type_id")
        if kind == "Sequence" and body.get("id") in ("A", "B"):
            out.append(TemplatePiece(body["id"], None, type_id))
        elif kind == "SpecialToken" and isinstance(body.get("id"), str):
            out.append(TemplatePiece(None, body["id"], type_id))
        else:
            raise TokenizerFileError(f"TemplateProcessing {what} template piece {item!r} is not understood")
    return tuple(out)


class TemplateProcessing(_Processor):
    """Hugging Face's template processor. ``special_tokens`` maps each special token named in a
    template to its ids (``{"[CLS]": [101]}``; a special token may stand for several ids), or is
    given as ``[(token, id), ...]`` or in ``tokenizer.json``'s form.

    >>> t = TemplateProcessing("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", [("[CLS]", 1), ("[SEP]", 2)])
    >>> t.process_typed([5], [6])
    [(1, None, 0), (5, 0, 0), (2, None, 0), (6, 1, 1), (2, None, 1)]
    >>> t.added_tokens(is_pair=True)
    3
    """

    def __init__(self, single: Any = "$0", pair: Any = "$A:0 $B:1", special_tokens: Any = None) -> None:
        self.single = _template(single, "single")
        self.pair = _template(pair, "pair")
        self.special_tokens = _special_tokens(special_tokens)
        for template, what in ((self.single, "single"), (self.pair, "pair")):
            for piece in template:
                if piece.special is not None and piece.special not in self.special_tokens:
                    raise TokenizerFileError(
                        f"TemplateProcessing {what} template names {piece.special!r}, which is not among its special tokens"
                    )
        if any(piece.sequence == "B" for piece in self.single):
            raise TokenizerFileError("TemplateProcessing single template uses $B")

    def _count(self, template: tuple[TemplatePiece, ...]) -> int:
        return sum(len(self.special_tokens[p.special]) for p in template if p.special is not None)

    def added_tokens(self, is_pair: bool) -> int:
        return self._count(self.pair if is_pair else self.single)

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        if len(encodings) == 1:
            template = self.single
        elif len(encodings) == 2:
            template = self.pair
        else:
            raise TokscopeError(f"TemplateProcessing cannot apply a template to {len(encodings)} sequences")
        out: list[Encoding] = []
        for piece in template:
            if piece.sequence is not None:
                encoding = encodings[0 if piece.sequence == "A" else 1]
                out.append([(t, s, piece.type_id) for t, s, _ in encoding])
            elif add_special_tokens:
                out.append([(t, None, piece.type_id) for t in self.special_tokens[piece.special]])  # type: ignore[index]
        return out


def _special_tokens(value: Any) -> dict[str, tuple[int, ...]]:
    if value is None:
        return {}
    out: dict[str, tuple[int, ...]] = {}
    if isinstance(value, Mapping):
        for key, body in value.items():
            if isinstance(body, Mapping):
                ids = body.get("ids")
                tokens = body.get("tokens", ids)
                if not isinstance(ids, list) or not isinstance(tokens, list) or len(ids) != len(tokens):
                    raise TokenizerFileError(f"special token {key!r}: its ids and tokens are not lists of one length")
                out[key] = tuple(_id(i, key) for i in ids)
            elif isinstance(body, list):
                out[key] = tuple(_id(i, key) for i in body)
            else:
                out[key] = (_id(body, key),)
        return out
    for item in value:
        if isinstance(item, (str, bytes)) or not isinstance(item, abc.Sequence) or len(item) != 2:
            raise TokenizerFileError(f"special token {item!r} is not a (token, id) pair")
        a, b = item
        token, token_id = (a, b) if isinstance(a, str) else (b, a)
        if not isinstance(token, str):
            raise TokenizerFileError(f"special token {item!r} is not a (token, id) pair")
        out[token] = (_id(token_id, token),)
    return out


def _id(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise TokenizerFileError(f"special token {key!r} has a bad id {value!r}")
    return value


class Sequence(_Processor):
    """Several post-processors, each on what the one before returned (exactly as Hugging Face:
    after a template, the next one sees the template's pieces as separate encodings)."""

    def __init__(self, processors: abc.Sequence[_Processor]) -> None:
        self.processors = tuple(processors)

    def added_tokens(self, is_pair: bool) -> int:
        return sum(p.added_tokens(is_pair) for p in self.processors)

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        for processor in self.processors:
            encodings = processor.process_encodings(encodings, add_special_tokens)
        return encodings


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
