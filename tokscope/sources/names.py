"""Names a user types: encodings (with their short aliases), folders, and pre-tokenization patterns.

One table for each, used by the command line and the explorer alike.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.trainer import CORE_PATTERNS, compile_training_pattern
from . import tiktoken_adapter as tk

DEFAULT_ENCODING = "o200k_base"

#: short names a user may type
ALIASES = {
    "o200k": "o200k_base",
    "cl100k": "cl100k_base",
    "p50k": "p50k_base",
    "r50k": "r50k_base",
    "harmony": "o200k_harmony",
}

#: Pattern names offered by the trainer, in the order the CLI and the UI list them.
PATTERN_NAMES = ("none", "words", "gpt2", "cl100k", "o200k")


def builtin_names() -> list[str]:
    return tk.encoding_names()


def canonical_name(name: str) -> str:
    return ALIASES.get(name, name)


def user_data_dir() -> Path:
    """Where saved tokenizers live (``TOKSCOPE_DATA_DIR``, else the XDG data home)."""
    if os.environ.get("TOKSCOPE_DATA_DIR"):
        return Path(os.environ["TOKSCOPE_DATA_DIR"])
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "tokscope"


def saved_dir() -> Path:
    return user_data_dir() / "tokenizers"


def pattern_for(name_or_regex: str) -> tuple[str, str | None]:
    """``(regex, name)`` for a pattern name or a custom regex (``name`` is ``None`` for a regex).

    ``none`` and ``words`` come from the core; ``gpt2``, ``cl100k``, ``o200k`` (and any built-in
    encoding's name or alias) take that encoding's pattern from tiktoken's registry. Anything
    else must compile as a regex.
    """
    if name_or_regex in CORE_PATTERNS:
        return CORE_PATTERNS[name_or_regex], name_or_regex
    canonical = canonical_name(name_or_regex)
    if canonical in builtin_names():
        return tk.encoding_spec(canonical).pattern, name_or_regex
    compile_training_pattern(name_or_regex)
    return name_or_regex, None
