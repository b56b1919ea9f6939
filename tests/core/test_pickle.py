"""A tokenizer can be pickled, deep-copied and sent to a worker process (caches and locks are rebuilt)."""

from __future__ import annotations

import copy
import multiprocessing
import pickle

import pytest

from tokscope.sample_texts import read_sample

TEXT = read_sample("multiscript.txt") + "<|endoftext|> x\n"


def encode_in_worker(tok, text):
    return tok.encode(text, allowed_special="all"), tok.decode(tok.encode(text, disallowed_special=()))


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_pickle_and_deepcopy_encode_identically(load, name):
    tok = load(name)
    want = tok.encode(TEXT, allowed_special="all")
    tok.derived("probe", lambda: object())  # a derived fact and warm caches are not carried
    for other in (pickle.loads(pickle.dumps(tok)), copy.deepcopy(tok)):
        assert other is not tok and other.name == tok.name and other.n_vocab == tok.n_vocab
        assert other.encode(TEXT, allowed_special="all") == want
        assert other.pieces(TEXT, disallowed_special=()) == tok.pieces(TEXT, disallowed_special=())
        assert other.parents(want[5]) == tok.parents(want[5])
        assert other.derived("probe", lambda: "rebuilt") == "rebuilt"


def test_a_pickled_tokenizer_encodes_identically_in_a_worker_process(load):
    tok = load("o200k_base")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        ids, text = pool.apply(encode_in_worker, (tok, TEXT))
    assert ids == tok.encode(TEXT, allowed_special="all")
    assert text == TEXT
