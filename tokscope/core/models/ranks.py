"""Byte-pair merging of one chunk: the reference loop (the test oracle) and the fast paths.

A *chunk* is merged on its own: start from single bytes, and repeatedly join the adjacent pair
whose concatenation has the lowest rank, taking the leftmost pair on ties, until no adjacent pair
is in the rank table. This is exactly tiktoken's rule, so the ids come out identical.

All functions here take ``ranks`` (``bytes -> rank``) and an optional ``max_rank``: only merges
whose rank is below it are allowed. ``max_rank`` serves both the rank cut-off ("encode with the
first N merges") and parent recovery (a token's parents are the merge result of its own bytes
with only lower ranks allowed).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping

from .long_chunks import LONG_CHUNK, long_chunk_ids

_INF = float("inf")

#: Chunks at least this many bytes long are merged with a heap instead of the list scan.
HEAP_THRESHOLD = 128


def merge(data: bytes, ranks: Mapping[bytes, int], max_rank: int | None = None) -> list[bytes]:
    """Merge ``data`` into the parts BPE produces; output-identical to :func:`~tokscope.core.reference.merge_reference`.

    Short chunks use a list of pair ranks updated only next to each merge; long chunks use a heap
    with lazy invalidation so that a long run (a paragraph of CJK, a line of spaces) stays fast.

    >>> merge(b"aaa", {b"a": 0, b"aa": 1})
    [b'aa', b'a']
    """
    if len(data) < 2:
        return [data] if data else []
    if len(data) >= HEAP_THRESHOLD:
        return _merge_heap(data, ranks, max_rank)
    if max_rank is None:
        get = ranks.get
    else:

        def get(key: bytes, default: float) -> float:
            rank = ranks.get(key)
            return default if rank is None or rank >= max_rank else rank

    parts = [data[i : i + 1] for i in range(len(data))]
    pair_ranks = [get(parts[i] + parts[i + 1], _INF) for i in range(len(parts) - 1)]
    while pair_ranks:
        best = min(pair_ranks)
        if best == _INF:
            break
        i = pair_ranks.index(best)
        parts[i] += parts.pop(i + 1)
        del pair_ranks[i]
        if i < len(parts) - 1:
            pair_ranks[i] = get(parts[i] + parts[i + 1], _INF)
        if i > 0:
            pair_ranks[i - 1] = get(parts[i - 1] + parts[i], _INF)
    return parts


def _merge_heap(data: bytes, ranks: Mapping[bytes, int], max_rank: int | None) -> list[bytes]:
    """Heap-driven merge over a linked list of part start offsets.

    A heap entry ``(rank, start, end)`` stands for the pair of parts covering ``data[start:end]``;
    it is still valid when ``start`` still begins a part and the part after it still ends at
    ``end`` (part boundaries only ever disappear, so equal bounds mean the same pair).
    """
    n = len(data)
    limit = _INF if max_rank is None else max_rank
    nxt = list(range(1, n + 1))  # start of the following part; n marks the end
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap: list[tuple[int, int, int]] = []
    for i in range(n - 1):
        rank = ranks.get(data[i : i + 2])
        if rank is not None and rank < limit:
            heap.append((rank, i, i + 2))
    heapq.heapify(heap)
    while heap:
        rank, start, end = heapq.heappop(heap)
        if not alive[start]:
            continue
        mid = nxt[start]
        if mid >= n or nxt[mid] != end:
            continue
        # join the part at start with the part at mid
        alive[mid] = False
        nxt[start] = end
        if end < n:
            prv[end] = start
            after = nxt[end]
            r = ranks.get(data[start:after])
            if r is not None and r < limit:
                heapq.heappush(heap, (r, start, after))
        before = prv[start]
        if before >= 0:
            r = ranks.get(data[before:end])
            if r is not None and r < limit:
                heapq.heappush(heap, (r, before, end))
    parts = []
    i = 0
    while i < n:
        parts.append(data[i : nxt[i]])
        i = nxt[i]
    return parts


def _import_compiled() -> object | None:
    """The compiled merge loop (``merge.c`` beside this file), built at install when the machine
    has a C compiler; a top-level module, so a checkout run from its folder finds it too."""
    try:
        import _tokscope_merge
    except ImportError:
        return None
    return _tokscope_merge if getattr(_tokscope_merge, "ABI", None) == 1 else None


_compiled = _import_compiled()
_state = {"compiled": _compiled is not None}


def compiled_available() -> bool:
    """True when the compiled merge loop is installed (it gives the same ids as :func:`merge`)."""
    return _compiled is not None


def use_compiled(on: bool, module: object | None = None) -> None:
    """Use the compiled merge loop when installed (the default), or the pure-Python one (tests
    and benches compare the two); ``module`` puts in a compiled loop built elsewhere (the tests
    build one when none is installed)."""
    global _compiled
    if module is not None:
        _compiled = module
    _state["compiled"] = on and _compiled is not None


#: Longer chunks go to the heap loop (the compiled loop scans its pair ranks once per merge).
COMPILED_MAX_BYTES = 4096
#: Chunks a model merges before it builds the compiled loop's table of its ranks (the table takes
#: a moment to build: a short text is merged without it, on the ranks dict itself).
TABLE_AFTER = 2000
#: Tables kept, one per ranks dict (tokenizers built over the same ranks share one).
TABLES_KEPT = 4

#: id of a ranks dict -> (the dict, held so that its id stays its own; the module; the table or None)
_tables: dict[int, tuple[dict, object, object]] = {}


def _table_for(ranks: dict[bytes, int]) -> object | None:
    """The compiled loop's table of ``ranks`` (shared; None when the ranks do not fit one)."""
    entry = _tables.get(id(ranks))
    if entry is not None and entry[0] is ranks and entry[1] is _compiled:
        return entry[2]
    try:
        table = _compiled.build(ranks)  # type: ignore[union-attr]
    except (TypeError, ValueError):  # ranks that are not bytes -> int from 0 to 2**31 - 1
        table = None
    while len(_tables) >= TABLES_KEPT:
        _tables.pop(next(iter(_tables)))
    _tables[id(ranks)] = (ranks, _compiled, table)
    return table


