# Adapted from tiktoken 0.14.0, tests/test_simple_public.py (https://github.com/openai/tiktoken), MIT License,
# Copyright (c) 2022 OpenAI, Shantanu Jain (see LICENSE-tiktoken beside this file).
# Adapted to run against tokscope: tokscope.get_encoding / list_encoding_names / encoding_for_model; the optional-dependency check as in test_tiktoken_misc.py.
# The assertions are tiktoken's, unchanged.

import subprocess
import sys

import tokscope


def test_simple():
    # Note that there are more actual tests, they're just not currently public :-)
    enc = tokscope.get_encoding("gpt2")
    assert enc.encode("hello world") == [31373, 995]
    assert enc.decode([31373, 995]) == "hello world"
    assert enc.encode("hello <|endoftext|>", allowed_special="all") == [31373, 220, 50256]

    enc = tokscope.get_encoding("cl100k_base")
    assert enc.encode("hello world") == [15339, 1917]
    assert enc.decode([15339, 1917]) == "hello world"
    assert enc.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]

    for enc_name in tokscope.list_encoding_names():
        enc = tokscope.get_encoding(enc_name)
        for token in range(10_000):
            assert enc.encode_single_token(enc.decode_single_token_bytes(token)) == token


def test_encoding_for_model():
    enc = tokscope.encoding_for_model("gpt2")
    assert enc.name == "gpt2"
    enc = tokscope.encoding_for_model("text-davinci-003")
    assert enc.name == "p50k_base"
    enc = tokscope.encoding_for_model("text-davinci-edit-001")
    assert enc.name == "p50k_edit"
    enc = tokscope.encoding_for_model("gpt-3.5-turbo-0301")
    assert enc.name == "cl100k_base"


def test_optional_blobfile_dependency():
    prog = """
import tokscope
import sys
assert "blobfile" not in sys.modules
assert "tiktoken" not in sys.modules
"""
    subprocess.check_call([sys.executable, "-c", prog])
