"""The input pane: a TextArea that never passes control or bidi characters to the terminal."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets import TextArea
from textual.widgets.text_area import Document, DocumentBase, WrappedDocument

from ...core.text.display import NAMED


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


@lru_cache(maxsize=1)
def hostile_pattern() -> re.Pattern[str]:
    """A regex matching any character :func:`hostile_table` replaces."""
    return re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(hostile_table())) + "]")


#: characters TextArea would take as line breaks (str.splitlines) and rewrite; the editor holds a
#: stand-in from plane 16's private use area instead, one character for one, so offsets agree
LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
STAND_INS = "".join(chr(0x10FF00 + ord(c)) if ord(c) < 0x100 else chr(0x10FE00 + (ord(c) & 0xFF)) for c in LINE_BREAKS)
_TO_EDITOR = str.maketrans(LINE_BREAKS, STAND_INS)
#: how the stand-ins are painted
_STAND_IN_GLYPHS = dict(zip(map(ord, STAND_INS), "␍␋␌␜␝␞␤␤␤"))


def to_editor(text: str, crlf: bool = False) -> str:
    r"""``text`` with line-break characters other than ``\n`` replaced by stand-ins; with ``crlf``
    (a document whose lines end in CRLF) a ``\r\n`` stays a line break.

    >>> from_editor(to_editor("a\r\nb\x85c")) == "a\r\nb\x85c", to_editor("a\r\nb").count("\r")
    (True, 0)
    >>> to_editor("a\r\nb\rc", crlf=True) == "a\r\nb" + STAND_INS[0] + "c"
    True
    """
    if crlf and "\r\n" in text:
        return "\r\n".join(to_editor(part) for part in text.split("\r\n"))
    for original, stand_in in zip(LINE_BREAKS, STAND_INS):
        if original in text:
            text = text.replace(original, stand_in)
    return text


def uses_crlf(text: str) -> bool:
    r"""Whether every line of ``text`` ends in CRLF (and it has no other CR or line break).

    >>> uses_crlf("a\r\nb\r\n"), uses_crlf("a\r\nb\n"), uses_crlf("a\rb\r\n"), uses_crlf("ab")
    (True, False, False, False)
    """
    if "\r\n" not in text:
        return False
    n = text.count("\r\n")
    return text.count("\n") == n and text.count("\r") == n and not any(c in text for c in LINE_BREAKS[1:])


def paste_line_breaks(text: str, crlf: bool) -> str:
    r"""Pasted text with its line endings made the document's: terminals send CR for a newline
    when pasting, so ``\r\n`` and a lone ``\r`` become ``\n`` (``\r\n`` in a CRLF document).

    >>> paste_line_breaks("one\rtwo\r\nthree", False), paste_line_breaks("a\nb", True)
    ('one\ntwo\nthree', 'a\r\nb')
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\n", "\r\n") if crlf else text


def _has_stand_ins(text: str) -> bool:
    return not text.isascii() and any(stand_in in text for stand_in in STAND_INS)


def from_editor(text: str) -> str:
    for stand_in, original in zip(STAND_INS, LINE_BREAKS):
        if stand_in in text:
            text = text.replace(stand_in, original)
    return text


def typed_text(character: str | None) -> str | None:
    r"""The text a key press types, or None for a key that types nothing (Enter, Ctrl+letters).

    Textual inserts only characters ``str.isprintable`` accepts, so a typed zero-width joiner,
    bidi control, soft hyphen or no-break space vanished; every character but a C0/C1 control
    (which a terminal sends for Ctrl+letter, Tab, Escape, Backspace) is text.

    >>> [typed_text(c) for c in ("a", "\u200d", "\u202e", "\xad", "\xa0", "\x01", "\t", None)]
    ['a', '\u200d', '\u202e', '\xad', '\xa0', None, None, None]
    """
    if not character or any(unicodedata.category(c) == "Cc" for c in character):
        return None
    return character


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

    def wrap_range(self, start, old_end, new_end):  # type: ignore[override]
        line = start[0]
        if (self._width == 0 and line == old_end[0] == new_end[0] and line < len(self._tab_width_cache)
                and self._tab_width_cache[line] == [0] and "\t" not in self.document[line]):
            # without soft wrap, an edit inside one line without tabs leaves every wrap table as
            # it was (one row, one tab-free section); re-wrapping would measure the whole line
            return
        self._height = None
        self._wrapped_for = None
        return super().wrap_range(start, old_end, new_end)

    @property
    def height(self) -> int:
        if self._height is None:
            # one entry per visual line, kept up to date by wrap and wrap_range: the same number
            # Textual's height sums line by line (O(lines) after every edit), read in O(1)
            info = getattr(self, "_offset_to_line_info", None)
            self._height = len(info) if info is not None else WrappedDocument.height.fget(self)  # type: ignore[attr-defined]
        return self._height


