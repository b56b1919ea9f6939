r"""Oniguruma (Ruby syntax) patterns, as HF's ``Split``, ``Replace`` and ``ByteLevel`` compile
them, translated for the Python ``regex`` module so that they match exactly as Oniguruma does.

What differs, and how it is translated (each measured against ``tokenizers``):

* ``^`` / ``$`` are line anchors: ``^`` at the start and after every ``\n`` except a final one,
  ``$`` before every ``\n`` and at the end. ``\Z`` is the end or before a final ``\n``; ``\z``
  the end.
* ``(?m)`` is Ruby's *dot matches newline* (Python's ``s``); ``(?s)`` does not exist. An option
  switched on inside a group (``a(?i)b|c``) covers the rest of the group, alternatives included.
* ``{n,m}+`` is not possessive: it is ``{n,m}`` repeated (``(?:X{n,m})+``); ``?+ *+ ++`` are.
* ``\h`` is a hex digit, ``\x{...}`` a code point, ``\e`` ESC, ``\R`` a line break.
* ``(?i)`` folds case fully in Oniguruma (``(?i:ß)`` matches ``ss`` and ``(?i:ss)`` matches
  ``ß``); it is translated to the ``regex`` module's simple case folding, which matches every
  one-character fold (``ſ``/``s``, ``K``/``k``, ``ẞ``/``ß``) but no multi-character one: a known
  deviation (the ``regex`` module's own full folding is no better: ``(?fi:ß)`` does not even
  match ``ß``). The contraction groups of GPT-2-style patterns (``(?i:'s|'t|...)``) are not
  affected: no multi-character fold gives their letters.
* ``\p{...}``, ``\s``, ``\w``, ``\d`` follow Oniguruma's Unicode (16.0): classes are pinned with
  the measured tables of :mod:`.hf_tables` (the same technique as :mod:`.unicode_pattern`), and,
  as :class:`~.unicode_pattern.ChunkPattern` does, the pinned form is used only on text that holds
  one of the code points in question.

Constructs with no exact translation (``\K``, ``\X``, nested classes, ``&&``, POSIX brackets,
properties that were not measured, absent groups...) raise :class:`UnsupportedComponentError`.
Matching follows the ``onig`` crate's ``find_iter``: an empty match right where the previous
match ended is skipped. Every scan runs with a timeout.

>>> p = compile_onig(r"\s+|\w+")
>>> p.spans("ab  c")
[(0, 2), (2, 4), (4, 5)]
>>> compile_onig("^a").spans("a\na\n")
[(0, 1), (2, 3)]
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable

import regex

from . import guard
from ..text import unicode_tables as hf_tables
from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..text.unicode import RangeSet, char_class, parse_ranges
from ..text.normalized import Matches, matches_from_spans

#: Longest pattern accepted (a tokenizer file's patterns are a few hundred characters).
MAX_PATTERN_LENGTH = 20_000

#: Seconds a scan may take: a base plus an allowance per character of the text.
TIMEOUT_BASE = 10.0
TIMEOUT_PER_CHAR = 1e-5


class _Unsupported(Exception):
    pass


class OnigTimeoutError(TokenizerFileError, guard.PatternTimeoutError):
    """A tokenizer file's pattern that ran out of its time budget."""


def _timed_out(pattern: str, timeout: float, n: int) -> OnigTimeoutError:
    return OnigTimeoutError(f"regex {guard.safe_text(pattern)[:60]!r} took more than {timeout:.1f} s on a text of {n} "
                            f"characters (nested repeats such as (a|a)+ backtrack without end)")


# ----- properties ------------------------------------------------------------------------------

