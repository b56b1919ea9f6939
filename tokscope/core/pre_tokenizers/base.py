"""What the pre-tokenizers share: their base (``split_str``, ``local``, the repr), splitting an aligned
text by the spans of a pattern (:func:`split_text`, Hugging Face's ``NormalizedString::split``), and
the character-class split."""

from __future__ import annotations

import functools
from collections.abc import Sequence as Seq
from typing import Any

import regex

from ..text.unicode import RangeSet
from ..text.normalized import NormalizedText, merge_matches, matches_from_spans
from ..patterns.onig import OnigPattern


def slices(text: NormalizedText, spans: Seq[tuple[int, int]]) -> list[NormalizedText]:
    """``text.slice`` of each non-empty span (sorted)."""
    return text.slices(spans)


def split_text(text: NormalizedText, finder: Any, behavior: str, invert: bool = False) -> list[NormalizedText]:
    """HF's ``NormalizedString::split`` with a pattern whose matches ``finder(text)`` returns as
    ``(start, end)`` spans (empty matches included)."""
    t = text.text
    if not t:
        return []
    if not invert and behavior == "isolated" and isinstance(getattr(finder, "__self__", None), OnigPattern):
        pieces = finder.__self__.isolated(t)
        if pieces is not None:
            if text.linear:
                o = text.original_start
                out = []
                for piece in pieces:
                    e = o + len(piece)
                    out.append(NormalizedText(piece, o, e))
                    o = e
                return out
            spans_from = []
            s = 0
            for piece in pieces:
                spans_from.append((s, s + len(piece)))
                s += len(piece)
            return slices(text, spans_from)
    spans = finder(t)
    if not invert and behavior == "isolated":
        pieces = []
        prev = 0
        for s, e in spans:
            if prev != s:
                pieces.append((prev, s))
            pieces.append((s, e))
            prev = e
        if prev != len(t):
            pieces.append((prev, len(t)))
        return slices(text, pieces)
    matches = matches_from_spans(spans, len(t))
    if invert:
        matches = [(s, e, not m) for s, e, m in matches]
    return slices(text, merge_matches(matches, behavior))


def split_each(pre: Any, pieces: list[str]) -> list[str]:
    """``pre.split_str`` of each piece (none at the start of the text) in one list: what a
    Sequence's later stage makes of the pieces before it (a stage with its own ``split_many``
    does it in one call).

    >>> from .whitespace import WhitespaceSplit
    >>> split_each(WhitespaceSplit(), ["a b", "c"])
    ['a', 'b', 'c']
    """
    if len(pieces) == 1:
        return pre.split_str(pieces[0], False)
    out: list[str] = []
    for piece in pieces:
        out.extend(pre.split_str(piece, False))
    return out


def isolated_strs(pattern: OnigPattern, text: str) -> list[str]:
    """The pieces of ``text`` (non-empty) under HF's ``isolated`` behavior, as strings: the
    matches and the text between them.

    >>> from tokscope.core.patterns.onig import compile_onig
    >>> isolated_strs(compile_onig(r"\\d+"), "ab12c3")
    ['ab', '12', 'c', '3']
    """
    pieces = pattern.isolated(text)
    if pieces is not None:
        return pieces
    out = []
    prev = 0
    for s, e in pattern.spans(text):
        if prev != s:
            out.append(text[prev:s])
        if s != e:
            out.append(text[s:e])
        prev = e
    if prev != len(text):
        out.append(text[prev:])
    return out


class PreTokenizerBase:
    #: see :attr:`.pipeline.PreTokenizer.local`
    local = True
    #: False for a stage that rewrites each split but never cuts it (ByteLevel without its regex,
    #: Metaspace without ``split``): behind a local stage that cuts, such a stage stays local
    splits = True
    #: True when the stage looks at where a split starts in the original text (Metaspace's
    #: ``first``), so that only text at offset 0 of the original is treated as its start
    needs_start = False

    def pre_tokenize(self, splits: list[NormalizedText]) -> list[NormalizedText]:
        out: list[NormalizedText] = []
        for split in splits:
            if split.text:
                out.extend(self._one(split))
        return out

    def _one(self, split: NormalizedText) -> list[NormalizedText]:  # pragma: no cover - abstract
        raise NotImplementedError

    def split_str(self, text: str, first: bool = True) -> list[str]:
        """The chunks of ``text`` as strings (the ids-only fast path: no alignment is kept).
        ``first`` says whether ``text`` starts at offset 0 of the original text; it matters only
        to stages with :attr:`needs_start`, and is exact for them only when ``text`` is the
        original text itself (no normalizer rewrote it).

        The chunks are always those of :meth:`pre_tokenize` on the same text."""
        return [c.text for c in self.pre_tokenize([NormalizedText.identity(text, 0 if first else 1)])]

    def pre_tokenize_str(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """The chunks of ``text`` with their original spans, as HF's ``pre_tokenize_str``."""
        return [(c.text, (c.original_start, c.original_end)) for c in self.pre_tokenize([NormalizedText.identity(text)])]

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


def pattern_is_local(pattern: str) -> bool:
    """A regex whose matches from a chunk boundary on do not depend on the text before it: no
    look-behind, word boundary, ``\\G``/``\\A`` or ``^`` outside a character class (a ``^``
    inside one, as DeepSeek's punctuation class has, anchors nothing).

    >>> pattern_is_local(r"[!^_]+|\\s+"), pattern_is_local(r"^a"), pattern_is_local(r"[^a]|(?<=x)y")
    (True, False, False)
    """
    if any(tok in pattern for tok in ("(?<", "\\b", "\\B", "\\G", "\\A")):
        return False
    in_class = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":  # a ] right after [ or [^ is a literal
                i += 1
            continue
        elif c == "^":
            return False
        i += 1
    return True


@functools.lru_cache(maxsize=1024)
def compiled_regex(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def char_split(split: NormalizedText, chars: RangeSet, behavior: str) -> list[NormalizedText]:
    """HF's split on a character predicate (each matching character its own match)."""
    t = split.text
    cls = chars.class_for(t)
    if cls is None:
        return slices(split, [(0, len(t))])
    neg = "[^" + cls[1:]
    if behavior == "removed":
        return slices(split, [m.span() for m in compiled_regex(neg + "+").finditer(t)])
    if behavior == "isolated":
        return slices(split, [m.span() for m in compiled_regex(neg + "+|" + cls).finditer(t)])
    if behavior == "contiguous":
        return slices(split, [m.span() for m in compiled_regex(neg + "+|" + cls + "+").finditer(t)])
    spans = [m.span() for m in compiled_regex(cls).finditer(t)]
    return slices(split, merge_matches(matches_from_spans(spans, len(t)), behavior))
