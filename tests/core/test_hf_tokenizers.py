"""Whole ``tokenizer.json`` tokenizers of every kind against ``tokenizers``, through the
Tokenizer's public API only.

Each family of :mod:`hf_files` (built and saved by ``tokenizers`` here) is read by the core's
:func:`tokscope.core.formats.tokenizer_json.from_json_text` and checked, on the samples (24 languages) and on
hypothesis text, in every special-token mode:

* ``allowed_special="all"`` equals the library with ``add_special_tokens=False``;
* ``disallowed_special=()`` equals the library with ``encode_special_tokens=True`` (special tokens
  are text; non-special added tokens still match, as there);
* the default refuses the texts where a *special* added token would match (never one that only
  spells a non-special one), and otherwise equals both;
* ``add_special_tokens=True`` equals the library's default (the file's template);
* ``decode`` equals ``decode(ids, skip_special_tokens=False)``;
* pieces' character offsets equal the library's offsets. The one place they differ by design is
  ``trim_offsets`` (GPT-2's ByteLevel and RoBERTa's post-processors): there the library moves a
  token's start past its leading space, while a piece covers every character it came from; the
  offsets are compared with the library's trimming turned off;
* pieces' byte offsets are consistent: in order, within the text, and a partial piece inside the
  bytes of the character it belongs to.

Lone surrogates: the library cannot take them (a Python ``str`` with one is not a Rust
``String``); the core replaces each by U+FFFD before any stage (``fix_surrogates``, as tiktoken),
so the core on such a text equals the library on the replaced text, offsets included.

The ids-only path (string-level stages, no alignment) is held to the aligned path that pieces are
made of, stage by stage (:func:`check_string_paths`).
"""

from __future__ import annotations

import json

import hf_files
import pytest
from hf_support import FUZZ, TRICKY_CHARS, sample_texts
from hf_text_support import TRICKY
from hypothesis import given
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.document.document import Document
from tokscope.core.text.errors import DisallowedSpecialError
from tokscope.core.text.normalized import NormalizedText
from tokscope.core.tokenizer.tokenizer import fix_surrogates

FAMILIES = hf_files.FAMILIES
#: families whose post-processor trims offsets (see the module docstring)
TRIMMED = {"gpt2", "roberta"}

_LOADED: dict = {}


def pair(name: str):
    """``(library tokenizer, library tokenizer without offset trimming, core tokenizer)``; the core
    tokenizer is made again for each merge-list loop (its caches would answer for the other)."""
    from tokscope.core.models import bpe

    key = (name, bpe.compiled_merge() is not None)
    found = _LOADED.get(key)
    if found is None:
        try:
            text = hf_files.build(name)
        except hf_files.Missing as exc:
            pytest.skip(str(exc))
        ref = hf_files.hf_tokenizer(name)
        untrimmed = ref
        if name in TRIMMED:
            obj = json.loads(text)
            post = obj["post_processor"]
            post["trim_offsets"] = False
            import tokenizers

            untrimmed = tokenizers.Tokenizer.from_str(json.dumps(obj))
        found = _LOADED[key] = (ref, untrimmed, hf.from_json_text(text, name))
    return found


def hf_ids(ref, text: str, *, encode_special: bool = False, template: bool = False) -> list[int]:
    ref.encode_special_tokens = encode_special
    try:
        return ref.encode(text, add_special_tokens=template).ids
    finally:
        ref.encode_special_tokens = False


def check_byte_offsets(text: str, pieces) -> None:
    data = text.encode("utf-8")
    char_bytes = [0]
    for ch in text:
        char_bytes.append(char_bytes[-1] + len(ch.encode("utf-8")))
    last = 0
    for p in pieces:
        assert 0 <= p.byte_start <= p.byte_end <= len(data), p
        assert p.byte_start >= last or p.start < p.end, (p, last)
        assert char_bytes[p.start] <= p.byte_start and p.byte_end <= char_bytes[p.end], p
        last = max(last, p.byte_end)


