"""Readable in every colour mode and theme (issue 20 item 20, issue 22 item 13).

The token view's text is checked against its background as the app paints it (the segments of
its rendered lines over the widget's own style), in truecolor and in the 256 colours a terminal
without truecolor gets (:func:`tokscope.app.render.worst_contrast` takes the lower of the two), in
every state where one colour is laid over another: a selected piece with its id (Ctrl+T), control
and zero-width glyphs on piece colours, visible whitespace (Ctrl+G), the rank ramp (Ctrl+R). Every
theme of the palette's theme switcher gives the pieces its own colours and is held to the same
4.5:1. With 16 colours a glyph never takes its piece's colour; with NO_COLOR the cursor and the
focused pane are drawn by style and shape.
"""

from __future__ import annotations

import pytest
from textual.geometry import Region

from helpers import settle
from tokscope.app.app import ExplorerApp
from tokscope.app.render import MIN_CONTRAST, worst_contrast
from tokscope.app.widgets.token_view import DEFAULT_THEME, THEME_PIECES

TEXT = "Tokens 👩\u200d👩\u200d👧 a\r\nb\tc  d \u202e x\x1b y 日本語 \u00ad1234567\n" * 3
#: key presses, one state after another: ids, both, both + whitespace, rank colours, a selection
STATES = [(), ("ctrl+t",), ("ctrl+t",), ("ctrl+g",), ("ctrl+r",), ("tab", "right", "right", "right")]


def is_graphic(text: str) -> bool:
    return all(0x2500 <= ord(c) <= 0x25FF or c.isspace() for c in text)


def weak_segments(view) -> list[tuple[str, str, float]]:
    """The text the view paints below 4.5:1 (its titles included: the app lifts a theme's body
    text that falls short, see ``ExplorerApp.get_css_variables``)."""
    base = view.rich_style
    out = []
    for strip in view.render_lines(Region(0, 0, view.size.width, view.size.height)):
        for seg in strip:
            if seg.style is None or not seg.text.strip() or is_graphic(seg.text):
                continue
            style = base + seg.style
            fg, bg = style.color, style.bgcolor
            if style.reverse:
                fg, bg = bg, fg
            assert fg is not None and bg is not None, (seg.text, str(style))
            ratio = worst_contrast(fg, bg)
            if ratio < MIN_CONTRAST:
                out.append((seg.text, str(style), round(ratio, 2)))
    return out


async def walk_states(pilot) -> list:
    app = pilot.app
    weak = []
    for keys in STATES:
        await pilot.press(*keys)
        await settle(pilot)
        await pilot.pause()
        weak += [(keys, *w) for w in weak_segments(app.token_view)]
    return weak


async def test_truecolor_and_256_colours_reach_4_5_to_1_in_every_state():
    app = ExplorerApp(TEXT, encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        weak = await walk_states(pilot)
        assert not weak, weak[:8]
        assert app.mode == "both" and app.token_view.selected is not None  # the selected id was checked


THEMES = sorted(t for t in ExplorerApp("").available_themes if not t.startswith("ansi"))


@pytest.mark.parametrize("theme", THEMES)
async def test_every_theme_colours_the_pieces_and_stays_readable(theme):
    app = ExplorerApp(TEXT, encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        app.theme = theme
        await settle(pilot)
        await pilot.pause()
        palette = app.token_view.palette
        if theme != DEFAULT_THEME:  # the pieces take the theme's colours
            from rich.color import Color

            assert palette.alternate[0].bgcolor == Color.parse(app.theme_variables[THEME_PIECES[0]])
        weak = await walk_states(pilot)
        assert not weak, weak[:8]


async def test_sixteen_colours_never_draw_a_glyph_in_its_pieces_colour():
    app = ExplorerApp(TEXT, encoding="o200k_base", palette="standard")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for keys in STATES:
            await pilot.press(*keys)
            await settle(pilot)
            strip_styles = [(seg.text, seg.style) for strip in app.token_view.render_lines(
                Region(0, 0, 100, 10)) for seg in strip if seg.style is not None and seg.text.strip()]
            same = [(t, str(s)) for t, s in strip_styles if s.color is not None and s.color == s.bgcolor]
            assert not same, same[:5]


async def test_no_color_draws_the_cursor_and_the_focus():
    app = ExplorerApp("some text", encoding="o200k_base", palette="mono")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.has_class("-mono")
        cursor = app.editor.get_component_rich_style("text-area--cursor")
        assert cursor.reverse
        focused, other = app.editor.styles.border_top[0], app.token_view.styles.border_top[0]
        assert focused != other and focused == "heavy"
        await pilot.press("tab")
        await pilot.pause()
        assert app.token_view.styles.border_top[0] == "heavy" and app.editor.styles.border_top[0] != "heavy"
