"""SentencePiece ``.model`` files read by the core give the ids of ``SentencePieceProcessor.encode``
on every text: the sentencepiece sdist's test models, Mistral's real models, and models trained
here in every configuration that changes how a text is cut (see :data:`spm_files.CONFIGS`).

The library refuses a Python string with a lone surrogate (pybind cannot cast it); tokscope
replaces each by U+FFFD first (as tiktoken does), so such a text is held to the library's ids of
that repaired text.
"""

from __future__ import annotations

import os
import pickle

import pytest
import spm_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.document.document import Document
from tokscope.core.explain.why import explain_text
from tokscope.core.formats.sentencepiece_model import from_model_bytes
from tokscope.core.tokenizer.tokenizer import fix_surrogates

spm = pytest.importorskip("sentencepiece")

EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

#: texts that catch each rule: whitespace runs and ends, NFKC and case folding, user-defined and
#: control look-alikes, byte pieces' spellings, digits, scripts without spaces, emoji sequences
TEXTS = [
    "", " ", "   ", "a", " a", "a ", "  Hello   world  ", "Hello world", "tab\tnew\nline\r\nend", "\u3000x\u3000",
    "\u200b", "\u200b\u200b", "x\u200b", "a\u200b b", "\ufffd", "a\ufffdb", "\x00", "a\x00b", "ﬁne ｈｅｌｌｏ １２３",
    "e\u0301 é Å Å", "ΣΑΣ ß ẞ İstanbul ǅ ı", "Ⅻ ½ ² 𝟘", "吾輩は猫である。名前はまだ無い。", "中文字 한국어 ไทย",
    "שָׁלוֹם مَرْحَبًا", "क्षि नमस्ते", "👍🏽 👨\u200d👩\u200d👧 🏳\ufe0f\u200d🌈 🇫🇷 1\ufe0f\u20e3", "🎉🎉🎉",
    "<s> </s> <unk> <pad> <0x41> <ctl>", "<s>x</s>", "<tool><tool>", "foo@@bar<tool>ab abab foobar", "@@@", "▁bar bar ▁",
    "▁", "▁▁ ▁", "12345 3.14 2024-06-01", "x" * 40, "a\ud800b", "\udfff", "\ud83c\udf89", "don't stop", "a  b   c    d",
]

chars = st.sampled_from(list("ab é\u0301ßİΣ中文한👍🏽\u200b\u3000\t\n0123456789▁<>@") + ["<tool>", "foo", "ab", "<s>", "ﬁ",
                                                                                     "ｈ", "  ", "\ud800", "🎉"])
texts_st = st.one_of(st.lists(chars, max_size=12).map("".join), st.text(max_size=12),
                     st.text(st.characters(codec="utf-8"), max_size=10))


def reference_ids(sp, text: str) -> list[int]:
    return sp.encode(fix_surrogates(text))


def check(tok, sp, text: str) -> None:
    assert tok.encode(text, disallowed_special=()) == reference_ids(sp, text), text


def load(path):
    return from_model_bytes(path.read_bytes(), path.name, str(path))


def sdist_cases():
    return [pytest.param(name, id=name) for name in spm_files.SDIST_MODELS]


@pytest.fixture(scope="module")
def sdist(spm_sdist_dir):
    return {name: (load(spm_sdist_dir / name), spm.SentencePieceProcessor(model_file=str(spm_sdist_dir / name)))
            for name in spm_files.SDIST_MODELS}


@pytest.mark.parametrize("name", sdist_cases())
def test_sdist_models_texts(sdist, name):
    tok, sp = sdist[name]
    for text in [*TEXTS, "\n".join(TEXTS), *spm_files.corpus()[::5]]:
        check(tok, sp, text)


@pytest.mark.parametrize("name", sdist_cases())
@FUZZ
@given(text=texts_st)
def test_sdist_models_property(sdist, name, text):
    tok, sp = sdist[name]
    check(tok, sp, text)


MISTRAL = spm_files.mistral_models()


