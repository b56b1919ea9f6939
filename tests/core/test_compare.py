"""Alignment, stats, cost and language premiums of ``tokscope.core.insights.compare`` / ``languages``.

The expected numbers are computed here independently and plainly: from ``Tokenizer.encode`` ids
and each token's bytes (``decode_bytes([id])``), never from the module under test.
"""

from __future__ import annotations

import re
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.insights.compare import (
    Segmentation,
    TextIndex,
    align,
    bar,
    compare,
    cost,
    costs,
    count_words,
    format_money,
    from_document,
    segment,
)
from tokscope.core.document.document import Document, diff_span
from tokscope.core.text.errors import CancelledError, DisallowedSpecialError
from tokscope.core.insights.languages import language_table, premium

NAMES = ["gpt2", "cl100k_base", "o200k_base"]

FAMILY = "👩\u200d👩\u200d👧"  # ZWJ sequence: 3 emoji joined by U+200D
FLAG = "🇫🇷"  # two regional indicators
COMBINING = "e\u0301te\u0301 cafe\u0301 n\u0303"  # e + COMBINING ACUTE, n + COMBINING TILDE
TEXTS = [
    "",
    "hello world",
    f"family {FAMILY} and flag {FLAG}!",
    "日本語のテキストを分割する。中文也一样。",
    COMBINING,
    f"mixed: {FAMILY}{FLAG} 日本 e\u0301 😀😀 ok\n\n  tabs\tand 12345 numbers",
    "   leading and trailing spaces   \n",
]


@pytest.fixture(scope="module")
def toks(load):
    return [load(n) for n in NAMES]


# ----- independent computations ---------------------------------------------------------------------


def plain_lengths(tok, ids):
    return [len(tok.decode_bytes([i])) for i in ids]


def plain_boundaries(tok, text):
    """Byte offsets between pieces, by summing the tokens' byte lengths."""
    ids = tok.encode(text, disallowed_special=())
    pos, out = 0, set()
    for n in plain_lengths(tok, ids)[:-1]:
        pos += n
        out.add(pos)
    return out


