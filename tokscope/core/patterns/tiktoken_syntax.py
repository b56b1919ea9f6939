"""Pre-tokenization patterns written in tiktoken's syntax, compiled for the Python ``regex`` module.

A pattern written for tiktoken (Rust's ``fancy-regex``) differs from the same text compiled by
``regex`` in two ways that change chunks: ``$`` and the Unicode version of ``\\p{...}`` classes.
:func:`translate_pattern` rewrites both, :func:`ascii_pattern` specialises a pattern to ASCII text
for the faster stdlib engine, and :class:`ChunkPattern` picks the right compiled form per text.
Hugging Face's Oniguruma-based ``Split`` and ``ByteLevel`` stages classify characters by the same
Unicode version, so they use the same pinning.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Collection, Iterator

import regex

from . import guard as regex_guard

#: The Unicode version of the character classes (``\p{L}``, ``\p{N}``, ...) in tiktoken's regex
#: engine (Rust's ``regex`` crate, as built into the installed tiktoken). The ``regex`` module may
#: follow a newer Unicode; :func:`compile_pattern` pins the classes back to this version.
PATTERN_UNICODE_VERSION = "16.0.0"

#: The Unicode 16.0 general category of every code point whose category differs between any two of
#: Unicode 14.0, 15.0, 15.1, 16.0, 17.0 and 18.0 (``Cn`` stands for any category outside L, M, N).
#: Generated from the Unicode Character Database; ``start[-end]:Category``, hex code points.
_PINNED_CATEGORIES = (
    "295:Ll 558:Cn 58B-58C:Cn 5C8-5C9:Cn 88F:Cn 897:Mn B53-B54:Cn C5C:Cn CDC:Cn CF3:Mc ECE:Mn "
    "1ACF-1AF0:Cn 1C89:Lu 1C8A:Ll 208F:Cn 209D-209F:Cn A7CB-A7CC:Lu A7CD:Ll A7CE-A7CF:Cn A7D2:Cn "
    "A7D4:Cn A7DA:Lu A7DB:Ll A7DC:Lu A7DD:Cn A7E2:Cn A7F1:Cn AB6C-AB6D:Cn 105C0-105F3:Lo "
    "107BB-107BF:Cn 10940-10959:Cn 10D40-10D49:Nd 10D4A-10D4D:Lo 10D4E:Lm 10D4F:Lo 10D50-10D65:Lu "
    "10D69-10D6D:Mn 10D6F:Lm 10D70-10D85:Ll 10EC2-10EC4:Lo 10EC5-10EC7:Cn 10ECB-10ECF:Cn "
    "10ED9-10EEE:Cn 10EF0-10EFB:Cn 10EFC-10EFF:Mn 1123F-11240:Lo 11241:Mn 11380-11389:Lo 1138B:Lo "
    "1138E:Lo 11390-113B5:Lo 113B7:Lo 113B8-113BA:Mc 113BB-113C0:Mn 113C2:Mc 113C5:Mc "
    "113C7-113CA:Mc 113CC-113CD:Mc 113CE:Mn 113CF:Mc 113D0:Mn 113D1:Lo 113D2:Mn 113D3:Lo "
    "113E1-113E2:Mn 116D0-116E3:Nd 1171E:Mc 11B0A:Cn 11B60-11B67:Cn 11BC0-11BE0:Lo 11BF0-11BF9:Nd "
    "11DB0-11DDB:Cn 11DE0-11DE9:Cn 11DF0-11DF1:Cn 11F00-11F01:Mn 11F02:Lo 11F03:Mc 11F04-11F10:Lo "
    "11F12-11F33:Lo 11F34-11F35:Mc 11F36-11F3A:Mn 11F3E-11F3F:Mc 11F40:Mn 11F41:Mc 11F42:Mn "
    "11F50-11F59:Nd 11F5A:Mn 1246F:Cn 12475-1247F:Cn 12550-12686:Cn 1342F:Lo 13440:Mn "
    "13441-13446:Lo 13447-13455:Mn 13460-143FA:Lo 16100-1611D:Lo 1611E-16129:Mn 1612A-1612C:Mc "
    "1612D-1612F:Mn 16130-16139:Nd 16D40-16D42:Lm 16D43-16D6A:Lo 16D6B-16D6C:Lm 16D70-16D79:Nd "
    "16EA0-16EB8:Cn 16EBB-16ED3:Cn 16FF2-16FF6:Cn 187F8-187FF:Cn 18CD6-18CDA:Cn 18CFF:Lo "
    "18D09-18D20:Cn 18D80-18DF2:Cn 18E00-19191:Cn 191A0-191D2:Cn 1B123-1B128:Cn 1B132:Lo 1B155:Lo "
    "1B168:Cn 1CCF0-1CCF9:Nd 1D127-1D128:Cn 1D250-1D252:Cn 1D25B-1D25C:Cn 1D25F:Cn 1D280-1D281:Cn "
    "1D2C0-1D2D3:No 1D6A6:Cn 1DF1F-1DF24:Cn 1DF25-1DF2A:Ll 1DF2B-1DF81:Cn 1DF90-1DF96:Cn "
    "1DFCD-1DFFF:Cn 1E030-1E06D:Lm 1E08F:Mn 1E4D0-1E4EA:Lo 1E4EB:Lm 1E4EC-1E4EF:Mn 1E4F0-1E4F9:Nd "
    "1E5D0-1E5ED:Lo 1E5EE-1E5EF:Mn 1E5F0:Lo 1E5F1-1E5FA:Nd 1E6C0-1E6DE:Cn 1E6E0-1E6F5:Cn "
    "1E6FE-1E6FF:Cn 2B739:Lo 2B73A-2B73F:Cn 2B81E:Cn 2CEA2-2CEAD:Cn 2EBF0-2EE5D:Lo 31350-323AF:Lo "
    "323B0-33479:Cn 3D000-3FC3F:Cn "
)

#: The general categories each pinned property name covers.
_PROPERTY_CATEGORIES: dict[str, frozenset[str]] = {
    "L": frozenset({"Lu", "Ll", "Lt", "Lm", "Lo"}),
    "M": frozenset({"Mn", "Mc", "Me"}),
    "N": frozenset({"Nd", "Nl", "No"}),
    **{c: frozenset({c}) for c in ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No")},
}

_PROPERTY = regex.compile(r"\\([pP])\{(\^?)([A-Za-z_]+)\}")


@functools.cache
def moved_ranges() -> tuple[tuple[int, int], ...]:
    """The ``(first, last)`` ranges of code points whose class :func:`translate_pattern` pins (the
    only ones where the plain and the pinned translations can differ); cheap, unlike the tables.

    >>> moved_ranges()[:2]
    ((661, 661), (1368, 1368))
    """
    return tuple((first, last) for first, last, _ in _moved_items())


@functools.cache
def _moved_items() -> tuple[tuple[int, int, str], ...]:
    out = []
    for item in _PINNED_CATEGORIES.split():
        span, _, category = item.partition(":")
        first, _, last = span.partition("-")
        out.append((int(first, 16), int(last or first, 16), category))
    return tuple(out)


@functools.cache
def _pinned_table() -> dict[int, str]:
    """``code point -> Unicode 16.0 category`` for the code points whose category moved."""
    table: dict[int, str] = {}
    for first, last, category in _moved_items():
        table.update(dict.fromkeys(range(first, last + 1), category))
    return table


@functools.cache
def _moved_chars() -> str:
    """Every code point whose category moved, in order, as one string."""
    return "".join(["".join(map(chr, range(first, last + 1))) for first, last, _ in _moved_items()])


@functools.cache
def _by_category() -> dict[str, frozenset[int]]:
    groups: dict[str, set[int]] = {}
    for first, last, category in _moved_items():
        groups.setdefault(category, set()).update(range(first, last + 1))
    return {category: frozenset(cps) for category, cps in groups.items()}


@functools.cache
def _property_members(name: str) -> tuple[frozenset[int], frozenset[int]]:
    """Among the moved code points: those the installed ``regex`` puts in ``\\p{name}``, and those
    :data:`PATTERN_UNICODE_VERSION` does."""
    installed = frozenset(map(ord, regex.findall(r"\p{%s}" % name, _moved_chars())))
    groups = _by_category()
    pinned = frozenset().union(*(groups.get(c, ()) for c in _PROPERTY_CATEGORIES[name]))
    return installed, pinned


def _char_class(code_points: Collection[int]) -> str:
    r"""A character class for ``code_points``, written with ranges.

    >>> _char_class([0x41, 0x42, 0x43, 0x295])
    '[\\U00000041-\\U00000043\\U00000295]'
    """
    out = []
    run: list[int] = []
    for cp in sorted(code_points):
        if run and cp == run[1] + 1:
            run[1] = cp
            continue
        if run:
            out.append(_char_range(*run))
        run = [cp, cp]
    if run:
        out.append(_char_range(*run))
    return "[" + "".join(out) + "]"


def _char_range(first: int, last: int) -> str:
    if first == last:
        return f"\\U{first:08x}"
    return f"\\U{first:08x}-\\U{last:08x}"


def _class_end(pattern: str, start: int) -> int:
    """The index just past the character class that opens at ``pattern[start] == "["``."""
    j = start + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1  # a leading ']' is a literal
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j += 2
        elif c == "]":
            return j + 1
        else:
            j += 1
    raise regex.error("unterminated character set", pattern, start)


def _pin_class(body: str, suspects: set[int]) -> str:
    r"""Rewrite one character class (``[...]`` or a lone ``\p{X}``) so that its Unicode properties
    follow :data:`PATTERN_UNICODE_VERSION`: code points whose membership differs are excluded by a
    lookahead and the ones that belong are added back. Adds the differing code points to
    ``suspects``; returns ``body`` unchanged when the installed ``regex`` already agrees."""
    if body.startswith("["):
        negated = body.startswith("[^")
        inner = body[2 if negated else 1 : -1]
    else:
        negated, inner = False, body
    props: list[tuple[bool, str]] = []
    others: list[str] = []
    j = 0
    while j < len(inner):
        if inner[j] == "\\":
            found = _PROPERTY.match(inner, j)
            if found and found.group(3) in _PROPERTY_CATEGORIES:
                props.append(((found.group(1) == "P") != bool(found.group(2)), found.group(3)))
                j = found.end()
                continue
            others.append(inner[j : j + 2])
            j += 2
            continue
        others.append(inner[j])
        j += 1
    differ: set[int] = set()
    for _, name in props:
        installed, pinned = _property_members(name)
        differ |= installed ^ pinned
    if not differ:
        return body
    member: set[int] = set()
    for neg, name in props:
        pinned = _property_members(name)[1]
        member |= (differ - pinned) if neg else (differ & pinned)
    if others:
        rest = "".join(map(chr, sorted(differ - member)))
        other_class = regex.compile("[" + "".join(others) + "]")
        member.update(ord(m.group()) for m in other_class.finditer(rest))
    belong = differ - member if negated else member
    suspects |= differ
    add = "|" + _char_class(belong) if belong else ""
    return f"(?:(?!{_char_class(differ)}){body}{add})"


def translate_pattern(pattern: str, *, pin_unicode: bool = True) -> tuple[str, frozenset[int]]:
    r"""Translate a tiktoken pattern (Rust ``fancy-regex`` syntax) for the Python ``regex`` module.

    Two differences matter, and both are translated here:

    * ``$`` (outside a class) is the end of the text in Rust, but in Python also matches before a
      final newline, so it becomes ``\Z``.
    * ``\p{L}``, ``\p{N}``, ``\p{Lu}``, ... follow the Unicode version of each engine. With
      ``pin_unicode`` the classes that use them are rewritten to follow
      :data:`PATTERN_UNICODE_VERSION` (only where the installed ``regex`` disagrees; the rewrite
      costs a lookahead per character, so :class:`ChunkPattern` uses it only for texts that hold one
      of the code points in question).

    Returns the translated pattern and those code points (empty when nothing needed pinning).

    >>> translate_pattern(r"\s++$|\s+", pin_unicode=False)
    ('\\s++\\Z|\\s+', frozenset())
    """
    out: list[str] = []
    suspects: set[int] = set()
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            found = _PROPERTY.match(pattern, i)
            if found and pin_unicode and found.group(3) in _PROPERTY_CATEGORIES:
                out.append(_pin_class(found.group(), suspects))
                i = found.end()
                continue
            out.append(pattern[i : i + 2])
            i += 2
        elif c == "[":
            end = _class_end(pattern, i)
            body = pattern[i:end]
            out.append(_pin_class(body, suspects) if pin_unicode else body)
            i = end
        elif c == "$":
            out.append(r"\Z")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out), frozenset(suspects)


#: What each property matches among ASCII characters (empty: nothing).
_ASCII_PROPERTIES = {
    "L": "A-Za-z", "Lu": "A-Z", "Ll": "a-z", "Lt": "", "Lm": "", "Lo": "",
    "M": "", "Mn": "", "Mc": "", "Me": "", "N": "0-9", "Nd": "0-9", "Nl": "", "No": "",
}


def ascii_pattern(pattern: str) -> str | None:
    r"""The pattern specialised to ASCII text, for the stdlib ``re`` engine (about twice as fast as
    ``regex`` on it); ``None`` when the pattern uses something this cannot translate.

    On ASCII text ``\p{L}`` is ``[A-Za-z]``, ``\p{N}`` is ``[0-9]``, marks and ``Lt/Lm/Lo`` match
    nothing, and ``\s`` (compiled with ``re.ASCII``) is tiktoken's ``[\t\n\v\f\r ]``.

    >>> ascii_pattern(r"[^\r\n\p{L}\p{N}]?+\p{L}++|\s++$")
    '[^\\r\\nA-Za-z0-9]?+[A-Za-z]++|\\s++\\Z'
    >>> ascii_pattern(r"\p{Lo}|[\p{M}]")
    '(?!)|(?!)'
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            found = _PROPERTY.match(pattern, i)
            if found:
                chars = _ASCII_PROPERTIES.get(found.group(3))
                if chars is None or (found.group(1) == "P") != bool(found.group(2)):
                    return None
                out.append(f"[{chars}]" if chars else "(?!)")
                i = found.end()
                continue
            out.append(pattern[i : i + 2])
            i += 2
        elif c == "[":
            end = _class_end(pattern, i)
            negated = pattern.startswith("[^", i)
            inner = pattern[i + (2 if negated else 1) : end - 1]
            parts: list[str] = []
            j = 0
            while j < len(inner):
                found = _PROPERTY.match(inner, j) if inner[j] == "\\" else None
                if found:
                    chars = _ASCII_PROPERTIES.get(found.group(3))
                    if chars is None or (found.group(1) == "P") != bool(found.group(2)):
                        return None
                    parts.append(chars)
                    j = found.end()
                elif inner[j] == "\\":
                    parts.append(inner[j : j + 2])
                    j += 2
                else:
                    parts.append(inner[j])
                    j += 1
            body = "".join(parts)
            if body:
                out.append(("[^" if negated else "[") + body + "]")
            else:
                out.append(r"[\s\S]" if negated else "(?!)")
            i = end
        elif c == "$":
            out.append(r"\Z")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


