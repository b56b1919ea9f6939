"""HF normalizers: the normalized text and every character's alignment equal ``tokenizers``'."""

from __future__ import annotations

import json

import pytest
from hf_text_support import FUZZ, TRICKY, hf_alignment, sample_texts, texts
from hypothesis import given
from tokenizers import Regex
from tokenizers import normalizers as N

from tokscope.core import normalizers as ours
from tokscope.core.text.errors import TokenizerFileError, UnsupportedComponentError
from tokscope.core.text.normalized import NormalizedText

CASES = {
    "NFC": N.NFC(),
    "NFD": N.NFD(),
    "NFKC": N.NFKC(),
    "NFKD": N.NFKD(),
    "Lowercase": N.Lowercase(),
    "Strip": N.Strip(),
    "StripLeft": N.Strip(left=True, right=False),
    "StripRight": N.Strip(left=False, right=True),
    "StripAccents": N.StripAccents(),
    "NFD+StripAccents": N.Sequence([N.NFD(), N.StripAccents()]),
    "ReplaceSpace": N.Replace(" ", "▁"),
    "ReplaceMulti": N.Replace("ab", "XYZ"),
    "ReplaceToNothing": N.Replace("a", ""),
    "ReplaceEmpty": N.Replace("", "_"),
    "ReplaceRegex": N.Replace(Regex(r"\s+"), " "),
    "ReplaceRegexEmpty": N.Replace(Regex(r"x*"), "-"),
    "ReplaceRegexAnchors": N.Replace(Regex(r"^ +| +$"), ""),
    "ReplaceRegexProps": N.Replace(Regex(r"[\p{P}\p{S}]+"), "*"),
    "Prepend": N.Prepend("▁"),
    "PrependLong": N.Prepend("<<"),
    "Bert": N.BertNormalizer(),
    "BertCased": N.BertNormalizer(lowercase=False),
    "BertNoClean": N.BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=True, lowercase=True),
    "BertAccentsOnly": N.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
    "BertLowerKeepAccents": N.BertNormalizer(strip_accents=False, lowercase=True),
    "Nmt": N.Nmt(),
    "ByteLevel": N.ByteLevel(),
    "Llama2": N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")]),
    "Gemma": N.Replace(" ", "▁"),
    "NFKC+Lower+Strip": N.Sequence([N.NFKC(), N.Lowercase(), N.Strip()]),
    "NFD+Lower+StripAccents+Strip": N.Sequence([N.NFD(), N.Lowercase(), N.StripAccents(), N.Strip()]),
}


_OURS: dict = {}


def _ours(name: str):
    if name not in _OURS:
        _OURS[name] = ours.from_json(_hf_json(CASES[name]))
    return _OURS[name]


def _hf_json(hf) -> dict:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    tok = Tokenizer(WordLevel({"a": 0}, unk_token="a"))
    tok.normalizer = hf
    return json.loads(tok.to_str())["normalizer"]


def check(name: str, text: str, offset: int = 0) -> None:
    hf = CASES[name]
    want_text, want_spans = hf_alignment(hf, text)
    n = _ours(name)
    got = n.normalize(NormalizedText.identity(text))
    assert got.text == want_text, (name, text)
    assert got.alignments() == want_spans, (name, text)
    assert (got.original_start, got.original_end) == (0, len(text))
    assert n.normalize_str(text) == want_text, (name, text)
    if offset:
        shifted = n.normalize(NormalizedText.identity(text, offset))
        assert shifted.alignments() == [(a + offset, b + offset) for a, b in want_spans]


@pytest.mark.parametrize("name", sorted(CASES))
def test_tricky_pieces(name):
    for piece in TRICKY:
        check(name, piece)
        check(name, "a" + piece + " b " + piece, offset=5)
    check(name, "")
    check(name, " ".join(TRICKY))


@pytest.mark.parametrize("name", sorted(CASES))
@FUZZ
@given(text=texts)
def test_fuzz(name, text):
    check(name, text)


@pytest.mark.parametrize("name", sorted(CASES))
def test_samples(name):
    for path, text in sample_texts().items():
        check(name, text)


def test_every_code_point_through_the_forms():
    """Each form on every code point alone, and each code point after a base letter and before
    a combining mark (composition, reordering), against HF."""
    items = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        hf = getattr(N, form)()
        text = "\n".join(items)
        want = N.Sequence([hf]).normalize_str(text)
        assert _ours(form).normalize_str(text) == want, form
        text = "\n".join("a" + c + "\u0316" for c in items[:0x3000] + items[0x10000:0x12000])
        assert _ours(form).normalize_str(text) == hf.normalize_str(text), form


def test_every_code_point_through_character_classes():
    items = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    text = "|".join(items)
    for hf, name in [
        (N.Lowercase(), "Lowercase"),
        (N.StripAccents(), "StripAccents"),
        (N.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True), "Bert"),
        (N.Nmt(), "Nmt"),
    ]:
        assert _ours(name).normalize_str(text) == hf.normalize_str(text), name


def test_strip_accents_none_follows_lowercase():
    assert ours.BertNormalizer(strip_accents=None, lowercase=True).normalize_str("Éa") == "ea"
    assert ours.BertNormalizer(strip_accents=None, lowercase=False).normalize_str("Éa") == "Éa"
    assert ours.BertNormalizer(strip_accents=True, lowercase=False).normalize_str("Éa") == "Ea"


def test_from_json_errors():
    with pytest.raises(UnsupportedComponentError, match="normalizer 'Frobnicate'"):
        ours.from_json({"type": "Frobnicate"})
    with pytest.raises(TokenizerFileError, match="strip_left"):
        ours.from_json({"type": "Strip", "strip_right": True})
    with pytest.raises(TokenizerFileError):
        ours.from_json({"type": "Replace", "pattern": {"Glob": "*"}, "content": ""})
    with pytest.raises(TokenizerFileError):
        ours.from_json({"type": "Precompiled", "precompiled_charsmap": "!!!"})
    with pytest.raises(UnsupportedComponentError, match=r"normalizer 'Replace'.*\\K"):
        ours.from_json({"type": "Replace", "pattern": {"Regex": r"a\Kb"}, "content": ""})
    assert ours.from_json(None) is None


def test_local_flags():
    assert _ours("NFC").local and _ours("Lowercase").local and _ours("ReplaceSpace").local
    assert not _ours("Strip").local and not _ours("Prepend").local and not _ours("Llama2").local
    assert not _ours("ReplaceRegex").local


def test_one_to_one_maps_keep_identity_alignment():
    text = "Hello World " * 100_000
    t = _ours("Lowercase").normalize(NormalizedText.identity(text))
    assert t.is_identity
    t = _ours("ReplaceSpace").normalize(NormalizedText.identity(text))
    assert t.is_identity and t.text.count("▁") == 200_000
    t = _ours("NFC").normalize(NormalizedText.identity(text))
    assert t.is_identity
