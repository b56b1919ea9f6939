"""Shared fixtures: encodings are loaded once per session (they are cached by the registry)."""

from __future__ import annotations

import pytest

from tokscope.sources import registry

OPENAI = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]


@pytest.fixture(scope="session")
def load():
    return registry.load
