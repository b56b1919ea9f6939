"""The input pane: a TextArea that never passes control or bidi characters to the terminal."""

from __future__ import annotations

import re
import unicodedata

import regex
from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.strip import Strip
from textual.widgets import TextArea

from ...core.text.display import NAMED
from . import textual_internals


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


#: combining marks drawn in a run on one character (the editor's and the token view's drawing): a
#: letter with a million marks would otherwise send megabytes to the terminal at every repaint
MARKS_SHOWN = 4


@lru_cache(maxsize=1)
def _mark_run() -> regex.Pattern[str]:
    return regex.compile(r"([\p{Mn}\p{Me}]{%d})[\p{Mn}\p{Me}]+" % MARKS_SHOWN)


def bound_marks(text: str) -> str:
    """``text`` as the editor draws it: a run of combining marks keeps its first
    :data:`MARKS_SHOWN` (they take no cells, so the line is as wide as before).

    >>> bound_marks("e" + "\u0301" * 1000 + "x") == "e" + "\u0301" * 4 + "x"
    True
    """
    return _mark_run().sub(r"\1", text)


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


@textual_internals.editor_hooks
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
    #: what marks a document's text as holding line-break stand-ins (see :attr:`real_text`)
    flag_text = staticmethod(_has_stand_ins)

    _real: tuple[str, str] | None = None  # (editor text, the text it stands for)
    _cleaned: LRUCache | None = None  # id(strip TextArea painted) -> (that strip, the strip drawn)
    crlf = False  # the text's lines end in CRLF

    def __init__(self, text: str = "", **kwargs) -> None:
        # TextArea.__init__ builds and wraps a document of the text, then builds and wraps it
        # again; start empty and build it once
        super().__init__("", **kwargs)
        self.crlf = uses_crlf(text)
        textual_internals.set_document(self, to_editor(text, self.crlf), self.language)

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

    async def take_paste(self, event: events.Paste) -> None:
        """Paste ``event``'s text with the document's line endings (TextArea's own paste handler
        does not run)."""
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

    def take_key(self, event: events.Key) -> bool:
        """Type a zero-width or format character TextArea would drop (it inserts printable ones);
        True when the key was taken here, False to leave it to TextArea."""
        text = typed_text(event.character)
        if text is None or event.is_printable or self.read_only:
            return False
        event.stop()
        event.prevent_default()
        textual_internals.restart_blink(self)
        textual_internals.insert_typed(self, text)
        return True

    def load_text(self, text: str) -> None:
        """Replace the whole text (not undoable), keeping every character as :meth:`__init__` does."""
        self.crlf = uses_crlf(text)
        super().load_text(to_editor(text, self.crlf))

    def keeps_document(self, language: str | None) -> bool:
        """True when setting ``language`` keeps the document: TextArea builds it again (splitting
        and wrapping every line) when it is mounted, to apply the language; plain text stays plain."""
        return not language and textual_internals.is_plain_document(self.document)

    @property
    def real_text(self) -> str:
        text = self.text
        if not getattr(self.document, "flagged", True):
            return text
        cached = self._real
        if cached is None or cached[0] is not text:
            cached = self._real = (text, from_editor(text))
        return cached[1]

    def edit(self, edit):  # every insert, paste, replace and undo goes through here
        edit.text = to_editor(edit.text, self.crlf)
        return super().edit(edit)

    def render_line(self, y: int) -> Strip:
        # TextArea keeps the lines it painted (the same Strip for the same line, cursor and blink
        # state): their cleaned form is kept beside them, so a blink repaints nothing new
        strip = super().render_line(y)
        cache = self._cleaned
        if cache is None:
            cache = self._cleaned = LRUCache(256)
        got = cache.get(id(strip))
        if got is not None and got[0] is strip:
            return got[1]
        clean = self._clean(strip)
        cache[id(strip)] = (strip, clean)
        return clean

    def _clean(self, strip: Strip) -> Strip:
        """The line with hostile characters as stand-ins and long runs of marks cut (cell for cell)."""
        table = hostile_table()
        hostile = hostile_pattern()
        segments = list(strip)
        changed = False
        for k, seg in enumerate(segments):
            text = seg.text
            # a regex scan that finds nothing to replace is cheaper than translating a long line
            if text.isascii() and text.isprintable():
                continue
            clean = text.translate(table) if hostile.search(text) else text
            if len(clean) > MARKS_SHOWN:
                clean = bound_marks(clean)
            if clean != text:
                segments[k] = Segment(clean, seg.style, seg.control)
                changed = True
        if not changed:
            return strip
        return Strip(segments, strip.cell_length)
