"""A toy model kind and a toy file format, each one module plus one table entry, and everything
that takes ``-e`` works with them: the sources, the CLI's ``encode`` and ``explain``. The kind is
``test_toy_kind.py``'s (a line of ``MODEL_READERS`` lets a ``tokenizer.json`` name it); the format
is ``toy_format.py`` (a row of the sniffing table). The explorer, inspector, why and compare are in
``tests/app/test_toy_kind_app.py``."""

from __future__ import annotations

import json

import pytest
import toy_format
from test_toy_kind import PerCharacter, toy

from tokscope.cli import main
from tokscope.core.formats import sniff, tokenizer_json_models
from tokscope.sources import model_files, registry

TEXT = "Hi café!"


@pytest.fixture()
def toy_file(tmp_path, monkeypatch):
    """The toy format's row in the table, and a file of it."""
    monkeypatch.setattr(sniff, "FORMATS", (*sniff.FORMATS, toy_format.ROW))
    path = tmp_path / "tokenizer.toy"
    path.write_bytes(toy_format.dump())
    yield path
    registry.forget()


@pytest.fixture()
def toy_json(tmp_path, monkeypatch):
    """The toy kind's line in the model table, and a tokenizer.json naming it."""
    monkeypatch.setitem(tokenizer_json_models.MODEL_READERS, "PerCharacter", lambda obj: PerCharacter())
    path = tmp_path / "toy.json"
    path.write_text(json.dumps({"version": "1.0", "model": {"type": "PerCharacter"}}))
    yield path
    registry.forget()


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_format_is_sniffed_and_read(toy_file):
    assert sniff.sniff(toy_format.dump()[: sniff.HEAD_BYTES]) == "toy"
    tok = model_files.load_path(toy_file)
    assert tok.kind == "per-character" and tok.encode(TEXT) == toy().encode(TEXT)
    assert model_files.describe(tok).path == toy_file  # what the file says, kept with the tokenizer
    bad = toy_file.with_name("bad.toy")
    bad.write_bytes(toy_format.MAGIC + b"xyz\n")
    with pytest.raises(Exception, match="not the toy alphabet"):
        model_files.load_path(bad)


def test_without_its_row_the_format_is_refused(tmp_path):
    path = tmp_path / "tokenizer.toy"
    path.write_bytes(toy_format.dump())
    with pytest.raises(Exception, match="not a tokenizer file tokscope can read"):
        model_files.load_path(path)


def test_encode_and_explain_with_e_file(toy_file, capsys):
    code, out, _ = run(capsys, "encode", "-e", str(toy_file), TEXT)
    assert code == 0 and out.split() == [str(i) for i in toy().encode(TEXT)]
    code, out, _ = run(capsys, "explain", "-e", str(toy_file), TEXT, "--no-variants")
    assert code == 0 and "(per-character)" in out.splitlines()[0]
    assert "the model (per-character) cut 'HI' into" in out  # the form the model saw: upper case
    code, out, _ = run(capsys, "explain", "-e", str(toy_file), "--token", "1", "--json")
    assert code == 0 and json.loads(out)["kind"] == "per-character"


def test_a_tokenizer_json_names_the_toy_kind(toy_json, capsys):
    want = [t for t, _, _ in PerCharacter().tokenize("HI")]
    tok = registry.load(str(toy_json))
    assert isinstance(tok.model, PerCharacter) and tok.encode("HI") == want
    code, out, _ = run(capsys, "encode", "-e", str(toy_json), "HI")
    assert code == 0 and out.split() == [str(t) for t in want]
