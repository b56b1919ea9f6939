"""Helpers for tests that drive the explorer with Textual's Pilot (used by tests of every screen)."""

from __future__ import annotations

import asyncio


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
