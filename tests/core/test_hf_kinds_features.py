"""Every core feature the panes use, on tokenizer.json tokenizers of every kind: "why this split"
(:mod:`tokscope.core.explain.why`), merge trees and unreachable tokens (:mod:`tokscope.core.explain.merge_trees`), the
inspector's facts (:mod:`tokscope.core.explain.facts`), vocabulary search, stats, languages, compare and
export of ids. Where a feature does not apply to a kind, the error names the kind.

Unreachable tokens are checked against ``tokenizers`` itself: for BPE and Unigram, its bare model
given the token's spelling as a chunk; for WordPiece and WordLevel word-initial tokens, its whole
pipeline given the spelling.
"""

from __future__ import annotations

import json
import random

import hf_files
import pytest
from hf_support import sample_texts

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.explain import merge_trees as merges
from tokscope.core.explain import why
from tokscope.core.insights.compare import align, from_document
from tokscope.core.document.document import Document
from tokscope.core.text.errors import NotForThisKindError
from tokscope.core.explain.facts import merge_rank, piece_facts, token_facts
from tokscope.core.insights.languages import language_table
from tokscope.core.insights.stats import text_stats
from tokscope.core.explain.vocab_search import search_vocab

FAMILIES = hf_files.FAMILIES
METHOD = {
    "gpt2": "BPE", "roberta": "BPE", "llama3": "BPE", "qwen2": "BPE", "deepseek": "BPE", "llama2": "BPE",
    "mistral-metaspace": "BPE", "gemma": "BPE", "bert": "WordPiece", "t5": "Unigram", "xlmr-bytefallback": "Unigram",
    "wordlevel": "WordLevel",
}
TEXT = "Hello, Wörld! The café's ﬁne: 12345 apples, 😀 and 中文字 — naïve Straße\n  done."

_TOKENIZERS: dict = {}


def load(name: str):
    tok = _TOKENIZERS.get(name)
    if tok is None:
        try:
            tok = _TOKENIZERS[name] = hf.from_json_text(hf_files.build(name), name)
        except hf_files.Missing as exc:
            pytest.skip(str(exc))
    return tok


# ----- why this split --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FAMILIES)
def test_explain_every_chunk(name):
    tok = load(name)
    for text in (TEXT, sample_texts()["languages/de.txt"], sample_texts()["code.py"][:2000]):
        found = why.explain_text(tok, text)
        assert list(found.tokens) == tok.encode(text, disallowed_special=()), name
        for c in found.chunks:
            assert c.summary, c
            if c.chunk.special:
                assert c.method == "added"
                continue
            assert c.method == METHOD[name]
            assert c.form == (tok.chunk_form(text, c.chunk.start, c.chunk.end) or c.chunk.text)
            if c.method == "BPE":
                check_bpe(tok, c)
            elif c.method == "WordPiece":
                assert c.wordpiece.tokens == c.tokens
                if c.tokens == (tok.unknown_id,):
                    assert c.wordpiece.unknown and c.wordpiece.reason in ("no_match", "too_long")
            elif c.method == "Unigram":
                u = c.unigram
                assert u.best.score >= max((a.score for a in u.alternatives), default=u.best.score)
                assert all(a.ids != u.best.ids for a in u.alternatives)
                assert "".join(u.best.pieces) == c.form
            elif c.method == "WordLevel":
                assert c.wordlevel.known == (c.tokens != (tok.unknown_id,))


def check_bpe(tok, c) -> None:
    replay = c.bpe
    assert replay.tokens == c.tokens
    for step in replay.steps:  # the merge applied has the lowest rank of the pairs there
        ranks = [x.rank for x in step.candidates if x.rank is not None]
        assert step.rule.rank == min(ranks)
        assert tok.model.merge_rank(step.rule.left, step.rule.right) == step.rule.rank
    for tree in c.trees:
        assert b"".join(merges.leaves(tree)) == tok.token_bytes(tree.id)
        for _, node in merges.walk(tree):
            assert node.merge_rank == merge_rank(tok, node.id)
            if node.children:
                assert node.merge_rank == tok.model.merge_rank(node.children[0].id, node.children[1].id) or \
                    tok.model.merge_result(node.children[0].id, node.children[1].id) == node.id


def test_wordpiece_unknown_says_why():
    tok = load("bert")
    found = why.explain_at(tok, "hello 𓀀x world", 7)
    assert found.tokens == (tok.unknown_id,)
    assert found.wordpiece.reason == "no_match" and "[UNK]" in found.summary
    long = "a" * 150
    assert why.explain_at(tok, long, 3).wordpiece.reason == "too_long"


def test_byte_fallback_piece_explained():
    tok = load("llama2")
    found = why.explain_at(tok, "x 𓀀 y", 2)
    kinds = {s.kind for s in found.bpe.initial}
    assert "byte" in kinds and "UTF-8 bytes" in found.summary
    assert [tok.token_str(t) for t in found.tokens if tok.token_str(t).startswith("<0x")] == ["<0xF0>", "<0x93>", "<0x80>", "<0x80>"]


