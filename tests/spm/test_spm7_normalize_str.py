"""The SentencePiece normalizer's text-only path (``normalize_str``, what encoding ids runs: no
alignment, and the characters that step to one other character the same way everywhere replaced in
a copy of the text rather than stepped one by one) makes the text of the aligned path
(``normalize``) and of the library's own ``normalize``: on hand-made charsmaps whose keys hold those
characters inside longer keys and user-defined pieces, whose replacements are spaces, nothing, or
two spaces, and on the trained models' charsmaps."""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.formats.sentencepiece_model import build_model, from_model_bytes
from tokscope.core.models.sentencepiece_pieces import NORMAL, UNKNOWN, USER_DEFINED
from tokscope.core.normalizers.precompiled import build_charsmap
from tokscope.core.text.normalized import NormalizedText

spm = pytest.importorskip("sentencepiece")

EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", "80"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

#: "\n", "，", "\t" and "\u3000" step to one other character wherever they are, and "\n" and "，"
#: also sit inside longer keys and user-defined pieces; "\u2028" steps to a space alone but starts a
#: longer key; "\u200b" becomes nothing, "q" two spaces, "x" " y "
RULES = {"\n": " ", "ab": "X", "a": "A", "b\n": "Y", "，": ",", "c，d": "Z", "\u2028": " ", "\u2028\u2028": "L",
         "\u200b": "", "\t": " ", "\u3000": " ", "q": "  ", "x": " y ", "é": "e", "e\u0301": "é", " ": " "}
USER = ["<\n>", "@，", "zz"]
CHARS = st.sampled_from(["\n", "\n\n", "，", "\u2028", "a", "b", "c", "d", "\u200b", "\t", "\u3000", " ", "  ", "q", "x", "é",
                         "e\u0301", "e", "<", ">", "@", "z", "中", "▁"])
TEXTS = st.lists(CHARS, max_size=24).map("".join)


def _library_charsmap(rules: dict[str, str]) -> bytes:
    """``build_charsmap`` with the trie padded to whole kilobytes, as the library requires."""
    blob = build_charsmap(rules)
    (size,) = struct.unpack_from("<I", blob, 0)
    padded = -(-size // 1024) * 1024
    return struct.pack("<I", padded) + blob[4:4 + size] + bytes(padded - size) + blob[4 + size:]


def _model(remove: int, escape: int, prefix: int, suffix: int) -> bytes:
    pieces = [("<unk>", 0.0, UNKNOWN), ("a", -1.0, NORMAL)] + [(u, 0.0, USER_DEFINED) for u in USER]
    return build_model(pieces, trainer={3: 1, 24: suffix},
                       normalizer={1: "custom", 2: _library_charsmap(RULES), 3: prefix, 4: remove, 5: escape})


FLAGS = [(1, 1, 1, 0), (0, 1, 1, 0), (1, 0, 1, 0), (1, 1, 0, 0), (1, 1, 1, 1), (0, 0, 0, 0)]
_LOADED: dict = {}


def _pair(flags):
    if flags not in _LOADED:
        data = _model(*flags)
        _LOADED[flags] = (from_model_bytes(data, "custom"), spm.SentencePieceProcessor(model_proto=data))
    return _LOADED[flags]


def _check(normalizer, text: str, library=None) -> None:
    aligned = normalizer.normalize(NormalizedText.identity(text)).text
    assert normalizer.normalize_str(text) == aligned, text
    if library is not None:
        want = library.normalize(text)
        if not normalizer.escape_whitespaces:
            assert aligned == want, text
        else:
            assert aligned == want, text


@pytest.mark.parametrize("flags", FLAGS, ids=["default", "keep-spaces", "no-escape", "no-prefix", "suffix", "bare"])
@FUZZ
@given(text=TEXTS)
def test_hand_made_charsmap(flags, text):
    tok, library = _pair(flags)
    _check(tok.normalizer, text, library)


def test_hand_made_charsmap_examples():
    tok, library = _pair(FLAGS[0])
    n = tok.normalizer
    # "\u2028" starts a longer key; "\u200b" and "q" do not become one character
    assert n._copied(set("\n，\u200b\tq\u2028")) == {"\n": " ", "，": ",", "\t": " "}
    for text in ["a\nb\nc", "b\n\n\n x", "<\n> @，，c，d", "\u2028\u2028 \u2028x", "\u200b \u200b a \t\u3000 b\n", "\n\n\n\n", "q x q",
                 " \n a", "e\u0301é"]:
        _check(n, text, library)


CONFIGS = ["unigram", "user_defined", "case_fold", "identity", "suffix", "no_dummy_prefix", "nfkc",
           "whitespace_pieces", "unigram_whitespace_pieces"]
REAL = st.lists(st.sampled_from([" ", "  ", "\n", "\n\n", "\t", "\u3000", " \n ", "ﬁ", "ｈ", "Å", "½", "a", "word",
                                 "foo", "<tool>", "▁bar", "@@", "吾輩", "\u200b", "\u200c", "x\u0301", "\r\n", "，",
                                 "１２", "ｶﾞ", "ǅ", "\u00a0", "\u2028"]), max_size=20).map("".join)


@pytest.mark.parametrize("config", CONFIGS)
@FUZZ
@given(text=REAL)
def test_trained_charsmaps(trained_spm, config, text):
    key = ("trained", config)
    if key not in _LOADED:
        path = trained_spm(config)
        _LOADED[key] = (from_model_bytes(path.read_bytes(), config), spm.SentencePieceProcessor(model_file=str(path)))
    tok, library = _LOADED[key]
    _check(tok.normalizer, text, library)
