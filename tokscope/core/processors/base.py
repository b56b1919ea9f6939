"""What the post-processors share: the encoding they add tokens to (:class:`Encoding`, its
:class:`Item` rows), their base, and reading a ``[token, id]`` pair."""

from __future__ import annotations

from collections import abc
from typing import Any

from ..text.errors import TokenizerFileError
from .offsets import TrimStep


#: One token of an encoding: ``(id, source, type_id)``.
Item = tuple[int, int | None, int]


Encoding = list[Item]


class ProcessorBase:
    """What every post-processor shares: :meth:`process` over :meth:`process_encodings`."""

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool = True) -> list[Encoding]:
        raise NotImplementedError

    def added_tokens(self, is_pair: bool) -> int:
        raise NotImplementedError

    def trim_steps(self, add_special_tokens: bool = True) -> tuple[TrimStep, ...]:
        """How this post-processor trims the offsets of a text's tokens (see :mod:`.offsets`):
        none unless it says so."""
        return ()

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


def pair_of(value: Any, what: str) -> tuple[str, int]:
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
