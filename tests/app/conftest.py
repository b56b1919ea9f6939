"""Helpers for explorer tests: build the app, wait until tokenizing has settled."""

from __future__ import annotations

import pytest

from tokscope.app.app import ExplorerApp


@pytest.fixture
def make_app():
    def make(text: str = "Hello world", **kwargs) -> ExplorerApp:
        kwargs.setdefault("encoding", "o200k_base")
        kwargs.setdefault("palette", "truecolor")
        return ExplorerApp(text, **kwargs)

    return make


@pytest.fixture
def notes(monkeypatch):
    """Record every notification the app shows: list of (message, severity)."""
    seen: list[tuple[str, str]] = []
    original = ExplorerApp.notify

    def notify(self, message, *args, severity="information", **kwargs):
        seen.append((str(message), severity))
        return original(self, message, *args, severity=severity, **kwargs)

    monkeypatch.setattr(ExplorerApp, "notify", notify)
    return seen
