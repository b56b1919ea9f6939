"""Why does a text split like that? Chunks, the merge replay, "why not one token?", variants.

For each pre-tokenization *chunk* of a text this module says which part of the *pattern* matched
it (letters, digits, punctuation, whitespace, contraction), replays the byte-pair merges step by
step exactly as :func:`tokscope.core.models.ranks.merge` performs them (lowest rank first, leftmost on
ties), explains why the chunk is not a single token, and encodes the same word in a few context
variants (leading space, capitalised, upper case, ...) because those are different tokens.

The rank cut-off is the core's ``max_rank``: only tokens whose rank is *below* ``max_rank`` may be
built by a merge (single bytes are always available). With the OpenAI encodings ranks 0..255 are
the single bytes, so ``max_rank=256 + N`` keeps exactly the first N merges; ``max_rank=0`` leaves
single bytes only and ``max_rank=None`` (or anything above the highest rank) is the full vocabulary.

>>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}
>>> steps, parts = replay(b"abb", ranks)
>>> [(s.left, s.right, s.rank) for s in steps], parts
([(b'a', b'b', 2), (b'ab', b'b', 3)], (b'abb',))
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

import regex

from ..text.display import quoted
from ..text.errors import CancelledError, TokscopeError
from ..patterns.guard import TRUSTED_PATTERNS
from ..tokenizer.tokenizer import Tokenizer, fix_surrogates
from ..patterns.tiktoken_syntax import compile_pattern
from ..text.types import Chunk, Parents

#: Chunks longer than this many bytes are explained without the step-by-step replay (the replay
#: lists every adjacent pair at every step, which grows with the square of the length).
REPLAY_BYTE_LIMIT = 4096

Category = Literal["letters", "digits", "punctuation", "whitespace", "contraction", "special", "other"]

#: The pre-tokenization patterns of the known encodings, each with the category of every one of
#: its top-level alternatives (in order). Saved tokenizers that reuse one of them get the same.
_GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
    r"""\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_WS4 = ("whitespace",) * 4
KNOWN_PATTERNS: dict[str, tuple[str, ...]] = {
    _GPT2_PATTERN: ("contraction", "letters", "digits", "punctuation", "whitespace", "whitespace", "whitespace"),
    _CL100K_PATTERN: ("contraction", "letters", "digits", "punctuation", *_WS4),
    _O200K_PATTERN: ("letters", "letters", "digits", "punctuation", "whitespace", "whitespace", "whitespace"),
}


# ----- plain data ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """An adjacent pair of parts at one step: its position (index of the left part), the two
    parts, the rank of their concatenation (``None`` when it is not a token) and whether the
    merge is allowed (a token below the cut-off)."""

    position: int
    left: bytes
    right: bytes
    rank: int | None
    allowed: bool


@dataclass(frozen=True, slots=True)
class MergeStep:
    """One merge of the replay: the parts before it, every adjacent pair with its rank, the pair
    chosen (the lowest allowed rank, leftmost on ties) and the parts after it.

    ``number`` counts from 1; ``position`` is the index of the chosen pair's left part.
    """

    number: int
    before: tuple[bytes, ...]
    candidates: tuple[Candidate, ...]
    position: int
    left: bytes
    right: bytes
    rank: int
    after: tuple[bytes, ...]

    @property
    def merged(self) -> bytes:
        return self.left + self.right


@dataclass(frozen=True, slots=True)
class MissingMerge:
    """An adjacent pair of final parts that BPE could not join: ``rank`` is ``None`` when the
    joined bytes are no token, else the token's rank, which the cut-off excluded."""

    left: bytes
    right: bytes
    rank: int | None


@dataclass(frozen=True, slots=True)
class WhyNotOneToken:
    """Why a chunk is (or is not) a single token.

    ``token`` is the id whose bytes equal the chunk's bytes (``None`` when no token has them).
    ``blocked_by_cutoff``: that token exists but its rank is at or above the cut-off.
    ``unreachable``: that token exists but merging the chunk's bytes never builds it.
    ``missing`` lists the adjacent pairs of final parts that no allowed merge joins;
    ``longest_prefix`` is the longest prefix of the chunk's bytes that is a token.
    ``summary`` is one plain sentence saying all that.
    """

    one_token: bool
    token: int | None
    token_rank: int | None
    blocked_by_cutoff: bool
    unreachable: bool
    parents: Parents | None
    missing: tuple[MissingMerge, ...]
    longest_prefix: bytes
    longest_prefix_id: int | None
    summary: str