_GC_LONG = {
    "letter": "L", "uppercaseletter": "Lu", "lowercaseletter": "Ll", "titlecaseletter": "Lt",
    "modifierletter": "Lm", "otherletter": "Lo", "mark": "M", "combiningmark": "M",
    "nonspacingmark": "Mn", "spacingmark": "Mc", "enclosingmark": "Me", "number": "N",
    "decimalnumber": "Nd", "letternumber": "Nl", "othernumber": "No", "punctuation": "P",
    "connectorpunctuation": "Pc", "dashpunctuation": "Pd", "openpunctuation": "Ps",
    "closepunctuation": "Pe", "initialpunctuation": "Pi", "finalpunctuation": "Pf",
    "otherpunctuation": "Po", "symbol": "S", "mathsymbol": "Sm", "currencysymbol": "Sc",
    "modifiersymbol": "Sk", "othersymbol": "So", "separator": "Z", "spaceseparator": "Zs",
    "lineseparator": "Zl", "paragraphseparator": "Zp", "other": "C", "control": "Cc",
    "format": "Cf", "privateuse": "Co", "unassigned": "Cn", "alpha": "Alpha", "alphabetic": "Alpha",
}


@functools.cache
def _property_names() -> dict[str, str]:
    out = {}
    for name in hf_tables.ONIG_RESIDUE:
        if name not in ("SPACE", "WORD", "WORD_IN_CLASS", "DIGIT"):
            out[_loose(name)] = name
    for long, short in _GC_LONG.items():
        out[long] = short
    return out


def _loose(name: str) -> str:
    return name.replace("_", "").replace(" ", "").replace("-", "").lower()


def _regex_class_of(name: str) -> str:
    """The ``regex`` module's class for measured property ``name``."""
    return {"SPACE": r"\s", "WORD": r"\w", "WORD_IN_CLASS": r"\w", "DIGIT": r"\d"}.get(name, r"\p{%s}" % name)


@functools.cache
def _new() -> frozenset[int]:
    out: set[int] = set()
    for a, b in parse_ranges(hf_tables.ONIG_NEW):
        out.update(range(a, b + 1))
    return frozenset(out)


@functools.cache
def _residue(name: str) -> frozenset[int]:
    out: set[int] = set()
    for a, b in parse_ranges(hf_tables.ONIG_RESIDUE[name]):
        out.update(range(a, b + 1))
    return frozenset(out)


@functools.cache
def _compiled(cls: str) -> regex.Pattern[str]:
    return regex.compile(cls)


def _onig_has(name: str, negated: bool, cp: int) -> bool:
    """Whether Oniguruma's property ``name`` (negated: its complement) holds ``cp``."""
    if cp in _new():
        inside = name in ("C", "Cn")
    else:
        inside = _compiled(_regex_class_of(name)).match(chr(cp)) is not None
        if cp in _residue(name):
            inside = not inside
    return inside != negated


# ----- translation --------------------------------------------------------------------------------

#: A class item: ``("prop", name, negated)`` or ``("text", regex_source)``.
_Item = tuple


class _Class:
    """A character class being translated: its items and whether it is negated."""

    __slots__ = ("items", "negated")

    def __init__(self, negated: bool) -> None:
        self.items: list[_Item] = []
        self.negated = negated

    def source(self) -> str:
        parts = []
        for item in self.items:
            if item[0] == "prop":
                name, neg = item[1], item[2]
                if name in ("SPACE", "WORD", "WORD_IN_CLASS", "DIGIT"):
                    parts.append({"SPACE": r"\S", "WORD": r"\W", "WORD_IN_CLASS": r"\W", "DIGIT": r"\D"}[name] if neg else _regex_class_of(name))
                else:
                    parts.append((r"\P{%s}" if neg else r"\p{%s}") % name)
            else:
                parts.append(item[1])
        body = "".join(parts)
        if not body:
            # Oniguruma rejects an empty class; callers never build one
            raise _Unsupported("empty character class")
        return ("[^" if self.negated else "[") + body + "]"

    def differ(self) -> set[int]:
        out: set[int] = set()
        for item in self.items:
            if item[0] == "prop":
                out |= _new() | _residue(item[1])
        return out

    def onig_matches(self, cp: int) -> bool:
        hit = False
        c = chr(cp)
        for item in self.items:
            if item[0] == "prop":
                hit = _onig_has(item[1], item[2], cp)
            else:
                hit = _compiled("[" + item[1] + "]").match(c) is not None
            if hit:
                break
        return hit != self.negated

    def pinned(self, suspects: set[int]) -> str:
        plain = self.source()
        differ = self.differ()
        if not differ:
            return plain
        belong = {cp for cp in differ if self.onig_matches(cp)}
        suspects |= differ
        add = "|" + _ranges_class(belong) if belong else ""
        return f"(?:(?!{_ranges_class(differ)}){plain}{add})"


