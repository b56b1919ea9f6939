"""A ``tokenizer.json`` parsed with its ``precompiled_charsmap`` lifted out of the bytes
(:func:`~tokscope.core.formats.tokenizer_json.lift_charsmap`) gives exactly what the plain parse
gives: the same object, or the same one-line error. Held on real SentencePiece-converted files and
on files made to mislead the lifting: the key inside other strings (an added token, a vocabulary
piece), escaped quotes, a second key, duplicate keys (the later wins), values that are not base64,
the placeholder itself written in a file, raw or with escapes, and random damage to the bytes."""

from __future__ import annotations

import json

import hf_files
import pytest
from compiled_merge import _with_abi
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.formats.tokenizer_json_models import json_float
from tokscope.core.text.errors import TokenizerFileError

P = hf.PLACEHOLDER
KEY = '"precompiled_charsmap"'


MODULE = _with_abi("JLOAD_ABI")


def outcome(data: bytes, lift: bool, monkeypatch, compiled: bool = False) -> tuple[str, str]:
    """``("ok", repr(object))`` or ``("error", message)`` of :func:`~.tokenizer_json.parse`, with
    any charsmap lifted (``lift``, whatever its size) or never; its base64 checked by the compiled
    module (``compiled``) or in Python."""
    monkeypatch.setattr(hf, "LIFT_MIN_BYTES", 0 if lift else 1 << 62)
    try:
        with hf.compiled_part.switched(compiled, MODULE):
            return "ok", repr(hf.parse(data, "t.json"))
    except TokenizerFileError as exc:
        return "error", str(exc)


def same(data: bytes, monkeypatch) -> tuple[str, str]:
    """The outcome of parsing ``data`` plainly, checked equal to the lifted parse's (with the
    compiled base64 check when it can be built, and without)."""
    plain = outcome(data, False, monkeypatch)
    assert outcome(data, True, monkeypatch) == plain
    if MODULE is not None:
        assert outcome(data, True, monkeypatch, compiled=True) == plain
    if plain[0] == "ok":  # and the plain parse is json's own
        assert plain[1] == repr(json.loads(data.decode("utf-8-sig"), parse_float=json_float))
    return plain


def lifted_here(data: bytes) -> bool:
    """Whether the lifted parse is used for ``data`` (any charsmap size), the same with the
    compiled base64 check and without."""
    found = []
    for compiled in (False, True) if MODULE is not None else (False,):
        with hf.compiled_part.switched(compiled, MODULE):
            cut = hf.lift_charsmap(data, 0)
            found.append(cut is not None and hf.parse_lifted(*cut) is not None)
    assert len(set(found)) == 1
    return found[0]


@pytest.mark.parametrize("name", ["t5", "xlmr-bytefallback"])
def test_real_files_are_lifted_and_parse_the_same(name):
    try:
        data = hf_files.build(name).encode("utf-8")
    except hf_files.Missing as exc:
        pytest.skip(str(exc))
    cut = hf.lift_charsmap(data)  # the real charsmap is far over the size from which it pays
    assert cut is not None and len(cut[1]) >= hf.LIFT_MIN_BYTES and len(cut[0]) < len(data) // 2
    obj = hf.parse_lifted(*cut)
    assert obj is not None
    assert obj == json.loads(data, parse_float=json_float)
    assert hf.parse(data) == obj
    charsmap = obj["normalizer"]["normalizers"][0]
    assert charsmap["type"] == "Precompiled" and charsmap["precompiled_charsmap"] == cut[1]


def doc(normalizer: str, *, content: str = "<unk>", piece: str = "a", extra: str = "") -> bytes:
    """A small Unigram file whose normalizer is the JSON text ``normalizer``; ``content`` (an added
    token's) and ``piece`` (a vocabulary piece) are written as JSON strings."""
    return (
        '{"version": "1.0", "added_tokens": [{"id": 0, "content": %s, "special": true}], '
        '"normalizer": %s, "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], [%s, -1.5]]}%s}'
        % (json.dumps(content), normalizer, json.dumps(piece, ensure_ascii=False), extra)
    ).encode("utf-8", "surrogatepass")


def precompiled(value: str = "AAAA", more: str = "") -> str:
    return '{"type": "Precompiled", %s: "%s"%s}' % (KEY, value, more)


def test_the_plain_case_is_lifted(monkeypatch):
    data = doc(precompiled("QUJD"))
    assert lifted_here(data)
    assert same(data, monkeypatch)[0] == "ok"
    nested = doc('{"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Sequence", "normalizers": [%s]}]}'
                 % precompiled("QUJD"))
    assert lifted_here(nested)
    assert same(nested, monkeypatch)[0] == "ok"


