"""Merge trees: how a token is built from single bytes, which tokens it helps build, and which
tokens ordinary encoding can never produce.

A token's *parents* are the two tokens whose merge made it (``Tokenizer.parents``); following
them down gives the *merge tree*, whose leaves are single bytes. The reverse direction ("used in":
the tokens that have a given token as a direct parent) needs the parents of every token, so it is
computed in one pass on first use, cached per tokenizer, and then answered from a dict.

The rank cut-off used everywhere in tokscope is the core's ``max_rank``: a merge may build a token
only when its rank is below ``max_rank``. :func:`merges_kept` and :func:`max_rank_for_merges`
translate between that and "the first N merges".

>>> from tokscope.core.tokenizer.tokenizer import Tokenizer
>>> tok = Tokenizer("tiny", {b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}, r"\\w+")
>>> node = merge_tree(tok, 3)
>>> [c.bytes for c in node.children], leaves(node)
([b'ab', b'b'], [b'a', b'b', b'b'])
>>> [u.child for u in used_in(tok, 2)]
[3]
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..text.display import parse_hex, safe_text
from ..text.errors import CancelledError, NotForThisKindError, TokscopeError, UnknownTokenError
from ..tokenizer.tokenizer import Tokenizer
from ..text.types import Parents

_INF = float("inf")


@dataclass(frozen=True, slots=True)
class MergeNode:
    """One node of a merge tree: a token with its id, bytes and rank, and the two parent nodes it
    was merged from (``children`` is empty for a single byte, a special token, or a token that no
    single merge of lower-ranked tokens builds).

    ``merge_rank`` is the rank of the merge that made the token: its rank for byte-level BPE from
    ranks, its merge line (from 0) for a merge list; ``None`` for a symbol no merge makes.
    ``token`` is the vocabulary's spelling (``Ġthe``, ``▁the``; the bytes decoded for byte-level
    BPE from ranks)."""

    id: int
    bytes: bytes
    rank: int | None
    children: tuple[MergeNode, ...] = ()
    merge_rank: int | None = None
    token: str | None = None

    @property
    def text(self) -> str:
        return self.bytes.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class Use:
    """``child`` has the looked-up token as its ``side`` (``"left"`` or ``"right"``) parent;
    ``other`` is the child's other parent."""

    child: int
    other: int
    side: str


# ----- resolving what the user typed ----------------------------------------------------------


def resolve_token(
    tokenizer: Tokenizer, *, token_id: int | None = None, text: str | None = None, hex_bytes: str | None = None
) -> int:
    """The id of the token the user meant: by id, by its text, or by its bytes in hex.

    Text or bytes that are not one token raise :class:`TokscopeError` saying what they encode to.
    """
    if token_id is not None:
        if not tokenizer.has_token(token_id):
            raise UnknownTokenError(token_id, tokenizer.n_vocab)
        return token_id
    if text is not None:
        if text in tokenizer.special_tokens:
            return tokenizer.special_tokens[text]
        if not tokenizer.ranks:
            return _resolve_other(tokenizer, text=text)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise TokscopeError(f"{safe_text(text)!r} is not valid UTF-8 text (a lone surrogate at offset {exc.start}); "
                                f"give the token's bytes with --hex") from None
        rank = tokenizer.rank_of(data)
        if rank is not None:
            return rank
        ids = tokenizer.encode_ordinary(text)
        raise TokscopeError(
            f"{safe_text(text)!r} is not a single token of {safe_text(tokenizer.name)}; it encodes to {len(ids)} "
            f"token{'' if len(ids) == 1 else 's'}: " + " ".join(str(i) for i in ids)
        )
    if hex_bytes is not None:
        data = parse_hex(hex_bytes)
        if not tokenizer.ranks:
            return _resolve_other(tokenizer, data=data)
        rank = tokenizer.rank_of(data)
        if rank is not None:
            return rank
        ids = [tokenizer.rank_of(p) for p in _merge(tokenizer, data)]
        raise TokscopeError(
            f"the bytes {data.hex()} are not a single token of {safe_text(tokenizer.name)}; they merge into "
            f"{len(ids)} token{'' if len(ids) == 1 else 's'}: "
            + " ".join(str(i) for i in ids)
        )
    raise TokscopeError("give a token id, its text, or its bytes in hex")


