"""Names a user types: encodings (with their short aliases), folders, pre-tokenization patterns and
the names tokenizers are saved under.

One table for each, used by the command line and the explorer alike:

* :data:`ALIASES` and :func:`canonical_name` for encodings;
* :func:`user_data_dir`, :func:`user_cache_dir`, :func:`user_state_dir` for folders (platformdirs,
  with tokscope's own and the XDG overrides, and the folders of earlier versions kept);
* :data:`PATTERN_NAMES`, :data:`DEFAULT_TRAINING_PATTERN` and :func:`pattern_for` for the
  pre-tokenization patterns a trainer offers;
* :func:`check_saved_name` for a saved tokenizer's name.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from ..core.text.display import safe_text
from . import tiktoken_adapter as tk
from .errors import BadNameError

APP_NAME = "tokscope"
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
#: The pattern a trainer uses when the user picks none (``tokscope train`` and the training screen).
DEFAULT_TRAINING_PATTERN = "gpt2"
#: One line per pattern name, for help texts and the training screen.
PATTERN_HELP = {
    "none": "no pre-tokenization: merges may cross anything",
    "words": "runs of non-space and runs of whitespace (nothing is dropped)",
    "gpt2": "GPT-2's pattern (letters, digits, punctuation, spaces before words)",
    "cl100k": "cl100k_base's pattern (digits in groups of 3)",
    "o200k": "o200k_base's pattern (case-aware words, digits in groups of 3)",
}


def builtin_names() -> list[str]:
    return tk.encoding_names()


def canonical_name(name: str) -> str:
    return ALIASES.get(name, name)


# ----- folders ----------------------------------------------------------------------------------


def _folder(own_var: str, xdg_var: str, platform_dir: str, legacy: Path) -> Path:
    """``$own_var``, else ``$xdg_var/tokscope``, else the platform's folder; a folder an earlier
    tokscope used (``legacy``) is kept while the platform's folder does not exist yet."""
    own = os.environ.get(own_var)
    if own:
        return Path(own)
    xdg = os.environ.get(xdg_var)
    if xdg:
        return Path(xdg) / APP_NAME
    platform = Path(platform_dir)
    if legacy != platform and legacy.is_dir() and not platform.exists():
        return legacy
    return platform


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def user_data_dir() -> Path:
    """Where saved tokenizers live: ``TOKSCOPE_DATA_DIR``, else ``$XDG_DATA_HOME/tokscope``, else
    the platform's data folder (``~/.local/share/tokscope`` on Linux)."""
    return _folder("TOKSCOPE_DATA_DIR", "XDG_DATA_HOME", platformdirs.user_data_dir(APP_NAME, appauthor=False),
                   _home() / ".local" / "share" / APP_NAME)


def user_cache_dir() -> Path:
    """tokscope's cache: ``TOKSCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/tokscope``, else the
    platform's cache folder (``~/.cache/tokscope`` on Linux)."""
    return _folder("TOKSCOPE_CACHE_DIR", "XDG_CACHE_HOME", platformdirs.user_cache_dir(APP_NAME, appauthor=False),
                   _home() / ".cache" / APP_NAME)


def user_state_dir() -> Path:
    """Where the explorer keeps state across runs (recovery files of unsaved text):
    ``TOKSCOPE_STATE_DIR``, else ``$XDG_STATE_HOME/tokscope``, else the platform's state folder
    (``~/.local/state/tokscope`` on Linux)."""
    return _folder("TOKSCOPE_STATE_DIR", "XDG_STATE_HOME", platformdirs.user_state_dir(APP_NAME, appauthor=False),
                   _home() / ".local" / "state" / APP_NAME)


def saved_dir() -> Path:
    return user_data_dir() / "tokenizers"


# ----- patterns ---------------------------------------------------------------------------------


