"""The compiled Precompiled normalization (``pcm_*`` of ``merge.c``) held to the pure-Python one
(the oracle) and to Hugging Face's ``Precompiled``, on hand-made and real SentencePiece charsmaps,
and the joiner table it relies on checked against the installed ``regex`` module."""

from __future__ import annotations

from array import array

import base64

import pytest
import regex
from compiled_merge import _with_abi
from hf_text_support import FUZZ, TRICKY, sample_texts, texts
from hypothesis import given
from hypothesis import strategies as st

from tokscope.core.normalizers import precompiled as P
from tokscope.core.normalizers.precompiled import CharsMap, build_charsmap
from tokscope.core.text.errors import TokenizerFileError
from tokscope.core.text.unicode import code_points, parse_ranges

MODULE = _with_abi("PCM_ABI")
needs_compiled = pytest.mark.skipif(MODULE is None, reason="no C compiler to build the compiled charsmap")

#: characters that join graphemes, or are replaced by real maps, or stand next to them
ALPHABET = ("ae \t\n\r\x00\u0301\u0308\u0323\u200d\u200b\ufe0f\u20e3\u0915\u094d\u0937\u093f\u0600"
            "\u1100\u1161\u11a8\uac00\uac01\U0001F1EB\U0001F1F7\U0001F468\U0001F469\u4e00\uff48\ufb01"
            "\u00c5\u212b\U0001d15e\U00010ef1\u0e44\u0e17\u0e22\u05e9\u05b8\ud800\udfff\u3000\xa0")
alphabet_text = st.text(st.sampled_from(ALPHABET), max_size=24)
rules = st.dictionaries(st.text(st.sampled_from(ALPHABET.replace("\ud800", "").replace("\udfff", "").replace("\x00", "")),
                                min_size=1, max_size=3),
                        st.text(st.sampled_from("xyz\u0301é\U0001F600 "), max_size=3), min_size=1, max_size=12)


class compiled_on:
    """The compiled charsmap in use inside the block (whatever was in use comes back after)."""

    def __enter__(self) -> None:
        self.was = P.compiled_charsmap()
        P.use_compiled(True, MODULE)

    def __exit__(self, *exc) -> None:
        P.use_compiled(self.was is not None, self.was or MODULE)


def both(cm: CharsMap, text: str) -> tuple[str, str]:
    """``(compiled, pure)`` normalize_str of ``text``."""
    with compiled_on():
        got = cm.normalize_str(text)
    return got, cm._normalize_str(text)


def test_joiners_cover_the_regex_module():
    """Every character :func:`~.graphemes` may join to a neighbour is in ``JOINERS`` (between two
    others it always cuts): a newer ``regex`` with new joiners fails here, not silently."""
    cls = (r"[\r\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=RI}\p{GCB=Prepend}\p{GCB=SpacingMark}\p{GCB=L}\p{GCB=V}\p{GCB=T}"
           + P._PREPEND + "]")
    every = (array("I", range(0xD800)).tobytes().decode("utf-32-le")
             + array("I", range(0xE000, 0x110000)).tobytes().decode("utf-32-le"))
    want = {ord(m.group()) for m in regex.finditer(cls, every)} | set(code_points("GRAPHEME_SPLIT"))
    have = set()
    for first, last in parse_ranges(P.JOINERS):
        have.update(range(first, last + 1))
    assert want - have == set()
    # and the cut itself, between non-joiners of every kind met in text
    others = [c for c in "a \n\x00\u4e00\uac00\uac01\U0001F468\u00c5\ufb01\u0e44\u3000\ud800" if ord(c) not in have]
    for a in others:
        for b in others:
            assert P.graphemes(a + b) == [a, b], (a, b)


@needs_compiled
@FUZZ
@given(rules=rules, text=alphabet_text)
def test_compiled_equals_python_on_handmade_maps(rules, text):
    cm = CharsMap(build_charsmap(rules))
    got, want = both(cm, text)
    assert got == want
    got, want = both(cm, text + text)  # the stretches met again come from the cache
    assert got == want


@needs_compiled
def test_compiled_on_line_breaks_and_marks():
    """A joiner at the very start, ``\r\n`` (one grapheme) and marks after a replaced character."""
    cm = CharsMap(build_charsmap({"\r": " ", "\n": "N", "e": "E", "\u0301": "", "a": "Q"}))
    for text in ["\r\n", "\r\nx", "x\r\n", "\r", "\n\r", "\r\r\n\n", "\u0301", "\u0301a", "ae\u0301a", "e\u0301\r\n"]:
        got, want = both(cm, text)
        assert got == want, text


@needs_compiled
@FUZZ
@given(text=texts)
def test_compiled_equals_python_on_wide_text(text):
    cm = CharsMap(build_charsmap({"e\u0301": "é", "\u0301": "", "\r": "R", "\uff48": "h", "\u200d": "", "a": "aa"}))
    got, want = both(cm, text)
    assert got == want


