"""Shared helpers of the ``test_hf_models_*`` files: text strategies, the ``tokenizers`` oracle,
small vocabularies trained here on the samples, and the real vocabularies shipped by installed
packages (read from site-packages at test time, never copied into the repository).

By default each property runs a modest number of examples; ``TOKSCOPE_FUZZ=long`` runs many more
(``TOKSCOPE_FUZZ_EXAMPLES`` sets the number), as in ``test_parity.py``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers library is the oracle of these tests")

LONG = os.environ.get("TOKSCOPE_FUZZ") == "long"
EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", 20_000 if LONG else 60))
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=not LONG, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
SMALL_FUZZ = settings(FUZZ, max_examples=max(10, EXAMPLES // 3))

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def sample_texts() -> dict[str, str]:
    """Every sample text by name (``prose.txt``, ``languages/fr.txt`` ...)."""
    out = {}
    for path in sorted(SAMPLES.rglob("*")):
        if path.suffix in (".txt", ".py", ".json") and path.name != "index.json":
            out[str(path.relative_to(SAMPLES))] = path.read_text(encoding="utf-8")
    return out


# ----- text strategies ------------------------------------------------------------------------

TRICKY_CHARS = [
    "a", "b", "e", "t", "h", "n", "s", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "é", "e\u0301", "ß", "İ",
    "ı", "ǅ", "Ω", "я", "ж", "ש", "م", "ه", "क", "्", "ष", "ก", "ี", "中", "文", "字", "한", "국", "の", "ア", "👍",
    "👍🏽", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "\u200d", "\u200b", "\ufe0f", "€", "✓", "0", "7", "１", "٣", "Ⅻ",
    "'", "\"", ".", ",", "!", "?", "-", "_", "/", "<", ">", "[", "]", "#", "##", "▁", "Ġ", "Ċ", "<0x41>", "<unk>",
    "\x00", "\x7f", "\U0010ffff", "\U0001f9d1", "\ufffd",
]

chars_st = st.one_of(
    st.sampled_from(TRICKY_CHARS),
    st.characters(codec="utf-8"),
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
)
texts_st = st.lists(chars_st, max_size=30).map("".join)
words_st = st.lists(st.one_of(st.sampled_from([c for c in TRICKY_CHARS if not c.isspace()]), st.characters(codec="utf-8")), min_size=1, max_size=20).map("".join)


# ----- the oracle -------------------------------------------------------------------------------


def hf_encode(hf_model, text: str) -> list[tuple[int, int, int]]:
    """The ``tokenizers`` model run on ``text`` as one chunk: ``(id, start, end)`` with character
    offsets (a Tokenizer with no other stage converts the model's byte offsets as it always does)."""
    tok = _bare(hf_model)
    if not text:
        return []
    enc = tok.encode(text, add_special_tokens=False)
    return [(i, s, e) for i, (s, e) in zip(enc.ids, enc.offsets)]


def _bare(hf_model):
    cached = getattr(hf_model, "_tokscope_bare", None)
    if cached is None:
        cached = tokenizers.Tokenizer(hf_model)
        try:
            hf_model._tokscope_bare = cached
        except AttributeError:
            pass
    return cached


def hf_model_from_json(model_obj: dict):
    """A ``tokenizers`` model read from a ``"model"`` object (through a minimal tokenizer.json)."""
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None, "model": model_obj,
    }
    return tokenizers.Tokenizer.from_str(json.dumps(doc))


def ours_from_json(model_obj: dict):
    """tokscope's model from the same JSON text :func:`hf_model_from_json` reads, floats read as
    Hugging Face reads them (``models.load_json``)."""
    from tokscope.core.formats import tokenizer_json_models as models

    return models.from_json(models.load_json(json.dumps(model_obj)))


def bare_encode(hf_tokenizer, text: str) -> list[tuple[int, int, int]]:
    if not text:
        return []
    enc = hf_tokenizer.encode(text, add_special_tokens=False)
    return [(i, s, e) for i, (s, e) in zip(enc.ids, enc.offsets)]


# ----- vocabularies trained here ------------------------------------------------------------------


def _training_texts() -> list[str]:
    return [text for text in sample_texts().values() for text in text.splitlines() if text.strip()]


@functools.lru_cache(maxsize=None)
def trained(kind: str, **options) -> dict:
    """A small ``tokenizer.json`` (as a dict) trained here by ``tokenizers`` on the samples.

    ``kind`` is ``bpe``, ``wordpiece``, ``unigram`` or ``wordlevel``; options go to the trainer
    (``vocab_size``, ``continuing_subword_prefix``, ``end_of_word_suffix``, ``limit_alphabet`` ...).
    """
    from tokenizers import models, pre_tokenizers, trainers

    options = dict(options)
    pre = options.pop("pre", "whitespace")
    if kind == "bpe":
        decoration = {k: options[k] for k in ("continuing_subword_prefix", "end_of_word_suffix") if k in options}
        model = models.BPE(unk_token="<unk>", fuse_unk=options.pop("fuse_unk", False), **decoration)
        if pre == "bytelevel":  # every byte's stand-in, as GPT-2-style vocabularies have
            options.setdefault("initial_alphabet", pre_tokenizers.ByteLevel.alphabet())
        trainer = trainers.BpeTrainer(special_tokens=["<unk>"], show_progress=False, **options)
    elif kind == "wordpiece":
        model = models.WordPiece(unk_token="[UNK]")
        trainer = trainers.WordPieceTrainer(special_tokens=["[UNK]"], show_progress=False, **options)
    elif kind == "unigram":
        model = models.Unigram()
        trainer = trainers.UnigramTrainer(special_tokens=["<unk>"], unk_token="<unk>", show_progress=False, **options)
    elif kind == "wordlevel":
        model = models.WordLevel(unk_token="<unk>")
        trainer = trainers.WordLevelTrainer(special_tokens=["<unk>"], show_progress=False, **options)
    else:
        raise ValueError(kind)
    tok = tokenizers.Tokenizer(model)
    if pre == "whitespace":
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
    elif pre == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
    elif pre == "bytelevel":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(_training_texts(), trainer=trainer)
    return json.loads(tok.to_str())