#: Entries kept in a model's chunk cache before it is emptied (bounded memory on endless input).
CHUNK_CACHE_LIMIT = 200_000


class RanksBPE:
    """Byte-level BPE from mergeable ranks (``bytes -> rank``): the model of the OpenAI encodings
    and of the tokenizers trained here. A token's id is its rank.

    It satisfies :class:`~tokscope.core.tokenizer.stages.Model`; :class:`~tokscope.core.tokenizer.tokenizer.Tokenizer`
    also calls its byte-level fast paths (:meth:`encode_chunk`) directly.

    >>> model = RanksBPE({b"a": 0, b"b": 1, b"ab": 2})
    >>> model.encode_chunk("abab"), model.tokenize("aba")
    ((2, 2), [(2, 0, 2), (0, 2, 3)])
    """

    kind = "bpe"

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        self.ranks: dict[bytes, int] = ranks if isinstance(ranks, dict) else dict(ranks)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._decoder: dict[int, bytes] | None = None
        self._table: tuple[object, object] | None = None
        self._merged = 0  # chunks merged so far, until the compiled table is built

    def __getstate__(self) -> dict:
        return {"ranks": self.ranks}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["ranks"])  # type: ignore[misc]

    @property
    def vocab_size(self) -> int:
        return len(self.ranks)

    @property
    def chunk_cache(self) -> Mapping[str, tuple[int, ...]]:
        """The chunks cut so far and their ids: the live cache :meth:`encode_chunk` fills, for a
        hot loop that looks a chunk up before calling it. Read it, never write it.

        >>> model = RanksBPE({b"a": 0, b"b": 1, b"ab": 2})
        >>> model.encode_chunk("ab"), dict(model.chunk_cache)
        ((2,), {'ab': (2,)})
        """
        return self._cache

    def _compiled_table(self, work: int = 1) -> object | None:
        """The compiled loop's table of the ranks, once this model has merged enough chunks
        (``work`` more now) to be worth building it; None before, and for the pure loop."""
        if not _state["compiled"]:
            return None
        table = self._table
        if table is not None and table[0] is _compiled:
            return table[1]
        self._merged += work
        if self._merged < TABLE_AFTER:
            return None
        self._table = (_compiled, _table_for(self.ranks))
        return self._table[1]

    def _merge(self, data: bytes, max_rank: int | None = None) -> tuple[int, ...]:
        """The ids of ``data`` merged (not one token): the compiled loop when in use, else :func:`merge`."""
        ranks = self.ranks
        if _state["compiled"] and 0 < len(data) <= COMPILED_MAX_BYTES:
            limit = -1 if max_rank is None else max_rank
            table = self._compiled_table()
            if table is not None:
                return _compiled.merge_table(table, data, limit)  # type: ignore[union-attr]
            return _compiled.merge_ids(data, ranks, limit)  # type: ignore[union-attr]
        return tuple([ranks[part] for part in merge(data, ranks, max_rank)])

    def _merge_long(self, data: bytes) -> tuple[int, ...]:
        ranks = self.ranks
        if len(data) >= LONG_CHUNK:  # merged in windows
            return tuple(long_chunk_ids(data, ranks, lambda window: merge(window, ranks)))
        return tuple([ranks[part] for part in merge(data, ranks)])

    def encode_chunk(self, chunk: str) -> tuple[int, ...]:
        """The ids of one chunk (cached; the whole chunk as one token is the fast path)."""
        ids = self._cache.get(chunk)
        if ids is not None:
            return ids
        data = chunk.encode("utf-8")
        ranks = self.ranks
        if len(data) >= LONG_CHUNK:  # merged in windows, and not kept in the cache
            return tuple(long_chunk_ids(data, ranks, lambda window: merge(window, ranks)))
        rank = ranks.get(data)
        ids = (rank,) if rank is not None else self._merge(data)
        cache = self._cache
        if len(cache) >= CHUNK_CACHE_LIMIT:
            cache.clear()
        cache[chunk] = ids
        return ids

    def encode_chunks(self, chunks: list[str]) -> list[int]:
        """The ids of ``chunks`` one after another, each as :meth:`encode_chunk` gives it (in one
        compiled call when the compiled loop is in use and the text is long enough).

        >>> RanksBPE({b"a": 0, b"b": 1, b"ab": 2}).encode_chunks(["ab", "ba", "a"])
        [2, 1, 0, 0]
        """
        out: list[int] = []
        table = self._compiled_table(len(chunks) // 8) if _state["compiled"] else None
        if table is not None:
            _compiled.encode_chunks(table, chunks, self._cache, CHUNK_CACHE_LIMIT, out,  # type: ignore[union-attr]
                                    COMPILED_MAX_BYTES, self._merge_long)
            return out
        extend = out.extend
        cache = self._cache
        encode_chunk = self.encode_chunk
        for chunk in chunks:
            ids = cache.get(chunk)
            extend(ids if ids is not None else encode_chunk(chunk))
        return out

    def encode_bytes(self, data: bytes, max_rank: int | None = None) -> list[int]:
        """The ids of one chunk given as bytes, optionally using only merges below ``max_rank``."""
        ranks = self.ranks
        if len(data) >= LONG_CHUNK:
            return long_chunk_ids(data, ranks, lambda window: merge(window, ranks, max_rank=max_rank))
        return list(self._merge(data, max_rank)) if data else []

    @property
    def decoder(self) -> dict[int, bytes]:
        """``rank -> bytes`` (built on first use)."""
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = {rank: data for data, rank in self.ranks.items()}
        return decoder

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` character offsets; a token that ends inside a character covers it."""
        out = []
        chars = 0
        decoder = self.decoder
        for token_id in self.encode_chunk(text):
            data = decoder[token_id]
            start = chars - 1 if 0x80 <= data[0] < 0xC0 else chars
            chars += sum(1 for b in data if not 0x80 <= b < 0xC0)
            out.append((token_id, start, chars))
        return out

    def token_to_id(self, token: str) -> int | None:
        return self.ranks.get(token.encode("utf-8"))

    def id_to_token(self, token_id: int) -> str | None:
        data = self.decoder.get(token_id)
        return None if data is None else data.decode("utf-8", "replace")

    def get_vocab(self) -> dict[str, int]:
        return {data.decode("utf-8", "replace"): rank for data, rank in self.ranks.items()}
