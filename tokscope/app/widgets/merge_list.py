"""The training screen's list of learned merges, drawn with the Line API."""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.text.display import token_label
from ...core.train import trainer


def merge_row(index: int, m: trainer.TrainProgress | trainer.Merge, new_id: int) -> str:
    """One line of the merge list: number, the pair, the new token and its id, the count.

    >>> merge_row(1, trainer.Merge(b"t", b"h", 256, 42, 116, 104), 256)
    '     1  t + h  →  th  #256  ×42'
    """
    left = token_label(m.left)
    right = token_label(m.right)
    new = token_label(m.left + m.right)
    return f"{index:>6}  {left} + {right}  →  {new}  #{new_id}  ×{m.count:,}"


class MergeList(ScrollView, can_focus=True):
    """The learned merges, one per line, drawn with the Line API; follows the end while training.

    Rows are the trainer's :class:`~tokscope.core.train.trainer.TrainProgress` reports as they came
    (nothing is formatted ahead); a row becomes text only when it is on screen.

    The list never asks for a layout while it fills: its scrollbars are fixed (the vertical one
    always shown, the scrollable width constant), so a new row changes only the scroll range,
    the thumb and the lines. (Assigning ``virtual_size`` would lay out the whole screen on every
    tick, and a scrollbar appearing mid-run costs three layouts: more than a short run's drawing.)
    """

    DEFAULT_CSS = """
    MergeList { height: 1fr; border: round $foreground 45%; overflow-y: scroll; overflow-x: auto; }
    """

    BINDINGS = [
        Binding("up", "scroll_up", show=False),
        Binding("down", "scroll_down", show=False),
        Binding("pageup", "page_up", show=False),
        Binding("pagedown", "page_down", show=False),
        Binding("home", "scroll_home", show=False),
        Binding("end", "scroll_end", show=False),
    ]

    #: width of the scrollable area (a merge's line is rarely wider)
    WIDTH = 60

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: one report per merge (``merges_done`` >= 1), in order; formatted when drawn
        self.rows: list[trainer.TrainProgress] = []
        #: keep the newest merge in view (moving up turns it off; End turns it back on)
        self.follow = True
        self._pass: tuple[Style, int] | None = None

    def on_mount(self) -> None:
        super().on_mount()
        self.virtual_size = Size(self.WIDTH, 0)  # the one layout: the horizontal scrollbar, if any

    def _set_height(self, height: int) -> None:
        """Change the number of rows without a layout pass (nothing outside this list moves)."""
        size = Size(self.WIDTH, height)
        if size == self.virtual_size:
            return
        self.set_reactive(MergeList.virtual_size, size)
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.window_virtual_size = height
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def clear(self) -> None:
        self.follow = True
        if not self.rows:  # already empty: nothing to redraw
            return
        self.rows = []
        self._set_height(0)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def extend(self, rows: Sequence[trainer.TrainProgress]) -> None:
        """Append rows; scroll to keep the last one in view if the list was following it."""
        if not rows:
            return
        at_end = self.follow or self.scroll_y >= self.max_scroll_y - 1
        self.rows.extend(rows)
        self._set_height(len(self.rows))
        if at_end:
            self.scroll_to(y=self.max_scroll_y, animate=False)
        self.refresh()

    def action_scroll_end(self) -> None:
        self.follow = True
        super().action_scroll_end()

    # moving up stops following the newest merge (End, or scrolling back to it, resumes)
    def action_scroll_up(self) -> None:
        self.follow = False
        super().action_scroll_up()

    def action_page_up(self) -> None:
        self.follow = False
        super().action_page_up()

    def action_scroll_home(self) -> None:
        self.follow = False
        super().action_scroll_home()

    def on_mouse_scroll_up(self) -> None:
        self.follow = False

    def line(self, index: int) -> str:
        """The text of merge ``index`` (0-based) as the list shows it."""
        p = self.rows[index]
        return merge_row(p.merges_done, p, 255 + p.merges_done)

    def render_lines(self, crop: Region) -> list[Strip]:
        # the style and width are the same for every line of one pass: look them up once
        # (``rich_style`` walks the styles of the widget and its ancestors on every call)
        self._pass = (self.rich_style, self.scrollable_content_region.width)
        try:
            return super().render_lines(crop)
        finally:
            self._pass = None

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        base, width = self._pass or (self.rich_style, self.scrollable_content_region.width)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        strip = Strip([Segment(self.line(index), base)])
        x = int(self.scroll_offset.x)
        if x:
            strip = strip.crop(x, x + width)
        return strip.adjust_cell_length(width, base)
