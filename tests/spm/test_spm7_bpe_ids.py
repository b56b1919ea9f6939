"""SentencePiece BPE's ids without offsets (``SentencePieceBPE.encode_ids``: each word's ids kept
whole, an unknown run fused where two words meet) equal the ids of its tokens
(``tokenize`` then ``Pieces.finish`` over the whole text) and the library's ``encode``, on the
trained BPE configurations and on a model with no ``▁`` piece, where unknown runs cross words."""

from __future__ import annotations

import os

import pytest
import spm_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.formats.sentencepiece_model import build_model, from_model_bytes
from tokscope.core.models.sentencepiece_pieces import CONTROL, NORMAL, UNKNOWN
from tokscope.core.tokenizer.tokenizer import fix_surrogates

spm = pytest.importorskip("sentencepiece")

EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

CONFIGS = ["bpe", "bpe_byte_fallback", "bpe_user_defined", "bpe_suffix", "bpe_no_dummy_prefix", "whitespace_pieces",
           "nfkc", "split_digits"]
#: unknown characters (for these models) next to spaces and known ones
chars = st.sampled_from(list("ab x é中文한👍\u200b\u3000\t\n09▁<>@") + ["<tool>", "foo", "ab", "  ", "🎉", "\ud800", "ﬁ"])
texts = st.lists(chars, max_size=16).map("".join)

#: no "▁" piece: a word's leading space is unknown, so unknown runs cross from one word into the next
NO_SPACE = build_model([("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL), ("a", -1.0, NORMAL),
                        ("b", -2.0, NORMAL), ("ab", -1.5, NORMAL), ("▁a", -3.0, NORMAL)],
                       trainer={3: 2}, normalizer={1: "identity", 3: 1, 4: 1, 5: 1})
_LOADED: dict = {}


def _pair(key, make):
    if key not in _LOADED:
        _LOADED[key] = make()
    return _LOADED[key]


def _check(tok, sp, text: str) -> None:
    normalized = tok.normalizer.normalize_str(fix_surrogates(text)) if tok.normalizer is not None else text
    model = tok.model
    fresh = type(model)(model.table, treat_whitespace_as_suffix=model._suffix)  # empty word caches
    assert fresh.encode_ids(normalized) == [t[0] for t in fresh.tokenize(normalized)], normalized
    assert model.encode_ids(normalized) == [t[0] for t in model.tokenize(normalized)], normalized
    assert tok.encode(text, disallowed_special=()) == sp.encode(fix_surrogates(text)), text


@pytest.mark.parametrize("config", CONFIGS)
@FUZZ
@given(text=texts)
def test_trained_bpe_ids(trained_spm, config, text):
    path = trained_spm(config)
    tok = _pair(path, lambda: from_model_bytes(path.read_bytes(), path.name))
    sp = _pair(("sp", path), lambda: spm.SentencePieceProcessor(model_file=str(path)))
    _check(tok, sp, text)


@FUZZ
@given(text=st.lists(st.sampled_from(list("ab xy中 ") + ["  "]), max_size=14).map("".join))
def test_unknown_runs_cross_words(text):
    tok = _pair("no-space", lambda: from_model_bytes(NO_SPACE, "no-space"))
    sp = _pair("no-space-sp", lambda: spm.SentencePieceProcessor(model_proto=NO_SPACE))
    _check(tok, sp, text)


def test_a_crossing_run_is_one_unknown():
    tok = from_model_bytes(NO_SPACE, "no-space")
    sp = spm.SentencePieceProcessor(model_proto=NO_SPACE)
    text = "ax yb a xy"
    # "▁a" "x" | "▁y" "b" | "▁a" | "▁xy": the x of one word and the "▁y" of the next are one unknown
    assert tok.encode(text) == sp.encode(text) == [6, 0, 4, 6, 0]


def test_real_text_whole(trained_spm):
    path = trained_spm("bpe")
    tok = from_model_bytes(path.read_bytes(), path.name)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    text = "\n".join(spm_files.corpus())
    assert tok.encode(text, disallowed_special=()) == sp.encode(text)
