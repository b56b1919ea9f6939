"""``encode_batch``'s loop in this process (``Tokenizer.encode_many``: the special tokens' sets, the
stages and the model's ids function looked up once per batch) gives what ``encode`` gives text by
text, for every ``tokenizer.json`` family and every special-token mode, errors included, and what
``tokenizers``' ``encode_batch`` gives; the tokenizer's caches carry nothing wrong from one text to
the next (each batch runs on a fresh tokenizer and on one that has seen the texts)."""

from __future__ import annotations

import pickle

import hf_files
import pytest
from hf_support import FUZZ, TRICKY_CHARS, sample_texts, texts_st
from hypothesis import given
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.text.errors import DisallowedSpecialError

MODES = [
    {"disallowed_special": ()},
    {"allowed_special": "all"},
    {},
    {"allowed_special": "all", "add_special_tokens": True},
]

_FILES: dict = {}


def _fresh(name: str):
    """A core tokenizer of the family with empty caches (read once, then unpickled each time)."""
    found = _FILES.get(name)
    if found is None:
        try:
            found = _FILES[name] = pickle.dumps(hf.from_json_text(hf_files.build(name), name))
        except hf_files.Missing as exc:
            pytest.skip(str(exc))
    return pickle.loads(found)


def _texts() -> list[str]:
    lines = [line for text in sample_texts().values() for line in text.splitlines()[:4]]
    return lines + hf_files.LOOKALIKES + ["", " ", "a\ud800b", "".join(TRICKY_CHARS), "  <|tool|>  x\t\t"]


def _loop(tok, texts, mode):
    """``encode`` text by text: the ids, or the first error's type and message."""
    out = []
    for text in texts:
        try:
            out.append(tok.encode(text, **mode))
        except DisallowedSpecialError as exc:
            return type(exc), str(exc)
    return out


def _batch(tok, texts, mode, how):
    try:
        if how == "encode_many":
            return tok.encode_many(texts, **mode)
        return tok.encode_batch(texts, num_processes=None, **mode)
    except DisallowedSpecialError as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize("how", ["encode_many", "encode_batch"])
@pytest.mark.parametrize("mode", MODES, ids=["ordinary", "all", "default", "template"])
@pytest.mark.parametrize("name", hf_files.FAMILIES)
def test_the_batch_loop_equals_encode_text_by_text(name, mode, how):
    texts = _texts()
    expected = _loop(_fresh(name), texts, mode)
    fresh = _fresh(name)
    assert _batch(fresh, texts, mode, how) == expected
    assert _batch(fresh, texts[::-1], mode, how) == _loop(_fresh(name), texts[::-1], mode)
    assert _batch(fresh, texts, mode, how) == expected  # warm caches


def test_a_disallowed_special_token_in_a_later_text_raises_as_the_loop_does():
    tok = _fresh("llama2")
    with pytest.raises(DisallowedSpecialError):
        tok.encode_many(["fine", "also fine", "<s> here"])
    assert tok.encode_many(["fine", "<s> here"], disallowed_special=()) == [tok.encode("fine"),
                                                                           tok.encode("<s> here", disallowed_special=())]


def test_texts_that_are_not_strings_are_refused():
    tok = _fresh("gemma")
    with pytest.raises(TypeError):
        tok.encode_batch(["a", b"b"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        tok.encode_many(["a", 3])  # type: ignore[list-item]


@FUZZ
@given(st.lists(texts_st, max_size=8), st.sampled_from(["gemma", "llama2", "llama3", "t5", "bert", "wordlevel",
                                                        "xlmr-bytefallback", "mistral-metaspace"]))
def test_generated_batches_equal_tokenizers(texts, name):
    tok = _fresh(name)
    ref = hf_files.hf_tokenizer(name)
    ref.encode_special_tokens = True
    try:
        expected = [e.ids for e in ref.encode_batch([t.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
                                                     for t in texts], add_special_tokens=False)]
    finally:
        ref.encode_special_tokens = False
    assert tok.encode_batch(texts, disallowed_special=()) == expected
    assert tok.encode_many(texts, disallowed_special=()) == [tok.encode(t, disallowed_special=()) for t in texts]
