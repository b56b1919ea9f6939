"""What the command line says before anything starts (issue 20, item 22): ``-e FILE`` that cannot be
loaded exits as an unknown name does, every command's argument errors start ``tokscope: error:``,
and a tokenizer in a folder named like ``models`` is not called ``models``."""

from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from tokscope import cli
from tokscope.app.app import ExplorerApp
from tokscope.sources import registry


@pytest.fixture
def no_explorer(monkeypatch):
    """The explorer's run, recorded instead of taking the terminal."""
    started: list[str] = []
    monkeypatch.setattr(ExplorerApp, "run", lambda self, *a, **k: started.append(self.encoding_name))
    return started


@pytest.mark.parametrize("content", [b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [', b"\x00\x01 not json"])
def test_a_named_file_that_cannot_be_loaded_exits_before_the_explorer(tmp_path, capsys, no_explorer, content):
    broken = tmp_path / "broken.json"
    broken.write_bytes(content)
    text = tmp_path / "t.txt"
    text.write_text("hello\n")
    code = cli.main(["-e", str(broken), str(text)])
    err = capsys.readouterr().err
    assert code == 1 and no_explorer == []
    assert err.startswith("tokscope: error: ") and err.count("\n") == 1 and "broken.json" in err
    # as an unknown name does
    assert cli.main(["-e", "no-such-encoding-anywhere", str(text)]) == 1 and no_explorer == []
    assert capsys.readouterr().err.startswith("tokscope: error: unknown encoding")


@pytest.mark.parametrize("argv", [["train"], ["train", "--vocab-size", "x", "f.txt"], ["encode", "-e"],
                                  ["count", "--top"], ["encode", "--no-such-option", "x"]])
def test_every_commands_argument_errors_start_alike(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("tokscope: error: ") and f"tokscope {argv[0]}:" not in err


@pytest.fixture(scope="module")
def tokenizer_json():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel()
    tok.train_from_iterator(["hello world " * 20, "the quick brown fox"],
                            trainers.BpeTrainer(vocab_size=280, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok.to_str()


def test_a_tokenizer_in_a_folder_is_named_by_the_model_not_a_generic_parent(tmp_path, tokenizer_json):
    def named(folder, config=None):
        folder.mkdir(parents=True)
        (folder / "tokenizer.json").write_text(tokenizer_json)
        if config is not None:
            (folder / "tokenizer_config.json").write_text(json.dumps(config))
        return registry.load(str(folder / "tokenizer.json")).name, registry.load(str(folder)).name

    assert named(tmp_path / "a" / "models") == ("models/tokenizer.json",) * 2
    assert named(tmp_path / "b" / "models", {"name_or_path": "acme/tiny-bpe"}) == ("acme/tiny-bpe",) * 2
    assert named(tmp_path / "c" / "models--acme--tiny" / "snapshots" / ("0123abcd" * 5)) == ("acme/tiny",) * 2
    assert named(tmp_path / "d" / "my-bpe") == ("my-bpe",) * 2
