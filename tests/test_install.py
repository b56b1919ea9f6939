"""How tokscope installs: the distribution's own name, the console script, an isolated install.

The distribution is ``tokscope-tui`` (``tokscope`` on the package index is another project); the
import package and the command stay ``tokscope``. The isolated-install test builds a virtual
environment and installs the checkout into it, so it is opt-in: ``TOKSCOPE_SLOW=1``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def test_the_distribution_has_a_name_of_its_own():
    name = _project()["name"]
    assert name == "tokscope-tui"  # not "tokscope": that name on the package index is another project
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install tokscope` installs a different project" in readme


def test_saved_files_record_the_version_of_this_distribution(monkeypatch):
    import importlib.metadata

    from tokscope.core.formats import saved

    versions = {_project()["name"]: "9.8.7", "tokscope": "0.2.0"}  # the other project, if installed

    def version(name):
        if name not in versions:
            raise importlib.metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(importlib.metadata, "version", version)
    document = saved.to_document(saved.SavedTokenizer("t", r"\S+", ((b"a", b"b"),)))
    assert document["metadata"]["tokscope_version"] == "9.8.7"
