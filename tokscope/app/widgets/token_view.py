"""The token view: the text drawn as coloured pieces, with the Line API (only visible rows are painted)."""

from __future__ import annotations


from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.document import SPECIAL, Document
from ..render import BOTH, IDS, TEXT, piece_units, row_of


#: letters that work while the token view has focus (the input pane types letters): key, app action, help
VIEW_KEYS: list[tuple[str, str, str]] = [
    ("e", "pick_encoding", "pick the encoding"),
    ("v", "cycle_mode", "text / ids / both"),
    ("w", "toggle_ws", "visible whitespace"),
    ("r", "toggle_rank", "rank colours"),
    ("s", "toggle_specials", "special tokens as specials"),
    ("c", "copy('ids')", "copy ids"),
    ("p", "copy('pieces')", "copy pieces"),
    ("b", "copy('bytes')", "copy the selected token's bytes"),
    ("question_mark", "help", "help"),
    ("q", "quit", "quit"),
]


class Palette:
    """Styles for pieces. ``alternate`` colours cycle by piece index; ``rank`` buckets by merge rank."""

    def __init__(self, kind: str = "truecolor") -> None:
        self.kind = kind
        if kind == "mono":
            self.alternate = [Style(underline=True), Style(reverse=True)]
            self.rank = self.alternate
            self.partial = Style(italic=True, bold=True, reverse=True)
            self.special = Style(bold=True, reverse=True, underline=True)
            self.selected = Style(bold=True, reverse=True, blink=False, overline=True)
            self.ctrl = Style(bold=True)
            self.ws_dim = Style()
            self.id_dim = Style(italic=True)
            self.plain = Style()
            return
        if kind == "standard":
            bgs = ["blue", "magenta", "cyan", "green", "red", "yellow"]
            self.alternate = [Style(color="white" if b in ("blue", "magenta", "red") else "black", bgcolor=b) for b in bgs[:4]]
            self.rank = [
                Style(color="black", bgcolor="white"), Style(color="black", bgcolor="green"),
                Style(color="black", bgcolor="cyan"), Style(color="white", bgcolor="blue"),
                Style(color="white", bgcolor="magenta"), Style(color="white", bgcolor="red"),
            ]
            self.partial = Style(color="black", bgcolor="yellow", bold=True)
            self.special = Style(color="yellow", bgcolor="black", bold=True, reverse=True, underline=True)
            self.selected = Style(color="black", bgcolor="bright_white", bold=True, underline=True)
            self.ctrl = Style(color="bright_red", bold=True)
            self.ws_dim = Style(dim=True)
            self.id_dim = Style(dim=True, italic=True)
            self.plain = Style(dim=True)
            return
        bgs = ["#1d3f6e", "#5a2a5e", "#1f5a45", "#6b4a1a", "#5c2020", "#24515e"]
        self.alternate = [Style(color="#f0f0f0", bgcolor=b) for b in bgs]
        # early merges (low rank) cool and light, late merges warm and dark
        self.rank = [
            Style(color="#000000", bgcolor=c)
            for c in ("#d0d0d0", "#7fd1ae", "#8fc4f0", "#c9a4f0", "#f0a86b", "#f07070")
        ]
        self.partial = Style(color="#000000", bgcolor="#f5d547", bold=True)
        self.special = Style(color="#ffffff", bgcolor="#b3007a", bold=True, underline=True)
        self.selected = Style(color="#000000", bgcolor="#ffffff", bold=True, underline=True)
        self.ctrl = Style(color="#ff5f5f", bold=True)
        self.ws_dim = Style(color="#9a9a9a")
        self.id_dim = Style(italic=True, dim=True)
        self.plain = Style(color="#8a8a8a")


    def rank_bucket(self, rank: int, n_vocab: int) -> int:
        if rank < 256:
            return 0
        frac = rank / max(n_vocab, 1)
        if frac < 1 / 64:
            return 1
        if frac < 1 / 16:
            return 2
        if frac < 1 / 4:
            return 3
        if frac < 1 / 2:
            return 4
        return 5