def _resolve_other(tokenizer: Tokenizer, *, text: str | None = None, data: bytes | None = None) -> int:
    """:func:`resolve_token` for kinds other than byte-level BPE from ranks: by the vocabulary's
    spelling (``▁the``, ``##ing``, ``Ġthe``), else by what the token stands for in decoded text
    (its bytes)."""
    if text is not None:
        found = tokenizer.token_to_id(text)
        if found is not None:
            return found
        data = text.encode("utf-8", errors="surrogatepass")
    from .vocab_search import vocab_table

    found = vocab_table(tokenizer).by_bytes().get(data)  # type: ignore[arg-type]
    if found is not None:
        return found
    if text is not None:
        ids = tokenizer.encode_ordinary(text)
        if len(ids) == 1:  # spelled otherwise than its text (``▁hello`` for "hello"): that token
            return ids[0]
        raise TokscopeError(
            f"{safe_text(text)!r} is not a single token of {safe_text(tokenizer.name)}; it encodes to {len(ids)} "
            "tokens: " + " ".join(str(i) for i in ids)
        )
    raise TokscopeError(f"no token of {safe_text(tokenizer.name)} stands for the bytes {data.hex()}")  # type: ignore[union-attr]


def _merge(tokenizer: Tokenizer, data: bytes, max_rank: int | None = None) -> list[bytes]:
    from ..models.ranks import merge

    return merge(data, tokenizer.ranks, max_rank=max_rank)


# ----- the tree --------------------------------------------------------------------------------


def parents_of(tokenizer: Tokenizer, token_id: int) -> Parents | None:
    """The parents of a token, from the full index when it is built, else ``Tokenizer.parents``."""
    index = _slot(tokenizer).index
    if index is not None:
        return index.parents(token_id)
    return tokenizer.parents(token_id)


def node(tokenizer: Tokenizer, token_id: int) -> MergeNode:
    """One level only: the token with its two parents as childless nodes (for lazy trees)."""
    token = tokenizer.token(token_id)
    pair = None if token.special else parents_of(tokenizer, token_id)
    children: tuple[MergeNode, ...] = ()
    if pair is not None:
        children = tuple(MergeNode(i, tokenizer.token_bytes(i), i, (), _merge_rank(tokenizer, i), tokenizer.token_str(i))
                         for i in (pair.left, pair.right))
    return MergeNode(token.id, token.bytes, token.rank, children, _merge_rank(tokenizer, token_id),
                     tokenizer.token_str(token_id))


def merge_tree(tokenizer: Tokenizer, token_id: int) -> MergeNode:
    """The whole binary tree of merges from ``token_id`` down to single bytes.

    Unknown ids raise :class:`UnknownTokenError`. A special token is a single childless node.
    """
    token = tokenizer.token(token_id)
    if token.special:
        return MergeNode(token.id, token.bytes, None, (), None, tokenizer.token_str(token_id))
    return _build(tokenizer, token_id)


def _merge_rank(tokenizer: Tokenizer, token_id: int) -> int | None:
    from .facts import merge_rank

    return merge_rank(tokenizer, token_id)


def _build(tokenizer: Tokenizer, token_id: int) -> MergeNode:
    pair = parents_of(tokenizer, token_id)
    data = tokenizer.token_bytes(token_id)
    rank, spelling = _merge_rank(tokenizer, token_id), tokenizer.token_str(token_id)
    if pair is None:
        return MergeNode(token_id, data, token_id, (), rank, spelling)
    return MergeNode(token_id, data, token_id, (_build(tokenizer, pair.left), _build(tokenizer, pair.right)), rank,
                     spelling)