def _range_set(cps: Iterable[int]) -> RangeSet:
    ranges: list[tuple[int, int]] = []
    for cp in sorted(cps):
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return RangeSet(ranges)


def _ranges_class(cps: set[int]) -> str:
    ranges: list[tuple[int, int]] = []
    for cp in sorted(cps):
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return char_class(ranges)


_HEX = re.compile(r"[0-9A-Fa-f]+")
_INTERVAL = re.compile(r"\{(\d*)(,(\d*))?\}")
_SIMPLE_ESCAPES = {"t": r"\t", "n": r"\n", "r": r"\r", "f": r"\f", "v": r"\x0b", "a": r"\x07", "e": r"\x1b"}
_CLASS_SHORTHAND = {"s": ("SPACE", False), "S": ("SPACE", True), "w": ("WORD", False), "W": ("WORD", True),
                    "d": ("DIGIT", False), "D": ("DIGIT", True)}
_LINE_BREAK = "(?>\\r\\n|[\\n\\x0b\\x0c\\r\\x85\\u2028\\u2029])"


class _Translator:
    def __init__(self, pattern: str, pin: bool) -> None:
        self.p = pattern
        self.i = 0
        self.pin = pin
        self.suspects: set[int] = set()
        self.out: list[str] = []

    # -- helpers
    def error(self, what: str) -> TokenizerFileError:
        return TokenizerFileError(f"invalid regex {self.p!r}: {what}")

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def emit_class(self, cls: _Class) -> str:
        return cls.pinned(self.suspects) if self.pin else cls.source()

    def read_property(self, negated: bool) -> _Item:
        # at "{" after \p / \P
        if self.peek() != "{":
            raise _Unsupported("\\p without braces")
        end = self.p.find("}", self.i)
        if end < 0:
            raise self.error("unterminated \\p{")
        body = self.p[self.i + 1 : end]
        self.i = end + 1
        if body.startswith("^"):
            negated = not negated
            body = body[1:]
        name = _property_names().get(_loose(body))
        if name is None:
            raise _Unsupported(f"property \\p{{{body}}}")
        return ("prop", name, negated)

    def read_code_point(self) -> int | None:
        # after "\x"
        if self.peek() == "{":
            end = self.p.find("}", self.i)
            if end < 0:
                raise self.error("unterminated \\x{")
            digits = self.p[self.i + 1 : end].strip()
            self.i = end + 1
            if not _HEX.fullmatch(digits):
                raise self.error("bad \\x{...}")
            cp = int(digits, 16)
        else:
            m = re.compile(r"[0-9A-Fa-f]{1,2}").match(self.p, self.i)
            if not m:
                raise self.error("bad \\x escape")
            self.i = m.end()
            cp = int(m.group(), 16)
        if cp > 0x10FFFF:
            return None  # Oniguruma accepts it; it matches nothing
        if 0xD800 <= cp < 0xE000:
            raise self.error("surrogate code point")
        return cp

    def read_escape(self, in_class: bool) -> _Item:
        """The escape at ``self.i`` (just after the backslash) as a class item, or an
        ``("atom", source)`` for escapes that are not characters."""
        c = self.peek()
        if not c:
            raise self.error("trailing backslash")
        self.i += 1
        if c in "pP":
            return self.read_property(c == "P")
        if c in _CLASS_SHORTHAND:
            name, neg = _CLASS_SHORTHAND[c]
            if in_class and name == "WORD":
                name = "WORD_IN_CLASS"  # Oniguruma's \w in a class leaves out ² ³ ¹ ¼ ½ ¾
            return ("prop", name, neg)
        if c == "h":
            return ("text", "0-9a-fA-F")
        if c == "H":
            return ("negtext", "0-9a-fA-F")
        if c == "x":
            cp = self.read_code_point()
            if cp is None:
                if in_class:
                    raise _Unsupported("a code point beyond U+10FFFF in a class")
                return ("atom", "(?!)")
            return ("text", f"\\U{cp:08x}")
        if c == "u":
            m = re.compile(r"[0-9A-Fa-f]{4}").match(self.p, self.i)
            if not m:
                raise self.error("bad \\u escape")
            self.i = m.end()
            cp = int(m.group(), 16)
            if 0xD800 <= cp < 0xE000:
                raise self.error("surrogate code point")
            return ("text", f"\\U{cp:08x}")
        if c in _SIMPLE_ESCAPES:
            return ("text", _SIMPLE_ESCAPES[c])
        if in_class:
            if c == "b":
                return ("text", r"\x08")
            if c.isalnum():
                raise _Unsupported(f"escape \\{c} in a class")
            return ("text", "\\" + c)
        if c == "A":
            return ("atom", r"\A")
        if c == "z":
            return ("atom", r"\Z")
        if c == "Z":
            return ("atom", r"(?=\n?\Z)")
        if c == "G":
            return ("atom", r"\G")
        if c == "R":
            return ("atom", _LINE_BREAK)
        if c in "bB":
            word = _Class(False)
            word.items.append(("prop", "WORD", False))
            w = self.emit_class(word)
            if c == "b":
                return ("atom", f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
            return ("atom", f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
        if c in "123456789":
            return ("atom", "\\" + c)
        if c == "k":
            m = re.compile(r"<([A-Za-z_]\w*)>").match(self.p, self.i)
            if not m:
                raise _Unsupported("\\k without a <name>")
            self.i = m.end()
            return ("atom", f"(?P={m.group(1)})")
        if c.isalnum():
            raise _Unsupported(f"escape \\{c}")
        return ("text", "\\" + c)

    # -- the main loop
    def translate(self) -> str:
        # stack of groups: each entry is [index in out of the group's opening, count of extra
        # "(?flags:" groups opened inside it by an isolated option]
        stack: list[list[int]] = []
        extra = 0  # isolated option groups opened at the top level
        atom = -1  # index in out where the last atom starts
        p = self.p
        out = self.out
        while self.i < len(p):
            c = p[self.i]
            if c == "\\":
                self.i += 1
                item = self.read_escape(False)
                atom = len(out)
                if item[0] == "atom":
                    out.append(item[1])
                elif item[0] == "prop":
                    cls = _Class(False)
                    cls.items.append(item)
                    out.append(self.emit_class(cls))
                elif item[0] == "negtext":
                    out.append("[^" + item[1] + "]")
                else:
                    src = item[1]
                    out.append(f"[{src}]" if src == "0-9a-fA-F" else src)
                continue
            elif c == "[":
                atom = len(out)
                out.append(self.read_class())
                continue
            elif c == "(":
                atom = -1
                if p.startswith("(?#", self.i):
                    end = p.find(")", self.i)
                    if end < 0:
                        raise self.error("unterminated comment")
                    self.i = end + 1
                    continue
                m = re.compile(r"\(\?([imx]*)(?:-([imx]*))?(:|\))").match(p, self.i)
                if m and (m.group(1) or m.group(2) is not None or m.group(3) == ":"):
                    flags = self.flags(m.group(1), m.group(2) or "")
                    if m.group(3) == ")":
                        # isolated option: covers the rest of the enclosing group
                        self.i = m.end()
                        out.append(f"(?{flags}:" if flags else "(?:")
                        if stack:
                            stack[-1][1] += 1
                        else:
                            extra += 1
                        continue
                    stack.append([len(out), 0])
                    out.append(f"(?{flags}:" if flags else "(?:")
                    self.i = m.end()
                    continue
                for opener in ("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>"):
                    if p.startswith(opener, self.i):
                        stack.append([len(out), 0])
                        out.append(opener)
                        self.i += len(opener)
                        break
                else:
                    m = re.compile(r"\(\?(?:<([A-Za-z_]\w*)>|'([A-Za-z_]\w*)')").match(p, self.i)
                    if m:
                        stack.append([len(out), 0])
                        out.append(f"(?P<{m.group(1) or m.group(2)}>")
                        self.i = m.end()
                    elif p.startswith("(?", self.i):
                        raise _Unsupported(f"group {p[self.i:self.i + 4]!r}")
                    else:
                        stack.append([len(out), 0])
                        out.append("(")
                        self.i += 1
                continue
            elif c == ")":
                if not stack:
                    raise self.error("unmatched )")
                start, opened = stack.pop()
                out.append(")" * (opened + 1))
                atom = start
                self.i += 1
                continue
            elif c == "|":
                atom = -1
                out.append("|")
            elif c == "^":
                atom = -1
                out.append(r"(?:\A|(?<=\n)(?!\Z))")
            elif c == "$":
                atom = -1
                out.append(r"(?=\n|\Z)")
            elif c in "*+?":
                if atom < 0:
                    raise self.error("target of repeat operator is not specified")
                out.append(c)
                self.i += 1
                nxt = self.peek()
                if nxt in ("?", "+"):
                    out.append(nxt)
                    self.i += 1
                if self.peek() in ("*", "+", "?", "{"):
                    raise _Unsupported("a repeat of a repeat")
                continue
            elif c == "{":
                m = _INTERVAL.match(p, self.i)
                if m and (m.group(1) or m.group(3)) and atom >= 0:
                    lo, hi = m.group(1), m.group(3)
                    if m.group(2) is None:
                        q = "{%s}" % lo
                    else:
                        q = "{%s,%s}" % (lo or "0", hi or "")
                    self.i = m.end()
                    nxt = self.peek()
                    if nxt == "+":
                        # Ruby: an interval followed by + is a repeat of the interval
                        body = "".join(out[atom:])
                        del out[atom:]
                        out.append(f"(?:{body}{q})+")
                        self.i += 1
                        if self.peek() in ("?", "+"):
                            out.append(self.peek())
                            self.i += 1
                    elif nxt == "?":
                        out.append(q + "?")
                        self.i += 1
                    else:
                        out.append(q)
                    if self.peek() in ("*", "+", "?", "{"):
                        raise _Unsupported("a repeat of a repeat")
                    continue
                atom = len(out)
                out.append(r"\{")
            elif c == ".":
                atom = len(out)
                out.append(".")
            else:
                atom = len(out)
                out.append(regex.escape(c) if c in "}]" else c)
            self.i += 1
        if stack:
            raise self.error("end pattern with unmatched parenthesis")
        out.append(")" * extra)
        return "".join(out)

    def flags(self, on: str, off: str) -> str:
        def conv(f: str) -> str:
            if "x" in f:
                raise _Unsupported("extended mode (?x)")
            return "".join({"i": "i", "m": "s"}[ch] for ch in f)

        result = conv(on)
        if off:
            result += "-" + conv(off)
        return result

    def read_class(self) -> str:
        p = self.p
        self.i += 1  # "["
        negated = False
        if self.peek() == "^":
            negated = True
            self.i += 1
        cls = _Class(negated)
        first = True
        while True:
            if self.i >= len(p):
                raise self.error("premature end of char-class")
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if c == "[":
                raise _Unsupported("a nested class or POSIX bracket")
            if c == "&" and self.peek(1) == "&":
                raise _Unsupported("class intersection &&")
            if c == "\\":
                self.i += 1
                item = self.read_escape(True)
                if item[0] == "negtext":
                    raise _Unsupported("\\H in a class")
            else:
                self.i += 1
                item = ("text", regex.escape(c) if c in "[]\\^-" and c != "-" else c)
            # a range a-b
            if item[0] == "text" and self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                if self.peek() == "\\":
                    self.i += 1
                    hi = self.read_escape(True)
                    if hi[0] != "text":
                        raise _Unsupported("a range ending in a class")
                else:
                    hi = ("text", regex.escape(self.peek()) if self.peek() in "[]\\^" else self.peek())
                    self.i += 1
                item = ("text", item[1] + "-" + hi[1])
            cls.items.append(item)
        return self.emit_class(cls)


def translate_onig(pattern: str, *, pin: bool = True) -> tuple[str, frozenset[int]]:
    r"""Translate an Oniguruma (Ruby syntax) pattern for the ``regex`` module: the translation
    and the code points whose classes were pinned (empty when nothing needed pinning).

    >>> translate_onig(r"a{1,2}+$", pin=False)[0]
    '(?:a{1,2})+(?=\\n|\\Z)'
    >>> translate_onig(r"(?i:'s)|\x{41}", pin=False)[0]
    "(?i:'s)|\\U00000041"

    Raises :class:`_Unsupported` for constructs it cannot translate exactly, and
    :class:`TokenizerFileError` for malformed patterns.
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise TokenizerFileError(f"regex of {len(pattern)} characters is too long (at most {MAX_PATTERN_LENGTH})")
    t = _Translator(pattern, pin)
    out = t.translate()
    return out, frozenset(t.suspects)


class OnigPattern:
    """An Oniguruma pattern compiled for the ``regex`` module (see the module docstring).

    ``spans(text)`` gives the matches as the ``onig`` crate's ``find_iter`` does, and
    ``find_matches(text)`` the pieces HF's ``Pattern::find_matches`` makes of them.
    """

    __slots__ = ("pattern", "plain", "_pinned", "_suspect", "_lock", "_pin_source")

    def __init__(self, pattern: str, pinned: tuple[str, list[tuple[int, int]]] | None = None) -> None:
        self.pattern = pattern
        try:
            # the limits a user's own pattern has: no repeat of a billion, no nesting of thousands
            if pattern:
                guard.check_pattern(pattern, "regex")
        except guard.PatternError as exc:
            raise TokenizerFileError(str(exc)) from None
        plain, _ = translate_onig(pattern, pin=False)
        try:
            self.plain = regex.compile(plain)
        except regex.error as exc:
            raise TokenizerFileError(f"invalid regex {pattern!r}: {exc}") from None
        self._pinned: regex.Pattern[str] | None = None
        self._suspect: RangeSet | None = None
        #: the pinned translation and the ranges of its suspects, once worked out (pickled with
        #: the pattern: working it out takes a tenth of a second, compiling it a hundredth)
        self._pin_source: tuple[str, list[tuple[int, int]]] | None = pinned
        self._lock: threading.Lock | None = threading.Lock()

    def __repr__(self) -> str:
        return f"OnigPattern({self.pattern!r})"

    def __reduce__(self):
        # the pinned translation travels; compiled forms and the lock are rebuilt
        self._build_pinned()
        return _restore, (self.pattern, self._pin_source)

    def _build_pinned(self) -> None:
        lock = self._lock
        if lock is None:
            return
        with lock:
            if self._lock is None:
                return
            if self._pin_source is None:
                pinned, suspects = translate_onig(self.pattern)
                self._pin_source = (pinned, _range_set(suspects).ranges if suspects else [])
            pinned, ranges = self._pin_source
            if ranges:
                self._suspect = RangeSet(ranges)
                self._pinned = regex.compile(pinned)
            self._lock = None

    def for_text(self, text: str) -> regex.Pattern[str]:
        """The compiled form to use on ``text``."""
        if text.isascii():
            return self.plain
        if self._lock is not None:
            self._build_pinned()
        if self._suspect is None or not self._suspect.present(text):
            return self.plain
        return self._pinned  # type: ignore[return-value]

    @property
    def pinned(self) -> regex.Pattern[str]:
        self._build_pinned()
        return self._pinned or self.plain

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Every match ``(start, end)``, as Oniguruma's ``find_iter`` finds them."""
        pat = self.for_text(text)
        timeout = guard.budget(len(text), TIMEOUT_BASE, TIMEOUT_PER_CHAR)
        try:
            out = []
            for m in pat.finditer(text, timeout=timeout):
                s, e = m.span()
                if s == e:
                    return self._spans_exact(pat, text, timeout)
                out.append((s, e))
            return out
        except TimeoutError:
            raise _timed_out(self.pattern, timeout, len(text)) from None

    def isolated(self, text: str) -> list[str] | None:
        """The pieces of ``text`` under HF's ``isolated`` behavior when the matches tile the text
        with no gap and no empty match (then only their strings are needed: the fast path);
        ``None`` otherwise."""
        pat = self.for_text(text)
        timeout = guard.budget(len(text), TIMEOUT_BASE, TIMEOUT_PER_CHAR)
        try:
            pieces = pat.findall(text, timeout=timeout) if pat.groups == 0 else None
        except TimeoutError:
            raise _timed_out(self.pattern, timeout, len(text)) from None
        if pieces is None or sum(map(len, pieces)) != len(text) or "" in pieces:
            return None
        return pieces

    def _spans_exact(self, pat: regex.Pattern[str], text: str, timeout: float) -> list[tuple[int, int]]:
        # the onig crate: search from the end of the last match; an empty match where the last
        # match ended is refused and the search moves on by one character
        out = []
        n = len(text)
        pos = 0
        last_end: int | None = None
        while pos <= n:
            m = pat.search(text, pos, timeout=timeout)
            if m is None:
                break
            s, e = m.span()
            if s == e and last_end == e:
                pos += 1
                continue
            pos = e
            last_end = e
            out.append((s, e))
        return out


    def find_matches(self, text: str) -> Matches:
        """HF's ``find_matches`` pieces of ``text``."""
        if not text:
            return [(0, 0, False)]
        return matches_from_spans(self.spans(text), len(text))


@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> OnigPattern:
    return OnigPattern(pattern)


_RESTORED: dict[str, OnigPattern] = {}


def _restore(pattern: str, pinned: tuple[str, list[tuple[int, int]]] | None) -> OnigPattern:
    """An unpickled pattern: one object per pattern in a process, its pinned translation taken
    from the pickle instead of worked out again."""
    found = _RESTORED.get(pattern)
    if found is None:
        found = _RESTORED.setdefault(pattern, OnigPattern(pattern, pinned))
    return found


def compile_onig(pattern: str, stage: str = "pre-tokenizer", component: str = "Split") -> OnigPattern:
    """Compile (once; cached) an Oniguruma pattern of a ``stage``'s ``component``; constructs
    with no exact translation raise :class:`UnsupportedComponentError` naming them."""
    try:
        return _compile(pattern)
    except _Unsupported as exc:
        raise UnsupportedComponentError(stage, component, f"regex {pattern!r}: {exc}") from None


def literal_pattern(text: str) -> str:
    """The Oniguruma pattern that matches ``text`` literally (HF escapes ``String`` patterns).

    >>> literal_pattern("a.b")
    'a\\\\.b'
    """
    return "".join("\\" + c if c in r"\.+*?()|[]{}^$#&-~" else c for c in text)