def test_unigram_alternatives():
    tok = load("t5")
    found = why.explain_at(tok, "the lighthouse keeper", 6)
    assert found.unigram.alternatives and found.unigram.margin >= 0
    assert f"{found.unigram.best.score:.3f}" in found.summary


def test_explain_token_and_cutoff_errors():
    for name in FAMILIES:
        tok = load(name)
        with pytest.raises(NotForThisKindError, match=tok.kind):
            why.explain_text(tok, "hello", max_rank=300)
        with pytest.raises(NotForThisKindError, match="byte-level BPE from ranks"):
            tok.encode("hello", max_rank=300)
        with pytest.raises(NotForThisKindError):
            merges.max_rank_for_merges(tok, 10)
        assert merges.merges_kept(tok, None) == getattr(tok.model, "n_merges", 0)
        token_id = tok.encode("hello", disallowed_special=())[0]
        found = why.explain_token(tok, token_id)
        assert found.tokens


def test_ranks_tokenizers_keep_their_explanation(load):
    from tokscope.core.explain import ranks as explain

    tok = load("gpt2")
    found = why.explain_text(tok, "hello wörld")
    assert [c.method for c in found.chunks] == ["byte-level BPE"] * 2
    want = explain.explain(tok, "hello wörld")
    assert [c.ranks for c in found.chunks] == list(want.chunks)
    cut = why.explain_text(tok, "hello", max_rank=300).chunks[0].ranks
    assert cut.tokens == explain.explain(tok, "hello", max_rank=300).chunks[0].tokens
    assert why.explain_token(tok, 31373).ranks is not None


# ----- unreachable tokens ------------------------------------------------------------------------------


def _sample_ids(tok, n: int = 4000) -> list[int]:
    ids = sorted(set(tok.model.get_vocab().values()))
    if len(ids) <= n:
        return ids
    return sorted(random.Random(7).sample(ids, n))


@pytest.mark.parametrize("name", FAMILIES)
def test_unreachable_matches_tokenizers(name):
    import tokenizers

    tok = load(name)
    obj = json.loads(hf_files.build(name))
    kind = tok.model.kind
    bare = tokenizers.Tokenizer.from_str(json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None, "model": obj["model"],
    }))
    whole = hf_files.hf_tokenizer(name)
    flagged = 0
    for token_id in _sample_ids(tok):
        if tok.is_added(token_id):
            assert not merges.is_unreachable(tok, token_id)
            continue
        spelling = tok.token_str(token_id)
        got = merges.is_unreachable(tok, token_id)
        flagged += got
        if kind in ("bpe", "unigram"):
            if spelling.startswith("<0x") and len(spelling) == 6 and getattr(tok.model, "byte_fallback", False):
                continue  # byte tokens: their own rule (see merges._unreachable_other)
            want = bare.encode(spelling, add_special_tokens=False).ids != [token_id] if spelling else True
        elif kind == "wordpiece" and spelling.startswith("##"):
            continue  # a search over first pieces (see merges._unreachable_other)
        else:
            want = whole.encode(spelling, add_special_tokens=False).ids != [token_id]
        assert got == want, (name, token_id, spelling)
    unreachable = merges.unreachable_tokens(tok) if len(tok.model.get_vocab()) <= 40000 else None
    if unreachable is not None:
        assert all(merges.is_unreachable(tok, t) for t in unreachable[:50])


def test_unreachable_examples():
    bert = load("bert")
    # BertPreTokenizer cuts at punctuation: "[unused0]" never reaches the model whole
    assert merges.is_unreachable(bert, bert.token_to_id("[unused0]"))
    assert not merges.is_unreachable(bert, bert.token_to_id("##ing"))
    assert not merges.is_unreachable(bert, bert.token_to_id("hello"))
    llama2 = load("llama2")
    assert merges.is_unreachable(llama2, llama2.token_to_id("<0xFF>"))  # never in UTF-8
    assert merges.is_unreachable(llama2, llama2.token_to_id("<0x41>"))  # "A" is a token itself
    assert merges.is_unreachable(llama2, llama2.token_to_id("<0x01>"))  # so is "\x01" in Mistral's vocabulary
    assert not merges.is_unreachable(llama2, llama2.token_to_id("<0xE2>"))


# ----- merge trees, parents, used in ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt2", "llama3", "llama2", "gemma"])
def test_merge_index_and_trees(name):
    tok = load(name)
    token_id = tok.encode(" hello", disallowed_special=())[-1]
    tree = merges.merge_tree(tok, token_id)
    rules = tok.model.merges_into(token_id)
    assert tree.merge_rank == (rules[0].rank if rules else None)
    index = merges.build_index(tok)
    pair = tok.parents(token_id)
    if pair is not None:
        assert index.parents(token_id) == pair
        assert any(u.child == token_id for u in merges.used_in(tok, pair.left))


# ----- inspector facts ------------------------------------------------------------------------------


