"""Search a whole vocabulary: by substring, regular expression, bytes (hex) or id.

Substring and hex searches look inside each token's bytes (so they also find partial tokens);
a regular expression is matched (``search``, not a full match) against each token's text decoded
with U+FFFD for bytes that are not whole characters (and, for kinds whose vocabulary spells a token
otherwise, ``▁the`` or ``##ing``, against that spelling too). Results sort by id or by length (longest
first, then by id) and can be limited; the total number of matches is always reported.

>>> from tokscope.core.tokenizer.tokenizer import Tokenizer
>>> tok = Tokenizer("tiny", {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}, r"\\w+")
>>> [t.id for t in search_vocab(tok, substring="ab").tokens]
[2, 3]
>>> [t.id for t in search_vocab(tok, pattern="^a", sort="length").tokens]
[3, 2, 0]
"""

from __future__ import annotations

import threading
import time
from functools import partial
from bisect import bisect_right
from itertools import accumulate, compress, repeat
from operator import contains
from dataclasses import dataclass
from typing import Literal

import regex

from ..text.errors import CancelledError, TokscopeError, UnknownTokenError
from ..text.display import parse_hex
from ..patterns.guard import compile_checked, may_backtrack, timed_out
from ..tokenizer.tokenizer import Tokenizer
from ..text.types import Token

Sort = Literal["id", "length"]

#: above this many occurrences a substring search tests every entry instead of jumping from hit to hit
DENSE = 8192
#: seconds a regular expression search over the whole vocabulary may take
SEARCH_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class VocabResult:
    """The matching tokens (at most ``limit`` of them, in the asked order) and how many matched."""

    query: str
    kind: str
    tokens: tuple[Token, ...]
    total: int

    @property
    def truncated(self) -> bool:
        return self.total > len(self.tokens)


class _Table:
    """Every token of a vocabulary in id order with its bytes and decoded text (built once)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        if tokenizer.ranks:
            entries = [(rank, data) for data, rank in tokenizer.ranks.items()]
            entries += [(token_id, text.encode("utf-8")) for text, token_id in tokenizer.special_tokens.items()]
        else:
            # every id of the model and the added tokens, with the bytes each stands for in a
            # decoded text (``▁the`` is `` the``, ``##ing`` is ``ing``, ``<0xE2>`` that byte)
            ids = set(tokenizer.model.get_vocab().values()) | set(tokenizer.added_tokens.values())
            entries = [(token_id, tokenizer.token_bytes(token_id)) for token_id in ids]
        entries.sort(key=lambda item: item[0])  # id order, so hits found in order need no sorting
        #: the vocabulary's spelling of each entry where it is not its bytes decoded (kinds other
        #: than byte-level BPE from ranks); a regular expression is matched against both
        self.spellings = None if tokenizer.ranks else [tokenizer.token_str(token_id) for token_id, _ in entries]
        self.ids = [token_id for token_id, _ in entries]
        self.data = [data for _, data in entries]
        self.special = frozenset(tokenizer.special_tokens.values())
        # every token's bytes in one string, for substring search at C speed
        self.blob = b"".join(self.data)
        self.starts = list(accumulate((len(d) for d in self.data), initial=0))
        self._texts: list[str] | None = None
        self._by_bytes: dict[bytes, int] | None = None

    def by_bytes(self) -> dict[bytes, int]:
        """``bytes -> id`` of the first token (lowest id) that stands for them."""
        if self._by_bytes is None:
            found: dict[bytes, int] = {}
            for token_id, data in zip(reversed(self.ids), reversed(self.data)):
                found[data] = token_id
            self._by_bytes = found
        return self._by_bytes

    @property
    def texts(self) -> list[str]:
        """Every token's text (U+FFFD for partial bytes), decoded on first use (regex search)."""
        if self._texts is None:
            self._texts = [data.decode("utf-8", errors="replace") for data in self.data]
        return self._texts

    def occurrences(self, needle: bytes, limit: int) -> list[tuple[int, int]] | None:
        """``(entry index, offset in the entry)`` of every occurrence of ``needle`` (overlapping
        ones too) that lies inside one entry; ``None`` when there are more than ``limit``."""
        if not needle or self.blob.count(needle) > limit:
            return None
        blob, starts, size = self.blob, self.starts, len(needle)
        out = []
        pos = blob.find(needle)
        while pos != -1:
            i = bisect_right(starts, pos) - 1
            if pos + size <= starts[i + 1]:
                out.append((i, pos - starts[i]))
            pos = blob.find(needle, pos + 1)
        return out


def vocab_table(tokenizer: Tokenizer) -> _Table:
    """The search table of ``tokenizer`` (built once per tokenizer and kept with it; shared with
    ``merges``)."""
    return tokenizer.derived("vocab.table", lambda: _Table(tokenizer))


def compile_search(pattern: str) -> regex.Pattern[str]:
    """Compile a user's regular expression; a one-line :class:`TokscopeError` when it is invalid
    or passes the limits of :func:`tokscope.core.patterns.guard.check_pattern`.

    >>> compile_search("a(").pattern  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    tokscope.core.patterns.guard.PatternError: invalid regular expression 'a(': missing ) at position 2
    """
    return compile_checked(pattern, "regular expression")


