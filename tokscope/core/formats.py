"""Vocabulary file formats as pure functions: tiktoken's rank files and GPT-2's data-gym pair.

>>> dump_tiktoken_bpe({b"a": 0, b"b": 1, b"ab": 2})
b'YQ== 0\\nYg== 1\\nYWI= 2\\n'
>>> parse_tiktoken_bpe(b"YQ== 0\\nYg== 1\\nYWI= 2\\n")
{b'a': 0, b'b': 1, b'ab': 2}
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping

from .byte_alphabet import CHAR_TO_BYTE
from .errors import TokscopeError


class FormatError(TokscopeError):
    """A vocabulary file that does not have the expected format."""


def parse_tiktoken_bpe(contents: bytes, *, source: str = "rank file") -> dict[bytes, int]:
    """Parse tiktoken's ``.tiktoken`` format: one ``base64(token) rank`` line per token."""
    ranks: dict[bytes, int] = {}
    b64decode = base64.b64decode
    for number, line in enumerate(contents.splitlines(), 1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[b64decode(token)] = int(rank)
        except (ValueError, binascii.Error):
            raise FormatError(f"{source}: line {number} is not 'base64-token rank'") from None
    return ranks


def dump_tiktoken_bpe(ranks: Mapping[bytes, int]) -> bytes:
    """Serialize ranks in tiktoken's format, ordered by rank (byte-identical to tiktoken's files)."""
    lines = [base64.b64encode(token) + b" " + str(rank).encode() for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])]
    return b"\n".join(lines) + b"\n" if lines else b""


def data_gym_to_ranks(vocab_bpe: bytes, encoder_json: bytes) -> dict[bytes, int]:
    """Turn GPT-2's ``vocab.bpe`` + ``encoder.json`` into ranks (as tiktoken's loader does).

    The single bytes come first in GPT-2's order, then one token per merge line. The result is
    checked against ``encoder.json``; a mismatch raises :class:`FormatError`.
    """
    mapping = CHAR_TO_BYTE
    order = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    order += [b for b in range(256) if b not in set(order)]
    ranks: dict[bytes, int] = {bytes([b]): i for i, b in enumerate(order)}

    def decode(value: str) -> bytes:
        return bytes(mapping[ch] for ch in value)

    try:
        lines = vocab_bpe.decode("utf-8").split("\n")[1:-1]
        n = len(ranks)
        for line in lines:
            first, second = line.split()
            ranks[decode(first) + decode(second)] = n
            n += 1
        encoder = {decode(k): v for k, v in json.loads(encoder_json).items()}
    except (ValueError, KeyError, UnicodeDecodeError):
        raise FormatError("GPT-2 vocabulary files are malformed") from None
    encoder.pop(b"<|endoftext|>", None)
    encoder.pop(b"<|startoftext|>", None)
    if encoder != ranks:
        raise FormatError("GPT-2 vocab.bpe and encoder.json do not agree")
    return ranks
