"""ByteLevel (each character as the stand-ins of its UTF-8 bytes), as Hugging Face's
``normalizers/byte_level.rs``."""

from __future__ import annotations

import itertools
import regex

from ..text.byte_alphabet import BYTE_TO_CHAR
from ..text.normalized import NormalizedText
from .base import NormalizerBase


class ByteLevel(NormalizerBase):
    """Every character replaced by the byte-level stand-ins of its UTF-8 bytes (all aligned to
    it).

    >>> t = ByteLevel().normalize(NormalizedText.identity("é"))
    >>> t.text, t.alignments()
    ('Ã©', [(0, 1), (0, 1)])
    """

    def normalize(self, text: NormalizedText) -> NormalizedText:
        t = text.text
        if not t:
            return text
        if t.isascii():
            return text.with_text(t.translate(_ASCII_STANDINS))
        return to_byte_level(text)

    def normalize_str(self, text: str) -> str:
        return "".join([BYTE_TO_CHAR[b] for b in text.encode("utf-8", "surrogatepass")])


_NON_ASCII = regex.compile(r"[^\x00-\x7f]+")


_ASCII_STANDINS = str.maketrans({b: BYTE_TO_CHAR[b] for b in range(128)})


#: ``str.translate`` table from a Latin-1 character (one byte) to its byte-level stand-in
BYTE_STANDINS = str.maketrans({b: BYTE_TO_CHAR[b] for b in range(256)})


def to_byte_level(text: NormalizedText) -> NormalizedText:
    """Each character replaced by the stand-ins of its UTF-8 bytes, all aligned to it (HF's
    ByteLevel transform: the first byte replaces the character, the others are inserted).

    >>> t = to_byte_level(NormalizedText.identity("aé", 3))
    >>> t.text, t.alignments()
    ('aÃ©', [(3, 4), (4, 5), (4, 5)])
    """
    t = text.text
    standins = t.encode("utf-8", "surrogatepass").decode("latin-1").translate(BYTE_STANDINS)
    if len(standins) == len(t):
        return text.with_text(standins)
    if text.linear:
        # build the runs directly: a block of its bytes' stand-ins per character
        o = text.original_start
        sizes = [1 if c < "\x80" else 2 if c < "\u0800" else 3 if c < "\U00010000" else 4 for c in t]
        starts = list(itertools.accumulate(sizes, initial=0))
        starts.pop()
        runs = [(o + k, o + k + 1, False) for k in range(len(t))]
        return NormalizedText(standins, text.original_start, text.original_end, starts, runs)
    edits = []
    for m in _NON_ASCII.finditer(t):
        s, e = m.span()
        sources: list[int] = []
        for k in range(s, e):
            sources.extend([k] * len(t[k].encode("utf-8", "surrogatepass")))
        edits.append((s, e, "\0" * len(sources), sources))
    return text.edit(edits).with_text(standins)
