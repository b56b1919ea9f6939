"""Context sizes of well-known models: how many tokens a conversation may take.

A small table of published figures (input and output together), matched on model names as the
Hugging Face hub and the OpenAI API spell them; anything else is "unknown". Figures change as
vendors ship new models: the table is a snapshot, each entry names its source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """A model's context size in tokens (``None``: unknown) and where the figure comes from."""

    model: str
    tokens: int | None
    note: str = ""

    @property
    def label(self) -> str:
        """``'128,000 tokens'`` or ``'unknown'``."""
        return f"{self.tokens:,} tokens" if self.tokens is not None else "unknown"

    def remaining(self, used: int) -> int | None:
        """Tokens left after ``used`` (negative when over), ``None`` when the size is unknown."""
        return None if self.tokens is None else self.tokens - used

    def fit(self, used: int) -> str:
        """How ``used`` tokens fit this window, as ``tokscope chat`` and the chat screen say it.

        >>> ContextWindow("gpt-4", 8192).fit(90), ContextWindow("gpt-4", 8192).fit(9000)
        ('gpt-4 8,192 (8,102 left)', 'gpt-4 8,192 (808 OVER)')
        >>> ContextWindow("mine", None).fit(5)
        'mine unknown'
        """
        left = self.remaining(used)
        if left is None:
            return f"{self.model} unknown"
        return f"{self.model} {self.tokens:,} ({left:,} left)" if left >= 0 else f"{self.model} {self.tokens:,} ({-left:,} OVER)"


#: published context sizes (input and output together), most specific pattern first
CONTEXT_WINDOWS: tuple[tuple[str, int, str], ...] = (
    (r"gpt-4\.1", 1_047_576, "OpenAI"),
    (r"gpt-4o", 128_000, "OpenAI"),
    (r"gpt-4-turbo|gpt-4-\d{4}-preview", 128_000, "OpenAI"),
    (r"gpt-4-32k", 32_768, "OpenAI"),
    (r"gpt-4(?!\.|o)", 8_192, "OpenAI"),
    (r"gpt-3\.5-turbo", 16_385, "OpenAI"),
    (r"o1-mini", 128_000, "OpenAI"),
    (r"\bo1\b|o1-preview|o3-mini|\bo3\b|o4-mini", 200_000, "OpenAI"),
    (r"gpt-oss", 131_072, "OpenAI, gpt-oss model card"),
    (r"llama-?3\.[123]", 131_072, "Meta"),
    (r"llama-?3\b", 8_192, "Meta"),
    (r"qwen3", 32_768, "Qwen; 131,072 with YaRN scaling"),
    (r"qwen2\.5", 32_768, "Qwen; 131,072 with YaRN scaling"),
    (r"gemma-?3-1b", 32_768, "Google"),
    (r"gemma-?3", 131_072, "Google"),
    (r"gemma-?2", 8_192, "Google"),
    (r"phi-?4", 16_384, "Microsoft"),
    (r"mistral-7b-instruct-v0\.[23]", 32_768, "Mistral AI"),
    (r"mistral-nemo", 128_000, "Mistral AI"),
)

#: the models of OpenAI's encodings, for the context sizes an encoding's count may be held to
ENCODING_MODELS: dict[str, tuple[str, ...]] = {
    "o200k_base": ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "o1", "o3", "o4-mini"),
    "cl100k_base": ("gpt-4", "gpt-4-turbo", "gpt-3.5-turbo"),
    "o200k_harmony": ("gpt-oss-20b", "gpt-oss-120b"),
}


def context_window(model: str) -> ContextWindow:
    """The context size of a model by name (any case, with or without its organisation).

    >>> context_window("meta-llama/Llama-3.1-8B-Instruct").label, context_window("gpt-4o-mini").tokens
    ('131,072 tokens', 128000)
    >>> context_window("my-own-model").label
    'unknown'
    """
    key = model.lower().rsplit("/", 1)[-1].replace("_", "-").replace(" ", "-")
    key = key.replace("meta-llama-3", "llama-3")
    for pattern, tokens, note in CONTEXT_WINDOWS:
        if re.search(pattern, key):
            return ContextWindow(model, tokens, note)
    return ContextWindow(model, None, "not in tokscope's table")


def context_windows_for(encoding: str) -> tuple[ContextWindow, ...]:
    """The context sizes of the models that use one of OpenAI's encodings (empty if none known).

    >>> [w.tokens for w in context_windows_for("o200k_harmony")]
    [131072, 131072]
    """
    return tuple(context_window(m) for m in ENCODING_MODELS.get(encoding, ()))
