"""How pieces look on screen: safe glyphs for every character, piece display units, row layout.

Nothing here writes to the terminal. Characters that could act on a terminal or reorder text
(C0/C1 controls, ESC, bidirectional overrides and isolates, zero-width and other format
characters) are replaced by visible, inert glyphs such as ``␛`` or ``⟨RLO⟩``.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left, bisect_right
from functools import lru_cache

from rich.cells import cell_len
from rich.text import Text

from ..core.text import display
from ..core.text.display import hex_label, safe_text
from ..core.document.document import PARTIAL, UNKNOWN, Document

__all__ = ["safe_text"]  # re-exported: the one escaping helper, for the widgets drawing text

TEXT, IDS, BOTH = "text", "ids", "both"
MODES = (TEXT, IDS, BOTH)

@lru_cache(maxsize=8192)
def char_glyph(ch: str, ws: bool) -> tuple[str, str]:
    """How one character is drawn: the core's inert glyph (:func:`tokscope.core.text.display.char_glyph`),
    and a named stand-in for a character the terminal would draw zero cells wide.

    >>> char_glyph(" ", True), char_glyph("\x1b", False), char_glyph("\u202e", False)
    (('·', 'ws'), ('␛', 'ctrl'), ('⟨RLO⟩', 'ctrl'))
    """
    glyph, kind = display.char_glyph(ch, ws)
    if kind == "text" and cell_len(ch) == 0 and unicodedata.category(ch) not in ("Mn", "Me"):
        return f"⟨U+{ord(ch):04X}⟩", "ctrl"
    return glyph, kind


@lru_cache(maxsize=65536)
def piece_units(data: bytes, ws: bool) -> tuple[tuple[int, str, str], ...]:
    """The display units of a piece: ``(character offset in the piece, glyph, kind)``.

    Whole characters are drawn with :func:`char_glyph`; bytes that are only part of a character
    become one ``hex`` unit placed on the character they belong to. A combining mark that starts
    a piece is drawn on a dotted circle so it stays visible.

    >>> piece_units(" \\xf0\\x9f".encode("latin-1"), False)
    ((0, ' ', 'ws'), (1, '‹f0 9f›', 'hex'))
    >>> piece_units(b"\\x91\\x8d", False)
    ((0, '‹91 8d›', 'hex'),)
    """
    text = data.decode("utf-8", "surrogateescape")
    units: list[tuple[int, str, str]] = []
    rel = 0
    i = 0
    n = len(text)
    leading = True
    while i < n:
        ch = text[i]
        if "\udc80" <= ch <= "\udcff":
            j = i
            while j < n and "\udc80" <= text[j] <= "\udcff":
                j += 1
            raw = bytes(ord(c) - 0xDC00 for c in text[i:j])
            units.append((rel, hex_label(raw), "hex"))
            if leading:
                rel += 1  # the character these continuation bytes finish
            i = j
            leading = False
            continue
        glyph, kind = char_glyph(ch, ws)
        if rel == 0 and not units and unicodedata.category(ch) in ("Mn", "Me"):
            glyph = "◌" + ch
        units.append((rel, glyph, kind))
        rel += 1
        i += 1
        leading = False
    return tuple(units)


def units_width(units) -> int:
    return sum(cell_len(glyph) for _, glyph, _ in units)


@lru_cache(maxsize=65536)
def text_units(text: str, ws: bool) -> tuple[tuple[int, str, str], ...]:
    """The display units of a piece's original text (what a piece that is whole characters draws:
    for a kind whose tokens spell the text otherwise, ``naive`` for ``naïve`` or ``▁the`` for
    `` the``, the text is what the view shows; the inspector names the spelling).

    >>> text_units("naïve", False)[2], text_units("\u0301a", False)[0]
    ((2, 'ï', 'text'), (0, '◌́', 'text'))
    """
    return piece_units(text.encode("utf-8", "surrogatepass"), ws)


def piece_cells(doc: Document, i: int, token_id: int, start: int, flags: int, ws: bool,
                end: int | None = None) -> list[tuple[int, str, str]]:
    """What piece ``i`` draws in the text view: ``(character offset in the text, glyph, kind)``.

    A piece of whole characters draws the original text it covers (:func:`text_units`); the
    unknown token draws that text as kind ``unk``. A partial piece draws its bytes
    (:func:`piece_units`); after the bytes of the piece that completes a character split across
    partial pieces comes that character itself (kind ``char``), so ``😃`` cut in two reads
    ``‹f0 9f 98›‹83›😃``. A piece that shares characters with others without being their bytes
    (the ``▁`` a Unigram model puts before an unknown character, the ``f`` and ``i`` NFKC makes of
    ``ﬁ``) draws its spelling as a ``mark``, and the last of them the characters too.
    """
    if end is None:
        end = doc.ends[i]
    if flags & UNKNOWN:
        return [(start + rel, glyph, "unk") for rel, glyph, _ in text_units(doc.text[start:end], ws)]
    if not flags & PARTIAL:
        return [(start + rel, glyph, kind) for rel, glyph, kind in text_units(doc.text[start:end], ws)]
    data = doc.tokenizer.token_bytes(token_id)
    units = piece_units(data, ws)
    n = len(doc)
    next_start = doc.starts[i + 1] if i + 1 < n else len(doc.text)
    if not any(kind == "hex" for _, _, kind in units):
        out = [(start, safe_text(doc.tokenizer.token_str(token_id)) or "∅", "mark")]
        if next_start >= end:
            out.extend((start + rel, glyph, "char") for rel, glyph, _ in text_units(doc.text[start:end], ws))
        return out
    out = []
    last = len(units) - 1
    for k, (rel, glyph, kind) in enumerate(units):
        pos = start + rel
        out.append((pos, glyph, kind))
        if kind == "hex" and pos < len(doc.text):
            finishes = (k < last and units[k + 1][0] > rel) or (k == last and next_start > pos)
            # the piece that ends the character's bytes: its continuation bytes lead the piece,
            # or nothing after it shares the character
            if finishes and _ends_character(data, k, units):
                out.append((pos, char_glyph(doc.text[pos], ws)[0], "char"))
    return out


def both_units(doc: Document, token_id: int, start: int, end: int, flags: int) -> tuple[tuple[int, str, str], ...]:
    """What a piece draws before its id in the both mode: its bytes with visible whitespace (the
    leading space a ``Ġ``, a ``▁`` or a WordPiece word start stands for shows as ``·``, a ``##``
    continuation has none), or, for the unknown token, the original text it covers."""
    if flags & UNKNOWN:
        return tuple((rel, glyph, "unk") for rel, glyph, _ in text_units(doc.text[start:end], True)) or ((0, "∅", "unk"),)
    return piece_units(doc.tokenizer.token_bytes(token_id), True)


def _ends_character(data: bytes, k: int, units) -> bool:
    """Whether hex unit ``k`` of a piece holds the last byte of its character (it is the piece's
    leading continuation bytes, or its trailing bytes complete nothing)."""
    if k == 0 and data[:1] and 0x80 <= data[0] < 0xC0:
        return True
    return False


def is_simple(text: str) -> bool:
    """True when every character is printable ASCII drawn one cell wide (a trailing newline is fine)."""
    if text.endswith("\n"):
        text = text[:-1]
    return text.isascii() and text.isprintable()


@lru_cache(maxsize=8192)
def _char_width(ch: str) -> int:
    return max(cell_len(char_glyph(ch, True)[0]), cell_len(char_glyph(ch, False)[0]))


# ----- layout ---------------------------------------------------------------------------------


def layout_text(doc: Document, width: int, a: int, b: int) -> list[int]:
    """Row starts for ``doc.text[a:b]`` in text mode (``a`` and ``b`` are line starts or ends).

    Rows break after each newline, and where the next character would not fit ``width``: at the
    start of the piece that would not fit (a piece is cut only when it is wider than a row). A
    character split across partial pieces takes the width of its bytes' labels and of itself.
    """
    text = doc.text
    width = max(width, 8)
    rows: list[int] = []
    pos = a
    while pos < b:
        nl = text.find("\n", pos, b)
        pend = nl + 1 if nl != -1 else b
        if pend - pos <= width + (nl != -1) and is_simple(text[pos:pend]):
            rows.append(pos)  # the common case: a short plain line is one row (its newline may hang)
        elif is_simple(text[pos:pend]):
            rows.extend(_wrap_simple(doc, width, pos, pend - (1 if nl != -1 else 0)))
        else:
            rows.extend(_layout_complex(doc, width, pos, pend))
        pos = pend
    return rows


def _wrap_simple(doc: Document, width: int, a: int, end: int) -> list[int]:
    """Rows of a line of one-cell characters ``[a, end)``, broken at piece starts."""
    rows = [a]
    row = a
    starts = doc.starts
    covered = doc.covered if len(doc) else 0
    while end - row > width:
        cut = row + width
        if cut < covered:
            j = starts.bisect_right(cut) - 1
            if j >= 0 and row < starts[j] <= cut:
                cut = starts[j]
        rows.append(cut)
        row = cut
    return rows


def _layout_complex(doc: Document, width: int, a: int, b: int,
                    sync: tuple[int, set[int], int] | None = None) -> list[int]:
    """Rows of the line ``[a, b)`` holding characters wider or narrower than a cell, or partial
    pieces; ``a`` is a row start. With ``sync = (stop, old_starts, delta)`` it stops at the first
    row that starts at or after ``stop`` where an old row started (moved by ``delta``): from there
    on the old rows hold (the row after a row start depends on nothing before it). Pieces are read
    as the characters are, so the cost is that of the rows laid out."""
    text = doc.text
    extra: dict[int, int] = {}  # character offset -> cells its partial pieces draw instead
    pieces = iter(())
    if len(doc) and a < doc.covered:
        i = doc.starts.bisect_right(a) - 1
        ends = doc.ends
        while i > 0 and ends[i - 1] > a:
            i -= 1
        pieces = doc.iter_pieces(max(i, 0))
    pending = next(pieces, None)  # the next piece not yet read: (i, id, start, end, flags)
    rows = [a]
    cur = 0
    last_start = -1  # the last piece start in this row after its first cell, and the cells before it
    cells_before = 0
    for off in range(a, b):
        is_start = False
        while pending is not None and pending[2] <= off:
            i, token_id, start, _, flags = pending
            if start == off:
                is_start = True
            if flags & PARTIAL:
                for pos, glyph, kind in piece_cells(doc, i, token_id, start, flags, False, pending[3]):
                    if kind in ("hex", "char", "mark", "unk"):
                        extra[pos] = extra.get(pos, 0) + cell_len(glyph)
            pending = next(pieces, None)
        ch = text[off]
        if ch == "\n":
            break
        if is_start and off != rows[-1]:
            last_start, cells_before = off, cur
        w = extra.pop(off, 0) or _char_width(ch)
        if cur + w > width and cur > 0:
            if last_start > rows[-1]:
                rows.append(last_start)  # break before the piece that does not fit
                cur -= cells_before
            else:
                rows.append(off)
                cur = 0
            last_start = -1
            if is_start and off != rows[-1]:
                last_start, cells_before = off, cur
            if sync is not None and rows[-1] >= sync[0] and rows[-1] - sync[2] in sync[1]:
                return rows
        cur += w
    return rows


#: a touched line longer than this (characters) is laid out again only from the rows the edit
#: reached, until its rows meet the old ones again
LONG_LINE = 4096


def layout_pieces(doc: Document, width: int, mode: str, ws: bool) -> list[int]:
    """Row starts for the ids and both modes: pieces are kept whole and a newline ends a row."""
    rows, _ = _layout_pieces_from(doc, width, mode, 0, None)
    if not doc.complete and doc.covered < len(doc.text):
        rows.extend(r for r in layout_text(doc, width, _line_start(doc.text, doc.covered), len(doc.text)) if r > rows[-1])
    return rows


def _layout_pieces_from(doc: Document, width: int, mode: str, j0: int, stop_from: int | None) -> tuple[list[int], int | None]:
    """Rows of :func:`layout_pieces` from piece ``j0``, which must start a row after a newline
    (see :func:`_fresh_row`) or be 0. With ``stop_from``, stop at the first such piece whose
    previous piece starts at or after that offset, and return its index too."""
    width = max(width, 8)
    tok = doc.tokenizer
    pieces = doc.iter_pieces(j0)
    rows: list[int] = []
    cur = 0
    last_start = -1
    newline_before = False
    for i, token_id, start, end, flags in pieces:
        if not rows:
            rows.append(start if j0 else 0)
        elif newline_before and start != rows[-1]:
            if stop_from is not None and last_start >= stop_from and last_start < start:
                return rows, i
            rows.append(start)
            cur = 0
        if mode == IDS:
            w = len(str(token_id)) + 1
        else:
            w = units_width(both_units(doc, token_id, start, end, flags)) + len(str(token_id)) + 2
        if cur + w > width and cur > 0 and start != last_start and start != rows[-1]:
            rows.append(start)
            cur = 0
        cur += w
        last_start = start
        newline_before = b"\n" in tok.token_bytes(token_id)
    return rows or [0], None


def _fresh_row(doc: Document, j: int) -> bool:
    """Whether piece ``j`` starts a row with nothing carried over from before: the piece before
    it holds a newline and starts earlier (so the newline rule starts a row at piece ``j`` with
    an empty width count, whatever came before)."""
    starts = doc.starts
    return b"\n" in doc.tokenizer.token_bytes(doc.ids[j - 1]) and starts[j - 1] < starts[j]


#: pieces :func:`relayout` looks back for a row start after a newline before laying out everything
RELAYOUT_LOOKBACK = 4096


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def layout(doc: Document, width: int, mode: str, ws: bool) -> list[int]:
    if mode == TEXT:
        return layout_text(doc, width, 0, len(doc.text)) or [0]
    return layout_pieces(doc, width, mode, ws)


def relayout(
    old_rows: list[int], old_doc: Document, new_doc: Document, width: int, mode: str, ws: bool
) -> list[int]:
    """Rows for ``new_doc`` reusing ``old_rows`` outside the lines an edit touched."""
    edit = new_doc.edit
    if edit is None or edit.previous != old_doc.serial:
        return layout(new_doc, width, mode, ws)
    if mode != TEXT:
        return _relayout_pieces(old_rows, new_doc, width, mode, ws)
    restart, new_stop, new_end, delta = edit.restart, edit.new_stop, edit.new_end, edit.delta
    text = new_doc.text
    a = _line_start(text, restart)
    nl = text.find("\n", max(new_stop, new_end))
    b_new = nl + 1 if nl != -1 else len(text)
    b_old = b_new - delta
    i0 = bisect_left(old_rows, a)
    i1 = bisect_left(old_rows, b_old)
    if b_new - a > LONG_LINE and text.find("\n", a, b_new - 1) == -1 and not is_simple(text[a:b_new]):
        line = old_rows[i0:i1]
        k = max(0, bisect_right(line, restart) - 2)  # a row before the edit: unchanged
        start = line[k] if line else a
        stop = max(new_stop, new_end)
        middle = _layout_complex(new_doc, width, start, b_new, (stop, set(line[k + 1:]), delta))
        if len(middle) > 1 and middle[-1] >= stop and middle[-1] - delta in line:
            # synced: the rest of the line's rows are the old ones, moved
            j = i0 + line.index(middle[-1] - delta)
            rest = [r + delta for r in old_rows[j + 1:]]
            return (old_rows[:i0 + k] + middle + rest) or [0]
        middle = old_rows[i0:i0 + k] + middle
    else:
        middle = layout_text(new_doc, width, a, b_new)
    tail = old_rows[i1:] if b_old < len(text) - delta else []
    if delta:
        tail = [r + delta for r in tail]
    rows = old_rows[:i0] + middle + tail
    return rows or [0]


def _relayout_pieces(old_rows: list[int], doc: Document, width: int, mode: str, ws: bool) -> list[int]:
    """:func:`relayout` in the ids and both modes. Pieces before the edit's re-scan (``restart``)
    are the old ones, and pieces from ``new_stop`` on are the old ones moved by ``delta``; a row
    that starts after a newline (:func:`_fresh_row`) carries nothing from the rows before it, so
    the rows are laid out again only from the last such row before the edit to the first such row
    after it."""
    edit = doc.edit
    assert edit is not None
    restart, new_stop, new_end, delta = edit.restart, edit.new_stop, edit.new_end, edit.delta
    j0 = doc.starts.bisect_left(restart)
    floor = max(0, j0 - RELAYOUT_LOOKBACK)
    n = len(doc)
    while j0 > 0 and (j0 >= n or not _fresh_row(doc, j0)):
        j0 -= 1
        if j0 < floor:
            return layout(doc, width, mode, ws)
    a = doc.starts[j0] if j0 else 0
    middle, k = _layout_pieces_from(doc, width, mode, j0, max(new_stop, new_end))
    head = old_rows[: bisect_left(old_rows, a)]
    if k is None:
        return head + middle
    tail = old_rows[bisect_left(old_rows, doc.starts[k] - delta) :]
    if delta:
        tail = [r + delta for r in tail]
    return head + middle + tail


def row_of(rows: list[int], offset: int) -> int:
    """The row holding character ``offset``."""
    return max(0, bisect_right(rows, offset) - 1)


# ----- tokens as styled text (the inspector, the why screen, insights) -------------------------

#: visible whitespace in labels: its own colour and italic, so ``·`` for a space never reads as
#: the text's own ``·`` (the token view's ``token-view--whitespace`` class has the same look)
WS_STYLE = "italic #ffd27f"
#: bytes that are not whole characters (``‹f0 9f›``)
HEX_STYLE = "bold"


def token_text(data: bytes, style: str = "") -> Text:
    """A token's bytes as one unbreakable label in tokscope's notation (:func:`tokscope.core.text.display.token_label`),
    whitespace drawn visible in :data:`WS_STYLE`, partial bytes in :data:`HEX_STYLE`.

    >>> token_text(b" the\\xf0\\x9f").plain
    '·the‹f0 9f›'
    """
    out = Text(style=style, no_wrap=True)
    text = data.decode("utf-8", "surrogateescape")
    raw: list[int] = []

    def flush() -> None:
        if raw:
            out.append(hex_label(bytes(raw)), style=HEX_STYLE)
            raw.clear()

    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            raw.append(code - 0xDC00)
            continue
        flush()
        glyph, kind = char_glyph(ch, True)
        if ch == "\t":
            glyph = "→"
        out.append(glyph, style=WS_STYLE if kind == "ws" else ("bold red" if kind == "ctrl" else ""))
    flush()
    return out


# ----- readable colours --------------------------------------------------------------------------

#: the contrast (WCAG 2) every text drawn must reach against its background
MIN_CONTRAST = 4.5


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour.

    >>> luminance((0, 0, 0)), luminance((255, 255, 255))
    (0.0, 1.0)
    """
    def channel(c: int) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21).

    >>> round(contrast((255, 255, 255), (0, 0, 0)), 1), round(contrast((200, 200, 200), (255, 255, 255)), 2)
    (21.0, 1.67)
    """
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _drawn(color) -> list[tuple[int, int, int]]:
    """The colours ``color`` may be drawn as: itself and, in 256 colours, its nearest (a standard
    colour is drawn as the terminal's palette has it: Rich's default one)."""
    from rich.color import ColorSystem, ColorType

    true = tuple(color.get_truecolor())
    if color.type in (ColorType.STANDARD, ColorType.WINDOWS):
        return [true]
    return [true, tuple(color.downgrade(ColorSystem.EIGHT_BIT).get_truecolor())]


def worst_contrast(fg, bg) -> float:
    """The lowest contrast of ``fg`` on ``bg`` (Rich colours) in truecolor and in 256 colours."""
    return min(contrast(f, b) for f in _drawn(fg) for b in _drawn(bg))


@lru_cache(maxsize=4096)
def readable(style, base=None):
    """``style`` (a Rich style) with its text colour made black or white when it would reach less
    than :data:`MIN_CONTRAST` on its background in truecolor or in 256 colours (its colours, else
    those of ``base``, the widget's style). In 16 colours only a colour drawn on itself changes.

    >>> from rich.style import Style
    >>> readable(Style(color="#c8c8c8", bgcolor="#ffffff")).color.name
    '#000000'
    >>> readable(Style(color="#ffffff", bgcolor="#3f7cc4")).color.name  # 3.5:1 in 256 colours
    '#000000'
    >>> readable(Style(color="magenta", bgcolor="magenta")).color.name
    'bright_white'
    >>> s = Style(color="#ffffff", bgcolor="#000000"); readable(s) is s
    True
    >>> fixed = readable(Style(color="#ffffff", bgcolor="#b86b00"))  # a mid tone: the background moves
    >>> worst_contrast(fixed.color, fixed.bgcolor) >= MIN_CONTRAST
    True
    """
    from rich.color import Color, ColorType
    from rich.style import Style

    bg = style.bgcolor or (base.bgcolor if base is not None else None)
    fg = style.color or (base.color if base is not None else None)
    if bg is None or fg is None or style.reverse or bg.is_default or fg.is_default:
        return style
    standard = bg.type in (ColorType.STANDARD, ColorType.WINDOWS)
    if standard:
        # a 16-colour terminal draws these in its own palette (Textual maps them through its ANSI
        # theme first): the palette's 16-colour pairs are chosen for it, and a glyph takes its
        # piece's own text colour (token_view's CSS), so only a colour on itself is changed
        if fg != bg:
            return style
        return style + Style(color=Color.parse("black" if bg.number in (3, 6, 7, 10, 11, 14, 15) else "bright_white"))
    if worst_contrast(fg, bg) >= MIN_CONTRAST:
        return style
    choices = [Color.parse("#000000"), Color.parse("#ffffff")]
    best = max(choices, key=lambda c: worst_contrast(c, bg))
    if worst_contrast(best, bg) >= MIN_CONTRAST:
        return style + Style(color=best)
    # a mid-tone background neither black nor white reaches (in 256 colours): move it away from
    # the text's colour until one does
    away = (255, 255, 255) if best.get_truecolor() == (0, 0, 0) else (0, 0, 0)
    r, g, b = bg.get_truecolor()
    for step in range(1, 11):
        t = step / 10
        moved = Color.from_rgb(*(round(c + (a - c) * t) for c, a in zip((r, g, b), away)))
        if worst_contrast(best, moved) >= MIN_CONTRAST:
            return style + Style(color=best, bgcolor=moved)
    return style + Style(color=best, bgcolor=Color.from_rgb(*away))


def readable_hex(fg: str, backgrounds: list[str]) -> str:
    """``fg`` (``#rrggbb``) moved towards white or black (whichever its backgrounds are further
    from) just far enough to reach :data:`MIN_CONTRAST` on every one of ``backgrounds``, in
    truecolor and in 256 colours.

    >>> readable_hex("#839496", ["#002b36"])  # Solarized's body text: 4.35:1 in 256 colours
    '#8c9b9d'
    >>> readable_hex("#e0e0e0", ["#121212"])
    '#e0e0e0'
    """
    from rich.color import Color

    start, grounds = Color.parse(fg), [Color.parse(b) for b in backgrounds]
    if min(worst_contrast(start, g) for g in grounds) >= MIN_CONTRAST:
        return fg
    dark = sum(luminance(tuple(g.get_truecolor())) for g in grounds) / len(grounds) < 0.18
    target = (255, 255, 255) if dark else (0, 0, 0)
    r, g, b = start.get_truecolor()
    for step in range(1, 101):
        t = step / 100
        moved = tuple(round(c + (a - c) * t) for c, a in zip((r, g, b), target))
        if min(worst_contrast(Color.from_rgb(*moved), ground) for ground in grounds) >= MIN_CONTRAST:
            return "#%02x%02x%02x" % moved
    return "#%02x%02x%02x" % target