@pytest.mark.parametrize("data", [
    # the key inside another string: escaped quotes around it
    doc(precompiled(), content='x"precompiled_charsmap": "AAAA"'),
    doc(precompiled(), piece='"precompiled_charsmap":"QUJD"'),
    doc('{"type": "NFC"}', content='"precompiled_charsmap": "QUJD"'),
    # a key that only ends with it (after an escaped quote), as the only one
    doc('{"type": "Precompiled", "x\\"precompiled_charsmap": "QUJD"}'),
    # a second key, and a duplicate one whose later value wins
    doc(precompiled("AAAA", ', "precompiled_charsmap": "QUJD"')),
    doc(precompiled("AAAA", ', "precompiled_charsmap": "Q\\u0055JD"')),
    doc(precompiled("AAAA", ', "\\u0070recompiled_charsmap": "QUJD"')),
    doc(precompiled("AAAA"), extra=', "normalizer": null'),
    doc(precompiled("AAAA"), extra=', "normalizer": {"type": "Precompiled", "\\u0070recompiled_charsmap": "QUJD"}'),
    # the placeholder written in the file: raw, with escapes, as the later duplicate
    doc(precompiled("AAAA", ', "\\u0070recompiled_charsmap": "\\u0074okscope-lifted-precompiled-charsmap"')),
    doc(precompiled("AAAA", ', "\\u0070recompiled_charsmap": "%s"' % P)),
    doc(precompiled("AAAA"), piece=P),
    doc(precompiled("AAAA"), content="\\u0074" + P[1:]),
    doc(precompiled("AAAA"), extra=', "x": "\\u0074%s"' % P[1:]),
    # values that are not base64, or not strings, or not where a Precompiled reads them
    doc(precompiled("AA\\u0041A")),
    doc(precompiled('AA\\"A')),
    doc(precompiled("AA AA")),
    doc(precompiled("AA\tAA")),
    doc(precompiled("AAéA")),
    doc(precompiled("")),
    doc('{"type": "Precompiled", %s: 12}' % KEY),
    doc('{"type": "Precompiled", %s: ["AAAA"]}' % KEY),
    doc('{"type": "Replace", %s: "AAAA"}' % KEY),
    doc('{"type": "Sequence", "normalizers": [%s, %s]}' % (precompiled(), precompiled())),
    doc('{"type": "Sequence", "normalizers": {"a": %s}}' % precompiled()),
    doc('{"type": "NFC"}', extra=', "decoder": %s' % precompiled()),
    # whitespace JSON allows and whitespace it does not
    doc('{"type": "Precompiled", %s \r\n\t:\n "AAAA"}' % KEY),
    doc('{"type": "Precompiled", %s \x0b: "AAAA"}' % KEY),
    # malformed files: the plain parse's error, word for word
    doc(precompiled("AAAA")).replace(b'"model"', b'"model" "'),
    doc(precompiled("AAAA"))[:-3],
    doc(precompiled("AAAA")).replace(b'"AAAA"', b'"AAAA'),
    doc(precompiled("AAAA")) + b"x",
    b"\xef\xbb\xbf" + doc(precompiled("AAAA")),
    b"\xef\xbb\xbf\xef\xbb\xbf" + doc(precompiled("AAAA")),
    doc(precompiled("AAAA")).replace(b"-1.5", b"-1.5" + b"0" * 5000 + b"1"),
    doc(precompiled("AAAA")).replace(b'"a"', b'"\xff"'),
    b"[" + doc(precompiled("AAAA")) + b"]",
])
def test_look_alikes_parse_as_the_plain_parse(data, monkeypatch):
    same(data, monkeypatch)


def test_a_forged_placeholder_is_not_replaced(monkeypatch):
    """The placeholder written with an escape as the later of two keys: the file's own value (the
    placeholder's text) is what the normalizer holds, not the lifted charsmap."""
    data = doc(precompiled("QUJD", ', "precompiled_charsmap": "\\u0074okscope-lifted-precompiled-charsmap"'))
    assert not lifted_here(data)
    monkeypatch.setattr(hf, "LIFT_MIN_BYTES", 0)
    assert hf.parse(data)["normalizer"]["precompiled_charsmap"] == P