def with_byte_tokens(model_obj: dict, *, missing: tuple[int, ...] = (), flag: str = "byte_fallback") -> dict:
    """``model_obj`` with the ``<0xHH>`` byte tokens added (but those in ``missing``) and byte
    fallback turned on."""
    obj = json.loads(json.dumps(model_obj))
    if isinstance(obj["vocab"], dict):
        next_id = max(obj["vocab"].values()) + 1
        for b in range(256):
            name = f"<0x{b:02X}>"
            if b not in missing and name not in obj["vocab"]:
                obj["vocab"][name] = next_id
                next_id += 1
    else:
        present = {p for p, _ in obj["vocab"]}
        low = min(s for _, s in obj["vocab"])
        for b in range(256):
            name = f"<0x{b:02X}>"
            if b not in missing and name not in present:
                obj["vocab"].append([name, low - 1.0])
    obj[flag] = True
    return obj


def pre_tokenized_words(text: str, pre: str = "whitespace") -> list[str]:
    from tokenizers import pre_tokenizers

    stage = {
        "whitespace": pre_tokenizers.Whitespace(),
        "metaspace": pre_tokenizers.Metaspace(),
        "bytelevel": pre_tokenizers.ByteLevel(add_prefix_space=False),
        "bert": pre_tokenizers.BertPreTokenizer(),
    }[pre]
    return [w for w, _ in stage.pre_tokenize_str(text)]


# ----- real vocabularies from installed packages ---------------------------------------------------


def package_file(package: str, *parts: str) -> Path:
    """A data file inside an installed package, or skip the test saying which is missing."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"the {package} package is not installed")
    path = Path(list(spec.submodule_search_locations)[0], *parts)
    if not path.exists():
        pytest.skip(f"{package} has no {'/'.join(parts)}")
    return path


def sentencepiece_pieces(path: str) -> list[tuple[str, float, int]]:
    """``(piece, score, type)`` of every piece of a SentencePiece ``.model`` file, read straight
    from its protobuf bytes (ModelProto field 1, each SentencePiece with its piece, score and type
    in fields 1, 2 and 3), so no protobuf or sentencepiece package is needed."""
    data = Path(path).read_bytes()

    def varint(buf: bytes, i: int) -> tuple[int, int]:
        shift = value = 0
        while True:
            b = buf[i]
            i += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value, i
            shift += 7

    def fields(buf: bytes):
        i = 0
        while i < len(buf):
            key, i = varint(buf, i)
            number, wire = key >> 3, key & 7
            if wire == 0:
                value, i = varint(buf, i)
            elif wire == 1:
                value, i = buf[i : i + 8], i + 8
            elif wire == 2:
                size, i = varint(buf, i)
                value, i = buf[i : i + size], i + size
            elif wire == 5:
                value, i = buf[i : i + 4], i + 4
            else:
                raise ValueError(f"unexpected protobuf wire type {wire}")
            yield number, value

    import struct

    out = []
    for number, value in fields(data):
        if number != 1:
            continue
        piece, score, kind = "", 0.0, 1
        for inner, item in fields(value):
            if inner == 1:
                piece = item.decode("utf-8")
            elif inner == 2:
                score = struct.unpack("<f", item)[0]
            elif inner == 3:
                kind = item
        out.append((piece, score, kind))
    return out


def merges_from_vocab(vocab: dict[str, int]) -> list[tuple[str, str]]:
    """A merge list for a SentencePiece BPE vocabulary as ``transformers`` derives one for
    Llama/Mistral tokenizer.json files: every split of a piece into two pieces, ordered by the
    merged piece's id, then by the lengths of the two parts (and within a piece by the parts' ids)."""
    found = []
    for merged, merged_id in vocab.items():
        splits = [
            (merged[:i], merged[i:])
            for i in range(1, len(merged))
            if merged[:i] in vocab and merged[i:] in vocab
        ]
        splits.sort(key=lambda lr: (vocab[lr[0]], vocab[lr[1]]))
        found.extend((merged_id, left, right) for left, right in splits)
    found.sort(key=lambda m: (m[0], len(m[1]), len(m[2])))
    return [(left, right) for _, left, right in found]


@functools.lru_cache(maxsize=None)
def sentencepiece_bpe(path: str) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The vocab and merges of a SentencePiece BPE model as a Llama/Mistral tokenizer.json has
    them (read with :func:`sentencepiece_pieces`, merges by :func:`merges_from_vocab`)."""
    vocab = {piece: i for i, (piece, _, _) in enumerate(sentencepiece_pieces(path))}
    return vocab, merges_from_vocab(vocab)
