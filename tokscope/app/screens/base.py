"""What every screen of the explorer shares: the "too small" message and the views' keys.

Below its smallest working size (``MIN_SIZE``) a screen hides its widgets and says how large the
terminal must be, instead of drawing squashed or empty panes. A view (:class:`ViewScreen`) keeps
the app's function keys working (F3..F8 and F12 open the other views, F9 copies) without listing them in its
footer, which shows the view's own keys.
"""

from __future__ import annotations

import weakref

from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

#: the keys the app gives the views (see tokscope.app.views)
VIEW_KEYS = ("f3", "f4", "f5", "f6", "f7", "f8", "f9", "f12")


class TooSmall(Static):
    """The message a screen shows instead of its widgets when the terminal is too small."""

    SCOPED_CSS = False  # its rules are about the screen it is in
    DEFAULT_CSS = """
    TooSmall { display: none; width: 1fr; height: 1fr; content-align: center middle; text-align: center;
               background: $error-darken-3; color: $text; }
    .-too-small > TooSmall { display: block; }
    .-too-small > * { display: none; }
    """

    def __init__(self, width: int, height: int) -> None:
        super().__init__(
            f"The terminal is too small for this view.\nMake it at least {width}×{height} (80×24 is best).\n\n"
            "Escape goes back · Ctrl+Q quits.",
            markup=False,
        )


def view_bindings(*skip: str) -> list[Binding]:
    """The app's view keys (F3..F9, F12) for a view's ``BINDINGS``, hidden from its footer; ``skip``
    the keys the view uses for something of its own."""
    return [Binding(key, f"app.view_key('{key}')", key, show=False) for key in VIEW_KEYS if key not in skip]


#: the widget that had the focus when its screen became too small (hidden widgets lose it)
_FOCUS_BEFORE: "weakref.WeakKeyDictionary[Screen, Widget]" = weakref.WeakKeyDictionary()


def check_size(screen: Screen, size: tuple[int, int], minimum: tuple[int, int]) -> bool:
    """Mark ``screen`` too small (``-too-small``) when ``size`` is under ``minimum``; True if it fits.
    The widget that had the focus gets it back when the screen fits again (keys typed then reach it)."""
    width, height = size
    small = width < minimum[0] or height < minimum[1]
    was_small = screen.has_class("-too-small")
    if small and not was_small and screen.focused is not None:
        _FOCUS_BEFORE[screen] = screen.focused
    screen.set_class(small, "-too-small")
    if was_small and not small:
        widget = _FOCUS_BEFORE.pop(screen, None)
        if widget is not None:
            screen.call_after_refresh(_refocus, screen, widget)
    return not small


def _refocus(screen: Screen, widget: Widget) -> None:
    if widget.is_attached and screen.focused is None and not screen.has_class("-too-small"):
        screen.set_focus(widget)


class ViewScreen(Screen):
    """A view of the explorer: the too-small message. Its ``BINDINGS`` end with
    :func:`view_bindings` (the app's view keys, not listed in its footer)."""

    #: the smallest terminal the view works in (columns, rows)
    MIN_SIZE = (60, 16)


    def on_mount(self) -> None:
        self.mount(TooSmall(*self.MIN_SIZE))
        check_size(self, self.app.size, self.MIN_SIZE)

    def on_resize(self) -> None:
        check_size(self, self.app.size, self.MIN_SIZE)
