"""Mistral's Tekken files (``tekken.json``): a file that describes itself — pattern, vocabulary
(base64 bytes in rank order) and special tokens. Ordinary ids are ``rank + num_special_tokens``;
the special tokens fill the ids below (``<SPECIAL_n>`` for the unnamed ones), as Mistral's own code
does. A malformed file is a one-line :class:`~tokscope.core.text.errors.TokenizerFileError`.

>>> import base64
>>> data = {"config": {"pattern": r"\\S+|\\s+", "default_vocab_size": 259, "default_num_special_tokens": 3},
...         "vocab": [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode()} for i in range(256)]}
>>> looks_like(data), from_json(data, "t").encode("hi")
(True, [107, 108])
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ..text.display import safe_text
from ..text.errors import TokenizerFileError
from ..tokenizer.tokenizer import Tokenizer

#: Tekken's special tokens for files of version 7 and older, which do not list them
DEFAULT_SPECIALS = ("<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
                    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
                    "[TOOL_CONTENT]")


def looks_like(data: Any) -> bool:
    """True for the JSON object of a Tekken file (a ``config`` with a pattern, a ``vocab`` list)."""
    return isinstance(data, dict) and isinstance(data.get("config"), dict) and isinstance(data.get("vocab"), list) \
        and "pattern" in data["config"]


def parse(raw: bytes, source: str) -> dict:
    """The JSON object of a Tekken file's bytes; one-line error when it is not JSON."""
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise TokenizerFileError(f"{safe_text(source)} is not valid JSON") from None


def from_json(data: dict, name: str, source: str = "tekken file") -> Tokenizer:
    """A Tekken file's object as a tokenizer (see the module docstring)."""
    if not looks_like(data):
        raise TokenizerFileError(f"{safe_text(source)} is not a Tekken tokenizer file (no config/vocab)")
    config = data["config"]
    try:
        n_special = int(config["default_num_special_tokens"])
        vocab_size = int(config["default_vocab_size"])
        pattern = str(config["pattern"])
        inner = vocab_size - n_special
        vocab = data["vocab"][:inner]
        ranks: dict[bytes, int] = {}
        for i, entry in enumerate(vocab):
            if entry.get("rank") != i:
                raise TokenizerFileError(f"{safe_text(source)}: vocabulary entry {i} has rank {entry.get('rank')!r}")
            ranks[base64.b64decode(entry["token_bytes"], validate=True)] = i + n_special
    except (KeyError, TypeError, ValueError, binascii.Error, AttributeError) as exc:
        raise TokenizerFileError(f"{safe_text(source)}: malformed Tekken file ({type(exc).__name__})") from None
    if len(ranks) != inner:
        raise TokenizerFileError(f"{safe_text(source)}: {inner - len(ranks)} vocabulary entries repeat the bytes of others")
    listed = data.get("special_tokens")
    if listed is None:
        names = list(DEFAULT_SPECIALS)
        ids = list(range(len(names)))
    else:
        names = [str(t["token_str"]) for t in listed]
        ids = [int(t["rank"]) for t in listed]
    specials = dict(zip(names, ids))
    taken = set(ids)
    for i in range(n_special):
        if i not in taken:
            specials[f"<SPECIAL_{i}>"] = i
    return Tokenizer(name, ranks, pattern, specials, n_vocab=vocab_size)
