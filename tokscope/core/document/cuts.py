"""Where a text may be cut: to a budget of tokens without splitting a character, and into parts
that can be encoded apart (in worker processes) and still count the same.

Truncation (``tokscope truncate``, ``encode --truncate``) keeps the longest run of whole tokens
from the start (or, with ``from_end``, from the end) that holds at most N tokens and ends on a
character boundary: when token N ends inside a character (gpt2 cuts most emoji into bytes), the
cut moves back before that character. The kept text is always a slice of the input, never a
decoding, so it is the input byte for byte (also for tokenizers that normalize). It is then
encoded again, and when that gives more than N tokens (BPE need not encode a prefix of its own
tokens as those tokens) the cut moves back one more valid token boundary, until it fits::

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> tok = Tokenizer("bytes", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+")
    >>> truncate(tok, "a👍b", 3).text, truncate(tok, "a👍b", 5).text, truncate(tok, "a👍b", 2, from_end=True).text
    ('a', 'a👍', 'b')

:func:`keep_prefix` and :func:`keep_suffix` are the pure part: which token boundary to cut at,
given where the tokens end (or start) in the text's bytes.

Encoding in parts: for byte-level BPE with a line-safe pattern (cl100k_base, o200k_base and their
kin), :meth:`~tokscope.core.patterns.tiktoken_syntax.ChunkPattern.next_cut` finds places no chunk crosses,
so :func:`parts` cuts a big text into spans whose ids, joined, are the whole text's ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..tokenizer.tokenizer import Tokenizer, fix_surrogates
from ..patterns.tiktoken_syntax import compile_pattern

__all__ = ["Truncation", "can_split", "char_boundary", "keep_prefix", "keep_suffix", "parts", "settled_end", "truncate",
           "truncate_stream"]

#: characters of text looked at first when only the head (or the tail) of a big text is needed,
#: and at least this many characters per token of the budget
HEAD_CHARS = 1 << 14
CHARS_PER_TOKEN = 8
#: characters at the end of a text read so far whose chunks may still change when more follows
#: (a pattern's look-ahead, a normalizer joining a character with the marks after it); added
#: tokens add four times the longest of them (see :func:`settled_end`)
SETTLE_MARGIN = 8192


def char_boundary(data: bytes, at: int) -> bool:
    """True when ``at`` falls between two UTF-8 characters of ``data`` (or at either end).

    >>> data = "é".encode()
    >>> char_boundary(data, 0), char_boundary(data, 1), char_boundary(data, 2)
    (True, False, True)
    """
    return at <= 0 or at >= len(data) or not 0x80 <= data[at] < 0xC0


def keep_prefix(ends: Sequence[int], data: bytes, limit: int) -> int:
    """How many leading tokens to keep: the most, at most ``limit``, after which ``data`` can be cut
    without splitting a character. ``ends[k]`` is the byte offset in ``data`` where token ``k`` ends.

    >>> data = "a👍b".encode()     # 1 + 4 + 1 bytes
    >>> ends = [1, 3, 5, 6]        # 'a', 👍 as two tokens of two bytes, 'b'
    >>> keep_prefix(ends, data, 2), keep_prefix(ends, data, 3), keep_prefix(ends, data, 9), keep_prefix(ends, data, 0)
    (1, 3, 4, 0)
    """
    k = min(max(limit, 0), len(ends))
    while k > 0 and not char_boundary(data, ends[k - 1]):
        k -= 1
    return k


def keep_suffix(starts: Sequence[int], data: bytes, limit: int) -> int:
    """Where the kept trailing tokens begin: the index of the first of them, keeping the most, at
    most ``limit``, whose first byte starts a character. ``starts[k]`` is the byte offset in
    ``data`` where token ``k`` starts; ``len(starts)`` keeps nothing.

    >>> data = "a👍b".encode()
    >>> starts = [0, 1, 3, 5]
    >>> keep_suffix(starts, data, 2), keep_suffix(starts, data, 3), keep_suffix(starts, data, 9), keep_suffix(starts, data, 0)
    (3, 1, 0, 4)
    """
    n = len(starts)
    j = n - min(max(limit, 0), n)
    while j < n and not char_boundary(data, starts[j]):
        j += 1
    return j


@dataclass(frozen=True, slots=True)
class Truncation:
    """The kept text: ``text`` is ``source[start:end]`` (character offsets into the input, lone
    surrogates replaced as encoding does), ``ids`` its tokens encoded again (at most the budget),
    ``truncated`` whether anything was cut away."""

    text: str
    start: int
    end: int
    ids: list[int]
    truncated: bool


def can_split(tokenizer: Tokenizer) -> bool:
    """True when :func:`parts` can cut texts for ``tokenizer`` (byte-level BPE from ranks with a
    line-safe pattern, and no special token holding a line break, which a cut could cross)."""
    if not tokenizer.pieces_tile_bytes or tokenizer.pattern is None:
        return False
    if not compile_pattern(tokenizer.pattern).line_safe:
        return False
    return not any("\n" in name for name in tokenizer.special_tokens_set)


def parts(tokenizer: Tokenizer, text: str, size: int) -> list[tuple[int, int]]:
    """``text`` as spans ``(start, end)`` of about ``size`` characters or more, cut where the spans'
    ids, encoded apart and joined, are the ids of the whole text (with any special-token
    arguments); one span when the text cannot be cut (:func:`can_split`).

    >>> from tokscope.core.patterns.tiktoken_syntax import LINE_SAFE_PATTERNS
    >>> tok = Tokenizer("bytes", {bytes([b]): b for b in range(256)}, next(iter(LINE_SAFE_PATTERNS)))
    >>> parts(tok, "one\\ntwo\\nthree\\n", 4)
    [(0, 4), (4, 8), (8, 14)]
    """
    if len(text) <= size or not can_split(tokenizer):
        return [(0, len(text))]
    pattern = compile_pattern(tokenizer.pattern)  # type: ignore[arg-type]
    out = []
    start = 0
    while start < len(text):
        cut = pattern.next_cut(text, start + max(size, 1))
        end = len(text) if cut is None else cut
        out.append((start, end))
        start = end
    return out


def _encoder(tokenizer: Tokenizer, special: dict[str, Any]):
    return lambda s: tokenizer.encode(s, **special)


def truncate(tokenizer: Tokenizer, text: str, max_tokens: int, *, from_end: bool = False,
             allowed_special: Any = (), disallowed_special: Any = "all") -> Truncation:
    """``text`` cut to at most ``max_tokens`` tokens (see the module docstring). The special-token
    arguments are :meth:`~tokscope.core.tokenizer.tokenizer.Tokenizer.encode`'s, and the whole text is
    checked for disallowed special tokens, as encoding it would be.

    Only the head (or the tail) of a big text is encoded when it can be cut (:func:`can_split`).
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValueError(f"max_tokens must be a whole number >= 0, not {max_tokens!r}")
    text = fix_surrogates(text)
    special = {"allowed_special": allowed_special, "disallowed_special": disallowed_special}
    _, disallowed = tokenizer.resolve_special(allowed_special, disallowed_special)
    tokenizer.check_special(text, disallowed)
    encode = _encoder(tokenizer, special)
    offset, part, ids = _window(tokenizer, text, max_tokens, from_end, encode)
    data = part.encode("utf-8")
    if tokenizer.pieces_tile_bytes:
        if ids is None:
            ids = encode(part)
        lengths = tokenizer.byte_lengths
        bounds = [0]
        total = 0
        for token_id in ids:
            total += lengths[token_id]
            bounds.append(total)
        starts, ends = bounds[:-1], bounds[1:]
    else:
        pieces = tokenizer.pieces(part, **special)
        ids = [p.id for p in pieces]
        starts = [p.byte_start for p in pieces]
        ends = [p.byte_end for p in pieces]
    whole = offset == 0 and len(part) == len(text)
    if len(ids) <= max_tokens and whole:
        return Truncation(text, 0, len(text), ids, False)
    if not from_end:
        k = keep_prefix(ends, data, max_tokens)
        while True:
            kept = data[: ends[k - 1]].decode("utf-8") if k else ""
            kept_ids = encode(kept) if kept else []
            if len(kept_ids) <= max_tokens or k == 0:
                break
            k = keep_prefix(ends, data, k - 1)
        start, end = offset, offset + len(kept)
    else:
        j = keep_suffix(starts, data, max_tokens)
        while True:
            kept = data[starts[j]:].decode("utf-8") if j < len(ids) else ""
            kept_ids = encode(kept) if kept else []
            if len(kept_ids) <= max_tokens or j == len(ids):
                break
            j = keep_suffix(starts, data, len(ids) - j - 1)
        end = offset + len(part)
        start = end - len(kept)
    return Truncation(kept, start, end, kept_ids, start > 0 or end < len(text))


