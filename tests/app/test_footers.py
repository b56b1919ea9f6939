"""Footers never cut a key in half (issue 20, item 19): at 80 columns and at 60x16 every key a
footer shows is whole, its label included; what does not fit leaves the footer (the app's own keys
first, F1 lists them all) and still works."""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from helpers import idle, settle
from tokscope.app.app import ExplorerApp

VIEWS = [None, "f4", "f5", "f6", "f7", "f8", "f12"]


def footer_keys(app) -> list[tuple[str, str, int, int]]:
    """(key, label, right edge, width) of each key the current screen's footer shows."""
    return [(k.key_display, k.description, k.region.right, k.region.width)
            for k in app.screen.query(FooterKey) if k.display]


@pytest.mark.parametrize("size", [(80, 24), (60, 16)])
@pytest.mark.parametrize("key", VIEWS)
async def test_every_footer_key_is_whole(key, size):
    if key == "f5" and size[1] < 20:
        size = (size[0], 20)  # compare's smallest size
    app = ExplorerApp("Hello world, a text to look at.\n", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        if key:
            await pilot.press(key)
            await idle(pilot)
        await pilot.pause()
        keys = footer_keys(app)
        assert len(keys) >= 3, keys
        for display, label, right, width in keys:
            assert right <= size[0], (display, label, right)
            assert width >= len(display) + len(label) + (1 if label else 0) - (1 if key is None else 0), (display, label)
        shown = {d for d, *_ in keys}
        if key is None:  # the explorer: the views and quitting stay in view
            assert {"^q", "f3", "f5", "f8", "f12"} <= shown
        else:
            assert "esc" in shown  # the way back is always shown


async def test_a_key_left_out_of_a_narrow_footer_still_works():
    app = ExplorerApp("Hello", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(60, 16)) as pilot:
        await settle(pilot)
        assert "f2" not in {d for d, *_ in footer_keys(app)}
        await pilot.press("f2")
        await pilot.pause()
        assert type(app.screen).__name__ == "EncodingPicker"
