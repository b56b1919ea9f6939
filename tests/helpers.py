"""Helpers shared by the test modules (importable as ``helpers``: pytest puts ``tests/`` on the path)."""

from __future__ import annotations

import asyncio

from hypothesis import strategies as st

from tokscope.core import blocks
from tokscope.core.document import Document

ALPHABET = st.sampled_from(list("ab AB12 \n\t.,'é👍你\u0301-") + ["  ", "\n\n", "'s", "123456", "<|endoftext|>"])
texts = st.lists(ALPHABET, max_size=40).map("".join)


class small_blocks:
    """Within the block, docs are cut into blocks of ``size`` rows (so edits cross block bounds)."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __enter__(self):
        self.saved = blocks.BLOCK
        blocks.BLOCK = self.size

    def __exit__(self, *exc):
        blocks.BLOCK = self.saved


def flat(doc: Document) -> dict:
    return {name: list(getattr(doc, name)) for name in ("ids", "starts", "ends", "flags", "chunk_starts", "chunk_ends")}


#: characters the pattern's two Unicode versions disagree on (so the pinned pattern is used)
SUSPECTS = [chr(661), chr(2191), chr(8349)]
BLOCK_TEXTS = st.lists(st.sampled_from(list("ab AB12 \n\t.,'é👍你\u0301-") + ["  ", "\n\n", "'s", "123456"] + SUSPECTS),
                       max_size=60).map("".join)


# ----- the explorer under Textual's Pilot (tests of every screen) --------------------------------


async def settle(pilot, timeout: float = 10.0) -> None:
    """Wait until the app has loaded its encoding and its pieces match the input pane's text.

    ``async with app.run_test() as pilot: await settle(pilot)``
    """
    app = pilot.app
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.02)
        if app.idle:
            await pilot.pause()
            return
    raise AssertionError(f"explorer did not settle: loading={app._loading} current={app._doc_current}")


async def idle(pilot, timeout: float = 20.0) -> None:
    """Wait until no worker runs (on any screen) and the explorer has caught up with its text.

    Screens that compute in workers (insights, training, merge tree, vocabulary) use this after a
    key press: ``await pilot.press("enter"); await idle(pilot)``.
    """
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.05)
        if not any(w.is_running for w in pilot.app.workers) and getattr(pilot.app, "idle", True):
            await pilot.pause(0.05)
            return
    raise AssertionError("workers did not finish")


def plot_text(plot) -> list[str]:
    """A plot widget's rows as plain text."""
    width, height = plot.size.width, plot.size.height
    return ["".join(t for t, _ in row) for row in plot.build(width, height)]
