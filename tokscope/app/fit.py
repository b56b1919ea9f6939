"""Labels and numbers in a given width: a number is never cut, its label gives way.

Every screen that puts a figure in a narrow place (the chat's message list, the compare and
insights lines, the status line) goes through these two helpers, so ``15,033`` can never show as
``15,03``: :func:`fit_label` for one label and one number, :func:`first_fit` for a line offered in
several forms, longest first.
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


def fit_label(label: str, number: str, width: int, *, short: str | None = None, gap: int = 1) -> str:
    """``label`` and ``number`` in exactly ``width`` cells, the label on the left and the number
    whole on the right: the label gives way to ``short``, then is cut with an ellipsis, then is left
    out. A number wider than ``width`` comes back whole (the caller gives it more room).

    >>> fit_label("tokens", "15,033", 16), fit_label("assistant", "15,033", 14)
    ('tokens    15,033', 'assist… 15,033')
    >>> fit_label("assistant", "15,033", 14, short="asst"), fit_label("user", "1,234,567", 10)
    ('asst    15,033', ' 1,234,567')
    >>> fit_label("role", "123,456,789", 5)
    '123,456,789'
    """
    room = width - cell_len(number)
    if room < 0:
        return number
    if room < gap + 1:
        return " " * room + number
    for form in (label, short):
        if form is not None and cell_len(form) + gap <= room:
            return form + " " * (room - cell_len(form)) + number
    head = cut(short if short is not None and cell_len(short) < cell_len(label) else label, room - gap)
    return head + " " * (room - cell_len(head)) + number  # a wide character cut leaves a cell more


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
