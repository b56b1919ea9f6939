"""``tokscope compare`` on a big text drops each tokenizer from the process once its summary is made
(its caches hold the ids of every line of the text), and prints the same as when it keeps them."""

from __future__ import annotations

import pytest

from tokscope.cli import main
from tokscope.commands import compare as compare_command
from tokscope.sources import registry

TEXT = "Tokens 👩\u200d👩\u200d👧 and 🇫🇷, 日本語, cafe\u0301.\n" * 20


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("options", [[], ["--json"], ["--cuts", "--price-in", "3"]])
def test_a_big_text_releases_each_tokenizer_and_prints_the_same(capsys, monkeypatch, options):
    argv = ["compare", "-e", "o200k", "-e", "no-such-encoding", "-e", "gpt2", TEXT, *options]
    forgotten: list[str] = []
    monkeypatch.setattr(registry, "forget", forgotten.append)  # the real one would unload the session's
    kept = run(capsys, *argv)
    assert forgotten == []  # a small text: the tokenizers stay loaded
    monkeypatch.setattr(compare_command, "RELEASE_CHARS", len(TEXT))
    released = run(capsys, *argv)
    assert released == kept and kept[0] == 1 and "no-such-encoding" in kept[2]
    assert forgotten == ["o200k", "gpt2"]  # each loaded name, once, in order; not the one that failed