#: Patterns for which a line break followed by a character that is neither whitespace nor ``/``
#: always ends a chunk, and the chunks before it do not depend on the text after it: cl100k_base's
#: and o200k_base's (o200k_harmony shares the latter). Proof sketch: no alternative other than the
#: whitespace ones and the punctuation tail (``[\r\n]*+`` / ``[\r\n/]*``) can hold a line break,
#: neither can continue into such a character, and a whitespace run that ends in a line break is
#: always taken by ``\s*[\r\n]`` / ``\s*[\r\n]+`` (or ``\s++$``) in full, whatever follows it. So
#: the text can be encoded segment by segment (and segments cached); the parity tests check it.
#: gpt2/r50k's pattern is not here: its ``\s+(?!\S)`` splits "  \n" differently before a letter.
LINE_SAFE_PATTERNS = frozenset({
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]),
})

#: GPT-2's pattern (r50k_base, p50k_base and p50k_edit share it)
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

# The patterns matched with no time budget: the OpenAI encodings' (tiktoken runs them) and the
# trainer's named ones (``none`` and ``words`` in :data:`tokscope.core.train.trainer.CORE_PATTERNS`;
# a test checks both lists). Every other pattern is a user's: see :mod:`.regex_guard`.
regex_guard.TRUSTED_PATTERNS.update(LINE_SAFE_PATTERNS)
regex_guard.TRUSTED_PATTERNS.update({GPT2_PATTERN, r"(?s).+", r"\S+|\s+"})