def _window(tokenizer: Tokenizer, text: str, max_tokens: int, from_end: bool,
            encode) -> tuple[int, str, list[int] | None]:
    """The part of ``text`` to look at: ``(offset, part, ids)``, a head (or a tail) that ends
    (starts) at a cut and holds more than ``max_tokens`` tokens, with its ids, or the whole text
    (ids None: not encoded yet)."""
    want = max(HEAD_CHARS, CHARS_PER_TOKEN * (max_tokens + 1))
    if len(text) <= 2 * want or not can_split(tokenizer):
        return 0, text, None
    pattern = compile_pattern(tokenizer.pattern)  # type: ignore[arg-type]
    while want < len(text):
        cut = pattern.prev_cut(text, len(text) - want) if from_end else pattern.next_cut(text, want)
        if cut is None:
            break
        part = text[cut:] if from_end else text[:cut]
        ids = encode(part)
        if len(ids) > max_tokens:
            return (cut if from_end else 0), part, ids
        want *= 4
    return 0, text, None


def settled_end(tokenizer: Tokenizer, text: str, allowed_special: Any = ()) -> int:
    """Where the tokens of ``text`` are settled: a place ``s`` such that, for any text that starts
    with ``text``, its tokens are the tokens of ``text[:s]`` followed by those of the rest (no
    chunk, added token or normalized character crosses ``s``). 0 when there is none yet.

    For a tokenizer :func:`can_split` takes, the last line cut of ``text`` (a place no chunk
    crosses, found from the text before it and one character after). Otherwise (or in a text with
    no line cut yet), for a :attr:`~tokscope.core.tokenizer.tokenizer.Tokenizer.restartable`
    tokenizer (every stage local), the start of a chunk that is neither of the last two, that the
    normalizer may start at, and that lies at least :data:`SETTLE_MARGIN` characters (and four
    times the longest added token) before the end. Otherwise 0: the tokens of any part may depend
    on the end of the text.

    >>> from tokscope.core.patterns.tiktoken_syntax import LINE_SAFE_PATTERNS
    >>> tok = Tokenizer("bytes", {bytes([b]): b for b in range(256)}, next(iter(LINE_SAFE_PATTERNS)))
    >>> settled_end(tok, "one\\ntwo\\nthr"), settled_end(tok, "one two thr")  # the second is short of the margin
    (8, 0)
    """
    if can_split(tokenizer):
        cut = compile_pattern(tokenizer.pattern).prev_cut(text, len(text) - 1)  # type: ignore[arg-type]
        if cut:
            return cut
    if not tokenizer.restartable:
        return 0
    added = [*tokenizer.added_tokens, *tokenizer.special_tokens_set]
    limit = len(text) - SETTLE_MARGIN - 4 * max(map(len, added), default=0)
    if limit <= 0:
        return 0
    allowed, _ = tokenizer.resolve_special(allowed_special, ())
    chunks = tokenizer.chunks(text, allowed_special=allowed)
    for i in range(len(chunks) - 3, 0, -1):
        start = chunks[i].start
        if start <= limit and chunks[i - 1].end <= start and tokenizer.restart_ok(text, start):
            return start
    return 0


