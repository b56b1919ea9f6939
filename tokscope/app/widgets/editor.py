"""The input pane: a TextArea that never passes control or bidi characters to the terminal."""

from __future__ import annotations

from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import TextArea

from ..render import NAMED


@lru_cache(maxsize=1)
def hostile_table() -> dict[int, str]:
    """Characters to neutralise when the editor paints, each mapped to a same-width stand-in.

    The TextArea measures these characters as zero cells wide, so they are drawn as nothing (the
    token view shows them as glyphs); the few one cell wide become ``�``.
    """
    codes = set(range(0x00, 0x20)) | {0x7F} | set(range(0x80, 0xA0)) | set(NAMED) | set(range(0xE0000, 0xE0080))
    codes -= {0x09, 0x0A}
    table = {}
    for code in codes:
        width = cell_len(chr(code))
        table[code] = "" if width == 0 else "\ufffd" * width
    return table


class Editor(TextArea):
    """TextArea whose painted lines have hostile characters replaced (the text itself is untouched)."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        table = hostile_table()
        segments = list(strip)
        changed = False
        for k, seg in enumerate(segments):
            text = seg.text
            if not text.isascii() or not text.isprintable():
                clean = text.translate(table)
                if clean != text:
                    segments[k] = Segment(clean, seg.style, seg.control)
                    changed = True
        if not changed:
            return strip
        return Strip(segments, strip.cell_length)
