"""``tokscope.core.insights.diff``: two tokenizers compared by vocabulary, added tokens, stages and a
differential search for the shortest text they split differently.

The tokenizer.json files are built here with Hugging Face ``tokenizers`` from tiktoken's own GPT-2
ranks (a prefix of them, for speed, and once all of them), then changed the way a broken
conversion changes them: a token removed, two ids swapped, two merges swapped, the pre-tokenizer
replaced (what a GGUF file's ``pre=default`` does to Llama 3), a special token made ordinary.
"""

from __future__ import annotations

import itertools
import json
import threading

import hf_files
import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken, Regex, decoders, models, pre_tokenizers

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.insights.diff import (
    ATOMS,
    diff_json,
    diff_tokenizers,
    generated_texts,
    search_difference,
    shrink,
    split,
    stage_table,
    vocab_diff,
)
from tokscope.core.text.errors import CancelledError
from tokscope.core.tokenizer.tokenizer import Tokenizer

#: how many of GPT-2's ranks the small tokenizers keep (a prefix of ranks is a whole BPE)
SMALL = 3000


def hf_text(ranks: dict[bytes, int], *, pre=None, edit=None) -> str:
    """A GPT-2-style tokenizer.json from ``ranks`` as ``transformers`` converts tiktoken files;
    ``edit(obj)`` changes the JSON object before it is written."""
    vocab, merges = hf_files.tiktoken_to_hf(ranks)
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre or pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    text = tok.to_str()
    if edit is not None:
        obj = json.loads(text)
        edit(obj)
        text = json.dumps(obj)
    return text


def from_hf(text: str, name: str) -> Tokenizer:
    return hf.from_json_text(text, name=name)


@pytest.fixture(scope="module")
def gpt2(load):
    return load("gpt2")


@pytest.fixture(scope="module")
def small_ranks(gpt2):
    return {data: rank for data, rank in gpt2.ranks.items() if rank < SMALL}


@pytest.fixture(scope="module")
def small(gpt2, small_ranks):
    """GPT-2's first ranks as a rank-file tokenizer (tiktoken's kind), with GPT-2's pattern."""
    return Tokenizer("small", small_ranks, gpt2.pattern, {"<|endoftext|>": SMALL})


@pytest.fixture(scope="module")
def small_json(small_ranks):
    return hf_text(small_ranks)


def splits_differ(a: Tokenizer, b: Tokenizer, text: str, by_ids: bool = True) -> bool:
    sa, sb = split(a, text), split(b, text)
    if by_ids:
        return [p.id for p in sa] != [p.id for p in sb]
    return [(p.start, p.end, p.byte_start, p.byte_end) for p in sa] != [(p.start, p.end, p.byte_start, p.byte_end)
                                                                       for p in sb]


def assert_one_minimal(a: Tokenizer, b: Tokenizer, text: str, by_ids: bool) -> None:
    """``text`` splits differently, and without any one of its characters it does not."""
    assert splits_differ(a, b, text, by_ids)
    for k in range(len(text)):
        shorter = text[:k] + text[k + 1:]
        assert not shorter or not splits_differ(a, b, shorter, by_ids), (text, shorter)


# ----- same ------------------------------------------------------------------------------------------


def test_rank_file_and_its_tokenizer_json_are_the_same(small, small_json):
    other = from_hf(small_json, "small.json")
    d = diff_tokenizers(small, other, "Hello world, it's 2024! 日本語 😀", seconds=0.5)
    assert d.verdict == "same" and d.same
    assert d.vocab.shared == SMALL and d.vocab.only_a == d.vocab.only_b == d.vocab.different_id == 0
    assert d.added.same and d.added.a_tokens == d.added.b_tokens == 1
    assert d.search.compared == "ids" and d.search.text_differs is False and d.search.difference is None
    assert d.search.tried > 1  # the given text, then generated ones
    rows = {r.stage: r for r in d.stages}
    assert rows["kind"].same and rows["template"].same and rows["normalizer"].same
    # described differently, yet the same: the table informs, the splits decide
    assert not rows["pre-tokenizer"].same and rows["pre-tokenizer"].a.startswith("pattern ")
    assert "ByteLevel" in rows["pre-tokenizer"].b and not rows["decoder"].same


def test_tiktoken_gpt2_and_a_tokenizer_json_from_its_ranks_are_the_same(gpt2):
    other = from_hf(hf_text(dict(gpt2.ranks)), "gpt2.json")
    d = diff_tokenizers(gpt2, other, seconds=1)
    assert d.verdict == "same", d.summary()
    assert d.vocab.shared == 50256 and d.added.same


# ----- vocabularies ----------------------------------------------------------------------------------