def truncate_stream(tokenizer: Tokenizer, more: Callable[[], str], max_tokens: int, *,
                    allowed_special: Any = (), disallowed_special: Any = "all") -> Truncation:
    """:func:`truncate` (from the start) of the text ``more()`` gives piece by piece (``""`` at its
    end), asking for no more of it than the first ``max_tokens`` tokens need: as soon as the text
    read so far holds more than ``max_tokens`` tokens before its :func:`settled_end`, no text that
    follows can change them, and the cut is made there. The answer is the one :func:`truncate`
    gives for the whole text, except that special tokens are looked for only in the text read
    (the whole text, for a tokenizer whose tokens never settle).

    >>> from tokscope.core.patterns.tiktoken_syntax import LINE_SAFE_PATTERNS
    >>> tok = Tokenizer("bytes", {bytes([b]): b for b in range(256)}, next(iter(LINE_SAFE_PATTERNS)))
    >>> pieces = iter(["ab\\ncd\\n", "ef\\n", "never read"])
    >>> cut = truncate_stream(tok, lambda: next(pieces), 2)
    >>> cut.text, cut.truncated, next(pieces)
    ('ab', True, 'ef\\n')
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValueError(f"max_tokens must be a whole number >= 0, not {max_tokens!r}")
    special = {"allowed_special": allowed_special, "disallowed_special": disallowed_special}
    _, disallowed = tokenizer.resolve_special(allowed_special, disallowed_special)
    text = ""
    while True:
        piece = more()
        if not piece:
            return truncate(tokenizer, text, max_tokens, **special)
        text += piece
        end = settled_end(tokenizer, text, allowed_special)
        if end <= 0:
            continue
        cut = truncate(tokenizer, text[:end], max_tokens, **special)
        if cut.truncated:  # more than max_tokens tokens, all settled
            tokenizer.check_special(fix_surrogates(text), disallowed)
            return cut
