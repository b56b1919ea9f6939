"""Labels and numbers in a given width: a number is never cut, its label gives way.

Every screen that puts a figure in a narrow place (the chat's message list and titles, compare's
lines and pane titles, insights' embedding line, the status line) goes through these helpers, so
``15,033`` can never show as ``15,03``: :func:`first_fit` takes a line offered in several whole
forms (the labels shortening, then figures left out whole), :func:`number_width` sizes a column
for its widest number, and only labels are ever :func:`cut`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len, set_cell_size

ELLIPSIS = "…"


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, an ellipsis marking a cut (for labels, never numbers).

    >>> cut("assistant", 9), cut("assistant", 6), cut("assistant", 1), cut("日本語", 4)
    ('assistant', 'assis…', '…', '日…')
    """
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, width - 1).rstrip() + ELLIPSIS if width > 1 else ELLIPSIS


def first_fit(forms: Sequence[str], width: int) -> str:
    """The first of ``forms`` (longest and fullest first) that fits ``width`` cells, else the last:
    each form is whole, so a line never ends in the middle of a number.

    >>> first_fit(["1,051 MB at 16 bits", "1,051 MB fp16", "1,051 MB"], 14)
    '1,051 MB fp16'
    >>> first_fit(["1,051 MB at 16 bits", "1,051 MB"], 3)
    '1,051 MB'
    """
    return next((form for form in forms if cell_len(form) <= width), forms[-1])


def number_width(numbers: Sequence[str], least: int = 1) -> int:
    """The cells the widest of ``numbers`` takes (at least ``least``): a column's width.

    >>> number_width(["21", "15,033", "…"], 3), number_width([], 3)
    (6, 3)
    """
    return max([least, *(cell_len(n) for n in numbers)])


def title_room(widget) -> int:
    """The cells a border title of ``widget`` has: its outer width less a corner, a line and a
    space each side (80 before it is laid out).

    >>> from types import SimpleNamespace as NS
    >>> title_room(NS(outer_size=NS(width=36))), title_room(NS(outer_size=NS(width=0)))
    (30, 74)
    """
    width = widget.outer_size.width or 80
    return max(1, width - 6)
