"""What every screen of the explorer shares: the "too small" message and the views' keys.

Below its smallest working size (``MIN_SIZE``) a screen hides its widgets and says how large the
terminal must be, instead of drawing squashed or empty panes. A view (:class:`ViewScreen`) keeps
the app's function keys working (F3..F8 and F12 open the other views, F9 copies) without listing them in its
footer, which shows the view's own keys.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import replace

from textual.binding import ActiveBinding, Binding
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


def fit_footer(bindings: Mapping[str, ActiveBinding], width: int, key_display, *, gap: int = 2,
               short: Mapping[str, str] | None = None, drop: Sequence[str] = ()) -> dict[str, ActiveBinding]:
    """``bindings`` with what the footer shows made to fit ``width`` cells, so no key is cut in
    half: first the ``short`` labels (key -> label), then the keys of ``drop`` leave the footer in
    that order, then the last keys shown; every key still works. ``gap`` is what a key costs
    besides its key and label (a compact footer: a space between them and one after).

    >>> from textual.binding import Binding
    >>> b = {k: ActiveBinding(None, Binding(k, f"do_{label}", label), True) for k, label in
    ...      [("escape", "Back"), ("ctrl+q", "Quit"), ("f1", "Help"), ("f2", "Encoding")]}
    >>> def shown(width, **kw):
    ...     fitted = fit_footer(b, width, lambda binding: binding.key, **kw)
    ...     return [(a.binding.key, a.binding.description) for a in fitted.values() if a.binding.show]
    >>> shown(80)
    [('escape', 'Back'), ('ctrl+q', 'Quit'), ('f1', 'Help'), ('f2', 'Encoding')]
    >>> shown(38, short={"f2": "Enc"})
    [('escape', 'Back'), ('ctrl+q', 'Quit'), ('f1', 'Help'), ('f2', 'Enc')]
    >>> shown(31, drop=["f2"])
    [('escape', 'Back'), ('ctrl+q', 'Quit'), ('f1', 'Help')]
    >>> shown(20)
    [('escape', 'Back')]
    """
    out = dict(bindings)

    def cost(key: str) -> int:
        binding = out[key].binding
        return len(key_display(binding)) + len(binding.description) + gap

    def total() -> int:
        # the footer shows one key per action (ctrl+up,alt+up is one entry)
        firsts = {}
        for k, a in out.items():
            if a.binding.show:
                firsts.setdefault(a.binding.action, k)
        return sum(cost(k) for k in firsts.values()) - 1

    def hide(key: str) -> None:
        action = out[key].binding.action
        for k, a in out.items():
            if a.binding.action == action and a.binding.show:
                out[k] = a._replace(binding=replace(a.binding, show=False))

    if total() <= width:
        return out
    for key, label in (short or {}).items():
        if key in out and out[key].binding.show:
            out[key] = out[key]._replace(binding=replace(out[key].binding, description=label))
    for key in drop:
        if total() <= width:
            return out
        if key in out and out[key].binding.show:
            hide(key)
    for key in reversed([k for k, a in out.items() if a.binding.show]):
        if total() <= width:
            break
        hide(key)
    return out


class FittedScreen(Screen):
    """A screen whose footer never cuts a key: see :func:`fit_footer` (``FOOTER_SHORT``: shorter
    labels; ``FOOTER_DROP``: the keys that leave the footer first when it is narrow)."""

    FOOTER_SHORT: dict[str, str] = {}
    #: the app's keys go first (they work everywhere and F1 lists them), the view's own stay
    FOOTER_DROP: tuple[str, ...] = ("f2", "f1", "ctrl+q")
    #: what a key costs in the footer besides its key and label
    FOOTER_GAP = 2

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        bindings = super().active_bindings
        # only the app's own keys leave first (a view that binds F1 itself keeps it)
        drop = [k for k in self.FOOTER_DROP if k in bindings and bindings[k].node is self.app]
        return fit_footer(bindings, self.app.size.width, self.app.get_key_display,
                          gap=self.FOOTER_GAP, short=self.FOOTER_SHORT, drop=drop)

    def on_resize(self) -> None:
        self.refresh_bindings()


class ViewScreen(FittedScreen):
    """A view of the explorer: the too-small message and a footer that fits. Its ``BINDINGS`` end
    with :func:`view_bindings` (the app's view keys, not listed in its footer)."""

    #: the smallest terminal the view works in (columns, rows)
    MIN_SIZE = (60, 16)


    def on_mount(self) -> None:
        self.mount(TooSmall(*self.MIN_SIZE))
        check_size(self, self.app.size, self.MIN_SIZE)

    def on_resize(self) -> None:
        check_size(self, self.app.size, self.MIN_SIZE)
        self.refresh_bindings()