def pattern_for(name_or_regex: str) -> tuple[str, str | None]:
    """``(regex, name)`` for a pattern name or a custom regex (``name`` is ``None`` for a regex).

    ``none`` and ``words`` come from the core; ``gpt2``, ``cl100k``, ``o200k`` (and any built-in
    encoding's name or alias) take that encoding's pattern from tiktoken's registry. Anything
    else must compile as a regex (within the core's limits on size and nesting); a one-line
    :class:`~tokscope.core.train.trainer.TrainingError` else. The explorer's training screen and
    ``tokscope train`` both resolve their choice here.
    """
    # the trainer is imported by what trains, not by every user of these folders (a model load)
    from ..core.train.trainer import CORE_PATTERNS, compile_training_pattern

    if name_or_regex in CORE_PATTERNS:
        return CORE_PATTERNS[name_or_regex], name_or_regex
    canonical = canonical_name(name_or_regex)
    if canonical in builtin_names():
        return tk.encoding_spec(canonical).pattern, name_or_regex
    compile_training_pattern(name_or_regex)
    return name_or_regex, None


# ----- saved tokenizers' names ------------------------------------------------------------------

#: characters a saved name cannot hold: path separators and what file systems refuse
_NOT_IN_NAMES = set('/\\:*?"<>|')
#: a name becomes a file name with ``.json``; most file systems allow 255 bytes
MAX_NAME_BYTES = 200


def check_saved_name(name: object, what: str = "name") -> str:
    """``name`` if it can be a saved tokenizer's name, else :class:`BadNameError` saying why.

    A name is a plain file name (no ``/``, no leading ``.`` or ``-``, no spaces), valid UTF-8 with
    no control, format or bidirectional characters, and not a name that ``-e NAME`` would take for
    something else (:func:`taken_by`), in any letter case.

    >>> check_saved_name("my-bpe_v2.1")
    'my-bpe_v2.1'
    >>> check_saved_name("GPT2")
    Traceback (most recent call last):
    ...
    tokscope.sources.errors.BadNameError: 'GPT2' is the name of the built-in encoding gpt2; choose another name
    >>> check_saved_name("my bpe")
    Traceback (most recent call last):
    ...
    tokscope.sources.errors.BadNameError: 'my bpe' cannot be a saved tokenizer's name (use letters, digits, '-', '_' or '.'; no spaces, no leading '.' or '-', no path)
    """
    if not isinstance(name, str) or not name:
        raise BadNameError(f"the {what} is empty")
    shown = safe_text(name)
    if any("\ud800" <= ch <= "\udfff" for ch in name):
        raise BadNameError(f"{shown!r} is not valid UTF-8; choose a {what} of text")
    if not name.isprintable():
        raise BadNameError(f"{shown!r} holds control or invisible characters; choose a plain {what}")
    bad = sorted(set(name) & _NOT_IN_NAMES)
    if bad or name.startswith((".", "-")) or any(ch.isspace() for ch in name):
        raise BadNameError(f"{shown!r} cannot be a saved tokenizer's name (use letters, digits, '-', '_' or '.'; "
                         f"no spaces, no leading '.' or '-', no path)")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise BadNameError(f"the {what} is too long ({len(name.encode('utf-8'))} bytes; at most {MAX_NAME_BYTES})")
    taken = taken_by(name)
    if taken is not None:
        raise BadNameError(f"{shown!r} is the name of the {taken}; choose another {what}")
    return name


def taken_by(name: str) -> str | None:
    """The built-in encoding (or alias) that ``-e NAME`` loads before a saved tokenizer of that name,
    in any letter case; ``None`` when no built-in takes it. (Open models' names are checked by
    :func:`tokscope.sources.saved.taken_by`; a model id of the hub holds a ``/``, which a saved
    name cannot.)

    >>> taken_by("O200K"), taken_by("mine")
    ('built-in encoding o200k_base', None)
    """
    folded = name.casefold()
    for builtin in [*builtin_names(), *ALIASES]:
        if folded == builtin.casefold():
            return f"built-in encoding {canonical_name(builtin)}"
    return None