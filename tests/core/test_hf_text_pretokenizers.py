"""HF pre-tokenizers: chunks, their original spans and every character's alignment equal
``tokenizers``' (also behind normalizers, and for the configurations of common model families)."""

from __future__ import annotations

import json

import pytest
from hf_text_support import FUZZ, TRICKY, hf_pretoken_alignments, hf_pretokens, sample_texts, texts
from hypothesis import given
from tokenizers import Regex, Tokenizer
from tokenizers import normalizers as N
from tokenizers import pre_tokenizers as P
from tokenizers.models import WordLevel

from tokscope.core import normalizers as our_norm
from tokscope.core import pre_tokenizers as ours
from tokscope.core.text.errors import TokenizerFileError, UnsupportedComponentError
from tokscope.core.text.normalized import NormalizedText

LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
GPT4O = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+",
])

# (normalizer, pre-tokenizer) pairs, by name
CASES = {
    "ByteLevel": (None, P.ByteLevel()),
    "ByteLevelNoPrefix": (None, P.ByteLevel(add_prefix_space=False)),
    "ByteLevelNoRegex": (None, P.ByteLevel(add_prefix_space=True, use_regex=False)),
    "ByteLevelNoRegexNoPrefix": (None, P.ByteLevel(add_prefix_space=False, use_regex=False)),
    "Llama3": (None, P.Sequence([P.Split(Regex(LLAMA3), "isolated"), P.ByteLevel(add_prefix_space=False, use_regex=False)])),
    "Qwen2": (N.NFC(), P.Sequence([P.Split(Regex(QWEN2), "isolated"), P.ByteLevel(add_prefix_space=False, use_regex=False)])),
    "GPT4o": (None, P.Sequence([P.Split(Regex(GPT4O), "isolated"), P.ByteLevel(add_prefix_space=False, use_regex=False)])),
    "SplitDigits": (None, P.Sequence([P.Digits(individual_digits=True), P.ByteLevel(add_prefix_space=False)])),
    "Metaspace": (None, P.Metaspace()),
    "MetaspaceFirst": (None, P.Metaspace(prepend_scheme="first")),
    "MetaspaceNever": (None, P.Metaspace(prepend_scheme="never")),
    "MetaspaceNoSplit": (None, P.Metaspace(split=False)),
    "MetaspaceOther": (None, P.Metaspace(replacement="_", prepend_scheme="always")),
    "Llama2": (N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")]), None),
    "T5": (N.Sequence([N.NFKC(), N.Replace(Regex(" {2,}"), " ")]), P.Sequence([P.WhitespaceSplit(), P.Metaspace()])),
    "Whitespace": (None, P.Whitespace()),
    "WhitespaceSplit": (None, P.WhitespaceSplit()),
    "Bert": (N.BertNormalizer(), P.BertPreTokenizer()),
    "BertPre": (None, P.BertPreTokenizer()),
    "Digits": (None, P.Digits()),
    "DigitsIndividual": (None, P.Digits(individual_digits=True)),
    "CharDelimiter": (None, P.CharDelimiterSplit("-")),
    "UnicodeScripts": (None, P.UnicodeScripts()),
    "FixedLength": (None, P.FixedLength(3)),
    "NFKC+ByteLevel": (N.NFKC(), P.ByteLevel()),
    "Lower+Metaspace": (N.Sequence([N.NFD(), N.Lowercase()]), P.Metaspace()),
}
for behavior in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"):
    for invert in (False, True):
        if not invert:
            CASES[f"Punct-{behavior}-{invert}"] = (None, P.Punctuation(behavior))
        CASES[f"SplitStr-{behavior}-{invert}"] = (None, P.Split(" ", behavior, invert=invert))
        CASES[f"SplitRegex-{behavior}-{invert}"] = (None, P.Split(Regex(r"\s+|\d|x*"), behavior, invert=invert))
        CASES[f"SplitWords-{behavior}-{invert}"] = (None, P.Split(Regex(r"\p{L}+|[\p{P}\p{S}]"), behavior, invert=invert))

_OURS: dict = {}


def _json(normalizer, pretokenizer) -> tuple[dict | None, dict | None]:
    tok = Tokenizer(WordLevel({"a": 0}, unk_token="a"))
    if normalizer is not None:
        tok.normalizer = normalizer
    if pretokenizer is not None:
        tok.pre_tokenizer = pretokenizer
    data = json.loads(tok.to_str())
    return data["normalizer"], data["pre_tokenizer"]


def _ours(name):
    if name not in _OURS:
        n, p = _json(*CASES[name])
        _OURS[name] = (our_norm.from_json(n), ours.from_json(p))
    return _OURS[name]


def chunks(name, text, offset=0):
    n, p = _ours(name)
    t = NormalizedText.identity(text, offset)
    if n is not None:
        t = n.normalize(t)
    return p.pre_tokenize([t]) if p is not None else ([t] if t.text else [])


def check(name, text):
    hf_n, hf_p = CASES[name]
    if hf_p is None:
        hf_p = P.Sequence([])
    got = chunks(name, text)
    # with no pre-tokenizer HF keeps an empty split; ours are chunks, never empty
    want = [w for w in hf_pretokens(hf_n, hf_p, text) if w[0]]
    assert [(c.text, (c.original_start, c.original_end)) for c in got] == want, (name, text)
    want_align = [a for a in hf_pretoken_alignments(hf_n, hf_p, text) if a]
    assert [c.alignments() for c in got] == want_align, (name, text)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tricky_pieces(name):
    for k in range(0, len(TRICKY), 8):
        group = TRICKY[k : k + 8]
        check(name, "".join(group))
        check(name, " " + "a ".join(group) + "  ")
    for piece in TRICKY[:20]:
        check(name, piece)
    check(name, "")
    check(name, " ".join(TRICKY))
    check(name, "".join(TRICKY))


@pytest.mark.parametrize("name", sorted(CASES))
@FUZZ
@given(text=texts)
def test_fuzz(name, text):
    check(name, text)


@pytest.mark.parametrize("name", ["ByteLevel", "Llama3", "Qwen2", "GPT4o", "Metaspace", "T5", "Bert", "Whitespace", "UnicodeScripts", "Llama2"])
def test_samples(name):
    for text in sample_texts().values():
        check(name, text)


def test_offsets_are_absolute():
    got = chunks("ByteLevel", "ab cd", offset=100)
    assert [(c.text, c.original_start, c.original_end) for c in got] == [("Ġab", 100, 102), ("Ġcd", 102, 105)]


def test_metaspace_first_looks_at_the_absolute_start():
    _, p = _ours("MetaspaceFirst")
    assert [c.text for c in p.pre_tokenize([NormalizedText.identity("a b", 0)])] == ["▁a", "▁b"]
    assert [c.text for c in p.pre_tokenize([NormalizedText.identity("a b", 3)])] == ["a", "▁b"]


def _class_edges() -> list[str]:
    """Every code point next to an edge of a measured class, and a sample of the rest."""
    from tokscope.core.text import unicode_tables as hf_tables
    from tokscope.core.text.unicode import parse_ranges

    cps = set(range(0, 0x110000, 97))
    for name in ("RX_WORD", "PUNCT", "NUMERIC", "WHITESPACE", "ONIG_NEW"):
        for a, b in parse_ranges(getattr(hf_tables, name)):
            cps.update((a - 1, a, b, b + 1))
    for ranges in hf_tables.UNICODE_SCRIPTS:
        for a, b in parse_ranges(ranges):
            cps.update((a - 1, a, b, b + 1))
    return [chr(c) for c in sorted(cps) if 0 <= c < 0x110000 and not 0xD800 <= c < 0xE000]


def test_class_edges_through_the_classes():
    """The measured character classes at every edge of theirs (the generator measured them on
    every code point; this checks the tables still say what the installed tokenizers does)."""
    items = _class_edges()
    text = " ".join(items)
    for name in ("Whitespace", "WhitespaceSplit", "BertPre", "DigitsIndividual", "Punct-isolated-False", "ByteLevelNoPrefix", "Llama3", "UnicodeScripts"):
        hf_n, hf_p = CASES[name]
        want = hf_p.pre_tokenize_str(text)
        got = [(c.text, (c.original_start, c.original_end)) for c in chunks(name, text)]
        assert got == want, name


def test_from_json_errors():
    with pytest.raises(UnsupportedComponentError, match="pre-tokenizer 'Frob'"):
        ours.from_json({"type": "Frob"})
    with pytest.raises(TokenizerFileError, match="behavior"):
        ours.from_json({"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways", "invert": False})
    with pytest.raises(TokenizerFileError, match="add_prefix_space"):
        ours.from_json({"type": "ByteLevel", "trim_offsets": True})
    with pytest.raises(UnsupportedComponentError, match=r"pre-tokenizer 'Split'.*nested"):
        ours.from_json({"type": "Split", "pattern": {"Regex": "[a[b]]"}, "behavior": "Isolated", "invert": False})
    with pytest.raises(TokenizerFileError, match="invalid regex"):
        ours.from_json({"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated", "invert": False})


def test_metaspace_legacy_add_prefix_space():
    assert ours.from_json({"type": "Metaspace", "replacement": "▁", "add_prefix_space": True}).prepend_scheme == "always"
    legacy = {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "never"}
    assert ours.from_json(legacy).prepend_scheme == "never"
    # HF refuses add_prefix_space false unless prepend_scheme is "never" (its default is "always")
    for bad in ({**legacy, "prepend_scheme": "first"}, {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False}):
        with pytest.raises(Exception, match="add_prefix_space"):
            Tokenizer.from_str(json.dumps({
                "version": "1.0", "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"},
                "pre_tokenizer": bad,
            }))
        with pytest.raises(TokenizerFileError, match="add_prefix_space"):
            ours.from_json(bad)
    hf = Tokenizer.from_str(json.dumps({
        "version": "1.0", "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"},
        "pre_tokenizer": legacy,
    }))
    assert ours.from_json(legacy).pre_tokenize_str("a b") == hf.pre_tokenizer.pre_tokenize_str("a b")


def test_local_flags():
    assert _ours("Llama3")[1].local and _ours("Whitespace")[1].local and _ours("MetaspaceNever")[1].local
    assert not _ours("ByteLevel")[1].local and not _ours("Metaspace")[1].local
    assert not _ours("FixedLength")[1].local
