"""The worked examples in the explorer's helper docstrings run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tokscope.app.render", "tokscope.app.features", "tokscope.app.clipboard",
    "tokscope.app.main", "tokscope.app.widgets.inspector",
    "tokscope.app.widgets.editor",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
