"""The insights screen: the figures the core computes, the bytes/chars and normalisation toggles,
the width input, the ASCII fallback, and snapshots."""

from __future__ import annotations

import unicodedata

import pytest
from textual.widgets import Input, RadioButton, Static

from tokscope.app.app import ExplorerApp
from helpers import idle, plot_text
from tokscope.app.views import BY_NAME
from tokscope.app.screens import insights
from tokscope.app.screens.insights import InsightsScreen
from tokscope.app.widgets.plots import BarChart, ScatterPlot
from tokscope.core.text import display
from tokscope.core.insights import stats
from tokscope.sources.registry import load

TEXT = "Numbers: 1234567 and 2026.\nA cafe\u0301 in Ma\u0301laga, \ufb01ne.\nThe cat sat on the mat. The end.\n"
SCREEN = "tokscope.app.screens.insights:InsightsScreen"


def make(text: str = TEXT, encoding: str = "o200k_base") -> ExplorerApp:
    return ExplorerApp(text, tokenizer=load(encoding), palette="truecolor")




async def open_insights(pilot) -> InsightsScreen:
    await idle(pilot)
    pilot.app.open_view("insights")
    await pilot.pause()
    await idle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, InsightsScreen)
    return screen


def static_text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def test_registered_as_a_view():
    assert BY_NAME["insights"].key == "f7" and BY_NAME["insights"].screen.__name__ == "InsightsScreen"


async def test_key_i_in_the_token_view_opens_it():
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        app.token_view.focus()
        await pilot.press("f7")
        await idle(pilot)
        assert isinstance(app.screen, InsightsScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, InsightsScreen)


async def test_figures_match_the_core():
    app = make()
    tok = load("o200k_base")
    expected = stats.text_stats(tok, TEXT)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_insights(pilot)
        assert screen.stats is not None
        got = screen.stats
        assert got.tokens == expected.tokens == len(tok.encode(TEXT))
        assert got.bytes_histogram == expected.bytes_histogram
        assert got.frequencies == expected.frequencies
        assert got.top == expected.top
        summary = static_text(screen, "#ins-summary")
        assert f"{expected.tokens:,} tokens" in summary
        assert f"{expected.coverage.distinct:,} of 200,019" in summary
        chart = screen.query_one("#ins-lengths", BarChart)
        assert chart.bars == stats.capped_bins(expected.bytes_histogram, 16)
        zipf = screen.query_one("#ins-zipf", ScatterPlot)
        assert f"slope {expected.zipf.slope:.2f}" in zipf.title
        assert [p[1] for p in zipf.series[0].points] == list(expected.frequencies)
        digits = static_text(screen, "#ins-digits")
        assert "[123][456][7]" in digits
        assert "left-to-right groups of up to 3" in digits
        top = static_text(screen, "#ins-top")
        assert display.token_label(expected.top[0].bytes) in top  # the one notation


async def test_bytes_chars_toggle():
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_insights(pilot)
        chart = screen.query_one("#ins-lengths", BarChart)
        assert "bytes" in chart.title
        await pilot.press("b")
        await pilot.pause()
        assert "characters" in chart.title
        assert chart.bars == stats.capped_bins(screen.stats.chars_histogram, 16)
        await pilot.press("b")
        assert chart.bars == stats.capped_bins(screen.stats.bytes_histogram, 16)


