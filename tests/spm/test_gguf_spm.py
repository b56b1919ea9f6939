"""GGUF ``llama`` (llama.cpp's SPM) and ``t5`` (llama.cpp's UGM) tokenizers against llama.cpp.

llama.cpp's vocab-only files come from the llama-cpp-python sdist (:func:`spm_files.llama_cpp_models`);
``llama-spm`` and ``phi-3`` carry llama.cpp's own test vectors, which every input must reproduce.
The ``t5`` file (nomic-bert-moe, XLM-R's vocabulary) and Baichuan's have none: they are held to
their own consistency and, where llama.cpp and the sentencepiece library agree by construction,
to the library run on a model built from the same pieces.
"""

from __future__ import annotations

import os

import pytest
import spm_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.document.document import Document
from tokscope.core.formats.gguf_sentencepiece import tokenizer_from_gguf
from tokscope.core.formats.sentencepiece_model import build_model
from tokscope.core.text.errors import DisallowedSpecialError, UnsupportedComponentError

EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

_CACHE: dict = {}


def gguf(models, name: str):
    key = (str(models), name)
    if key not in _CACHE:
        meta = spm_files.read_gguf_metadata(models / f"ggml-vocab-{name}.gguf")
        _CACHE[key] = (meta, tokenizer_from_gguf(meta, name))
    return _CACHE[key]