def check(name: str, raw: str) -> None:
    ref, untrimmed, ours = pair(name)
    text = fix_surrogates(raw)
    want = hf_ids(ref, text)
    assert ours.encode(raw, allowed_special="all") == want, (name, text)
    as_text = hf_ids(ref, text, encode_special=True)
    assert ours.encode(raw, disallowed_special=()) == as_text, (name, text)
    try:
        plain = ours.encode(raw)
    except DisallowedSpecialError as exc:
        # refused only for a special token the library would match there (its id is in the
        # ids; the encoding as text may still coincide when the model has that token too)
        assert exc.token in ours.special_tokens and ours.special_tokens[exc.token] in want, (name, text)
    else:
        assert plain == want == as_text, (name, text)
    assert ours.encode(raw, allowed_special="all", add_special_tokens=True) == hf_ids(ref, text, template=True), (name, text)
    assert ours.decode(want) == ref.decode(want, skip_special_tokens=False), (name, text)
    check_string_paths(ours, text)
    pieces = ours.pieces(raw, allowed_special="all")
    assert [p.id for p in pieces] == want
    enc = untrimmed.encode(text, add_special_tokens=False)
    assert [(p.start, p.end) for p in pieces] == [tuple(o) for o in enc.offsets], (name, text)
    check_byte_offsets(text, pieces)


def check_string_paths(ours, text: str) -> None:
    """The ids-only path (strings, no alignment) equals the aligned one, stage by stage."""
    allowed = ours.special_tokens_set
    assert ours._encode_generic(text, allowed) == ours._encode_aligned(text, allowed)
    assert ours._encode_generic(text, frozenset()) == ours._encode_aligned(text, frozenset())
    norm, pre, added = ours.normalizer, ours.pre_tokenizer, ours.added
    if norm is not None:
        assert norm.normalize_str(text) == norm.normalize(NormalizedText.identity(text)).text
    if pre is not None:
        for first in (True, False):
            whole = NormalizedText.identity(text, 0 if first else 1)
            assert pre.split_str(text, first) == [c.text for c in pre.pre_tokenize([whole])]
    fast = added.split_str(text, norm, allowed)
    slow = added.split(text, norm, allowed)
    assert [(t, i) for t, i, _ in fast] == [(p.text, i) for p, i in slow]
    if norm is None:
        assert [o for _, _, o in fast] == [p.original_start for p, _ in slow]


@pytest.mark.parametrize("name", FAMILIES)
def test_samples(name):
    for text in sample_texts().values():
        check(name, text)


@pytest.mark.parametrize("name", FAMILIES)
def test_lookalikes(name):
    for text in hf_files.LOOKALIKES:
        check(name, text)
        check(name, f"a{text}b {text} {text}{text}\n")
    check(name, " ".join(hf_files.LOOKALIKES))


pieces_st = st.one_of(
    st.sampled_from(TRICKY_CHARS),
    st.sampled_from(TRICKY),
    st.sampled_from(hf_files.LOOKALIKES),
    st.characters(codec="utf-8"),
    st.text(alphabet=" \t\n\r\u3000\xa0", min_size=1, max_size=6),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
)
texts_st = st.lists(pieces_st, max_size=24).map("".join)


@pytest.mark.parametrize("name", FAMILIES)
@FUZZ
@given(text=texts_st)
def test_fuzz(name, text):
    check(name, text)


# ----- the document on every kind ------------------------------------------------------------------


def same_as_tokenizer(doc: Document) -> None:
    tok = doc.tokenizer
    kwargs = {"allowed_special": "all"} if doc.specials else {"disallowed_special": ()}
    expected = tok.pieces(doc.text, **kwargs)
    assert doc.ids.tolist() == [p.id for p in expected]
    assert list(doc.pieces()) == expected
    chunks = [(c.start, c.end) for c in tok.chunks(doc.text, **kwargs)]
    assert chunks == list(zip(doc.chunk_starts, doc.chunk_ends))


@pytest.mark.parametrize("name", FAMILIES)
def test_document_on_samples(name):
    _, _, ours = pair(name)
    for key in ("languages/fr.txt", "languages/ja.txt", "multiscript.txt", "code.py"):
        text = sample_texts()[key]
        for specials in (False, True):
            same_as_tokenizer(Document.build(ours, text, specials))


