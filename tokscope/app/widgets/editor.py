"""The input pane: a TextArea that never passes control or bidi characters to the terminal."""

from __future__ import annotations

from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from textual.document._wrapped_document import WrappedDocument
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
    table.update(_STAND_IN_GLYPHS)
    return table


#: characters TextArea would take as line breaks (str.splitlines) and rewrite; the editor holds a
#: stand-in from plane 16's private use area instead, one character for one, so offsets agree
LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
STAND_INS = "".join(chr(0x10FF00 + ord(c)) if ord(c) < 0x100 else chr(0x10FE00 + (ord(c) & 0xFF)) for c in LINE_BREAKS)
_TO_EDITOR = str.maketrans(LINE_BREAKS, STAND_INS)
#: how the stand-ins are painted
_STAND_IN_GLYPHS = dict(zip(map(ord, STAND_INS), "␍␋␌␜␝␞␤␤␤"))


def to_editor(text: str) -> str:
    r"""``text`` with line-break characters other than ``\n`` replaced by stand-ins.

    >>> from_editor(to_editor("a\r\nb\x85c")) == "a\r\nb\x85c", to_editor("a\r\nb").count("\r")
    (True, 0)
    """
    for original, stand_in in zip(LINE_BREAKS, STAND_INS):
        if original in text:
            text = text.replace(original, stand_in)
    return text


def from_editor(text: str) -> str:
    for stand_in, original in zip(STAND_INS, LINE_BREAKS):
        if stand_in in text:
            text = text.replace(stand_in, original)
    return text


class _CachedHeightWrappedDocument(WrappedDocument):
    """TextArea's wrapped document with its height remembered between edits.

    Textual sums every line's wrap count each time it asks for the height, which happens for every
    painted line: on a 1 MB text that alone took tens of milliseconds per keystroke.
    """

    _height: int | None = None
    _wrapped_for: tuple | None = None  # (width, tab width) of the last full wrap, None after an edit

    def wrap(self, width: int, tab_width: int | None = None) -> None:
        # TextArea re-wraps the whole text several times while starting; once per size is enough
        key = (width, tab_width, self.document.line_count)
        if key == self._wrapped_for:
            return
        self._height = None
        super().wrap(width, tab_width)
        self._wrapped_for = key

    def wrap_range(self, *args, **kwargs):
        self._height = None
        self._wrapped_for = None
        return super().wrap_range(*args, **kwargs)

    @property
    def height(self) -> int:
        if self._height is None:
            self._height = WrappedDocument.height.fget(self)  # type: ignore[attr-defined]
        return self._height


class Editor(TextArea):
    r"""TextArea that keeps every character of the text and paints hostile ones inertly.

    TextArea splits lines like ``str.splitlines`` and would turn ``\r``, ``\x85``, ``\u2028``...
    into its own newline; the editor stores stand-ins for them instead (see :func:`to_editor`), so
    :attr:`real_text` is exactly what the user loaded and typed. Control, bidi and zero-width
    characters are never written to the terminal.
    """

    def __init__(self, text: str = "", **kwargs) -> None:
        super().__init__(to_editor(text), **kwargs)

    @property
    def wrapped_document(self) -> WrappedDocument:
        return self._wrapped

    @wrapped_document.setter
    def wrapped_document(self, document: WrappedDocument) -> None:
        if type(document) is WrappedDocument:
            document.__class__ = _CachedHeightWrappedDocument
        self._wrapped = document

    @property
    def real_text(self) -> str:
        return from_editor(self.text)

    def load_real_text(self, text: str) -> None:
        self.load_text(to_editor(text))

    def edit(self, edit):  # every insert, paste, replace and undo goes through here
        edit.text = to_editor(edit.text)
        return super().edit(edit)

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
