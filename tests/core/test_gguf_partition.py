"""GGUF files cut special and user-defined tokens out of the text as llama.cpp's
``tokenizer_st_partition`` does (issue 19): the longest token first, all its occurrences, then the
next; not Hugging Face's leftmost-longest scan. The two differ only where occurrences overlap
(``ab`` and ``bcd`` in ``abcd``), which real vocabularies allow (``<|im_end|>`` ends in ``end|>``).

The oracle is :func:`tokscope.core.reference.partition_reference`, llama.cpp's loop on UTF-8
bytes, written from ``src/llama-vocab.cpp`` of the llama-cpp-python 0.3.36 sdist.
"""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.added_tokens.added_vocabulary import AddedToken, AddedVocabulary
from tokscope.core.formats import gguf
from tokscope.core.reference import partition_reference

ALPHABET = "ab<|>é 	\n\u3000\U0001f600\ud800"
C_SPACE = frozenset(" \t\n\v\f\r")


def _ours(vocab: AddedVocabulary, text: str, allowed: frozenset[str]) -> list[tuple[bytes, int | None]]:
    """tokscope's parts as the oracle writes them: a raw part's bytes, a token's id (its stripped
    whitespace, which tokscope counts in the token's piece and llama.cpp drops, left out)."""
    return [(part.encode("utf-8", "surrogatepass"), None) if tid is None else (b"", tid)
            for part, tid, _ in vocab.split_str(text, None, allowed) if part or tid is not None]


@st.composite
def vocabularies(draw):
    contents = draw(st.lists(st.text(ALPHABET, min_size=1, max_size=4), min_size=1, max_size=6, unique=True))
    tokens = [AddedToken(c, 100 + i, special=draw(st.booleans()), normalized=False,
                         lstrip=draw(st.booleans()), rstrip=draw(st.booleans()))
              for i, c in enumerate(contents)]
    allowed = frozenset(draw(st.lists(st.sampled_from(contents), unique=True)))
    return tokens, allowed


@settings(max_examples=300, deadline=None)
@given(vocabularies(), st.text(ALPHABET, max_size=30))
def test_partition_matches_llama_cpp_loop(vocab, text):
    tokens, allowed = vocab
    ours = AddedVocabulary(tokens, strip=C_SPACE, longest_first=True)
    assert _ours(ours, text, allowed) == [p for p in partition_reference(text, tokens, allowed) if p[0] or p[1] is not None]


@settings(max_examples=100, deadline=None)
@given(vocabularies(), st.text(ALPHABET, max_size=30))
def test_parts_still_cover_the_text(vocab, text):
    """The aligned split gives pieces that tile the text, stripped whitespace inside its token."""
    tokens, allowed = vocab
    parts = AddedVocabulary(tokens, strip=C_SPACE, longest_first=True).split(text, None, allowed)
    assert "".join(p.text for p, _ in parts) == text


def test_overlap_differs_from_leftmost_longest():
    tokens = [AddedToken("ab", 1, normalized=False), AddedToken("bcd", 2, normalized=False)]
    llama = AddedVocabulary(tokens, longest_first=True)
    hf = AddedVocabulary(tokens)
    assert [(p.text, i) for p, i in llama.split("xabcdab", None)] == [("xa", None), ("bcd", 2), ("ab", 1)]
    assert [(p.text, i) for p, i in hf.split("xabcdab", None)] == [("x", None), ("ab", 1), ("cd", None), ("ab", 1)]


def test_a_special_token_not_allowed_leaves_room_for_a_shorter_one():
    """HF drops a disallowed match without trying inside it; llama.cpp never looks for it."""
    tokens = [AddedToken("<|x|>", 1, special=True, normalized=False), AddedToken("x", 2, normalized=False)]
    assert [i for _, i in AddedVocabulary(tokens, longest_first=True).split("<|x|>", None)] == [None, 2, None]
    assert [i for _, i in AddedVocabulary(tokens).split("<|x|>", None)] == [None]


def _tiny(types_by_token: dict[str, int]):
    """A byte-level BPE GGUF (written and read back) whose extra tokens have the given types."""
    base = ["a", "b", "c", "d", "Ġ"]
    tokens = [*base, *types_by_token]
    meta = {"general.name": "tiny", "general.architecture": "gpt2", "tokenizer.ggml.model": "gpt2",
            "tokenizer.ggml.pre": "gpt-2", "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": [1] * len(base) + list(types_by_token.values()),
            "tokenizer.ggml.merges": ["a b"], "tokenizer.ggml.add_bos_token": False}
    data = gguf.build_metadata(meta)
    read = gguf.read_metadata_from(io.BytesIO(data), "tiny.gguf", len(data))
    return gguf.tokenizer_from_metadata(read, "tiny"), {t: i for i, t in enumerate(tokens)}


def test_gguf_user_defined_tokens_longest_first():
    tok, ids = _tiny({"ab": 4, "bcd": 4})  # 4: user-defined, matched whatever is allowed
    assert tok.encode("abcd") == [ids["a"], ids["bcd"]]
    assert tok.encode("abab") == [ids["ab"], ids["ab"]]


def test_gguf_control_token_only_when_special_tokens_are_allowed():
    tok, ids = _tiny({"ab": 4, "<bcd>": 3})  # 3: control
    assert tok.encode("ab<bcd>", allowed_special="all") == [ids["ab"], ids["<bcd>"]]
    assert ids["<bcd>"] not in tok.encode("ab<bcd>", disallowed_special=())
