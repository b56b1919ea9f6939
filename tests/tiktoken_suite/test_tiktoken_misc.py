# Adapted from tiktoken 0.14.0, tests/test_misc.py (https://github.com/openai/tiktoken), MIT License,
# Copyright (c) 2022 OpenAI, Shantanu Jain (see LICENSE-tiktoken beside this file).
# Adapted to run against tokscope: tokscope.encoding_for_model; the optional-dependency check asks that import tokscope loads neither blobfile nor tiktoken.
# The assertions are tiktoken's, unchanged.

import subprocess
import sys

import tokscope


def test_encoding_for_model():
    enc = tokscope.encoding_for_model("gpt2")
    assert enc.name == "gpt2"
    enc = tokscope.encoding_for_model("text-davinci-003")
    assert enc.name == "p50k_base"
    enc = tokscope.encoding_for_model("text-davinci-edit-001")
    assert enc.name == "p50k_edit"
    enc = tokscope.encoding_for_model("gpt-3.5-turbo-0301")
    assert enc.name == "cl100k_base"
    enc = tokscope.encoding_for_model("gpt-4")
    assert enc.name == "cl100k_base"
    enc = tokscope.encoding_for_model("gpt-4o")
    assert enc.name == "o200k_base"
    enc = tokscope.encoding_for_model("gpt-oss-120b")
    assert enc.name == "o200k_harmony"


def test_optional_blobfile_dependency():
    prog = """
import tokscope
import sys
assert "blobfile" not in sys.modules
assert "tiktoken" not in sys.modules
"""
    subprocess.check_call([sys.executable, "-c", prog])
