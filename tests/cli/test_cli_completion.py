"""``tokscope completion SHELL``: scripts for bash, zsh and fish, generated from the parser.

Each script is checked for every subcommand; bash's is also run (its completion function called
as bash calls it) against a ``tokscope`` on PATH that runs this checkout, so the encoding names
come from the real registry: built-in encodings, a tokenizer saved by ``train --save`` and a
model in a hub cache. zsh and fish check the syntax when they are installed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tokscope import cli
from tokscope.commands import completion

SHELLS = ("bash", "zsh", "fish")
COMMIT = "0" * 40


def subcommands() -> list[str]:
    return list(cli.COMMANDS)


@pytest.fixture
def world(tmp_path, cli_env, tokscope):
    """A saved tokenizer named ``mytok``, a hub cache holding ``acme/tiny-model``, and a
    ``tokscope`` command on PATH that runs this checkout with that environment."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest newer newest " * 20, encoding="utf-8")
    done = tokscope("train", str(corpus), "--merges", "5", "--name", "mytok", "--save")
    assert done.returncode == 0, done.stderr
    snap = tmp_path / "hub" / "models--acme--tiny-model" / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    (snap.parents[1] / "refs").mkdir()
    (snap.parents[1] / "refs" / "main").write_text(COMMIT)
    (snap / "tokenizer.json").write_text("{}", encoding="utf-8")
    cli_env["HF_HUB_CACHE"] = str(tmp_path / "hub")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tokscope").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tokscope.cli "$@"\n')
    (bin_dir / "tokscope").chmod(0o755)
    cli_env["PATH"] = f"{bin_dir}:{cli_env.get('PATH', '')}"
    return cli_env


@pytest.mark.parametrize("shell", SHELLS)
def test_each_script_has_every_subcommand_and_its_options(shell, tokscope):
    done = tokscope("completion", shell, text=True)
    assert done.returncode == 0, done.stderr
    script = done.stdout
    for name in subcommands():
        assert name in script, name
    for option in ("--recursive", "--max-tokens", "--allow-special", "--encoding", "--errors"):
        assert option.removeprefix("--") in script
    assert "completion --encodings" in script  # the names are asked at Tab time, not frozen in
    program = shutil.which(shell)
    if program is not None:
        flag = ["-n"] if shell != "fish" else ["--no-execute"]
        checked = subprocess.run([program, *flag], input=script, text=True, capture_output=True)
        assert checked.returncode == 0, checked.stderr


def test_encoding_names_include_saved_tokenizers_hub_models_and_aliases(world, tokscope):
    done = tokscope("completion", "--encodings", text=True)
    assert done.returncode == 0, done.stderr
    names = done.stdout.split("\n")
    for name in ("o200k_base", "cl100k_base", "cl100k", "llama3", "mytok", "acme/tiny-model"):
        assert name in names, name


def complete_in_bash(env, script: str, *words: str) -> list[str]:
    """What ``_tokscope`` offers for the command line ``words`` (the last is being typed)."""
    driver = script + (
        'COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _tokscope\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "-c", driver, "bash", *words], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.split("\n") if w]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_options_choices_and_encodings(world, tokscope):
    script = tokscope("completion", "bash", text=True).stdout
    assert complete_in_bash(world, script, "tokscope", "en") == ["encodings", "encode"]
    assert "--recursive" in complete_in_bash(world, script, "tokscope", "count", "--r")
    assert complete_in_bash(world, script, "tokscope", "encode", "--errors", "") == ["strict", "replace"]
    assert complete_in_bash(world, script, "tokscope", "count", "-e", "my") == ["mytok"]
    assert complete_in_bash(world, script, "tokscope", "compare", "-e", "gpt2", "-e", "acme/") == ["acme/tiny-model"]
    assert complete_in_bash(world, script, "tokscope", "-e", "cl100") == ["cl100k_base", "cl100k"]
    assert complete_in_bash(world, script, "tokscope", "count", "notes.txt") == []  # bash's default: file names


def test_without_a_shell_it_is_a_usage_error(tokscope):
    done = tokscope("completion")
    assert done.returncode == 2 and b"name a shell" in done.stderr


def test_the_explorer_options_it_offers_are_the_explorer_parsers():
    parser_flags = {flag for action in cli.explorer_parser()._actions for flag in action.option_strings}
    offered = {flag for option in completion.EXPLORER_OPTIONS for flag in option.flags}
    assert offered == parser_flags | {"--version"}
