"""SentencePiece Unigram models walked by the compiled lattice (``lattice_encode`` and
``lattice_viterbi`` of ``merge.c``) and by the pure-Python walk give the library's ids, and the two
walks give the same path, piece for piece.

Every test of the models runs twice (``walk``: compiled, pure), each time on tokenizers loaded
fresh, so no cache carries one walk's answer into the other's run. The models: the sentencepiece
sdist's botchan and kyoto Unigram models, Unigram models trained here in several configurations
(byte fallback, user-defined pieces, whitespace as a suffix, whitespace-only pieces, no dummy
prefix, case folding), and llama.cpp's UGM (the T5 GGUF, XLM-R's 250k vocabulary) against the
library on text where the two agree. Random piece tables, whose scores tie often, compare the two
walks directly in both of SentencePiece's precisions (the library's single precision, llama.cpp's
double), including texts long enough for the library's rebasing of path scores.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from compiled_merge import lattice_module
import spm_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.formats.sentencepiece_model import build_model, from_model_bytes
from tokscope.core.models import unigram as unigram_module
from tokscope.core.models.sentencepiece_pieces import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, Pieces
from tokscope.core.models.sentencepiece_unigram import SentencePieceUnigram
from tokscope.core.text.errors import TokenizerFileError
from tokscope.core.tokenizer.tokenizer import fix_surrogates

spm = pytest.importorskip("sentencepiece")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

#: trained configurations of spm_files.CONFIGS that are Unigram models
TRAINED = ["unigram_byte_fallback", "user_defined", "suffix", "unigram_whitespace_pieces", "no_dummy_prefix",
           "case_fold"]


@pytest.fixture(scope="module")
def compiled():
    module = lattice_module()
    if module is None:
        pytest.skip("no compiled lattice: not installed, and no C compiler to build one")
    return module


@pytest.fixture(scope="module", params=["compiled", "pure"])
def walk(request):
    """Which walk the models use for the module's tests: the compiled lattice, or Python's."""
    was = unigram_module.compiled_lattice()
    if request.param == "compiled":
        module = lattice_module()
        if module is None:
            pytest.skip("no compiled lattice: not installed, and no C compiler to build one")
        unigram_module.use_compiled(True, module)
    else:
        unigram_module.use_compiled(False)
    yield request.param
    unigram_module.use_compiled(was is not None, was)


def load(path: Path):
    return from_model_bytes(path.read_bytes(), path.name, str(path))


@pytest.fixture(scope="module")
def models(walk, spm_sdist_dir, trained_spm):
    """name -> (fresh tokscope tokenizer, the library's processor)."""
    paths = {name: spm_sdist_dir / name for name in ("botchan_en_unigram_1000.model", "kyoto_ja_unigram_8000.model")}
    paths.update({name: trained_spm(name) for name in TRAINED})
    out = {}
    for name, path in paths.items():
        tok = load(path)
        assert isinstance(tok.model, SentencePieceUnigram)
        out[name] = (tok, spm.SentencePieceProcessor(model_file=str(path)))
    return out


MODEL_NAMES = ["botchan_en_unigram_1000.model", "kyoto_ja_unigram_8000.model", *TRAINED]

chars = st.sampled_from(list("ab é\u0301ßİΣ中文한👍🏽\u200b\u3000\t\n0123456789▁<>@ﬁｈ") + [
    "<tool>", "foo", "ab", "<s>", "<ctl>", "▁bar", "  ", "   ", "\ud800", "🎉", "\U000e0001", "\u0378", "\uffff", "😀", "𝟘",
    "吾輩は猫", "である", "ñ", "Å", "\x00", "\x7f", "\r\n", "xyz", "Q", "ё"])
texts_st = st.one_of(st.lists(chars, max_size=24).map("".join), st.text(max_size=24),
                     st.text(st.characters(codec="utf-8"), max_size=16))


def check(tok, sp, text: str) -> None:
    assert tok.encode(text, disallowed_special=()) == sp.encode(fix_surrogates(text)), text


@pytest.mark.parametrize("name", MODEL_NAMES)
@FUZZ
@given(text=texts_st)
def test_unicode_gives_the_library_ids(models, name, text):
    tok, sp = models[name]
    check(tok, sp, text)


def sample_texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "samples" / "languages").glob("*.txt"))]
    texts.append((ROOT / "samples" / "multiscript.txt").read_text(encoding="utf-8"))
    return texts


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_every_language_sample_gives_the_library_ids(models, name):
    tok, sp = models[name]
    for text in sample_texts():
        check(tok, sp, text)
    # every sample at once: path scores pass the library's rebasing point (100000) many times
    whole = "\n".join(sample_texts()) * 3
    check(tok, sp, whole)


