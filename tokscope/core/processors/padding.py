"""Padding as a ``tokenizer.json`` sets it (its ``"padding"`` object), applied as Hugging Face's
``Tokenizer.encode`` and ``encode_batch`` apply it: after the template, ``pad_id`` added up to a
fixed length (``{"Fixed": N}``) or to the longest encoding of the batch (``BatchLongest``; a
single encode is its own batch), rounded up to ``pad_to_multiple_of``, on the right or the left.
Padding never cuts.

>>> p = Padding(pad_id=0, fixed=6, pad_to_multiple_of=4)
>>> p.target([3]), p.pads(3, 8)
(8, (0, 5))
>>> Padding(pad_id=0, direction="Left").pads(2, 4)
(2, 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..text.errors import TokenizerFileError


@dataclass(frozen=True, slots=True)
class Padding:
    """``pad_id`` (spelled ``pad_token``) added to reach the target length; ``fixed`` is the Fixed
    strategy's length, ``None`` for BatchLongest. (The file's ``pad_type_id`` is checked and not
    kept: type ids are not part of what tokscope returns.)"""

    pad_id: int
    pad_token: str = "[PAD]"
    fixed: int | None = None
    direction: str = "Right"
    pad_to_multiple_of: int | None = None

    def target(self, lengths: Iterable[int]) -> int:
        """The length every encoding of a batch of ``lengths`` is padded to."""
        length = self.fixed if self.fixed is not None else max(lengths, default=0)
        multiple = self.pad_to_multiple_of
        if multiple and length % multiple:
            length += multiple - length % multiple
        return length

    def pads(self, n: int, target: int) -> tuple[int, int]:
        """How many pad tokens go before and after ``n`` tokens to make ``target``."""
        missing = max(0, target - n)
        return (missing, 0) if self.direction == "Left" else (0, missing)

    def apply(self, ids: list[int], target: int) -> list[int]:
        """``ids`` padded to ``target``.

        >>> Padding(pad_id=9, direction="Left").apply([1, 2], 4)
        [9, 9, 1, 2]
        """
        before, after = self.pads(len(ids), target)
        return [self.pad_id] * before + ids + [self.pad_id] * after


def _count(obj: Mapping[str, Any], name: str, default: Any) -> Any:
    value = obj.get(name, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TokenizerFileError(f"padding {name} {value!r} is not a count")
    return value


def padding_from_json(obj: Any) -> Padding | None:
    """The ``"padding"`` object of a ``tokenizer.json`` (``None`` for none).

    >>> padding_from_json({"strategy": {"Fixed": 8}, "direction": "Left", "pad_to_multiple_of": None,
    ...                    "pad_id": 1, "pad_type_id": 0, "pad_token": "<pad>"})
    Padding(pad_id=1, pad_token='<pad>', fixed=8, direction='Left', pad_to_multiple_of=None)
    """
    if obj is None:
        return None
    if not isinstance(obj, Mapping):
        raise TokenizerFileError("padding is not an object")
    strategy = obj.get("strategy", "BatchLongest")
    if strategy == "BatchLongest":
        fixed = None
    elif isinstance(strategy, Mapping) and set(strategy) == {"Fixed"}:
        fixed = _count(strategy, "Fixed", 0)
    else:
        raise TokenizerFileError(f"padding strategy {strategy!r} is not BatchLongest or Fixed")
    direction = obj.get("direction", "Right")
    if direction not in ("Right", "Left"):
        raise TokenizerFileError(f"padding direction {direction!r} is not Right or Left")
    token = obj.get("pad_token", "[PAD]")
    if not isinstance(token, str):
        raise TokenizerFileError(f"padding pad_token {token!r} is not a string")
    _count(obj, "pad_type_id", 0)
    return Padding(_count(obj, "pad_id", 0), token, fixed, direction, _count(obj, "pad_to_multiple_of", None))