@dataclass(frozen=True, slots=True)
class Variant:
    """The chunk's word in another context (``label`` says which) and how it encodes."""

    label: str
    text: str
    tokens: tuple[int, ...]
    parts: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class ChunkExplanation:
    """Everything about one chunk: which pattern alternative matched it, its byte offsets, the
    tokens it became, the merge replay and the final parts, why it is not one token, and the
    variants. ``replayed`` is False when the chunk was too long to replay step by step
    (see :data:`REPLAY_BYTE_LIMIT`); its tokens and parts are still exact."""

    chunk: Chunk
    category: str
    alternative: int | None
    byte_start: int
    byte_end: int
    tokens: tuple[int, ...]
    parts: tuple[bytes, ...]
    steps: tuple[MergeStep, ...]
    replayed: bool
    why: WhyNotOneToken | None
    variants: tuple[Variant, ...]

    @property
    def bytes(self) -> bytes:
        return b"".join(self.parts)


@dataclass(frozen=True, slots=True)
class Explanation:
    """An explained text: its chunks in order; ``tokens`` is the whole encoding."""

    encoding: str
    text: str
    max_rank: int | None
    chunks: tuple[ChunkExplanation, ...]

    @property
    def tokens(self) -> tuple[int, ...]:
        return tuple(t for c in self.chunks for t in c.tokens)


# ----- the pattern's alternatives --------------------------------------------------------------


def split_alternatives(pattern: str) -> list[str] | None:
    """Split a regular expression at its top-level ``|`` (outside groups and character classes).

    Returns ``None`` when the pattern cannot be split safely (unbalanced, or it uses numbered
    back-references that wrapping the alternatives in groups would renumber).

    >>> split_alternatives(r"a|(b|c)|[|]")
    ['a', '(b|c)', '[|]']
    """
    parts: list[str] = []
    depth = 0
    in_class = False
    start = 0
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 < n and pattern[i + 1].isdigit() and not in_class:
                return None  # a back-reference such as \1
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            # a ']' right after '[' or '[^' is a literal
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            i = j
            continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    if depth != 0 or in_class:
        return None
    parts.append(pattern[start:])
    return parts


def classify_text(text: str) -> str:
    """The category of a chunk from its own characters (for patterns tokscope does not know).

    >>> [classify_text(t) for t in [" hello", "42", "'s", " ...", "\\n\\n", "é"]]
    ['letters', 'digits', 'contraction', 'punctuation', 'whitespace', 'letters']
    """
    if not text:
        return "other"
    if text.isspace():
        return "whitespace"
    core = text.lstrip()
    if len(core) <= 3 and core[:1] in ("'", "\u2019") and core[1:].isalpha():
        return "contraction"
    kinds = {unicodedata.category(ch)[0] for ch in core}
    if kinds <= {"L", "M"}:
        return "letters"
    if kinds == {"N"}:
        return "digits"
    if "L" in kinds:
        return "letters"
    if "N" in kinds:
        return "digits"
    return "punctuation"


