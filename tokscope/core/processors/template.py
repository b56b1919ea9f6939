"""TemplateProcessing (``$A``, ``$B`` and special tokens in a template), as Hugging Face's
``processors/template.rs``."""

from __future__ import annotations

from collections import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..text.errors import TokenizerFileError, TokscopeError
from .base import Encoding, ProcessorBase


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


class TemplateProcessing(ProcessorBase):
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
