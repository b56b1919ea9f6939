"""The comparison screen's ``d``: ``tokscope diff``'s verdict for two panes in the note line,
computed in a worker (the screen keeps answering while it runs), driven with Pilot at 80x24."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from textual.widgets import Input, Static

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

import hf_files  # noqa: E402
from helpers import settle  # noqa: E402

from tokscope.app.app import ExplorerApp  # noqa: E402
from tokscope.app.screens.compare import CompareScreen  # noqa: E402
from tokscope.core.insights.diff import split  # noqa: E402
from tokscope.core.text.display import token_label  # noqa: E402

TEXT = "Hello world, the café costs 1234 dollars. 😀\n"


async def open_screen(pilot, names: list[str]) -> CompareScreen:
    await settle(pilot)
    pilot.app.push_screen(CompareScreen(names))
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    while loop.time() < end and not all(s.tokenizer is not None and s.gen == screen.gen for s in screen.slots):
        await pilot.pause(0.02)
    return screen


async def wait_diff(pilot, screen: CompareScreen, timeout: float = 30.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.05)
        if screen.diff_result is not None:
            await pilot.pause()
            return screen.diff_result
    raise AssertionError("diff did not finish")


def note(screen: CompareScreen) -> str:
    return str(screen.query_one("#cmp-note", Static).render())


async def test_d_shows_the_verdict_and_the_shortest_text(load):
    app = ExplorerApp(TEXT, encoding="gpt2", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot, ["gpt2", "cl100k_base"])
        await pilot.press("d")
        result = await wait_diff(pilot, screen)
        assert result.verdict == "differ" and result.a_name == "gpt2" and result.b_name == "cl100k_base"
        found = result.search.difference
        shown = note(screen)
        assert shown.startswith("diff 1 vs 2: differ")
        # the shortest text and both splits, as the CLI shows them
        a = "│".join(token_label(p.bytes) for p in split(load("gpt2"), found.text))
        assert a in shown


async def test_d_compares_pane_1_with_the_focused_pane(load):
    app = ExplorerApp(TEXT, encoding="gpt2", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot, ["gpt2", "cl100k_base", "o200k_base"])
        screen.query_one(f"#view-{screen.slots[2].key}").focus()
        await pilot.press("d")
        result = await wait_diff(pilot, screen)
        assert (result.a_name, result.b_name) == ("gpt2", "o200k_base")
        assert note(screen).startswith("diff 1 vs 3: differ")


def gpt2_json(ranks: dict[bytes, int]) -> str:
    """A tokenizer.json converted from GPT-2's ranks as ``transformers`` converts tiktoken files."""
    import tokenizers
    from tokenizers import AddedToken, decoders, models, pre_tokenizers

    vocab, merges = hf_files.tiktoken_to_hf(ranks)
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    return tok.to_str()


async def test_d_between_two_copies_says_same(tmp_path, load):
    # one tokenizer.json under two paths: the panes agree, and so does the diff
    text = gpt2_json({data: rank for data, rank in load("gpt2").ranks.items() if rank < 2000})
    paths = []
    for name in ("one", "two"):
        path = tmp_path / f"{name}.json"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    app = ExplorerApp(TEXT, encoding="gpt2", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot, paths)
        await pilot.press("d")
        # finding nothing, the search takes its whole budget, in a worker: the screen still answers
        assert note(screen).startswith("diff 1 vs 2: searching")
        side = screen.side_by_side
        await pilot.press("l")
        assert screen.side_by_side != side
        result = await wait_diff(pilot, screen)
        assert result.verdict == "same"
        assert note(screen).startswith("diff 1 vs 2: same · no text splits differently")


async def test_d_typed_into_a_price_is_text(load):
    app = ExplorerApp(TEXT, encoding="gpt2", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot, ["gpt2", "cl100k_base"])
        await pilot.press("p", "d")
        await pilot.pause(0.2)
        assert screen.diff_result is None and "searching" not in note(screen)
        assert screen.query_one("#cmp-price-in", Input).value.endswith("d")


async def test_d_with_one_pane_asks_for_two(load):
    app = ExplorerApp(TEXT, encoding="gpt2", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_screen(pilot, ["gpt2"])
        await pilot.press("d")
        await pilot.pause(0.2)
        assert screen.diff_result is None and "searching" not in note(screen)