#: lines longer than this (characters) have their width updated by each edit, not measured again
LONG_LINE = 4096


class _FastDocument(Document):
    """TextArea's document with its joined text and its size remembered between edits.

    TextArea joins every line into ``text`` for each painted line (to check for a placeholder) and
    measures every line's width after each edit (without soft wrap): work in proportion to the
    whole text on every keystroke. Here the text is joined once per edit and line widths are
    kept in a list that an edit updates for the lines it touched.
    """

    _version = 0  # edits so far
    _joined: tuple[int, str] | None = None  # (version, text)
    _widths: tuple[int, list[int]] | None = None  # (tab width, cell width of each line)
    #: False when no line-break stand-in (see :func:`to_editor`) has ever been in the text, so
    #: the real text is the text itself (set when the editor takes the document)
    _stand_ins = True

    def replace_range(self, start, end, text):  # type: ignore[override]
        top, bottom = sorted((start, end))
        if not self._stand_ins and _has_stand_ins(text):
            self._stand_ins = True
        # an edit inside one long line without tabs changes its width by what it adds and takes,
        # so the line is not measured again
        inline = (top[0] == bottom[0] and "\n" not in text and "\t" not in text and self._widths is not None
                  and top[0] < len(self._lines) and len(self._lines[top[0]]) > LONG_LINE
                  and "\t" not in self._lines[top[0]])
        removed = self.get_text_range(top, bottom) if inline else ""
        result = super().replace_range(start, end, text)
        self._version += 1
        widths = self._widths
        if widths is not None:
            tab_width, cells = widths
            lines = self._lines
            if len(cells) + result.end_location[0] - bottom[0] != len(lines) or bottom[0] >= len(cells):
                self._widths = None  # an edit outside the lines we know: measure again
            elif inline and result.end_location[0] == top[0]:
                cells[top[0]] += cell_len(text) - cell_len(removed)
            else:
                new = lines[top[0] : result.end_location[0] + 1]
                cells[top[0] : bottom[0] + 1] = [cell_len(line.expandtabs(tab_width)) for line in new]
        return result

    @property
    def text(self) -> str:  # type: ignore[override]
        joined = self._joined
        if joined is None or joined[0] != self._version:
            joined = self._joined = (self._version, Document.text.fget(self))  # type: ignore[attr-defined]
        return joined[1]

    def get_size(self, tab_width: int) -> Size:
        widths = self._widths
        if widths is None or widths[0] != tab_width:
            widths = self._widths = (tab_width, [cell_len(line.expandtabs(tab_width)) for line in self._lines])
        return Size(max(widths[1], default=0), len(self._lines))


#: TextArea keys the explorer uses for itself: Ctrl+A selects all (Home goes to the line start),
#: F6 and F7 open views
_TAKEN = {"ctrl+a", "f6", "f7"}


def _editor_bindings() -> list[Binding]:
    out = []
    for binding in TextArea.BINDINGS:
        if not isinstance(binding, Binding):
            continue
        keys = [k for k in binding.key.split(",") if k.strip() not in _TAKEN]
        if keys:
            out.append(Binding(",".join(keys), binding.action, binding.description, show=binding.show,
                               key_display=binding.key_display, priority=binding.priority))
    # TextArea has no keys for the text's two ends
    out += [Binding("ctrl+home", "cursor_text_start", "Text start", show=False),
            Binding("ctrl+end", "cursor_text_end", "Text end", show=False),
            Binding("ctrl+shift+home", "cursor_text_start(True)", "Select to text start", show=False),
            Binding("ctrl+shift+end", "cursor_text_end(True)", "Select to text end", show=False)]
    return out


