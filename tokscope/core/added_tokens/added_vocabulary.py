"""Hugging Face's added tokens: cut out of the text before the normalizer and pre-tokenizer.

:class:`AddedVocabulary` follows HF's ``AddedVocabulary::extract_and_normalize``: tokens with
``normalized=False`` are matched first on the raw text, then every remaining part is normalized
and the ``normalized=True`` tokens (in their normalized form) are matched on it. Matching is
leftmost-longest (HF's Aho-Corasick), and a match is then kept or dropped as HF's
``find_matches`` does: a ``single_word`` token needs no word character (the Rust ``regex`` crate's
``\\w``) on either side, ``lstrip``/``rstrip`` take the whitespace before/after into the token
(Unicode's ``White_Space``, or the characters given as ``strip``: llama.cpp strips only C's
ASCII ``isspace``, which its GGUF tokenizers pass).
A dropped match is not retried at a later start inside it (HF's iterator has moved past it).

GGUF files partition text as llama.cpp does instead (``longest_first=True``): each token in turn,
the longest first (by UTF-8 length; ties by id), cuts every occurrence out of the parts no token
has taken yet, left to right. The two agree unless two tokens' occurrences overlap: with ``ab``
and ``bcd``, ``abcd`` is ``ab`` + ``cd`` for HF and ``a`` + ``bcd`` for llama.cpp. A special token
that is not allowed is not matched at all there, so a shorter token inside it still is.

tokscope's special-token policy sits on top: :meth:`AddedVocabulary.split` matches a special
token only when it is in ``allowed_special``; any other special token is left in the text, as HF
does for all of them with ``encode_special_tokens=True``. Non-special added tokens always match.

>>> vocab = AddedVocabulary([AddedToken("<s>", 1, special=True, normalized=False)])
>>> [(p.text, tid) for p, tid in vocab.split("a<s>b", None, frozenset({"<s>"}))]
[('a', None), ('<s>', 1), ('b', None)]
>>> [(p.text, tid) for p, tid in vocab.split("a<s>b", None, frozenset())]
[('a<s>b', None)]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import regex

from ..text.errors import TokenizerFileError
from ..text.unicode import WHITESPACE, table
from ..text.normalized import NormalizedText


@dataclass(frozen=True, slots=True)
class AddedToken:
    """One entry of a ``tokenizer.json``'s ``added_tokens``.

    ``normalized`` defaults to ``not special``, as in HF.
    """

    content: str
    id: int
    special: bool = False
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool | None = None

    def __post_init__(self) -> None:
        if self.normalized is None:
            object.__setattr__(self, "normalized", not self.special)

    @classmethod
    def from_json(cls, obj: Any) -> AddedToken:
        """An entry of ``added_tokens``.

        >>> AddedToken.from_json({"id": 0, "content": "<pad>", "special": True})
        AddedToken(content='<pad>', id=0, special=True, single_word=False, lstrip=False, rstrip=False, normalized=False)
        """
        if not isinstance(obj, dict) or not isinstance(obj.get("content"), str) or not isinstance(obj.get("id"), int):
            raise TokenizerFileError("an added token needs a string 'content' and an integer 'id'")
        flags = {}
        for name in ("special", "single_word", "lstrip", "rstrip", "normalized"):
            value = obj.get(name)
            if value is not None and not isinstance(value, bool):
                raise TokenizerFileError(f"added token {obj['content']!r}: {name!r} is not a bool")
            if value is not None:
                flags[name] = value
        return cls(obj["content"], obj["id"], **flags)


class _Trie:
    """Leftmost-longest matching of a set of strings (HF's ``LeftmostLongest`` Aho-Corasick), as
    one regex shaped like a trie: the strings that share a prefix share its branch, and a branch
    that may end tries to go on first. Thousands of tokens (Llama 4 has 2,048 that all start with
    ``<|``) then compile and scan at the speed of one short pattern, where a plain alternation of
    the strings tries every string at every position.

    >>> t = _Trie({w: w for w in ["ab", "abc", "b"]})
    >>> [(s, e) for s, e, _ in t.find("abcab b")]
    [(0, 3), (3, 5), (6, 7)]
    """

    __slots__ = ("tokens", "_regex")

    def __init__(self, patterns: dict[str, Any]) -> None:
        self.tokens = patterns
        self._regex: Any = None

    @property
    def _pattern(self) -> Any:
        """The trie's regex (None for no strings), made on first use: a load whose text never
        reaches the added tokens does not build it."""
        if self._regex is None and self.tokens:
            self._regex = regex.compile(trie_regex(self.tokens))
        return self._regex

    def __reduce__(self):
        return _Trie, (self.tokens,)

    def find(self, text: str) -> list[tuple[int, int, AddedToken]]:
        if self._pattern is None or not text:
            return []
        tokens = self.tokens
        return [(m.start(), m.end(), tokens[m.group()]) for m in self._pattern.finditer(text)]

    def occurring(self, text: str) -> set[str]:
        """Every string of the trie that occurs anywhere in ``text``, overlaps included: the
        longest one at each start, and those of its prefixes that are strings of the trie.

        >>> sorted(_Trie({w: w for w in ["ab", "abc", "bcd", "x"]}).occurring("abcd"))
        ['ab', 'abc', 'bcd']
        """
        if self._pattern is None or not text:
            return set()
        tokens = self.tokens
        found: set[str] = set()
        for match in self._pattern.finditer(text, overlapped=True):
            longest = match.group()
            if longest in found:
                continue
            found.add(longest)
            found.update(p for p in (longest[:k] for k in range(1, len(longest))) if p in tokens)
        return found


def trie_regex(words: Iterable[str]) -> str:
    """A regex that matches the longest of ``words`` at the leftmost place (see :class:`_Trie`).

    >>> trie_regex(["<s>", "</s>", "<unk>"])
    '<(?:/s>|s>|unk>)'
    """
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for c in word:
            node = node.setdefault(c, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = []
        for c, child in sorted(node.items()):
            if not c:
                continue
            run = [c]  # a chain of single, non-final children is one literal
            while len(child) == 1 and "" not in child:
                (c, child), = child.items()
                run.append(c)
            branches.append(regex.escape("".join(run)) + emit(child))
        if not branches:
            return ""
        if len(branches) == 1 and "" not in node:
            return branches[0]
        return "(?:" + "|".join(branches) + (")?" if "" in node else ")")

    return emit(root)


def _is_word(c: str) -> bool:
    return c in table("RX_WORD")


class AddedVocabulary:
    """The added tokens of a tokenizer, matched as HF matches them (see the module).

    >>> mask = AddedToken("<m>", 5, special=True, normalized=False, lstrip=True)
    >>> [(p.text, i) for p, i in AddedVocabulary([mask]).split("a\u3000<m>", None, frozenset({"<m>"}))]
    [('a', None), ('\u3000<m>', 5)]
    >>> ascii_only = AddedVocabulary([mask], strip=frozenset(" \t"))
    >>> [(p.text, i) for p, i in ascii_only.split("a\u3000 <m>", None, frozenset({"<m>"}))]
    [('a\u3000', None), (' <m>', 5)]
    """

    def __init__(self, tokens: Iterable[AddedToken], normalizer: Any = None, *,
                 strip: frozenset[str] = WHITESPACE, longest_first: bool = False) -> None:
        self.tokens: tuple[AddedToken, ...] = tuple(t for t in tokens if t.content)
        self.normalizer = normalizer
        #: the characters ``lstrip``/``rstrip`` take beside a token
        self.strip = strip
        #: llama.cpp's partition (see the module) for the tokens matched on the raw text
        self.longest_first = longest_first
        raw: dict[str, AddedToken] = {}
        normalized: dict[str, AddedToken] = {}
        #: ``id -> the token as Hugging Face's ``id_to_token`` and ``decode`` write it``: a
        #: normalized token in its normalized form (``"Wörld"`` under a lowercasing normalizer is
        #: ``"wörld"``), any other as its content
        self.strings: dict[int, str] = {}
        for t in self.tokens:
            if t.normalized:
                key = normalizer.normalize_str(t.content) if normalizer is not None else t.content
                target = normalized
            else:
                key = t.content
                target = raw
            self.strings[t.id] = key
            if key in target and target[key] != t:
                raise TokenizerFileError(f"added tokens {target[key].content!r} and {t.content!r} match the same text {key!r}")
            target[key] = t
        self._raw = _Trie(raw)
        self._normalized = _Trie(normalized)
        self.special = frozenset(t.content for t in self.tokens if t.special)

    @classmethod
    def from_json(cls, items: Any, normalizer: Any = None, *, strip: frozenset[str] = WHITESPACE) -> AddedVocabulary:
        """The ``added_tokens`` list of a ``tokenizer.json``."""
        if items is None:
            items = []
        if not isinstance(items, list):
            raise TokenizerFileError("'added_tokens' must be a list")
        return cls([AddedToken.from_json(item) for item in items], normalizer, strip=strip)

    # ----- HF's find_matches -------------------------------------------------------------------

    def _find(self, text: str, trie: _Trie, allowed_special: frozenset[str]) -> list[tuple[int, int, AddedToken | None]]:
        """HF's ``find_matches``: ``(start, end, token or None)`` pieces of ``text``."""
        if not text:
            return [(0, 0, None)]
        if self.longest_first and trie is self._raw:
            return self._find_longest_first(text, allowed_special)
        out: list[tuple[int, int, AddedToken | None]] = []
        start_offset = 0
        n = len(text)
        space = self.strip
        for start, stop, token in trie.find(text):
            if token.special and token.content not in allowed_special:
                continue
            if token.single_word:
                start_space = start == 0 or not _is_word(text[start - 1])
                stop_space = stop == n or not _is_word(text[stop])
                if not (start_space and stop_space):
                    continue
            if token.lstrip:
                k = start
                while k > 0 and text[k - 1] in space:
                    k -= 1
                start = max(k, start_offset)
            if token.rstrip:
                while stop < n and text[stop] in space:
                    stop += 1
            if start_offset < start:
                out.append((start_offset, start, None))
            out.append((start, stop, token))
            start_offset = stop
        if start_offset != n:
            out.append((start_offset, n, None))
        return out

    def _find_longest_first(self, text: str, allowed_special: frozenset[str]) -> list[tuple[int, int, AddedToken | None]]:
        """llama.cpp's ``tokenizer_st_partition``: ``(start, end, token or None)`` pieces of
        ``text``. A token's stripped whitespace is counted in its piece (llama.cpp drops it), so
        the pieces still cover the text.

        >>> toks = [AddedToken("ab", 1, normalized=False), AddedToken("bcd", 2, normalized=False)]
        >>> llama_cpp, hf = AddedVocabulary(toks, longest_first=True), AddedVocabulary(toks)
        >>> [(p.text, i) for p, i in llama_cpp.split("abcd", None)]
        [('a', None), ('bcd', 2)]
        >>> [(p.text, i) for p, i in hf.split("abcd", None)]
        [('ab', 1), ('cd', None)]
        """
        tokens = self._raw.tokens
        order = [tokens[c] for c in self._raw.occurring(text)]
        order = [t for t in order if not t.special or t.content in allowed_special]
        n = len(text)
        if not order:
            return [(0, n, None)]
        order.sort(key=lambda t: (-len(t.content.encode("utf-8", "surrogatepass")), t.id))
        space = self.strip
        parts: list[tuple[int, int, AddedToken | None]] = [(0, n, None)]
        for token in order:
            content = token.content
            size = len(content)
            cut: list[tuple[int, int, AddedToken | None]] = []
            for part in parts:
                start, end, taken = part
                found = text.find(content, start, end) if taken is None else -1
                if found < 0:
                    cut.append(part)
                    continue
                while found >= 0:
                    left = found
                    if token.lstrip:
                        while left > start and text[left - 1] in space:
                            left -= 1
                    if left > start:
                        cut.append((start, left, None))
                    stop = found + size
                    if token.rstrip:
                        while stop < end and text[stop] in space:
                            stop += 1
                    cut.append((left, stop, token))
                    start = stop
                    found = text.find(content, start, end)
                if start < end:
                    cut.append((start, end, None))
            parts = cut
        return parts

    # ----- extract_and_normalize -----------------------------------------------------------------

    def split(
        self, text: str, normalizer: Any, allowed_special: frozenset[str] = frozenset()
    ) -> list[tuple[NormalizedText, int | None]]:
        """``text`` cut into added tokens (``(piece, id)``) and ordinary parts (``(normalized
        part, None)``, aligned to ``text``), in order. Special tokens not in
        ``allowed_special`` stay in the text. An ordinary part that normalizes to nothing is
        dropped, as HF drops it; an empty ``text`` gives one empty part.

        ``normalizer`` (a :class:`~.pipeline.Normalizer` or ``None``) must be the one the
        vocabulary was built with when there are normalized added tokens.
        """
        if not text:
            empty = NormalizedText.identity("")
            return [(normalizer.normalize(empty) if normalizer is not None else empty, None)]
        out: list[tuple[NormalizedText, int | None]] = []
        whole = NormalizedText.identity(text)
        for s, e, token in self._find(text, self._raw, allowed_special):
            if s >= e and token is None:
                continue
            part = whole.slice(s, e)
            if token is not None:
                out.append((part, token.id))
                continue
            if normalizer is not None:
                part = normalizer.normalize(part)
            t = part.text
            for s2, e2, token2 in self._find(t, self._normalized, allowed_special):
                if s2 >= e2 and token2 is None:
                    continue
                out.append((part.slice(s2, e2), token2.id if token2 is not None else None))
        return out

    def split_str(
        self, text: str, normalizer: Any, allowed_special: frozenset[str] = frozenset()
    ) -> list[tuple[str, int | None, int]]:
        """:meth:`split` without the alignment (the ids-only fast path): ``(text, id, offset)``
        with the same texts and ids, where ``offset`` is where the part starts in ``text`` when
        there is no normalizer (with one, where the raw part it was normalized from starts).

        >>> vocab = AddedVocabulary([AddedToken("<s>", 1, special=True, normalized=False)])
        >>> vocab.split_str("a<s>b", None, frozenset({"<s>"}))
        [('a', None, 0), ('<s>', 1, 1), ('b', None, 4)]
        """
        if not text:
            return [(normalizer.normalize_str("") if normalizer is not None else "", None, 0)]
        raw, normalized = self._raw._pattern, self._normalized._pattern
        if raw is None or raw.search(text) is None:
            # no added token in the raw text: one part, unless one occurs once it is normalized
            part = normalizer.normalize_str(text) if normalizer is not None else text
            if normalized is None or normalized.search(part) is None:
                return [(part, None, 0)] if part else []
        out: list[tuple[str, int | None, int]] = []
        for s, e, token in self._find(text, self._raw, allowed_special):
            if s >= e and token is None:
                continue
            part = text[s:e]
            if token is not None:
                out.append((part, token.id, s))
                continue
            if normalizer is not None:
                part = normalizer.normalize_str(part)
            if self._normalized._pattern is None:
                if part:
                    out.append((part, None, s))
                continue
            for s2, e2, token2 in self._find(part, self._normalized, allowed_special):
                if s2 >= e2 and token2 is None:
                    continue
                out.append((part[s2:e2], token2.id if token2 is not None else None, s + s2))
        return out

    def find_special(self, text: str, normalizer: Any, candidates: Iterable[str]) -> str | None:
        """The first special token of ``candidates`` that :meth:`split` would match in ``text``
        if it were allowed (``None`` when none would)."""
        wanted = frozenset(candidates) & self.special
        if not wanted or not any(c in text for c in wanted) and not self._normalized.tokens:
            return None
        for _, tid in self.split(text, normalizer, wanted):
            if tid is not None:
                token = self._by_id().get(tid)
                if token is not None and token.special and token.content in wanted:
                    return token.content
        return None

    def _by_id(self) -> dict[int, AddedToken]:
        return {t.id: t for t in self.tokens}
