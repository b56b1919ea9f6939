"""Replace (a string or an Oniguruma pattern by a string), as Hugging Face's
``normalizers/replace.rs``."""

from __future__ import annotations

import re

import regex

from ..text.normalized import NormalizedText
from ..patterns.onig import compile_onig, literal_pattern
from .base import NormalizerBase


class Replace(NormalizerBase):
    """Every match of ``pattern`` (a plain string, or an Oniguruma regex with ``regex=True``)
    replaced by ``content``; each new character aligns to the match's last character.

    >>> Replace(" ", "▁").normalize_str("a b")
    'a▁b'
    """

    def __init__(self, pattern: str, content: str, regex: bool = False) -> None:
        self.pattern = pattern
        self.content = content
        self.regex = regex
        source = pattern if regex else literal_pattern(pattern)
        self._onig = compile_onig(source, "normalizer", "Replace")
        # a plain one-character pattern replaced by one character is a 1:1 map
        self._one_to_one = not regex and len(pattern) == 1 and len(content) == 1
        self._plain = not regex and bool(pattern)
        self.local = self._plain
        self._required = _required_text(pattern) if regex else None
        #: a run pattern (see :func:`_required_text`) as a Python pattern: Oniguruma and ``re``
        #: find the same leftmost longest runs of one character
        run = _run_pattern(pattern) if self._required is not None else None
        self._run = None if run is None else (run, content.replace("\\", "\\\\"))  # and content as a template

    def normalize(self, text: NormalizedText) -> NormalizedText:
        t = text.text
        if self._plain and self.pattern not in t:
            return text
        if self._one_to_one:
            return text.with_text(t.replace(self.pattern, self.content))
        return text.replace_matches(self._onig.find_matches(t), self.content)

    def normalize_str(self, text: str) -> str:
        """The text :meth:`normalize` gives, without the alignment (the ids-only path).

        >>> Replace(" {2,}", " ", regex=True).normalize_str("a   b  c d")
        'a b c d'
        """
        if self._plain:
            return text.replace(self.pattern, self.content)
        required = getattr(self, "_required", None)  # (a pickle from before has neither)
        if required is not None:
            if required not in text:
                return text
            run = getattr(self, "_run", None)
            if run is not None:
                return run[0].sub(run[1], text)
        content = self.content
        out: list[str] = []
        last = 0
        for s, e, is_match in self._onig.find_matches(text):
            if is_match and (s < e or content):  # the matches replace_matches replaces
                out.append(text[last:s])
                out.append(content)
                last = e
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)

    def safe_start(self, text: str, pos: int) -> bool:
        n = len(self.pattern)
        if n <= 1 or pos <= 0:
            return True
        # no match of the pattern runs across pos (matches are found left to right from the start)
        lo = max(0, pos - n + 1)
        found = text.find(self.pattern, lo, pos + n - 1)
        return found < 0 or found >= pos


#: ``c{n,}``, ``c{n,m}``, ``c{n}`` or ``c+`` of one plain character ``c`` (not a metacharacter)
_REPEAT = regex.compile(r"([^\\.^$|?*+()\[\]{}])(?:\{([0-9]+)(?:,[0-9]*)?\}|(\+))")


def _required_text(pattern: str) -> str | None:
    """A string every match of Oniguruma pattern ``pattern`` holds, for the patterns HF's files
    use to squeeze runs (``" {2,}"``): a text without it has no match, and is left as it is.
    None when the pattern is not of that simple form (or may match nothing).

    >>> _required_text(" {2,}"), _required_text("a+"), _required_text("a{0,3}"), _required_text(r"\\s+")
    ('  ', 'a', None, None)
    """
    m = _REPEAT.fullmatch(pattern)
    if m is None:
        return None
    count = 1 if m.group(3) else int(m.group(2))
    return m.group(1) * count if 0 < count <= 64 else None


def _run_pattern(pattern: str) -> re.Pattern[str] | None:
    """The ``re`` pattern of a run pattern (:func:`_required_text`).

    >>> _run_pattern(" {2,}").sub("_", "a  b   c d")
    'a_b_c d'
    """
    m = _REPEAT.fullmatch(pattern)
    if m is None:
        return None
    try:
        return re.compile(re.escape(m.group(1)) + ("+" if m.group(3) else pattern[m.end(1):]))
    except re.error:  # e.g. a{3,2}: left to Oniguruma's reading
        return None