def leaves(tree: MergeNode) -> list[bytes]:
    """The leaves' bytes, left to right (they rejoin to the root's bytes)."""
    if not tree.children:
        return [tree.bytes]
    return [b for child in tree.children for b in leaves(child)]


def walk(tree: MergeNode, depth: int = 0) -> Iterator[tuple[int, MergeNode]]:
    """Every node with its depth, parents before children, left before right."""
    yield depth, tree
    for child in tree.children:
        yield from walk(child, depth + 1)


def draw_tree(tree: MergeNode, label: Callable[[MergeNode], str]) -> list[str]:
    """The tree drawn with box characters, one node a line, each node written by ``label``.

    >>> tree = MergeNode(2, b"ab", 2, (MergeNode(0, b"a", 0), MergeNode(1, b"b", 1)))
    >>> draw_tree(tree, lambda n: f"{n.id} {n.text}")
    ['2 ab', '├─ 0 a', '└─ 1 b']
    """
    lines = [label(tree)]

    def add(n: MergeNode, prefix: str) -> None:
        for i, child in enumerate(n.children):
            last = i == len(n.children) - 1
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{label(child)}")
            add(child, prefix + ("   " if last else "│  "))

    add(tree, "")
    return lines


def tree_json(tree: MergeNode) -> dict:
    """The tree as nested plain data: ``id``, ``bytes`` (lowercase hex), ``rank``, ``children``."""
    return {
        "id": tree.id,
        "bytes": tree.bytes.hex(),
        "rank": tree.rank,
        "children": [tree_json(c) for c in tree.children],
    }


# ----- reachability ----------------------------------------------------------------------------


def is_unreachable(tokenizer: Tokenizer, token_id: int) -> bool:
    """True when merging the token's own bytes with the full vocabulary does not give the token
    back, so ordinary encoding can never produce it (special tokens and single bytes never are).

    >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"d": 3, b"bc": 4, b"ab": 5, b"cd": 6, b"abcd": 7}
    >>> tok = Tokenizer("t", ranks, r"\\w+")
    >>> is_unreachable(tok, 7), is_unreachable(tok, 5)
    (True, False)
    """
    token = tokenizer.token(token_id)
    if token.special or tokenizer.is_added(token_id):
        return False
    if not tokenizer.ranks:
        return _unreachable_other(tokenizer, token_id)
    if len(token.bytes) < 2:
        return False
    return _merge(tokenizer, token.bytes) != [token.bytes]


#: First pieces tried before a WordPiece continuation token (see :func:`_unreachable_other`)
_WORD_STARTS = ("a", "x", "q", "z", "0", "1", "b", "s", "t", "e")
_INVALID_UTF8 = frozenset([0xC0, 0xC1, *range(0xF5, 0x100)])


