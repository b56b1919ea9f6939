"""The worked examples in the docstrings of the Hugging Face model, post-processor and decoder
modules run as tests (needing no optional package, unlike the parity tests beside this file)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["models.bpe", "models.wordpiece", "models.unigram", "models.wordlevel", "models.base",
           "formats.tokenizer_json_models", "processors", "decoders"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    failed, attempted = doctest.testmod(importlib.import_module(f"tokscope.core.{name}"))
    assert failed == 0 and attempted > 0