def _t5_charsmap() -> bytes:
    hf_files = pytest.importorskip("hf_files")
    try:
        return hf_files._unigram_tokenizer(False)[1]
    except hf_files.Missing as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def real():
    """``(tokscope's CharsMap, HF's Precompiled)`` of a real SentencePiece charsmap (nmt_nfkc)."""
    from tokenizers import normalizers as N

    blob = _t5_charsmap()
    return CharsMap(blob), N.Precompiled(blob)


@needs_compiled
@FUZZ
@given(text=texts)
def test_compiled_equals_hf_on_a_real_map(real, text):
    cm, hf = real
    got, want = both(cm, text)
    assert got == want == hf.normalize_str(text)


@needs_compiled
def test_compiled_on_samples_and_tricky_text(real):
    cm, hf = real
    for text in [*sample_texts().values(), " ".join(TRICKY), "".join(TRICKY), "a".join(TRICKY)]:
        got, want = both(cm, text)
        assert got == want == hf.normalize_str(text)


@needs_compiled
def test_compiled_on_every_code_point(real):
    cm, hf = real
    text = "a".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    with compiled_on():  # the Python path is held to HF on every code point by test_hf_text_precompiled
        assert cm.normalize_str(text) == hf.normalize_str(text)


@needs_compiled
def test_hostile_blobs_and_arguments():
    """A replacement offset past the strings, or inside a character, gives what the Python path
    gives (an empty replacement; the one-line error); bad tables and arguments are errors."""
    blob = build_charsmap({"a": "é", "b": "x"})
    size = int.from_bytes(blob[:4], "little")
    strings = blob[4 + size:]
    assert strings == "é\0x\0".encode()
    cut = blob[: 4 + size] + strings[1:]  # "a" now starts inside "é"; "b" past the end
    cm = CharsMap(blob[: 4 + size] + "é\0".encode())
    got, want = both(cm, "abc\u0301")
    assert got == want == "éc\u0301"
    with pytest.raises(TokenizerFileError):
        CharsMap(cut).normalize_str("a")
    with compiled_on(), pytest.raises(TokenizerFileError):
        CharsMap(cut).normalize_str("za")
    for bad in [b"", b"\x01", b"\xff\xff\xff\xff" + b"\0" * 8]:
        with pytest.raises(ValueError):
            MODULE.pcm_build(bad, P.joiner_ranges())
    with pytest.raises(ValueError):
        MODULE.pcm_build(blob, array("I", [5, 4]))
    with pytest.raises(ValueError):
        MODULE.pcm_build(blob, array("I", [5, 0x110000]))
    table = MODULE.pcm_build(blob, P.joiner_ranges())
    with pytest.raises(TypeError):
        MODULE.pcm_normalize(table, "a\u0301", {}, lambda s: 3)
    with pytest.raises(ZeroDivisionError):
        MODULE.pcm_normalize(table, "a\u0301", {}, lambda s: 1 / 0)
    # a stretch where no key starts is kept as it is, without asking
    assert MODULE.pcm_normalize(table, "e\u0301\u0301", {}, lambda s: 1 / 0) == "e\u0301\u0301"
    with pytest.raises(ValueError):
        MODULE.pcm_normalize(object(), "a", {}, str)
    # a stretch runs while a pair holds a joiner ("e" + U+0301 + "a"); its text comes from the cache
    assert MODULE.pcm_normalize(table, "be\u0301ab", {"e\u0301a": "Q"}, str) == "xQx"
    empty = MODULE.pcm_build(b"\0\0\0\0", P.joiner_ranges())
    assert MODULE.pcm_normalize(empty, "ab\ud800\U0010ffff", {}, str) == "ab\ud800\U0010ffff"


b64_text = st.one_of(
    st.binary(max_size=40).map(lambda b: base64.b64encode(b).decode()),
    st.text(st.sampled_from("QUJDabc+/=9 \n-_é"), max_size=12),
    st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()[:-1] + "="),
)


@needs_compiled
@FUZZ
@given(text=b64_text)
def test_base64_in_c_equals_the_standard_decoder(text):
    """The compiled decoder gives ``b64decode(text, validate=True)`` or leaves the text to it
    (None); never a different answer, and never bytes where the standard one refuses."""
    import binascii

    got = MODULE.pcm_b64decode(text)
    try:
        want = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        assert got is None
        want = None
    if got is not None:
        assert got == want
    with compiled_on():
        if want is None:
            with pytest.raises(TokenizerFileError):
                P.charsmap_from_base64(text)
        else:
            assert P.charsmap_from_base64(text) == want


@needs_compiled
def test_base64_of_a_real_charsmap_decodes_in_c():
    blob = _t5_charsmap()
    text = base64.b64encode(blob).decode()
    assert MODULE.pcm_b64decode(text) == blob
    assert MODULE.pcm_b64decode(text[:-4] + "QR==") == base64.b64decode(text[:-4] + "QR==", validate=True)
    with pytest.raises(TypeError):
        MODULE.pcm_b64decode(b"QUJD")
