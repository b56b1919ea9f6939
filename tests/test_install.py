"""How tokscope installs: the distribution's own name, the console script, an isolated install.

The distribution is ``tokscope-tui`` (``tokscope`` on the package index is another project); the
import package and the command stay ``tokscope``. The isolated-install test builds a virtual
environment and installs the checkout into it, so it is opt-in: ``TOKSCOPE_SLOW=1``.
"""

from __future__ import annotations

import os
import shutil
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
    """Saved files record tokscope's own version (tokscope/version.py), the one this distribution
    is built with, never another installed project's of a similar name."""
    import importlib.metadata

    from tokscope.core.formats import saved
    from tokscope.version import __version__

    def version(name):  # another project named tokscope, installed beside this one
        if name == "tokscope":
            return "0.2.0"
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    document = saved.to_document(saved.SavedTokenizer("t", r"\S+", ((b"a", b"b"),)))
    assert document["metadata"]["tokscope_version"] == __version__
    assert 'dynamic = ["version"]' in (ROOT / "pyproject.toml").read_text() and _project()["name"] == "tokscope-tui"


def test_the_console_script_is_tokscope_and_resolves():
    import importlib

    scripts = _project()["scripts"]
    assert list(scripts) == ["tokscope"]
    module, _, attribute = scripts["tokscope"].partition(":")
    assert callable(getattr(importlib.import_module(module), attribute))


def test_every_package_folder_is_listed_so_a_non_editable_install_is_whole():
    with open(ROOT / "pyproject.toml", "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    found = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "tokscope").rglob("__init__.py")
        if "__pycache__" not in path.parts
    }
    assert found - listed == set()


@pytest.mark.skipif(os.environ.get("TOKSCOPE_SLOW") != "1", reason="builds a virtual environment: TOKSCOPE_SLOW=1")
def test_the_command_works_from_an_isolated_install(tmp_path):
    """As ``pipx install .`` and ``uv tool install .`` do: a fresh environment of its own, the
    checkout installed into it (not editable), the command run from elsewhere."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(ROOT)], check=True, cwd=tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}

    def tokscope(*args: str) -> str:
        done = subprocess.run([str(bin_dir / "tokscope"), *args], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    from tokscope.version import __version__

    assert tokscope("--version").split() == ["tokscope", __version__]
    assert tokscope("encode", "-e", "cl100k_base", "hello").split() == ["15339"]
    where = subprocess.run([str(bin_dir / "python"), "-c", "import tokscope; print(tokscope.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, check=True).stdout
    assert Path(where.strip()).is_relative_to(venv)  # the installed copy, not the checkout
    if shutil.which("cc") or shutil.which("gcc"):  # a compiler at install: the compiled merge loop and split too
        check = ("from tokscope.core.models import ranks; from tokscope.core.pre_tokenizers import compiled_split; "
                 "print(ranks.compiled_available(), compiled_split.compiled_available())")
        compiled = subprocess.run([str(bin_dir / "python"), "-c", check], capture_output=True, text=True,
                                  cwd=tmp_path, env=env, check=True).stdout
        assert compiled.split() == ["True", "True"]
