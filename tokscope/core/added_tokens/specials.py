"""Special tokens as tiktoken knows them: exact strings cut out of the text before anything else.

This is the added-tokens stage of the OpenAI encodings and of the tokenizers trained here (the
Hugging Face kind, with ``lstrip``/``single_word``/normalized matching, is
:mod:`tokscope.core.added_tokens.added_vocabulary`). A special token is never produced from ordinary text; text that
spells one is refused unless the caller allows it, as tiktoken does:

* ``allowed_special``: the special tokens to encode as special tokens (``"all"``, or a collection
  of strings; a string that is not a special token of this encoding is ignored, as tiktoken does,
  so one allowed set can serve several encodings);
* ``disallowed_special``: strings whose presence raises :class:`DisallowedSpecialError`
  (``"all"``: every special token not allowed; ``()`` turns the check off, so the text is encoded
  as ordinary text).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Literal

import regex

from ..text.errors import DisallowedSpecialError

AllowedSpecial = Literal["all"] | Collection[str]
DisallowedSpecial = Literal["all"] | Collection[str]


class SpecialTokens:
    """Special-token strings and their ids, matched longest first.

    >>> st = SpecialTokens({"<|a|>": 10, "<|ab|>": 11})
    >>> st.spans("x<|ab|>y", st.names)
    [(0, 1, None), (1, 7, 11), (7, 8, None)]
    >>> allowed, disallowed = st.resolve("all", "all")
    >>> sorted(allowed), disallowed
    (['<|ab|>', '<|a|>'], frozenset())
    """

    def __init__(self, tokens: Mapping[str, int] | None = None) -> None:
        self.tokens: dict[str, int] = dict(tokens or {})
        self.by_id: dict[int, str] = {v: k for k, v in reversed(self.tokens.items())}  # the first name wins
        self.names: frozenset[str] = frozenset(self.tokens)
        self.longest = max(map(len, self.tokens), default=0)
        self._res: dict[frozenset[str], regex.Pattern[str]] = {}

    def __getstate__(self) -> dict:
        return {"tokens": self.tokens}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["tokens"])  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self.tokens)

    def regex(self, names: frozenset[str]) -> regex.Pattern[str] | None:
        """One compiled alternation of ``names`` (longest first, so a special token that prefixes
        another cannot shadow it); None for no names."""
        if not names:
            return None
        pat = self._res.get(names)
        if pat is None:
            alternatives = sorted(names, key=lambda t: (-len(t), t))
            pat = regex.compile("|".join(regex.escape(t) for t in alternatives))
            if len(self._res) > 64:
                self._res.clear()
            self._res[names] = pat
        return pat

    def resolve(self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial) -> tuple[frozenset[str], frozenset[str]]:
        """tiktoken's rules: ``(allowed, disallowed)`` as sets of strings.

        >>> SpecialTokens({"<s>": 1}).resolve({"<s>", "<nope>"}, "all")
        (frozenset({'<s>'}), frozenset())
        """
        allowed = self.names if allowed_special == "all" else frozenset(allowed_special) & self.names
        if disallowed_special == "all":
            disallowed = self.names - allowed
        else:
            disallowed = frozenset(disallowed_special)
        return allowed, disallowed

    def check(self, text: str, disallowed: frozenset[str]) -> None:
        """Raise :class:`DisallowedSpecialError` when ``text`` holds one of ``disallowed``."""
        pat = self.regex(disallowed)
        if pat is not None:
            found = pat.search(text)
            if found:
                raise DisallowedSpecialError(found.group())

    def spans(self, text: str, allowed: frozenset[str], pos: int = 0, endpos: int | None = None) -> list[tuple[int, int, int | None]]:
        """``text[pos:endpos]`` cut into ordinary spans ``(start, end, None)`` and allowed special
        tokens ``(start, end, id)``. An empty range gives one empty ordinary span."""
        end = len(text) if endpos is None else endpos
        out: list[tuple[int, int, int | None]] = []
        pat = self.regex(allowed)
        if pat is not None:
            tokens = self.tokens
            for found in pat.finditer(text, pos, end):
                if found.start() > pos:
                    out.append((pos, found.start(), None))
                out.append((found.start(), found.end(), tokens[found.group()]))
                pos = found.end()
        if pos < end or not out:
            out.append((pos, end, None))
        return out

    def could_occur(self, text: str, start: int, end: int) -> bool:
        """Whether a special token may overlap ``text[start:end]`` (the edited span of a text).

        >>> SpecialTokens({"<|x|>": 5}).could_occur("ab<|x|>cd", 3, 4)
        True
        """
        pat = self.regex(self.names)
        if pat is None:
            return False
        lo = max(0, start - self.longest + 1)
        hi = min(len(text), end + self.longest - 1)
        return pat.search(text, lo, hi) is not None
