r"""Whitespace (``\w+|[^\w\s]+``) and WhitespaceSplit (on white space), as Hugging Face's
``pre_tokenizers/whitespace.rs``."""

from __future__ import annotations

import functools

import regex

from ..text.class_table import ClassTable, compiled
from ..text.unicode import WHITESPACE, RangeSet, char_class, class_marks, table
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, char_split, compiled_regex, slices


WS = RangeSet([(ord(c), ord(c)) for c in WHITESPACE])


WS_CLASS = char_class(WS.ranges)


class WhitespaceSplit(PreTokenizerBase):
    """Split on whitespace (Rust's ``char::is_whitespace``), which is removed."""

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return char_split(split, WS, "removed")

    def split_str(self, text: str, first: bool = True) -> list[str]:
        return _NOT_WS.findall(text)


#: the runs of non-whitespace (WhitespaceSplit's chunks)
_NOT_WS = regex.compile("[^" + WS_CLASS[1:] + "+")


class Whitespace(PreTokenizerBase):
    r"""The chunks ``\w+|[^\w\s]+`` of the Rust ``regex`` crate (its Unicode ``\w``)."""

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        t = split.text
        module = compiled()
        if module is not None:
            return slices(split, module.cls_spans(t, *word_classes().tables))
        return slices(split, [m.span() for m in _word_pattern(t).finditer(t)])

    def split_str(self, text: str, first: bool = True) -> list[str]:
        """The chunks as strings (the ids-only path: no alignment is built): the runs of word
        characters and of other non-space ones, found on the text's class marks.

        >>> Whitespace().split_str("Hi, wörld!")
        ['Hi', ',', 'wörld', '!']
        """
        module = compiled()
        if module is not None:
            return module.cls_split(text, *word_classes().tables)
        if text.isascii():
            return _ASCII_WORDS.findall(text)
        marks = class_marks(text, [(table("RX_WORD"), "w"), (WS, "s")], "o")
        return [text[s:e] for s, e in map(regex.Match.span, _WORD_MARKS.finditer(marks))]


@functools.cache
def word_classes() -> ClassTable:
    r"""The classes of :meth:`Whitespace.split_str`'s compiled path: word characters (Rust's
    ``\w``) 1, white space 0, every other character 2, so its runs of one class are the chunks.

    >>> [word_classes().class_of(c) for c in "a_ ,\u3000日"]
    [1, 1, 0, 2, 0, 1]
    """
    return ClassTable([(table("RX_WORD").ranges, 1), (WS.ranges, 0)], default=2)


#: ``\w+|[^\w\s]+`` on ASCII text, and on the marks of :func:`~.unicode.class_marks`
_ASCII_WORDS = regex.compile(r"[0-9A-Z_a-z]+|[^0-9A-Z_a-z\t-\r ]+")
_WORD_MARKS = regex.compile("w+|o+")


#: The word ranges the pattern of :func:`_word_pattern` holds, and that pattern.
_seen: list = [frozenset(), None]
#: More ranges than this make a slow class: the ranges seen start again from one text's.
SEEN_MAX = 256


def _word_pattern(text: str):
    r"""``\w+|[^\w\s]+`` with ``\w`` cut down to the word ranges seen so far, ``text``'s among
    them: exact on ``text`` (a character of another range is in none of them), and compiled only
    when a text brings a new range (a class per text made a compile per short text in many
    scripts).

    >>> _word_pattern("ab").findall("ab, c") == _word_pattern("日本").findall("ab, c") == ["ab", ",", "c"]
    True
    """
    present = table("RX_WORD").present(text)
    if not present:
        return compiled_regex("[^" + WS_CLASS[1:] + "+")
    seen, pattern = _seen
    if pattern is None or not seen.issuperset(present):
        seen = seen.union(present)
        if len(seen) > SEEN_MAX:
            seen = frozenset(present)
        word = char_class(tuple(sorted(seen)))
        pattern = regex.compile(f"{word}+|[^{word[1:-1]}{WS_CLASS[1:-1]}]+")
        _seen[:] = [seen, pattern]
    return pattern
