# Adapted from tiktoken 0.14.0, tests/test_helpers.py (https://github.com/openai/tiktoken), MIT License,
# Copyright (c) 2022 OpenAI, Shantanu Jain (see LICENSE-tiktoken beside this file).
# Adapted to run against tokscope: tokscope.get_encoding instead of tokscope.get_encoding.
# The assertions are tiktoken's, unchanged.

import bisect
import functools
import os

import pytest

import tokscope

MAX_EXAMPLES: int = int(os.environ.get("TIKTOKEN_MAX_EXAMPLES", "100"))

ENCODINGS = ["r50k_base", "cl100k_base"]
SOME_ENCODINGS = ["cl100k_base"]


ENCODING_FACTORIES = [
    pytest.param(functools.partial(tokscope.get_encoding, name), id=name) for name in ENCODINGS
]
SOME_ENCODING_FACTORIES = [
    pytest.param(functools.partial(tokscope.get_encoding, name), id=name) for name in SOME_ENCODINGS
]


