"""The model's offsets: where Hugging Face's ``tokenizers`` says each token is, once its
post-processor has trimmed the spaces off (``trim_offsets`` of ``ByteLevel`` and
``RobertaProcessing``).

A piece as tokscope draws it covers every character of its token, the space a ``Ġworld`` stands
for included. Hugging Face's post-processor moves the start past a token's leading spaces and
the end before its trailing ones (never past each other), except for the first token of a
sequence when ``add_prefix_space`` says that one leading space was added by the pre-tokenizer.
That rule is :func:`trim_span`; a post-processor says how it trims as a tuple of
:class:`TrimStep` (:meth:`~.base.ProcessorBase.trim_steps`), and :func:`model_span` applies them
to one token, so a stream of pieces is trimmed piece by piece.

>>> steps = (TrimStep(add_prefix_space=True, first=0),)
>>> [model_span(t, span, k, steps) for k, (t, span) in enumerate([("Ġhello", (0, 6)), ("Ġworld", (6, 12))])]
[(0, 6), (7, 12)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..text.unicode import WHITESPACE

#: the byte-level alphabet's letter for the space byte
BYTE_LEVEL_SPACE = "\u0120"


@dataclass(frozen=True, slots=True)
class TrimStep:
    """One trimming of offsets: ``add_prefix_space`` as the post-processor sets it, and ``first``,
    the index the first token of the text has in the encoding this step sees (0, or more when an
    earlier processor of a Sequence put template tokens before it)."""

    add_prefix_space: bool
    first: int = 0


def _is_space(ch: str) -> bool:
    return ch == BYTE_LEVEL_SPACE or ch in WHITESPACE


def space_run(token: str, reverse: bool = False) -> int:
    """How many spaces (``Ġ`` or White_Space characters) ``token`` starts with (ends with,
    ``reverse``).

    >>> space_run("ĠĠhiĠ"), space_run("ĠĠhiĠ", reverse=True), space_run("hi")
    (2, 1, 0)
    """
    n = 0
    for ch in (reversed(token) if reverse else token):
        if not _is_space(ch):
            break
        n += 1
    return n


def trim_span(token: str, span: tuple[int, int], index: int, add_prefix_space: bool) -> tuple[int, int]:
    """``span`` of ``token`` (at ``index`` in its encoding) trimmed as Hugging Face's
    ``process_offsets`` trims it.

    >>> trim_span("ĠĠĠĠHelloĠĠ", (0, 11), 1, True), trim_span("ĠĠĠĠ", (25, 29), 4, True)
    ((4, 9), (29, 29))
    >>> trim_span("Ġ", (0, 1), 0, True), trim_span("Ġhi", (0, 3), 0, True), trim_span("Ġhi", (0, 3), 0, False)
    ((0, 0), (0, 3), (1, 3))
    """
    leading = space_run(token)
    if not leading:
        if not token or not _is_space(token[-1]):
            return span
    trailing = space_run(token, reverse=True)
    start, end = span
    if leading:
        if index == 0 and add_prefix_space and leading == 1:
            leading = 0
        start = min(start + leading, end)
    if trailing and end >= trailing:
        end = max(end - trailing, start)
    return start, end


def model_span(token: str, span: tuple[int, int], index: int, steps: Sequence[TrimStep]) -> tuple[int, int]:
    """The span of the text's token ``index`` (counted from the text's first token) after every
    trimming step (unchanged when there is none)."""
    for step in steps:
        span = trim_span(token, span, index + step.first, step.add_prefix_space)
    return span
