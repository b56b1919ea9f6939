"""Regular expressions that come from a user or a file: limits when compiling, a time budget
when matching.

A pattern is text anyone can write into a tokenizer file or type after ``--pattern`` and
``--regex``, and the ``regex`` engine will try hard to do what it says: a counted repeat of a
billion (``a{1000000000}``) is expanded in memory until the machine runs out, groups nested
thousands deep overflow the compiler's stack, and nested quantifiers (``(?:(?:a|a)+)+b``)
backtrack for longer than anyone waits. tiktoken's engine stops the last kind with a backtrack
limit. Here:

* :func:`check_pattern` refuses, before compiling, a pattern longer than
  :data:`MAX_PATTERN_CHARS`, groups nested deeper than :data:`MAX_DEPTH`, a counted repeat above
  :data:`MAX_REPEAT`, or counted repeats that would expand the pattern beyond
  :data:`MAX_EXPANDED` items; :func:`compile_checked` also turns every compile failure into one
  line (:class:`PatternError`);
* matching gets a time budget that grows with the text (:func:`budget`), given to the ``regex``
  module's ``timeout=``; running out raises :class:`PatternTimeoutError`, one line that names the
  likely cause.

The patterns of the OpenAI encodings and of the trainer's named patterns are known to be safe and
are matched with no budget (:data:`TRUSTED_PATTERNS`, filled by :mod:`.unicode_pattern`).

>>> check_pattern(r"\\p{L}+|\\s+")
>>> check_pattern("a{1000000000}")
Traceback (most recent call last):
...
tokscope.core.patterns.guard.PatternError: invalid pattern 'a{1000000000}': a repeat count of 1,000,000,000 is above the limit of 10,000
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

import regex

from ..text.display import safe_text
from ..text.errors import TokscopeError

#: longest pattern accepted, in characters (tiktoken's own are under 300)
MAX_PATTERN_CHARS = 20_000
#: deepest nesting of groups accepted (tiktoken's patterns nest 2 deep; the compiler fails near 500)
MAX_DEPTH = 100
#: largest count of a counted repeat such as ``{1,3}``
MAX_REPEAT = 10_000
#: largest size, in pattern items, once counted repeats are expanded (``(?:a{100}){100}`` is 10,000)
MAX_EXPANDED = 200_000
#: seconds any match may take, plus :data:`SECONDS_PER_CHAR` for each character of the text
BASE_SECONDS = 2.0
#: a tokenizer's pattern runs at well under a microsecond per character; this allows ten times that
SECONDS_PER_CHAR = 5e-6

#: longest string a tokenizer file may bring for a stage to insert (a Replace's content, a
#: Prepend): real ones are a character or two; a huge one is copied once per piece of text
MAX_FILE_STRING = 1_000

#: patterns matched without a time budget (their authors' engines run them; see the module docstring)
TRUSTED_PATTERNS: set[str] = set()


class PatternError(TokscopeError, ValueError):
    """A pattern that cannot be used (one line, safe to print)."""


class PatternTimeoutError(TokscopeError, TimeoutError):
    """A pattern that ran out of its time budget (catastrophic backtracking, most likely)."""


#: a cap on every budget while set (see :func:`time_ceiling`); per thread and per task
_CEILING: contextvars.ContextVar[float | None] = contextvars.ContextVar("tokscope_pattern_ceiling", default=None)


@contextmanager
def time_ceiling(seconds: float) -> Iterator[None]:
    """Within the block, every match in this thread gets at most ``seconds`` (the explorer
    re-tokenizes an edit on its UI thread under a short ceiling, and hands a pattern that runs
    out of it to a worker with the full budget).

    >>> with time_ceiling(0.1):
    ...     budget(1_000_000)
    0.1
    >>> budget(0)
    2.0
    """
    token = _CEILING.set(seconds)
    try:
        yield
    finally:
        _CEILING.reset(token)


def _short(pattern: str) -> str:
    shown = safe_text(pattern)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _fail(pattern: str, reason: str, what: str) -> PatternError:
    return PatternError(f"invalid {what} {_short(pattern)!r}: {reason}")


def budget(n_chars: int, base: float = BASE_SECONDS, per_char: float = SECONDS_PER_CHAR) -> float:
    """Seconds a match over ``n_chars`` characters may take (``base`` plus ``per_char`` each; no
    more than a :func:`time_ceiling` in force).

    >>> budget(0), budget(1_000_000)
    (2.0, 7.0)
    """
    seconds = base + max(0, n_chars) * per_char
    ceiling = _CEILING.get()
    return seconds if ceiling is None else min(seconds, ceiling)


def timed_out(pattern: str, what: str = "pattern") -> PatternTimeoutError:
    """The error for a match that ran out of time (see :func:`budget`)."""
    return PatternTimeoutError(
        f"the {what} {_short(pattern)!r} took too long to match (nested repeats such as (a+)+ backtrack "
        f"without end); simplify it"
    )


def _class_end(pattern: str, i: int) -> int:
    """The index just past the character class opening at ``pattern[i] == "["``."""
    n = len(pattern)
    j = i + 1
    if j < n and pattern[j] == "^":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    depth = 1
    while j < n:
        ch = pattern[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            if pattern.startswith("[:", j):
                close = pattern.find(":]", j + 2)
                if close != -1:
                    j = close + 2
                    continue
            depth += 1  # a nested set (the regex module's version 1 syntax)
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


_REPEAT = regex.compile(r"\{(\d*)(?:(,)(\d*))?\}")


def check_pattern(pattern: str, what: str = "pattern") -> None:
    """Refuse a pattern whose compiling or matching could exhaust memory or the stack (see the
    module docstring); :class:`PatternError` says which limit it passes. Not a full parser: what
    it lets through, the ``regex`` compiler still checks."""
    if not isinstance(pattern, str):
        raise PatternError(f"the {what} must be text, not {type(pattern).__name__}")
    if not pattern:
        raise PatternError(f"the {what} is empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise _fail(pattern, f"it is {len(pattern):,} characters long; at most {MAX_PATTERN_CHARS:,}", what)
    # each frame: [size of the sequence so far, size of the last item]
    stack: list[list[int]] = [[0, 0]]
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        frame = stack[-1]
        if ch == "\\":
            step = 2
            if i + 2 < n and pattern[i + 1] in "pPNxugk" and pattern[i + 2] in "{<":
                close = pattern.find("}" if pattern[i + 2] == "{" else ">", i + 3)
                step = (close + 1 - i) if close != -1 else n - i
            frame[0] += 1
            frame[1] = 1
            i += step
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            frame[0] += 1
            frame[1] = 1
            continue
        if ch == "(":
            if pattern.startswith("(?#", i):
                close = pattern.find(")", i)
                i = n if close == -1 else close + 1
                continue
            stack.append([0, 0])
            if len(stack) - 1 > MAX_DEPTH:
                raise _fail(pattern, f"groups are nested more than {MAX_DEPTH} deep", what)
            i += 1
            continue
        if ch == ")":
            if len(stack) > 1:
                inner = stack.pop()
                size = inner[0] + 1
                stack[-1][0] += size
                stack[-1][1] = size
            i += 1
            continue
        if ch == "{":
            found = _REPEAT.match(pattern, i)
            if found is not None and (found.group(1) or found.group(3)):
                low = found.group(1) or "0"
                high = found.group(3) if found.group(2) else low
                counts = [low] + ([high] if high else [])
                if any(len(c) > 9 or int(c) > MAX_REPEAT for c in counts):
                    biggest = max(int(c) for c in counts)
                    raise _fail(pattern, f"a repeat count of {biggest:,} is above the limit of {MAX_REPEAT:,}", what)
                times = max(int(c) for c in counts)
                frame[0] += frame[1] * (max(times, 1) - 1)
                frame[1] *= max(times, 1)
                if frame[0] > MAX_EXPANDED:
                    raise _fail(pattern, f"its counted repeats expand it beyond {MAX_EXPANDED:,} items", what)
                i = found.end()
                continue
        frame[0] += 1
        frame[1] = 1
        i += 1
    if sum(f[0] for f in stack) > MAX_EXPANDED:
        raise _fail(pattern, f"its counted repeats expand it beyond {MAX_EXPANDED:,} items", what)


def check_file_string(value: str, what: str) -> str:
    """A string a tokenizer file brings for a stage to insert, refused past :data:`MAX_FILE_STRING`
    characters (the limits a pattern has, for the text that goes with it).

    >>> check_file_string("▁", "Prepend")
    '▁'
    >>> check_file_string("x" * 5000, "Prepend 'prepend'")
    Traceback (most recent call last):
    ...
    tokscope.core.patterns.guard.PatternError: Prepend 'prepend' is 5,000 characters long; at most 1,000
    """
    if isinstance(value, str) and len(value) > MAX_FILE_STRING:
        raise PatternError(f"{what} is {len(value):,} characters long; at most {MAX_FILE_STRING:,}")
    return value


def may_backtrack(pattern: str) -> bool:
    """Whether ``pattern`` has a quantified group (``(a+)+``, ``(a|aa)*``, ``(?:x|y){2,}``): the
    shape that can backtrack exponentially. A pattern without one backtracks at worst
    polynomially in the length of the text, so a caller matching many short strings (the
    vocabulary search) may skip the per-call ``timeout=``, which costs about ten times the match
    of a short string, and check a deadline between batches instead.

    >>> may_backtrack(r"(?:(?:=|=)+)+x"), may_backtrack(r"(a|aa)*"), may_backtrack(r"(ab){2}")
    (True, True, True)
    >>> may_backtrack(r"^ [A-Z][a-z]+ing$"), may_backtrack(r"(?i)token"), may_backtrack(r"(ab)?c"), may_backtrack(r"\\(a\\)+")
    (False, False, False, False)
    """
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            continue
        if ch == ")" and i + 1 < n:
            after = pattern[i + 1]
            if after in "*+":
                return True
            if after == "{":
                found = _REPEAT.match(pattern, i + 1)
                if found is not None:
                    high = found.group(3) if found.group(2) else found.group(1)
                    if not high or int(high or 0) > 1:
                        return True
        i += 1
    return False


def compile_checked(pattern: str, what: str = "pattern", flags: int = 0) -> regex.Pattern[str]:
    """:func:`check_pattern`, then compile; any failure is a one-line :class:`PatternError`.

    >>> compile_checked("(").pattern
    Traceback (most recent call last):
    ...
    tokscope.core.patterns.guard.PatternError: invalid pattern '(': missing ) at position 1
    """
    check_pattern(pattern, what)
    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        detail = str(exc).splitlines()[0] if str(exc) else "cannot compile"
        raise _fail(pattern, detail, what) from None
    except RecursionError:
        raise _fail(pattern, "it is nested too deeply to compile", what) from None
    except MemoryError:
        raise _fail(pattern, "it is too large to compile", what) from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise _fail(pattern, str(exc) or type(exc).__name__, what) from None
