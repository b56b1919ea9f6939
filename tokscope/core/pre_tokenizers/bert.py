"""BertPreTokenizer (white space and punctuation), as Hugging Face's ``pre_tokenizers/bert.rs``."""

from __future__ import annotations

import regex

from ..text.char_map import CharMap
from ..text.unicode import char_class, table
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, compiled_regex, slices
from .whitespace import WS, WS_CLASS


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
        """The split's strings, by one ``str.translate`` that makes each white space character a
        space and puts spaces around each punctuation character, then a split on spaces.

        >>> BertPreTokenizer().split_str("Hi,\u3000you\u2019re  ok!")
        ['Hi', ',', 'you', '’', 're', 'ok', '!']
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