def test_a_removed_token_is_only_in_one(small, small_ranks):
    last = max(small_ranks, key=small_ranks.get)
    kept = {k: v for k, v in small_ranks.items() if k != last}

    def drop_specials_id(obj):  # the special token keeps its id SMALL, as in the rank file
        obj["added_tokens"][0]["id"] = SMALL

    other = from_hf(hf_text(kept, edit=drop_specials_id), "removed.json")
    d = diff_tokenizers(small, other, seconds=3)
    v = d.vocab
    assert (v.only_a, v.only_b, v.different_id) == (1, 0, 0)
    assert v.only_a_examples[0].bytes == last and v.only_a_examples[0].a_id == SMALL - 1
    assert d.verdict == "differ" and d.search.compared == "ids"


def test_swapped_ids_are_found_and_splits_compared_by_cuts(small, small_json):
    def swap(obj):
        vocab = obj["model"]["vocab"]
        x, y = next(k for k, v in vocab.items() if v == 300), next(k for k, v in vocab.items() if v == 301)
        vocab[x], vocab[y] = 301, 300

    other = from_hf(hf_text_cached(small_json, swap), "swapped.json")
    d = diff_tokenizers(small, other, seconds=1)
    v = d.vocab
    assert (v.only_a, v.only_b, v.different_id) == (0, 0, 2)
    assert {(e.a_id, e.b_id) for e in v.different_id_examples} == {(300, 301), (301, 300)}
    assert d.verdict == "differ"
    # the same cuts everywhere, only other ids: compared by cuts, no text splits differently
    assert d.search.compared == "spans" and d.search.difference is None


def hf_text_cached(text: str, edit) -> str:
    obj = json.loads(text)
    edit(obj)
    return json.dumps(obj)


def test_swapped_merges_show_as_other_merge_ranks(small_json):
    def swap(obj):
        merges = obj["model"]["merges"]
        merges[10], merges[11] = merges[11], merges[10]

    a, b = from_hf(small_json, "a.json"), from_hf(hf_text_cached(small_json, swap), "b.json")
    v = vocab_diff(a, b)
    assert v.value == "merge rank" and v.different_value == 2 and v.different_id == 0
    assert sorted((e.a_value, e.b_value) for e in v.different_value_examples) == [(10, 11), (11, 10)]


def test_a_special_token_made_ordinary_is_an_added_difference(small_json):
    def ordinary(obj):
        obj["added_tokens"][0].update(special=False, lstrip=True)

    a = from_hf(small_json, "a.json")
    b = from_hf(hf_text_cached(small_json, ordinary), "b.json")
    d = diff_tokenizers(a, b, seconds=0)
    (x,) = d.added.differences
    assert (x.content, x.a_id, x.b_id, x.a_special, x.b_special) == ("<|endoftext|>", SMALL, SMALL, True, False)
    assert x.a_flags == () and x.b_flags == ("lstrip",)
    assert d.verdict == "differ" and d.vocab.same


# ----- the search ------------------------------------------------------------------------------------


def test_a_changed_pre_tokenizer_differs_on_a_minimal_text(small_json, small_ranks):
    """A GGUF ``pre=default`` in miniature: the same vocabulary cut into chunks by another pattern."""
    changed = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(hf_files.LLAMA3), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=True),
    ])
    a, b = from_hf(small_json, "a.json"), from_hf(hf_text(small_ranks, pre=changed), "b.json")
    d = diff_tokenizers(a, b, seconds=20)
    assert d.vocab.same and d.added.same
    assert not next(r for r in d.stages if r.stage == "pre-tokenizer").same
    found = d.search.difference
    assert d.verdict == "differ" and found is not None and found.minimal and not d.search.timed_out
    assert_one_minimal(a, b, found.text, by_ids=True)
    assert [p.id for p in found.a] == a.encode_ordinary(found.text)
    assert [p.id for p in found.b] == b.encode_ordinary(found.text)
    assert len(found.text) <= 3
    # the same seed finds the same text
    again = search_difference(a, b, seconds=20, by_ids=True)
    assert again.difference.text == found.text


def test_a_difference_in_the_given_text_is_shrunk_from_it(small, small_json, small_ranks):
    changed = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(hf_files.LLAMA3), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=True),
    ])
    b = from_hf(hf_text(small_ranks, pre=changed), "b.json")
    text = "A long first line that both cut alike.\nThen the year 1999 comes.\n"
    report = search_difference(small, b, text, seconds=20)
    assert report.text_given and report.text_differs
    found = report.difference
    assert found is not None and len(found.text) < len(text)
    assert_one_minimal(small, b, found.text, by_ids=True)


def test_cl100k_and_o200k_differ_on_a_short_text(load):
    a, b = load("cl100k_base"), load("o200k_base")
    d = diff_tokenizers(a, b, seconds=10)
    assert d.verdict == "differ" and d.search.compared == "spans"
    assert d.vocab.only_a > 0 and d.vocab.only_b > 0 and d.vocab.different_id > 0
    found = d.search.difference
    assert found is not None and len(found.text) <= 2 and found.first_char == 0
    assert_one_minimal(a, b, found.text, by_ids=False)


