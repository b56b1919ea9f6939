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
from functools import partial
from collections.abc import Mapping

from ..text.byte_alphabet import CHAR_TO_BYTE
from ..text.errors import TokscopeError


class FormatError(TokscopeError):
    """A vocabulary file that does not have the expected format."""


def parse_tiktoken_bpe(contents: bytes, *, source: str = "rank file") -> dict[bytes, int]:
    """Parse tiktoken's ``.tiktoken`` format: one ``base64(token) rank`` line per token.

    Base64 is decoded strictly: a character outside the alphabet, bad padding or an empty token is
    an error naming its line (a lenient decoder would turn ``Y*W*I=`` into ``ab`` and ``!!!!`` into
    nothing). The whole file is decoded in one pass at C speed; the line-by-line pass runs only to
    name the first bad line.

    >>> parse_tiktoken_bpe(b"Y*W*I= 256")
    Traceback (most recent call last):
    ...
    tokscope.core.formats.tiktoken_ranks.FormatError: rank file: line 1 is not 'base64-token rank' (bad base64)
    """
    parts = contents.split()
    tokens, ranks_text = parts[0::2], parts[1::2]
    try:
        if len(tokens) != len(ranks_text) or not b"".join(ranks_text).isdigit():
            raise ValueError
        decode = partial(binascii.a2b_base64, strict_mode=True)
        ranks = dict(zip(map(decode, tokens), map(int, ranks_text)))
        if b"" in ranks or len(tokens) != sum(1 for line in contents.splitlines() if line.strip()):
            raise ValueError
        return ranks
    except (ValueError, binascii.Error):
        pass
    for number, line in enumerate(contents.splitlines(), 1):  # find the line to name
        if not line.strip():
            continue
        fields = line.split()
        why = "" if len(fields) == 2 else " (not two fields)"
        if not why and not fields[1].isdigit():
            why = " (the rank is not a whole number)"
        if not why:
            try:
                if not binascii.a2b_base64(fields[0], strict_mode=True):
                    why = " (empty token)"
            except binascii.Error:
                why = " (bad base64)"
        if why:
            raise FormatError(f"{source}: line {number} is not 'base64-token rank'{why}")
    raise FormatError(f"{source}: not a .tiktoken rank file")  # pragma: no cover - a line above fails


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
