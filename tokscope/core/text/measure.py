"""Counting a text: words, UTF-8 length, ratios. One definition for every pane and command.

A *word* is a maximal run of non-whitespace characters as ``str.split()`` sees them. Scripts
written without spaces (Chinese, Japanese, Thai) therefore have few, long words, and tokens per
word is only meaningful for texts that separate words with spaces.
"""

from __future__ import annotations


def count_words(text: str) -> int:
    """Words are maximal runs of non-whitespace (``str.split()``).

    >>> count_words("  Hello,  wide world! "), count_words("日本語のテキスト")
    (3, 1)
    """
    return len(text.split())


def utf8_len(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (a lone surrogate counts its three bytes).

    >>> utf8_len("aé🦜"), utf8_len("\\ud800")
    (7, 3)
    """
    return len(text.encode("utf-8", "surrogatepass"))


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or None when there is nothing to divide by.

    >>> ratio(3, 2), ratio(1, 0)
    (1.5, None)
    """
    return num / den if den else None


def word_span(text: str, a: int, b: int, limit: int = 512) -> tuple[int, int] | None:
    """``[a, b)`` widened to whitespace on both sides (or the text's ends), so the words in it are
    whole; None when that takes more than ``limit`` characters.

    >>> word_span("one two three", 5, 6)
    (4, 7)
    """
    lo, hi, n = a, b, len(text)
    while lo > 0 and not text[lo - 1].isspace():
        lo -= 1
        if a - lo > limit:
            return None
    while hi < n and not text[hi].isspace():
        hi += 1
        if hi - b > limit:
            return None
    return lo, hi
