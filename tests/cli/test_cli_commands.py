"""The command table: one module per subcommand, named after it, imported only when it runs."""

from __future__ import annotations

import argparse
import subprocess
import sys

from tokscope.cli import COMMANDS, build_parser


def test_each_command_lives_in_a_module_named_after_it():
    for name, load in COMMANDS.items():
        module = load()
        assert module.__name__ in (f"tokscope.commands.{name}", f"tokscope.commands.{name}_"), name  # import_
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        module.register(sub)
        assert list(sub.choices) == [name], (module.__name__, list(sub.choices))


def test_help_lists_every_command_in_the_tables_order():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    assert list(sub.choices) == list(COMMANDS)


def _modules_after(argv: list[str]) -> list[str]:
    code = (
        "import sys\n"
        "from tokscope.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('tokscope'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split("\n")[-2].split()


def test_version_and_one_command_import_only_what_they_need():
    loaded = _modules_after(["--version"])
    assert [m for m in loaded if m.startswith("tokscope.commands.")] == ["tokscope.commands.common"]
    assert "tokscope.core.tokenizer.tokenizer" not in loaded and "tokscope.sources.registry" not in loaded
    loaded = _modules_after(["decode", "--help"])
    commands = {m for m in loaded if m.startswith("tokscope.commands.")}
    assert commands == {"tokscope.commands.common", "tokscope.commands.decode"}, commands


def test_python_dash_m_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "tokscope", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("tokscope ")
