"""Hugging Face's character classes and Unicode normalization, as its Rust crates compute them.

HF's normalizers and pre-tokenizers classify characters with crates of different Unicode
versions: NFC/NFD/NFKC/NFKD and ``StripAccents`` use Unicode 9.0 tables
(``unicode-normalization-alignments``), ``Lowercase`` and ``char::is_whitespace`` follow Rust's
std (Unicode 17), ``Punctuation`` and ``BertNormalizer`` an old ``unicode_categories``.
:mod:`.hf_tables` holds what the installed ``tokenizers`` answered for every code point; this
module turns the tables into character sets and regex classes, and emulates the normalization
crate (its alignment rules included) with Python's ``unicodedata`` (14.0) restricted to what the
9.0 tables know.

>>> lowercase_str("ΑΣ İ")
'ασ i̇'
>>> normalize_changes("NFC", "e\\u0301")
[('é', -1)]
"""

from __future__ import annotations

import bisect
import functools
import unicodedata
from collections.abc import Iterable, Sequence

import regex

from . import unicode_tables as hf_tables

# ----- tables ------------------------------------------------------------------------------------


def parse_ranges(table: str) -> list[tuple[int, int]]:
    """``(first, last)`` code point ranges of a table of :mod:`.hf_tables`.

    >>> parse_ranges("41-43 61 ")
    [(65, 67), (97, 97)]
    """
    out = []
    for item in table.split():
        first, _, last = item.partition("-")
        out.append((int(first, 16), int(last or first, 16)))
    return out


def char_class(ranges: Iterable[tuple[int, int]], negate: bool = False) -> str:
    r"""A regex character class for code point ranges.

    >>> char_class([(65, 67), (97, 97)])
    '[\\U00000041-\\U00000043\\U00000061]'
    """
    body = "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)
    return ("[^" if negate else "[") + body + "]" if body else ("[\\s\\S]" if negate else "(?!)")


@functools.cache
def code_points(name: str) -> frozenset[int]:
    """The code points of table ``name`` of :mod:`.hf_tables`."""
    out: set[int] = set()
    for a, b in parse_ranges(getattr(hf_tables, name)):
        out.update(range(a, b + 1))
    return frozenset(out)


@functools.cache
def chars(name: str) -> frozenset[str]:
    """The characters of table ``name`` (for small tables)."""
    return frozenset(map(chr, code_points(name)))


#: How many characters a :class:`RangeSet` remembers the range of (emptied when full).
MEMO_LIMIT = 1 << 16
_RUN_OF_ONES = regex.compile("1+")