def _unreachable_other(tokenizer: Tokenizer, token_id: int) -> bool:
    """:func:`is_unreachable` for kinds other than byte-level BPE from ranks.

    * BPE from a merge list and Unigram: the model, given the token's own spelling as a chunk,
      does not give the token back. As for byte-level BPE this is exact: in any text, the merges
      (or the best path) inside the token's span are those of the span alone, or fewer.
      A byte-fallback token is unreachable when its byte never occurs in UTF-8 or is an ASCII
      character that is itself a token.
    * WordPiece and WordLevel: a word-initial token is unreachable when encoding its spelling
      through the whole pipeline does not give it back (a lowercasing normalizer never leaves
      ``Hello``; a pre-tokenizer that cuts at punctuation never leaves ``a.b``). A WordPiece
      continuation (``##ing``) is reachable when some word gives it after a first piece; a few
      first pieces are tried.
    * another kind: the model given the spelling does not give the token back.
    """
    from ..models.bpe import byte_token_value

    model = tokenizer.model
    spelling = tokenizer.token_str(token_id)
    kind = model.kind
    if kind in ("bpe", "unigram") and getattr(model, "byte_fallback", False):
        value = byte_token_value(spelling)
        if value is not None:
            return value in _INVALID_UTF8 or (value < 0x80 and model.token_to_id(chr(value)) is not None)
    if kind == "bpe":
        prefix = getattr(model, "continuing_subword_prefix", None)
        suffix = getattr(model, "end_of_word_suffix", None)
        if prefix or suffix:
            return _bpe_decorated_unreachable(model, token_id, spelling, prefix, suffix)
        return [t for t, _, _ in model.tokenize(spelling)] != [token_id]
    if kind == "unigram":
        return tuple(model.best(spelling).ids) != (token_id,) if spelling else True
    if kind == "wordpiece":
        prefix = model.continuing_subword_prefix
        if prefix and spelling.startswith(prefix) and len(spelling) > len(prefix):
            core = spelling[len(prefix):]
            for start in _WORD_STARTS:
                if model.token_to_id(start) is None:
                    continue
                if [t for t, _, _ in model.tokenize(start + core)] == [model.token_to_id(start), token_id]:
                    return False
            return True
        return tokenizer.encode(spelling, disallowed_special=()) != [token_id]
    if kind == "wordlevel":
        return tokenizer.encode(spelling, disallowed_special=()) != [token_id]
    return [t for t, _, _ in model.tokenize(spelling)] != [token_id]


def _bpe_decorated_unreachable(model, token_id: int, spelling: str, prefix: str | None, suffix: str | None) -> bool:  # noqa: ANN001
    """A BPE token under a continuation prefix or end-of-word suffix: its characters as symbols
    (with the prefix on every character of a continuation, on all but the first otherwise, and
    the suffix on the last one of a word's end), merged."""
    core, cont, end = spelling, False, False
    if prefix and core.startswith(prefix) and len(core) > len(prefix):
        core, cont = core[len(prefix):], True
    if suffix and core.endswith(suffix) and len(core) > len(suffix):
        core, end = core[: -len(suffix)], True
    if model.ignore_merges and not cont and end == bool(suffix):
        return False  # the whole word is looked up first
    symbols = []
    for i, c in enumerate(core):
        s = (prefix + c) if prefix and (i or cont) else c
        if end and i == len(core) - 1:
            s += suffix
        found = model.token_to_id(s)
        if found is None:
            return True
        symbols.append(found)
    return model.merge_ids(symbols) != [token_id]