def plain_is_partial(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def plain_char_of_byte(text: str, byte: int):
    """Walk the characters: which one holds ``byte`` and how far into it."""
    pos = 0
    for k, ch in enumerate(text):
        n = len(ch.encode("utf-8"))
        if pos <= byte < pos + n:
            return k, byte - pos
        pos += n
    return len(text), byte - pos


# ----- segmentation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", TEXTS)
def test_segment_matches_encode_and_pieces(toks, text):
    data = text.encode()
    index = TextIndex(text)
    for tok in toks:
        seg = segment(tok, text)
        assert list(seg.ids) == tok.encode(text, disallowed_special=())
        assert seg.n_bytes == len(data) and seg.n_chars == len(text)
        assert seg.boundaries() == plain_boundaries(tok, text)
        pieces = tok.pieces(text, disallowed_special=())
        assert list(seg.ends) == [p.byte_end for p in pieces]
        assert seg.partial == sum(p.partial for p in pieces)
        assert seg.single_byte == sum(len(p.bytes) == 1 for p in pieces)
        for i, p in enumerate(pieces):
            assert seg.byte_span(i) == (p.byte_start, p.byte_end)
            assert index.char_of_byte(p.byte_start)[0] == p.start


def test_gpt2_cuts_inside_emoji_and_others_differ(toks):
    text = f"{FAMILY} {FLAG} 日本語 {COMBINING}"
    gpt2, cl100k, o200k = (segment(t, text) for t in toks)
    index = TextIndex(text)
    inside = [b for b in gpt2.boundaries() if index.char_of_byte(b)[1] != 0]
    assert inside, "gpt2 should cut inside some character of the emoji"
    # every boundary maps to a (char, inside) that the plain walk agrees with
    for seg in (gpt2, cl100k, o200k):
        for b in seg.boundaries():
            assert index.char_of_byte(b) == plain_char_of_byte(text, b)
    al = align([gpt2, cl100k, o200k])
    cuts = list(al.cuts(index))
    assert [c.byte for c in cuts] == sorted(set().union(*(plain_boundaries(t, text) for t in toks)))
    # a cut inside a character carries its byte offset into the character
    for c in cuts:
        assert (c.char, c.inside) == plain_char_of_byte(text, c.byte)
        assert c.members == tuple(c.byte in plain_boundaries(t, text) for t in toks)
    assert any(c.inside and not c.agreed for c in cuts)
    # the combining acute after "e" is its own character: cuts there are between characters
    acute = text.index("\u0301")
    acute_byte = index.byte_of_char(acute)
    for c in cuts:
        if c.byte == acute_byte:
            assert c.inside == 0 and c.char == acute


def test_text_index_every_byte():
    text = f"a{FAMILY}é{FLAG}日\u0301z"
    index = TextIndex(text)
    data = text.encode()
    assert index.n_bytes == len(data) and index.n_chars == len(text)
    for b in range(len(data) + 1):
        assert index.char_of_byte(b) == plain_char_of_byte(text, b)
        assert index.chars_before(b) == len(data[:b].decode("utf-8", "ignore")) + (
            1 if plain_is_partial(data[:b]) else 0
        )
    for k in range(len(text) + 1):
        assert index.byte_of_char(k) == len(text[:k].encode())


def test_overlapping_pieces_brute_force(toks):
    text = f"{FAMILY} x{FLAG}y 日本語 ab\u0301c"
    segs = [segment(t, text) for t in toks]
    for a in segs:
        for i in range(a.count):
            s, e = a.byte_span(i)
            for b in segs:
                expect = [j for j in range(b.count) if b.byte_span(j)[0] < e and s < b.byte_span(j)[1]]
                assert list(b.overlapping(s, e)) == expect


def test_index_at_byte(toks):
    text = f"ab {FAMILY}"
    seg = segment(toks[0], text)
    for i in range(seg.count):
        s, e = seg.byte_span(i)
        for b in range(s, e):
            assert seg.index_at_byte(b) == i
    assert seg.index_at_byte(seg.n_bytes) == seg.count - 1


# ----- stats ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", TEXTS[1:])
def test_stats_agree_with_plain_counts(toks, text):
    segs = [segment(t, text) for t in toks]
    result = compare(text, segs)
    words = len(re.findall(r"\S+", text))
    n_bytes = len(text.encode())
    first = plain_boundaries(toks[0], text)
    assert result.words == words and result.bytes == n_bytes and result.chars == len(text)
    for tok, st_ in zip(toks, result.stats):
        ids = tok.encode(text, disallowed_special=())
        parts = [tok.decode_bytes([i]) for i in ids]
        n = len(ids)
        assert st_.name == tok.name and st_.tokens == n
        assert st_.chars_per_token == pytest.approx(len(text) / n)
        assert st_.bytes_per_token == pytest.approx(n_bytes / n)
        assert st_.tokens_per_word == pytest.approx(n / words)
        partial = sum(1 for p in parts if plain_is_partial(p))
        single = sum(1 for p in parts if len(p) == 1)
        assert st_.partial == partial and st_.partial_share == pytest.approx(partial / n)
        assert st_.single_byte == single and st_.single_byte_share == pytest.approx(single / n)
        mine = plain_boundaries(tok, text)
        assert st_.boundaries == len(mine) == n - 1
        assert st_.extra_vs_first == len(mine - first)
        assert st_.missing_vs_first == len(first - mine)
        assert st_.same_as_first == len(mine & first)
    allsets = [plain_boundaries(t, text) for t in toks]
    union, agreed = set().union(*allsets), set.intersection(*allsets)
    assert set(result.alignment.union) == union and set(result.alignment.agreed) == agreed
    assert result.agreed_share == (pytest.approx(len(agreed) / len(union)) if union else None)


def test_stats_on_empty_text_have_no_ratios(toks):
    result = compare("", [segment(t, "") for t in toks])
    for s in result.stats:
        assert s.tokens == 0 and s.chars_per_token is None and s.tokens_per_word is None
        assert s.partial_share is None and s.boundaries == 0
    assert result.agreed_share is None


def test_words_are_non_space_runs():
    assert count_words("  one\ttwo\nthree  ") == 3
    assert count_words("日本語のテキスト") == 1
    assert count_words("") == 0


def test_special_tokens(toks):
    text = "a<|endoftext|>b"
    with pytest.raises(DisallowedSpecialError):
        segment(toks[0], text, disallowed_special="all")
    ordinary = segment(toks[0], text)
    assert list(ordinary.ids) == toks[0].encode(text, disallowed_special=())
    special = segment(toks[0], text, allowed_special="all")
    assert list(special.ids) == toks[0].encode(text, allowed_special="all")
    assert special.special == 1 and special.n_bytes == len(text)


def test_align_refuses_different_texts():
    a = Segmentation("a", (1,), (3,), 3, 3)
    b = Segmentation("b", (1,), (4,), 4, 4)
    with pytest.raises(ValueError):
        align([a, b])
    with pytest.raises(ValueError):
        align([])


# ----- cost -------------------------------------------------------------------------------------------


def test_cost_plain_arithmetic():
    c = cost("x", 2_000, price_in=2.5, price_out=10.0, copies=300)
    assert c.input == pytest.approx(2_000 * 2.5 / 1_000_000)
    assert c.output == pytest.approx(2_000 * 10 / 1_000_000)
    assert c.input_total == pytest.approx(2_000 * 300 * 2.5 / 1_000_000)
    assert c.output_total == pytest.approx(2_000 * 300 * 10 / 1_000_000)


def test_costs_follow_stats(toks):
    text = "The same words, priced three ways."
    result = compare(text, [segment(t, text) for t in toks])
    items = costs(result.stats, 1.0, 3.0, copies=10)
    for tok, c in zip(toks, items):
        n = len(tok.encode(text))
        assert c.tokens == n and c.output_total == pytest.approx(n * 10 * 3 / 1e6)


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), "2", True])
def test_cost_refuses_bad_prices(bad):
    with pytest.raises(ValueError):
        cost("x", 10, bad, 1)
    with pytest.raises(ValueError):
        cost("x", 10, 1, bad)


