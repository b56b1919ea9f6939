"""Snapshots of the explorer's main screen (SVGs under __snapshots__; update with --snapshot-update)."""

from __future__ import annotations

import pytest

from tokscope.app.app import ExplorerApp
from helpers import settle
from tokscope.sample_texts import read_sample


def app_for(text: str | None = None, palette: str = "truecolor") -> ExplorerApp:
    return ExplorerApp(read_sample("default.txt") if text is None else text, encoding="o200k_base", palette=palette)


async def ready(pilot) -> None:
    pilot.app.editor.cursor_blink = False
    await settle(pilot)


async def ready_in_view(pilot) -> None:
    """Settle, then put the token cursor on the emoji line (partial pieces in view)."""
    await ready(pilot)
    app = pilot.app
    await pilot.press("tab")
    text = app.text
    app.select_piece(app.doc.piece_at(text.index("👍")))
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_main_screen_text_mode(snap_compare, size):
    assert snap_compare(app_for(), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_main_screen_partial_piece_selected_with_whitespace(snap_compare, size):
    assert snap_compare(app_for(), terminal_size=size, run_before=ready_in_view, press=["ctrl+g"])


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_main_screen_ids_mode(snap_compare, size):
    assert snap_compare(app_for(), terminal_size=size, run_before=ready_in_view, press=["ctrl+t"])


def test_main_screen_both_mode_80x24(snap_compare):
    assert snap_compare(app_for(), terminal_size=(80, 24), run_before=ready_in_view, press=["ctrl+t", "ctrl+t"])


def test_main_screen_rank_colours_120x40(snap_compare):
    assert snap_compare(app_for(), terminal_size=(120, 40), run_before=ready_in_view, press=["ctrl+r"])


def test_main_screen_sixteen_colours_80x24(snap_compare):
    assert snap_compare(app_for(palette="standard"), terminal_size=(80, 24), run_before=ready_in_view)


def test_main_screen_no_color_80x24(snap_compare):
    assert snap_compare(app_for(palette="mono"), terminal_size=(80, 24), run_before=ready_in_view)


def test_help_screen_80x24(snap_compare):
    assert snap_compare(app_for("x"), terminal_size=(80, 24), run_before=ready, press=["f1"])


def test_too_small_50x14(snap_compare):
    assert snap_compare(app_for("x"), terminal_size=(50, 14))