def test_tokenizers_of_different_kinds(small):
    try:
        bert = from_hf(hf_files.build("bert"), "bert.json")
    except hf_files.Missing as exc:
        pytest.skip(str(exc))
    d = diff_tokenizers(bert, small, seconds=10)
    rows = {r.stage: r for r in d.stages}
    assert rows["kind"].a == "WordPiece" and rows["kind"].b == "byte-level BPE"
    assert rows["template"].a == "[CLS] $A [SEP]" and rows["template"].b == "$A"
    assert not rows["normalizer"].same and "BertNormalizer" in rows["normalizer"].a
    assert d.verdict == "differ" and d.search.compared == "spans"
    # WordPiece ``the`` and GPT-2's ``Ġthe`` both decode to " the": one token, in both vocabularies
    assert d.vocab.shared > 0
    found = d.search.difference
    assert found is not None and len(found.text) <= 2
    assert_one_minimal(bert, small, found.text, by_ids=False)


def test_special_token_lookalikes_are_encoded_as_text(small):
    pieces = split(small, "<|endoftext|>")
    assert len(pieces) > 1 and SMALL not in [p.id for p in pieces]


class TickingClock:
    """A fake clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_the_time_budget_bounds_the_search(small):
    report = search_difference(small, small, seconds=5, clock=TickingClock())
    assert report.timed_out and report.difference is None
    assert 0 < report.tried <= 5
    assert search_difference(small, small, seconds=0).tried == 0
    assert search_difference(small, small, "given text", seconds=0).tried == 1  # the given text is always tried


def test_shrinking_stops_at_the_budget(small_json, small_ranks):
    changed = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(hf_files.LLAMA3), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=True),
    ])
    a, b = from_hf(small_json, "a.json"), from_hf(hf_text(small_ranks, pre=changed), "b.json")
    text = "The year 1999. " * 40
    report = search_difference(a, b, text, seconds=3, clock=TickingClock())
    found = report.difference
    assert report.timed_out and found is not None and not found.minimal
    assert splits_differ(a, b, found.text)  # what is reported still differs


def test_cancel_stops_the_search(small):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        diff_tokenizers(small, small, seconds=60, cancel=cancel)
    cancel = threading.Event()
    seen = []

    def progress(tried, fraction):
        seen.append((tried, fraction))
        cancel.set()

    with pytest.raises(CancelledError):
        search_difference(small, small, seconds=60, cancel=cancel, progress=progress)
    assert seen and seen[0][0] == 64


def test_the_generator_covers_the_scripts_and_traps():
    head = [t for _, _, t in itertools.islice(generated_texts(), 2000)]
    joined = "".join(head)
    for needle in ("\u200d", "🇺🇸", "\u00a0", "\t", "\n", "<|endoftext|>", "<s>", "[CLS]", "'s", "'t", "'re",
                   "\u0301", "123456789", "İ", "ภาษาไทย", "안녕", "日本語", "שלום", "مرحبا", "नमस्ते", "привет", "γειά"):
        assert needle in joined, needle
    assert set(ATOMS) >= {"latin", "cyrillic", "greek", "arabic", "hebrew", "devanagari", "thai", "cjk", "hangul",
                          "emoji", "whitespace", "digits", "punctuation", "special", "combining", "case"}
    stages = [s for s, _, _ in itertools.islice(generated_texts(), 2000)]
    assert stages == sorted(stages, key=["chars", "pairs", "blocks", "mixes"].index)
    assert list(itertools.islice(generated_texts(5), 1500)) == list(itertools.islice(generated_texts(5), 1500))
    assert list(itertools.islice(generated_texts(5), 1500)) != list(itertools.islice(generated_texts(6), 1500))


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="abc XY\n😀", max_size=30), st.text(alphabet="abc XY\n😀", max_size=30))
def test_shrink_finds_a_planted_pair(left, right):
    def differs(text: str) -> bool:
        return "X" in text and "Y" in text and text.index("X") < text.rindex("Y")

    text = left + "X" + right + "Y"
    small = shrink(text, differs)
    assert small == "XY"


def test_stage_table_describes_each_stage(small):
    rows = stage_table(small, small)
    assert [r.stage for r in rows] == ["kind", "normalizer", "pre-tokenizer", "model", "added tokens", "template",
                                      "post-processor", "decoder"]
    assert all(r.same for r in rows)
    assert rows[3].a == f"byte-level BPE from ranks, {SMALL:,} tokens"


def test_json_is_plain_data(small, small_json):
    d = diff_tokenizers(small, from_hf(small_json, "x.json"), seconds=0)
    out = json.loads(json.dumps(diff_json(d)))
    assert out["schema"] == 1 and out["verdict"] == "same"
    assert set(out) == {"schema", "verdict", "a", "b", "vocab", "added", "stages", "search"}
    assert out["search"]["special_tokens"] == "text" and out["search"]["difference"] is None
