"""llama.cpp's strip attributes on GGUF special tokens (issue 19): Phi-3's tokens take the ASCII
whitespace after them, ``<mask>`` of jina-v2/nomic-bert-moe and ``[MASK]`` of modern-bert the
whitespace before them, when they are parsed as special tokens; and the control bit llama.cpp
gives fill-in-the-middle tokens by their text (deepseek-coder).

There is no llama.cpp binary here: every expected answer below was **derived by hand from
llama.cpp's code** (``src/llama-vocab.cpp`` of the llama-cpp-python 0.3.36 sdist):

* ``llama_vocab::impl::load`` gives ``RSTRIP`` to every token of the special-tokens cache of a
  model whose lowercased ``general.name`` holds ``phi-3``/``phi3``, and to ``</s>``, then takes it
  from ``<unk>``, ``<s>``, ``<|endoftext|>``; ``LSTRIP`` to ``<mask>`` when the architecture is
  ``nomic-bert-moe`` (or the pre-tokenizer a jina-v2 one), to ``[MASK]`` for ``modern-bert``;
  ``</s>`` (user-defined in Phi-3's file) gains the control bit as an end-of-generation token;
* ``tokenizer_st_partition`` drops the ``isspace`` bytes (C locale: the six ASCII spaces) before
  an ``LSTRIP`` token and after an ``RSTRIP`` one, within the text fragment it cuts;
* the SPM tokenizer gives every text fragment after a special token its prefix space
  (``is_prev_special``); the UGM normalizer does so for each fragment, and with
  ``remove_extra_whitespaces`` merges spaces and drops trailing ones.

The expected tokens are written as pieces and turned into ids with the file's own token list
(``tokenizer.ggml.tokens``), not with tokscope's tokenizer. Where a fragment is longer than one
obvious piece, the expectation is the special token's id beside tokscope's encoding of exactly the
fragment llama.cpp's partition leaves (that fragment's tokenization is what llama.cpp's test
vectors hold tokscope to); the partition is what these tests check.
"""

from __future__ import annotations

import functools
import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gguf_files import copy_tokenizer, llama_cpp_models  # noqa: E402,F401

from tokscope.core.formats import gguf, gguf_attributes  # noqa: E402
from tokscope.core.formats.gguf_sentencepiece import tokenizer_from_gguf  # noqa: E402


@functools.lru_cache(maxsize=None)
def _meta(path: Path):
    return gguf.read_metadata(path)


@functools.lru_cache(maxsize=None)
def _tok(path: Path):
    return gguf.tokenizer_from_metadata(_meta(path), path.stem, str(path))


def _ids(path: Path, pieces: list[str]) -> list[int]:
    """Each piece's id in the file's own token list (the last one so spelled, as llama.cpp's
    ``token_to_id`` keeps it)."""
    tokens = _meta(path)["tokenizer.ggml.tokens"]
    table = {t: i for i, t in enumerate(tokens)}
    return [table[p] for p in pieces]


def _special(tok, text):
    return tok.encode(text, allowed_special="all")


# ----- Phi-3 (SPM, RSTRIP) ------------------------------------------------------------------------

#: (text parsed with special tokens, the pieces llama.cpp gives, by hand)
PHI3_BY_HAND = [
    # <|user|> and <|end|> take the newline after them; "Hello" gets its prefix space
    ("<|user|>\nHello<|end|>\n<|assistant|>", ["<|user|>", "▁Hello", "<|end|>", "<|assistant|>"]),
    # every ASCII isspace byte after an RSTRIP token goes, then the fragment "world" gets ▁
    ("<|system|> \t\r\n\v\f world", ["<|system|>", "▁world"]),
    # no LSTRIP: the space before <|end|> stays, a lone ▁ after "▁Hello"
    ("Hello <|end|>", ["▁Hello", "▁", "<|end|>"]),
    # </s> is RSTRIP (named by llama.cpp), parsed as special
    ("</s> x", ["</s>", "▁x"]),
    # <s> and <|endoftext|> have RSTRIP taken off: " Hello" keeps its space, ▁ + ▁Hello
    ("<s> Hello", ["<s>", "▁", "▁Hello"]),
    ("<|endoftext|> Hello", ["<|endoftext|>", "▁", "▁Hello"]),
    # an unknown-type token of the cache is RSTRIP too
    ("[PAD32011]  x", ["[PAD32011]", "▁x"]),
    # a fragment of whitespace only is dropped whole
    ("<|user|>\n\n", ["<|user|>"]),
    ("<|end|>\n<|user|>\n", ["<|end|>", "<|user|>"]),
]


