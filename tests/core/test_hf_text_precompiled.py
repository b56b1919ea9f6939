"""HF's Precompiled normalizer on real SentencePiece character maps (text and alignment).

The maps come from SentencePiece itself: a tiny Unigram model is trained (in a temporary folder)
with each of its built-in normalization rules, and the ``precompiled_charsmap`` read out of the
model file. Nothing is committed.
"""

from __future__ import annotations

import base64

import pytest
from hf_text_support import FUZZ, TRICKY, hf_alignment, sample_texts, texts
from hypothesis import given
from tokenizers import normalizers as N

from tokscope.core import normalizers as ours
from tokscope.core.text.errors import TokenizerFileError
from tokscope.core.text.normalized import NormalizedText
from tokscope.core.normalizers.precompiled import CharsMap, build_charsmap

RULES = ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf"]


def _fields(buf: bytes):
    """The fields of a protobuf message: ``(number, value)`` (varints and bytes only)."""
    i = 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(buf):
        key = varint()
        num, wire = key >> 3, key & 7
        if wire == 0:
            yield num, varint()
        elif wire == 2:
            n = varint()
            yield num, buf[i : i + n]
            i += n
        elif wire == 5:
            i += 4
        elif wire == 1:
            i += 8
        else:
            raise ValueError(wire)


def charsmap_of(model: bytes) -> bytes:
    for num, value in _fields(model):
        if num == 3:  # ModelProto.normalizer_spec
            for n2, v2 in _fields(value):
                if n2 == 2:  # NormalizerSpec.precompiled_charsmap
                    return v2
    return b""


@pytest.fixture(scope="module")
def charsmaps(tmp_path_factory):
    spm = pytest.importorskip("sentencepiece")
    folder = tmp_path_factory.mktemp("spm")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(sample_texts().values()), encoding="utf-8")
    out = {}
    for rule in RULES:
        prefix = folder / rule
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=str(prefix), vocab_size=2000, model_type="unigram", hard_vocab_limit=False,
            normalization_rule_name=rule, character_coverage=1.0, minloglevel=2,
        )
        out[rule] = charsmap_of((folder / f"{rule}.model").read_bytes())
        assert out[rule], rule
    return out


_CACHE: dict = {}


def pair(charsmaps, rule):
    if rule not in _CACHE:
        blob = charsmaps[rule]
        hf = N.Precompiled(blob)
        mine = ours.from_json({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()})
        _CACHE[rule] = (hf, mine)
    return _CACHE[rule]


def check(charsmaps, rule, text):
    hf, mine = pair(charsmaps, rule)
    want_text, want_spans = hf_alignment(hf, text)
    got = mine.normalize(NormalizedText.identity(text))
    assert got.text == want_text, (rule, text)
    assert got.alignments() == want_spans, (rule, text)
    assert mine.normalize_str(text) == want_text, (rule, text)


@pytest.mark.parametrize("rule", RULES)
def test_tricky(charsmaps, rule):
    for piece in TRICKY:
        check(charsmaps, rule, piece)
        check(charsmaps, rule, "a" + piece + " " + piece + "b")
    check(charsmaps, rule, " ".join(TRICKY))
    check(charsmaps, rule, "")


@pytest.mark.parametrize("rule", RULES)
@FUZZ
@given(text=texts)
def test_fuzz(charsmaps, rule, text):
    check(charsmaps, rule, text)


@pytest.mark.parametrize("rule", RULES)
def test_samples(charsmaps, rule):
    for text in sample_texts().values():
        check(charsmaps, rule, text)


@pytest.mark.parametrize("rule", ["nmt_nfkc"])
def test_every_code_point(charsmaps, rule):
    hf, mine = pair(charsmaps, rule)
    items = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    text = "a".join(items)
    assert mine.normalize_str(text) == hf.normalize_str(text)


def test_quirks_on_a_handmade_map():
    """Shortest key wins and drops the rest of the grapheme; a grapheme of 6 bytes or more is
    looked up character by character; a replacement by nothing at the very start shifts HF's
    alignment of what follows."""
    blob = build_charsmap({"e": "E", "e\u0301": "É", "\u0301": "", "\u200b": "", "x": "yz", "\r": "R"})
    hf, mine = N.Precompiled(blob), ours.Precompiled(blob)
    for text in ["e\u0301", "e\u0301\u0301\u0301", "\u200bab", "\u200b\u200bxab", "ab\u200bc", "xe\u0301x",
                 "\r\n", "a\r\nb", "\u0301x", "x\u200b"]:
        want_text, want_spans = hf_alignment(hf, text)
        got = mine.normalize(NormalizedText.identity(text))
        assert (got.text, got.alignments()) == (want_text, want_spans), text


def test_bad_blobs():
    with pytest.raises(TokenizerFileError):
        CharsMap(b"\x01")
    with pytest.raises(TokenizerFileError):
        CharsMap(b"\xff\xff\x00\x00abc")
