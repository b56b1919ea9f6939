"""The why screen (F3) fits 80x24 and 60x16: no line of it is cut. The title and the cut-off row
wrap rather than run off the edge, the cut-off box's hint is whole, the border titles are whole, no
pane scrolls sideways, and the footer shows whole keys, ``a`` (the whole tree), ``b``/``e`` (the
replay's ends) and ``n``/``p`` among them, for byte-level BPE from ranks and for a merge list.
What is on the screen is read from the rendered frame."""

from __future__ import annotations

import io

import pytest
from rich.cells import cell_len
from rich.console import Console
from textual.widgets import Input, Static
from textual.widgets._footer import FooterKey

from helpers import idle
from test_why_kinds import files, path_of  # noqa: F401  (fixture: the tokenizer.json files)
from test_why_kinds import open_why as open_why_of

from tokscope.app.app import ExplorerApp
from tokscope.app.screens.why import WhyScreen
from tokscope.core.explain.sentences import NO_CUTOFF

SIZES = [(80, 24), (60, 16)]


def encoding_of(files, name: str) -> str:
    return name if name == "gpt2" else path_of(files, name)


def screen_rows(app) -> list[str]:
    """The frame as the terminal shows it, one string a row."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text(styles=False).splitlines()


def crop(row: str, start: int, end: int) -> str:
    """The cells ``start`` to ``end`` of a row (a wide character belongs to its first cell)."""
    out, x = [], 0
    for ch in row:
        if start <= x < end:
            out.append(ch)
        x += cell_len(ch)
    return "".join(out)


def widget_text(rows: list[str], region) -> str:
    """What a widget shows, its rows joined by a space, runs of spaces as one."""
    lines = [crop(rows[y], region.x, region.right) for y in range(region.y, region.bottom)]
    return " ".join(" ".join(lines).split())


def cut_lines(app, screen: WhyScreen) -> list[str]:
    """Each line of the why screen that is not drawn whole."""
    width, _ = app.size
    rows = screen_rows(app)
    cut = []
    for static in screen.query(Static):
        if static.id in ("why-title", "why-cut-label") and static.display:
            want = " ".join(str(static.render()).split())
            got = widget_text(rows, static.content_region)
            if got != want:
                cut.append(f"{static.id}: {got!r} is not {want!r}")
    box = screen.query_one("#why-cutoff", Input)
    if box.display and not box.value:
        got = widget_text(rows, box.content_region)
        if got != box.placeholder:
            cut.append(f"cut-off box: {got!r} is not {box.placeholder!r}")
    for widget_id in ("why-tree", "why-scroll"):
        widget = screen.query_one(f"#{widget_id}")
        top = crop(rows[widget.region.y], widget.region.x, widget.region.right)
        for title in (widget.border_title, widget.border_subtitle):
            if title and str(title) not in top + crop(rows[widget.region.bottom - 1], widget.region.x,
                                                      widget.region.right):
                cut.append(f"{widget_id}: border title {title!r} in {top!r}")
        if widget.max_scroll_x:
            cut.append(f"{widget_id}: scrolls sideways by {widget.max_scroll_x}")
    for key in screen.query(FooterKey):
        if key.display:
            label = f"{key.key_display} {key.description}"
            if key.region.right > width or label not in widget_text(rows, key.region):
                cut.append(f"footer key {label!r}")
    return cut


async def open_why(pilot) -> WhyScreen:
    """The why screen of the first piece of the text."""
    await idle(pilot)
    return await open_why_of(pilot, pilot.app.doc.ids[0])


def footer_keys(screen: WhyScreen) -> set[str]:
    return {str(k.key_display) for k in screen.query(FooterKey) if k.display}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["gpt2", "llama2", "bert"])
async def test_no_line_of_the_why_screen_is_cut(files, name, size):
    app = ExplorerApp("Hello tokenizers, unbelievable 🦜!", encoding=encoding_of(files, name), palette="truecolor")
    async with app.run_test(size=size) as pilot:
        screen = await open_why(pilot)
        merges = name != "bert"
        views = [("opened", None), ("stepped", ("n", "n")), ("at the end", ("e",))] if merges else [("opened", None)]
        for what, keys in views:
            if keys:
                await pilot.press(*keys)
                await idle(pilot)
            assert screen.why is not None
            assert not cut_lines(app, screen), (what, cut_lines(app, screen), screen_rows(app))
            keys_shown = footer_keys(screen)
            assert "esc" in keys_shown
            if merges:
                assert {"a", "b/e", "n/p"} <= keys_shown, keys_shown
        if name != "gpt2":
            assert str(screen.query_one("#why-cut-label", Static).render()) == NO_CUTOFF
        else:
            await pilot.press("c", "3", "0", "0", "enter")  # a value in the box, and the pane says it
            await idle(pilot)
            assert screen.max_rank == 300 and not cut_lines(app, screen)


@pytest.mark.parametrize("size", SIZES)
async def test_a_b_and_e_work_from_the_footer_wherever_the_focus_is(size):
    app = ExplorerApp("Hello tokenizers", encoding="gpt2", palette="truecolor")
    async with app.run_test(size=size) as pilot:
        screen = await open_why(pilot)
        screen.query_one("#why-scroll").focus()  # away from the tree: its keys are the screen's
        await pilot.pause()
        assert {"a", "b/e"} <= footer_keys(screen)
        await pilot.press("e")
        assert screen.position == screen.total_steps() > 0
        await pilot.press("b")
        assert screen.position == 0
        await pilot.press("a")
        await pilot.pause()
        tree = screen.query_one("#why-tree")

        def nodes(n):
            return [n] + [x for c in n.children for x in nodes(c)]

        assert all(n.is_expanded or not n.allow_expand for n in nodes(tree.root)) and len(nodes(tree.root)) > 3
