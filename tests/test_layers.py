"""The layers hold: app/cli -> sources -> core, no cycles, tiktoken behind one adapter.

Three checks, each of which catches what the others cannot:

* ``lint-imports`` with the contracts in ``pyproject.toml`` reads every import statement,
  function-level ones included (a ``from ..sources import registry`` planted in the core breaks it);
* a scan of the source for dynamic imports (``importlib.import_module("tiktoken")``, ``__import__``),
  which no static checker sees;
* a fresh interpreter imports each layer's entry points and shows which modules got loaded.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tokscope"


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    return subprocess.run([exe, "--no-cache"], cwd=cwd, capture_output=True, text=True)


def test_import_contracts_hold():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "broken" not in done.stdout.lower().replace("0 broken", "")


@pytest.mark.parametrize(
    ("module", "planted", "contract"),
    [
        ("core/models/ranks.py", "from ...sources import registry  # planted\n", "cli over app and commands"),
        ("core/models/ranks.py", "def _planted():\n    from ...app import app  # planted\n", "cli over app and commands"),
        ("core/insights/stats.py", "import tiktoken  # planted\n", "the core imports no UI"),
        ("sources/names.py", "import textual  # planted\n", "import no Textual"),
        ("app/render.py", "from ..cli import main  # planted\n", "cli over app and commands"),
        ("core/tokenizer/tokenizer.py", "def _planted():\n    from .. import document  # planted\n", "in pipeline order"),
        ("core/models/bpe.py", "def _planted():\n    from ..tokenizer import tokenizer  # planted\n", "in pipeline order"),
        ("core/text/types.py", "def _planted():\n    from ..models import ranks  # planted\n", "in pipeline order"),
        ("core/models/bpe.py", "def _planted():\n    from .unigram import Unigram  # planted\n", "no import cycles"),
    ],
)
def test_the_contracts_catch_a_planted_import(tmp_path, module, planted, contract):
    """Each contract really fails when the import it forbids is added (in a copy of the package)."""
    shutil.copytree(PACKAGE, tmp_path / "tokscope", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "tokscope" / module
    target.write_text(target.read_text() + "\n" + planted)
    done = lint_imports(tmp_path)
    assert done.returncode != 0
    broken = done.stdout[done.stdout.find("Broken contracts"):]
    assert contract in broken


# ----- dynamic imports ---------------------------------------------------------------------------


def dynamic_imports(source: str) -> list[str]:
    """The targets of ``importlib.import_module(...)`` and ``__import__(...)`` calls in ``source``
    (``?`` for a target that is not a string literal).

    >>> dynamic_imports("import importlib\\nimportlib.import_module('tiktoken')\\n__import__(name)")
    ['tiktoken', '?']
    """
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("import_module", "__import__"):
            arg = node.args[0] if node.args else None
            out.append(arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else "?")
    return out


def test_the_scan_finds_dynamic_imports():
    assert dynamic_imports("from importlib import import_module\nimport_module('tiktoken')") == ["tiktoken"]
    assert dynamic_imports("import importlib\nx = importlib.import_module(f'tokscope.{n}')") == ["?"]


def test_no_dynamic_imports():
    """In-tree modules are imported statically (so the contracts see them), and tiktoken only by
    the adapter's plain import."""
    found = {
        str(path.relative_to(PACKAGE)): targets
        for path in sorted(PACKAGE.rglob("*.py"))
        if (targets := dynamic_imports(path.read_text(encoding="utf-8")))
    }
    assert found == {}


# ----- what each layer's entry points load --------------------------------------------------------

LOADED = """
import importlib, pkgutil, sys
for name in {modules!r}:
    module = importlib.import_module(name)
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(module.__path__, name + "."):
            importlib.import_module(info.name)
print(" ".join(sorted({{m.split(".")[0] if not m.startswith("tokscope.") else ".".join(m.split(".")[:2]) for m in sys.modules}})))
"""


def loaded_by(*modules: str) -> set[str]:
    code = LOADED.format(modules=list(modules))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(done.stdout.split())


def test_the_core_loads_nothing_above_it():
    loaded = loaded_by("tokscope.core")
    assert not loaded & {"textual", "rich", "tiktoken", "tiktoken_ext", "pyperclip"}
    assert not loaded & {"tokscope.sources", "tokscope.app", "tokscope.commands", "tokscope.cli"}


def test_the_sources_load_only_the_core():
    loaded = loaded_by("tokscope.sources")
    assert not loaded & {"textual", "rich", "pyperclip"}
    assert not loaded & {"tokscope.app", "tokscope.commands", "tokscope.cli"}


@pytest.mark.parametrize("command", sorted(p.stem for p in (PACKAGE / "commands").glob("*.py") if p.stem != "__init__"))
def test_a_command_loads_no_textual(command):
    loaded = loaded_by(f"tokscope.commands.{command}")
    assert "textual" not in loaded and "tokscope.app" not in loaded