@pytest.fixture(scope="module")
def t5(gguf_models_dir):
    """The T5 GGUF's metadata, the same pieces as a ``.model`` and the library's processor of it
    (read once for both walks)."""
    meta = spm_files.read_gguf_metadata(gguf_models_dir / "ggml-vocab-nomic-bert-moe.gguf")
    pieces = list(zip(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"], meta["tokenizer.ggml.token_type"]))
    proto = build_model(pieces, trainer={3: 1}, normalizer={1: "nmt_nfkc", 2: bytes(meta["tokenizer.ggml.precompiled_charsmap"]),
                                                             3: 1, 4: 1, 5: 1})
    return meta, proto, spm.SentencePieceProcessor(model_proto=proto)


def test_the_t5_ugm_gives_the_library_ids(walk, t5):
    """llama.cpp's UGM (double-precision sums, unused pieces found) on XLM-R's vocabulary, where
    it and the library agree (single spaces, no special-token text); and the library's own model
    of the same pieces, walked in single precision, on the samples as they are."""
    from tokscope.core.formats.gguf_sentencepiece import tokenizer_from_gguf

    meta, proto, sp = t5
    tok = tokenizer_from_gguf(meta, "nomic-bert-moe")
    assert tok.model.llama_cpp
    for text in sample_texts():
        line = " ".join(text.split())
        assert tok.encode(line, disallowed_special=()) == sp.encode(line), line[:60]
    lib = from_model_bytes(proto, "xlmr.model")
    for text in sample_texts():
        assert lib.encode(text, disallowed_special=()) == sp.encode(text), text[:60]


# ----- the two walks, piece for piece, on random piece tables ------------------------------------

POOL = ["a", "b", "c", "é", "中", "👍", "\u0301", "▁", "\ud800"]


@st.composite
def tables(draw):
    alphabet = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=5, unique=True))
    texts = draw(st.lists(st.lists(st.sampled_from(alphabet), min_size=1, max_size=4).map("".join), max_size=25,
                          unique=True))
    # few distinct scores so paths tie; big ones so sums pass the library's rebasing point soon
    score = st.sampled_from([-1.0, -2.0, -0.5, -4.25, 0.0, 2.0, -10.0, -1.5, -3.3, -7.1e4, 6.5e4, -0.1])
    types = st.sampled_from([NORMAL, NORMAL, NORMAL, USER_DEFINED, UNUSED, CONTROL])
    rows = [(p, draw(score), draw(types)) for p in texts]
    byte_fallback = draw(st.booleans())
    rows.insert(draw(st.integers(0, len(rows))), ("<unk>", 0.0, UNKNOWN))
    if byte_fallback:
        rows += [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)]
    pieces = Pieces([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], byte_fallback=byte_fallback)
    letters = st.one_of(st.sampled_from(alphabet), st.sampled_from(alphabet), st.sampled_from(["z", "ж", "🎉", "\udfff"]))
    text = draw(st.lists(letters, min_size=1, max_size=40).map("".join))
    return pieces, text


def both_walks(compiled, model_of, text):
    """(compiled, pure) results of ``tokenize``, ``_path`` and ``best`` on fresh models; each
    walk's ``encode_ids`` gives its ``tokenize``'s ids."""
    out = []
    for module in (compiled, None):
        unigram_module.use_compiled(module is not None, module)
        model = model_of()
        tokens = model.tokenize(text)
        assert model_of().encode_ids(text) == [t for t, _, _ in tokens]
        out.append((tokens, model._path(text), model.best(text)))
    unigram_module.use_compiled(True)
    return out


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(case=tables(), llama_cpp=st.booleans(), repeat=st.sampled_from([1, 1, 3, 800]))
def test_the_compiled_walk_is_the_python_walk(compiled, case, llama_cpp, repeat):
    pieces, text = case
    text = text * repeat  # long texts: path scores pass 100000 and are rebased
    was = unigram_module.compiled_lattice()
    try:
        fast, pure = both_walks(compiled, lambda: SentencePieceUnigram(pieces, llama_cpp=llama_cpp), text)
    finally:
        unigram_module.use_compiled(was is not None, was)
    assert fast == pure


def test_rebasing_happens_and_agrees(compiled):
    """A table whose path scores pass 100000 within a few characters (the library rebases them
    there): the two walks agree on a text that is rebased thousands of times."""
    rows = [("<unk>", 0.0, UNKNOWN), ("a", -60000.0, NORMAL), ("b", -0.3, NORMAL), ("ab", -60000.25, NORMAL),
            ("ba", -60000.5, NORMAL), ("aba", -120000.6, NORMAL)]
    pieces = Pieces([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    rnd = random.Random(6)
    text = "".join(rnd.choice("aabx") for _ in range(20000))
    was = unigram_module.compiled_lattice()
    try:
        fast, pure = both_walks(compiled, lambda: SentencePieceUnigram(pieces), text)
    finally:
        unigram_module.use_compiled(was is not None, was)
    assert fast == pure
    assert {t for t, _, _ in fast[0]} >= {0, 1, 2}


def test_an_unknown_character_without_an_unknown_piece_is_the_same_error(compiled):
    """A table without an unknown piece (possible from GGUF) and no byte fallback: both walks
    give the same one-line error, never a token with a made-up id."""
    pieces = Pieces(["a", "b"], [-1.0, -2.0], [NORMAL, NORMAL], strict=False)
    was = unigram_module.compiled_lattice()
    try:
        for module in (compiled, None):
            unigram_module.use_compiled(module is not None, module)
            model = SentencePieceUnigram(pieces)
            assert model.tokenize("ab") == [(0, 0, 1), (1, 1, 2)]
            assert model.encode_ids("ab") == [0, 1]
            with pytest.raises(TokenizerFileError, match="unknown piece"):
                model.tokenize("axb")
            with pytest.raises(TokenizerFileError, match="unknown piece"):
                model.encode_ids("axb")
    finally:
        unigram_module.use_compiled(was is not None, was)


def test_the_compiled_table_is_not_pickled(compiled):
    import pickle

    pieces = Pieces(["<unk>", "a"], [0.0, -1.0], [UNKNOWN, NORMAL])
    was = unigram_module.compiled_lattice()
    try:
        unigram_module.use_compiled(True, compiled)
        model = SentencePieceUnigram(pieces)
        assert model.tokenize("aa") == [(1, 0, 1), (1, 1, 2)]
        copy = pickle.loads(pickle.dumps(model))
        assert copy.tokenize("aax") == [(1, 0, 1), (1, 1, 2), (0, 2, 3)]
    finally:
        unigram_module.use_compiled(was is not None, was)