@pytest.mark.parametrize("text,pieces", PHI3_BY_HAND)
def test_phi3_rstrip_by_hand(llama_cpp_models, text, pieces):
    path = llama_cpp_models / "ggml-vocab-phi-3.gguf"
    tok = _tok(path)
    want = _ids(path, pieces)
    assert _special(tok, text) == want
    assert [p.id for p in tok.pieces(text, allowed_special="all")] == want


@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\x85", "\x1c"])
def test_phi3_strips_only_c_isspace(llama_cpp_models, space):
    """A no-break space, an ideographic space, NEL or a file separator is not C's ``isspace``:
    llama.cpp keeps it as the start of the next fragment (which gets its prefix space)."""
    path = llama_cpp_models / "ggml-vocab-phi-3.gguf"
    tok = _tok(path)
    text = f"<|user|>{space}Hello"
    got = _special(tok, text)
    assert got == [_ids(path, ["<|user|>"])[0], *tok.encode(f"{space}Hello", disallowed_special=())]
    assert got != _ids(path, ["<|user|>", "▁Hello"])


def test_phi3_strip_needs_the_token_parsed_as_special(llama_cpp_models):
    """Without parse_special llama.cpp matches no control token (``</s>`` included: its
    end-of-generation control bit), so nothing is stripped and the text is spelled in pieces."""
    path = llama_cpp_models / "ggml-vocab-phi-3.gguf"
    tok = _tok(path)
    ids = _ids(path, ["<|end|>", "</s>"])
    for text in ["<|end|>\nHello", "</s> x"]:
        plain = tok.encode(text, disallowed_special=())
        assert not set(ids) & set(plain)
        assert tok.decode(plain) == text  # every character kept


def test_phi3_attributes_as_llama_cpp_sets_them(llama_cpp_models):
    path = llama_cpp_models / "ggml-vocab-phi-3.gguf"
    meta = _meta(path)
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    kinds = gguf_attributes.special_kinds(tokens, types)
    flags = gguf_attributes.strip_flags(meta, tokens, list(kinds))
    by_text = {tokens[i]: f for i, f in flags.items()}
    # the 13 control tokens, 53 unknown and the user-defined </s>: all RSTRIP but three
    assert len(kinds) == 13 + 53 + 1
    assert set(by_text) == {tokens[i] for i in kinds} - {"<unk>", "<s>", "<|endoftext|>"}
    assert set(by_text.values()) == {(False, True)}
    assert kinds[_ids(path, ["</s>"])[0]] is True  # user-defined in the file, control bit by its text


# ----- nomic-bert-moe (UGM, LSTRIP on <mask>) ----------------------------------------------------

NOMIC_BY_HAND = [
    # the space before <mask> goes with LSTRIP; " world" is normalized to ▁world (spaces merged)
    ("Hello <mask> world", ["▁Hello", "<mask>", "▁world"]),
    ("Hello\n\n<mask>\tworld", ["▁Hello", "<mask>", "▁world"]),
    ("<s> <mask> </s>", ["<s>", "<mask>", "</s>"]),
]


@pytest.mark.parametrize("text,pieces", NOMIC_BY_HAND)
def test_nomic_mask_by_hand(llama_cpp_models, text, pieces):
    path = llama_cpp_models / "ggml-vocab-nomic-bert-moe.gguf"
    tok = _tok(path)
    want = _ids(path, pieces)
    assert _special(tok, text) == want
    assert [p.id for p in tok.pieces(text, allowed_special="all")] == want


def test_nomic_mask_lstrip_shows_when_spaces_are_kept(llama_cpp_models):
    """The file merges spaces (``remove_extra_whitespaces``), which hides LSTRIP in the ids; the
    same vocabulary with spaces kept shows it: "Hello " would end in ▁, "Hello" does not."""
    path = llama_cpp_models / "ggml-vocab-nomic-bert-moe.gguf"
    meta = dict(_meta(path), **{"tokenizer.ggml.remove_extra_whitespaces": False})
    tok = tokenizer_from_gguf(meta, "nomic-kept-spaces")
    mask = _ids(path, ["<mask>"])[0]
    assert _special(tok, "Hello  <mask>") == [*_ids(path, ["▁Hello"]), mask]
    assert _special(tok, "Hello\u00a0<mask>")[:-1] == tok.encode("Hello\u00a0")  # NBSP is not isspace
    assert tok.encode("Hello ") != _ids(path, ["▁Hello"])  # the space would have been a token
    # the same file under another architecture: no LSTRIP, the spaces stay
    other = tokenizer_from_gguf(dict(meta, **{"general.architecture": "bert"}), "no-lstrip")
    assert _special(other, "Hello  <mask>") == [*other.encode("Hello  "), mask]