#: Where a line-safe pattern's text may be cut into segments (stdlib ``\s`` is a superset of
#: tiktoken's, so this never cuts where tiktoken's whitespace would continue).
_SEGMENT_BREAK = re.compile(r"\n(?=[^\s/])")

#: characters of text a scan looks ahead for code points whose class moved (see ChunkPattern.finditer)
_WINDOW = 4096
#: characters beyond its end that a match may have looked at (the patterns look one ahead; a margin)
_LOOK = 64


class ChunkPattern:
    r"""A compiled pre-tokenization pattern that splits text exactly as tiktoken's engine does.

    It offers the ``regex.Pattern`` methods the project uses (``finditer``, ``findall``, ``match``,
    ``search``, ``fullmatch``, ``pattern``). Text holding none of the code points whose Unicode
    class moved since :data:`PATTERN_UNICODE_VERSION` (nearly all text; any ASCII text) is matched
    by the plain translation; other text by the pinned one (see :func:`translate_pattern`).

    >>> pat = compile_pattern(r"\p{L}+|\p{N}+|\s+|.")
    >>> pat.findall("ab 12")
    ['ab', ' ', '12']
    """

    __slots__ = ("pattern", "plain", "ascii", "line_safe", "trusted", "_pinned", "_suspect", "_lock")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        #: False for a user's pattern: it is checked before compiling and matched with a time
        #: budget (:mod:`.regex_guard`), never by the stdlib engine, which has no timeout
        self.trusted = pattern in regex_guard.TRUSTED_PATTERNS
        if not self.trusted:
            regex_guard.check_pattern(pattern)
        try:
            self.plain = regex.compile(translate_pattern(pattern, pin_unicode=False)[0])
        except (regex.error, RecursionError, MemoryError, OverflowError, ValueError) as exc:
            raise regex_guard.PatternError(f"invalid pattern {regex_guard.safe_text(pattern)[:60]!r}: "
                                           f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        #: the stdlib-``re`` twin used on ASCII text (``None`` when the pattern cannot be translated)
        self.ascii: re.Pattern[str] | None = None
        translated = ascii_pattern(pattern) if self.trusted else None
        if translated is not None:
            try:
                self.ascii = re.compile(translated, re.ASCII)
            except re.error:
                self.ascii = None
        #: True for patterns whose text may be cut at :data:`_SEGMENT_BREAK` (see LINE_SAFE_PATTERNS)
        self.line_safe = pattern in LINE_SAFE_PATTERNS
        # the pinned translation is built on first use with non-ASCII text (building it is slow)
        self._pinned: regex.Pattern[str] | None = None
        self._suspect: re.Pattern[str] | None = None
        self._lock: threading.Lock | None = threading.Lock()

    def _build_pinned(self) -> None:
        lock = self._lock
        if lock is None:
            return
        with lock:
            if self._lock is None:
                return
            pinned, suspects = translate_pattern(self.pattern)
            if suspects:
                # the stdlib engine scans a plain class about twice as fast as ``regex``
                self._suspect = re.compile(_char_class(suspects))
                self._pinned = regex.compile(pinned)
            self._lock = None

    @property
    def pinned(self) -> regex.Pattern[str]:
        """The translation that follows :data:`PATTERN_UNICODE_VERSION` (``plain`` if no class moved)."""
        self._build_pinned()
        return self._pinned or self.plain

    def __repr__(self) -> str:
        return f"ChunkPattern({self.pattern!r})"

    def for_text(self, text: str, pos: int | None = None, endpos: int | None = None) -> regex.Pattern[str]:
        """The compiled pattern to use on ``text[pos:endpos]``."""
        if text.isascii():
            return self.plain
        if self._lock is not None:
            self._build_pinned()
        suspect = self._suspect
        if suspect is None or suspect.search(text, pos or 0, len(text) if endpos is None else endpos) is None:
            return self.plain
        return self._pinned  # type: ignore[return-value]

    def __reduce__(self):  # compiled patterns and a lock do not pickle; compile again
        return compile_pattern, (self.pattern,)

    def _timeout(self, n_chars: int) -> float | None:
        """The ``timeout=`` for matching ``n_chars`` characters (none for a trusted pattern)."""
        return None if self.trusted else regex_guard.budget(n_chars)

    def _guarded(self, matches: Iterator[regex.Match[str]]) -> Iterator[regex.Match[str]]:
        try:
            yield from matches
        except TimeoutError:
            raise regex_guard.timed_out(self.pattern) from None

    def finditer(self, text: str, pos: int | None = None, endpos: int | None = None) -> Iterator[regex.Match[str]]:
        """The matches in ``text[pos:endpos]``, exactly as the pinned translation finds them.

        Only the text near the scan is looked at: matches come from the plain translation except
        within :data:`_LOOK` characters of a code point whose class moved, where the pinned one
        takes over (the patterns have no look-behind and match every character, so a match found
        by either engine from a match boundary is the same unless it looked at such a character).
        A user's pattern that runs out of its time budget raises
        :class:`~tokscope.core.patterns.guard.PatternTimeoutError`.
        """
        pos = 0 if pos is None else pos
        end = len(text) if endpos is None else endpos
        matches = self._finditer(text, pos, end, self._timeout(end - pos))
        return matches if self.trusted else self._guarded(matches)

    def _finditer(self, text: str, pos: int, end: int, timeout: float | None) -> Iterator[regex.Match[str]]:
        if text.isascii():
            return self.plain.finditer(text, pos, end, timeout=timeout)
        if self._lock is not None:
            self._build_pinned()
        if self._suspect is None:
            return self.plain.finditer(text, pos, end, timeout=timeout)
        if "(?<" in self.pattern:  # a look-behind may see a moved code point before the scan
            return self.for_text(text).finditer(text, pos, end, timeout=timeout)
        return self._mixed(text, pos, end, timeout)

    def _mixed(self, text: str, pos: int, end: int, timeout: float | None = None) -> Iterator[regex.Match[str]]:
        plain, pinned, suspect = self.plain, self._pinned, self._suspect
        assert pinned is not None and suspect is not None
        window = _WINDOW
        while pos < end:
            hi = min(end, pos + window)
            found = suspect.search(text, pos, hi)
            if found is None or found.start() - pos > _LOOK:
                # plain matches are exact while they end _LOOK short of the moved code point (or
                # of the window's end, where the look-ahead continues)
                bound = found.start() if found else (None if hi == end else hi)
                start = pos
                for m in plain.finditer(text, pos, end, timeout=timeout):
                    if bound is not None and m.end() + _LOOK > bound:
                        break
                    yield m
                    pos = m.end()
                else:
                    return
                if found is None:
                    window = _WINDOW if pos > start else window * 4  # a match longer than the window
                    continue
            # near a moved code point: the pinned translation until well past it
            past = found.start() + _LOOK
            for m in pinned.finditer(text, pos, end, timeout=timeout):
                yield m
                pos = m.end()
                if m.start() > past:
                    break
            else:
                return
            window = _WINDOW

    def _call(self, method: str, text: str, pos: int | None, endpos: int | None):
        compiled = self.for_text(text, pos, endpos)
        if self.trusted:
            return getattr(compiled, method)(text, pos, endpos)
        n = (len(text) if endpos is None else endpos) - (pos or 0)
        try:
            return getattr(compiled, method)(text, pos, endpos, timeout=regex_guard.budget(n))
        except TimeoutError:
            raise regex_guard.timed_out(self.pattern) from None

    def findall(self, text: str, pos: int | None = None, endpos: int | None = None) -> list[str]:
        return self._call("findall", text, pos, endpos)

    def split(self, text: str) -> list[str]:
        """All the chunks of ``text`` (the fastest way: the ASCII engine on ASCII text).

        >>> compile_pattern(r"\\p{L}+|\\s+|.").split("ab cé")
        ['ab', ' ', 'cé']
        """
        if self.ascii is not None and text.isascii():
            return self.ascii.findall(text)
        return self._call("findall", text, None, None)

    def matcher(self, text: str):
        """``match(pos, endpos)`` for many anchored matches in one ``text``: the engine is chosen
        once for the whole text, so matching every chunk of a text costs time linear in its length
        (:meth:`match` looks at the text from ``pos`` to its end on each call to choose)."""
        compiled = self.for_text(text)
        if self.trusted:
            return lambda pos, endpos: compiled.match(text, pos, endpos)
        timeout = regex_guard.budget(len(text))
        pattern = self.pattern

        def match(pos: int, endpos: int) -> regex.Match[str] | None:
            try:
                return compiled.match(text, pos, endpos, timeout=timeout)
            except TimeoutError:
                raise regex_guard.timed_out(pattern) from None

        return match

    def segments(self, text: str) -> list[str]:
        """``text`` cut where chunks are known not to cross (whole text when not line-safe).

        >>> compile_pattern(next(iter(LINE_SAFE_PATTERNS))).segments("a\\n b\\nc\\n")
        ['a\\n b\\n', 'c\\n']
        """
        if not self.line_safe:
            return [text]
        cuts = [m.end() for m in _SEGMENT_BREAK.finditer(text)]
        if not cuts:
            return [text]
        return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]

    def next_cut(self, text: str, pos: int = 0) -> int | None:
        """The first place at or after ``pos`` where :meth:`segments` may cut ``text`` (the two
        sides, chunked apart, give the chunks of the whole); None when there is none or the
        pattern is not line-safe.

        >>> pattern = compile_pattern(next(iter(LINE_SAFE_PATTERNS)))
        >>> pattern.next_cut("a\\n b\\nc\\n"), pattern.next_cut("a\\n b\\nc\\n", 6)
        (5, None)
        """
        if not self.line_safe:
            return None
        found = _SEGMENT_BREAK.search(text, max(pos - 1, 0))
        return found.end() if found else None

    def prev_cut(self, text: str, pos: int) -> int | None:
        """The last place at or before ``pos`` where :meth:`segments` may cut ``text``; None when
        there is none (the start of the text is not a cut) or the pattern is not line-safe.

        >>> pattern = compile_pattern(next(iter(LINE_SAFE_PATTERNS)))
        >>> pattern.prev_cut("a\\n b\\nc\\n", 8), pattern.prev_cut("a\\n b\\nc\\n", 4)
        (5, None)
        """
        if not self.line_safe:
            return None
        at = min(pos, len(text))
        while True:
            at = text.rfind("\n", 0, at)
            if at < 0:
                return None
            if _SEGMENT_BREAK.match(text, at):
                return at + 1

    def match(self, text: str, pos: int | None = None, endpos: int | None = None) -> regex.Match[str] | None:
        return self._call("match", text, pos, endpos)

    def fullmatch(self, text: str, pos: int | None = None, endpos: int | None = None) -> regex.Match[str] | None:
        return self._call("fullmatch", text, pos, endpos)

    def search(self, text: str, pos: int | None = None, endpos: int | None = None) -> regex.Match[str] | None:
        return self._call("search", text, pos, endpos)


@functools.lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> ChunkPattern:
    """Compile a pre-tokenization pattern (tiktoken's syntax: possessive quantifiers, Unicode
    properties) so that it splits text exactly as tiktoken does (see :func:`translate_pattern`)."""
    return ChunkPattern(pattern)