@pytest.mark.parametrize("bad", [0, -3, 1.5])
def test_cost_refuses_bad_copies(bad):
    with pytest.raises(ValueError):
        cost("x", 10, 1, 1, copies=bad)


def test_format_money():
    assert format_money(0) == "$0"
    assert format_money(3) == "$3.00"
    assert format_money(0.0123) == "$0.0123"
    assert format_money(0.000001) == "$0.00000100"


# ----- bar --------------------------------------------------------------------------------------------


@given(st.floats(0, 1000), st.floats(0.001, 1000), st.integers(0, 60), st.booleans())
def test_bar_fits(value, maximum, width, ascii_):
    out = bar(value, maximum, width, ascii=ascii_)
    assert len(out) <= max(width, 1)
    if value >= maximum and width:
        assert len(out) == width
    if ascii_:
        assert set(out) <= {"#"}


def test_bar_grows():
    lengths = [len(bar(v, 10, 20)) for v in range(11)]
    assert lengths == sorted(lengths) and lengths[-1] == 20 and lengths[0] == 0


# ----- languages --------------------------------------------------------------------------------------


def test_language_table_counts_and_premiums(toks):
    texts = {"en": "The cat sat on the mat.", "ja": "猫がマットの上に座った。", "el": "Η γάτα κάθισε στο χαλί."}
    calls = []
    tbl = language_table(texts, toks, names={"en": "English"}, progress=lambda d, t: calls.append((d, t)))
    assert tbl.encodings == tuple(NAMES) and [r.code for r in tbl.rows] == ["en", "ja", "el"]
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert tbl.row("en").name == "English" and tbl.row("ja").name == "ja"
    for row in tbl.rows:
        for k, tok in enumerate(toks):
            n = len(tok.encode(texts[row.code]))
            en = len(tok.encode(texts["en"]))
            assert row.counts[k] == n
            assert row.premiums[k] == pytest.approx(n / en)
        assert row.bytes == len(texts[row.code].encode()) and row.chars == len(texts[row.code])
    assert tbl.row("en").premiums == (1.0, 1.0, 1.0)
    assert tbl.max_count() == max(c for r in tbl.rows for c in r.counts)


def test_language_table_without_reference_and_cancel(toks):
    tbl = language_table({"fr": "Bonjour"}, toks[:1])
    assert tbl.rows[0].premiums == (None,)
    assert premium(5, 0) is None
    stop = threading.Event()
    stop.set()
    with pytest.raises(CancelledError):
        language_table({"fr": "Bonjour"}, toks[:1], cancel=stop)


def test_shipped_languages_have_english_first():
    from tokscope.sample_texts import language_text, languages

    codes = [lang["code"] for lang in languages()]
    assert codes[0] == "en" and len(codes) >= 20
    assert all(language_text(c).strip() for c in codes)


# ----- properties -------------------------------------------------------------------------------------