# ----- the rules on small files: jina-v2 and modern-bert (BPE), names, precedence ------------------

def _tiny_bpe(name: str, pre: str = "gpt-2", arch: str = "gpt2", extra: tuple[str, ...] = ("<mask>", "[MASK]")):
    # byte-level: "Ġ" is a space, "Ċ" a newline; "<mask>" and "[MASK]" are control tokens
    tokens = ["a", "b", "Ġ", "Ċ", "Ġa", "ĉ", *extra, "<|end|>"]
    meta = {"general.name": name, "general.architecture": arch, "tokenizer.ggml.model": "gpt2",
            "tokenizer.ggml.pre": pre, "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": [1] * 6 + [3] * (len(extra) + 1), "tokenizer.ggml.merges": ["Ġ a"],
            "tokenizer.ggml.add_bos_token": False}
    data = gguf.build_metadata(meta)  # written and read back as a GGUF file's metadata
    read = gguf.read_metadata_from(io.BytesIO(data), "tiny.gguf", len(data))
    return gguf.tokenizer_from_metadata(read, name), {t: i for i, t in enumerate(tokens)}


def test_jina_v2_mask_lstrip_in_bpe():
    tok, ids = _tiny_bpe("jina-embeddings-v2-base-es", pre="jina-v2-es")
    # LSTRIP: " \t\n" before <mask> goes; the space after it stays (Ġa)
    assert _special(tok, "a \t\n<mask> a") == [ids["a"], ids["<mask>"], ids["Ġa"]]
    # [MASK] has no attribute for this model: its spaces stay
    assert _special(tok, "a [MASK]") == [ids["a"], ids["Ġ"], ids["[MASK]"]]


def test_modern_bert_mask_lstrip_and_phi3_by_name():
    tok, ids = _tiny_bpe("ModernBERT-base modern-bert")
    assert _special(tok, "a  [MASK]") == [ids["a"], ids["[MASK]"]]
    assert _special(tok, "a <mask>") == [ids["a"], ids["Ġ"], ids["<mask>"]]
    phi, ids = _tiny_bpe("PHI3 mini")  # llama.cpp lowercases the name (ASCII only)
    assert _special(phi, "<|end|>\n a") == [ids["<|end|>"], ids["a"]]
    plain, ids = _tiny_bpe("gpt2")
    assert _special(plain, "<|end|> a") == [ids["<|end|>"], ids["Ġa"]]


def test_architecture_rule_comes_before_the_name():
    """llama.cpp's rules are an if/else chain: a nomic-bert-moe architecture named phi-3 gets only
    the mask's LSTRIP."""
    tok, ids = _tiny_bpe("phi-3", arch="nomic-bert-moe")
    assert _special(tok, "<|end|> a") == [ids["<|end|>"], ids["Ġa"]]
    assert _special(tok, "a <mask>") == [ids["a"], ids["<mask>"]]


def test_missing_mask_is_skipped():
    tok, ids = _tiny_bpe("x", pre="jina-v2-de", extra=())
    assert _special(tok, "a <|end|>") == [ids["a"], ids["Ġ"], ids["<|end|>"]]


# ----- fill-in-the-middle tokens: the control bit by text --------------------------------------------

def test_deepseek_coder_fim_tokens_are_matched_only_as_special_tokens(llama_cpp_models, tmp_path):
    """deepseek-coder's file makes its FIM tokens user-defined and names no FIM token id, so
    llama.cpp finds them by text and gives them the control bit (``attr |= CONTROL``): parsed only
    with parse_special. A file that names its prefix token keeps that one user-defined."""
    path = llama_cpp_models / "ggml-vocab-deepseek-coder.gguf"
    tok = _tok(path)
    begin, hole, end = _ids(path, ["<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"])
    assert [_meta(path)["tokenizer.ggml.token_type"][i] for i in (begin, hole, end)] == [4, 4, 4]
    text = "def f(x):<｜fim▁begin｜> return<｜fim▁hole｜>x<｜fim▁end｜>"
    plain = tok.encode(text, disallowed_special=())
    assert not {begin, hole, end} & set(plain) and tok.decode(plain) == text
    # parsed as specials: the three fragments between them, each as its own text
    assert _special(tok, text) == [*tok.encode("def f(x):"), begin, *tok.encode(" return"), hole, *tok.encode("x"), end]
    named = gguf.load(copy_tokenizer(path, tmp_path / "named.gguf", tokenizer__ggml__fim_pre_token_id=begin))[0]
    plain = named.encode(text, disallowed_special=())
    assert begin in plain and hole not in plain and end not in plain
