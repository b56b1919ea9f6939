"""A data table that shows only whole columns: a column the view's edge would cut is left blank.

A table wider than its view scrolls sideways; a plain ``DataTable`` then draws the column at the
edge in part (``0.`` for ``0.12%``, ``32`` for ``32.1%``, ``partia`` for ``partial``), a number cut
into another number. :class:`WholeColumnsTable` blanks such a column instead; scrolling brings it
in whole. The fixed columns (the encodings' names) are never blanked.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import DataTable


def cut_spans(widths: Sequence[int], fixed: int, scroll_x: int, visible: int, padding: int = 1) -> list[tuple[int, int]]:
    """The spans ``(start, end)`` of the view (in cells) that hold part of a column's text only:
    columns of ``widths`` (``padding`` cells each side included), the first ``fixed`` always at the
    left, the others scrolled by ``scroll_x`` in a view of ``visible`` cells. A column whose
    padding alone is out of view is whole.

    >>> cut_spans([10, 8, 8, 8], 1, 0, 30)  # the fourth column's text starts at 27: 3 of its 6 cells show
    [(26, 30)]
    >>> cut_spans([10, 8, 8, 8], 1, 3, 30)  # scrolled 3 cells: the second column lost its start
    [(10, 15)]
    >>> cut_spans([10, 8, 8], 1, 0, 25), cut_spans([10, 8], 1, 0, 30)  # only a padding cell out of view
    ([], [])
    """
    fixed_width = sum(widths[:fixed])
    spans = []
    x = fixed_width
    for width in widths[fixed:]:
        start, end = x - scroll_x, x + width - scroll_x
        x += width
        text_start, text_end = start + padding, end - padding
        shown_start, shown_end = max(start, fixed_width), min(end, visible)
        if shown_start >= shown_end or (text_start >= fixed_width and text_end <= visible):
            continue  # out of view, or its whole text in view
        spans.append((shown_start, shown_end))
    return spans


def blank(strip: Strip, start: int, end: int) -> Strip:
    """``strip`` with cells ``start`` to ``end`` made spaces in the style of the cell at ``start``."""
    middle = list(strip.crop(start, start + 1))
    style = middle[0].style if middle else None
    return Strip.join([strip.crop(0, start), Strip([Segment(" " * (end - start), style)]),
                       strip.crop(end, strip.cell_length)])


class WholeColumnsTable(DataTable):
    """A ``DataTable`` that never draws part of a column (see the module docstring)."""

    _drawn_widths: list[int] | None = None

    def render_line(self, y: int) -> Strip:
        widths = [column.get_render_width(self) for column in self.ordered_columns]
        if widths != self._drawn_widths:
            # the table widens its columns when idle but keeps the lines it drew before: drop them
            # (notify_style_update clears DataTable's rendered lines) so that the blanking below
            # and the line agree on where each column is
            self._drawn_widths = widths
            self.notify_style_update()
        strip = super().render_line(y)
        visible = min(strip.cell_length, self.scrollable_content_region.width or strip.cell_length)
        for start, end in cut_spans(widths, self.fixed_columns, round(self.scroll_x), visible, self.cell_padding):
            strip = blank(strip, start, end)
        return strip