async def test_toggle_normalisation():
    app = make()
    tok = load("o200k_base")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_insights(pilot)
        assert screen.forms is not None
        counts = static_text(screen, "#ins-norm-counts")
        for form in stats.NORMAL_FORMS:
            n = len(tok.encode(unicodedata.normalize(form, TEXT)))
            assert f"{form}: {n:,} tokens" in counts
        assert f"as typed: {len(tok.encode(TEXT)):,} tokens" in counts
        await pilot.press("n")  # NFC: composes the accents typed decomposed
        await pilot.pause()
        assert screen.form == "NFC"
        assert screen.query_one("#form-NFC", RadioButton).value
        preview = static_text(screen, "#ins-norm-preview")
        assert "NFC changes the text first at character" in preview
        view = screen.forms["NFC"]
        assert view.before != view.after
        assert b"caf" in b"".join(view.before) and "caf\u00e9".encode() in b"".join(view.after)
        assert "\u25cc\u0301" in preview or "é" in preview  # the lone accent, or the composed letter
        await pilot.press("n")  # NFD: the text has composed characters? (á typed decomposed) -> no change
        await pilot.press("n", "n")  # NFKD
        assert screen.form == "NFKD"
        assert "fine" in "".join(b.decode("utf-8", "replace") for b in screen.forms["NFKD"].after)
        await pilot.press("n")
        assert screen.form == "none"


async def test_width_input_sizes_the_embedding():
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_insights(pilot)
        assert "200,019 × 4,096 = 819.3 M" in static_text(screen, "#ins-embed")
        await pilot.press("w")
        width = screen.query_one("#ins-width", Input)
        assert width.has_focus
        width.value = ""
        await pilot.press(*"768")
        await pilot.pause()
        assert "200,019 × 768 = 153.6 M" in static_text(screen, "#ins-embed")
        width.value = ""
        await pilot.pause()
        assert "enter a model width" in static_text(screen, "#ins-embed")


async def test_follows_an_encoding_switch():
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_insights(pilot)
        app.switch_encoding("gpt2")
        await idle(pilot)
        await pilot.pause(0.2)
        await idle(pilot)
        assert screen.stats.encoding == "gpt2"
        assert "irregular" in static_text(screen, "#ins-digits")


async def test_ascii_fallback_without_colour(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_insights(pilot)
        assert app.no_color
        bars = "".join(plot_text(screen.query_one("#ins-lengths", BarChart)))
        dots = "".join(plot_text(screen.query_one("#ins-zipf", ScatterPlot)))
        assert "#" in bars and "*" in dots
        assert not set(bars + dots) & (set(stats.BLOCKS.strip()) | {chr(c) for c in range(0x2801, 0x2900)})


def test_preview_window():
    first, before, after = insights.preview_window("x\ncafe\u0301!", "x\ncaf\u00e9!", "NFC")
    assert first == 5 and before == "cafe\u0301!" and after == "caf\u00e9!"
    long = "a" * 500 + "\u00e9" + "b" * 500
    first, before, after = insights.preview_window(long, unicodedata.normalize("NFD", long), "NFD")
    assert first == 500 and len(before) <= insights.PREVIEW_CHARS and "\u00e9" in before
    assert after == unicodedata.normalize("NFD", before)


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
def test_snapshot(snap_compare, size):
    async def run_before(pilot):
        await open_insights(pilot)

    assert snap_compare(make(), terminal_size=size, run_before=run_before)


def test_snapshot_normalisation(snap_compare):
    async def run_before(pilot):
        await open_insights(pilot)
        await pilot.press("n")
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(make(), terminal_size=(100, 30), run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (60, 16)])
async def test_the_embedding_size_is_never_cut_inside_a_number(size):
    import re

    app = make()
    async with app.run_test(size=size) as pilot:
        screen = await open_insights(pilot)
        screen.query_one("#ins-width", Input).value = "12288"
        await pilot.pause()
        embed = screen.query_one("#ins-embed", Static)
        lines = [strip.text.strip() for strip in embed.render_lines(embed.region.reset_offset)]
        shown = " ".join(line for line in lines if line)
        megabytes = 200_019 * 12_288 * 2 / 1e6
        assert re.search(r"\b2,457\.8 M\b", shown), shown
        # every number shown is whole: the parameter count, and the size in MB or nothing of it
        assert f"{megabytes:,.0f} MB" in shown or "MB" not in shown, shown
        assert "(" not in shown or ")" in shown, shown