ALPHABET = st.sampled_from(
    list("ab Zq1 9\n\t'sdltrevm.,/!?-") + ["  ", "\n\n", "     ", "\n   ", " \n ", "'s", "'ll", "'RE", "😀", FAMILY, FLAG, "日", "本",
                                               "é", "e\u0301", "\u0301", "ß", "Ω", "\u200d", "\r\n", "123456", "\x00"]
)
TEXT = st.lists(ALPHABET, max_size=40).map("".join)
ANY_TEXT = st.one_of(TEXT, st.text(max_size=40))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=ANY_TEXT)
def test_alignment_properties(toks, text):
    segs = [segment(t, text) for t in toks]
    al = align(segs)
    n_bytes = len(text.encode("utf-8", "surrogatepass")) if text else 0
    index = TextIndex(text)
    previous = 0
    for cut in al.cuts(index):
        assert previous < cut.byte < segs[0].n_bytes  # sorted, strictly inside the text
        previous = cut.byte
        assert any(cut.members)
    assert segs[0].n_bytes == sum(len(tok.decode_bytes([i])) for tok in toks[:1] for i in segs[0].ids)
    if "\ud800" not in text and not any(0xD800 <= ord(c) < 0xE000 for c in text):
        assert segs[0].n_bytes == n_bytes
    sets = [set(s.boundaries()) for s in segs]
    assert set(al.agreed) == set.intersection(*sets)
    assert set(al.union) == set().union(*sets)
    assert al.differ() == sorted(set(al.union) - set(al.agreed))
    for k, s in enumerate(sets):
        assert al.extra(k) == sorted(s - sets[0]) and al.missing(k) == sorted(sets[0] - s)
    for seg in segs:
        assert list(seg.ends) == sorted(seg.ends) and (not seg.ends or seg.ends[-1] == seg.n_bytes)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=TEXT, insert=TEXT, data=st.data())
def test_an_edited_document_segments_as_a_fresh_encode(toks, base, insert, data):
    i = data.draw(st.integers(0, len(base)))
    j = data.draw(st.integers(i, len(base)))
    new = base[:i] + insert + base[j:]
    for tok in toks:
        doc = Document.build(tok, base)
        got = from_document(doc.edited(new))
        want = segment(tok, new)
        assert got.ids == want.ids and got.ends == want.ends and got.flags == want.flags
        assert (got.partial, got.single_byte, got.special) == (want.partial, want.single_byte, want.special)
        # and a second edit on top of the incremental result stays right
        again = from_document(doc.edited(new).edited(new + insert))
        assert again.ids == segment(tok, new + insert).ids


def test_an_edit_after_a_long_whitespace_run_segments_exactly(toks):
    base = "x\n" + " " * 100 + "b tail words here"
    new = base.replace("b tail", "\n tail")
    for tok in toks:
        assert from_document(Document.build(tok, base).edited(new)).ids == segment(tok, new).ids


def test_an_edit_of_a_big_text_touches_only_near_chunks(toks):
    base = ("Lorem ipsum dolor sit amet, 123456 😀 日本語.\n" * 400)
    new = base[:9000] + "INSERTED" + base[9000:]
    for tok in toks:
        edited = Document.build(tok, base).edited(new)
        assert edited.edit is not None and edited.edit.new_stop - edited.edit.restart < 200
        assert from_document(edited).ids == segment(tok, new).ids


@given(st.text(max_size=30), st.text(max_size=30))
def test_edit_span(old, new):
    span = diff_span(old, new)
    start, old_end, new_end = span.start, span.old_end, span.new_end
    assert old[:start] == new[:start]
    assert old[old_end:] == new[new_end:]
    assert 0 <= start <= old_end <= len(old) and start <= new_end <= len(new)
    # the common prefix is as long as can be, then the common suffix (not overlapping it)
    assert start == min(len(old), len(new)) or old[start] != new[start]
    assert old_end == start or new_end == start or old[old_end - 1] != new[new_end - 1]


@pytest.mark.parametrize("text", TEXTS)
def test_from_document_matches_segment(toks, text):
    for tok in toks:
        seg = segment(tok, text)
        other = from_document(Document.build(tok, text))
        assert (other.ids, other.ends, other.partial, other.single_byte, other.n_chars, other.n_bytes) == (
            seg.ids, seg.ends, seg.partial, seg.single_byte, seg.n_chars, seg.n_bytes)
