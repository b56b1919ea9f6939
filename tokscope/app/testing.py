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
