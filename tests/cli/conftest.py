"""Helpers for the command-line tests that run ``python -m tokscope.cli`` in a real child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def child_cache(tmp_path_factory):
    """One rank cache for every child process of the session (the first one builds it)."""
    return tmp_path_factory.mktemp("child-cache")


@pytest.fixture
def cli_env(child_cache, tmp_path):
    env = dict(os.environ)
    env["TOKSCOPE_CACHE_DIR"] = str(child_cache)
    env["TOKSCOPE_DATA_DIR"] = str(tmp_path / "data")
    env.pop("TOKSCOPE_DEBUG", None)
    return env


@pytest.fixture
def tokscope(cli_env):
    """Run ``tokscope ARGS`` in a child process from the worktree; returns the CompletedProcess
    (``stdout``/``stderr`` as bytes unless ``text=True``)."""

    def run(*args, **kw):
        kw.setdefault("capture_output", "stdout" not in kw and "stderr" not in kw)
        kw.setdefault("env", cli_env)
        kw.setdefault("cwd", ROOT)
        kw.setdefault("timeout", 120)
        return subprocess.run([sys.executable, "-m", "tokscope.cli", *args], **kw)

    return run
