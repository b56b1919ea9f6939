"""SentencePiece's normalizer, as the library runs it (``Normalizer::Normalize``), with every
normalized character aligned to the text the user typed.

At each position the library takes, in order: the longest user-defined piece that starts there
(kept as it is), else the longest key of the model's precompiled charsmap that starts there
(replaced; SentencePiece's lookup is the *longest* key, not Hugging Face's shortest, see
:meth:`.CharsMap.longest_match`), else the character itself. Then whitespace: leading spaces
are dropped and runs of spaces become one (``remove_extra_whitespaces``), trailing spaces are
dropped, every space becomes ``▁`` (``escape_whitespaces``) and a ``▁`` is put before the text
(``add_dummy_prefix``), or after it when the model treats whitespace as a suffix.

>>> n = SentencePieceNormalizer(None)
>>> n.normalize_str("  Hello   world ")
'▁Hello▁world'
>>> t = n.normalize(NormalizedText.identity("  Hi  you"))
>>> t.text, t.original_span(0, 3), t.original_span(3, 7)
('▁Hi▁you', (2, 4), (4, 9))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import regex

from ..text.normalized import NormalizedText
from .precompiled import CharsMap

SPACE = "\u2581"
#: characters of text encoded at once when looking for the longest charsmap key
_WINDOW = 64
#: characters whose step is remembered (see :meth:`SentencePieceNormalizer._step`), at most
_MEMO = 10_000
_SPACES = regex.compile(" +")
#: up to this many characters are replaced in the copy one ``str.replace`` each (a scan at C
#: speed); more, by one ``str.translate`` (a dict look-up per character of the text)
_REPLACES = 24


class PrefixMatcher:
    """The longest of a set of strings that starts at a position (SentencePiece's matcher of
    user-defined pieces).

    >>> PrefixMatcher(["<x>", "<xy>"]).match("a<xy>z", 1), PrefixMatcher([]).match("a", 0)
    (4, 0)
    """

    def __init__(self, symbols: Iterable[str]) -> None:
        self._by_first: dict[str, list[str]] = {}
        for s in sorted({s for s in symbols if s}, key=len, reverse=True):
            self._by_first.setdefault(s[0], []).append(s)
        self.symbols = tuple(s for group in self._by_first.values() for s in group)

    def __bool__(self) -> bool:
        return bool(self._by_first)

    def starts(self) -> frozenset[str]:
        """The characters a symbol starts with."""
        return frozenset(self._by_first)

    def match(self, text: str, pos: int) -> int:
        found = self._by_first.get(text[pos]) if pos < len(text) else None
        if found:
            for s in found:
                if text.startswith(s, pos):
                    return len(s)
        return 0


class _Out:
    """The normalized text being built: its parts and their alignment runs."""

    __slots__ = ("parts", "starts", "runs", "n")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.runs: list[tuple[int, int, bool]] = []
        self.n = 0

    def add(self, s: str, o0: int, o1: int, linear: bool) -> None:
        if not s:
            return
        if not linear and len(s) == 1 and o1 == o0 + 1:
            linear = True
        runs = self.runs
        if runs:
            p0, p1, plin = runs[-1]
            if linear and plin and p1 == o0:
                runs[-1] = (p0, o1, True)
                self.parts.append(s)
                self.n += len(s)
                return
            if not linear and not plin and p0 == o0 and p1 == o1:
                self.parts.append(s)
                self.n += len(s)
                return
        self.starts.append(self.n)
        runs.append((o0, o1, linear))
        self.parts.append(s)
        self.n += len(s)

    def extend_last(self, end: int) -> None:
        """The last character also covers the original text up to ``end`` (text the library
        dropped after it: a piece's end is where the next kept character came from)."""
        if not self.runs:
            return
        o0, o1, lin = self.runs[-1]
        if o1 >= end:
            return
        length = self.n - self.starts[-1]
        if not lin:
            self.runs[-1] = (o0, end, False)
        elif length == 1:
            self.runs[-1] = (o0, end, False)
        else:
            self.runs[-1] = (o0, o1 - 1, True)
            self.starts.append(self.n - 1)
            self.runs.append((o1 - 1, end, False))

    def trim_end(self, k: int) -> int:
        """Drop the last ``k`` characters; the original offset where the first dropped one came from."""
        text = "".join(self.parts)
        keep = len(text) - k
        where = self.align_start(keep)
        self.parts = [text[:keep]] if keep else []
        while self.starts and self.starts[-1] >= keep:
            self.starts.pop()
            self.runs.pop()
        self.n = keep
        if self.runs:
            o0, o1, lin = self.runs[-1]
            if lin:
                self.runs[-1] = (o0, o0 + (keep - self.starts[-1]), True)
        return where

    def align_start(self, index: int) -> int:
        import bisect

        k = bisect.bisect_right(self.starts, index) - 1
        o0, _, lin = self.runs[k]
        return o0 + (index - self.starts[k]) if lin else o0


class SentencePieceNormalizer:
    """SentencePiece's normalizer (see the module). ``charsmap`` is the model's precompiled
    charsmap (None for the ``identity`` rule); ``user_symbols`` the model's user-defined pieces."""

    #: the dummy prefix and the whitespace rules look at the ends of the text and across runs
    local = False

    def __init__(self, charsmap: CharsMap | None, *, add_dummy_prefix: bool = True,
                 remove_extra_whitespaces: bool = True, escape_whitespaces: bool = True,
                 treat_whitespace_as_suffix: bool = False, user_symbols: Iterable[str] = (),
                 name: str = "") -> None:
        self.charsmap = charsmap
        self.add_dummy_prefix = bool(add_dummy_prefix)
        self.remove_extra_whitespaces = bool(remove_extra_whitespaces)
        self.escape_whitespaces = bool(escape_whitespaces)
        self.treat_whitespace_as_suffix = bool(treat_whitespace_as_suffix)
        self.matcher = PrefixMatcher(user_symbols)
        self.name = name
        self._key_start: dict[str, bool] = {}
        self._own_key: dict[str, bool] = {}
        self._continue: dict[str, frozenset[str]] = {}
        self._user_starts = self.matcher.starts()
        self._memo: dict[str, tuple[int, str]] = {}

    def __repr__(self) -> str:
        return f"SentencePieceNormalizer({self.name or 'identity'!r})"

    # ----- one step of the library's loop ------------------------------------------------------

    def _starts_key(self, c: str) -> bool:
        got = self._key_start.get(c)
        if got is None:
            got = self._key_start[c] = self.charsmap is not None and self.charsmap.starts_key(c)
        return got

    def _own(self, c: str) -> bool:
        """Whether ``c`` alone is a key of the charsmap (it has a replacement of its own)."""
        got = self._own_key.get(c)
        if got is None:
            found = self.charsmap.longest_match(c.encode("utf-8", "surrogatepass")) if self._starts_key(c) else None
            got = self._own_key[c] = found is not None
        return got

    def _next(self, c: str) -> frozenset[str]:
        """The characters that continue a longer key after ``c``."""
        got = self._continue.get(c)
        if got is None:
            got = self._continue[c] = self.charsmap.continuations(c) if self._starts_key(c) else frozenset()
        return got

    def _finder(self, text: str, spaces: bool = False, seen: set[str] | None = None,
                copied: Mapping[str, str] | None = None) -> regex.Pattern | None:
        """Where a step may do more than copy one character: a user-defined piece's first
        character, a character the charsmap replaces, one that starts a longer key before a
        character that may continue it, and (for the whitespace rules) runs of two spaces or more,
        or every space when ``spaces``. ``seen`` holds at least the characters of ``text`` (more
        only adds places where the exact step is taken); the characters of ``copied`` are
        replaced in the runs copied, so they are no places of their own."""
        if seen is None:
            seen = set(text)
        alone = {c for c in seen if c in self._user_starts or (self.charsmap is not None and self._own(c))}
        if copied:
            alone.difference_update(copied)
        longer: set[str] = set()
        follow: set[str] = set()
        if self.charsmap is not None:
            for c in seen - alone:
                after = self._next(c) & seen
                if after:
                    longer.add(c)
                    follow |= after
        parts = []
        if spaces:
            alone.add(" ")
        elif self.remove_extra_whitespaces and "  " in text:
            parts.append(" {2,}")
        if alone:
            parts.append("[" + "".join(regex.escape(c) for c in sorted(alone)) + "]")
        if longer:
            parts.append("[" + "".join(regex.escape(c) for c in sorted(longer)) + "](?=["
                         + "".join(regex.escape(c) for c in sorted(follow)) + "])")
        return regex.compile("|".join(parts)) if parts else None

    def _step(self, text: str, pos: int) -> tuple[int, str]:
        """``NormalizePrefix`` at ``pos``: how many characters it consumes and what they become.
        A character that starts no user-defined piece and no charsmap key longer than itself
        steps the same way wherever it is, so its step is remembered."""
        c = text[pos]
        known = self._memo.get(c)
        if known is not None:
            return known
        n = self.matcher.match(text, pos) if self.matcher else 0
        if n:
            return n, text[pos:pos + n]
        cm = self.charsmap
        step = (1, c)
        if cm is not None and self._starts_key(c):
            window = text[pos:pos + _WINDOW]
            data = window.encode("utf-8", "surrogatepass")
            found = cm.longest_match(data)
            if found is not None:
                length, replacement = found
                step = (len(data[:length].decode("utf-8", "surrogatepass")), replacement)
        if c not in self._user_starts and not (cm is not None and self._next(c)) and len(self._memo) < _MEMO:
            self._memo[c] = step
        return step

    def _plain_space(self) -> bool:
        """Whether a space steps as itself wherever it is (no user-defined piece or charsmap
        key starts with it but the space alone, kept a space)."""
        return self._step(" ", 0) == (1, " ") and " " in self._memo

    # ----- the whole text ------------------------------------------------------------------------

    def _leading_spaces(self, text: str) -> int:
        """Where the text starts once the steps that give a space at its start are dropped (what
        ``remove_extra_whitespaces`` drops there)."""
        pos, n = 0, len(text)
        while pos < n:
            consumed, sp = self._step(text, pos)
            if sp != " ":
                break
            pos += consumed
        return pos

    def _run(self, text: str, offset: int) -> _Out:
        out = _Out()
        n = len(text)
        space = SPACE if self.escape_whitespaces else " "
        remove = self.remove_extra_whitespaces
        pos = self._leading_spaces(text) if remove else 0
        if pos >= n:
            return out
        if not self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out.add(space, offset + pos, offset + pos, False)
        finder = self._finder(text[pos:])
        prev_space = remove
        plain_space = remove and self._plain_space()
        while pos < n:
            m = finder.search(text, pos) if finder is not None else None
            s = m.start() if m is not None else n
            if s > pos:
                # characters copied as they are; spaces among them are single (runs are steps)
                run = text[pos:s]
                if prev_space and remove and run[0] == " ":
                    out.extend_last(offset + pos + 1)
                    run = run[1:]
                    pos += 1
                if run:
                    out.add(run.replace(" ", space) if space != " " else run, offset + pos, offset + s, True)
                    prev_space = remove and run[-1] == " "
                pos = s
                if pos >= n:
                    break
            if prev_space and plain_space and text[pos] == " ":
                # the rest of a run of spaces: each would be dropped and belong to the piece before
                # it, one at a time; all at once is the same
                end = _SPACES.match(text, pos).end()  # type: ignore[union-attr]
                out.extend_last(offset + end)
                pos = end
                continue
            consumed, sp = self._step(text, pos)
            if prev_space:
                sp = sp.lstrip(" ")
            if sp:
                original = text[pos:pos + consumed]
                if sp == original and " " not in sp and consumed == 1:
                    out.add(sp, offset + pos, offset + pos + consumed, True)
                else:
                    out.add(sp.replace(" ", space), offset + pos, offset + pos + consumed,
                            sp == original and space == " " and consumed == 1)
                prev_space = sp.endswith(" ")
            else:
                out.extend_last(offset + pos + consumed)
            pos += consumed
            if not remove:
                prev_space = False
        end = offset + n
        if remove:
            text_out = "".join(out.parts)
            k = len(text_out) - len(text_out.rstrip(space))
            if k:
                end = out.trim_end(k)
        if self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out.add(space, end, end, False)
        return out

    def normalize(self, text: NormalizedText) -> NormalizedText:
        """``text`` (the user's text, or a part of it) normalized, aligned to it."""
        if not text.is_identity:
            raise ValueError("SentencePiece's normalizer is the first stage: it takes the text as typed")
        base = text.original_start
        out = self._run(text.text, base)
        normalized = "".join(out.parts)
        if not out.runs:
            return NormalizedText(normalized, base, text.original_end)
        return NormalizedText(normalized, base, text.original_end, out.starts, out.runs)

    def normalize_str(self, text: str) -> str:
        """The normalized text alone (what :meth:`normalize` makes, without the alignment).

        >>> SentencePieceNormalizer(None, add_dummy_prefix=False).normalize_str(" a  b ")
        'a▁b'
        """
        return self._run_str(text)

    def _run_str(self, text: str) -> str:
        """:meth:`_run`'s text without its alignment: the same steps, each part appended to a
        list, dropped text not recorded anywhere. A character that steps to one other character
        the same way everywhere (:meth:`_copied`) is no stop of the loop: it is replaced in a copy
        of the text (``str.replace``, or ``str.translate`` for many), from which the runs between
        stops are taken, their spaces then merged as the steps would have merged them. Every step
        reads the text as typed, so a longer key or a user-defined piece that holds such a
        character is still found."""
        n = len(text)
        space = SPACE if self.escape_whitespaces else " "
        remove = self.remove_extra_whitespaces
        pos = self._leading_spaces(text) if remove else 0
        if pos >= n:
            return ""
        seen = set(text)
        copied = self._copied(seen)
        runs = text
        if copied:
            if len(copied) <= _REPLACES:
                for c, rep in copied.items():
                    runs = runs.replace(c, rep)
            else:
                runs = runs.translate({ord(c): rep for c, rep in copied.items()})
        parts: list[str] = []
        append = parts.append
        suffix = self.treat_whitespace_as_suffix
        if not suffix and self.add_dummy_prefix:
            append(space)
        finder = self._finder(text[pos:], seen=seen, copied=copied)
        search = finder.search if finder is not None else None
        prev_space = remove
        plain_space = remove and self._plain_space()
        escape = space != " "
        step = self._step
        while pos < n:
            m = search(text, pos) if search is not None else None
            s = m.start() if m is not None else n
            if s > pos:
                run = runs[pos:s]
                if remove:
                    # spaces: single, and none after a space (as each step would have left them)
                    while "  " in run:  # halves every run of spaces, at C speed
                        run = run.replace("  ", " ")
                    if prev_space and run and run[0] == " ":
                        run = run[1:]
                    if run:
                        prev_space = run[-1] == " "
                if run:
                    append(run.replace(" ", space) if escape else run)
                pos = s
                if pos >= n:
                    break
            if prev_space and plain_space and text[pos] == " ":
                pos = _SPACES.match(text, pos).end()  # type: ignore[union-attr]
                continue
            consumed, sp = step(text, pos)
            if prev_space:
                sp = sp.lstrip(" ")
            if sp:
                append(sp.replace(" ", space) if escape else sp)
                prev_space = sp.endswith(" ")
            pos += consumed
            if not remove:
                prev_space = False
        out = "".join(parts)
        if remove:
            out = out.rstrip(space)
        if suffix and self.add_dummy_prefix:
            out += space
        return out

    def _copied(self, seen: set[str]) -> dict[str, str] | None:
        """The characters of a text (``seen``) that the loop may replace in the runs it copies:
        each steps to one other character (so the copy keeps every position), the same wherever
        it is (no user-defined piece starts with it, no charsmap key longer than itself does).
        None when there are none.

        >>> from .precompiled import build_charsmap
        >>> n = SentencePieceNormalizer(CharsMap(build_charsmap({"\\n": " ", "ab": "X", "a": "A", "\\u200b": ""})))
        >>> n._copied(set("ab\\n\\u200bc"))
        {'\\n': ' '}
        """
        if self.charsmap is None:
            return None
        out: dict[str, str] = {}
        for c in seen:
            if c in self._user_starts or not self._starts_key(c):
                continue
            step = self._step(c, 0)
            if step[0] == 1 and len(step[1]) == 1 and step[1] != c and self._memo.get(c) == step:
                out[c] = step[1]
        return out or None


class LlamaCppUgmNormalizer(SentencePieceNormalizer):
    """llama.cpp's normalizer of a GGUF ``t5`` (UGM) tokenizer: the same steps as SentencePiece's
    (user-defined pieces kept, the charsmap's longest key, else the character), but its own
    whitespace rule: each run of non-spaces is preceded by one ``▁`` when spaces are merged
    (``remove_extra_whitespaces``: every other space is dropped, the text's first word gets one
    too), else every space is a ``▁`` and the first word gets one more when ``add_space_prefix``.

    >>> n = LlamaCppUgmNormalizer(None, add_dummy_prefix=True, remove_extra_whitespaces=False)
    >>> n.normalize_str("  a b"), LlamaCppUgmNormalizer(None).normalize_str("  a  b ")
    ('▁▁▁a▁b', '▁a▁b')
    """

    def normalize_str(self, text: str) -> str:
        return "".join(self._run(text, 0).parts)

    def _run(self, text: str, offset: int) -> _Out:
        out = _Out()
        n = len(text)
        space = SPACE if self.escape_whitespaces else " "
        prepend = not self.treat_whitespace_as_suffix and self.add_dummy_prefix
        append = self.treat_whitespace_as_suffix and self.add_dummy_prefix
        merge = self.remove_extra_whitespaces
        prepended = False
        in_word = False
        finder = self._finder(text, spaces=True)
        pos = 0
        while pos < n:
            m = finder.search(text, pos) if finder is not None else None
            s = m.start() if m is not None else n
            if s > pos:  # characters that stay as they are, none of them a space
                if not in_word:
                    in_word = True
                    if (prepend and not prepended) or merge:
                        out.add(space, offset + pos, offset + pos, False)
                        prepended = True
                out.add(text[pos:s], offset + pos, offset + s, True)
                pos = s
                if pos >= n:
                    break
            consumed, sp = self._step(text, pos)
            o0, o1 = offset + pos, offset + pos + consumed
            linear = consumed == 1 and sp == text[pos]
            for c in sp:
                if c != " ":
                    if not in_word:
                        in_word = True
                        if (prepend and not prepended) or merge:
                            out.add(space, o0, o0, False)
                            prepended = True
                    out.add(c, o0, o1, linear)
                else:
                    in_word = False
                    if not merge:
                        out.add(space, o0, o1, False)
            pos += consumed
        if append:
            out.add(space, offset + n, offset + n, False)
        return out
