"""Every use the explorer's editor makes of Textual's private (``_x``) attributes, in one place.

The input pane (:mod:`.editor`) needs a few things Textual's ``TextArea`` has no public way to do:
build its document once instead of twice, insert a typed character ``str.isprintable`` rejects,
keep its plain document when mounted, and documents that remember their joined text, line widths
and height between edits (Textual recomputes them over the whole text for every painted line).
Each is done here by a small function or class that names the internal it touches and why;
:mod:`.editor` calls only these. Tested with Textual 8.2.8 (the pin in pyproject.toml is
``textual>=8.2.8,<8.3``); ``tests/app/test_newcomer.py`` checks every name in :data:`INTERNALS`
still exists, and that nothing else in ``tokscope/app`` uses a Textual private name.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.cells import cell_len
from textual.geometry import Size
from textual.widgets import TextArea
from textual.widgets.text_area import Document, DocumentBase, WrappedDocument

#: ``(owner, private name)``: every Textual internal used here (the test checks each still exists;
#: names on instances are checked on a fresh one)
INTERNALS = (
    ("TextArea", "_set_document"),
    ("TextArea", "_restart_blink"),
    ("TextArea", "_replace_via_keyboard"),
    ("TextArea", "_on_key"),
    ("TextArea", "_on_paste"),
    ("TextArea", "_watch_language"),
    ("Document", "_lines"),
    ("WrappedDocument", "_width"),
    ("WrappedDocument", "_tab_width"),
    ("WrappedDocument", "_tab_width_cache"),
    ("WrappedDocument", "_offset_to_line_info"),
)

#: lines longer than this (characters) have their width updated by each edit, not measured again
LONG_LINE = 4096


def set_document(area: TextArea, text: str, language: str | None) -> None:
    """Build ``area``'s document of ``text`` (``TextArea._set_document``, Textual 8.2.8).

    Used by the editor's ``__init__``: ``TextArea.__init__`` builds and wraps a document of its
    text and then builds and wraps it again; starting empty and calling this builds it once."""
    area._set_document(text, language)


def restart_blink(area: TextArea) -> None:
    """Show the cursor now and restart its blink, as a key press does (``TextArea._restart_blink``,
    Textual 8.2.8)."""
    area._restart_blink()


def insert_typed(area: TextArea, text: str) -> None:
    """Insert ``text`` over the selection as a key press would (``TextArea._replace_via_keyboard``,
    Textual 8.2.8: read-only and undo handling as for typed text). ``TextArea`` inserts only
    characters ``str.isprintable`` accepts; the editor types the others (a zero-width joiner, a
    bidi control) through this."""
    start, end = area.selection
    area._replace_via_keyboard(text, start, end)


def editor_hooks(cls: type[TextArea]) -> type[TextArea]:
    """Class decorator: route ``TextArea``'s private handlers to public methods of ``cls``.

    Textual 8.2.8 handles keys and pastes in ``TextArea._on_key`` / ``_on_paste`` and rebuilds the
    document in the ``_watch_language`` watcher; ``cls`` gets those three names, which call:

    * ``take_key(event) -> bool``: True when it handled the key (else ``TextArea``'s handler runs);
    * ``take_paste(event)`` (async): the paste, in place of ``TextArea``'s;
    * ``keeps_document(language) -> bool``: True to keep the current document when the language
      is set (``TextArea`` builds it again when mounted, splitting and wrapping every line).

    It also makes ``document`` and ``wrapped_document`` (plain attributes ``TextArea`` assigns)
    properties that turn a plain :class:`Document` into a :class:`FastDocument` (its ``flag_text``
    taken from ``cls.flag_text``) and a plain :class:`WrappedDocument` into a
    :class:`CachedHeightWrappedDocument`.
    """

    async def _on_key(self, event) -> None:
        if not self.take_key(event):
            await TextArea._on_key(self, event)

    async def _on_paste(self, event) -> None:
        await self.take_paste(event)

    def _watch_language(self, language: str | None) -> None:
        if not self.keeps_document(language):
            TextArea._watch_language(self, language)

    def get_document(self) -> DocumentBase:
        return self.__dict__["_tokscope_document"]

    def set_document_(self, document: DocumentBase) -> None:
        if type(document) is Document:
            document.__class__ = FastDocument
            document.flag_text = cls.flag_text  # type: ignore[attr-defined]
            document.flagged = cls.flag_text(document.text)  # type: ignore[attr-defined]
        self.__dict__["_tokscope_document"] = document

    def get_wrapped(self) -> WrappedDocument:
        return self.__dict__["_tokscope_wrapped"]

    def set_wrapped(self, document: WrappedDocument) -> None:
        if type(document) is WrappedDocument:
            document.__class__ = CachedHeightWrappedDocument
            # WrappedDocument() has just wrapped every line (at its width, 0): TextArea asks for
            # the same wrap again straight away; remembering what was wrapped skips that second pass
            document.wrapped_for = (document._width, document._tab_width, document.document.line_count)  # type: ignore[attr-defined]
        self.__dict__["_tokscope_wrapped"] = document

    cls._on_key = _on_key  # type: ignore[attr-defined]
    cls._on_paste = _on_paste  # type: ignore[attr-defined]
    cls._watch_language = _watch_language  # type: ignore[attr-defined]
    cls.document = property(get_document, set_document_)  # type: ignore[assignment]
    cls.wrapped_document = property(get_wrapped, set_wrapped)  # type: ignore[assignment]
    return cls


def is_plain_document(document: DocumentBase) -> bool:
    """Whether ``document`` is a plain-text document (no syntax highlighting)."""
    return type(document) in (Document, FastDocument)


class CachedHeightWrappedDocument(WrappedDocument):
    """TextArea's wrapped document with its height remembered between edits.

    Textual sums every line's wrap count each time it asks for the height, which happens for every
    painted line; this keeps it. Reads ``WrappedDocument._width``, ``_tab_width_cache`` and
    ``_offset_to_line_info`` (Textual 8.2.8).
    """

    cached_height: int | None = None
    wrapped_for: tuple | None = None  # (width, tab width, lines) of the last full wrap, None after an edit

    def wrap(self, width: int, tab_width: int | None = None) -> None:
        # TextArea re-wraps the whole text several times while starting; once per size is enough
        key = (width, tab_width, self.document.line_count)
        if key == self.wrapped_for:
            return
        self.cached_height = None
        super().wrap(width, tab_width)
        self.wrapped_for = key

    def wrap_range(self, start, old_end, new_end):  # type: ignore[override]
        line = start[0]
        if (self._width == 0 and line == old_end[0] == new_end[0] and line < len(self._tab_width_cache)
                and self._tab_width_cache[line] == [0] and "\t" not in self.document[line]):
            # without soft wrap, an edit inside one line without tabs leaves every wrap table as
            # it was (one row, one tab-free section); re-wrapping would measure the whole line
            return
        self.cached_height = None
        self.wrapped_for = None
        return super().wrap_range(start, old_end, new_end)

    @property
    def height(self) -> int:
        if self.cached_height is None:
            # one entry per visual line, kept up to date by wrap and wrap_range: the same number
            # Textual's height sums line by line (O(lines) after every edit), read in O(1)
            info = getattr(self, "_offset_to_line_info", None)
            self.cached_height = len(info) if info is not None else WrappedDocument.height.fget(self)  # type: ignore[attr-defined]
        return self.cached_height


class FastDocument(Document):
    """TextArea's document with its joined text and its size remembered between edits.

    TextArea joins every line into ``text`` for each painted line (to check for a placeholder) and
    measures every line's width after each edit (without soft wrap): work in proportion to the
    whole text on every keystroke. Here the text is joined once per edit and line widths are
    kept in a list that an edit updates for the lines it touched. Reads ``Document._lines``
    (Textual 8.2.8).

    ``flagged`` is True once any text ``flag_text`` accepts has been in the document (the editor
    flags its line-break stand-ins, so while none was ever typed its text is the real text).
    """

    version = 0  # edits so far
    joined: tuple[int, str] | None = None  # (version, text)
    widths: tuple[int, list[int]] | None = None  # (tab width, cell width of each line)
    flag_text: Callable[[str], bool] = staticmethod(lambda text: True)  # type: ignore[assignment]
    flagged = True

    def replace_range(self, start, end, text):  # type: ignore[override]
        top, bottom = sorted((start, end))
        if not self.flagged and self.flag_text(text):
            self.flagged = True
        lines = self._lines
        # an edit inside one long line without tabs changes its width by what it adds and takes,
        # so the line is not measured again
        inline = (top[0] == bottom[0] and "\n" not in text and "\t" not in text and self.widths is not None
                  and top[0] < len(lines) and len(lines[top[0]]) > LONG_LINE and "\t" not in lines[top[0]])
        removed = self.get_text_range(top, bottom) if inline else ""
        result = super().replace_range(start, end, text)
        self.version += 1
        widths = self.widths
        if widths is not None:
            tab_width, cells = widths
            lines = self._lines
            if len(cells) + result.end_location[0] - bottom[0] != len(lines) or bottom[0] >= len(cells):
                self.widths = None  # an edit outside the lines we know: measure again
            elif inline and result.end_location[0] == top[0]:
                cells[top[0]] += cell_len(text) - cell_len(removed)
            else:
                new = lines[top[0] : result.end_location[0] + 1]
                cells[top[0] : bottom[0] + 1] = [cell_len(line.expandtabs(tab_width)) for line in new]
        return result

    @property
    def text(self) -> str:  # type: ignore[override]
        joined = self.joined
        if joined is None or joined[0] != self.version:
            joined = self.joined = (self.version, Document.text.fget(self))  # type: ignore[attr-defined]
        return joined[1]

    def get_size(self, tab_width: int) -> Size:
        widths = self.widths
        if widths is None or widths[0] != tab_width:
            widths = self.widths = (tab_width, [cell_len(line.expandtabs(tab_width)) for line in self._lines])
        return Size(max(widths[1], default=0), len(self._lines))