class _PatternInfo:
    """The pattern with every top-level alternative in its own group, and their categories."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.categories: tuple[str, ...] | None = KNOWN_PATTERNS.get(pattern)
        alternatives = split_alternatives(pattern)
        self.grouped = None
        self.count = 0
        if alternatives is not None and len(alternatives) > 1:
            source = "|".join(f"({a})" for a in alternatives)
            if pattern in TRUSTED_PATTERNS:  # the same alternatives in groups: as safe as the pattern
                TRUSTED_PATTERNS.add(source)
            try:
                groups = regex.compile(source).groups
                # the tokenizer's own compiler, so that matching follows exactly the same rules
                # (its translation of ``$`` and its pinned Unicode version); it adds no groups
                grouped = compile_pattern(source)
            except (regex.error, ValueError):
                grouped = None
            if grouped is not None and groups >= len(alternatives):
                self.grouped = grouped
                self.count = len(alternatives)
                self._group_of = self._outer_group_numbers(alternatives)

    @staticmethod
    def _outer_group_numbers(alternatives: list[str]) -> list[int]:
        """Group number of each wrapped alternative (inner groups shift the later ones)."""
        numbers = []
        number = 1
        for alt in alternatives:
            numbers.append(number)
            number += 1 + regex.compile(alt).groups
        return numbers

    def alternative(self, found: regex.Match[str]) -> int | None:
        for index, group in enumerate(self._group_of):
            if found.start(group) != -1:
                return index
        return None

    def category(self, alternative: int | None, text: str) -> str:
        if self.categories is not None and alternative is not None and alternative < len(self.categories):
            return self.categories[alternative]
        return classify_text(text)

    def alternative_at(self, text: str, start: int, end: int, seg_end: int, match=None) -> int | None:
        """Which alternative matched the chunk ``text[start:end]`` (``None`` when unknown).

        ``match`` is ``self.grouped.matcher(text)``, made once per text by a caller that asks about
        many chunks of it (so that the engine is not chosen again for each)."""
        if self.grouped is None:
            return None
        found = (match or self.grouped.matcher(text))(start, seg_end)
        if found is None or found.end() != end:
            return None
        return self.alternative(found)


_pattern_infos: dict[str, _PatternInfo] = {}
_pattern_lock = threading.Lock()


def _pattern_info(pattern: str) -> _PatternInfo:
    info = _pattern_infos.get(pattern)
    if info is None:
        with _pattern_lock:
            info = _pattern_infos.get(pattern)
            if info is None:
                info = _PatternInfo(pattern)
                _pattern_infos[pattern] = info
    return info


@dataclass(frozen=True, slots=True)
class ClassifiedChunk:
    """A chunk with the index of the pattern alternative that matched it and its category."""

    chunk: Chunk
    alternative: int | None
    category: str
    byte_start: int
    byte_end: int


def classified_chunks(
    tokenizer: Tokenizer,
    text: str,
    *,
    allowed_special: Collection[str] | str = (),
    disallowed_special: Collection[str] | str = (),
) -> Iterator[ClassifiedChunk]:
    """The chunks of ``text`` (same as ``tokenizer.chunks``) with which alternative matched.

    Special tokens are ordinary text by default; pass the encode arguments to split them out.

    >>> from tokscope.sources.registry import load  # doctest: +SKIP
    >>> [c.category for c in classified_chunks(load("gpt2"), "I'm 42!")]  # doctest: +SKIP
    ['letters', 'contraction', 'digits', 'punctuation']
    """
    text = fix_surrogates(text)
    info = _pattern_info(tokenizer.pattern)
    chunks = tokenizer.chunks(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    # where each ordinary chunk's segment ends (the next special chunk, else the end of the text)
    seg_ends = [len(text)] * len(chunks)
    bound = len(text)
    for i in range(len(chunks) - 1, -1, -1):
        seg_ends[i] = bound
        if chunks[i].special:
            bound = chunks[i].start
    char_pos = 0
    byte_pos = 0
    match = info.grouped.matcher(text) if info.grouped is not None else None
    for chunk, seg_end in zip(chunks, seg_ends):
        byte_pos += len(text[char_pos : chunk.start].encode("utf-8"))
        size = len(chunk.text.encode("utf-8"))
        if chunk.special:
            yield ClassifiedChunk(chunk, None, "special", byte_pos, byte_pos + size)
        else:
            alternative = info.alternative_at(text, chunk.start, chunk.end, seg_end, match)
            category = info.category(alternative, chunk.text)
            yield ClassifiedChunk(chunk, alternative, category, byte_pos, byte_pos + size)
        byte_pos += size
        char_pos = chunk.end


# ----- the merge replay ------------------------------------------------------------------------


def replay(
    data: bytes, ranks: Mapping[bytes, int], max_rank: int | None = None
) -> tuple[tuple[MergeStep, ...], tuple[bytes, ...]]:
    """Merge ``data`` step by step, recording every step; returns ``(steps, final parts)``.

    The choice at each step is exactly :func:`tokscope.core.models.ranks.merge`'s: the allowed pair with
    the lowest rank, the leftmost one on ties, so the final parts are the same.

    >>> steps, parts = replay(b"aaa", {b"a": 0, b"aa": 1})
    >>> [(s.number, s.before, s.position, s.after) for s in steps], parts
    ([(1, (b'a', b'a', b'a'), 0, (b'aa', b'a'))], (b'aa', b'a'))
    """
    parts = tuple(data[i : i + 1] for i in range(len(data)))
    steps: list[MergeStep] = []
    get = ranks.get
    while len(parts) > 1:
        candidates = []
        best: Candidate | None = None
        for i in range(len(parts) - 1):
            rank = get(parts[i] + parts[i + 1])
            allowed = rank is not None and (max_rank is None or rank < max_rank)
            cand = Candidate(i, parts[i], parts[i + 1], rank, allowed)
            candidates.append(cand)
            if allowed and (best is None or rank < best.rank):  # type: ignore[operator]
                best = cand
        if best is None:
            break
        i = best.position
        after = parts[:i] + (parts[i] + parts[i + 1],) + parts[i + 2 :]
        steps.append(
            MergeStep(len(steps) + 1, parts, tuple(candidates), i, best.left, best.right, best.rank, after)  # type: ignore[arg-type]
        )
        parts = after
    return tuple(steps), parts


def apply_steps(data: bytes, steps: Collection[MergeStep]) -> tuple[bytes, ...]:
    """Apply recorded steps (by position) to the single bytes of ``data``: the final parts.

    >>> steps, _ = replay(b"abc", {b"ab": 5, b"abc": 6})
    >>> apply_steps(b"abc", steps)
    (b'abc',)
    """
    parts = [data[i : i + 1] for i in range(len(data))]
    for step in steps:
        i = step.position
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return tuple(parts)


# ----- why not one token ----------------------------------------------------------------------


def longest_token_prefix(tokenizer: Tokenizer, data: bytes, max_rank: int | None = None) -> tuple[bytes, int | None]:
    """The longest prefix of ``data`` that is a mergeable token (below the cut-off), with its id.

    >>> from tokscope.sources.registry import load  # doctest: +SKIP
    >>> longest_token_prefix(load("gpt2"), b"helloqqq")  # doctest: +SKIP
    (b'hello', 31373)
    """
    longest = tokenizer.derived("explain.longest_token", lambda: max(map(len, tokenizer.ranks), default=1))
    for end in range(min(len(data), longest), 0, -1):  # no token is longer than the longest one
        rank = tokenizer.rank_of(data[:end])
        if rank is not None and (max_rank is None or rank < max_rank or end == 1):
            return data[:end], rank
    return b"", None


def why_not_one_token(
    tokenizer: Tokenizer, data: bytes, parts: tuple[bytes, ...], max_rank: int | None = None
) -> WhyNotOneToken:
    """Explain why ``data`` (a chunk's bytes, which BPE merged into ``parts``) is or is not one
    token: whether the bytes are a token, and if not which merges are missing."""
    rank = tokenizer.rank_of(data)
    prefix, prefix_id = longest_token_prefix(tokenizer, data, max_rank)
    missing = tuple(
        MissingMerge(parts[i], parts[i + 1], tokenizer.rank_of(parts[i] + parts[i + 1]))
        for i in range(len(parts) - 1)
    )
    shown = quoted(data)
    if len(parts) == 1 and rank is not None:
        summary = f"{shown} is one token: id {rank}."
        return WhyNotOneToken(True, rank, rank, False, False, _parents(tokenizer, rank), (), prefix, prefix_id, summary)
    if len(parts) == 0:
        return WhyNotOneToken(False, None, None, False, False, None, (), b"", None, "the chunk is empty.")
    joined_parts = " + ".join(quoted(p) for p in parts)
    if rank is not None:
        parents = _parents(tokenizer, rank)
        blocked = max_rank is not None and rank >= max_rank
        if blocked:
            summary = (
                f"{shown} is token {rank}, but its rank is at or above the cut-off {max_rank}, so merging "
                f"stops at {joined_parts}."
            )
            return WhyNotOneToken(False, rank, rank, True, False, parents, missing, prefix, prefix_id, summary)
        how = (
            f"; it is made from {_show_id(tokenizer, parents.left)} + {_show_id(tokenizer, parents.right)}"
            if parents is not None
            else ""
        )
        summary = (
            f"{shown} is token {rank}, but BPE never builds it (unreachable): the lower-rank merges end at "
            f"{joined_parts}, which no single merge joins{how}."
        )
        return WhyNotOneToken(False, rank, rank, False, True, parents, missing, prefix, prefix_id, summary)
    cut = [m for m in missing if m.rank is not None]  # tokens the replay skipped: the cut-off's doing
    if cut and max_rank is not None:
        named = ", ".join(f"{quoted(m.left)} + {quoted(m.right)} is token {m.rank}" for m in cut[:3])
        more = f" and {len(cut) - 3} more" if len(cut) > 3 else ""
        summary = (
            f"no token has the bytes {shown}: merging stops at {len(parts)} parts ({joined_parts}) because of the "
            f"cut-off: {named}{more}, at or above the cut-off {max_rank}."
        )
    elif len(parts) == 2:
        need = f"the merge {quoted(parts[0])} + {quoted(parts[1])}"
        summary = f"no token has the bytes {shown}: joining the final parts would need {need}, which the vocabulary does not have."
    else:
        summary = (
            f"no token has the bytes {shown}: merging stops at {len(parts)} parts ({joined_parts}) because no adjacent "
            f"pair of them is a token; at least {len(parts) - 1} more merges would be needed."
        )
    if prefix_id is not None and prefix != data:
        summary += f" The longest prefix that is a token is {quoted(prefix)} (id {prefix_id})."
    return WhyNotOneToken(False, None, None, False, False, None, missing, prefix, prefix_id, summary)


def _parents(tokenizer: Tokenizer, token_id: int) -> Parents | None:
    return tokenizer.parents(token_id)


def _show_id(tokenizer: Tokenizer, token_id: int) -> str:
    return f"{quoted(tokenizer.token_bytes(token_id))} ({token_id})"


# ----- variants --------------------------------------------------------------------------------


def variant_texts(chunk_text: str) -> list[tuple[str, str]]:
    """``(label, text)`` for the chunk's word in other contexts; none for pure whitespace.

    >>> [t for _, t in variant_texts(" hello")]
    ['hello', ' hello', 'Hello', ' Hello', 'HELLO', ' HELLO', 'hello.', '\\nhello']
    """
    word = chunk_text.strip()
    if not word:
        return []
    cap = word[:1].upper() + word[1:]
    options = [
        ("bare", word),
        ("leading space", " " + word),
        ("capitalised", cap),
        ("capitalised, leading space", " " + cap),
        ("upper case", word.upper()),
        ("upper case, leading space", " " + word.upper()),
        ("lower case", word.lower()),
        ("lower case, leading space", " " + word.lower()),
        ("followed by punctuation", word + "."),
        ("after a newline", "\n" + word),
    ]
    seen: set[str] = set()
    out = []
    for label, text in options:
        if text not in seen:
            seen.add(text)
            out.append((label, text))
    return out


def variants(tokenizer: Tokenizer, chunk_text: str, max_rank: int | None = None) -> tuple[Variant, ...]:
    """The chunk's word in other contexts, each encoded (with the same cut-off)."""
    out = []
    for label, text in variant_texts(chunk_text):
        ids = tuple(tokenizer.encode_ordinary(text, max_rank=max_rank))
        out.append(Variant(label, text, ids, tuple(tokenizer.token_bytes(i) for i in ids)))
    return tuple(out)


# ----- explaining ------------------------------------------------------------------------------


def explain_chunk(
    tokenizer: Tokenizer,
    item: ClassifiedChunk,
    *,
    max_rank: int | None = None,
    with_variants: bool = True,
) -> ChunkExplanation:
    """Explain one classified chunk (see :func:`classified_chunks`)."""
    chunk = item.chunk
    if chunk.special:
        token_id = tokenizer.special_tokens[chunk.text]
        data = chunk.text.encode("utf-8")
        why = WhyNotOneToken(True, token_id, None, False, False, None, (), b"", None,
                             f"{quoted(data)} is the special token {token_id}; it is never merged.")
        return ChunkExplanation(chunk, "special", None, item.byte_start, item.byte_end, (token_id,), (data,), (),
                                True, why, ())
    data = chunk.text.encode("utf-8")
    ranks = tokenizer.ranks
    if len(data) <= REPLAY_BYTE_LIMIT:
        steps, parts = replay(data, ranks, max_rank)
        replayed = True
    else:
        from ..models.ranks import merge

        steps, parts, replayed = (), tuple(merge(data, ranks, max_rank=max_rank)), False
    tokens = tuple(ranks[p] for p in parts)
    why = why_not_one_token(tokenizer, data, parts, max_rank)
    found = variants(tokenizer, chunk.text, max_rank) if with_variants and len(chunk.text) <= 200 else ()
    return ChunkExplanation(chunk, item.category, item.alternative, item.byte_start, item.byte_end, tokens, parts,
                            steps, replayed, why, found)


def explain(
    tokenizer: Tokenizer,
    text: str,
    *,
    max_rank: int | None = None,
    allowed_special: Collection[str] | str = (),
    disallowed_special: Collection[str] | str = (),
    with_variants: bool = True,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> Explanation:
    """Explain how ``text`` splits: every chunk with its replay (see :class:`ChunkExplanation`).

    Special tokens are ordinary text unless allowed, as in ``encode_ordinary``; pass the same
    special arguments as ``Tokenizer.encode`` for its checks. ``progress(done, total)`` is called
    per chunk (``total`` counts characters); setting ``cancel`` stops with :class:`CancelledError`.

    >>> from tokscope.sources.registry import load  # doctest: +SKIP
    >>> e = explain(load("gpt2"), "hello world")  # doctest: +SKIP
    >>> [c.chunk.text for c in e.chunks], e.tokens  # doctest: +SKIP
    (['hello', ' world'], (31373, 995))
    """
    if max_rank is not None and max_rank < 0:
        raise TokscopeError(f"the rank cut-off must be 0 or more, not {max_rank}")
    text = fix_surrogates(text)
    out = []
    for item in classified_chunks(
        tokenizer, text, allowed_special=allowed_special, disallowed_special=disallowed_special
    ):
        if cancel is not None and cancel.is_set():
            raise CancelledError("explaining was cancelled")
        out.append(explain_chunk(tokenizer, item, max_rank=max_rank, with_variants=with_variants))
        if progress is not None:
            progress(item.chunk.end, len(text))
    return Explanation(tokenizer.name, text, max_rank, tuple(out))


def chunk_at(tokenizer: Tokenizer, text: str, offset: int) -> ClassifiedChunk | None:
    """The chunk covering character ``offset`` of ``text`` (the last one at the very end).

    ``None`` only for an empty text.
    """
    text = fix_surrogates(text)
    last = None
    for item in classified_chunks(tokenizer, text):
        if item.chunk.start <= offset < item.chunk.end:
            return item
        if item.chunk.start > offset:
            return last
        last = item
    return last


def classify_chunk(tokenizer: Tokenizer, text: str, chunk: Chunk) -> ClassifiedChunk:
    """Classify one chunk already cut from ``text`` (e.g. by the explorer's token model).

    The pattern is matched again at the chunk's start, in its context, to find the alternative.
    """
    byte_start = len(text[: chunk.start].encode("utf-8", errors="replace"))
    size = len(chunk.text.encode("utf-8", errors="replace"))
    if chunk.special:
        return ClassifiedChunk(chunk, None, "special", byte_start, byte_start + size)
    info = _pattern_info(tokenizer.pattern)
    alternative = info.alternative_at(text, chunk.start, chunk.end, len(text))
    return ClassifiedChunk(chunk, alternative, info.category(alternative, chunk.text), byte_start, byte_start + size)


def explain_token(tokenizer: Tokenizer, token_id: int, *, max_rank: int | None = None) -> ChunkExplanation:
    """Explain how BPE builds one token from its own bytes, as if they were a chunk by themselves
    (for a token picked from the vocabulary rather than from a text).

    >>> from tokscope.sources.registry import load  # doctest: +SKIP
    >>> [s.merged for s in explain_token(load("gpt2"), 31373).steps]  # doctest: +SKIP
    [b'he', b'll', b'hell', b'hello']
    """
    data = tokenizer.token_bytes(token_id)
    text = data.decode("utf-8", errors="replace")
    chunk = Chunk(text, 0, len(text), tokenizer.is_special(token_id))
    if chunk.special:
        return explain_chunk(tokenizer, ClassifiedChunk(chunk, None, "special", 0, len(data)))
    if len(data) <= REPLAY_BYTE_LIMIT:
        steps, parts = replay(data, tokenizer.ranks, max_rank)
    else:
        from ..models.ranks import merge

        steps, parts = (), tuple(merge(data, tokenizer.ranks, max_rank=max_rank))
    tokens = tuple(tokenizer.ranks[p] for p in parts)
    why = why_not_one_token(tokenizer, data, parts, max_rank)
    whole = text.encode("utf-8") == data
    found = variants(tokenizer, text, max_rank) if whole and len(text) <= 200 else ()
    return ChunkExplanation(chunk, classify_text(text), None, 0, len(data), tokens, parts, steps,
                            len(data) <= REPLAY_BYTE_LIMIT, why, found)
