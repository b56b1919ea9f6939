"""BertPreTokenizer (white space and punctuation), as Hugging Face's ``pre_tokenizers/bert.rs``."""

from __future__ import annotations

import functools
from typing import Any

import regex

from ..text.char_map import CharMap
from ..text.unicode import char_class, table
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, compiled_regex, slices
from .whitespace import WS, WS_CLASS
from ..text.compiled import CompiledPart


class BertPreTokenizer(PreTokenizerBase):
    """BERT's: split on whitespace (removed), then on punctuation (isolated): runs of other
    characters, and each punctuation character alone (one regex over the whole split, built from
    the punctuation ranges the split holds)."""

    def _finder(self, text: str) -> regex.Pattern[str]:
        present = table("PUNCT").present(text)
        if not present:
            return compiled_regex("[^" + WS_CLASS[1:] + "+")
        punct = char_class(present)[1:-1]
        return compiled_regex(f"[^{WS_CLASS[1:-1]}{punct}]+|[{punct}]")

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return slices(split, [m.span() for m in self._finder(split.text).finditer(split.text)])

    def split_str(self, text: str, first: bool = True) -> list[str]:
        """The split's strings: by the compiled scan when there is one, else
        :meth:`split_str_python`.

        >>> BertPreTokenizer().split_str("Hi,\u3000you\u2019re  ok!")
        ['Hi', ',', 'you', '’', 're', 'ok', '!']
        """
        module = compiled_part.get()
        if module is None:
            return self.split_str_python(text)
        return module.bert_split(text, classes())

    def split_str_python(self, text: str) -> list[str]:
        """The split's strings by one ``str.translate`` that makes each white space character a
        space and puts spaces around each punctuation character, then a split on spaces.

        >>> BertPreTokenizer().split_str_python("a.b  c")
        ['a', '.', 'b', 'c']
        """
        return list(filter(None, text.translate(_SPACED).split(" ")))

    def split_str_regex(self, text: str) -> list[str]:
        """:meth:`split_str` by the regex of :meth:`_one` (its oracle in the tests)."""
        return self._finder(text).findall(text)


def _spaced(c: str) -> str:
    """A character as :meth:`BertPreTokenizer.split_str` maps it.

    >>> _spaced("\\t"), _spaced("."), _spaced("a")
    (' ', ' . ', 'a')
    """
    if c in WS:
        return " "
    return f" {c} " if c in _PUNCT else c


_PUNCT = table("PUNCT")
_SPACED = CharMap(_spaced)


@functools.cache
def classes() -> bytes:
    """Each code point's class for the compiled scan, up to the last one that is not ``0``: ``1``
    white space, ``2`` punctuation, ``0`` the rest.

    >>> c = classes(); c[ord(" ")], c[ord(",")], c[ord("a")], len(c) > 0x3000
    (1, 2, 0, True)
    """
    out = bytearray(max(WS.ranges[-1][1], _PUNCT.ranges[-1][1]) + 1)
    for code, ranges in ((2, _PUNCT.ranges), (1, WS.ranges)):  # white space wins
        for first, last in ranges:
            out[first : last + 1] = bytes([code]) * (last + 1 - first)
    return bytes(out)


compiled_part = CompiledPart("WPIECE_ABI")


def use_compiled(on: bool, module: Any = None) -> None:
    """Split with the compiled scan when installed (the default) or with
    :meth:`BertPreTokenizer.split_str_python` (the tests compare the two); ``module`` puts in a
    compiled one built elsewhere.

    >>> with compiled_part.switched(False):
    ...     BertPreTokenizer().split_str("a,b")
    ['a', ',', 'b']
    """
    compiled_part.use(on, module)