def test_which_are_lifted():
    """The lifting is used where it is safe, and only there (the cases above fall back)."""
    assert lifted_here(doc(precompiled("QUJD"), piece="\U0001F600 \u4e2d\u0301 \\ \"", content="\x00\n"))
    assert not lifted_here(doc(precompiled("QUJD"), content="\\u0041"))  # a \u00XX escape somewhere
    assert lifted_here(doc(precompiled("QUJD"), piece="\u00e9\ud7ff", content="\u4e2d"))
    assert not lifted_here(doc(precompiled("QUJD"), piece=P))
    assert not lifted_here(doc(precompiled("AA\\u0041")))
    assert not lifted_here(doc(precompiled(), extra=', "decoder": {%s: "QUJD"}' % KEY))  # a second key
    assert not lifted_here(doc('{"type": "Replace", %s: "AAAA"}' % KEY))  # not a Precompiled normalizer's
    assert not lifted_here(doc('{"type": "NFC"}', extra=', "decoder": %s' % precompiled()))
    assert hf.lift_charsmap(doc(precompiled("QUJD"))) is None  # under LIFT_MIN_BYTES: not worth it
    assert hf.lift_charsmap(doc(precompiled("Q" * hf.LIFT_MIN_BYTES))) is not None


# ----- random files -------------------------------------------------------------------------------

#: characters of every kind: emoji, CJK, combining marks, lone surrogates, controls, whitespace,
#: quotes, backslashes, the key, the placeholder and base64
CHARS = ("a", "Z", "0", "+", "/", "=", " ", "\t", "\n", "\r", "\x00", "\x0b", "\u3000", "\xa0", "\u0301", "\u4e2d",
         "\U0001F600", "\U0001F1EB", "\ud800", "\udfff", '"', "\\", ":", ",", "{", "}", "[", "]", "\ufeff", "\u200d",
         KEY, '"precompiled_charsmap":"', P, "tokscope", "<s>", "[CLS]", "<|endoftext|>", "\u2581")
strings = st.lists(st.sampled_from(CHARS), max_size=8).map("".join)
values = st.one_of(st.text(st.sampled_from("ABCDQUJwxyz019+/="), max_size=12), strings)
#: the raw texts spliced into a file's bytes
FRAGMENTS = [KEY, ":", " ", '"', "\\", '\\"', "\\\\", "AAAA", "QUJD", "=", "+/", P, "\\u0074", "\\u0070", "\\u00",
             "{", "}", "[", "]", ",", '"type"', '"Precompiled"', '"Sequence"', '"normalizers"', '"normalizer"',
             "null", "1.5", "NaN", "\\ud800", "\u00e9", "\U0001F600", "\u4e2d", "\u0301", "\x00", "\n", "\ufeff"]


@st.composite
def files(draw) -> bytes:
    """A file with a Precompiled normalizer (alone, in Sequences, beside look-alikes), strings
    of every kind in its added tokens and vocabulary (written raw or escaped), sometimes a
    second or duplicate key, sometimes damaged by a splice of raw JSON text."""
    value = draw(values)
    more = draw(st.sampled_from(["", ', "precompiled_charsmap": %s', ', "\\u0070recompiled_charsmap": %s', ', "x": %s']))
    if more:
        more = more % json.dumps(draw(st.one_of(values, st.just(P))), ensure_ascii=draw(st.booleans()))
    norm = '{"type": "Precompiled", %s: %s%s}' % (KEY, json.dumps(value, ensure_ascii=draw(st.booleans())), more)
    for _ in range(draw(st.integers(0, 2))):
        norm = '{"type": "Sequence", "normalizers": [%s]}' % ", ".join(
            draw(st.permutations([norm, *draw(st.lists(st.sampled_from(['{"type": "NFC"}', norm]), max_size=2))])))
    content, piece = draw(strings), draw(strings)
    text = (
        '{"added_tokens": [{"id": 0, "content": %s}], "normalizer": %s, '
        '"model": {"type": "Unigram", "vocab": [["<unk>", 0.0], [%s, -2.25]]}}'
        % (json.dumps(content, ensure_ascii=draw(st.booleans())), norm,
           json.dumps(piece, ensure_ascii=draw(st.booleans())))
    )
    for _ in range(draw(st.integers(0, 2))):  # damage: a fragment spliced in, or a span cut out
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(st.sampled_from(FRAGMENTS)) + text[at:]
        else:
            text = text[:at] + text[at + draw(st.integers(1, 4)):]
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None)
@given(files())
def test_random_files_parse_as_the_plain_parse(data):
    with pytest.MonkeyPatch.context() as monkeypatch:
        same(data, monkeypatch)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS + ['{"normalizer": {"type": "Precompiled", ', "}}"]), max_size=16))
def test_random_fragments_parse_as_the_plain_parse(parts):
    data = "".join(parts).encode("utf-8", "surrogatepass")
    with pytest.MonkeyPatch.context() as monkeypatch:
        same(data, monkeypatch)
