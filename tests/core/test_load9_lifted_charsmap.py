"""A ``tokenizer.json`` parsed with its ``precompiled_charsmap`` lifted out of the bytes
(:func:`~tokscope.core.formats.tokenizer_json.lift_charsmap`), and its ``{token: id}`` vocabulary
read by the compiled module (:func:`~tokscope.core.formats.tokenizer_json.lift_vocab`), gives
exactly what the plain parse gives: the same object, or the same one-line error. Held on real
files and on files made to mislead the lifting: the key inside other strings (an added token, a
vocabulary piece), escaped quotes, a second key, duplicate keys (the later wins), values that are
not base64, the placeholder itself written in a file, raw or with escapes, and random damage to the
bytes."""

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
    monkeypatch.setattr(hf, "LIFT_MIN_VOCAB_BYTES", 0 if lift else 1 << 62)
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


# ----- the vocabulary lifted --------------------------------------------------------------------

needs_compiled = pytest.mark.skipif(MODULE is None, reason="no C compiler to build the compiled vocabulary reader")
VP = hf.VOCAB_PLACEHOLDER


def vocab_lifted_here(data: bytes) -> bool:
    with hf.compiled_part.switched(True, MODULE):
        cut = hf.lift_vocab(data, 0)
        return cut is not None and hf.parse_lifted(cut[0], vocab=cut[1]) is not None


def wordlevel(vocab: str, *, content: str = "<unk>", extra: str = "", model_extra: str = "") -> bytes:
    return ('{"added_tokens": [{"id": 0, "content": %s}], "normalizer": null, "model": {"type": "WordLevel", '
            '"vocab": %s, "unk_token": "<unk>"%s}%s}' % (json.dumps(content), vocab, model_extra, extra)
            ).encode("utf-8", "surrogatepass")


@needs_compiled
@pytest.mark.parametrize("name", ["wordlevel", "gpt2", "bert"])
def test_real_vocabularies_are_lifted_and_parse_the_same(name, monkeypatch):
    try:
        data = hf_files.build(name).encode("utf-8")
    except hf_files.Missing as exc:
        pytest.skip(str(exc))
    with hf.compiled_part.switched(True, MODULE):
        cut = hf.lift_vocab(data)
        assert cut is not None and len(cut[1]) > 1000
        assert hf.parse(data) == json.loads(data, parse_float=json_float)
    same(data, monkeypatch)


@needs_compiled
@pytest.mark.parametrize("data", [
    wordlevel('{"a": 0, "b": 1}'),
    wordlevel('{}'),
    wordlevel(' { "a" : 0 ,\n\t"b":1 } '),
    wordlevel('{"\\"": 0, "\\\\": 1, "\\/\\b\\f\\n\\r\\t": 2, "\\u00e9\\u4E2D\\u0000": 3, "\u00e9\U0001F600": 4}'),
    wordlevel('{"a": 0, "a": 1, "b": 2}'),
    wordlevel('{"a": -0, "b": 999999999999999999}'),
])
def test_plain_vocabularies_are_lifted(data, monkeypatch):
    assert vocab_lifted_here(data)
    assert same(data, monkeypatch)[0] == "ok"