@pytest.mark.parametrize("name", FAMILIES)
@FUZZ
@given(old=texts_st, insert=texts_st, data=st.data(), specials=st.booleans())
def test_document_edits(name, old, insert, data, specials):
    _, _, ours = pair(name)
    old = fix_surrogates(old)
    insert = fix_surrogates(insert)
    start = data.draw(st.integers(0, len(old)))
    end = data.draw(st.integers(start, len(old)))
    new = old[:start] + insert + old[end:]
    doc = Document.build(ours, old, specials).edited(new)
    same_as_tokenizer(doc)


def test_graphemes_of_a_newer_unicode():
    """Found by the fuzz on T5: the ``regex`` module's ``\\X`` (a newer Unicode) joins U+10EF1 to
    ``e`` + U+0301, HF's ``unicode-segmentation`` does not, so HF composed the ``é`` and the core
    did not. Every such code point (``hf_tables.GRAPHEME_SPLIT``) now starts a grapheme."""
    from tokenizers import normalizers as N

    from tokscope.core.text import unicode_tables as hf_tables
    from tokscope.core.text.unicode import parse_ranges
    from tokscope.core.normalizers import Precompiled
    from tokscope.core.normalizers.precompiled import build_charsmap

    blob = build_charsmap({"a": "b", "e\u0301": "é"})
    ours, ref = Precompiled(blob), N.Precompiled(blob)
    for lo, hi in parse_ranges(hf_tables.GRAPHEME_SPLIT):
        for cp in range(lo, hi + 1):
            for text in ("a" + chr(cp), "e\u0301" + chr(cp) + "\u0301", chr(cp) + "a"):
                assert ours.normalize_str(text) == ref.normalize_str(text), hex(cp)
    check("t5", "e\u0301\U00010ef1")


@pytest.mark.parametrize("name", FAMILIES)
@FUZZ
@given(old=texts_st, insert=texts_st, data=st.data(), window=st.integers(1, 12))
def test_document_in_small_windows(name, old, insert, data, window):
    """A restartable tokenizer scans a window at a time (``SCAN_WINDOW`` characters, 4096): with
    windows of a few characters, builds and edits still equal the whole pass."""
    from unittest import mock

    from tokscope.core.tokenizer import tokenizer as tokenizer_module

    _, _, ours = pair(name)
    old = fix_surrogates(old) * 3
    insert = fix_surrogates(insert)
    start = data.draw(st.integers(0, len(old)))
    end = data.draw(st.integers(start, len(old)))
    with mock.patch.object(tokenizer_module, "SCAN_WINDOW", window):
        doc = Document.build(ours, old)
        same_as_tokenizer(doc)
        same_as_tokenizer(doc.edited(old[:start] + insert + old[end:]))


@pytest.mark.parametrize("name", FAMILIES)
def test_samples_in_small_windows(name):
    from unittest import mock

    from tokscope.core.tokenizer import tokenizer as tokenizer_module

    _, _, ours = pair(name)
    with mock.patch.object(tokenizer_module, "SCAN_WINDOW", 16):
        for key in ("languages/fr.txt", "languages/ja.txt", "languages/hi.txt", "multiscript.txt", "code.py"):
            same_as_tokenizer(Document.build(ours, sample_texts()[key]))


@pytest.mark.parametrize("name", FAMILIES)
def test_pickle_round_trip(name):
    """Every stage pickles (the sources' cache keeps built tokenizers that way): the unpickled
    tokenizer encodes, places pieces and decodes as the original, and no cache travels."""
    import pickle

    _, _, ours = pair(name)
    text = sample_texts()["multiscript.txt"]
    ours.encode(text, disallowed_special=())  # fill the caches
    blob = pickle.dumps(ours, protocol=pickle.HIGHEST_PROTOCOL)
    back = pickle.loads(blob)
    assert back.kind == ours.kind and back.n_vocab == ours.n_vocab
    for sample in (text, " ".join(hf_files.LOOKALIKES)):
        assert back.encode(sample, allowed_special="all") == ours.encode(sample, allowed_special="all")
        assert back.pieces(sample, disallowed_special=()) == ours.pieces(sample, disallowed_special=())
    ids = ours.encode(text, disallowed_special=())
    assert back.decode(ids) == ours.decode(ids)
    fresh = pickle.dumps(hf.from_json_text(hf_files.build(name), name), protocol=pickle.HIGHEST_PROTOCOL)
    assert abs(len(fresh) - len(blob)) < 4096  # caches (kilobytes to megabytes) are left out
