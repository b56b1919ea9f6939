"""The Hugging Face models, post-processors and decoders satisfy the stage protocols of
``pipeline.py`` and do not crash on text no Hugging Face string can hold (lone surrogates, which
the tokenizer replaces before a model sees them). Needs no optional package."""

from __future__ import annotations

import pytest

from tokscope.core import decoders
from tokscope.core.tokenizer import stages as pipeline
from tokscope.core import processors as postprocessors
from tokscope.core.models.bpe import BPE
from tokscope.core.models.unigram import Unigram
from tokscope.core.models.wordlevel import WordLevel
from tokscope.core.models.wordpiece import WordPiece

BYTES = {f"<0x{b:02X}>": 10 + b for b in range(256)}


def _models():
    return [
        BPE({"a": 0, "b": 1, "ab": 2, "<unk>": 3, **BYTES}, ["a b"], unk_token="<unk>", byte_fallback=True),
        BPE({"a": 0, "b": 1, "ab": 2, "<unk>": 3}, ["a b"], unk_token="<unk>", fuse_unk=True),
        WordPiece({"[UNK]": 0, "a": 1, "##b": 2}),
        Unigram([("<unk>", 0.0), ("a", -1.0), *((k, -5.0) for k in BYTES)], unk_id=0, byte_fallback=True),
        WordLevel({"<unk>": 0, "a": 1}),
    ]


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.kind)
def test_models_satisfy_the_protocol(model):
    assert isinstance(model, pipeline.Model)
    assert model.vocab_size == len(model.get_vocab())
    for token, token_id in model.get_vocab().items():
        assert model.token_to_id(token) == token_id and model.id_to_token(token_id) == token
    for text in ["ab", "a\ud800b", "\udfff", "é" * 300]:
        pieces = model.tokenize(text)
        assert pieces and all(0 <= s <= e <= len(text) for _, s, e in pieces)


def test_processors_and_decoders_satisfy_the_protocols():
    for processor in (
        postprocessors.BertProcessing(), postprocessors.RobertaProcessing(), postprocessors.ByteLevel(),
        postprocessors.TemplateProcessing(), postprocessors.Sequence([postprocessors.ByteLevel()]),
    ):
        assert isinstance(processor, pipeline.PostProcessor)
    for decoder in (
        decoders.ByteLevel(), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(), decoders.Replace("a", "b"),
        decoders.Metaspace(), decoders.WordPiece(), decoders.BPEDecoder(), decoders.CTC(), decoders.Sequence([]),
    ):
        assert isinstance(decoder, pipeline.Decoder)
        assert isinstance(decoder.decode_chain(["a", "\ud800"]), list)