#: Keys that move the selection through the pieces (shared with views that subclass this one).
MOVE_BINDINGS = [
    Binding("left", "move(-1)", "Prev token", show=False),
    Binding("right", "move(1)", "Next token", show=False),
    Binding("up", "move_row(-1)", "Row up", show=False),
    Binding("down", "move_row(1)", "Row down", show=False),
    Binding("pageup", "move_page(-1)", "Page up", show=False),
    Binding("pagedown", "move_page(1)", "Page down", show=False),
    Binding("home", "jump(0)", "First token", show=False),
    Binding("end", "jump(-1)", "Last token", show=False),
]


class TokenView(ScrollView, can_focus=True):
    """Pieces of the current :class:`Document`, wrapped in rows of character ranges."""

    DEFAULT_CSS = """
    TokenView { overflow-x: hidden; overflow-y: auto; scrollbar-size-vertical: 1; }
    """

    BINDINGS = [
        *MOVE_BINDINGS,
        Binding("enter", "pick", "Open token", show=False),
    ] + [Binding(key, f"app.{action}", text, show=False) for key, action, text in VIEW_KEYS]

    class Selected(Message):
        """The token cursor moved to piece ``index`` (``from_user`` False when set by the app)."""

        def __init__(self, index: int | None, from_user: bool) -> None:
            super().__init__()
            self.index = index
            self.from_user = from_user

    class Picked(Message):
        """Enter was pressed on piece ``index`` of ``view``."""

        def __init__(self, index: int, view: TokenView | None = None) -> None:
            super().__init__()
            self.index = index
            self.view = view

        @property
        def control(self) -> TokenView | None:
            return self.view

    def __init__(self, *, palette: Palette | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.doc: Document | None = None
        self.rows: list[int] = [0]
        self.rows_width = 0
        self.rows_mode = TEXT
        self.mode = TEXT
        self.ws = False
        self.rank_colours = False
        self.selected: int | None = None
        self.palette = palette or Palette()
        self._cache: LRUCache[tuple, tuple[Strip, list[tuple[int, int, int]]]] = LRUCache(1024)
        self._paint: tuple[int, Style] | None = None  # (width, base style) during render_lines

    # ----- state -----------------------------------------------------------------------------

    @property
    def layout_width(self) -> int:
        return max(8, self.scrollable_content_region.width)

    def set_doc(self, doc: Document, rows: list[int], width: int, mode: str) -> None:
        self.doc = doc
        self.rows = rows or [0]
        self.rows_width = width
        self.rows_mode = mode
        if self.selected is not None and self.selected >= len(doc.ids):
            self.selected = len(doc.ids) - 1 if doc.ids else None
        self._cache.clear()
        self.virtual_size = Size(width, len(self.rows))
        self.refresh()

    def set_options(self, *, ws: bool | None = None, rank_colours: bool | None = None) -> None:
        if ws is not None:
            self.ws = ws
        if rank_colours is not None:
            self.rank_colours = rank_colours
        self._cache.clear()
        self.refresh()

    def select(self, index: int | None, *, from_user: bool = False, scroll: bool = True) -> None:
        doc = self.doc
        if doc is None or not doc.ids:
            index = None
        elif index is not None:
            index = max(0, min(index, len(doc.ids) - 1))
        if index == self.selected:
            return
        self.selected = index
        self._cache.clear()
        self.refresh()
        if scroll and index is not None:
            self.scroll_to_piece(index)
        self.post_message(self.Selected(index, from_user))

    def row_of_piece(self, index: int) -> int:
        assert self.doc is not None
        return row_of(self.rows, self.doc.starts[index])

    def scroll_to_piece(self, index: int) -> None:
        if self.doc is None or not self.doc.ids:
            return
        row = self.row_of_piece(index)
        height = self.scrollable_content_region.height
        top = int(self.scroll_y)
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False)

    # ----- actions ---------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        if self.doc is None or not self.doc.ids:
            return
        current = self.selected if self.selected is not None else (-1 if step > 0 else len(self.doc.ids))
        self.select(current + step, from_user=True)

    def _piece_in_row(self, row: int, column_chars: int) -> int | None:
        doc = self.doc
        if doc is None or not doc.ids:
            return None
        row = max(0, min(row, len(self.rows) - 1))
        start = self.rows[row]
        end = self.rows[row + 1] if row + 1 < len(self.rows) else len(doc.text)
        target = min(start + column_chars, max(start, end - 1))
        index = doc.piece_at(target)
        return index

    def action_move_row(self, step: int) -> None:
        doc = self.doc
        if doc is None or not doc.ids:
            return
        if self.selected is None:
            self.select(0, from_user=True)
            return
        start = doc.starts[self.selected]
        row = row_of(self.rows, start)
        column = start - self.rows[row]
        target = row + step
        if not 0 <= target < len(self.rows):
            return
        index = self._piece_in_row(target, column)
        if index is not None:
            if index == self.selected:
                index += step
            self.select(index, from_user=True)

    def action_move_page(self, step: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        doc = self.doc
        if doc is None or not doc.ids:
            return
        if self.selected is None:
            self.select(0, from_user=True)
            return
        row = self.row_of_piece(self.selected) + step * height
        row = max(0, min(row, len(self.rows) - 1))
        index = self._piece_in_row(row, 0)
        if index is not None:
            self.scroll_to(y=max(0, int(self.scroll_y) + step * height), animate=False)
            self.select(index, from_user=True)

    def action_jump(self, where: int) -> None:
        if self.doc is None or not self.doc.ids:
            return
        self.select(0 if where == 0 else len(self.doc.ids) - 1, from_user=True)

    def action_pick(self) -> None:
        if self.selected is not None:
            self.post_message(self.Picked(self.selected, self))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row = int(self.scroll_y) + offset.y
        if self.doc is None or not 0 <= row < len(self.rows):
            return
        _, spans = self._render_row(row)
        for x0, x1, index in spans:
            if x0 <= offset.x < x1:
                self.focus()
                self.select(index, from_user=True, scroll=False)
                return

    # ----- painting --------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        # the widget's base style and width are the same for every line of one paint; working
        # them out once (not per line) halves the cost of repainting the view after an edit
        self._paint = (self.scrollable_content_region.width, self.rich_style)
        try:
            return super().render_lines(crop)
        finally:
            self._paint = None

    def render_line(self, y: int) -> Strip:
        row = int(self.scroll_y) + y
        paint = self._paint
        width, base = paint if paint is not None else (self.scrollable_content_region.width, self.rich_style)
        if self.doc is None or row >= len(self.rows):
            return Strip.blank(width, base)
        strip, _ = self._render_row(row)
        return strip.crop_extend(0, width, base)

    def _piece_style(self, i: int) -> Style:
        """The style of piece ``i`` (subclasses add marks here)."""
        doc = self.doc
        assert doc is not None
        return self._style_of(i, doc.ids[i], doc.flags[i])

    def _styler(self):
        """``style(i, token_id, flags)`` for the painting loops: :meth:`_style_of` unless a subclass
        overrides :meth:`_piece_style`."""
        if type(self)._piece_style is TokenView._piece_style:
            return self._style_of
        piece_style = self._piece_style
        return lambda i, token_id, flags: piece_style(i)

    def _style_of(self, i: int, token_id: int, flags: int) -> Style:
        doc = self.doc
        assert doc is not None
        pal = self.palette
        if i == self.selected:
            return pal.selected
        if flags & SPECIAL:
            return pal.special
        if self.rank_colours:
            style = pal.rank[pal.rank_bucket(token_id, doc.tokenizer.n_vocab)]
            if pal.kind == "mono" or len(pal.rank) > 2:
                # neighbours in the same bucket still need a boundary: underline every other piece
                return style + Style(underline=bool(i & 1)) if pal.kind != "mono" else pal.alternate[i & 1]
            return style
        return pal.alternate[i % len(pal.alternate)]

    def _render_row(self, row: int) -> tuple[Strip, list[tuple[int, int, int]]]:
        doc = self.doc
        assert doc is not None
        rows = self.rows
        a = rows[row]
        b = rows[row + 1] if row + 1 < len(rows) else len(doc.text)
        key = (row, a, b)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if self.rows_mode == TEXT:
            result = self._render_text_row(a, b)
        else:
            result = self._render_piece_row(a, b, self.rows_mode == BOTH)
        self._cache[key] = result
        return result

    def _render_text_row(self, a: int, b: int) -> tuple[Strip, list[tuple[int, int, int]]]:
        doc = self.doc
        assert doc is not None
        pal = self.palette
        segments: list[Segment] = []
        spans: list[tuple[int, int, int]] = []
        x = 0
        tok = doc.tokenizer
        ws = self.ws
        text_all = doc.text
        style_of = self._styler()
        if len(doc) and a < doc.covered:
            i = doc.starts.bisect_right(a) - 1
            ends = doc.ends
            while i > 0 and ends[i - 1] > a:
                i -= 1
            for i, token_id, start, end, flags in doc.iter_pieces(max(i, 0)):
                if start >= b:
                    break
                if end > a:
                    style = style_of(i, token_id, flags)
                    x0 = x
                    text = text_all[max(a, start) : min(b, end)]
                    if not flags and (text.isascii() and text.isprintable() and not (ws and " " in text)):
                        segments.append(Segment(text, style))
                        x += len(text)
                    else:
                        for rel, glyph, kind in piece_units(tok.token_bytes(token_id), ws):
                            pos = start + rel
                            if a <= pos < b and glyph:
                                if kind == "ws":
                                    seg_style = style + pal.ws_dim if ws and i != self.selected else style
                                elif kind == "ctrl":
                                    seg_style = style + pal.ctrl
                                elif kind == "hex":
                                    seg_style = pal.selected if i == self.selected else pal.partial
                                else:
                                    seg_style = style
                                segments.append(Segment(glyph, seg_style))
                                x += cell_len(glyph)
                    if x > x0:
                        spans.append((x0, x, i))
        if b > doc.covered:
            # not tokenized yet (a large text still loading): plain text
            from ..render import safe_text

            text = safe_text(doc.text[max(a, doc.covered) : b].replace("\n", ""), ws)
            segments.append(Segment(text, pal.plain))
        return Strip(segments), spans

    def _render_piece_row(self, a: int, b: int, both: bool) -> tuple[Strip, list[tuple[int, int, int]]]:
        doc = self.doc
        assert doc is not None
        pal = self.palette
        segments: list[Segment] = []
        spans: list[tuple[int, int, int]] = []
        x = 0
        tok = doc.tokenizer
        style_of = self._styler()
        for i, token_id, start, _, flags in doc.iter_pieces(doc.starts.bisect_left(a)):
            if start >= b:
                break
            style = style_of(i, token_id, flags)
            x0 = x
            label = str(token_id)
            if both:
                for _, glyph, kind in piece_units(tok.token_bytes(token_id), True):
                    if kind == "hex":
                        seg_style = pal.selected if i == self.selected else pal.partial
                    elif kind == "ctrl":
                        seg_style = style + pal.ctrl
                    else:
                        seg_style = style
                    segments.append(Segment(glyph, seg_style))
                    x += cell_len(glyph)
                segments.append(Segment(" " + label, style + pal.id_dim))
                x += len(label) + 1
            else:
                segments.append(Segment(label, style))
                x += len(label)
            spans.append((x0, x, i))
            segments.append(Segment(" "))
            x += 1
        if b > doc.covered:
            from ..render import safe_text

            segments.append(Segment(safe_text(doc.text[max(a, doc.covered) : b].replace("\n", "")), pal.plain))
        return Strip(segments), spans

    def refresh_all(self) -> None:
        self._cache.clear()
        self.refresh()


__all__ = ["TokenView", "Palette", "TEXT", "IDS", "BOTH"]