class RangeSet:
    """A set of code points as sorted ranges, searched in a text through a regex class made of
    only the ranges the text touches (a class of hundreds of ranges is slow in the ``regex``
    module; the few a given text needs are not).

    >>> digits = RangeSet([(0x30, 0x39), (0x660, 0x669)])
    >>> digits.finder("a1٢b", "+").findall("a1٢b")
    ['1٢']
    >>> digits.finder("abc") is None
    True
    """

    __slots__ = ("ranges", "_starts", "_cache", "_memo")

    def __init__(self, ranges: Iterable[tuple[int, int]]) -> None:
        self.ranges = sorted(ranges)
        self._starts = [a for a, _ in self.ranges]
        self._cache: dict[tuple, regex.Pattern[str]] = {}
        #: each character met: the index of its range, -1 for none (bounded by MEMO_LIMIT)
        self._memo: dict[str, int] = {}

    def __contains__(self, c: str) -> bool:
        cp = ord(c)
        i = bisect.bisect_right(self._starts, cp) - 1
        return i >= 0 and cp <= self.ranges[i][1]

    def _indexes(self, chars: Iterable[str]) -> list[int]:
        """The index of each character's range (-1: in none), remembered per character: a batch
        of texts meets the same characters again and again."""
        memo = self._memo
        try:
            return list(map(memo.__getitem__, chars))
        except KeyError:
            pass
        out = []
        starts, ranges = self._starts, self.ranges
        for c in chars:
            i = memo.get(c)
            if i is None:
                cp = ord(c)
                i = bisect.bisect_right(starts, cp) - 1
                if i >= 0 and cp > ranges[i][1]:
                    i = -1
                if len(memo) >= MEMO_LIMIT:
                    memo.clear()
                memo[c] = i
            out.append(i)
        return out

    def present(self, text: str) -> tuple[tuple[int, int], ...]:
        """The ranges that hold a character of ``text``.

        >>> RangeSet([(0x30, 0x39), (0x660, 0x669)]).present("a1٢b9")
        ((48, 57), (1632, 1641))
        """
        hit = set(self._indexes(set(text)))
        hit.discard(-1)
        ranges = self.ranges
        return tuple(ranges[i] for i in sorted(hit))

    def __reduce__(self):
        return RangeSet, (self.ranges,)  # what it remembers is rebuilt

    def translation(self, text: str, inside: str | None, outside: str | None = None) -> dict[int, str | None]:
        """A ``str.translate`` table for ``text``: each of its characters in this set to ``inside``
        and, when ``outside`` is given, every other one to ``outside`` (``None`` deletes).

        >>> digits = RangeSet([(0x30, 0x39)])
        >>> "a1b22".translate(digits.translation("a1b22", None)), "a1b22".translate(digits.translation("a1b22", "d", "x"))
        ('ab', 'xdxdd')
        """
        chars = set(text)
        if outside is None:
            return {ord(c): inside for c, i in zip(chars, self._indexes(chars)) if i >= 0}
        return {ord(c): (inside if i >= 0 else outside) for c, i in zip(chars, self._indexes(chars))}

    def runs(self, text: str) -> list[tuple[int, int]]:
        """The spans of the runs of this set's characters in ``text`` (what ``class_for(text) +
        "+"`` finds, with no pattern compiled for the text).

        >>> RangeSet([(0x30, 0x39), (0x660, 0x669)]).runs("a1٢b9")
        [(1, 3), (4, 5)]
        """
        marks = text.translate(self.translation(text, "1", "0"))
        return [m.span() for m in _RUN_OF_ONES.finditer(marks)]

    def class_for(self, text: str, negate: bool = False) -> str | None:
        """A regex class that matches exactly this set's characters on ``text`` (``None``: the
        text holds none of them)."""
        present = self.present(text)
        if not present:
            return None
        return char_class(present, negate)

    def finder(self, text: str, suffix: str = "", template: str = "{}") -> regex.Pattern[str] | None:
        """``template`` with ``{}`` replaced by :meth:`class_for` ``+ suffix``, compiled (cached
        per set of ranges); ``None`` when ``text`` holds none of the characters."""
        present = self.present(text)
        if not present:
            return None
        key = (present, suffix, template)
        pattern = self._cache.get(key)
        if pattern is None:
            if len(self._cache) > 512:
                self._cache.clear()
            pattern = regex.compile(template.format(char_class(present) + suffix))
            self._cache[key] = pattern
        return pattern


def class_marks(text: str, sets: Sequence[tuple[RangeSet, str]], other: str) -> str:
    """``text`` with each character replaced by the mark of the first of ``sets`` holding it
    (``other`` when none does): one ``str.translate``, so a fixed pattern over the marks finds
    what a class per text would (no pattern compiled per text).

    >>> digits, spaces = RangeSet([(0x30, 0x39)]), RangeSet([(0x20, 0x20)])
    >>> class_marks("a1 b22", [(digits, "d"), (spaces, "s")], "o")
    'odsodd'
    """
    chars = list(set(text))
    marks = [other] * len(chars)
    for rs, mark in reversed(sets):
        for k, i in enumerate(rs._indexes(chars)):
            if i >= 0:
                marks[k] = mark
    return text.translate(dict(zip(map(ord, chars), marks)))


@functools.cache
def table(name: str) -> RangeSet:
    """Table ``name`` of :mod:`.hf_tables` as a :class:`RangeSet`."""
    return RangeSet(parse_ranges(getattr(hf_tables, name)))


#: Rust's ``char::is_whitespace`` (the White_Space property).
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)


# ----- lowercase ---------------------------------------------------------------------------------


@functools.cache
def _lower_special() -> tuple[regex.Pattern[str], dict[str, str]]:
    table = {chr(cp): low for cp, low in hf_tables.LOWER_DIFF.items()}
    table["\u03a3"] = "\u03c3"  # Rust lowercases per character: no final sigma
    table["\u0130"] = "i\u0307"
    cls = char_class(sorted((ord(c), ord(c)) for c in table))
    return regex.compile(cls), table


def lowercase_str(text: str) -> str:
    """Rust's ``char::to_lowercase`` on every character (HF's ``Lowercase``)."""
    pattern, table = _lower_special()
    if text.isascii():
        return text.lower()
    if pattern.search(text) is None:
        return text.lower()
    return _lower_split(text, pattern, table)


def lower_special_points() -> list[int]:
    """The code points whose Rust lowercase is not Python's ``str.lower`` of them (what
    :func:`lowercase_str` replaces one by one; ``text.lower()`` is exact on a text with none).

    >>> 0x3A3 in lower_special_points(), 0x130 in lower_special_points(), 0x41 in lower_special_points()
    (True, True, False)
    """
    return sorted(map(ord, _lower_special()[1]))


