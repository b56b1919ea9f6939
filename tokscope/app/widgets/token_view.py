"""The token view: the text drawn as coloured pieces, with the Line API (only visible rows are painted)."""

from __future__ import annotations


from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.document.document import ADDED, SPECIAL, Document
from ..render import BOTH, IDS, TEXT, both_units, char_glyph, piece_cells, readable, row_of, safe_text
from .editor import MARKS_SHOWN, typed_text


#: the rank ramp's buckets: (upper bound as a share of the vocabulary, label); ranks below 256 are
#: the single bytes
RANK_BUCKETS = (1 / 64, 1 / 16, 1 / 4, 1 / 2, 1.0)


def rank_bucket(rank: int, n_vocab: int) -> int:
    """The rank colour of a token: 0 for single bytes, then 1..5 by its rank's share of the vocabulary.

    >>> [rank_bucket(r, 100_000) for r in (5, 300, 3000, 20_000, 60_000)]
    [0, 1, 2, 3, 5]
    """
    if rank < 256:
        return 0
    frac = rank / max(n_vocab, 1)
    for k, bound in enumerate(RANK_BUCKETS, 1):
        if frac < bound:
            return k
    return len(RANK_BUCKETS)


def rank_ranges(n_vocab: int) -> list[str]:
    """The rank range each rank colour stands for (the legend under the token view).

    >>> rank_ranges(200_000)
    ['0-255', '256-3.1k', '3.1k-12k', '12k-50k', '50k-100k', '100k-200k']
    """
    def short(n: int) -> str:
        if n >= 10_000:
            return f"{n / 1000:.0f}k"
        if n >= 1000:
            return f"{n / 1000:.1f}k"
        return str(n)

    bounds = [256] + [max(256, int(n_vocab * b)) for b in RANK_BUCKETS]
    out = ["0-255"]
    for lo, hi in zip(bounds, bounds[1:]):
        out.append(f"{short(lo)}-{short(hi)}")
    return out


# zero-width characters (combining marks) drawn in a run on one base: MARKS_SHOWN (the editor's),
# the rest counted (``é́́́`` and ``+999,996``)
#: characters one row may send to the terminal; a row that would send more (or draw wider than
#: the view, which only marks laid out as zero cells wide can make) ends in ``…+N``, N the tokens
#: it does not draw
ROW_CHARS = 4096
#: cells a row may run past the view before it is cut: the layout lets a line's ⏎ hang past the
#: width and counts a piece that starts with a combining mark without the ◌ it is drawn on; the
#: view crops those few cells, as it always did
HANG = 2
#: rows of drawn pieces kept (a view scrolled back and forth draws each row once)
ROW_CACHE = 1024


def count_label(hidden: int) -> str:
    """What a cut row ends in: how many of its tokens are not drawn.

    >>> count_label(999_996)
    '…+999,996'
    """
    return f"…+{hidden:,}"


def _first_change(old: Document, doc: Document, restart: int, new_end: int) -> int:
    """The first offset from which ``doc`` (an edit of ``old`` that re-tokenized from ``restart``)
    draws differently: the edit's first character, or an earlier piece that changed."""
    a, b = old.text, doc.text
    # the texts agree from ``restart`` up to ``at``: found by halving, each comparison at C speed
    # (a re-scan can start far back, before a long run of whitespace)
    at, hi = restart, min(new_end, len(a), len(b))
    while at < hi:
        mid = (at + hi + 1) // 2
        if a[restart:mid] == b[restart:mid]:
            at = mid
        else:
            hi = mid - 1
    i = doc.starts.bisect_left(restart)
    n = min(len(old), len(doc))
    while i < n and doc.starts[i] < at:
        if (old.ids[i], old.starts[i], old.ends[i], old.flags[i]) != (doc.ids[i], doc.starts[i], doc.ends[i], doc.flags[i]):
            return min(at, doc.starts[i])
        i += 1
    return at


#: the palette's parts, as component classes (``token-view--NAME``)
ALTERNATE = 6
RANKS = 6
PARTS = ("partial", "char", "special", "added", "unknown", "mark", "gap", "selected", "hover", "control", "whitespace", "id",
         "pending")


