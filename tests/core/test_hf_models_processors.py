"""Post-processors against ``tokenizers``: the ids and type ids a real ``tokenizers.Tokenizer``
gives with each post-processor (and random templates and sequences of them), for single
sequences and pairs, with and without special tokens; reading them from tokenizer.json."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_support import FUZZ
import tokenizers
from tokenizers import processors as hf_processors

from tokscope.core.text.errors import TokenizerFileError, TokscopeError, UnsupportedComponentError
from tokscope.core.processors import (
    BertProcessing,
    ByteLevel,
    RobertaProcessing,
    Sequence,
    TemplatePiece,
    TemplateProcessing,
    from_json,
)

WORDS = [f"w{i}" for i in range(10)]
SPECIALS = {"[CLS]": [20], "[SEP]": [21], "<s>": [22], "</s>": [23], "[DUO]": [24, 25]}
VOCAB = {**{w: i for i, w in enumerate(WORDS)}, "[CLS]": 20, "[SEP]": 21, "<s>": 22, "</s>": 23, "a": 24, "b": 25}


def _tokenizer(processor_json: dict | None) -> tokenizers.Tokenizer:
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": processor_json, "decoder": None,
        "model": {"type": "WordLevel", "vocab": VOCAB, "unk_token": "w0"},
    }
    return tokenizers.Tokenizer.from_str(json.dumps(doc))


def _check(processor_json: dict, ids: list[int], pair: list[int] | None, add_special_tokens: bool):
    ours = from_json(processor_json)
    try:
        got = ours.process_typed(ids, pair, add_special_tokens=add_special_tokens)
    except TokscopeError:
        return  # a template given more than two sequences: Hugging Face panics there
    hf = _tokenizer(processor_json)
    text = " ".join(WORDS[i] for i in ids)
    pair_text = None if pair is None else " ".join(WORDS[i] for i in pair)
    if not text or (pair is not None and not pair_text):
        return
    enc = hf.encode(text, pair_text, add_special_tokens=add_special_tokens)
    assert [t for t, _, _ in got] == enc.ids
    assert [k for _, _, k in got] == enc.type_ids
    inputs = list(ids) + list(pair or [])
    for (token, source, _), sequence, special in zip(got, enc.sequence_ids, enc.special_tokens_mask):
        if source is not None:
            assert inputs[source] == token
        if processor_json["type"] != "Sequence":
            # (in a Sequence, Hugging Face's later stages renumber sequences and clear the special
            # mask of what earlier stages added; only ids and type ids are kept as they are)
            assert (source is None) == (special == 1)
            if source is not None:
                # (Hugging Face loses the sequence of a sequence the template repeats)
                assert sequence in (None, 0 if source < len(ids) else 1)
    assert ours.added_tokens(pair is not None) == hf.post_processor.num_special_tokens_to_add(pair is not None)


ids_st = st.lists(st.integers(0, 9), min_size=1, max_size=6)


@st.composite
def templates(draw):
    def piece(sequences):
        kind = draw(st.sampled_from(sequences + list(SPECIALS)))
        type_id = draw(st.integers(0, 2))
        if kind in ("A", "B"):
            return {"Sequence": {"id": kind, "type_id": type_id}}
        return {"SpecialToken": {"id": kind, "type_id": type_id}}

    single = [piece(["A"]) for _ in range(draw(st.integers(0, 4)))]
    single.insert(draw(st.integers(0, len(single))), {"Sequence": {"id": "A", "type_id": draw(st.integers(0, 1))}})
    pair = [piece(["A", "B"]) for _ in range(draw(st.integers(0, 5)))]
    for seq in ("A", "B"):
        pair.insert(draw(st.integers(0, len(pair))), {"Sequence": {"id": seq, "type_id": draw(st.integers(0, 1))}})
    specials = {k: {"id": k, "ids": v, "tokens": [k] * len(v)} for k, v in SPECIALS.items()}
    return {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": specials}


BERT = {"type": "BertProcessing", "sep": ["[SEP]", 21], "cls": ["[CLS]", 20]}
ROBERTA = {"type": "RobertaProcessing", "sep": ["</s>", 23], "cls": ["<s>", 22], "trim_offsets": True, "add_prefix_space": True}
BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}


@pytest.mark.parametrize("processor", [BERT, ROBERTA, BYTE_LEVEL], ids=["bert", "roberta", "bytelevel"])
@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_fixed_processors_match_tokenizers(processor, add_special_tokens):
    for ids, pair in [([1, 2, 3], None), ([1], [4, 5]), ([7, 7], [7])]:
        _check(processor, ids, pair, add_special_tokens)


@FUZZ
@given(templates(), ids_st, st.one_of(st.none(), ids_st), st.booleans())
def test_random_templates_match_tokenizers(template, ids, pair, add_special_tokens):
    _check(template, ids, pair, add_special_tokens)


@FUZZ
@given(
    st.lists(st.one_of(st.just(BERT), st.just(ROBERTA), st.just(BYTE_LEVEL), templates()), min_size=1, max_size=3),
    ids_st, st.one_of(st.none(), ids_st), st.booleans(),
)
def test_random_sequences_match_tokenizers(chain, ids, pair, add_special_tokens):
    _check({"type": "Sequence", "processors": chain}, ids, pair, add_special_tokens)


def test_python_constructed_processors_read_back_from_json():
    built = [
        hf_processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 20), ("[SEP]", 21)]
        ),
        hf_processors.TemplateProcessing(single="$0 </s>", pair="$A </s> $B:1 </s>:1", special_tokens=[("</s>", 23)]),
        hf_processors.BertProcessing(("[SEP]", 21), ("[CLS]", 20)),
        hf_processors.RobertaProcessing(("</s>", 23), ("<s>", 22)),
        hf_processors.Sequence([hf_processors.ByteLevel(), hf_processors.RobertaProcessing(("</s>", 23), ("<s>", 22))]),
    ]
    for processor in built:
        tok = _tokenizer(None)
        tok.post_processor = processor
        obj = json.loads(tok.to_str())["post_processor"]
        for add in (True, False):
            _check(obj, [1, 2], None, add)
            _check(obj, [1, 2], [3], add)


def test_template_strings_as_hugging_face_reads_them():
    t = TemplateProcessing("[CLS] $A [SEP]", "$A:0 $B:1 [SEP]:1", [("[CLS]", 1), ("[SEP]", 2)])
    assert t.single == (TemplatePiece(None, "[CLS]", 0), TemplatePiece("A", None, 0), TemplatePiece(None, "[SEP]", 0))
    assert TemplatePiece.parse("$") == TemplatePiece("A", None, 0)
    assert TemplatePiece.parse("$b") == TemplatePiece("B", None, 0)
    assert TemplatePiece.parse("$3") == TemplatePiece("A", None, 3)
    assert TemplatePiece.parse("$1:2") == TemplatePiece("A", None, 2)
    for bad in ("$C", "[CLS]:x", "a:b:c"):
        with pytest.raises(TokenizerFileError):
            TemplatePiece.parse(bad)
    assert t.process([9], [8]) == [(9, 0), (8, 1), (2, None)]
    assert t.process([9], [8], add_special_tokens=False) == [(9, 0), (8, 1)]


def test_a_template_naming_a_missing_special_token_is_refused_at_load():
    """Known deviation: Hugging Face reads such a file and panics when it encodes; tokscope refuses
    the file when it reads it."""
    obj = {
        "type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}], "special_tokens": {},
    }
    with pytest.raises(TokenizerFileError, match=r"\[CLS\]"):
        from_json(obj)
    with pytest.raises(TokenizerFileError, match=r"\$B"):
        TemplateProcessing("$A $B", "$A $B", None)


def test_sequences_see_what_the_template_returned():
    # after a template, a Bert processor sees each template piece as its own encoding
    chain = Sequence([TemplateProcessing("[X] $A", "$A $B", {"[X]": [7]}), BertProcessing(("[SEP]", 2), ("[CLS]", 1))])
    assert chain.process([5, 6]) == [(1, None), (7, None), (2, None), (5, 0), (6, 1), (2, None)]
    three = Sequence([TemplateProcessing("[X] $A [X]", "$A $B", {"[X]": [7]}), TemplateProcessing()])
    with pytest.raises(TokscopeError, match="3 sequences"):
        three.process([5])


def test_from_json_errors():
    assert from_json(None) is None
    with pytest.raises(UnsupportedComponentError, match="post-processor 'Mystery'"):
        from_json({"type": "Mystery"})
    with pytest.raises(TokenizerFileError):
        from_json({"type": "BertProcessing", "sep": ["[SEP]"], "cls": ["[CLS]", 1]})
    with pytest.raises(TokenizerFileError):
        from_json({"type": "TemplateProcessing", "single": "$A"})
    with pytest.raises(TokenizerFileError):
        from_json({"type": "Sequence"})
    assert isinstance(from_json(BYTE_LEVEL), ByteLevel)
    assert isinstance(from_json(ROBERTA), RobertaProcessing)
    assert from_json(BERT).added_tokens(True) == 3

