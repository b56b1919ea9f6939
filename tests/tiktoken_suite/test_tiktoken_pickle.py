# Adapted from tiktoken 0.14.0, tests/test_pickle.py (https://github.com/openai/tiktoken), MIT License,
# Copyright (c) 2022 OpenAI, Shantanu Jain (see LICENSE-tiktoken beside this file).
# Adapted to run against tokscope: tokscope.get_encoding; tiktoken.Encoding(name, pat_str, mergeable_ranks, special_tokens) is tokscope's Tokenizer(name, ranks, pattern, special_tokens); enc._pat_str / _mergeable_ranks are .pattern / .ranks.
# The assertions are tiktoken's, unchanged.

import tokscope
from tokscope.core import Tokenizer


def test_pickle():
    import pickle

    enc_old = tokscope.get_encoding("r50k_base")
    enc_new = pickle.loads(pickle.dumps(enc_old))
    assert enc_old.encode("hello world") == enc_new.encode("hello world")

    enc_old = Tokenizer(
        name="custom_enc",
        pattern=enc_old.pattern,
        ranks=enc_old.ranks,
        special_tokens={"<|pickle|>": 100_000},
    )
    enc_new = pickle.loads(pickle.dumps(enc_old))
    assert enc_old.encode("hello world") == enc_new.encode("hello world")
    assert (
        enc_old.encode("<|pickle|>", allowed_special="all")
        == enc_new.encode("<|pickle|>", allowed_special="all")
        == [100_000]
    )