def palette_kind(app) -> str:
    """``truecolor``, ``standard`` (16 colours) or ``mono`` (``NO_COLOR``): the one choice every
    token view of an app makes (the explorer's ``palette`` argument, else the terminal's)."""
    kind = getattr(app, "token_palette", None)
    if kind:
        return kind
    if app.no_color:
        return "mono"
    return "standard" if app.console.color_system in ("standard", "windows") else "truecolor"


#: the theme the palette's own colours are for; any other theme (Ctrl+P, "theme") gives the pieces
#: its colours: the alternating ones, the rank ramp (light to dark) and the marked kinds
DEFAULT_THEME = "textual-dark"
THEME_PIECES = ("primary-darken-2", "secondary-darken-2", "success-darken-3", "warning-darken-3", "error-darken-2",
                "accent-darken-2")
THEME_RANKS = ("primary-lighten-3", "primary-lighten-2", "primary-lighten-1", "primary", "primary-darken-2",
               "primary-darken-3")
THEME_PARTS = {"partial": "warning", "char": "warning", "special": "accent", "added": "success-darken-2",
               "unknown": "error-lighten-2", "selected": "foreground"}


class Palette:
    """Rich styles for pieces, read from the widget's component classes (so themes restyle them).

    ``alternate`` colours cycle by piece index; ``rank`` is a ramp from light (early merges) to
    dark (late merges).
    """

    def __init__(self, widget) -> None:
        get = widget.get_component_rich_style
        self.alternate = [get(f"token-view--piece-{k}", partial=True) for k in range(1, ALTERNATE + 1)]
        self.rank = [get(f"token-view--rank-{k}", partial=True) for k in range(1, RANKS + 1)]
        for name in PARTS:
            setattr(self, name, get(f"token-view--{name}", partial=True))
        self.mono = widget.has_class("-mono")
        if widget.has_class("-ansi"):
            from rich.style import Style

            # in 16 colours a glyph keeps its piece's text colour (the pairs are chosen for
            # contrast) and is marked by style: a colour of its own came out magenta on magenta
            self.control = Style(bold=True)
            self.whitespace = Style(italic=True)
        app = widget.app if widget.is_attached else None
        if app is not None and not self.mono and not widget.has_class("-ansi") and app.theme != DEFAULT_THEME:
            self._from_theme(app.theme_variables)

    def _from_theme(self, variables: dict[str, str]) -> None:
        """Take the pieces' backgrounds from the theme's colours (a theme other than the default
        chosen in the palette); the text on them is made readable when painted."""
        from rich.color import Color
        from rich.style import Style

        def bg(name: str) -> Style | None:
            value = variables.get(name)
            try:
                return Style(bgcolor=Color.parse(value)) if value else None
            except Exception:  # noqa: BLE001 - a theme value Rich cannot read keeps the default
                return None

        for k, name in enumerate(THEME_PIECES):
            style = bg(name)
            if style is not None:
                self.alternate[k] = self.alternate[k] + style
        for k, name in enumerate(THEME_RANKS):
            style = bg(name)
            if style is not None:
                self.rank[k] = self.rank[k] + style
        for part, name in THEME_PARTS.items():
            style = bg(name)
            if style is not None:
                setattr(self, part, getattr(self, part) + style)


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
    """Pieces of the current :class:`Document`, wrapped in rows of character ranges.

    Typing a character here types it into the input pane (the view is not a text field, and no
    letter key acts here); every action has a function key or a Ctrl chord.

    | Class | Description |
    | :- | :- |
    | `token-view--piece-1` .. `-6` | the alternating colours of neighbouring pieces |
    | `token-view--rank-1` .. `-6` | rank colours, light (single bytes, early merges) to dark (late merges) |
    | `token-view--partial` | a partial piece's bytes (``‹f0 9f›``) |
    | `token-view--char` | the character a run of partial pieces makes up, drawn after their bytes |
    | `token-view--special` | a special token |
    | `token-view--added` | an added token that is not special, and the template's tokens (Ctrl+N) |
    | `token-view--unknown` | the unknown token (``[UNK]``, ``<unk>``), drawn as the text it stands for |
    | `token-view--mark` | a token that shares a character without being its bytes (Unigram's ``▁`` before an unknown character) |
    | `token-view--gap` | text no token covers (whitespace a WordPiece or Unigram pre-tokenizer drops) |
    | `token-view--selected` | the selected piece |
    | `token-view--hover` | added to the piece under the mouse pointer |
    | `token-view--control` | a control, bidi or zero-width character's stand-in (``␛``, ``⟨RLO⟩``) |
    | `token-view--whitespace` | visible whitespace (``·`` ``→`` ``⏎``), never the text's own ``·`` |
    | `token-view--id` | an id after a piece's text (both mode) |
    | `token-view--pending` | text not tokenized yet (a large text still loading) |
    """

    COMPONENT_CLASSES = {
        *(f"token-view--piece-{k}" for k in range(1, ALTERNATE + 1)),
        *(f"token-view--rank-{k}" for k in range(1, RANKS + 1)),
        *(f"token-view--{name}" for name in PARTS),
    }

    DEFAULT_CSS = """
    TokenView { overflow-x: hidden; overflow-y: auto; scrollbar-size-vertical: 1; }
    TokenView > .token-view--piece-1 { background: $primary-darken-2; color: #f0f0f0; }
    TokenView > .token-view--piece-2 { background: #5a2a5e; color: #f0f0f0; }
    TokenView > .token-view--piece-3 { background: #1f5a45; color: #f0f0f0; }
    TokenView > .token-view--piece-4 { background: #6b4a1a; color: #f0f0f0; }
    TokenView > .token-view--piece-5 { background: #5c2020; color: #f0f0f0; }
    TokenView > .token-view--piece-6 { background: #24515e; color: #f0f0f0; }
    TokenView > .token-view--rank-1 { background: #f2f2f2; color: #000000; }
    TokenView > .token-view--rank-2 { background: #bcd7f5; color: #000000; }
    TokenView > .token-view--rank-3 { background: #7fb0e8; color: #000000; }
    TokenView > .token-view--rank-4 { background: #3f7cc4; color: #ffffff; }
    TokenView > .token-view--rank-5 { background: #1f4f8f; color: #ffffff; }
    TokenView > .token-view--rank-6 { background: #0c2a57; color: #ffffff; }
    TokenView > .token-view--partial { background: #f5d547; color: #000000; text-style: bold underline; }
    TokenView > .token-view--char { background: #f5d547; color: #000000; text-style: underline; }
    TokenView > .token-view--special { background: #b3007a; color: #ffffff; text-style: bold underline; }
    TokenView > .token-view--added { background: #00646e; color: #ffffff; text-style: bold; }
    TokenView > .token-view--unknown { background: #ff9e80; color: #000000; text-style: bold italic; }
    TokenView > .token-view--mark { color: #9fd3ff; text-style: italic; }
    TokenView > .token-view--gap { color: #a8a8a8; }
    TokenView > .token-view--selected { background: #ffffff; color: #000000; text-style: bold underline; }
    TokenView > .token-view--hover { text-style: bold underline; }
    TokenView > .token-view--control { color: #ff8080; text-style: bold; }
    TokenView > .token-view--whitespace { color: #ffd27f; text-style: italic; }
    TokenView > .token-view--id { color: #c8c8c8; text-style: italic; }
    TokenView > .token-view--pending { color: #a0a0a0; }

    TokenView.-ansi > .token-view--piece-1 { background: ansi_blue; color: ansi_bright_white; }
    TokenView.-ansi > .token-view--piece-2 { background: ansi_magenta; color: ansi_bright_white; }
    TokenView.-ansi > .token-view--piece-3 { background: ansi_cyan; color: ansi_black; }
    TokenView.-ansi > .token-view--piece-4 { background: ansi_green; color: ansi_black; }
    TokenView.-ansi > .token-view--piece-5 { background: ansi_blue; color: ansi_bright_white; }
    TokenView.-ansi > .token-view--piece-6 { background: ansi_magenta; color: ansi_bright_white; }
    TokenView.-ansi > .token-view--rank-1 { background: ansi_bright_white; color: ansi_black; }
    TokenView.-ansi > .token-view--rank-2 { background: ansi_white; color: ansi_black; }
    TokenView.-ansi > .token-view--rank-3 { background: ansi_bright_cyan; color: ansi_black; }
    TokenView.-ansi > .token-view--rank-4 { background: ansi_cyan; color: ansi_black; }
    TokenView.-ansi > .token-view--rank-5 { background: ansi_blue; color: ansi_bright_white; }
    TokenView.-ansi > .token-view--rank-6 { background: ansi_black; color: ansi_bright_white; }
    TokenView.-ansi > .token-view--partial { background: ansi_yellow; color: ansi_black; }
    TokenView.-ansi > .token-view--char { background: ansi_yellow; color: ansi_black; }
    TokenView.-ansi > .token-view--special { background: ansi_red; color: ansi_bright_white; }
    TokenView.-ansi > .token-view--added { background: ansi_cyan; color: ansi_black; }
    TokenView.-ansi > .token-view--unknown { background: ansi_bright_red; color: ansi_black; }
    TokenView.-ansi > .token-view--mark { color: ansi_bright_cyan; }
    TokenView.-ansi > .token-view--gap { color: ansi_white; }
    TokenView.-ansi > .token-view--selected { background: ansi_bright_white; color: ansi_black; }
    TokenView.-ansi > .token-view--control { text-style: bold; }
    TokenView.-ansi > .token-view--whitespace { text-style: italic; }
    TokenView.-ansi > .token-view--id { color: ansi_white; }
    TokenView.-ansi > .token-view--pending { color: ansi_white; }

    TokenView.-mono > .token-view--piece-1, TokenView.-mono > .token-view--piece-3,
    TokenView.-mono > .token-view--piece-5, TokenView.-mono > .token-view--rank-1,
    TokenView.-mono > .token-view--rank-3, TokenView.-mono > .token-view--rank-5 { text-style: underline; }
    TokenView.-mono > .token-view--piece-2, TokenView.-mono > .token-view--piece-4,
    TokenView.-mono > .token-view--piece-6, TokenView.-mono > .token-view--rank-2,
    TokenView.-mono > .token-view--rank-4, TokenView.-mono > .token-view--rank-6 { text-style: reverse; }
    TokenView.-mono > .token-view--partial { text-style: bold italic reverse; }
    TokenView.-mono > .token-view--char { text-style: italic; }
    TokenView.-mono > .token-view--unknown { text-style: bold italic reverse; }
    TokenView.-mono > .token-view--added { text-style: bold reverse; }
    TokenView.-mono > .token-view--special { text-style: bold reverse underline; }
    TokenView.-mono > .token-view--selected { text-style: bold reverse overline; }
    TokenView.-mono > .token-view--whitespace { text-style: dim; }
    """

    BINDINGS = [
        *MOVE_BINDINGS,
        Binding("enter", "pick", "Open token", show=False),
    ]

    class Selected(Message):
        """The token cursor moved to piece ``index`` (``from_user`` False when set by the app).
        Handler: ``on_token_view_selected``."""

        def __init__(self, index: int | None, from_user: bool) -> None:
            super().__init__()
            self.index = index
            self.from_user = from_user

    class Picked(Message):
        """Enter was pressed on piece ``index`` of ``view``. Handler: ``on_token_view_picked``."""

        def __init__(self, index: int, view: TokenView | None = None) -> None:
            super().__init__()
            self.index = index
            self.view = view

        @property
        def control(self) -> TokenView | None:
            return self.view

    class WidthChanged(Message):
        """The view's scrollbar came or went, so the width its rows may take changed (the rows
        may need laying out again). Handler: ``on_token_view_width_changed``."""

        def __init__(self, view: TokenView) -> None:
            super().__init__()
            self.view = view

        @property
        def control(self) -> TokenView:
            return self.view

    class Typed(Message):
        """A character was typed while the view had focus (it belongs in the input pane).
        Handler: ``on_token_view_typed``."""

        def __init__(self, character: str) -> None:
            super().__init__()
            self.character = character

    def __init__(self, *, kind: str = "truecolor", id: str | None = None) -> None:
        super().__init__(id=id, classes={"standard": "-ansi", "mono": "-mono"}.get(kind, ""))
        self.doc: Document | None = None
        self.rows: list[int] = [0]
        self.rows_width = 0
        self.rows_mode = TEXT
        self.ws = False
        self.rank_colours = False
        self.selected: int | None = None
        #: the template's tokens drawn before the first row and after the last (Ctrl+N): ``(prefix, suffix)``
        self.template: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
        self.hovered: int | None = None  # the piece under the mouse pointer
        self._palette: Palette | None = None
        #: row -> (start, end, width limit, (strip, spans)): the rows drawn so far (see _render_row)
        self._cache: dict[int, tuple[int, int, int, tuple[Strip, list[tuple[int, int, int]]]]] = {}
        self._paint: tuple[int, Style] | None = None  # (width, base style) during render_lines

    @property
    def palette(self) -> Palette:
        """The styles of the pieces, from the component classes (read again when styles change)."""
        if self._palette is None:
            self._palette = Palette(self)
        return self._palette

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._palette = None  # a theme or a class changed the component styles
        self._cache.clear()

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        # the widget keeps its size, so no Resize comes: say so, or rows laid out before the
        # scrollbar came stay a column too wide (their last cell cut) until the next edit
        self.post_message(self.WidthChanged(self))

    # ----- state -----------------------------------------------------------------------------

    @property
    def layout_width(self) -> int:
        """The width rows are laid out to: the view's, less the cells the template's tokens take."""
        return max(8, self.scrollable_content_region.width - self._template_cells())

    def set_template(self, prefix: tuple[int, ...], suffix: tuple[int, ...]) -> None:
        """Draw these ids before the first row and after the last (the template's tokens)."""
        self.template = (tuple(prefix), tuple(suffix))
        self._cache.clear()
        self.refresh()

    def _template_labels(self, ids: tuple[int, ...]) -> list[str]:
        doc_tok = self.doc.tokenizer if self.doc is not None else None
        if doc_tok is None:
            return []
        if self.rows_mode == IDS:
            return [str(t) for t in ids]
        spelled = [safe_text(doc_tok.token_str(t)) or "∅" for t in ids]
        if self.rows_mode == BOTH:
            return [f"{s} {t}" for s, t in zip(spelled, ids)]
        return spelled

    def _template_cells(self) -> int:
        return max((sum(cell_len(label) + 1 for label in self._template_labels(ids)) for ids in self.template),
                   default=0)

    def set_doc(self, doc: Document, rows: list[int], width: int, mode: str) -> None:
        """Show ``doc`` laid out in ``rows``. After an edit of the document shown (``doc.edit``),
        only the rows the edit changed are drawn again; anything else repaints the whole view."""
        rows = rows or [0]
        changed = self._edited_rows(doc, rows, width, mode)
        old_marked = self._piece_rows(self.selected)
        self.doc = doc
        self.rows = rows
        self.rows_width = width
        self.rows_mode = mode
        if self.selected is not None and self.selected >= len(doc.ids):
            self.selected = len(doc.ids) - 1 if doc.ids else None
        size = Size(width, len(rows))
        if changed is None or size != self.virtual_size:
            self._cache.clear()
            self.virtual_size = size
            self.refresh()
            return
        first, last = changed
        # rows from the edit on are drawn again when next painted; rows before it are unchanged
        # (their pieces, their offsets and their pieces' numbers are the old ones)
        for row in [row for row in self._cache if row >= first]:
            del self._cache[row]
        if first <= last:
            self._refresh_rows(first, last)
        # the selection's colour moves off the piece the old rows drew it on (the same row numbers:
        # the partial path keeps the row count) and onto the piece it is now
        for marked in (old_marked, self._piece_rows(self.selected)):
            if marked is not None:
                self._refresh_rows(*marked)

    def _edited_rows(self, doc: Document, rows: list[int], width: int, mode: str) -> tuple[int, int] | None:
        """``(first, last)``: the rows of ``rows`` that may draw differently from the rows shown,
        when ``doc`` is an edit of the document shown (an empty range when nothing changed); None
        when the whole view must be drawn again."""
        old, old_rows = self.doc, self.rows
        if (
            old is None or not old.complete or not doc.complete or (width, mode) != (self.rows_width, self.rows_mode)
            or len(rows) != len(old_rows) or any(self.template) or self.hovered is not None
            # a subclass colouring pieces by more than their number and kind repaints in full
            or type(self)._piece_style is not TokenView._piece_style
            or type(self)._base_style is not TokenView._base_style
        ):
            return None
        if doc is old:
            return (1, 0) if rows == old_rows else None
        edit = doc.edit
        if edit is None or edit.previous != old.serial:
            return None
        # pieces that start before ``restart`` are the old ones, and so are the rows that end there;
        # re-tokenizing from there often gives the same first pieces again, up to the edit
        first = row_of(rows, _first_change(old, doc, edit.restart, edit.new_end))
        if rows[: first + 1] != old_rows[: first + 1]:
            return None
        last = len(rows) - 1
        if (len(doc) - len(old)) % ALTERNATE == 0:
            # the pieces after the re-tokenized span are the old ones, moved by ``delta``, and keep
            # their colours (alternating by number: a count that changed by a multiple of the
            # colours keeps them); the rows on screen after it are the old ones unless they moved
            stop = row_of(rows, max(edit.new_stop, edit.new_end))
            bottom = min(len(rows), int(self.scroll_y) + self.scrollable_content_region.height)
            delta = edit.delta
            if all(rows[j] == old_rows[j] + delta for j in range(stop + 1, bottom)):
                last = stop
        return first, last

    def _piece_rows(self, index: int | None) -> tuple[int, int] | None:
        """The first and last row piece ``index`` is drawn on (None: no such piece)."""
        doc = self.doc
        if doc is None or index is None or not 0 <= index < len(doc):
            return None
        start, end = doc.starts[index], doc.ends[index]
        return row_of(self.rows, start), row_of(self.rows, max(start, end - 1))

    def _refresh_rows(self, first: int, last: int) -> None:
        """Draw rows ``first`` to ``last`` again (those on screen are repainted; the others are
        drawn when scrolled to)."""
        for row in range(first, last + 1):
            self._cache.pop(row, None)
        top = int(self.scroll_y)
        height = self.scrollable_content_region.height
        first, last = max(first, top), min(last, top + height - 1)
        if first <= last:
            self.refresh_lines(first, last - first + 1)

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
        # only the rows of the piece that was selected and of the one that is are drawn again
        marked = [self._piece_rows(self.selected), self._piece_rows(index)]
        self.selected = index
        for rows in marked:
            if rows is not None:
                self._refresh_rows(*rows)
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

    def on_key(self, event: events.Key) -> None:
        text = typed_text(event.character)  # a zero-width joiner or bidi control is typed text too
        if text is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.Typed(text))

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
        return doc.piece_at(target)

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

    def _piece_under(self, event: events.MouseEvent) -> int | None:
        offset = event.get_content_offset(self)
        if offset is None or self.doc is None:
            return None
        row = int(self.scroll_y) + offset.y
        if not 0 <= row < len(self.rows):
            return None
        _, spans = self._render_row(row)
        return next((index for x0, x1, index in spans if x0 <= offset.x < x1), None)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """The piece under the pointer is highlighted, as the web token visualizers do."""
        index = self._piece_under(event)
        if index != self.hovered:
            self.hovered = index
            self._cache.clear()
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self.hovered is not None:
            self.hovered = None
            self._cache.clear()
            self.refresh()

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
        # them out once per paint (not per line) saves work on every repaint after an edit
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
        if i == self.hovered:
            return self._base_style(i, token_id, flags, pal) + pal.hover
        return self._base_style(i, token_id, flags, pal)

    def _base_style(self, i: int, token_id: int, flags: int, pal: Palette) -> Style:
        doc = self.doc
        assert doc is not None
        if flags & SPECIAL:
            return pal.special
        if flags & ADDED:
            return pal.added
        if self.rank_colours:
            if pal.mono:
                return pal.alternate[i & 1]
            style = pal.rank[rank_bucket(token_id, doc.tokenizer.n_vocab)]
            # neighbours in the same bucket still need a boundary: underline every other piece
            return style + Style(underline=True) if i & 1 else style
        return pal.alternate[i % len(pal.alternate)]

    def _render_row(self, row: int) -> tuple[Strip, list[tuple[int, int, int]]]:
        doc = self.doc
        assert doc is not None
        rows = self.rows
        a = rows[row]
        b = rows[row + 1] if row + 1 < len(rows) else len(doc.text)
        paint = self._paint
        # how wide a row may draw (see _cut_row): the rows' width, or the view's when it is wider
        limit = max(8, self.rows_width, paint[0] if paint is not None else self.scrollable_content_region.width)
        cached = self._cache.get(row)
        if cached is not None and cached[0] == a and cached[1] == b and cached[2] == limit:
            return cached[3]
        if self.rows_mode == TEXT:
            result = self._render_text_row(a, b, limit)
        else:
            result = self._render_piece_row(a, b, self.rows_mode == BOTH)
        prefix, suffix = self.template
        if prefix and row == 0:
            result = self._with_template(result, prefix, before=True)
        if suffix and row == len(rows) - 1:
            result = self._with_template(result, suffix, before=False)
        result = self._readable(result)
        if len(self._cache) >= ROW_CACHE:
            self._cache.clear()
        self._cache[row] = (a, b, limit, result)
        return result

    def _readable(self, result: tuple[Strip, list[tuple[int, int, int]]]) -> tuple[Strip, list[tuple[int, int, int]]]:
        """The row with every text colour made readable on its background (4.5:1 in truecolor and
        256 colours, see :func:`tokscope.app.render.readable`): a glyph's or an id's colour over a
        piece's, in any theme."""
        strip, spans = result
        paint = self._paint
        base = paint[1] if paint is not None else self.rich_style
        segments = [Segment(seg.text, readable(seg.style, base), seg.control) if seg.style is not None else seg
                    for seg in strip]
        return Strip(segments, strip.cell_length), spans

    def _render_text_row(self, a: int, b: int, limit: int) -> tuple[Strip, list[tuple[int, int, int]]]:
        doc = self.doc
        assert doc is not None
        pal = self.palette
        segments: list[Segment] = []
        spans: list[tuple[int, int, int]] = []
        x = 0
        ws = self.ws
        text_all = doc.text
        style_of = self._styler()
        if len(doc) and a < doc.covered:
            i = doc.starts.bisect_right(a) - 1
            ends = doc.ends
            while i > 0 and ends[i - 1] > a:
                i -= 1
            pos = a  # drawn up to here: text between pieces is a gap no token covers
            drawn = 0  # characters sent so far (see ROW_CHARS)
            marks = 0  # zero-width glyphs drawn in a row, and those counted instead
            hidden_marks = 0
            for i, token_id, start, end, flags in doc.iter_pieces(max(i, 0)):
                if start >= b:
                    break
                if x > limit + HANG or drawn > ROW_CHARS:
                    self._cut_row(segments, spans, i, b, limit)
                    return Strip(segments), spans
                if start > pos:
                    x = self._gap(segments, text_all, pos, start, x)
                if end > a:
                    pos = max(pos, end)
                    style = style_of(i, token_id, flags)
                    x0 = x
                    text = text_all[max(a, start) : min(b, end)]
                    if not flags and (text.isascii() and text.isprintable() and not (ws and " " in text)):
                        if hidden_marks:
                            x += self._marks_count(segments, hidden_marks)
                        marks = hidden_marks = 0
                        segments.append(Segment(text, style))
                        x += len(text)
                        drawn += len(text)
                    else:
                        selected = i == self.selected
                        for at, glyph, kind in piece_cells(doc, i, token_id, start, flags, ws, end):
                            if a <= at < b and glyph:
                                width = cell_len(glyph)
                                if not width:  # a combining mark: a few are drawn, the rest counted
                                    marks += 1
                                    if marks > MARKS_SHOWN:
                                        hidden_marks += 1
                                        continue
                                else:
                                    if hidden_marks:
                                        x += self._marks_count(segments, hidden_marks)
                                    marks = hidden_marks = 0
                                if drawn > ROW_CHARS:  # one piece of very many characters
                                    break
                                if kind == "ws":
                                    seg_style = style + pal.whitespace if ws and not selected else style
                                elif kind == "ctrl":
                                    seg_style = style + pal.control
                                elif kind == "hex":
                                    seg_style = pal.selected if selected else pal.partial
                                elif kind == "char":
                                    seg_style = pal.selected if selected else pal.char
                                elif kind == "unk":
                                    seg_style = pal.selected if selected else pal.unknown
                                elif kind == "mark":
                                    seg_style = style + pal.mark if not selected else style
                                else:
                                    seg_style = style
                                segments.append(Segment(glyph, seg_style))
                                x += cell_len(glyph)
                                drawn += len(glyph)
                    if x > x0:
                        spans.append((x0, x, i))
            if hidden_marks:
                x += self._marks_count(segments, hidden_marks)
            if x > limit + HANG:
                self._cut_row(segments, spans, None, b, limit)
                return Strip(segments), spans
            if pos < min(b, doc.covered):
                x = self._gap(segments, text_all, pos, min(b, doc.covered), x)
        if b > doc.covered:
            # not tokenized yet (a large text still loading): plain text
            text = safe_text(doc.text[max(a, doc.covered) : b].replace("\n", ""), ws)
            segments.append(Segment(text, pal.pending))
        return Strip(segments), spans

    def _marks_count(self, segments: list[Segment], hidden: int) -> int:
        """Draw how many marks of a run were not drawn (``+N``); returns its cells."""
        label = f"+{hidden:,}"
        segments.append(Segment(label, self.palette.mark))
        return len(label)

    def _cut_row(self, segments: list[Segment], spans: list[tuple[int, int, int]], first_hidden: int | None,
                 b: int, limit: int) -> None:
        """End a row that draws wider than ``limit`` cells or sends more than :data:`ROW_CHARS`
        characters: drop its last pieces until ``…+N`` fits after them, N the tokens of the row not
        drawn (``first_hidden`` on: the pieces not reached)."""
        doc = self.doc
        assert doc is not None
        last = doc.starts.bisect_left(b)  # the first piece of the next row
        first = last if first_hidden is None else first_hidden
        chars = sum(len(seg.text) for seg in segments)
        while spans and (spans[-1][1] + len(count_label(last - first)) > limit or chars > ROW_CHARS):
            x0, _, first = spans.pop()
            cells = 0
            keep = 0
            while keep < len(segments) and cells < x0:  # the segments before the dropped piece
                cells += cell_len(segments[keep].text)
                keep += 1
            chars -= sum(len(seg.text) for seg in segments[keep:])
            del segments[keep:]
        segments.append(Segment(count_label(last - first), self.palette.mark))

    def _with_template(self, result: tuple[Strip, list[tuple[int, int, int]]], ids: tuple[int, ...],
                       before: bool) -> tuple[Strip, list[tuple[int, int, int]]]:
        """A row with the template's tokens drawn before or after it, in the added style (they
        are not pieces of the text: they take no selection)."""
        strip, spans = result
        style = self.palette.added
        marks: list[Segment] = []
        for label in self._template_labels(ids):
            if before:
                marks += [Segment(label, style), Segment(" ")]
            else:  # a piece row already ends in a space
                marks += [Segment(" " if marks or self.rows_mode == TEXT else ""), Segment(label, style)]
        if before:
            shift = sum(cell_len(seg.text) for seg in marks)
            return Strip([*marks, *strip]), [(x0 + shift, x1 + shift, i) for x0, x1, i in spans]
        return Strip([*strip, *marks]), spans

    def _gap(self, segments: list[Segment], text: str, a: int, b: int, x: int) -> int:
        """Draw ``text[a:b]``, which no token covers, in the gap style; returns the new column."""
        gap = self.palette.gap
        ws_style = gap + self.palette.whitespace
        for ch in text[a:b]:
            if ch == "\n":
                continue
            glyph, kind = char_glyph(ch, self.ws)
            segments.append(Segment(glyph, ws_style if kind == "ws" and self.ws else gap))
            x += cell_len(glyph)
        return x

    def _render_piece_row(self, a: int, b: int, both: bool) -> tuple[Strip, list[tuple[int, int, int]]]:
        doc = self.doc
        assert doc is not None
        pal = self.palette
        segments: list[Segment] = []
        spans: list[tuple[int, int, int]] = []
        x = 0
        style_of = self._styler()
        for i, token_id, start, end, flags in doc.iter_pieces(doc.starts.bisect_left(a)):
            if start >= b:
                break
            style = style_of(i, token_id, flags)
            x0 = x
            label = str(token_id)
            if both:
                for _, glyph, kind in both_units(doc, token_id, start, end, flags):
                    if kind == "unk":
                        seg_style = pal.selected if i == self.selected else pal.unknown
                    elif kind == "hex":
                        seg_style = pal.selected if i == self.selected else pal.partial
                    elif kind == "ctrl":
                        seg_style = style + pal.control
                    elif kind == "ws":
                        seg_style = style + pal.whitespace if i != self.selected else style
                    else:
                        seg_style = style
                    segments.append(Segment(glyph, seg_style))
                    x += cell_len(glyph)
                segments.append(Segment(" " + label, style + pal.id))
                x += len(label) + 1
            else:
                segments.append(Segment(label, style))
                x += len(label)
            spans.append((x0, x, i))
            segments.append(Segment(" "))
            x += 1
        if b > doc.covered:
            segments.append(Segment(safe_text(doc.text[max(a, doc.covered) : b].replace("\n", "")), pal.pending))
        return Strip(segments), spans

    def refresh_all(self) -> None:
        self._cache.clear()
        self.refresh()


__all__ = ["BOTH", "IDS", "TEXT", "Palette", "TokenView", "palette_kind"]
