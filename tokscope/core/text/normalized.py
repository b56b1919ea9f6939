"""Normalized text that stays aligned to the text the user typed.

A :class:`NormalizedText` is the text a normalizer or pre-tokenizer produced, plus, for every one
of its characters, the span of the *original* input it came from, in absolute character offsets
into the whole input. It follows Hugging Face's ``NormalizedString`` rule for rule (HF aligns
UTF-8 bytes, this aligns characters; every HF alignment covers whole characters, so the two say
the same thing):

* a character that replaces one or more original characters aligns to the first of them (NFC's
  ``é`` from ``e`` + U+0301 aligns to the ``e`` alone);
* a character *inserted* (HF's ``change == 1``) shares the alignment of the character before it,
  or the empty span at the start of the text when there is none;
* a slice keeps its characters' alignments and covers the original span from its first
  character's start to its last character's end;
* the span of an empty range ``[i, i)`` is the empty span ``original_start + i`` (HF quirk).

Alignment is stored as *runs*: a **linear** run maps its characters one to one onto consecutive
original characters; a **block** run maps all its characters onto one span (ByteLevel's stand-ins
of one character, Lowercase's ``İ`` -> ``i̇``, inserted text). An identity text has no runs at
all, and a 1:1 rewrite (Lowercase of ASCII, ``" "`` -> ``"▁"``) keeps the runs it had, so a 1 MB
text costs a few small lists, never one Python object per character.

>>> t = NormalizedText.identity("Hello", 10)
>>> t.original_span(1, 3), t.original_start, t.original_end
((11, 13), 10, 15)
>>> t.slice(1, 3).text, t.slice(1, 3).original_span(0, 1)
('el', (11, 12))
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

#: A run: ``(o0, o1, linear)``. Linear: character ``k`` of the run aligns to ``(o0 + k, o0 + k + 1)``
#: and the run has ``o1 - o0`` characters. Block: every character aligns to ``(o0, o1)``.
Run = tuple[int, int, bool]

#: What :meth:`NormalizedText.find_matches` returns: ``(start, end, is_match)`` pieces covering
#: the text in order, as HF's ``Pattern::find_matches``.
Matches = list[tuple[int, int, bool]]

BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")


class _Builder:
    """Collects runs for a new text, merging neighbours that continue each other."""

    __slots__ = ("starts", "runs", "n")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.runs: list[Run] = []
        self.n = 0

    def add(self, o0: int, o1: int, linear: bool, length: int) -> None:
        if length <= 0:
            return
        if not linear and length == 1 and o1 == o0 + 1:
            linear = True
        runs = self.runs
        if runs:
            p0, p1, plin = runs[-1]
            if linear and plin and p1 == o0:
                runs[-1] = (p0, o1, True)
                self.n += length
                return
            if not linear and not plin and p0 == o0 and p1 == o1:
                self.n += length
                return
            if linear and length == 1 and not plin and p0 == o0 and p1 == o1:
                self.n += 1
                return
        self.starts.append(self.n)
        runs.append((o0, o1, linear))
        self.n += length

    def copy(self, source: NormalizedText, start: int, end: int) -> None:
        """Append the alignments of ``source``'s characters ``[start, end)``."""
        if start >= end:
            return
        if source._runs is None:
            o = source.original_start
            self.add(o + start, o + end, True, end - start)
            return
        starts, runs = source._starts, source._runs
        i = bisect.bisect_right(starts, start) - 1
        n_total = len(source.text)
        while start < end:
            run_end = starts[i + 1] if i + 1 < len(starts) else n_total
            o0, o1, lin = runs[i]
            stop = min(end, run_end)
            if lin:
                k = start - starts[i]
                self.add(o0 + k, o0 + k + (stop - start), True, stop - start)
            else:
                self.add(o0, o1, False, stop - start)
            start = stop
            i += 1

    def repeat(self, span: tuple[int, int], count: int) -> None:
        self.add(span[0], span[1], False, count)


