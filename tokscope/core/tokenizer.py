"""A byte-level BPE tokenizer: a pattern, mergeable ranks and special tokens.

This is the one tokenizer every part of tokscope uses. It reproduces tiktoken's behaviour token
for token (including its special-token checks and its handling of lone surrogates), and adds what
a token explorer needs: pieces with offsets, chunks, parents recovered from ranks.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Literal

import regex

from .bpe import merge
from .errors import DisallowedSpecialError, UnknownTokenError
from .types import Chunk, Parents, Piece, Token, is_continuation

AllowedSpecial = Literal["all"] | Collection[str]
DisallowedSpecial = Literal["all"] | Collection[str]

#: Entries kept in the chunk cache before it is emptied (bounded memory on endless input).
CHUNK_CACHE_LIMIT = 200_000

#: Characters of text kept in the segment cache (whole lines' ids, for line-safe patterns) before
#: it is emptied; segments longer than SEGMENT_CACHE_MAX_LEN are never cached.
SEGMENT_CACHE_CHARS = 8_000_000
SEGMENT_CACHE_MAX_LEN = 200_000


def fix_surrogates(text: str) -> str:
    """Replace lone surrogates with U+FFFD the way tiktoken does (via a UTF-16 round trip).

    >>> fix_surrogates("a\\ud800b")
    'a�b'
    >>> fix_surrogates("plain")
    'plain'
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


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
def _pinned_table() -> dict[int, str]:
    """``code point -> Unicode 16.0 category`` for the code points whose category moved."""
    table: dict[int, str] = {}
    for item in _PINNED_CATEGORIES.split():
        span, _, category = item.partition(":")
        first, _, last = span.partition("-")
        for cp in range(int(first, 16), int(last or first, 16) + 1):
            table[cp] = category
    return table


@functools.cache
def _by_category() -> dict[str, frozenset[int]]:
    groups: dict[str, set[int]] = {}
    for cp, category in _pinned_table().items():
        groups.setdefault(category, set()).add(cp)
    return {category: frozenset(cps) for category, cps in groups.items()}


@functools.cache
def _property_members(name: str) -> tuple[frozenset[int], frozenset[int]]:
    """Among the moved code points: those the installed ``regex`` puts in ``\\p{name}``, and those
    :data:`PATTERN_UNICODE_VERSION` does."""
    chars = "".join(map(chr, _pinned_table()))
    installed = frozenset(ord(m.group()) for m in regex.finditer(r"\p{%s}" % name, chars))
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

#: Where a line-safe pattern's text may be cut into segments (stdlib ``\s`` is a superset of
#: tiktoken's, so this never cuts where tiktoken's whitespace would continue).
_SEGMENT_BREAK = re.compile(r"\n(?=[^\s/])")


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

    __slots__ = ("pattern", "plain", "ascii", "line_safe", "_pinned", "_suspect", "_lock")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.plain = regex.compile(translate_pattern(pattern, pin_unicode=False)[0])
        #: the stdlib-``re`` twin used on ASCII text (``None`` when the pattern cannot be translated)
        self.ascii: re.Pattern[str] | None = None
        translated = ascii_pattern(pattern)
        if translated is not None:
            try:
                self.ascii = re.compile(translated, re.ASCII)
            except re.error:
                self.ascii = None
        #: True for patterns whose text may be cut at :data:`_SEGMENT_BREAK` (see LINE_SAFE_PATTERNS)
        self.line_safe = pattern in LINE_SAFE_PATTERNS
        # the pinned translation is built on first use with non-ASCII text (it costs ~0.1 s)
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

    def finditer(self, text: str, pos: int | None = None, endpos: int | None = None) -> Iterator[regex.Match[str]]:
        return self.for_text(text, pos, endpos).finditer(text, pos, endpos)

    def findall(self, text: str, pos: int | None = None, endpos: int | None = None) -> list[str]:
        return self.for_text(text, pos, endpos).findall(text, pos, endpos)

    def split(self, text: str) -> list[str]:
        """All the chunks of ``text`` (the fastest way: the ASCII engine on ASCII text).

        >>> compile_pattern(r"\\p{L}+|\\s+|.").split("ab cé")
        ['ab', ' ', 'cé']
        """
        if self.ascii is not None and text.isascii():
            return self.ascii.findall(text)
        return self.for_text(text).findall(text)

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

    def match(self, text: str, pos: int | None = None, endpos: int | None = None) -> regex.Match[str] | None:
        return self.for_text(text, pos, endpos).match(text, pos, endpos)

    def fullmatch(self, text: str, pos: int | None = None, endpos: int | None = None) -> regex.Match[str] | None:
        return self.for_text(text, pos, endpos).fullmatch(text, pos, endpos)

    def search(self, text: str, pos: int | None = None, endpos: int | None = None) -> regex.Match[str] | None:
        return self.for_text(text, pos, endpos).search(text, pos, endpos)