def unreachable_tokens(
    tokenizer: Tokenizer,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> list[int]:
    """Every mergeable token that ordinary encoding can never produce, by id (for every kind: see
    :func:`is_unreachable`)."""
    ranks = tokenizer.ranks
    if not ranks:
        ids = sorted(set(tokenizer.model.get_vocab().values()))
        out = []
        for count, token_id in enumerate(ids):
            if count % 4096 == 0:
                _check(cancel)
                if progress is not None:
                    progress(count, len(ids))
            if is_unreachable(tokenizer, token_id):
                out.append(token_id)
        if progress is not None:
            progress(len(ids), len(ids))
        return out
    items = [(data, rank) for data, rank in ranks.items() if len(data) > 1]
    out = []
    for count, (data, rank) in enumerate(items):
        if count % 4096 == 0:
            _check(cancel)
            if progress is not None:
                progress(count, len(items))
        if _merge(tokenizer, data) != [data]:
            out.append(rank)
    if progress is not None:
        progress(len(items), len(items))
    return sorted(out)


# ----- the full index and "used in" -----------------------------------------------------------


class MergeIndex:
    """Parents of every mergeable token and the reverse map ("used in"), built in one pass.

    Stored compactly (ints, not objects) so that building it for 200k tokens stays quick.
    """

    def __init__(self, parents: dict[int, tuple[int, int] | None], uses: dict[int, list[int]]) -> None:
        self._parents = parents
        self._uses = uses

    def parents(self, token_id: int) -> Parents | None:
        pair = self._parents.get(token_id)
        return None if pair is None else Parents(*pair)

    def uses(self, token_id: int) -> tuple[Use, ...]:
        out = []
        for child in self._uses.get(token_id, ()):
            left, right = self._parents[child]  # type: ignore[misc]
            if left == token_id:
                out.append(Use(child, right, "left"))
            if right == token_id:
                out.append(Use(child, left, "right"))
        return tuple(out)


class _IndexSlot:
    """Where a tokenizer keeps its merge index: the index once built, and the lock its one builder
    holds (kept with the tokenizer through :meth:`Tokenizer.derived`)."""

    __slots__ = ("index", "lock")

    def __init__(self) -> None:
        self.index: MergeIndex | None = None
        self.lock = threading.Lock()


def _slot(tokenizer: Tokenizer) -> _IndexSlot:
    return tokenizer.derived("merges.index", _IndexSlot)


def has_index(tokenizer: Tokenizer) -> bool:
    """True once the full index is built for ``tokenizer`` (so "used in" answers at once)."""
    return _slot(tokenizer).index is not None


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CancelledError("building the merge index was cancelled")


def parent_parts(data: bytes, limit: int, get) -> list[bytes]:  # noqa: ANN001
    """BPE of ``data`` with only ranks below ``limit`` allowed, stopping at two parts.

    The same choice as :func:`tokscope.core.models.ranks.merge` (lowest rank, leftmost), inlined because
    this runs once per token of the vocabulary. Two parts can never merge further (their join is
    the token itself, whose rank is the limit), so stopping there changes nothing.
    """
    n = len(data)
    if n == 2:
        return [data[:1], data[1:]]
    parts = [data[i : i + 1] for i in range(n)]
    pair = []
    for i in range(n - 1):
        r = get(parts[i] + parts[i + 1])
        pair.append(_INF if r is None or r >= limit else r)
    while len(parts) > 2:
        best = min(pair)
        if best == _INF:
            break
        i = pair.index(best)
        parts[i] += parts.pop(i + 1)
        del pair[i]
        if i < len(parts) - 1:
            r = get(parts[i] + parts[i + 1])
            pair[i] = _INF if r is None or r >= limit else r
        if i > 0:
            r = get(parts[i - 1] + parts[i])
            pair[i - 1] = _INF if r is None or r >= limit else r
    return parts


def _valid_pair(pair_lookup: dict[tuple[int, int], int], split: dict[int, tuple[int, int]], left: int, right: int) -> bool:
    """True when BPE on the bytes of ``left`` + ``right`` ends exactly at those two tokens.

    Walks down the right edge of ``left``'s tree and the left edge of ``right``'s tree, undoing
    their merges in reverse order, and fails as soon as some merge across the boundary would have
    come first (a known pair whose merged rank is below the current limit). This is the check of
    GitHub's ``bpe`` crate; it is exact for vocabularies whose ids are their ranks.
    """
    limit = 1 << 62
    while True:
        combined = pair_lookup.get((left, right))
        if combined is not None and combined < limit:
            return False
        if left > right:
            limit = left
            left = split[left][1]
            if left == limit:
                limit = right + 1
                right = split[right][0]
                if right + 1 == limit:
                    return True
        else:
            limit = right + 1
            right = split[right][0]
            if right + 1 == limit:
                limit = left
                left = split[left][1]
                if left == limit:
                    return True


def build_index(
    tokenizer: Tokenizer,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> MergeIndex:
    """The full parents / "used in" index, built once per tokenizer and cached.

    Instead of running BPE on every token's bytes (seconds for 200k tokens), tokens are visited
    in rank order and each one's parents are the first split into two lower-ranked tokens (longest
    left part first) that passes :func:`_valid_pair`, a check that only follows the already known
    parents. The result equals ``Tokenizer.parents`` for every token (tested on every encoding).
    ``progress(done, total)`` is called every few thousand tokens; setting ``cancel`` stops with
    :class:`CancelledError` (nothing is cached).
    """
    slot = _slot(tokenizer)
    if slot.index is not None:
        return slot.index
    # one builder per tokenizer: a second caller waits (still hearing its cancel) and shares the result
    while not slot.lock.acquire(timeout=0.05):
        _check(cancel)
    try:
        if slot.index is None:
            slot.index = _build_index(tokenizer, progress, cancel)
        return slot.index
    finally:
        slot.lock.release()


def _build_index(
    tokenizer: Tokenizer, progress: Callable[[int, int], None] | None, cancel: threading.Event | None
) -> MergeIndex:
    if not tokenizer.ranks:
        return _index_of_merge_list(tokenizer, progress, cancel)
    ranks = tokenizer.ranks
    get = ranks.get
    items = sorted(ranks.items(), key=lambda item: item[1])
    total = len(items)
    split: dict[int, tuple[int, int]] = {}
    pair_lookup: dict[tuple[int, int], int] = {}
    parents: dict[int, tuple[int, int] | None] = {}
    uses: dict[int, list[int]] = {}
    for count, (data, rank) in enumerate(items):
        if count % 8192 == 0:
            _check(cancel)
            if progress is not None:
                progress(count, total)
        n = len(data)
        found = None
        if n > 1:
            for k in range(n - 1, 0, -1):
                left = get(data[:k])
                if left is None or left >= rank:
                    continue
                right = get(data[k:])
                if right is None or right >= rank:
                    continue
                if _valid_pair(pair_lookup, split, left, right):
                    found = (left, right)
                    break
        if found is None:
            split[rank] = (rank, rank)
            if n > 1:
                parents[rank] = None
            continue
        split[rank] = found
        pair_lookup[found] = rank
        parents[rank] = found
        left, right = found
        bucket = uses.get(left)
        if bucket is None:
            uses[left] = [rank]
        else:
            bucket.append(rank)
        if right != left:
            bucket = uses.get(right)
            if bucket is None:
                uses[right] = [rank]
            else:
                bucket.append(rank)
    _check(cancel)
    index = MergeIndex(parents, uses)
    if progress is not None:
        progress(total, total)
    return index


def _index_of_merge_list(
    tokenizer: Tokenizer, progress: Callable[[int, int], None] | None, cancel: threading.Event | None
) -> MergeIndex:
    """The index of a model with a merge list (Hugging Face's BPE): each token's parents are its
    lowest-rank merge; a model without merges has an empty index."""
    model = tokenizer.model
    parents: dict[int, tuple[int, int] | None] = {}
    uses: dict[int, list[int]] = {}
    if getattr(model, "parents", None) is None or tokenizer.model.kind != "bpe":
        return MergeIndex(parents, uses)
    ids = sorted(set(model.get_vocab().values()))
    for count, token_id in enumerate(ids):
        if count % 8192 == 0:
            _check(cancel)
            if progress is not None:
                progress(count, len(ids))
        pair = model.parents(token_id)
        if pair is None:
            continue
        parents[token_id] = (pair.left, pair.right)
        uses.setdefault(pair.left, []).append(token_id)
        if pair.right != pair.left:
            uses.setdefault(pair.right, []).append(token_id)
    if progress is not None:
        progress(len(ids), len(ids))
    return MergeIndex(parents, uses)


def used_in(
    tokenizer: Tokenizer,
    token_id: int,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> tuple[Use, ...]:
    """The tokens that have ``token_id`` as a direct parent, lowest rank first.

    With the full index built (see :func:`build_index`) this is a lookup. Before that, a token
    whose bytes are not too common is answered directly from the tokens that start or end with
    them; a very common one (a single letter) builds the index first.
    """
    if not tokenizer.has_token(token_id):
        raise UnknownTokenError(token_id, tokenizer.n_vocab)
    if not has_index(tokenizer) and not tokenizer.is_special(token_id) and tokenizer.ranks:
        direct = _used_in_direct(tokenizer, token_id)
        if direct is not None:
            return direct
    return build_index(tokenizer, progress=progress, cancel=cancel).uses(token_id)


#: "used in" without the full index only when the token's bytes occur at most this often
DIRECT_LIMIT = 3000


def _used_in_direct(tokenizer: Tokenizer, token_id: int) -> tuple[Use, ...] | None:
    """"Used in" for one token without the full index: a child starts or ends with the token's
    bytes and has a higher rank, so only those tokens' parents are looked up. ``None`` when the
    bytes are too common (a single letter, a space) for this to beat building the index."""
    from .vocab_search import vocab_table

    table = vocab_table(tokenizer)
    data = tokenizer.token_bytes(token_id)
    found = table.occurrences(data, DIRECT_LIMIT)
    if found is None:
        return None
    out = []
    seen = set()
    for i, offset in found:
        child = table.ids[i]
        if child in seen or child <= token_id or child in table.special:
            continue
        size = len(table.data[i])
        if size <= len(data) or (offset != 0 and offset + len(data) != size):
            continue
        seen.add(child)
        pair = parents_of(tokenizer, child)
        if pair is None:
            continue
        if pair.left == token_id:
            out.append(Use(child, pair.right, "left"))
        if pair.right == token_id:
            out.append(Use(child, pair.left, "right"))
    out.sort(key=lambda u: u.child)
    return tuple(out)


# ----- the rank cut-off -----------------------------------------------------------------------


def _sorted_merge_ranks(tokenizer: Tokenizer) -> list[int]:
    if not tokenizer.ranks:
        raise NotForThisKindError("a rank cut-off", tokenizer.name, tokenizer.kind, "byte-level BPE from ranks")
    return tokenizer.derived(
        "merges.ranks", lambda: sorted(rank for data, rank in tokenizer.ranks.items() if len(data) > 1))


def full_max_rank(tokenizer: Tokenizer) -> int:
    """The smallest cut-off that keeps the whole vocabulary (highest mergeable rank + 1)."""
    merges = _sorted_merge_ranks(tokenizer)
    return (merges[-1] + 1) if merges else 0


def merges_kept(tokenizer: Tokenizer, max_rank: int | None) -> int:
    """How many merges (multi-byte tokens) a cut-off keeps: those whose rank is below it.

    >>> tok = Tokenizer("t", {b"a": 0, b"b": 1, b"ab": 2, b"ba": 3}, r"\\w+")
    >>> merges_kept(tok, 0), merges_kept(tok, 3), merges_kept(tok, None)
    (0, 1, 2)

    Another kind keeps all its merges (a merge list's length, 0 without merges); a cut-off for it
    is a :class:`~.errors.NotForThisKindError`.
    """
    if max_rank is None and not tokenizer.ranks:
        return getattr(tokenizer.model, "n_merges", 0)
    merges = _sorted_merge_ranks(tokenizer)
    if max_rank is None:
        return len(merges)
    return bisect.bisect_left(merges, max_rank)


def max_rank_for_merges(tokenizer: Tokenizer, count: int) -> int | None:
    """The cut-off that keeps exactly the first ``count`` merges (``None`` keeps them all).

    >>> tok = Tokenizer("t", {b"a": 0, b"b": 1, b"ab": 2, b"ba": 3}, r"\\w+")
    >>> max_rank_for_merges(tok, 0), max_rank_for_merges(tok, 1), max_rank_for_merges(tok, 5)
    (0, 3, None)
    """
    merges = _sorted_merge_ranks(tokenizer)
    if count <= 0:
        return 0
    if count >= len(merges):
        return None
    return merges[count]