def test_token_facts_per_kind():
    llama2 = load("llama2")
    f = token_facts(llama2, llama2.token_to_id("▁the"))
    assert f.token == "▁the" and f.bytes == b" the" and f.leading_space and f.merge_rank is not None
    assert f.parents is not None and f.kind == "byte-fallback BPE"
    b = token_facts(llama2, llama2.token_to_id("<0xE2>"))
    assert b.byte == 0xE2 and b.bytes == b"\xe2"
    unk = token_facts(llama2, llama2.unknown_id)
    assert unk.unknown and unk.special
    bert = load("bert")
    f = token_facts(bert, bert.token_to_id("##ing"))
    assert f.continuation == "##" and not f.leading_space and f.score is None and f.merge_rank is None
    assert token_facts(bert, bert.token_to_id("[CLS]")).special
    t5 = load("t5")
    f = token_facts(t5, t5.token_to_id("▁the"))
    assert f.score == t5.model.score(f.id) and f.merge_rank is None
    gpt2 = load("gpt2")
    f = token_facts(gpt2, gpt2.encode(" the", disallowed_special=())[0])
    assert f.token == "Ġthe" and f.leading_space and f.kind == "byte-level BPE"
    added = token_facts(gpt2, gpt2.token_to_id("hello world"))
    assert added.added and not added.special


@pytest.mark.parametrize("name", FAMILIES)
def test_piece_facts_from_a_document(name):
    tok = load(name)
    doc = Document.build(tok, TEXT)
    chunks = {(c.start, c.end): c for c in tok.chunks(TEXT)}
    for i in range(len(doc)):
        piece = doc.piece(i)
        chunk = doc.chunk_of(i)
        facts = piece_facts(tok, TEXT, piece, chunk)
        assert facts.text == TEXT[piece.start:piece.end]
        assert facts.token.id == piece.id
        want = chunks[(chunk.start, chunk.end)]
        assert facts.form == (None if want.special else want.form), (name, chunk)


# ----- vocabulary search, stats, languages, compare, export ----------------------------------------------


def test_vocab_search_per_kind():
    llama2 = load("llama2")
    found = search_vocab(llama2, substring=" the", limit=None)
    assert llama2.token_to_id("▁the") in [t.id for t in found.tokens]
    assert [t.id for t in search_vocab(llama2, pattern="^<0xE2>$").tokens] == [llama2.token_to_id("<0xE2>")]
    assert llama2.token_to_id("<0xE2>") in [t.id for t in search_vocab(llama2, hex_bytes="e2").tokens]
    bert = load("bert")
    assert bert.token_to_id("##ing") in [t.id for t in search_vocab(bert, pattern="^##ing$").tokens]
    assert merges.resolve_token(bert, text="##ing") == bert.token_to_id("##ing")
    assert merges.resolve_token(llama2, text="▁the") == llama2.token_to_id("▁the")
    assert merges.resolve_token(llama2, hex_bytes="e2") == llama2.token_to_id("<0xE2>")
    gpt2 = load("gpt2")
    assert merges.resolve_token(gpt2, text="Ġthe") == gpt2.encode(" the", disallowed_special=())[0]


@pytest.mark.parametrize("name", FAMILIES)
def test_stats_per_kind(name):
    tok = load(name)
    text = sample_texts()["numbers.txt"] + TEXT
    stats = text_stats(tok, text)
    assert stats.tokens == len(tok.encode(text, disallowed_special=()))
    assert stats.digits.total > 0 and stats.probe.total > 0
    for number in stats.digits.numbers:
        assert "".join(number.groups) == number.digits


def test_languages_per_kind():
    texts = {k.split("/")[1][:-4]: v for k, v in sample_texts().items() if k.startswith("languages/") and k.endswith(".txt")}
    toks = [load(n) for n in FAMILIES]
    table = language_table(texts, toks)
    for row in table.rows:
        assert row.counts == tuple(len(t.encode_ordinary(texts[row.code])) for t in toks)


def test_compare_aligns_kinds_on_the_original_text():
    text = "ＨＥＬＬＯ Wörld! Ǆ ﬁne naïve ÅNGSTRÖM İstanbul café 中文 😀\n" + sample_texts()["languages/tr.txt"][:400]
    data = text.encode("utf-8")
    starts = {len(text[:i].encode()) for i in range(len(text) + 1)}
    segs = []
    for name in ("bert", "llama3", "t5", "wordlevel", "llama2"):
        doc = Document.build(load(name), text)
        seg = from_document(doc)
        ends = list(seg.ends)
        assert ends == sorted(ends) and all(0 <= e <= len(data) for e in ends), name
        assert all(e in starts or doc.flags[i] & 1 for i, e in enumerate(ends)), name
        segs.append(seg)
    alignment = align(segs)
    assert alignment is not None


@pytest.mark.parametrize("name", FAMILIES)
def test_export_of_ids(name):
    tok = load(name)
    doc = Document.build(tok, TEXT)
    ids = doc.ids.tolist()
    assert ids == tok.encode(TEXT, disallowed_special=())
    assert " ".join(map(str, ids)).split() == [str(i) for i in ids]
    assert tok.decode(ids) == hf_files.hf_tokenizer(name).decode(ids, skip_special_tokens=False)