def search_vocab(
    tokenizer: Tokenizer,
    *,
    substring: str | None = None,
    pattern: str | None = None,
    hex_bytes: str | None = None,
    token_id: int | None = None,
    sort: Sort = "id",
    limit: int | None = None,
    include_special: bool = True,
    cancel: threading.Event | None = None,
) -> VocabResult:
    """Search the vocabulary with exactly one of ``substring``, ``pattern`` (a regular
    expression), ``hex_bytes`` or ``token_id``; with none of them, list the whole vocabulary.

    Errors (invalid regex or hex, an unknown id, a negative limit) are :class:`TokscopeError`
    with a one-line message. ``cancel`` stops a long search with :class:`CancelledError`.
    """
    given = [k for k, v in (("substring", substring), ("regex", pattern), ("hex", hex_bytes), ("id", token_id))
             if v is not None]
    if len(given) > 1:
        raise TokscopeError(f"search by one thing at a time, not {' and '.join(given)}")
    if sort not in ("id", "length"):
        raise TokscopeError(f"cannot sort by {sort!r}; choose id or length")
    if limit is not None and limit < 0:
        raise TokscopeError(f"the limit must be 0 or more, not {limit}")
    table = vocab_table(tokenizer)
    ids, data, texts = table.ids, table.data, table.texts
    kind = given[0] if given else "all"
    if token_id is not None:
        if not tokenizer.has_token(token_id):
            raise UnknownTokenError(token_id, tokenizer.n_vocab)
        tokens = (tokenizer.token(token_id),)
        return VocabResult(str(token_id), "id", tokens, 1)
    if substring is not None:
        needle = substring.encode("utf-8", errors="surrogatepass")
        query = substring
        hits = _contains_hits(needle, table)
    elif hex_bytes is not None:

        needle = parse_hex(hex_bytes)
        query = needle.hex()
        hits = _contains_hits(needle, table)
    elif pattern is not None:
        compiled = compile_search(pattern)
        query = pattern
        hits = _regex_hits(compiled, texts, cancel)
        if table.spellings is not None:  # also the vocabulary's own spelling (▁the, ##ing, <0xE2>)
            hits = sorted(set(hits) | set(_regex_hits(compiled, table.spellings, cancel)))
    else:
        query = ""
        hits = list(range(len(ids)))
    if not include_special:
        hits = [i for i in hits if ids[i] not in table.special]
    if cancel is not None and cancel.is_set():
        raise CancelledError("the search was cancelled")
    if sort == "id":
        pass  # the table is in id order and every search returns hits in table order
    else:
        hits.sort(key=lambda i: (-len(data[i]), ids[i]))
    total = len(hits)
    if limit is not None:
        hits = hits[:limit]
    special = table.special
    tokens = tuple(
        Token(ids[i], data[i], None if ids[i] in special else ids[i], ids[i] in special) for i in hits
    )
    return VocabResult(query, kind, tokens, total)


def _contains_hits(needle: bytes, table: _Table) -> list[int]:
    """Indexes of the entries whose bytes contain ``needle``.

    Searches the joined bytes of all entries with ``bytes.find`` (C speed) and maps each hit back
    to its entry; a hit that runs over an entry's end is not a match, so the search goes on one
    byte later, and after a real match it skips to the next entry.
    """
    if not needle:
        return list(range(len(table.data)))
    blob, starts, size = table.blob, table.starts, len(needle)
    if blob.count(needle) > DENSE:  # most entries match: test each one in C instead
        return list(compress(range(len(table.data)), map(contains, table.data, repeat(needle))))
    hits: list[int] = []
    find = blob.find
    pos = find(needle)
    while pos != -1:
        i = bisect_right(starts, pos) - 1
        if pos + size <= starts[i + 1]:
            hits.append(i)
            pos = find(needle, starts[i + 1])
        else:
            pos = find(needle, pos + 1)
    return hits


def _regex_hits(compiled: regex.Pattern[str], texts: list[str], cancel: threading.Event | None) -> list[int]:
    """Indexes of the texts the pattern finds something in, in blocks so ``cancel`` is heard; the
    whole search has :data:`SEARCH_SECONDS`, checked between blocks, and a pattern that may
    backtrack without end (:func:`~tokscope.core.patterns.guard.may_backtrack`) also within each
    match: it is stopped with :class:`~tokscope.core.patterns.guard.PatternTimeoutError`."""
    hits: list[int] = []
    step = 1024
    deadline = time.monotonic() + SEARCH_SECONDS
    # a per-call timeout costs ten times a short match: only where the pattern's shape needs it
    guarded = may_backtrack(compiled.pattern)
    for base in range(0, len(texts), step):
        if cancel is not None and cancel.is_set():
            raise CancelledError("the search was cancelled")
        left = deadline - time.monotonic()
        if left <= 0:
            raise timed_out(compiled.pattern, "regular expression")
        search = partial(compiled.search, timeout=left) if guarded else compiled.search
        try:
            hits.extend(compress(range(base, base + step), map(search, texts[base : base + step])))
        except TimeoutError:
            raise timed_out(compiled.pattern, "regular expression") from None
    return hits