"""Learn a byte-level BPE vocabulary from text: the incremental trainer and its naive oracle.

Training, step by step:

1. **Pre-tokenization.** Each text is first cut at the special tokens (they are taken out of the
   corpus and act as chunk boundaries, so no merge ever learns them). Every remaining span is cut
   into *chunks* by the *pattern* (a regex string; :data:`PATTERN_NONE` keeps a whole span as one
   chunk, :data:`PATTERN_WORDS` makes each run of non-whitespace and each run of whitespace a chunk,
   so nothing is dropped). Merges never cross a chunk. Equal chunks are counted once with a frequency
   (the *chunk table*), in the order of their first appearance.
2. **Start** from single bytes: ids 0..255 are the bytes 0x00..0xFF.
3. **Repeat**: count every adjacent pair of tokens in every chunk (overlapping pairs count: the
   chunk ``aaa`` holds the pair ``(a, a)`` twice), weighted by the chunk's frequency; take the pair
   with the highest count; replace its occurrences in every chunk, left to right, by a new token
   whose id is the next free id (256, 257, ...). So id order is merge order and, for the tokenizer
   built from the result, a token's id is its rank.
4. **Stop** when the target number of merges is reached (``reason="target"``), when the best pair
   occurs fewer than ``min_frequency`` times (``"min_frequency"``), or when no chunk has two
   tokens left (``"exhausted"``). The special tokens then take the ids after the last merge.

Ties between pairs of equal count are broken deterministically by one of two rules:

* ``"first"``: the pair whose *first occurrence* comes earliest in the corpus. An occurrence is
  a position where the two tokens stand next to each other in the current segmentation; its place
  is ``(chunk, byte offset of the pair's left token in that chunk)``, where chunks are numbered in
  the order they appear in the corpus (the texts one after another, each read left to right).
  Because equal chunks are segmented identically, this is the same as numbering the distinct
  chunks by first appearance, which is what the trainer does.
* ``"lexical"``: the smallest pair by ``(left bytes, right bytes)``, comparing bytes as Python
  does (``b"a" < b"ab" < b"b"``).

Every merge makes bytes that are not a token yet, so a trained vocabulary maps bytes to ranks one
to one. (Why: the span of a merged pair is never crossed by an earlier merge, so it was segmented
exactly as its own bytes would be; if those bytes had been merged before, the span would have
been merged with them. The tests check it on random corpora.)

:func:`train` is incremental: the chunk table is built once, pair counts and the chunks holding
each pair are kept in dictionaries and updated only next to where a merge happened, and the best
pair comes from a heap with lazy invalidation (an entry's count and first occurrence can only be
optimistic; a stale top entry is corrected and pushed back). :func:`~tokscope.core.reference.train_naive` recounts every
pair at every step; it is slow and obviously right, and the tests check that both agree.

>>> result = train(["low lower lowest"], merges=3, pattern=PATTERN_WORDS)
>>> [(m.left, m.right, m.count) for m in result.merges]
[(b'l', b'o', 3), (b'lo', b'w', 3), (b'low', b'e', 2)]
>>> result.lengths
(16, 13, 10, 8)
>>> result.stop_reason
'target'
"""

from __future__ import annotations

import heapq
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import methodcaller

import regex

from ..text.display import safe_text
from ..text.errors import CancelledError, TokscopeError
from ..patterns.guard import TRUSTED_PATTERNS, PatternError, budget, compile_checked, timed_out
from ..tokenizer.tokenizer import Tokenizer, fix_surrogates

#: The whole span (a text, or the part between two special tokens) is one chunk.
PATTERN_NONE = r"(?s).+"
#: Runs of non-whitespace and runs of whitespace, each its own chunk: words never merge with the
#: spaces around them, and nothing is dropped, so a tokenizer trained with it encodes any text back.
PATTERN_WORDS = r"\S+|\s+"
#: Pre-tokenization names the core resolves itself (the OpenAI patterns come from the sources).
CORE_PATTERNS: dict[str, str] = {"none": PATTERN_NONE, "words": PATTERN_WORDS}

