"""Truncation as a ``tokenizer.json`` sets it (its ``"truncation"`` object), applied as Hugging
Face's ``Tokenizer.encode`` applies it: before the template, to the text's own tokens, with room
left for the tokens the template adds.

Only the kept tokens are modelled: ``stride`` shapes Hugging Face's *overflowing* encodings (the
cut-off parts, which tokscope does not return), so it only has to be checked, as the library
checks it.

>>> t = Truncation(max_length=5)
>>> t.keep(9, added=2), Truncation(max_length=5, direction="Left").keep(9, added=2), t.keep(3, added=2)
((0, 3), (6, 9), (0, 3))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..text.errors import TokenizerFileError, TokscopeError

DIRECTIONS = ("Right", "Left")
STRATEGIES = ("LongestFirst", "OnlyFirst", "OnlySecond")


@dataclass(frozen=True, slots=True)
class Truncation:
    """``max_length`` tokens at most (template included), cut at the end (``direction``
    ``Right``) or the start (``Left``)."""

    max_length: int
    stride: int = 0
    strategy: str = "LongestFirst"
    direction: str = "Right"

    def keep(self, n: int, added: int) -> tuple[int, int]:
        """The ``[lo, hi)`` range of a single sequence's ``n`` tokens that is kept when the
        template adds ``added`` tokens around them (as Hugging Face counts: a ``max_length``
        below ``added`` leaves the sequence whole, one equal to it leaves nothing).

        >>> Truncation(max_length=1).keep(4, added=2), Truncation(max_length=2).keep(4, added=2)
        ((0, 4), (0, 0))
        """
        if added > self.max_length:  # Hugging Face's unsigned subtraction wraps: no limit
            return 0, n
        limit = self.max_length - added
        if limit and n <= limit:
            return 0, n
        if self.strategy == "OnlySecond":
            raise TokscopeError("the file's truncation strategy OnlySecond needs a second sequence (Hugging Face refuses too)")
        if limit and self.stride >= limit:
            raise TokscopeError(f"the file's truncation stride {self.stride} is not below its effective max length "
                                f"{limit} ({self.max_length} - {added} template tokens)")
        return (0, limit) if self.direction == "Right" else (n - limit, n)


def _int(obj: Mapping[str, Any], name: str, default: int | None = None) -> int:
    value = obj.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TokenizerFileError(f"truncation {name} {value!r} is not a count")
    return value


def truncation_from_json(obj: Any) -> Truncation | None:
    """The ``"truncation"`` object of a ``tokenizer.json`` (``None`` for none).

    >>> truncation_from_json({"direction": "Left", "max_length": 8, "strategy": "LongestFirst", "stride": 0})
    Truncation(max_length=8, stride=0, strategy='LongestFirst', direction='Left')
    """
    if obj is None:
        return None
    if not isinstance(obj, Mapping):
        raise TokenizerFileError("truncation is not an object")
    direction = obj.get("direction", "Right")
    strategy = obj.get("strategy", "LongestFirst")
    if direction not in DIRECTIONS:
        raise TokenizerFileError(f"truncation direction {direction!r} is not Right or Left")
    if strategy not in STRATEGIES:
        raise TokenizerFileError(f"truncation strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
    return Truncation(_int(obj, "max_length"), _int(obj, "stride", 0), strategy, direction)