class Editor(TextArea, inherit_bindings=False):
    r"""TextArea that keeps every character of the text and paints hostile ones inertly.

    TextArea splits lines like ``str.splitlines`` and would turn ``\r``, ``\x85``, ``\u2028``...
    into its own newline; the editor stores stand-ins for them instead (see :func:`to_editor`), so
    :attr:`real_text` is exactly what the user loaded and typed. A text whose lines all end in CRLF
    is kept as CRLF lines (End goes to the end of the line, Enter adds a CRLF). Pasted text gets
    the document's line endings (terminals paste newlines as CR). Control, bidi and zero-width
    characters are never written to the terminal.
    """

    BINDINGS = _editor_bindings()

    _real: tuple[str, str] | None = None  # (editor text, the text it stands for)
    crlf = False  # the text's lines end in CRLF

    def __init__(self, text: str = "", **kwargs) -> None:
        # TextArea.__init__ builds and wraps a document of the text, then builds and wraps it
        # again (_set_document); start empty and build it once (half a second less on 1 MB)
        super().__init__("", **kwargs)
        self.crlf = uses_crlf(text)
        self._set_document(to_editor(text, self.crlf), self.language)

    def post_message(self, message) -> bool:
        # TextArea posts Changed from inside the edit; the message reaches the app a few
        # event-loop turns later, usually after a frame showing only the input pane has been
        # painted (a frame of latency per keystroke). The app that has ``text_edited`` hears of
        # the edit right here instead, and the message says so (``early_handled``).
        if isinstance(message, TextArea.Changed) and message.text_area is self and self.is_mounted:
            edited = getattr(self.app, "text_edited", None)
            if edited is not None:
                message.early_handled = True  # type: ignore[attr-defined]
                edited(self)
        return super().post_message(message)

    async def _on_paste(self, event: events.Paste) -> None:
        event.prevent_default()  # TextArea's own handler would insert the text as it came
        event.stop()
        if self.read_only:
            return
        text = paste_line_breaks(event.text, self.crlf)
        result = self.replace(text, *self.selection, maintain_selection_offset=False)
        self.move_cursor(result.end_location)

    def action_cursor_text_start(self, select: bool = False) -> None:
        self.move_cursor(self.document.start, select=select)

    def action_cursor_text_end(self, select: bool = False) -> None:
        self.move_cursor(self.document.end, select=select)

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        return super().check_consume_key(key, character) or (not self.read_only and typed_text(character) is not None)

    async def _on_key(self, event: events.Key) -> None:
        text = typed_text(event.character)
        if text is not None and not event.is_printable and not self.read_only:
            # a zero-width or format character: TextArea would drop it (it inserts printable ones)
            event.stop()
            event.prevent_default()
            self._restart_blink()
            start, end = self.selection
            self._replace_via_keyboard(text, start, end)
            return
        await super()._on_key(event)

    def load_text(self, text: str) -> None:
        """Replace the whole text (not undoable), keeping every character as :meth:`__init__` does."""
        self.crlf = uses_crlf(text)
        super().load_text(to_editor(text, self.crlf))

    @property
    def document(self) -> DocumentBase:
        return self._document

    @document.setter
    def document(self, document: DocumentBase) -> None:
        if type(document) is Document:
            document.__class__ = _FastDocument
            document._stand_ins = _has_stand_ins(document.text)
        self._document = document

    @property
    def wrapped_document(self) -> WrappedDocument:
        return self._wrapped

    @wrapped_document.setter
    def wrapped_document(self, document: WrappedDocument) -> None:
        if type(document) is WrappedDocument:
            document.__class__ = _CachedHeightWrappedDocument
            # WrappedDocument() has just wrapped every line (at its width, 0): TextArea asks for
            # the same wrap again straight away; remembering what was wrapped skips that second pass
            document._wrapped_for = (document._width, document._tab_width, document.document.line_count)
        self._wrapped = document

    def _watch_language(self, language: str | None) -> None:
        # TextArea builds its document again (splitting and wrapping every line) when it is
        # mounted, to apply the language; a plain-text document stays plain, so keep it
        if not language and type(self.document) in (Document, _FastDocument):
            return
        super()._watch_language(language)

    @property
    def real_text(self) -> str:
        text = self.text
        if not getattr(self.document, "_stand_ins", True):
            return text
        cached = self._real
        if cached is None or cached[0] is not text:
            cached = self._real = (text, from_editor(text))
        return cached[1]

    def edit(self, edit):  # every insert, paste, replace and undo goes through here
        edit.text = to_editor(edit.text, self.crlf)
        return super().edit(edit)

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        table = hostile_table()
        hostile = hostile_pattern()
        segments = list(strip)
        changed = False
        for k, seg in enumerate(segments):
            text = seg.text
            # a regex scan that finds nothing to replace is cheaper than translating a long line
            if (not text.isascii() or not text.isprintable()) and hostile.search(text):
                clean = text.translate(table)
                if clean != text:
                    segments[k] = Segment(clean, seg.style, seg.control)
                    changed = True
        if not changed:
            return strip
        return Strip(segments, strip.cell_length)