@functools.lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> ChunkPattern:
    """Compile a pre-tokenization pattern (tiktoken's syntax: possessive quantifiers, Unicode
    properties) so that it splits text exactly as tiktoken does (see :func:`translate_pattern`)."""
    return ChunkPattern(pattern)


class Tokenizer:
    """Byte-level BPE from ``ranks`` (``bytes -> rank``), a ``pattern`` and ``special_tokens``.

    For every tokenizer tokscope knows, a mergeable token's id is its rank. The object is safe to
    share between threads: its caches only grow by whole entries.
    """

    def __init__(
        self,
        name: str,
        ranks: Mapping[bytes, int],
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        *,
        n_vocab: int | None = None,
    ) -> None:
        self.name = name
        self.pattern = pattern
        self._ranks = ranks if isinstance(ranks, dict) else dict(ranks)
        self.special_tokens: dict[str, int] = dict(special_tokens or {})
        self._pat = compile_pattern(pattern)
        self._decoder: dict[int, bytes] | None = None
        self._special_by_id = {v: k for k, v in self.special_tokens.items()}
        self._special_res: dict[frozenset[str], regex.Pattern[str]] = {}
        self._chunk_cache: dict[str, tuple[int, ...]] = {}
        self._segment_cache: dict[str, list[int]] = {}
        self._segment_cache_chars = 0
        self._parents: dict[int, Parents | None] = {}
        self._lock = threading.Lock()
        max_rank = max(self._ranks.values(), default=-1)
        max_special = max(self.special_tokens.values(), default=-1)
        self.max_token_value = max(max_rank, max_special)
        self.n_vocab = n_vocab if n_vocab is not None else self.max_token_value + 1

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r} n_vocab={self.n_vocab}>"

    # ----- vocabulary -------------------------------------------------------------------------

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """The mergeable ranks (read-only view by convention; do not mutate)."""
        return self._ranks

    @property
    def n_merges(self) -> int:
        """How many mergeable tokens are not single bytes."""
        return sum(1 for b in self._ranks if len(b) > 1)

    @property
    def special_tokens_set(self) -> frozenset[str]:
        return frozenset(self.special_tokens)

    def _decoder_map(self) -> dict[int, bytes]:
        if self._decoder is None:
            with self._lock:
                if self._decoder is None:
                    decoder = {rank: token for token, rank in self._ranks.items()}
                    for text, token_id in self.special_tokens.items():
                        decoder[token_id] = text.encode("utf-8")
                    self._decoder = decoder
        return self._decoder

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token; :class:`UnknownTokenError` names an id not in the vocabulary."""
        try:
            return self._decoder_map()[token_id]
        except (KeyError, TypeError):
            raise UnknownTokenError(token_id, self.n_vocab) from None

    def has_token(self, token_id: int) -> bool:
        return token_id in self._decoder_map()

    def token(self, token_id: int) -> Token:
        """The vocabulary entry for ``token_id``."""
        data = self.token_bytes(token_id)
        if token_id in self._special_by_id:
            return Token(token_id, data, None, special=True)
        return Token(token_id, data, token_id)

    def rank_of(self, data: bytes) -> int | None:
        """The rank of ``data`` when it is a mergeable token, else ``None``."""
        return self._ranks.get(data)

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_by_id

    def parents(self, token_id: int) -> Parents | None:
        """The two tokens whose merge made ``token_id``, recovered from the ranks on demand.

        Runs BPE on the token's own bytes allowing only lower ranks; a proper merge leaves exactly
        two parts. Returns ``None`` for single bytes, special tokens, and (rarely, in foreign
        vocabularies) tokens that no single merge of lower-ranked tokens can build.
        """
        cached = self._parents.get(token_id, False)
        if cached is not False:
            return cached  # type: ignore[return-value]
        data = self.token_bytes(token_id)
        result: Parents | None = None
        if token_id not in self._special_by_id and len(data) > 1:
            rank = self._ranks[data]
            parts = merge(data, self._ranks, max_rank=rank)
            if len(parts) == 2:
                result = Parents(self._ranks[parts[0]], self._ranks[parts[1]])
        self._parents[token_id] = result
        return result

    # ----- chunks -----------------------------------------------------------------------------

    def _special_regex(self, tokens: frozenset[str]) -> regex.Pattern[str]:
        pat = self._special_res.get(tokens)
        if pat is None:
            # longest first so that one special that prefixes another cannot shadow it
            alternatives = sorted(tokens, key=lambda t: (-len(t), t))
            pat = regex.compile("|".join(regex.escape(t) for t in alternatives))
            self._special_res[tokens] = pat
        return pat

    def check_special(self, text: str, disallowed: Collection[str]) -> None:
        """Raise :class:`DisallowedSpecialError` if ``text`` contains one of ``disallowed``."""
        if disallowed:
            found = self._special_regex(frozenset(disallowed)).search(text)
            if found:
                raise DisallowedSpecialError(found.group())

    def _segments(
        self, text: str, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> Iterator[tuple[int, int, bool]]:
        """Split ``text`` into ordinary spans and allowed special tokens: ``(start, end, special)``."""
        allowed = self.special_tokens_set if allowed_special == "all" else frozenset(allowed_special)
        unknown = allowed - self.special_tokens_set
        if unknown:
            raise DisallowedSpecialError(
                sorted(unknown)[0], hint="{token!r} is not a special token of " + self.name
            )
        disallowed = (
            self.special_tokens_set - allowed if disallowed_special == "all" else frozenset(disallowed_special)
        )
        self.check_special(text, disallowed)
        pos = 0
        if allowed:
            for found in self._special_regex(allowed).finditer(text):
                if found.start() > pos:
                    yield pos, found.start(), False
                yield found.start(), found.end(), True
                pos = found.end()
        if pos < len(text) or not text:
            yield pos, len(text), False

    def chunks(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = (),
    ) -> list[Chunk]:
        """The pre-tokenization chunks of ``text`` with character offsets.

        By default special tokens are treated as ordinary text (no check); pass the same special
        arguments as :meth:`encode` to split them out as special chunks.
        """
        text = fix_surrogates(text)
        out: list[Chunk] = []
        for start, end, special in self._segments(text, allowed_special, disallowed_special):
            if special:
                out.append(Chunk(text[start:end], start, end, special=True))
                continue
            for found in self._pat.finditer(text, start, end):
                out.append(Chunk(found.group(), found.start(), found.end()))
        return out

    # ----- encoding ---------------------------------------------------------------------------

    def encode_chunk(self, chunk: str) -> tuple[int, ...]:
        """The ids of one chunk (cached; the whole chunk as one token is the fast path)."""
        ids = self._chunk_cache.get(chunk)
        if ids is not None:
            return ids
        data = chunk.encode("utf-8")
        rank = self._ranks.get(data)
        if rank is not None:
            ids = (rank,)
        else:
            ranks = self._ranks
            ids = tuple(ranks[part] for part in merge(data, ranks))
        cache = self._chunk_cache
        if len(cache) >= CHUNK_CACHE_LIMIT:
            cache.clear()
        cache[chunk] = ids
        return ids

    def encode_bytes_chunk(self, data: bytes, max_rank: int | None = None) -> list[int]:
        """The ids of one chunk given as bytes, optionally using only merges below ``max_rank``."""
        ranks = self._ranks
        return [ranks[part] for part in merge(data, ranks, max_rank=max_rank)]

    def encode_ordinary(self, text: str, *, max_rank: int | None = None) -> list[int]:
        """Encode ignoring special tokens entirely (they are ordinary text here).

        The fast path: for line-safe patterns the text is cut into segments at line breaks that
        no chunk crosses and each segment's ids are cached; ASCII segments are chunked by the
        stdlib ``re`` twin of the pattern; each chunk's ids come from the chunk cache, the whole
        chunk as one token, or the merge loop. The ids are the same as :meth:`encode_chunk` gives
        chunk by chunk (the parity tests hold it to tiktoken's).
        """
        text = fix_surrogates(text)
        if max_rank is not None:
            out: list[int] = []
            for chunk in self._pat.findall(text):
                out.extend(self.encode_bytes_chunk(chunk.encode("utf-8"), max_rank))
            return out
        pat = self._pat
        if not pat.line_safe or len(text) < 256:
            return self._encode_text(text)
        out = []
        extend = out.extend
        cache = self._segment_cache
        for segment in pat.segments(text):
            ids = cache.get(segment)
            if ids is None:
                ids = self._encode_text(segment)
                if len(segment) <= SEGMENT_CACHE_MAX_LEN:
                    if self._segment_cache_chars > SEGMENT_CACHE_CHARS:
                        cache.clear()
                        self._segment_cache_chars = 0
                    cache[segment] = ids
                    self._segment_cache_chars += len(segment)
            extend(ids)
        return out

    def _encode_text(self, text: str) -> list[int]:
        """The ids of ``text`` (surrogates already fixed, no specials), chunk by chunk."""
        out: list[int] = []
        extend = out.extend
        append = out.append
        cache = self._chunk_cache
        ranks = self._ranks
        for chunk in self._pat.split(text):
            ids = cache.get(chunk)
            if ids is not None:
                extend(ids)
                continue
            rank = ranks.get(chunk.encode("utf-8"))
            if rank is not None:
                append(rank)
                if len(cache) >= CHUNK_CACHE_LIMIT:
                    cache.clear()
                cache[chunk] = (rank,)
            else:
                extend(self.encode_chunk(chunk))
        return out

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = "all",
        max_rank: int | None = None,
    ) -> list[int]:
        """Encode with tiktoken's special-token semantics.

        Special tokens found in ``text`` raise :class:`DisallowedSpecialError` unless allowed
        (``allowed_special`` a set of token strings or ``"all"``) or the check is disabled
        (``disallowed_special=()``, which encodes them as ordinary text).
        """
        text = fix_surrogates(text)
        out: list[int] = []
        for start, end, special in self._segments(text, allowed_special, disallowed_special):
            if special:
                out.append(self.special_tokens[text[start:end]])
            elif end > start:
                out.extend(self.encode_ordinary(text[start:end], max_rank=max_rank))
        return out

    def pieces(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = "all",
        max_rank: int | None = None,
    ) -> list[Piece]:
        """Encode and return each token with its bytes and offsets (see :class:`Piece`)."""
        text = fix_surrogates(text)
        out: list[Piece] = []
        byte_pos = 0
        char_pos = 0
        for start, end, special in self._segments(text, allowed_special, disallowed_special):
            if start > char_pos:
                byte_pos += len(text[char_pos:start].encode("utf-8"))
                char_pos = start
            if special:
                data = text[start:end].encode("utf-8")
                out.append(
                    Piece(self.special_tokens[text[start:end]], data, start, end, byte_pos,
                          byte_pos + len(data), special=True)
                )
                byte_pos += len(data)
                char_pos = end
                continue
            for found in self._pat.finditer(text, start, end):
                if found.start() > char_pos:
                    byte_pos += len(text[char_pos : found.start()].encode("utf-8"))
                chunk = found.group()
                if max_rank is None:
                    ids: Iterable[int] = self.encode_chunk(chunk)
                else:
                    ids = self.encode_bytes_chunk(chunk.encode("utf-8"), max_rank)
                byte_pos = self._append_chunk_pieces(out, ids, found.start(), byte_pos)
                char_pos = found.end()
        return out

    def chunk_pieces(self, chunk: str, char_start: int, byte_start: int) -> list[Piece]:
        """The pieces of one chunk placed at the given offsets (for incremental re-tokenization)."""
        out: list[Piece] = []
        self._append_chunk_pieces(out, self.encode_chunk(chunk), char_start, byte_start)
        return out

    def _append_chunk_pieces(self, out: list[Piece], ids: Iterable[int], char_start: int, byte_pos: int) -> int:
        decoder = self._decoder_map()
        chars = char_start  # characters begun before the current byte
        for token_id in ids:
            data = decoder[token_id]
            lead = is_continuation(data[0])
            begun = sum(1 for b in data if not 0x80 <= b < 0xC0)
            start = chars - 1 if lead else chars
            chars += begun
            end = chars
            partial = lead or _ends_inside(data)
            out.append(Piece(token_id, data, start, end, byte_pos, byte_pos + len(data), partial))
            byte_pos += len(data)
        return byte_pos

    # ----- decoding ---------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Join the tokens' bytes; an id not in the vocabulary raises :class:`UnknownTokenError`."""
        decoder = self._decoder_map()
        try:
            return b"".join([decoder[i] for i in ids])
        except (KeyError, TypeError):
            for i in ids:
                if i not in decoder:
                    raise UnknownTokenError(i, self.n_vocab) from None
            raise

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode to text, replacing bytes that are not valid UTF-8 with U+FFFD by default."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)


def _ends_inside(data: bytes) -> bool:
    """True when ``data`` stops before the end of its last character (or is not valid UTF-8).

    >>> _ends_inside("é".encode()[:1]), _ends_inside(b"ab")
    (True, False)
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False
