"""The SentencePiece normalizer's shortcuts keep the library's ids and offsets: a character whose
step does not depend on what follows it is remembered, and the rest of a run of spaces (each
dropped and given to the piece before it) is taken at once. Texts made of space runs, newlines,
tabs, ideographic spaces and characters the charsmap replaces, against ``sentencepiece``'s ids and
its pieces' byte offsets, and against the same normalizer with the shortcuts bypassed.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.formats.sentencepiece_model import from_model_bytes
from tokscope.core.normalizers.sentencepiece import SentencePieceNormalizer
from tokscope.core.text.normalized import NormalizedText

spm = pytest.importorskip("sentencepiece")

EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

CONFIGS = ["unigram", "user_defined", "case_fold", "identity", "suffix", "no_dummy_prefix"]

parts = st.sampled_from([" ", "  ", "   ", "      ", "\n", "\n\n", "\t", "\u3000", " \n ", "ﬁ", "ｈ", "Å", "½", "a", "word",
                         "foo", "<tool>", "▁bar", "@@", "吾輩", "\u200b", "x\u0301", "\r\n", "  \t  "])
spaced = st.lists(parts, max_size=20).map("".join)


class Stepwise(SentencePieceNormalizer):
    """The same normalizer without its shortcuts: every step worked out where it is."""

    def _step(self, text: str, pos: int) -> tuple[int, str]:
        step = super()._step(text, pos)
        self._memo.clear()
        return step

    def _plain_space(self) -> bool:
        return False


def stepwise(normalizer: SentencePieceNormalizer) -> Stepwise:
    return Stepwise(normalizer.charsmap, add_dummy_prefix=normalizer.add_dummy_prefix,
                    remove_extra_whitespaces=normalizer.remove_extra_whitespaces,
                    escape_whitespaces=normalizer.escape_whitespaces,
                    treat_whitespace_as_suffix=normalizer.treat_whitespace_as_suffix,
                    user_symbols=normalizer.matcher.symbols, name=normalizer.name)


@pytest.fixture(scope="module")
def models(trained_spm):
    out = {}
    for name in CONFIGS:
        path = trained_spm(name)
        out[name] = (from_model_bytes(path.read_bytes(), path.name), spm.SentencePieceProcessor(model_file=str(path)))
    return out


@pytest.mark.parametrize("name", CONFIGS)
@FUZZ
@given(text=spaced)
def test_space_runs_keep_the_library_ids_and_offsets(models, name, text):
    tok, sp = models[name]
    pieces = tok.pieces(text, disallowed_special=())
    assert [p.id for p in pieces] == sp.encode(text), text
    proto = sp.encode(text, return_type="proto").pieces
    for k, (ours, theirs) in enumerate(zip(pieces, proto)):
        near = [pieces[j] for j in (k - 1, k + 1) if 0 <= j < len(pieces)]
        shared = any(q.start < ours.end and ours.start < q.end for q in near)
        if not ours.partial and not shared and ours.byte_end > ours.byte_start:
            assert (ours.byte_start, ours.byte_end) == (theirs.begin, theirs.end), (text, k)


@pytest.mark.parametrize("name", CONFIGS)
@FUZZ
@given(text=spaced)
def test_the_shortcuts_change_no_alignment(models, name, text):
    normalizer = models[name][0].normalizer
    assert isinstance(normalizer, SentencePieceNormalizer)
    plain = stepwise(normalizer)
    for _ in range(2):  # the second time from what the first one remembered
        got = normalizer.normalize(NormalizedText.identity(text))
        want = plain.normalize(NormalizedText.identity(text))
        assert got.text == want.text
        assert [got.original_span(i, i + 1) for i in range(len(got.text))] == \
               [want.original_span(i, i + 1) for i in range(len(want.text))]
        assert normalizer.normalize_str(text) == want.text
