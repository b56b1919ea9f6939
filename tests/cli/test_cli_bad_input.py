"""Bad input a user can type or a hostile file can hold gets a one-line error that says what is
wrong, with the right exit code, never "internal error ... please report it" (issue 21, items 16-21)."""

from __future__ import annotations

import json

import pytest

NINES_5000 = "9" * 5000
NINES_4000 = "9" * 4000


def _one_line_error(result, code: int, *words: str) -> str:
    err = result.stderr.decode() if isinstance(result.stderr, bytes) else result.stderr
    assert result.returncode == code, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return err


# ----- item 16: huge numbers and deeply nested templates ------------------------------------------


def test_decode_of_an_id_with_5000_digits_is_an_unknown_id(tokscope):
    err = _one_line_error(tokscope("decode", NINES_5000), 1, "unknown token id", "5,000 digits")
    assert len(err) < 200  # the digits are not spelled out


def test_train_sweep_of_a_size_with_5000_digits_is_too_large(tokscope, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 10)
    _one_line_error(tokscope("train", "--vocab-size", "300", "--sweep", NINES_5000, str(corpus)), 2,
                    "--sweep", "too large")
    _one_line_error(tokscope("train", "--vocab-size", NINES_5000, str(corpus)), 2, "--vocab-size", "too large")


@pytest.mark.parametrize("option", ["--width", "--top"])
def test_stats_with_a_number_of_4000_digits_says_which_option(tokscope, option):
    err = _one_line_error(tokscope("stats", option, NINES_4000, "hello"), 2, option, "4,000 digits")
    assert len(err) < 200


@pytest.mark.parametrize("template", [
    "{% for a in messages %}" * 25 + "x" + "{% endfor %}" * 25,
    "{% if messages %}" * 200 + "x" + "{% endif %}" * 200,
], ids=["25 for", "200 if"])
def test_a_chat_template_nested_too_deeply_is_named(tokscope, tmp_path, template):
    conversation = tmp_path / "conv.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    jinja = tmp_path / "deep.jinja"
    jinja.write_text(template)
    _one_line_error(tokscope("chat", "-f", str(conversation), "--template", str(jinja)), 1,
                    "chat template is nested too deeply")