def _lower_split(text: str, pattern: regex.Pattern[str], table: dict[str, str]) -> str:
    parts = []
    last = 0
    for m in pattern.finditer(text):
        s = m.start()
        parts.append(text[last:s].lower())
        parts.append(table[text[s]])
        last = s + 1
    parts.append(text[last:].lower())
    return "".join(parts)


def lowercase_parts(text: str) -> tuple[str, list[int]]:
    """Lowercase ``text`` one character per character: the lowercased text with each ``İ`` left
    in place, and the positions of those ``İ`` (the one character whose lowercase is two,
    ``i`` + U+0307, in Rust's tables as in Python's).

    >>> lowercase_parts("AİB")
    ('aİb', [1])
    """
    if "\u0130" not in text:
        return lowercase_str(text), []
    parts = text.split("\u0130")
    positions = []
    k = 0
    for part in parts[:-1]:
        k += len(part)
        positions.append(k)
        k += 1
    return "\u0130".join(lowercase_str(p) for p in parts), positions


# ----- normalization (Unicode 9.0 via Python's 14.0 data) -----------------------------------------

_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_L_COUNT, _V_COUNT, _T_COUNT = 19, 21, 28
_N_COUNT = _V_COUNT * _T_COUNT
_S_COUNT = _L_COUNT * _N_COUNT


@functools.cache
def _masks() -> tuple[frozenset[int], frozenset[int], frozenset[int]]:
    return code_points("NFD_INERT"), code_points("NFKD_INERT"), code_points("CCC_ZERO")


def ccc(c: str) -> int:
    """The canonical combining class HF's tables give ``c``.

    >>> ccc("\\u0301"), ccc("a")
    (230, 0)
    """
    k = unicodedata.combining(c)
    return 0 if k and ord(c) in _masks()[2] else k