@pytest.mark.parametrize("data", [
    # what json_vocab leaves to json.loads
    wordlevel('{"\\ud800": 0}'), wordlevel('{"\\ud83d\\ude00": 0}'), wordlevel('{"\\udc00\\ud800": 0}'),
    wordlevel('{"a": 1.0}'), wordlevel('{"a": 1e3}'), wordlevel('{"a": 01}'), wordlevel('{"a": 1234567890123456789}'),
    wordlevel('{"a": 9999999999999999999}'), wordlevel('{"a": -9223372036854775809}'), wordlevel('{"a": -}'), wordlevel('{"a": true}'), wordlevel('{"a": null}'), wordlevel('{"a": "0"}'),
    wordlevel('{"a": 0,}'), wordlevel('{"a" 0}'), wordlevel('{"a": 0 "b": 1}'), wordlevel('{a: 0}'),
    wordlevel('{"a\tb": 0}'), wordlevel('{"\\x": 0}'), wordlevel('{"\\u12": 0}'), wordlevel('{"\\u12g4": 0}'),
    wordlevel('{"a": NaN}'), wordlevel('{"a": Infinity}'), wordlevel('{"a": 0}}'), wordlevel('{"a": 0'),
    wordlevel('{"a": 0}').replace(b'"a"', b'"\xff"'), wordlevel('{"a": 0}').replace(b'"a"', b'"\xed\xa0\x80"'),
    wordlevel('{"a": 0}').replace(b'"a"', b'"\xc3"'),
    # look-alikes and duplicates
    wordlevel('{"a": 0}', content='"vocab": {"x": 1}'),
    wordlevel('{"a": 0}', content='x\\"vocab": {"x": 1}'),
    wordlevel('{"a": 0}', model_extra=', "vocab": {"b": 1}'),
    wordlevel('{"a": 0}', model_extra=', "\\u0076ocab": {"b": 1}'),
    wordlevel('{"a": 0}', model_extra=', "vocab": "%s"' % VP),
    wordlevel('{"a": 0}', model_extra=', "\\u0076ocab": "\\u0074%s"' % VP[1:]),
    wordlevel('{"a": 0}', extra=', "model": {"type": "WordLevel", "vocab": {}}'),
    wordlevel('{"a": 0}', extra=', "x": {"vocab": {"b": 1}}'),
    wordlevel('{"a": 0}', content=VP),
    wordlevel('{"%s": 0}' % VP),
    wordlevel('{"a": 0}', content="\\u0041"),
    b'{"vocab": {"a": 0}}',
    b'[{"model": {"vocab": {"a": 0}}}]',
    b'{"model": {"vocab": {"a": 0}}, "model": 3}',
    b'{"x": {"vocab": {"a": 0}}, "model": {"vocab": {"a": 0}}}',
    b'{"model": {"vocab": {"a": 0}}',
    b'{"model": {"vocab" {"a": 0}}}',
    b'{"model": ["vocab", {"a": 0}]}',
])
def test_vocabulary_look_alikes_parse_as_the_plain_parse(data, monkeypatch):
    same(data, monkeypatch)


@needs_compiled
def test_which_vocabularies_are_lifted():
    assert not vocab_lifted_here(wordlevel('{"a": 0}', model_extra=', "vocab": {"b": 1}'))  # a later one wins
    assert vocab_lifted_here(wordlevel('{"a": 0}', extra=', "x": {"vocab": {"b": 1}}'))  # the model's is first
    assert vocab_lifted_here(wordlevel('{"a": 0}', extra=', "merges": [["vocab", "a"]]'))
    assert not vocab_lifted_here(b'{"x\\"vocab": {"b": 1}, "model": {"type": "WordLevel", "vocab": {"a": 0}}}')
    assert not vocab_lifted_here(b'{"x": {"vocab": {"a": 0}}, "model": {"type": "WordLevel"}}')  # not the model's
    assert not vocab_lifted_here(wordlevel('{"a": 0}', content=VP))
    assert not vocab_lifted_here(wordlevel('{"a": 0}', content="\\u0041"))
    assert not vocab_lifted_here(wordlevel('{"a": 1.5}'))
    with hf.compiled_part.switched(True, MODULE):
        assert hf.lift_vocab(wordlevel('{"a": 0}')) is None  # under LIFT_MIN_VOCAB_BYTES
    with hf.compiled_part.switched(False, MODULE):
        assert hf.lift_vocab(wordlevel('{"a": 0}'), 0) is None  # nothing lifted without the compiled reader


KEYS = ["a", "b", "<unk>", "\u2581x", '"', "\\", "/", "\x00", "\x1f", "\x7f", "\u00e9", "\u4e2d", "\U0001F600", "\ud800",
        "\udfff", "\u0301", "\u200d", "\ufeff", "vocab", VP, "\u3000", " ", "\t", "\n"]
keys = st.lists(st.sampled_from(KEYS), max_size=4).map("".join)
ids = st.one_of(st.integers(0, 300), st.integers(-2**63, 2**64), st.sampled_from([0, -0, 10**18 - 1, 10**18]))


@st.composite
def vocab_files(draw) -> bytes:
    """A WordLevel file whose vocabulary's keys are of every kind (written raw or escaped, some
    repeated), sometimes with a look-alike key elsewhere, sometimes damaged."""
    pairs = draw(st.lists(st.tuples(keys, ids), max_size=8))
    ascii_only = draw(st.booleans())
    sep = draw(st.sampled_from([", ", ",", " ,\n "]))
    vocab = "{" + sep.join("%s: %s" % (json.dumps(k, ensure_ascii=ascii_only), v) for k, v in pairs) + "}"
    extra = draw(st.sampled_from(["", ', "x": {"vocab": {"a": 0}}', ', "vocab": 1', ', "y": "%s"' % VP]))
    text = wordlevel(vocab, content=draw(keys), extra=extra).decode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(st.sampled_from(FRAGMENTS + ['"vocab"', "{", "0", "-", "1.5", "e5"])) + text[at:]
        else:
            text = text[:at] + text[at + draw(st.integers(1, 4)):]
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None)
@given(vocab_files())
def test_random_vocabulary_files_parse_as_the_plain_parse(data):
    with pytest.MonkeyPatch.context() as monkeypatch:
        same(data, monkeypatch)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(vocab_files(), st.integers(0, 200))