TIE_RULES = ("first", "lexical")

#: Pair keys pack two ids into one int (``left << SHIFT | right``), so ids must stay below this.
_SHIFT = 20
_MASK = (1 << _SHIFT) - 1
MAX_VOCAB_SIZE = 1 << _SHIFT

STOP_TARGET = "target"
STOP_MIN_FREQUENCY = "min_frequency"
STOP_EXHAUSTED = "exhausted"


class TrainingError(TokscopeError):
    """Options or a corpus the trainer cannot work with (one-line message)."""


# ----- results -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Merge:
    """One learned merge: the ``left`` and ``right`` parents' bytes and ids, the new token's
    ``id`` (== its rank) and the pair's ``count`` in the corpus when it was merged."""

    left: bytes
    right: bytes
    id: int
    count: int
    left_id: int
    right_id: int

    @property
    def bytes(self) -> bytes:
        return self.left + self.right


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What the trainer read: ``chars``/``bytes`` of the texts, the ``chunks`` the pattern made
    (``unique_chunks`` distinct ones), the characters and bytes those chunks cover, the special
    tokens taken out of the texts, and ``dropped_chars``: characters outside special tokens that
    no chunk covers. A pattern that drops text gives a tokenizer that cannot encode that text
    back (tiktoken's encoder drops it too); ``none``, ``words`` and the OpenAI patterns drop
    nothing."""

    texts: int
    chars: int
    bytes: int
    chunks: int
    unique_chunks: int
    chunk_chars: int
    chunk_bytes: int
    specials_removed: int
    dropped_chars: int = 0


@dataclass(frozen=True, slots=True)
class TrainProgress:
    """Reported after each merge (and once with ``merges_done=0`` before the first): the pair
    just merged (empty bytes before the first) with its count, and the corpus length in tokens."""

    merges_done: int
    merges_total: int
    left: bytes
    right: bytes
    count: int
    tokens: int


@dataclass(frozen=True)
class TrainResult:
    """A trained vocabulary: the merges in learned order and everything needed to rebuild it.

    ``lengths[k]`` is the corpus length in tokens after the first ``k`` merges (the training
    segmentation), so ``lengths[0] == stats.chunk_bytes``; it gives the vocabulary sweep for free
    because a smaller BPE vocabulary is a prefix of a larger one.
    """

    merges: tuple[Merge, ...]
    pattern: str
    special_tokens: dict[str, int]
    stop_reason: str
    requested_merges: int
    tie: str
    min_frequency: int
    stats: CorpusStats
    lengths: tuple[int, ...]
    pattern_name: str | None = None
    options: dict = field(default_factory=dict)

    @property
    def vocab_size(self) -> int:
        """Mergeable tokens: the 256 bytes plus one per merge (special tokens not included)."""
        return 256 + len(self.merges)

    @property
    def n_vocab(self) -> int:
        return self.vocab_size + len(self.special_tokens)

    @property
    def stopped_early(self) -> bool:
        return self.stop_reason != STOP_TARGET

    @property
    def ranks(self) -> dict[bytes, int]:
        """``bytes -> rank`` for the bytes and every merge (ranks are ids)."""
        ranks = {bytes([i]): i for i in range(256)}
        for m in self.merges:
            ranks[m.bytes] = m.id
        return ranks

    @property
    def stop_message(self) -> str:
        """One sentence saying why training stopped."""
        done = len(self.merges)
        if self.stop_reason == STOP_TARGET:
            return f"learned the {done} merges asked for"
        why = (
            f"no pair occurs at least {self.min_frequency} times (minimum frequency)"
            if self.stop_reason == STOP_MIN_FREQUENCY
            else "no chunk has two tokens left to merge (the corpus is too small)"
        )
        return f"stopped after {done} of {self.requested_merges} merges: {why}"

    def tokenizer(self, name: str = "trained") -> Tokenizer:
        """A :class:`Tokenizer` with these ranks, this pattern and these special tokens."""
        return Tokenizer(name, self.ranks, self.pattern, dict(self.special_tokens))


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """The training corpus's length with the first ``vocab_size`` mergeable tokens."""

    vocab_size: int
    merges: int
    tokens: int
    chars_per_token: float
    bytes_per_token: float


# ----- options and pre-tokenization ---------------------------------------------------------------


def compile_training_pattern(pattern: str) -> regex.Pattern[str]:
    """Compile a pre-tokenization regex, or raise :class:`TrainingError` with the reason (the
    limits of :func:`tokscope.core.patterns.guard.check_pattern` apply to a user's pattern).

    >>> compile_training_pattern("(").pattern
    Traceback (most recent call last):
    ...
    tokscope.core.train.trainer.TrainingError: invalid pattern '(': missing ) at position 1
    """
    if not isinstance(pattern, str) or not pattern:
        raise TrainingError("the pattern is empty")
    try:
        return compile_checked(pattern)
    except PatternError as exc:
        raise TrainingError(str(exc)) from None


def _finditer(pat: regex.Pattern[str], text: str) -> Iterator[regex.Match[str]]:
    """``pat.finditer(text)`` with a time budget for a user's pattern (see :mod:`.regex_guard`)."""
    if pat.pattern in TRUSTED_PATTERNS:
        return pat.finditer(text)  # as it is: no generator between the engine and the counter
    return _budgeted(pat, text)


def _budgeted(pat: regex.Pattern[str], text: str) -> Iterator[regex.Match[str]]:
    try:
        yield from pat.finditer(text, timeout=budget(len(text)))
    except TimeoutError:
        raise TrainingError(str(timed_out(pat.pattern))) from None


#: A short text of many kinds of characters, to see whether a pattern drops any of them.
PROBE_TEXT = "Hello, world!  It's 2025-01-31.\n\tcafé naïve ÜBER Привет мир مرحبا 日本語のテキスト 😀👍🏽 x=1+2;\r\n"


def uncovered_chars(pattern: str, text: str = PROBE_TEXT) -> int:
    """How many characters of ``text`` no match of ``pattern`` covers (what a tokenizer with this
    pattern drops before merging, and so can never encode back; tiktoken drops it too).

    >>> uncovered_chars(PATTERN_WORDS), uncovered_chars(r"\\w+", "ab, cd")
    (0, 2)
    """
    pat = compile_training_pattern(pattern)
    return len(text) - sum(m.end() - m.start() for m in _finditer(pat, text))


def check_special_tokens(special_tokens: Sequence[str]) -> list[str]:
    """Validate special tokens: non-empty strings, no duplicates. Returns them as a list.

    >>> check_special_tokens(["<pad>", "<pad>"])
    Traceback (most recent call last):
    ...
    tokscope.core.train.trainer.TrainingError: special token '<pad>' is given twice
    """
    seen: set[str] = set()
    out = []
    for token in special_tokens:
        if not isinstance(token, str) or not token:
            raise TrainingError("a special token cannot be empty")
        if any("\ud800" <= ch <= "\udfff" for ch in token):
            raise TrainingError(f"special token {safe_text(token)!r} is not valid UTF-8")
        if token in seen:
            raise TrainingError(f"special token {token!r} is given twice")
        seen.add(token)
        out.append(token)
    return out


def target_merges(vocab_size: int | None, merges: int | None) -> int:
    """The number of merges asked for by exactly one of ``vocab_size`` (256 + merges) or ``merges``.

    >>> target_merges(1256, None), target_merges(None, 10)
    (1000, 10)
    """
    if (vocab_size is None) == (merges is None):
        raise TrainingError("give exactly one of a vocabulary size or a number of merges")
    if vocab_size is not None:
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
            raise TrainingError(f"the vocabulary size must be a whole number, not {vocab_size!r}")
        if vocab_size < 256:
            raise TrainingError(f"the vocabulary size must be at least 256 (the single bytes); got {vocab_size}")
        if vocab_size > MAX_VOCAB_SIZE:
            raise TrainingError(f"the vocabulary size must be at most {MAX_VOCAB_SIZE:,}; got {vocab_size:,}")
        return vocab_size - 256
    assert merges is not None
    if isinstance(merges, bool) or not isinstance(merges, int) or merges < 0:
        raise TrainingError(f"the number of merges must be a whole number of at least 0; got {merges!r}")
    if merges + 256 > MAX_VOCAB_SIZE:
        raise TrainingError(f"at most {MAX_VOCAB_SIZE - 256:,} merges; got {merges:,}")
    return merges


def _special_splitter(special_tokens: Sequence[str]) -> regex.Pattern[str] | None:
    if not special_tokens:
        return None
    alternatives = sorted(special_tokens, key=lambda t: (-len(t), t))
    return regex.compile("|".join(regex.escape(t) for t in alternatives))


def _spans(texts: Sequence[str], splitter: regex.Pattern[str] | None) -> Iterator[tuple[str, int]]:
    """The ordinary spans of the texts between special tokens, with how many specials preceded."""
    for text in texts:
        if splitter is None:
            yield text, 0
            continue
        pos = 0
        for found in splitter.finditer(text):
            yield text[pos : found.start()], 1
            pos = found.end()
        yield text[pos:], 0


@dataclass(frozen=True, slots=True)
class ChunkTable:
    """The distinct chunks (as bytes, in order of first appearance) with their frequencies."""

    chunks: tuple[bytes, ...]
    freqs: tuple[int, ...]
    stats: CorpusStats


def _as_texts(texts: str | Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        return [texts]
    out = list(texts)
    for t in out:
        if not isinstance(t, str):
            raise TrainingError(f"training texts must be strings, not {type(t).__name__}")
    return out


def chunk_table(
    texts: str | Sequence[str],
    pattern: str,
    special_tokens: Sequence[str] = (),
    *,
    cancel: threading.Event | None = None,
) -> ChunkTable:
    """Pre-tokenize ``texts`` and count the distinct chunks (see the module docstring).

    >>> table = chunk_table(["to be or not to be"], PATTERN_WORDS)
    >>> table.chunks, table.freqs
    ((b'to', b' ', b'be', b'or', b'not'), (2, 5, 2, 1, 1))
    >>> table.stats.chunk_chars, table.stats.chars, table.stats.dropped_chars
    (18, 18, 0)
    >>> chunk_table(["to be"], r"\\w+").stats.dropped_chars  # a pattern that drops the space
    1
    """
    texts = [fix_surrogates(t) for t in _as_texts(texts)]
    pat = compile_training_pattern(pattern)
    specials = check_special_tokens(special_tokens)
    splitter = _special_splitter(specials)
    counter: Counter[str] = Counter()
    group = methodcaller("group")
    # findall gives the whole matches (cheaper than finditer + group) unless the pattern has groups;
    # a user's pattern goes through the time budget (see _finditer)
    if pat.groups == 0 and pat.pattern in TRUSTED_PATTERNS:
        chunks_of = pat.findall
    else:
        def chunks_of(span: str):  # noqa: ANN202
            return map(group, _finditer(pat, span))
    removed = 0
    span_chars = 0
    for span, specials_after in _spans(texts, splitter):
        if cancel is not None and cancel.is_set():
            raise CancelledError("training cancelled")
        removed += specials_after
        if span:
            span_chars += len(span)
            counter.update(chunks_of(span))
    counter.pop("", None)  # a pattern that can match nothing yields empty chunks: they hold no bytes
    chunks = []
    freqs = []
    chunk_chars = chunk_bytes = 0
    for chunk, freq in counter.items():
        data = chunk.encode("utf-8")
        chunks.append(data)
        freqs.append(freq)
        chunk_chars += len(chunk) * freq
        chunk_bytes += len(data) * freq
    stats = CorpusStats(
        texts=len(texts),
        chars=sum(len(t) for t in texts),
        bytes=sum(len(t.encode("utf-8")) for t in texts),
        chunks=sum(freqs),
        unique_chunks=len(chunks),
        chunk_chars=chunk_chars,
        chunk_bytes=chunk_bytes,
        specials_removed=removed,
        dropped_chars=span_chars - chunk_chars,
    )
    return ChunkTable(tuple(chunks), tuple(freqs), stats)


# ----- the incremental trainer ----------------------------------------------------------------------


def train(
    texts: str | Sequence[str],
    *,
    vocab_size: int | None = None,
    merges: int | None = None,
    pattern: str = PATTERN_WORDS,
    tie: str = "first",
    min_frequency: int = 2,
    special_tokens: Sequence[str] = (),
    pattern_name: str | None = None,
    progress: Callable[[TrainProgress], None] | None = None,
    cancel: threading.Event | None = None,
) -> TrainResult:
    """Learn BPE merges from ``texts`` (one string or several; see the module docstring).

    Give exactly one of ``vocab_size`` (mergeable tokens, at least 256: the bytes plus the
    merges; special tokens come on top) or ``merges``. ``pattern`` is a regex string (the OpenAI
    patterns are resolved by the caller; ``pattern_name`` only labels it). ``progress`` is called
    after every merge; setting ``cancel`` stops training at the next merge with
    :class:`CancelledError` (nothing partial is returned). Bad options raise
    :class:`TrainingError`; so does a corpus without a single chunk. A corpus too small for the
    target trains what it can: see ``stop_reason``.

    >>> r = train(["aaabdaaabac"], merges=3, pattern=PATTERN_NONE, special_tokens=["<eos>"])
    >>> [(m.bytes, m.id, m.count) for m in r.merges], r.special_tokens
    ([(b'aa', 256, 4), (b'aaa', 257, 2), (b'aaab', 258, 2)], {'<eos>': 259})
    """
    n_target, tie, min_frequency, specials = check_options(vocab_size, merges, tie, min_frequency, special_tokens)
    table = chunk_table(texts, pattern, specials, cancel=cancel)
    if table.stats.chunks == 0:
        raise TrainingError("the corpus is empty: the pattern finds no text to learn from in it")
    learned, lengths, reason = _train_incremental(
        table, n_target, tie == "first", min_frequency, progress, cancel
    )
    return train_result(table, learned, lengths, reason, n_target, pattern, pattern_name, tie, min_frequency,
                   specials, vocab_size, merges)


def check_options(vocab_size, merges, tie, min_frequency, special_tokens):
    n_target = target_merges(vocab_size, merges)
    if tie not in TIE_RULES:
        raise TrainingError(f"unknown tie rule {tie!r}; choose first or lexical")
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 1:
        raise TrainingError(f"the minimum frequency must be a whole number of at least 1; got {min_frequency!r}")
    return n_target, tie, min_frequency, check_special_tokens(special_tokens)


def train_result(table, learned, lengths, reason, n_target, pattern, pattern_name, tie, min_frequency,
            specials, vocab_size, merges) -> TrainResult:
    next_id = 256 + len(learned)
    special_ids = {token: next_id + i for i, token in enumerate(specials)}
    options = {
        "vocab_size": vocab_size,
        "merges": merges,
        "pattern": pattern_name or pattern,
        "tie": tie,
        "min_frequency": min_frequency,
        "special_tokens": list(specials),
    }
    return TrainResult(
        merges=tuple(learned),
        pattern=pattern,
        special_tokens=special_ids,
        stop_reason=reason,
        requested_merges=n_target,
        tie=tie,
        min_frequency=min_frequency,
        stats=table.stats,
        lengths=tuple(lengths),
        pattern_name=pattern_name,
        options=options,
    )


def _pair_at(word: str, offset: int, pair: str, lens: list[int]) -> bool:
    """True when ``pair`` (two token characters) first occurs in ``word`` at byte ``offset``.

    A heap entry's occurrence is never later than the pair's first one (old pairs only lose
    occurrences), so the entry is valid exactly when the pair's first occurrence is still there."""
    j = word.find(pair)
    if j <= 0:
        return j == 0 and offset == 0
    return sum(map(lens.__getitem__, map(ord, word[:j]))) == offset


def _first_occurrence(holders: list[int], words: list[str], pair: str, lens: list[int]) -> tuple[int, int]:
    """The earliest ``(chunk index, byte offset)`` of ``pair``; drops the stale chunk indexes
    before it (``holders`` is in ascending order, see :func:`_train_incremental`)."""
    for h, wi in enumerate(holders):
        word = words[wi]
        j = word.find(pair)
        if j >= 0:
            if h:
                del holders[:h]
            return wi, sum(map(lens.__getitem__, map(ord, word[:j])))
    raise AssertionError("a pair with a positive count has no occurrence")  # pragma: no cover


def _bits(n: int) -> int:
    return max(1, n.bit_length())


def _stop_reason_without_candidates(counts: dict[int, int]) -> str:
    """Why training stops when the heap is empty: pairs remain (all below the minimum frequency,
    so none was ever a candidate), or none does."""
    return STOP_MIN_FREQUENCY if any(c > 0 for c in counts.values()) else STOP_EXHAUSTED


def _train_incremental(
    table: ChunkTable,
    n_target: int,
    tie_first: bool,
    min_frequency: int,
    progress: Callable[[TrainProgress], None] | None,
    cancel: threading.Event | None,
) -> tuple[list[Merge], list[int], str]:
    SHIFT, MASK = _SHIFT, _MASK
    # each chunk is a str with one character per token (chr(id): ids stay below MAX_VOCAB_SIZE,
    # under 0x110000), so finding a pair and rewriting a chunk are str.find and str.replace
    words: list[str] = [c.decode("latin-1") for c in table.chunks]
    freqs = table.freqs
    tok: list[bytes] = [bytes([i]) for i in range(256)]
    lens: list[int] = [1] * 256
    counts: dict[int, int] = {}
    # pair -> the chunks holding it, in ascending order and without repeats: a pair gains holders
    # only in the step that creates it (it holds the new token), while the chunks of the merged
    # pair are visited in their (ascending) order, so checking the last entry is enough. Entries go
    # stale when a pair leaves a chunk and are skipped then (cheaper than sets: most pairs have one).
    where: dict[int, list[int]] = {}
    firsts: dict[int, tuple[int, int]] = {}
    for wi, w in enumerate(table.chunks):
        n = len(w)
        if n < 2:
            continue
        f = freqs[wi]
        prev = w[0]
        for j in range(1, n):
            cur = w[j]
            k = prev << SHIFT | cur
            c = counts.get(k)
            if c is None:
                counts[k] = f
                where[k] = [wi]
                if tie_first:
                    firsts[k] = (wi, j - 1)
            else:
                counts[k] = c + f
                holders = where[k]
                if holders[-1] != wi:
                    holders.append(wi)
            prev = cur
    # heap entries. Tie "first": one int, (CMAX - count, chunk, byte offset, pair) packed from the
    # high bits down, so the heap compares ints instead of tuples. Tie "lexical":
    # (-count, left bytes, right bytes, pair).
    KB = 2 * SHIFT
    KMASK = (1 << KB) - 1
    OB = _bits(max(map(len, table.chunks), default=1))
    OMASK = (1 << OB) - 1
    WSH = KB + OB
    CSH = WSH + _bits(len(words))
    RMASK = (1 << CSH) - 1
    CMAX = 1 << _bits(sum(freqs) * max(map(len, table.chunks), default=1))
    # A pair's count is highest when it is created (old pairs only lose occurrences), so a pair
    # below the minimum frequency then can never be merged: it stays out of the heap (its count is
    # kept, as its neighbours' merges still lower it).
    if tie_first:
        heap: list = [(CMAX - c) << CSH | firsts[k][0] << WSH | firsts[k][1] << KB | k
                      for k, c in counts.items() if c >= min_frequency]
    else:
        heap = [(-c, tok[k >> SHIFT], tok[k & MASK], k) for k, c in counts.items() if c >= min_frequency]
    del firsts
    heapq.heapify(heap)
    heappop, heappush, heapreplace = heapq.heappop, heapq.heappush, heapq.heapreplace
    getlen = lens.__getitem__
    counts_get = counts.get

    total = table.stats.chunk_bytes
    lengths = [total]
    learned: list[Merge] = []
    reason = STOP_TARGET
    if progress is not None:
        progress(TrainProgress(0, n_target, b"", b"", 0, total))
    while len(learned) < n_target:
        if cancel is not None and cancel.is_set():
            raise CancelledError("training cancelled")
        # --- the best pair: validate the heap's top lazily --------------------------------------
        if tie_first:
            while heap:
                top = heap[0]
                k = top & KMASK
                c = counts.get(k, 0)
                if c <= 0:
                    heappop(heap)
                    continue
                if top >> CSH != CMAX - c:  # counts of old pairs only fall: push back with the true count
                    heapreplace(heap, (CMAX - c) << CSH | (top & RMASK))
                    continue
                wi = (top & RMASK) >> WSH
                pair = chr(k >> SHIFT) + chr(k & MASK)
                if not _pair_at(words[wi], (top >> KB) & OMASK, pair, lens):
                    wi, off = _first_occurrence(where[k], words, pair, lens)
                    heapreplace(heap, (CMAX - c) << CSH | wi << WSH | off << KB | k)
                    continue
                break
            else:
                reason = _stop_reason_without_candidates(counts)
                break
        else:
            while heap:
                top = heap[0]
                k = top[3]
                c = counts.get(k, 0)
                if c <= 0:
                    heappop(heap)
                    continue
                if -top[0] != c:
                    heapreplace(heap, (-c, top[1], top[2], k))
                    continue
                break
            else:
                reason = _stop_reason_without_candidates(counts)
                break
        if c < min_frequency:
            reason = STOP_MIN_FREQUENCY
            break
        heappop(heap)
        a = k >> SHIFT
        b = k & MASK
        new = tok[a] + tok[b]
        # --- apply the merge where the pair occurs ------------------------------------------------
        z = len(tok)
        tok.append(new)
        lens.append(len(new))
        zs = z << SHIFT
        holders = where.pop(k)
        pair = chr(a) + chr(b)
        cz = chr(z)
        # new pairs -> where they first occur (tie "first": chunk and byte offset as heap bits).
        # Holders come in ascending order and a chunk is read left to right, so the first time a
        # new pair is seen is its first occurrence.
        fresh: dict[int, int] = {}
        applied = 0
        for wi in holders:
            w = words[wi]
            i = w.find(pair)
            if i < 0:
                continue
            f = freqs[wi]
            n = len(w)
            last = -1  # index just after the previous merge in this chunk
            done = 0
            scanned = pos = 0  # byte offset bookkeeping for tie "first"
            while True:
                if i > 0:
                    if i == last:  # ... z z ...: the pair (b, a) between them was taken off already
                        x = z
                    else:
                        x = ord(w[i - 1])
                        counts[x << SHIFT | a] -= f
                    k2 = x << SHIFT | z
                    c2 = counts_get(k2)
                    if c2 is None:
                        counts[k2] = f
                        where[k2] = [wi]
                        if tie_first:
                            if scanned != i:  # byte offset of w[i], computed only when needed
                                pos += sum(map(getlen, map(ord, w[scanned:i])))
                                scanned = i
                            fresh[k2] = wi << WSH | (pos - lens[x]) << KB
                        else:
                            fresh[k2] = 0
                    else:
                        counts[k2] = c2 + f
                        wl = where[k2]
                        if wl[-1] != wi:
                            wl.append(wi)
                zi = i
                i += 2
                done += 1
                last = i
                if i >= n:
                    break
                y = ord(w[i])
                counts[b << SHIFT | y] -= f
                if y == a and w.startswith(pair, i):  # the next merge adds (z, z)
                    continue
                k2 = zs | y
                c2 = counts_get(k2)
                if c2 is None:
                    counts[k2] = f
                    where[k2] = [wi]
                    if tie_first:
                        if scanned != zi:
                            pos += sum(map(getlen, map(ord, w[scanned:zi])))
                            scanned = zi
                        fresh[k2] = wi << WSH | pos << KB
                    else:
                        fresh[k2] = 0
                else:
                    counts[k2] = c2 + f
                    wl = where[k2]
                    if wl[-1] != wi:
                        wl.append(wi)
                i = w.find(pair, i + 1)  # w[i:i + 2] is not the pair
                if i < 0:
                    break
            words[wi] = w.replace(pair, cz)
            applied += done * f
        del counts[k]
        if tie_first:
            for k2, first in fresh.items():
                c2 = counts[k2]
                if c2 >= min_frequency:
                    heappush(heap, (CMAX - c2) << CSH | first | k2)
                else:
                    del where[k2]  # never merged, never at the heap's top: its chunks are not needed
        else:
            for k2 in fresh:
                c2 = counts[k2]
                if c2 >= min_frequency:
                    heappush(heap, (-c2, tok[k2 >> SHIFT], tok[k2 & MASK], k2))
                else:
                    del where[k2]
        total -= applied
        lengths.append(total)
        learned.append(Merge(tok[a], tok[b], z, c, a, b))
        if progress is not None:
            progress(TrainProgress(len(learned), n_target, tok[a], tok[b], c, total))
    return learned, lengths, reason


# ----- what a result tells ----------------------------------------------------------------------


def sweep(result: TrainResult, sizes: Sequence[int] | None = None) -> tuple[SweepPoint, ...]:
    """The corpus length at each vocabulary size in ``sizes`` (every size when ``None``).

    Read off ``result.lengths``: a vocabulary of ``V`` mergeable tokens is the first ``V - 256``
    merges, so one training run gives the whole curve. Sizes must lie between 256 and
    ``result.vocab_size``.

    >>> r = train(["low lower lowest"], merges=3, pattern=PATTERN_WORDS)
    >>> [(p.vocab_size, p.tokens, round(p.chars_per_token, 2)) for p in sweep(r, [256, 259])]
    [(256, 16, 1.0), (259, 8, 2.0)]
    """
    if sizes is None:
        sizes = range(256, result.vocab_size + 1)
    points = []
    chars = result.stats.chunk_chars
    nbytes = result.stats.chunk_bytes
    for size in sizes:
        if not 256 <= size <= result.vocab_size:
            raise TrainingError(f"vocabulary size {size} is outside what was trained (256..{result.vocab_size})")
        n = size - 256
        tokens = result.lengths[n]
        points.append(SweepPoint(size, n, tokens, chars / tokens if tokens else 0.0, nbytes / tokens if tokens else 0.0))
    return tuple(points)


def replay(result: TrainResult, texts: str | Sequence[str]) -> Iterator[list[list[bytes]]]:
    """The training segmentation of ``texts``, chunk by chunk in corpus order: first as single
    bytes, then after each merge (one list of chunks per step). For small corpora (``--verbose``).

    >>> r = train(["ab ab"], merges=1, pattern=PATTERN_NONE, min_frequency=1)
    >>> [[b"|".join(chunk) for chunk in step] for step in replay(r, ["ab ab"])]
    [[b'a|b| |a|b'], [b'ab| |ab']]
    """
    texts = [fix_surrogates(t) for t in _as_texts(texts)]
    pat = compile_training_pattern(result.pattern)
    splitter = _special_splitter(list(result.special_tokens))
    chunks = [list(m.group().encode("utf-8")) for span, _ in _spans(texts, splitter) for m in _finditer(pat, span)
              if m.group()]
    tok = [bytes([i]) for i in range(256)] + [m.bytes for m in result.merges]
    yield [[tok[t] for t in c] for c in chunks]
    for m in result.merges:
        a, b, z = m.left_id, m.right_id, m.id
        for ci, w in enumerate(chunks):
            out = []
            i = 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(z)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            chunks[ci] = out
        yield [[tok[t] for t in c] for c in chunks]


def crosses_word(token: bytes) -> bool:
    """True when ``token`` has whitespace after a non-whitespace byte: it runs past the end of a
    word (``b"e t"``, ``b"the "``), unlike a word with its leading space (``b" the"``).

    >>> crosses_word(b" the"), crosses_word(b"the "), crosses_word(b"of the"), crosses_word(b"   ")
    (False, True, True, False)
    """
    seen_word = False
    for byte in token:
        if byte in b" \t\n\r\x0b\x0c":
            if seen_word:
                return True
        else:
            seen_word = True
    return False


