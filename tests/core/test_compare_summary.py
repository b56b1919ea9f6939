"""``summarize`` (one tokenizer's counts and cuts, without its pieces: what ``tokscope compare``
keeps) against ``segment`` (the pieces, what the comparison screen keeps) and against plain
computations, and the memory the summary path takes.

Both paths must give the same :class:`Comparison` on every text, mixing OpenAI encodings (byte-level
BPE from ranks: their pieces tile the text's bytes, and the summary comes from the ids' start map)
and ``tokenizer.json`` files (byte-level BPE, WordPiece, Unigram: segmented, then summarized).
"""

from __future__ import annotations

import gc
import tracemalloc
from itertools import accumulate

import hf_files
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.insights.compare import Summary, compare, segment, start_map, summarize
from tokscope.core.text.errors import DisallowedSpecialError
from tokscope.core.tokenizer.tokenizer import Tokenizer
from tokscope.sample_texts import read_sample

OPENAI = ("gpt2", "cl100k_base", "o200k_base")
#: tokenizer.json files: byte-level BPE (llama3, gpt2), WordPiece (bert), Unigram (t5)
HF = ("llama3", "gpt2", "bert", "t5")

FAMILY = "👩\u200d👩\u200d👧"
ALPHABET = st.sampled_from(
    list("ab Zq1 9\n\t'sdltrevm.,/!?-") + ["  ", "\n\n", "\n   ", "'s", "'ll", "😀", FAMILY, "🇫🇷", "日本語", "中文",
                                          "é", "e\u0301", "\u0301", "ß", "Ω", "Straße", "ﬁ", "ＨＥＬＬＯ", "\u200d", "\r\n",
                                          "123456", "\x00", "<|endoftext|>", "<|fim_prefix|>", "[CLS]", "</s>", "\ud800"]
)
TEXT = st.one_of(st.lists(ALPHABET, max_size=40).map("".join), st.text(max_size=30))


@pytest.fixture(scope="module")
def toks(load):
    out = [load(n) for n in OPENAI]
    for name in HF:
        try:
            out.append(hf.from_json_text(hf_files.build(name), f"hf-{name}"))
        except hf_files.Missing as exc:  # a package the file needs is not installed
            print(f"skipping {name}: {exc}")
    return out


def same_summary(a: Summary, b: Summary) -> None:
    assert (a.name, a.count, a.n_chars, a.n_bytes, a.partial, a.single_byte, a.special) == (
        b.name, b.count, b.n_chars, b.n_bytes, b.partial, b.single_byte, b.special)
    assert list(a.boundaries()) == list(b.boundaries())


def test_both_paths_are_exercised(toks):
    """The start-map path (pieces tile the bytes) and the segmented one each have tokenizers here."""
    kinds = {t.pieces_tile_bytes for t in toks}
    assert kinds == {True, False} or len(toks) == len(OPENAI)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, picks=st.lists(st.integers(0, 6), min_size=2, max_size=3, unique=True),
       allowed=st.sampled_from([(), "all"]))
def test_summaries_compare_as_segmentations(toks, text, picks, allowed):
    chosen = [toks[k % len(toks)] for k in picks]
    if len({t.name for t in chosen}) < len(chosen):
        chosen = chosen[:1] + [t for t in toks if t is not chosen[0]][:1]
    special = {"allowed_special": allowed, "disallowed_special": ()}
    segs = [segment(t, text, **special) for t in chosen]
    sums = [summarize(t, text, ids=True, **special) for t in chosen]
    for seg, summary in zip(segs, sums):
        same_summary(summary, seg.summary())
        assert list(summary.ids) == list(seg.ids)
    assert compare(text, sums) == compare(text, segs)
    assert compare(text, [summarize(t, text, **special) for t in chosen]) == compare(text, segs)


@pytest.mark.parametrize("text", ["", "hello world", f"{FAMILY} x 🇫🇷 日本語 e\u0301 <|endoftext|>\n\n  x",
                                  read_sample("multiscript.txt")])
def test_summary_of_byte_level_bpe_is_the_plain_count(toks, text):
    """The start map's numbers against the tokens' bytes, counted plainly."""
    for tok in toks[:len(OPENAI)]:
        ids = tok.encode(text, disallowed_special=())
        parts = [tok.decode_bytes([i]) for i in ids]
        summary = summarize(tok, text)
        assert summary.count == len(ids) and summary.n_bytes == len(text.encode()) and summary.n_chars == len(text)
        assert set(summary.boundaries()) == set(list(accumulate(map(len, parts)))[:-1])
        assert summary.single_byte == sum(len(p) == 1 for p in parts)
        assert summary.partial == sum(1 for p in parts if not _decodes(p))
        assert summary.ids == ()
        marks = start_map(tok, ids)
        assert len(marks) == len(text.encode()) and sum(1 for m in marks if m) == len(ids)
    special = summarize(toks[0], "a<|endoftext|>b", allowed_special="all")
    assert special.special == 1 and special.count == 3


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_summarize_refuses_as_segment_does(toks):
    for tok in toks[:len(OPENAI)]:
        with pytest.raises(DisallowedSpecialError):
            summarize(tok, "a<|endoftext|>b", disallowed_special="all")


def test_pieces_that_do_not_tile_the_bytes_are_segmented():
    """Byte-level BPE whose pattern skips the spaces: the ids' bytes are not the text's, so the
    summary comes from the placed pieces (the spaces are in no piece)."""
    tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\S+")
    text = "ab  cab é"
    summary = summarize(tok, text)
    same_summary(summary, segment(tok, text).summary())
    assert summary.count == 5 and list(summary.boundaries()) == [2, 5, 7, 9]


# ----- memory -------------------------------------------------------------------------------------


def _traced(fn):
    """``(result, peak, kept)``: the bytes Python allocated at most while ``fn`` ran, and those
    still allocated after it, above what was allocated before."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = fn()
        now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak - before, now - before


def test_a_summary_costs_little_more_than_the_ids(load):
    """A memory budget (bytes allocated, not time): on a 300 KB text, summarizing costs at most
    three bytes per byte of the text above the ids' encode, and keeps about one (the boundaries'
    bitmap). The segmentation path keeps ids and ends (8 bytes a token each: ~5x the text) and
    peaks ~6x the text above the encode; the summary path peaks ~2x. The tokenizer's table of
    marks is built by its first summary and kept with it: at most 4 bytes a token of the
    vocabulary (the compiled start map's), or ~30 bytes per distinct token met (Python's)."""
    text = (read_sample("multiscript.txt") + read_sample("prose.txt") + read_sample("code.py")) * 30
    n_bytes = len(text.encode())
    for name in OPENAI:
        tok = load(name)
        # what every later call finds built: the chunk and line caches, the id -> bytes table, the
        # table of marks
        tok.encode(text, disallowed_special=())
        tok.token_bytes(0)
        _, _, table = _traced(lambda: summarize(tok, "x"))
        assert table <= 4 * tok.n_vocab + 64 * 1024, (name, table)
        ids, encode_peak, _ = _traced(lambda: tok.encode(text, disallowed_special=()))
        del ids
        summary, peak, kept = _traced(lambda: summarize(tok, text))
        assert summary.count > n_bytes // 8
        assert peak <= encode_peak + 3 * n_bytes, (name, peak / n_bytes, encode_peak / n_bytes)
        assert kept <= 1.25 * n_bytes, (name, kept / n_bytes)
