"""A kind of tokenizer defined here, from the protocols of :mod:`tokscope.core.tokenizer.stages` alone: one
piece per character (unknown characters become ``<?>``), behind a toy normalizer (upper case, one
character for one) and a toy pre-tokenizer (words and the spaces between them). Nothing outside
this file knows about it, yet the explorer's document (built and edited), compare's segmentation,
stats, explain (its generic fallback), the inspector's facts, vocabulary search and unreachable
tokens all work with it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.explain import merge_trees as merges
from tokscope.core.explain import why
from tokscope.core.insights.compare import align, compare, from_document
from tokscope.core.document.document import Document
from tokscope.core.explain.facts import piece_facts, token_facts
from tokscope.core.text.normalized import NormalizedText
from tokscope.core.tokenizer.stages import Model, Normalizer, PreTokenizer
from tokscope.core.added_tokens.specials import SpecialTokens
from tokscope.core.insights.stats import text_stats
from tokscope.core.tokenizer.tokenizer import Tokenizer
from tokscope.core.explain.vocab_search import search_vocab

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,!?'\n"


class PerCharacter:
    """The model: every character is its own token."""

    kind = "per-character"
    #: an optional member (see tokscope.core.tokenizer.stages): the token the explorer marks as unknown
    unk_token = "<?>"

    def __init__(self) -> None:
        self._vocab = {c: i for i, c in enumerate(ALPHABET)}
        self._vocab["<?>"] = len(self._vocab)
        self._reverse = {i: t for t, i in self._vocab.items()}

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        unknown = self._vocab["<?>"]
        return [(self._vocab.get(c, unknown), k, k + 1) for k, c in enumerate(text)]

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._reverse.get(token_id)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)


class Upper:
    """The normalizer: upper case where that keeps one character for one."""

    local = True

    def normalize(self, text: NormalizedText) -> NormalizedText:
        upper = "".join(c.upper() if len(c.upper()) == 1 else c for c in text.text)
        return text.with_text(upper)

    def normalize_str(self, text: str) -> str:
        return "".join(c.upper() if len(c.upper()) == 1 else c for c in text)


class Words:
    """The pre-tokenizer: runs of non-spaces, and runs of spaces."""

    local = True

    def pre_tokenize(self, splits: list[NormalizedText]) -> list[NormalizedText]:
        out = []
        for split in splits:
            t = split.text
            start = 0
            for k in range(1, len(t) + 1):
                if k == len(t) or (t[k] == " ") != (t[k - 1] == " "):
                    out.append(split.slice(start, k))
                    start = k
        return [c for c in out if c.text]


def toy() -> Tokenizer:
    model = PerCharacter()
    specials = SpecialTokens({"<END>": model.vocab_size})
    assert isinstance(model, Model) and isinstance(Upper(), Normalizer) and isinstance(Words(), PreTokenizer)
    return Tokenizer.from_stages("toy", model=model, normalizer=Upper(), pre_tokenizer=Words(), added_tokens=specials)


TEXT = "Hello world, it's 42!\nÜber café <END> done?"


def test_encode_pieces_chunks():
    tok = toy()
    assert tok.kind == "per-character" and tok.restartable
    ids = tok.encode(TEXT, disallowed_special=())
    assert len(ids) == len(TEXT)
    assert tok.encode(TEXT, allowed_special="all").count(tok.special_tokens["<END>"]) == 1
    pieces = tok.pieces(TEXT, disallowed_special=())
    assert [(p.start, p.end) for p in pieces] == [(k, k + 1) for k in range(len(TEXT))]
    assert b"".join(TEXT[p.start:p.end].encode() for p in pieces) == TEXT.encode()
    chunks = tok.chunks(TEXT)
    assert chunks[0].text == "Hello" and chunks[0].form == "HELLO"
    assert tok.decode(tok.encode("Hi there", disallowed_special=())) == "HI THERE"


def same_as_tokenizer(doc: Document) -> None:
    tok = doc.tokenizer
    kwargs = {"allowed_special": "all"} if doc.specials else {"disallowed_special": ()}
    assert list(doc.pieces()) == tok.pieces(doc.text, **kwargs)
    assert [(c.start, c.end) for c in tok.chunks(doc.text, **kwargs)] == list(zip(doc.chunk_starts, doc.chunk_ends))


def test_document_build_and_edit():
    tok = toy()
    for specials in (False, True):
        doc = Document.build(tok, TEXT, specials)
        same_as_tokenizer(doc)
        edited = doc.edited(TEXT.replace("café", "cafe"))
        same_as_tokenizer(edited)
        if not specials:  # (with specials, "café" is too near "<END>": the document is built again)
            assert edited.edit is not None and 0 < edited.edit.restart < edited.edit.old_stop < len(TEXT)
    far = Document.build(tok, TEXT, True).edited(TEXT.replace("Hello", "Jello"))
    same_as_tokenizer(far)
    assert far.edit is not None and far.edit.old_stop < TEXT.index("<END>")  # stopped before the special token


@settings(max_examples=100, deadline=None)
@given(old=st.text(alphabet="ab é<END>!?\n", max_size=30), insert=st.text(alphabet="ab é<END>!?\n", max_size=8),
       data=st.data(), specials=st.booleans())
def test_document_edits(old, insert, data, specials):
    tok = toy()
    start = data.draw(st.integers(0, len(old)))
    end = data.draw(st.integers(start, len(old)))
    same_as_tokenizer(Document.build(tok, old, specials).edited(old[:start] + insert + old[end:]))


def test_compare_stats_explain_facts_vocab(load):
    tok = toy()
    doc = Document.build(tok, TEXT)
    seg = from_document(doc)
    assert len(seg.ids) == len(doc) and seg.ends[-1] == len(TEXT.encode())
    other = from_document(Document.build(load("gpt2"), TEXT))
    assert align([seg, other]) is not None
    assert compare(TEXT, [seg, other]).stats[0].tokens == len(doc)
    stats = text_stats(tok, TEXT)
    assert stats.tokens == len(TEXT) and stats.digits.numbers[0].groups == ("4", "2")
    explained = why.explain_text(tok, TEXT)
    assert {c.method for c in explained.chunks} == {"model"}
    assert list(explained.tokens) == tok.encode(TEXT, disallowed_special=())
    assert explained.chunks[0].form == "HELLO" and "per-character" in explained.chunks[0].summary
    with pytest.raises(Exception, match="per-character"):
        why.explain_text(tok, TEXT, max_rank=3)
    facts = token_facts(tok, tok.model.token_to_id("H"))
    assert facts.token == "H" and facts.merge_rank is None and facts.score is None and facts.kind == "per-character"
    p = piece_facts(tok, TEXT, doc.piece(0), doc.chunk_of(0))
    assert p.form == "HELLO" and p.text == "H"
    assert [t.id for t in search_vocab(tok, substring="Q").tokens] == [tok.model.token_to_id("Q")]
    assert not merges.is_unreachable(tok, tok.model.token_to_id("Q"))
    assert merges.unreachable_tokens(tok) == [tok.model.token_to_id("<?>")]  # "<?>" is three tokens