@functools.cache
def decompose(c: str, compat: bool) -> str:
    """The full decomposition HF's tables give ``c`` (``c`` itself when none).

    >>> decompose("\\xe9", False) == "e\\u0301", decompose("ﬁ", True), decompose("ﬁ", False)
    (True, 'fi', 'ﬁ')
    """
    cp = ord(c)
    if _S_BASE <= cp < _S_BASE + _S_COUNT:
        s = cp - _S_BASE
        out = chr(_L_BASE + s // _N_COUNT) + chr(_V_BASE + (s % _N_COUNT) // _T_COUNT)
        if s % _T_COUNT:
            out += chr(_T_BASE + s % _T_COUNT)
        return out
    nfd_inert, nfkd_inert, _ = _masks()
    if cp in (nfkd_inert if compat else nfd_inert):
        return c
    if not unicodedata.decomposition(c):
        return c
    # the decomposition of a character is in canonical order, so NF(K)D of it alone is its full
    # decomposition; its parts are characters HF knows (Unicode's stability policy)
    return unicodedata.normalize("NFKD" if compat else "NFD", c)


@functools.cache
def _compositions() -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    blocked = code_points("NO_COMPOSE")
    for cp in code_points("C_MAYBE") | code_points("D_MAYBE"):
        c = chr(cp)
        d = unicodedata.decomposition(c)
        if not d or d.startswith("<"):
            continue
        parts = d.split()
        if len(parts) != 2 or cp in blocked or unicodedata.normalize("NFC", c) != c:
            continue
        out[(chr(int(parts[0], 16)), chr(int(parts[1], 16)))] = c
    return out


def compose(a: str, b: str) -> str | None:
    """The primary composite of ``a`` and ``b`` in HF's tables, or ``None``.

    >>> compose("e", "\\u0301"), compose("\\u1100", "\\u1161"), compose("a", "b")
    ('é', '가', None)
    """
    ca, cb = ord(a), ord(b)
    if _L_BASE <= ca < _L_BASE + _L_COUNT and _V_BASE <= cb < _V_BASE + _V_COUNT:
        return chr(_S_BASE + ((ca - _L_BASE) * _V_COUNT + (cb - _V_BASE)) * _T_COUNT)
    if (
        _S_BASE <= ca < _S_BASE + _S_COUNT
        and (ca - _S_BASE) % _T_COUNT == 0
        and _T_BASE < cb < _T_BASE + _T_COUNT
    ):
        return chr(ca + cb - _T_BASE)
    return _compositions().get((a, b))


def decompose_changes(text: str, compat: bool) -> list[tuple[str, int]]:
    """The ``(char, change)`` stream of the crate's NFD/NFKD iterator: each character's
    decomposition (first part ``0``, the others ``1``), then canonical reordering, each change
    travelling with its character.

    >>> decompose_changes("é", False)
    [('e', 0), ('́', 1)]
    """
    out: list[tuple[str, int]] = []
    pending: list[tuple[int, str, int]] = []
    for ch in text:
        first = True
        for d in decompose(ch, compat):
            k = ccc(d)
            if k == 0 and pending:
                pending.sort(key=lambda t: t[0])
                out.extend((c, chg) for _, c, chg in pending)
                pending.clear()
            pending.append((k, d, 0 if first else 1))
            first = False
    pending.sort(key=lambda t: t[0])
    out.extend((c, chg) for _, c, chg in pending)
    return out


def compose_changes(stream: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The crate's recomposition of a decomposed ``(char, change)`` stream (a composed
    character's change is ``k + change - 1``)."""
    out: list[tuple[str, int]] = []
    buffer: list[tuple[str, int]] = []
    composee: tuple[str, int] | None = None
    last_ccc: int | None = None
    for ch, change in stream:
        k_ch = ccc(ch)
        if composee is None:
            if k_ch != 0:
                out.append((ch, change))
                continue
            composee = (ch, change)
            continue
        if last_ccc is None:
            r = compose(composee[0], ch)
            if r is not None:
                composee = (r, composee[1] + change - 1)
                continue
            if k_ch == 0:
                out.append(composee)
                composee = (ch, change)
                continue
            buffer.append((ch, change))
            last_ccc = k_ch
            continue
        if last_ccc >= k_ch:
            if k_ch == 0:
                out.append(composee)
                out.extend(buffer)
                buffer.clear()
                composee = (ch, change)
                last_ccc = None
                continue
            buffer.append((ch, change))
            last_ccc = k_ch
            continue
        r = compose(composee[0], ch)
        if r is not None:
            composee = (r, composee[1] + change - 1)
            continue
        buffer.append((ch, change))
        last_ccc = k_ch
    # at the end the crate emits the composee, then the characters blocked behind it
    if composee is not None:
        out.append(composee)
    out.extend(buffer)
    return out


def normalize_changes(form: str, text: str) -> list[tuple[str, int]]:
    """The crate's ``(char, change)`` stream for ``form`` (``"NFD"``, ``"NFKD"``, ``"NFC"``,
    ``"NFKC"``) of ``text``.

    >>> normalize_changes("NFD", "a\\u0301\\u0323")
    [('a', 0), ('̣', 0), ('́', 0)]
    """
    stream = decompose_changes(text, form in ("NFKD", "NFKC"))
    if form in ("NFC", "NFKC"):
        return compose_changes(stream)
    return stream


#: The table of code points each form may touch (a superset; see :mod:`.hf_tables`).
_MAYBE = {"NFD": "D_MAYBE", "NFKD": "D_MAYBE", "NFC": "C_MAYBE", "NFKC": "KC_MAYBE"}


def unstable_runs(form: str, text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that ``form`` may change: each run of characters of the form's
    superset table together with the character before it (a starter the run may compose with).
    Outside these spans the text is already in the form.

    >>> unstable_runs("NFC", "cafe\\u0301 ok")
    [(3, 5)]
    """
    if text.isascii():
        return []
    return starter_spans(table(_MAYBE[form]).runs(text))


def starter_spans(runs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs of a form's "may change" characters widened to the character before each (the
    starter they may compose with) and merged where they then meet: :func:`unstable_runs` from
    the runs.

    >>> starter_spans([(0, 1), (3, 5), (6, 7)])
    [(0, 1), (2, 7)]
    """
    spans = [(max(s - 1, 0), e) for s, e in runs]
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def normalize_str(form: str, text: str) -> str:
    """``form`` of ``text`` as HF computes it (characters only).

    >>> normalize_str("NFKC", "ﬁ e\\u0301")
    'fi é'
    """
    return normalize_runs(form, text, unstable_runs(form, text))


def normalize_runs(form: str, text: str, runs: Sequence[tuple[int, int]]) -> str:
    """:func:`normalize_str` given the text's :func:`unstable_runs` (however they were found).

    >>> normalize_runs("NFKC", "ﬁ e\\u0301", [(0, 1), (2, 4)])
    'fi é'
    """
    if not runs:
        return text
    parts = []
    last = 0
    cache = _RUNS[form]
    for s, e in runs:
        parts.append(text[last:s])
        run = text[s:e]
        done = cache.get(run)
        if done is None:
            done = "".join(c for c, _ in normalize_changes(form, run))
            if len(cache) >= MEMO_LIMIT:
                cache.clear()
            cache[run] = done
        parts.append(done)
        last = e
    parts.append(text[last:])
    return "".join(parts)


#: each form's result for the runs of :func:`unstable_runs` met (a run is normalized on its own,
#: so its result is the same in every text), bounded by MEMO_LIMIT
_RUNS: dict[str, dict[str, str]] = {form: {} for form in _MAYBE}
