"""The SentencePiece-style tokenizers of a GGUF file, as llama.cpp runs them: ``llama`` (its SPM
tokenizer: BPE by score over characters, ``<0xNN>`` byte tokens for what no token covers) and
``t5`` (its UGM tokenizer: Unigram with the model's precompiled charsmap).

:func:`tokenizer_from_gguf` takes the file's metadata as the GGUF reader gives it, keys verbatim
(``tokenizer.ggml.model``, ``.tokens``, ``.scores``, ``.token_type``, ``.add_space_prefix``,
``.remove_extra_whitespaces``, ``.precompiled_charsmap``, ``.bos_token_id`` ...). llama.cpp is
the reference; it differs from the sentencepiece library in ways kept here: user-defined tokens
are cut out of the raw text first (always), control and unknown tokens only when special tokens
are allowed (``parse_special``), with llama.cpp's corrections by text and its strip attributes
(:mod:`.gguf_attributes`: Phi-3's tokens take the spaces after them); each stretch between them
gets its own space prefix; SPM joins
symbols into any token (control ones too) and spells every other symbol in byte tokens; UGM adds
scores in double precision and scores a user-defined token 0. Token types: 1 normal, 2 unknown,
3 control, 4 user-defined, 5 unused, 6 byte.

>>> meta = {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": ["<unk>", "<s>", "▁h", "i", "▁hi"],
...         "tokenizer.ggml.scores": [0, 0, -1, -2, -0.5], "tokenizer.ggml.token_type": [2, 3, 1, 1, 1],
...         "tokenizer.ggml.bos_token_id": 1}
>>> tok = tokenizer_from_gguf(meta, "tiny")
>>> tok.kind, tok.encode("hi hi"), tok.encode("hi", add_special_tokens=True)
('BPE by score (llama.cpp SPM)', [4, 4], [1, 4])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..added_tokens.added_vocabulary import AddedVocabulary
from ..decoders.sentencepiece import SentencePieceDecoder
from ..models.sentencepiece_bpe import SentencePieceBPE
from ..models.sentencepiece_pieces import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, Pieces
from ..models.sentencepiece_unigram import SentencePieceUnigram
from ..normalizers.precompiled import CharsMap
from ..normalizers.sentencepiece import LlamaCppUgmNormalizer, SentencePieceNormalizer
from ..processors import TemplateProcessing
from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..tokenizer.tokenizer import Tokenizer
from . import gguf_attributes

PREFIX = "tokenizer.ggml."
#: the GGUF token types (llama.cpp's ``LLAMA_TOKEN_TYPE_*``) this reads; 0 is "undefined"
TYPES = {1: NORMAL, 2: UNKNOWN, 3: CONTROL, 4: USER_DEFINED, 5: UNUSED, 6: BYTE}
MODELS = ("llama", "t5")


def _get(meta: Mapping[str, Any], key: str, default: Any = None) -> Any:
    value = meta.get(PREFIX + key, default)
    return default if value is None else value


def _flag(meta: Mapping[str, Any], key: str, default: bool) -> bool:
    value = _get(meta, key, default)
    if not isinstance(value, (bool, int)):
        raise TokenizerFileError(f"GGUF {PREFIX}{key} is {value!r}, not a boolean")
    return bool(value)


def _token_id(meta: Mapping[str, Any], key: str, n: int) -> int | None:
    value = _get(meta, key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TokenizerFileError(f"GGUF {PREFIX}{key} is {value!r}, not a token id")
    return value if 0 <= value < n else None


def _list(meta: Mapping[str, Any], key: str, n: int | None, kind: type | tuple) -> list | None:
    value = _get(meta, key)
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) and not hasattr(value, "__len__"):
        raise TokenizerFileError(f"GGUF {PREFIX}{key} is not an array")
    value = list(value)
    if n is not None and len(value) < n:
        raise TokenizerFileError(f"GGUF {PREFIX}{key} has {len(value)} entries for {n} tokens")
    if not all(isinstance(v, kind) and not isinstance(v, bool) for v in value[: n or len(value)]):
        raise TokenizerFileError(f"GGUF {PREFIX}{key} holds values that are not {getattr(kind, '__name__', kind)}")
    return value[:n] if n is not None else value


def tokenizer_from_gguf(metadata: Mapping[str, Any], name: str) -> Tokenizer:
    """The tokenizer of a GGUF file whose ``tokenizer.ggml.model`` is ``llama`` or ``t5``; any
    other model is an :class:`UnsupportedComponentError` naming it."""
    model = _get(metadata, "model")
    if model not in MODELS:
        raise UnsupportedComponentError("GGUF tokenizer model", str(model), "tokscope reads 'llama' and 't5' here")
    tokens = _list(metadata, "tokens", None, str)
    if not tokens:
        raise TokenizerFileError("the GGUF file has no tokenizer.ggml.tokens")
    n = len(tokens)
    tokens = [t if t else f"[EMPTY_{i}]" for i, t in enumerate(tokens)]  # as llama.cpp names an empty token
    scores = _list(metadata, "scores", n, (int, float)) or [0.0] * n
    raw_types = _list(metadata, "token_type", n, int) or [1] * n
    types = [TYPES.get(t, CONTROL) for t in raw_types]
    unk = _token_id(metadata, "unknown_token_id", n)
    table = Pieces(tokens, [float(s) for s in scores], types, byte_fallback=False, strict=False, unk_id=unk)
    ugm = model == "t5"
    add_prefix = _flag(metadata, "add_space_prefix", not ugm)
    if ugm:
        blob = _get(metadata, "precompiled_charsmap")
        charsmap = CharsMap(bytes(blob)) if blob is not None and len(blob) else None
        normalizer: Any = LlamaCppUgmNormalizer(
            charsmap, add_dummy_prefix=add_prefix, remove_extra_whitespaces=_flag(metadata, "remove_extra_whitespaces", False),
            name="llama.cpp UGM")
        kind: Any = SentencePieceUnigram(table, llama_cpp=True)
    else:
        normalizer = SentencePieceNormalizer(None, add_dummy_prefix=add_prefix, remove_extra_whitespaces=False,
                                             name="llama.cpp SPM")
        kind = SentencePieceBPE(table, llama_cpp=True)
    added = gguf_attributes.matched_tokens(metadata, tokens, raw_types)
    vocabulary = AddedVocabulary(added, normalizer, strip=gguf_attributes.C_SPACE, longest_first=True)
    decoder = SentencePieceDecoder(control=[tokens[i] for i in table.by_type.get(CONTROL, ())],
                                   unknown=[tokens[i] for i in table.by_type.get(UNKNOWN, ())], strip_prefix=add_prefix)
    bos = _token_id(metadata, "bos_token_id", n)
    eos = _token_id(metadata, "eos_token_id", n)
    template = _template(tokens, bos if _flag(metadata, "add_bos_token", not ugm) else None,
                         eos if _flag(metadata, "add_eos_token", ugm) else None)
    return Tokenizer.from_stages(name, model=kind, normalizer=normalizer, added_tokens=vocabulary,
                                 post_processor=template, decoder=decoder, n_vocab=n)


def _template(tokens: list[str], bos: int | None, eos: int | None) -> TemplateProcessing | None:
    """BOS before and EOS after a text, as the file asks (``add_bos_token``/``add_eos_token``)."""
    if bos is None and eos is None:
        return None
    single = " ".join([*(["<bos>"] if bos is not None else []), "$A", *(["<eos>"] if eos is not None else [])])
    pair = single.replace("$A", "$A $B:1")
    special = [(k, i) for k, i in (("<bos>", bos), ("<eos>", eos)) if i is not None]
    return TemplateProcessing(single, pair, special)
