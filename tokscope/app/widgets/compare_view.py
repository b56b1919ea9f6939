"""One pane of the comparison screen: the explorer's token view, plus two marks.

- pieces that start at a boundary the first (reference) tokenizer does not have are drawn in
  bold yellow (an underline made spaces look like ``__``; the first pane has none);
- pieces that overlap the piece picked in another pane are drawn reversed.

The pane reports the user's picks and its scrolling to the screen instead of to the explorer.
"""

from __future__ import annotations

from rich.style import Style
from textual.message import Message

from ...core.insights.compare import Segmentation
from .token_view import MOVE_BINDINGS, TokenView

#: added to a piece that starts where the first tokenizer does not cut
MARK = Style(color="#ffd27f", bold=True)
#: added to a piece that overlaps the piece picked in another pane
OVERLAP = Style(reverse=True, bold=True)


class ComparePane(TokenView, inherit_bindings=False):
    """A :class:`TokenView` of one tokenizer in the comparison screen (see the module docstring).

    It keeps the token view's movement keys but not its letter keys, which act on the explorer.
    """

    BINDINGS = list(MOVE_BINDINGS)

    DEFAULT_CSS = """
    ComparePane { height: 1fr; overflow-x: hidden; overflow-y: scroll; scrollbar-size-vertical: 1; }
    """

    class Chosen(Message):
        """The user moved the cursor in ``pane`` to piece ``index``."""

        def __init__(self, pane: ComparePane, index: int | None) -> None:
            super().__init__()
            self.pane = pane
            self.index = index

    class Scrolled(Message):
        """``pane`` scrolled so that character ``offset`` is in its top row."""

        def __init__(self, pane: ComparePane, offset: int) -> None:
            super().__init__()
            self.pane = pane
            self.offset = offset

    def __init__(self, key: str, *, kind: str = "truecolor", id: str | None = None) -> None:
        super().__init__(kind=kind, id=id)
        self.key = key
        self.seg: Segmentation | None = None
        self.marked: frozenset[int] = frozenset()  # byte offsets where this cuts and the first does not
        self.overlap: range = range(0)
        self.syncing = False

    def set_marks(self, seg: Segmentation | None, marked: frozenset[int]) -> None:
        self.seg = seg
        self.marked = marked
        self.refresh_all()

    def set_overlap(self, indices: range) -> None:
        if indices != self.overlap:
            self.overlap = indices
            self.refresh_all()

    def top_offset(self) -> int:
        """The character offset shown in the top row."""
        row = max(0, min(int(self.scroll_y), len(self.rows) - 1))
        return self.rows[row] if self.rows else 0

    def _piece_style(self, i: int) -> Style:
        style = super()._piece_style(i)
        if i == self.selected:
            return style
        if i in self.overlap:
            return style + OVERLAP
        seg = self.seg
        if i and self.marked and seg is not None and i < len(seg.ends) and seg.ends[i - 1] in self.marked:
            return style + MARK
        return style

    # the explorer listens for TokenView messages: keep ours inside the comparison screen
    def on_token_view_selected(self, event: TokenView.Selected) -> None:
        event.stop()
        if event.from_user:
            self.post_message(self.Chosen(self, event.index))

    def on_token_view_picked(self, event: TokenView.Picked) -> None:
        event.stop()

    def on_key(self, event) -> None:
        # no input pane to type into: letters are the comparison screen's keys (the token
        # view's handler, which sends typing to the input pane, is skipped)
        event.prevent_default()

    def on_token_view_typed(self, event: TokenView.Typed) -> None:
        event.stop()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self.syncing and round(old_value) != round(new_value):
            self.post_message(self.Scrolled(self, self.top_offset()))