class NormalizedText:
    """A normalized string with every character aligned to the original text (see the module).

    Immutable: every transform returns a new object (or ``self`` when nothing changed).
    """

    __slots__ = ("text", "original_start", "original_end", "_starts", "_runs")

    text: str
    original_start: int
    original_end: int

    def __init__(
        self,
        text: str,
        original_start: int,
        original_end: int,
        starts: list[int] | None = None,
        runs: list[Run] | None = None,
    ) -> None:
        self.text = text
        self.original_start = original_start
        self.original_end = original_end
        self._starts = starts
        self._runs = runs

    # ----- construction ---------------------------------------------------------------------

    @classmethod
    def identity(cls, text: str, offset: int = 0) -> NormalizedText:
        """The original text itself: characters ``offset .. offset + len(text)`` of the input.

        >>> NormalizedText.identity("ab", 3).alignments()
        [(3, 4), (4, 5)]
        """
        return cls(text, offset, offset + len(text))

    @classmethod
    def _from_builder(cls, text: str, ostart: int, oend: int, b: _Builder) -> NormalizedText:
        assert b.n == len(text), (b.n, len(text))
        runs = b.runs
        if len(runs) == 1 and runs[0][2] and runs[0][0] == ostart and runs[0][1] == oend:
            return cls(text, ostart, oend)
        if not runs and ostart == oend:
            return cls(text, ostart, oend)
        return cls(text, ostart, oend, b.starts, runs)


    # ----- queries ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.text)

    def __repr__(self) -> str:
        return f"NormalizedText({self.text!r}, original=({self.original_start}, {self.original_end}))"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NormalizedText):
            return NotImplemented
        return (
            self.text == other.text
            and self.original_start == other.original_start
            and self.original_end == other.original_end
            and self.alignments() == other.alignments()
        )

    def __hash__(self) -> int:
        return hash((self.text, self.original_start, self.original_end))

    @property
    def linear(self) -> bool:
        """True when character ``k`` comes from original character ``original_start + k`` (the
        alignment needs no table of runs).

        >>> NormalizedText.identity("ab", 5).linear
        True
        """
        return self._runs is None

    @property
    def is_identity(self) -> bool:
        """True when every character is the original character at its place."""
        return self._runs is None and len(self.text) == self.original_end - self.original_start

    def align(self, index: int) -> tuple[int, int]:
        """The original span of normalized character ``index``.

        >>> NormalizedText.identity("abc", 5).align(2)
        (7, 8)
        """
        n = len(self.text)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        if self._runs is None:
            o = self.original_start + index
            return (o, o + 1)
        i = bisect.bisect_right(self._starts, index) - 1
        o0, o1, lin = self._runs[i]
        if lin:
            o = o0 + index - self._starts[i]
            return (o, o + 1)
        return (o0, o1)

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span covered by normalized characters ``[start, end)``: from the first
        one's start to the last one's end; an empty range ``[i, i)`` gives ``original_start + i``
        twice (as HF's ``convert_offsets`` does).

        >>> t = NormalizedText.identity("ab", 4).prepend("_")
        >>> t.text, t.original_span(0, 1), t.original_span(0, 3), t.original_span(1, 1)
        ('_ab', (4, 5), (4, 6), (5, 5))
        """
        if start == end:
            return (self.original_start + start, self.original_start + start)
        if start > end or start < 0 or end > len(self.text):
            raise IndexError((start, end))
        return (self.align(start)[0], self.align(end - 1)[1])

    def alignments(self) -> list[tuple[int, int]]:
        """Every character's original span (one tuple per character: for tests and small texts)."""
        out: list[tuple[int, int]] = []
        if self._runs is None:
            o = self.original_start
            return [(o + k, o + k + 1) for k in range(len(self.text))]
        ends = [*self._starts[1:], len(self.text)]
        for s, e, (o0, o1, lin) in zip(self._starts, ends, self._runs):
            if lin:
                out.extend((o0 + k, o0 + k + 1) for k in range(e - s))
            else:
                out.extend([(o0, o1)] * (e - s))
        return out

    def runs(self) -> list[tuple[int, int, int, int, bool]]:
        """The alignment runs: ``(start, end, o0, o1, linear)`` in normalized coordinates."""
        if self._runs is None:
            return [(0, len(self.text), self.original_start, self.original_end, True)] if self.text else []
        ends = [*self._starts[1:], len(self.text)]
        return [(s, e, o0, o1, lin) for s, e, (o0, o1, lin) in zip(self._starts, ends, self._runs)]

    # ----- slicing ------------------------------------------------------------------------------

    def slice(self, start: int, end: int) -> NormalizedText:
        """Normalized characters ``[start, end)`` with their alignments; the slice covers the
        original span :meth:`original_span` gives.

        >>> NormalizedText.identity("hello", 0).slice(1, 4)
        NormalizedText('ell', original=(1, 4))
        """
        n = len(self.text)
        if not 0 <= start <= end <= n:
            raise IndexError((start, end))
        if start == 0 and end == n and n and self._runs is not None:
            # the whole text: from the first run's start to the last run's end
            ostart, oend = self._runs[0][0], self._runs[-1][1]
            if (ostart, oend) == (self.original_start, self.original_end):
                return self
            return NormalizedText(self.text, ostart, oend, self._starts, self._runs)
        ostart, oend = self.original_span(start, end)
        if start == 0 and end == n and (ostart, oend) == (self.original_start, self.original_end):
            return self
        text = self.text[start:end]
        if self._runs is None:
            return NormalizedText(text, ostart, oend)
        b = _Builder()
        b.copy(self, start, end)
        return NormalizedText._from_builder(text, ostart, oend, b)

    def slices(self, spans: Iterable[tuple[int, int]]) -> list[NormalizedText]:
        """:meth:`slice` of each non-empty span of ``spans`` (sorted by start): one pass over the
        runs, so a slice that lies in one linear run costs no search.

        >>> [t.text for t in NormalizedText.identity("abcd").prepend("_").slices([(0, 2), (2, 5)])]
        ['_a', 'bcd']
        """
        text = self.text
        if self._runs is None:
            o = self.original_start
            return [NormalizedText(text[s:e], o + s, o + e) for s, e in spans if s < e]
        starts, runs = self._starts, self._runs
        n_runs = len(starts)
        n = len(text)
        out = []
        i = 0
        for s, e in spans:
            if s >= e:
                continue
            while i + 1 < n_runs and starts[i + 1] <= s:
                i += 1
            while i > 0 and starts[i] > s:
                i -= 1
            run_end = starts[i + 1] if i + 1 < n_runs else n
            o0, o1, lin = runs[i]
            if lin and e <= run_end:
                k = s - starts[i]
                out.append(NormalizedText(text[s:e], o0 + k, o0 + k + (e - s)))
            else:
                out.append(self.slice(s, e))
        return out

    # ----- transforms ---------------------------------------------------------------------------

    def with_text(self, text: str) -> NormalizedText:
        """The same alignment under a new text of the same length (a 1:1 character map).

        >>> NormalizedText.identity("a b", 0).with_text("a▁b").alignments()[1]
        (1, 2)
        """
        if len(text) != len(self.text):
            raise ValueError("with_text needs a text of the same length")
        if text == self.text:
            return self
        return NormalizedText(text, self.original_start, self.original_end, self._starts, self._runs)

    def rebuild(self, pieces: Iterable[tuple[int, int] | tuple[str, int]]) -> NormalizedText:
        """A new text assembled from ``pieces``, each one of:

        * ``(a, b)`` (two ints): this text's characters ``[a, b)``, with their alignments;
        * ``(text, src)`` with ``src >= 0``: new characters ``text``, all aligned as this text's
          character ``src``; with ``src == -1``: aligned to the empty span at ``original_start``.

        The original span stays this text's (a normalizer rewrites, it never cuts).

        >>> t = NormalizedText.identity("ab", 0).rebuild([(0, 1), ("XY", 1)])
        >>> t.text, t.alignments()
        ('aXY', [(0, 1), (1, 2), (1, 2)])
        """
        b = _Builder()
        parts: list[str] = []
        text = self.text
        for first, second in pieces:
            if isinstance(first, int):
                if first < second:
                    parts.append(text[first:second])
                    b.copy(self, first, second)
            elif first:
                parts.append(first)
                b.repeat(self._span_of(second), len(first))
        return NormalizedText._from_builder("".join(parts), self.original_start, self.original_end, b)

    def _span_of(self, src: int) -> tuple[int, int]:
        return self.align(src) if src >= 0 else (self.original_start, self.original_start)

    def transform(self, changes: Iterable[tuple[str, int]], initial_offset: int = 0) -> NormalizedText:
        """HF's ``NormalizedString::transform``: the new text as ``(char, change)`` pairs, where
        ``change`` is ``0`` for a character that replaces the next original one, ``-n`` for one
        that replaces it and removes ``n`` more, and ``1`` for an inserted character (aligned as
        the one before it); ``initial_offset`` characters are removed first. Per character: use
        :meth:`rebuild` where the pieces are known.

        >>> t = NormalizedText.identity("abc", 0).transform([("x", -1), ("y", 0), ("z", 1)])
        >>> t.text, t.alignments()
        ('xyz', [(0, 1), (2, 3), (2, 3)])
        """
        return self.transform_range(0, len(self.text), changes, initial_offset)

    def transform_range(
        self, start: int, end: int, changes: Iterable[tuple[str, int]], initial_offset: int = 0
    ) -> NormalizedText:
        """:meth:`transform` applied to normalized characters ``[start, end)`` only."""
        chars: list[str] = []
        sources: list[int] = []
        p = start + initial_offset
        for c, change in changes:
            if change > 0:
                sources.append(p - 1)
            else:
                sources.append(p)
                p += 1 - change
            chars.append(c)
        return self.with_sources(start, end, "".join(chars), sources)

    def with_sources(self, start: int, end: int, new: str, sources: Sequence[int]) -> NormalizedText:
        """Characters ``[start, end)`` replaced by ``new``, whose character ``k`` aligns as this
        text's character ``sources[k]`` (``-1``: the empty span at ``original_start``)."""
        return self.edit([(start, end, new, sources)])

    def edit(self, edits: Iterable[tuple[int, int, str, Sequence[int]]]) -> NormalizedText:
        """Several :meth:`with_sources` at once: ``(start, end, new, sources)`` for sorted,
        disjoint spans; the rest of the text keeps its characters and alignments.

        >>> t = NormalizedText.identity("abcd", 0).edit([(1, 3, "XYZ", [1, 1, 2])])
        >>> t.text, t.alignments()
        ('aXYZd', [(0, 1), (1, 2), (1, 2), (2, 3), (3, 4)])
        """
        n = len(self.text)
        text = self.text
        b = _Builder()
        parts: list[str] = []
        last = 0
        for start, end, new, sources in edits:
            if len(new) != len(sources):
                raise ValueError("one source per new character")
            parts.append(text[last:start])
            b.copy(self, last, start)
            parts.append(new)
            i, m = 0, len(sources)
            while i < m:
                src = sources[i]
                if src >= n:
                    raise ValueError("transform consumed more characters than the text has")
                j = i + 1
                if src >= 0:
                    while j < m and sources[j] == sources[j - 1] + 1 and sources[j] < n:
                        j += 1
                    if j - i > 1:
                        b.copy(self, src, src + (j - i))
                        i = j
                        continue
                while j < m and sources[j] == src:
                    j += 1
                b.repeat(self._span_of(src), j - i)
                i = j
            last = end
        parts.append(text[last:])
        b.copy(self, last, n)
        return NormalizedText._from_builder("".join(parts), self.original_start, self.original_end, b)

    def remove_spans(self, spans: Sequence[tuple[int, int]]) -> NormalizedText:
        """The text without the characters of ``spans`` (sorted, disjoint): HF's ``filter``
        (every kept character keeps its alignment).

        >>> NormalizedText.identity("a-b-c", 0).remove_spans([(1, 2), (3, 4)]).alignments()
        [(0, 1), (2, 3), (4, 5)]
        """
        if not spans:
            return self
        pieces: list[tuple[int, int]] = []
        last = 0
        for a, c in spans:
            pieces.append((last, a))
            last = c
        pieces.append((last, len(self.text)))
        return self.rebuild(pieces)

    def prepend(self, s: str) -> NormalizedText:
        """HF's ``prepend``: ``s`` before the text, aligned (with the first character) to the first
        character; nothing happens to an empty text.

        >>> NormalizedText.identity("ab", 0).prepend("▁").alignments()
        [(0, 1), (0, 1), (1, 2)]
        """
        if not self.text or not s:
            return self
        if self._runs is None:
            o, n = self.original_start, len(self.text)
            starts, runs = [0], [(o, o + 1, False)]
            if n > 1:
                starts.append(len(s) + 1)
                runs.append((o + 1, o + n, True))
            return NormalizedText(s + self.text, o, self.original_end, starts, runs)
        return self.rebuild([(s + self.text[0], 0), (1, len(self.text))])

    def append(self, s: str) -> NormalizedText:
        """HF's ``append``: ``s`` after the text, aligned to the last character (to the empty span
        at ``original_start`` for an empty text)."""
        if not s:
            return self
        if not self.text:
            return self.rebuild([(s, -1)])
        n = len(self.text)
        return self.rebuild([(0, n), (s, n - 1)])

    def strip(self, left: bool = True, right: bool = True) -> NormalizedText:
        """HF's ``lstrip``/``rstrip``/``strip``: leading/trailing whitespace removed (Rust's
        ``char::is_whitespace``); the original span stays.

        >>> t = NormalizedText.identity("  ab ", 0).strip()
        >>> t.text, t.alignments(), (t.original_start, t.original_end)
        ('ab', [(2, 3), (3, 4)], (0, 5))
        """
        from .unicode import WHITESPACE

        text = self.text
        n = len(text)
        a = 0
        if left:
            while a < n and text[a] in WHITESPACE:
                a += 1
        c = n
        if right:
            while c > a and text[c - 1] in WHITESPACE:
                c -= 1
        if a == 0 and c == n:
            return self
        return self.rebuild([(a, c)])

    # ----- splitting ------------------------------------------------------------------------------


    def replace_matches(self, matches: Matches, content: str) -> NormalizedText:
        """HF's ``NormalizedString::replace``: each match becomes ``content``, every character of
        which aligns to the match's last character (to the one before an empty match, or the
        empty span at the start)."""
        pieces: list[tuple[int, int] | tuple[str, int]] = []
        last = 0
        changed = False
        for s, e, is_match in matches:
            if not is_match or (s == e and not content):
                continue
            changed = True
            pieces.append((last, s))
            if content:
                pieces.append((content, e - 1))
            last = e
        if not changed:
            return self
        pieces.append((last, len(self.text)))
        return self.rebuild(pieces)


def merge_matches(matches: Matches, behavior: str) -> list[tuple[int, int]]:
    """The spans HF's ``split`` keeps for ``matches`` under ``behavior`` (empty spans included).

    >>> merge_matches([(0, 1, False), (1, 2, True), (2, 3, False)], "merged_with_next")
    [(0, 1), (1, 3)]
    """
    if behavior == "isolated":
        return [(s, e) for s, e, _ in matches]
    if behavior == "removed":
        return [(s, e) for s, e, m in matches if not m]
    out: list[list[int]] = []
    if behavior == "contiguous":
        previous = False
        for s, e, m in matches:
            if m == previous and out:
                out[-1][1] = e
            else:
                out.append([s, e])
            previous = m
        return [(s, e) for s, e in out]
    if behavior == "merged_with_previous":
        previous = False
        for s, e, m in matches:
            if m and not previous and out:
                out[-1][1] = e
            else:
                out.append([s, e])
            previous = m
        return [(s, e) for s, e in out]
    if behavior == "merged_with_next":
        previous = False
        for s, e, m in reversed(matches):
            if m and not previous and out:
                out[-1][0] = s
            else:
                out.append([s, e])
            previous = m
        out.reverse()
        return [(s, e) for s, e in out]
    raise ValueError(f"unknown split behavior {behavior!r}")


def matches_from_spans(spans: Iterable[tuple[int, int]], length: int) -> Matches:
    """HF's ``find_matches`` pieces from the match spans of a regex (empty matches included).

    >>> matches_from_spans([(1, 2)], 3)
    [(0, 1, False), (1, 2, True), (2, 3, False)]
    >>> matches_from_spans([], 0)
    [(0, 0, False)]
    """
    if length == 0:
        return [(0, 0, False)]
    out: Matches = []
    prev = 0
    for s, e in spans:
        if prev != s:
            out.append((prev, s, False))
        out.append((s, e, True))
        prev = e
    if prev != length:
        out.append((prev, length, False))
    return out


def invert(matches: Matches) -> Matches:
    """The same pieces with ``is_match`` flipped (HF's ``Invert`` pattern)."""
    return [(s, e, not m) for s, e, m in matches]