def test_metadata_reader_agrees_with_the_gguf_package(tmp_path):
    gguf_pkg = pytest.importorskip("gguf")
    path = tmp_path / "t.gguf"
    writer = gguf_pkg.GGUFWriter(str(path), "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list(["<unk>", "▁a", "b", "中文"])
    writer.add_token_scores([0.0, -1.5, -2.25, -3.0])
    writer.add_token_types([2, 1, 1, 4])
    writer.add_bool("tokenizer.ggml.add_space_prefix", False)
    writer.add_uint32("tokenizer.ggml.bos_token_id", 1)
    writer.add_array("tokenizer.ggml.precompiled_charsmap", [1, 2, 255])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    ours = spm_files.read_gguf_metadata(path)
    reference = gguf_pkg.GGUFReader(str(path))
    for key, field in reference.fields.items():
        if key.startswith("GGUF."):
            continue
        want = field.contents()
        got = ours[key]
        assert (list(got) if not isinstance(got, (str, int, float, bool)) else got) == want, key


@pytest.mark.parametrize("name", ["llama-spm", "phi-3"])
def test_llama_cpp_vectors(gguf_models_dir, name):
    _, tok = gguf(gguf_models_dir, name)
    vectors = spm_files.read_vectors(gguf_models_dir / f"ggml-vocab-{name}.gguf")
    assert len(vectors) > 40
    for text, want in vectors:
        assert tok.encode(text, disallowed_special=()) == want, text
        assert [p.id for p in tok.pieces(text, disallowed_special=())] == want, text
        assert list(Document.build(tok, text).ids) == want, text


def test_llama_spm_kind_template_and_specials(gguf_models_dir):
    _, tok = gguf(gguf_models_dir, "llama-spm")
    assert tok.kind == "BPE by score (llama.cpp SPM)"
    assert tok.encode("Hello", add_special_tokens=True)[0] == 1  # add_bos_token
    with pytest.raises(DisallowedSpecialError):
        tok.encode("a <s> b")
    # control tokens are parsed only when allowed (llama.cpp's parse_special)
    assert 1 in tok.encode("a <s> b", allowed_special="all")
    assert 1 not in tok.encode("a <s> b", disallowed_special=())


def _llama_proto(meta) -> bytes:
    pieces = list(zip(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"], meta["tokenizer.ggml.token_type"]))
    return build_model(pieces, trainer={3: 2, 35: 1}, normalizer={1: "identity", 3: 1, 4: 0, 5: 1})


LLAMA_TEXTS = st.one_of(
    st.text(max_size=16).filter(lambda t: all(s not in t for s in ("<s>", "</s>", "<unk>"))),
    st.lists(st.sampled_from(["a", " ", "  ", "\n", "é", "e\u0301", "中文", "👍🏽", "ab", "the", "\t", "0", "12",
                              "ﬁ", "\u200b", "Hello", "▁", "<", "s>"]), max_size=10).map("".join).filter(
        lambda t: "<s>" not in t),
)


@FUZZ
@given(text=LLAMA_TEXTS)
def test_llama_spm_agrees_with_sentencepiece_on_plain_text(gguf_models_dir, text):
    """Without special-token text, llama.cpp's SPM and the library on Llama 2's settings (no
    normalizer, a dummy prefix, spaces kept, byte fallback) give the same ids."""
    spm = pytest.importorskip("sentencepiece")
    meta, tok = gguf(gguf_models_dir, "llama-spm")
    key = ("sp", "llama-spm")
    if key not in _CACHE:
        _CACHE[key] = spm.SentencePieceProcessor(model_proto=_llama_proto(meta))
    if text.strip(" ") == "" and text:
        return  # llama.cpp gives its prefix space to a text of spaces; the library too, but kept apart here
    assert tok.encode(text, disallowed_special=()) == _CACHE[key].encode(text)


def test_baichuan_is_consistent(gguf_models_dir):
    _, tok = gguf(gguf_models_dir, "baichuan")
    assert tok.kind == "BPE by score (llama.cpp SPM)"
    for text in ["你好，世界！", "Hello  world", "emoji 🎉 and é", " leading", "tab\tand\nnewline", "<s> look-alike"]:
        ids = tok.encode(text, disallowed_special=())
        assert [p.id for p in tok.pieces(text, disallowed_special=())] == ids
        assert tok.decode(ids) == text  # SPM with byte tokens loses nothing (the prefix space is taken off)


def _t5_proto(meta) -> bytes:
    pieces = list(zip(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"], meta["tokenizer.ggml.token_type"]))
    return build_model(pieces, trainer={3: 1}, normalizer={1: "nmt_nfkc", 2: bytes(meta["tokenizer.ggml.precompiled_charsmap"]),
                                                           3: 1, 4: 1, 5: 1})


T5_TEXTS = ["Hello world", "  Hello   world  ", "naïve café ｈｅｌｌｏ ﬁne", "吾輩は猫である。", "Привет мир", "👍🏽 🎉",
            "e\u0301 Å", "a\u200bb", "tab\tnew\nline", "12345 3.14", "don't", "x" * 30, "ΣΑΣ ß İ"]


def test_t5_ugm_against_sentencepiece(gguf_models_dir):
    """On text with single spaces and no special-token or unused-token text, llama.cpp's UGM and
    the library give the same ids for XLM-R's vocabulary (the whitespace rules and the score
    precision differ only elsewhere)."""
    spm = pytest.importorskip("sentencepiece")
    meta, tok = gguf(gguf_models_dir, "nomic-bert-moe")
    assert tok.kind == "Unigram (llama.cpp UGM)"
    sp = spm.SentencePieceProcessor(model_proto=_t5_proto(meta))
    for text in T5_TEXTS:
        assert tok.encode(text, disallowed_special=()) == sp.encode(text), text
    # its own consistency: pieces, the document and the template agree with encode
    for text in [*T5_TEXTS, "<mask> [PAD250001] <s>"]:
        ids = tok.encode(text, disallowed_special=())
        assert [p.id for p in tok.pieces(text, disallowed_special=())] == ids
        assert list(Document.build(tok, text).ids) == ids
    assert tok.encode("Hi", add_special_tokens=True) == [0, *tok.encode("Hi"), 2]  # add_bos and add_eos


def _tiny_t5(**extra):
    meta = {"tokenizer.ggml.model": "t5", "tokenizer.ggml.tokens": ["<unk>", "▁", "a", "b", "ab", "<u>", "<s>"],
            "tokenizer.ggml.scores": [0.0, -1.0, -2.0, -2.0, -1.0, 0.0, 0.0],
            "tokenizer.ggml.token_type": [2, 1, 1, 1, 5, 4, 3], "tokenizer.ggml.unknown_token_id": 0}
    meta.update({"tokenizer.ggml." + k: v for k, v in extra.items()})
    return tokenizer_from_gguf(meta, "tiny")


def test_t5_ugm_rules_as_llama_cpp_writes_them():
    tok = _tiny_t5(add_space_prefix=True, remove_extra_whitespaces=True)
    assert tok.encode("ab") == [1, 4]  # an unused piece is found in the text (the library skips it)
    assert tok.encode("xyab") == [1, 0, 4]  # a run of unknown characters is one unknown token
    assert tok.encode("a<u>b") == [1, 2, 5, 1, 3]  # a user-defined token is cut out first; each side gets a prefix
    assert tok.encode("  a   b  ") == [1, 2, 1, 3]  # spaces merged, each word with one ▁
    assert tok.encode("<s>", disallowed_special=()) == [1, 0]
    assert tok.encode("<s>", allowed_special="all") == [6]
    kept = _tiny_t5(add_space_prefix=True, remove_extra_whitespaces=False)
    assert kept.encode(" a  b") == [1, 1, 2, 1, 1, 3]  # every space a ▁, the first word one more
    assert _tiny_t5().encode("a b") == [2, 1, 3]  # neither flag: no prefix


def test_other_gguf_models_are_refused_by_name(gguf_models_dir):
    meta = spm_files.read_gguf_metadata(gguf_models_dir / "ggml-vocab-aquila.gguf")
    with pytest.raises(UnsupportedComponentError, match="gpt2"):
        tokenizer_from_gguf(meta, "aquila")
