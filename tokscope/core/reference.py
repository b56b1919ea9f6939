"""Slow, obviously correct oracles the tests hold the fast paths to (as tiktoken keeps
``_educational.py``): nothing in the product calls them.

* :func:`merge_reference`: the lowest-rank-pair-first loop over bytes (the ranks model's oracle);
* :func:`merge_list_reference`: the same loop over a merge list's symbol ids (merge-list BPE's);
* :func:`train_naive`: the recount-everything trainer (:func:`~.train.trainer.train`'s oracle);
* :func:`reference_parents`: a token's two parents by plain BPE below its rank (the merge index's);
* :func:`partition_reference`: llama.cpp's special-token partition, literally, on UTF-8 bytes
  (GGUF's added vocabulary's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .added_tokens.added_vocabulary import AddedToken
from .explain.merge_trees import parent_parts
from .text.types import Parents
from .tokenizer.tokenizer import Tokenizer
from .train.trainer import (
    PATTERN_NONE,
    PATTERN_WORDS,
    STOP_EXHAUSTED,
    STOP_MIN_FREQUENCY,
    STOP_TARGET,
    Merge,
    TrainingError,
    TrainResult,
    check_options,
    chunk_table,
    train_result,
)


def merge_reference(data: bytes, ranks: Mapping[bytes, int], max_rank: int | None = None) -> list[bytes]:
    """The plain lowest-rank-pair-first loop, kept simple on purpose as the oracle for tests.

    >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4, b"bc": 5}
    >>> merge_reference(b"abc", ranks)
    [b'abc']
    >>> merge_reference(b"abc", ranks, max_rank=4)
    [b'ab', b'c']
    >>> merge_reference(b"cab", ranks)
    [b'c', b'ab']
    """
    parts = [bytes([b]) for b in data]
    while len(parts) > 1:
        best_rank = None
        best_index = -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is None or (max_rank is not None and rank >= max_rank):
                continue
            if best_rank is None or rank < best_rank:
                best_rank, best_index = rank, i
        if best_rank is None:
            break
        parts[best_index : best_index + 2] = [parts[best_index] + parts[best_index + 1]]
    return parts


def merge_list_reference(symbols: Sequence[int], merges: Mapping[tuple[int, int], tuple[int, int]]) -> list[int]:
    """The plain loop, kept simple on purpose as the test oracle: repeatedly merge the adjacent
    pair with the lowest rank (leftmost on ties) into its result, until no adjacent pair is in
    ``merges`` (``(left, right) -> (rank, result)``).

    >>> merges = {(0, 1): (1, 3), (1, 2): (0, 5), (3, 2): (2, 4)}
    >>> merge_list_reference([0, 1, 2], merges)
    [0, 5]
    >>> merge_list_reference([0, 1, 1, 2], merges)
    [3, 5]
    """
    parts = list(symbols)
    while len(parts) > 1:
        best = None
        best_index = -1
        for i in range(len(parts) - 1):
            found = merges.get((parts[i], parts[i + 1]))
            if found is not None and (best is None or found[0] < best[0]):
                best, best_index = found, i
        if best is None:
            break
        parts[best_index : best_index + 2] = [best[1]]
    return parts


def train_naive(
    texts: str | Sequence[str],
    *,
    vocab_size: int | None = None,
    merges: int | None = None,
    pattern: str = PATTERN_WORDS,
    tie: str = "first",
    min_frequency: int = 2,
    special_tokens: Sequence[str] = (),
    pattern_name: str | None = None,
) -> TrainResult:
    """The recount-everything trainer: the oracle :func:`train` is tested against. Same rules,
    same result, O(corpus) work per merge.

    >>> r = train_naive(["aaabdaaabac"], merges=3, pattern=PATTERN_NONE)
    >>> [(m.bytes, m.count) for m in r.merges], r.lengths
    ([(b'aa', 4), (b'aaa', 2), (b'aaab', 2)], (11, 9, 7, 5))
    """
    n_target, tie, min_frequency, specials = check_options(vocab_size, merges, tie, min_frequency, special_tokens)
    table = chunk_table(texts, pattern, specials)
    if table.stats.chunks == 0:
        raise TrainingError("the corpus is empty: the pattern finds no text to learn from in it")
    words = [list(c) for c in table.chunks]
    freqs = table.freqs
    tok = [bytes([i]) for i in range(256)]
    learned: list[Merge] = []
    lengths = [sum(len(w) * f for w, f in zip(words, freqs))]
    reason = STOP_TARGET
    while len(learned) < n_target:
        counts: dict[tuple[int, int], int] = {}
        first: dict[tuple[int, int], tuple[int, int]] = {}
        for wi, w in enumerate(words):
            offset = 0
            for j in range(len(w) - 1):
                pair = (w[j], w[j + 1])
                counts[pair] = counts.get(pair, 0) + freqs[wi]
                if pair not in first:
                    first[pair] = (wi, offset)
                offset += len(tok[w[j]])
        candidates = list(counts)
        if not candidates:
            reason = STOP_EXHAUSTED
            break
        if tie == "first":
            best = min(candidates, key=lambda p: (-counts[p], first[p]))
        else:
            best = min(candidates, key=lambda p: (-counts[p], tok[p[0]], tok[p[1]]))
        count = counts[best]
        if count < min_frequency:
            reason = STOP_MIN_FREQUENCY
            break
        a, b = best
        z = len(tok)
        tok.append(tok[a] + tok[b])
        for wi, w in enumerate(words):
            out = []
            i = 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(z)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[wi] = out
        learned.append(Merge(tok[a], tok[b], z, count, a, b))
        lengths.append(sum(len(w) * f for w, f in zip(words, freqs)))
    return train_result(table, learned, lengths, reason, n_target, pattern, pattern_name, tie, min_frequency,
                   specials, vocab_size, merges)


def reference_parents(tokenizer: Tokenizer, token_id: int) -> Parents | None:
    """The parents by plain BPE on the token's bytes with only lower ranks (the test oracle for
    :func:`build_index`; same answer as ``Tokenizer.parents`` without its cache)."""
    data = tokenizer.token_bytes(token_id)
    if tokenizer.is_special(token_id) or len(data) < 2:
        return None
    parts = parent_parts(data, token_id, tokenizer.ranks.get)
    if len(parts) != 2:
        return None
    left, right = tokenizer.rank_of(parts[0]), tokenizer.rank_of(parts[1])
    return None if left is None or right is None else Parents(left, right)


def partition_reference(text: str, tokens: Iterable[AddedToken], allowed_special: frozenset[str],
                        space: bytes = b" \t\n\v\f\r") -> list[tuple[bytes, int | None]]:
    """llama.cpp's ``tokenizer_st_partition`` as its loop reads, on the UTF-8 bytes of ``text``:
    every token by falling byte length (a stable sort of the tokens in id order), each cutting
    all its occurrences out of the raw fragments left to right, ``lstrip``/``rstrip`` dropping
    C ``isspace`` bytes of the fragment beside it; special tokens only when allowed.
    ``(raw fragment bytes, None)`` and ``(b"", token id)`` in order.

    >>> toks = [AddedToken("ab", 1, normalized=False), AddedToken("bcd", 2, normalized=False)]
    >>> partition_reference("abcd", toks, frozenset())
    [(b'a', None), (b'', 2)]
    """
    raw = text.encode("utf-8", "surrogatepass")
    frags: list[tuple[int, int, int | None]] = [(0, len(raw), None)]  # (offset, length, id)
    by_id = sorted((t for t in tokens if t.content), key=lambda t: t.id)
    for token in sorted(by_id, key=lambda t: len(t.content.encode("utf-8", "surrogatepass")), reverse=True):
        if token.special and token.content not in allowed_special:
            continue
        needle = token.content.encode("utf-8", "surrogatepass")
        out: list[tuple[int, int, int | None]] = []
        for offset, length, tid in frags:
            if tid is not None:
                out.append((offset, length, tid))
                continue
            while length > 0:
                match = raw.find(needle, offset, offset + length)
                if match < 0:
                    break
                left = match - offset
                if token.lstrip:
                    while left > 0 and raw[offset + left - 1] in space:
                        left -= 1
                if left > 0:
                    out.append((offset, left, None))
                out.append((match, 0, token.id))
                right = match + len(needle)
                rest = offset + length - right
                if token.rstrip:
                    while rest > 0 and raw[right] in space:
                        right += 1
                        rest -= 1
                offset, length = right, rest
            if length > 0:
                out.append((offset, length, None))
        frags = out
    return [(raw[o:o + n] if tid is None else b"", tid) for o, n, tid in frags]
