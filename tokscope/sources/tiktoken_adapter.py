"""The one module that touches tiktoken.

tiktoken serves tokscope in two ways: its registry (``tiktoken_ext.openai_public``) is the
authority on each OpenAI encoding's pattern, special tokens and vocabulary file (address and
sha256), and its ``Encoding`` is the reference the core must match token for token.

The registry's constructors would download their files. To read their specs without network, we
call each constructor with its two loader functions swapped for recorders that note the file
address and expected hash and return an empty table; everything else comes from the constructor.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class VocabFile:
    """One official vocabulary file: where tiktoken would fetch it and the sha256 it must have."""

    url: str
    sha256: str

    @property
    def basename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class EncodingSpec:
    """What tiktoken's registry says about one encoding, minus the ranks themselves.

    ``files`` is either one ``.tiktoken`` file or, for gpt2, the GPT-2 pair
    (``vocab.bpe``, ``encoder.json``) in that order.
    """

    name: str
    pattern: str
    special_tokens: dict[str, int]
    explicit_n_vocab: int | None
    files: tuple[VocabFile, ...]

    @property
    def n_vocab(self) -> int:
        if self.explicit_n_vocab is not None:
            return self.explicit_n_vocab
        return max(self.special_tokens.values()) + 1


_spec_lock = threading.Lock()


def encoding_names() -> list[str]:
    """Names of the OpenAI encodings in the installed tiktoken's registry."""
    from tiktoken_ext import openai_public

    return list(openai_public.ENCODING_CONSTRUCTORS)


@cache
def encoding_spec(name: str) -> EncodingSpec:
    """Read one encoding's spec from tiktoken's registry without downloading anything.

    Raises ``KeyError`` for a name the registry does not have.
    """
    from tiktoken_ext import openai_public

    constructor = openai_public.ENCODING_CONSTRUCTORS[name]
    files: list[VocabFile] = []

    def record_tiktoken(url: str, expected_hash: str | None = None, **_: Any) -> dict[bytes, int]:
        files.append(VocabFile(url, expected_hash or ""))
        return {}

    def record_data_gym(
        vocab_bpe_file: str,
        encoder_json_file: str,
        vocab_bpe_hash: str | None = None,
        encoder_json_hash: str | None = None,
        **_: Any,
    ) -> dict[bytes, int]:
        files.append(VocabFile(vocab_bpe_file, vocab_bpe_hash or ""))
        files.append(VocabFile(encoder_json_file, encoder_json_hash or ""))
        return {}

    with _spec_lock:
        saved = openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks
        openai_public.load_tiktoken_bpe = record_tiktoken
        openai_public.data_gym_to_mergeable_bpe_ranks = record_data_gym
        try:
            params = constructor()
        finally:
            openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks = saved
    # o200k_harmony builds on o200k_base, so its file may be recorded once per inner call
    unique = tuple(dict.fromkeys(files))
    return EncodingSpec(
        name=params["name"],
        pattern=params["pat_str"],
        special_tokens=dict(params["special_tokens"]),
        explicit_n_vocab=params.get("explicit_n_vocab"),
        files=unique,
    )


def tiktoken_cache_path(url: str) -> Path | None:
    """Where tiktoken caches ``url`` (the same rule as ``tiktoken.load.read_file_cached``).

    ``None`` when the user disabled tiktoken's cache (``TIKTOKEN_CACHE_DIR=""``).
    """
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if cache_dir == "":
        return None
    return Path(cache_dir) / hashlib.sha1(url.encode()).hexdigest()


def reference_encoding(name: str, ranks: dict[bytes, int], pattern: str, special_tokens: dict[str, int]) -> Any:
    """A ``tiktoken.Encoding`` built from the same data as a core tokenizer (the test reference)."""
    import tiktoken

    return tiktoken.Encoding(name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special_tokens)


def reference_for(tokenizer: Any) -> Any:
    """The tiktoken twin of a core :class:`~tokscope.core.Tokenizer`."""
    return reference_encoding(tokenizer.name, dict(tokenizer.ranks), tokenizer.pattern, tokenizer.special_tokens)


def encoding_name_for_model(model_name: str) -> str:
    """The encoding a model uses, from the installed tiktoken's model table (exact names first,
    then its prefixes, as ``tiktoken.encoding_name_for_model``). ``KeyError`` for a model it does
    not know."""
    from tiktoken import model

    try:
        return model.encoding_name_for_model(model_name)
    except KeyError:
        raise KeyError(f"Could not automatically map {model_name} to a tokeniser. "
                       "Please use `tokscope.get_encoding` to explicitly get the tokeniser you expect.") from None


def model_table() -> tuple[dict[str, str], dict[str, str]]:
    """The installed tiktoken's ``(model -> encoding, model prefix -> encoding)`` tables (copies)."""
    from tiktoken import model

    return dict(model.MODEL_TO_ENCODING), dict(model.MODEL_PREFIX_TO_ENCODING)