@pytest.mark.skipif(not MISTRAL, reason="mistral_common is not installed")
@pytest.mark.parametrize("path", MISTRAL, ids=[p.name for p in MISTRAL])
def test_mistral_models(path):
    tok = load(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert tok.kind == "BPE by score (SentencePiece)" and tok.n_vocab == sp.get_piece_size()
    for text in [*TEXTS, "\n".join(TEXTS), *spm_files.corpus()[::9]]:
        check(tok, sp, text)


@pytest.mark.parametrize("config", list(spm_files.CONFIGS))
def test_trained_configurations(trained_spm, config):
    path = trained_spm(config)
    tok = load(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert tok.n_vocab == sp.get_piece_size()
    for i in range(sp.get_piece_size()):
        assert tok.token_str(i) == sp.id_to_piece(i)
    for text in [*TEXTS, "\n".join(TEXTS), *spm_files.corpus()[::3]]:
        check(tok, sp, text)


@pytest.mark.parametrize("config", ["unigram", "bpe", "user_defined", "bpe_byte_fallback", "case_fold", "suffix",
                                    "whitespace_pieces", "char", "word"])
@settings(FUZZ, max_examples=max(10, EXAMPLES // 2))
@given(text=texts_st)
def test_trained_property(trained_spm, config, text):
    path = trained_spm(config)
    check(load_cached(path), sp_cached(path), text)


_LOADED: dict = {}


def load_cached(path):
    if path not in _LOADED:
        _LOADED[path] = load(path)
    return _LOADED[path]


def sp_cached(path):
    key = ("sp", path)
    if key not in _LOADED:
        _LOADED[key] = spm.SentencePieceProcessor(model_file=str(path))
    return _LOADED[key]


@pytest.mark.parametrize("config", ["unigram", "suffix", "user_defined", "unigram_byte_fallback"])
def test_long_texts_score_as_the_library_adds(trained_spm, spm_sdist_dir, config):
    """Over a long text the library's single-precision path score grows past 100000 and is
    rebased; the words tokscope reuses and the ones it runs again from the exact score both
    give the library's ids."""
    text = "\n".join(spm_files.corpus()) * 5
    for path in (trained_spm(config), spm_sdist_dir / "botchan_en_unigram_1000.model"):
        tok = load_cached(path)
        assert tok.encode(text) == sp_cached(path).encode(text)


# ----- the pipeline's other views agree with encode -----------------------------------------------


def _offsets_comparable(pieces, k: int) -> bool:
    """A piece whose offsets the library writes another way: a byte piece (the library gives
    all but the last byte of a character an empty span; tokscope gives each its byte), and pieces
    that share one original character (an NFKC ligature cut in two)."""
    p = pieces[k]
    if p.partial:
        return False
    near = [pieces[j] for j in (k - 1, k + 1) if 0 <= j < len(pieces)]
    return not any(q.start < p.end and p.start < q.end for q in near)


@pytest.mark.parametrize("config", ["unigram", "bpe", "case_fold", "user_defined", "unigram_byte_fallback", "suffix",
                                    "identity", "char", "word"])
def test_pieces_offsets_and_document(trained_spm, config):
    path = trained_spm(config)
    tok = load_cached(path)
    sp = sp_cached(path)
    for text in [t for t in TEXTS if fix_surrogates(t) == t] + ["\n".join(TEXTS[:20])]:
        pieces = tok.pieces(text, disallowed_special=())
        ids = [p.id for p in pieces]
        assert ids == sp.encode(text)
        proto = sp.encode(text, return_type="proto").pieces
        for k, (ours, theirs) in enumerate(zip(pieces, proto)):
            if _offsets_comparable(pieces, k) and ours.byte_end > ours.byte_start:
                assert (ours.byte_start, ours.byte_end) == (theirs.begin, theirs.end), (text, k)
        # pieces stay inside the text and in order
        assert all(0 <= p.start <= p.end <= len(text) for p in pieces)
        assert all(a.start <= b.start for a, b in zip(pieces, pieces[1:]))
        doc = Document.build(tok, text)
        assert list(doc.ids) == ids
        # the library runs its model over the whole normalized text: one chunk, in the form the model saw
        chunks = tok.chunks(text)
        assert len(chunks) == (1 if ids else 0)
        if chunks:
            assert (chunks[0].form or chunks[0].text) == sp.normalize(text)


def test_unigram_why_and_facts(trained_spm):
    tok = load_cached(trained_spm("unigram"))
    why = explain_text(tok, "Hello world")
    assert why.chunks and why.chunks[0].method == "Unigram"
    best = why.chunks[0].unigram.best
    assert tuple(best.ids) == tuple(tok.encode("Hello world"))
    assert why.chunks[0].unigram.alternatives, "the n-best search finds other segmentations"
    assert all(alt.score <= best.score + 1e-4 for alt in why.chunks[0].unigram.alternatives)


def test_pickle_round_trip(trained_spm):
    for config in ("unigram", "bpe", "char", "word", "user_defined"):
        tok = load_cached(trained_spm(config))
        text = "Hello  world foo<tool>ab 中文 🎉"
        again = pickle.loads(pickle.dumps(tok))
        assert again.encode(text) == tok.encode(text) == sp_cached(trained_spm(config)).encode(text)


def test_decode_round_trips(trained_spm):
    for config in ("unigram", "bpe_byte_fallback", "identity"):
        tok = load_cached(trained_spm(config))
        sp = sp_cached(trained_spm(config))
        for text in ["Hello world", "中文 🎉 x", "a  b"]:
            ids = tok.encode(text)
            assert tok.decode(ids) == sp.decode(ids)