def test_json_vocab_reads_what_json_reads(data, start):
    """Wherever json_vocab reads an object, json reads the same one there (order of keys included)."""
    for at in (min(start, len(data)), data.find(b"{", data.find(b'"vocab"'))):
        found = MODULE.json_vocab(data, at)
        if found is not None:
            vocab, end = found
            assert data[at:at + 1] == b"{" and data[end - 1:end] == b"}"
            want = json.loads(data[at:end].decode("utf-8"))
            assert list(vocab.items()) == list(want.items())


# ----- a Unigram's [[piece, score], ...] lifted ---------------------------------------------------

#: scores as files write them, and numbers json (or json_scores) reads otherwise
SCORES = ["0.0", "-0.0", "-1.5", "-7.3218854949502745", "-12.345678901234567", "-1.2345678901234567890", "3",
          "-0", "0", "-123456789012345678", "1234567890123456789", "1e3", "-1.5E-3", "1.", ".5", "-", "01.5",
          "NaN", "-Infinity", "true", '"1.0"', "0.30000000000000004", "-99999999999999999.9"]


def unigram(entries: str, extra: str = "") -> bytes:
    return ('{"normalizer": null, "model": {"type": "Unigram", "unk_id": 0, "vocab": %s}%s}'
            % (entries, extra)).encode("utf-8", "surrogatepass")


@needs_compiled
def test_plain_unigram_vocabularies_are_lifted(monkeypatch):
    for entries in ('[["<unk>", 0.0], ["\\u2581a", -1.5], ["\\"", -7.3218854949502745], ["\\\\", -1], ["b", 3], ["c", -0.0]]',
                    '[ [ "a" , -1.25 ] ,\n [ "b",-2 ] ]', "[]"):
        data = unigram(entries)
        assert vocab_lifted_here(data)
        assert same(data, monkeypatch)[0] == "ok"


@pytest.mark.parametrize("score", SCORES)
def test_unigram_scores_parse_as_the_plain_parse(score, monkeypatch):
    same(unigram('[["<unk>", 0.0], ["a", %s]]' % score), monkeypatch)


@pytest.mark.parametrize("entries", [
    '[["a", 0.0], ["b"]]', '[["a", 0.0, 1]]', '[["a"], 0.0]', '[[0.0, "a"]]', '[["a", 0.0],]', '[["a" 0.0]]',
    '[["\\\\ud800", 0.0]]', '[["a", 0.0]', '[{"a": 0.0}]', '[["a", 0.0]]]', '[["a\\tb", 0.0]]',
])
def test_unigram_look_alikes_parse_as_the_plain_parse(entries, monkeypatch):
    same(unigram(entries), monkeypatch)


pieces = st.lists(st.sampled_from(KEYS), max_size=3).map("".join)


@st.composite
def unigram_files(draw) -> bytes:
    entries = draw(st.lists(st.tuples(pieces, st.one_of(st.sampled_from(SCORES[:12]), st.floats(-30, 0).map(repr))),
                            max_size=6))
    ascii_only = draw(st.booleans())
    text = "[" + ", ".join('[%s, %s]' % (json.dumps(p, ensure_ascii=ascii_only), sc) for p, sc in entries) + "]"
    text = unigram(text, draw(st.sampled_from(["", ', "x": {"vocab": []}', ', "y": "%s"' % VP]))).decode(
        "utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 1))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(FRAGMENTS + ["[", "]", "0", "-", ".5", "e5"])) + text[at:]
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=300, deadline=None)
@given(unigram_files())
def test_random_unigram_files_parse_as_the_plain_parse(data):
    with pytest.MonkeyPatch.context() as monkeypatch:
        same(data, monkeypatch)


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(unigram_files())
def test_json_scores_reads_what_json_reads(data):
    at = data.find(b"[", data.find(b'"vocab"'))
    found = MODULE.json_scores(data, at)
    if found is not None:
        vocab, end = found
        assert data[at:at + 1] == b"[" and data[end - 1:end] == b"]"
        assert repr(vocab) == repr(json.loads(data[at:end].decode("utf-8"), parse_float=json_float))
