"""Hugging Face's BPE model: a vocabulary (``str -> id``) and an ordered merge list.

Unlike the ranks-based BPE of :mod:`.bpe` (tiktoken's rule: any adjacent pair whose concatenation
is a token may merge, lowest token rank first), this model merges only the *pairs* the merge list
names, and a pair's priority is its position in that list (its *merge rank*). Several pairs may
make the same token (``"▁t" "he"`` and ``"▁th" "e"`` both make ``"▁the"`` in a SentencePiece
vocabulary), each with its own rank.

A word is cut into one symbol per character (``continuing_subword_prefix`` before every character
but the first, ``end_of_word_suffix`` after the last). A character missing from the vocabulary
becomes its UTF-8 bytes as ``<0xE2>`` tokens when ``byte_fallback`` is on and every one of those
byte tokens exists, else the unknown token (consecutive unknowns fused into one with
``fuse_unk``), else it is dropped. Then, exactly as Hugging Face's ``Word::merge_all``: the
adjacent pair with the lowest merge rank is merged, leftmost first on equal ranks, until no
adjacent pair is in the merge list. The ids and the offsets equal those of the ``tokenizers``
library, including its odd corners (an unknown character whose neighbour fell back to bytes is
emitted *after* those bytes, as Hugging Face does).

:func:`~tokscope.core.reference.merge_list_reference` is the plain loop kept as the test oracle; :class:`BPE` is the model (a
chunk cache, the ``ignore_merges`` whole-word lookup, a list scan for short words and a heap for
long ones, and long words cut where no merge can ever cross) and also answers the explorer's
questions: a token's parents, the rank of a pair, and a step-by-step replay of one word.

>>> vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "bc": 5}
>>> model = BPE(vocab, ["b c", "a b", "ab c"])
>>> [model.id_to_token(t) for t, _, _ in model.tokenize("abc")]
['a', 'bc']
>>> model.merge_rank("a", "b"), model.parents(4)
(1, Parents(left=3, right=2))
"""

from __future__ import annotations

import heapq
import operator
import sys
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from typing import Any, NamedTuple

from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..text.types import Parents
from .base import CACHE_CAPACITY, ChunkCache, VocabLookups, check_vocab, compiled_vocab, reverse_vocab
from ..text.compiled import CompiledPart

#: Words with at least this many symbols are merged with a heap instead of the list scan.
HEAP_THRESHOLD = 48
#: Words of at least this many characters are first cut where no merge can cross (see
#: :meth:`BPE._cut_points`), so a long text with no pre-tokenizer is merged word by word.
CUT_THRESHOLD = 256
#: Words with more symbols than this are not replayed step by step (every step lists every pair).
REPLAY_LIMIT = 2048

_MASK = 0xFFFFFFFF
_NONE = 1 << 40  # above every rank

#: ``<0xE2>``-style names of the 256 bytes, as byte-fallback vocabularies spell them.
BYTE_TOKENS: tuple[str, ...] = tuple(f"<0x{b:02X}>" for b in range(256))


def byte_token_value(token: str) -> int | None:
    """The byte a ``<0xE2>``-style token stands for, or ``None``; Hugging Face's own rule (six
    characters, ``<0x`` and ``>`` around two hexadecimal digits; Rust's parser also takes ``+``
    for the first digit).

    >>> byte_token_value("<0xE2>"), byte_token_value("<0xe2>"), byte_token_value("<0x+F>"), byte_token_value("<0xZZ>")
    (226, 226, 15, None)
    """
    if len(token) != 6 or not token.startswith("<0x") or token[5] != ">":
        return None
    hi, lo = token[3], token[4]
    if lo not in _HEX or (hi not in _HEX and hi != "+"):
        return None
    return int(lo, 16) if hi == "+" else int(hi + lo, 16)


_HEX = frozenset("0123456789abcdefABCDEF")


# ----- the compiled merge loop -------------------------------------------------------------------


compiled_part = CompiledPart("MLIST_ABI")


def compiled_available() -> bool:
    """True when the compiled merge loop is installed (it merges as :meth:`BPE._merge_heap`)."""
    return compiled_part.available()


def use_compiled(on: bool, module: Any = None) -> None:
    """Merge with the compiled loop when installed (the default), or with the pure-Python one
    (the tests' oracle; tests and benches compare the two); ``module`` puts in a compiled one
    built elsewhere (the tests build one when none is installed).

    >>> was = compiled_available()
    >>> use_compiled(False); compiled_merge() is None
    True
    >>> use_compiled(True); (compiled_merge() is not None) == was
    True
    """
    compiled_part.use(on, module)


def compiled_merge() -> Any:
    """The compiled merge-list module in use, or None (the pure-Python loop)."""
    return compiled_part.get()


# ----- plain data for the explorer ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MergeRule:
    """One line of the merge list: its rank (0 for the first line), the two tokens it joins and
    the token it makes."""

    rank: int
    left: int
    right: int
    result: int


@dataclass(frozen=True, slots=True)
class InitialSymbol:
    """A symbol of a word before any merge: ``kind`` is ``"char"`` (the character is a token),
    ``"byte"`` (one byte of a character missing from the vocabulary) or ``"unk"`` (one or, with
    ``fuse_unk``, several characters standing as the unknown token). ``start``/``end`` are the
    character offsets of what it stands for in the word."""

    id: int
    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class PairCandidate:
    """An adjacent pair of symbols at one step: the index of its left symbol, the two ids, and its
    merge rank and result (``None`` when the merge list does not name the pair)."""

    position: int
    left: int
    right: int
    rank: int | None
    result: int | None


@dataclass(frozen=True, slots=True)
class BPEStep:
    """One merge of a replay: the symbols before it, the merge applied (the lowest rank, leftmost
    on ties) at ``position`` and the symbols after it; :attr:`candidates` gives every adjacent
    pair with its rank. ``number`` counts from 1."""

    number: int
    before: tuple[int, ...]
    position: int
    rule: MergeRule
    after: tuple[int, ...]
    #: the merge list's lookup, ``(left, right) -> MergeRule | None``
    pair: Callable[[int, int], MergeRule | None] = field(repr=False, compare=False)

    @property
    def candidates(self) -> tuple[PairCandidate, ...]:
        """Every adjacent pair of :attr:`before` with its merge rank and result, worked out when
        asked: a paragraph-long word (a SentencePiece-style file does not pre-split) has a few
        thousand steps of a few thousand pairs each, hundreds of MB if every step kept them."""
        before, pair = self.before, self.pair
        out = []
        for i in range(len(before) - 1):
            found = pair(before[i], before[i + 1])
            out.append(PairCandidate(i, before[i], before[i + 1], None if found is None else found.rank,
                                     None if found is None else found.result))
        return tuple(out)


@dataclass(frozen=True, slots=True)
class BPEReplay:
    """How one word became its tokens.

    ``initial`` are the symbols before any merge; ``dropped`` the character offsets of characters
    that became no symbol at all (missing from the vocabulary, with no byte fallback and no
    unknown token). ``whole_word`` is True when ``ignore_merges`` found the word itself in the
    vocabulary (no merge is tried). ``replayed`` is False when the word had more than
    :data:`REPLAY_LIMIT` symbols: ``steps`` is then empty but ``tokens`` are still exact.
    """

    word: str
    initial: tuple[InitialSymbol, ...]
    dropped: tuple[int, ...]
    steps: tuple[BPEStep, ...]
    tokens: tuple[int, ...]
    whole_word: bool
    replayed: bool


# ----- merge list ----------------------------------------------------------------------------------


def parse_merges(merges: Iterable[Any]) -> list[tuple[str, str]]:
    """The merge list as pairs, from either format of ``tokenizer.json``: ``"a b"`` strings (one
    space; lines starting with ``#version`` skipped, as in a ``merges.txt``) or ``["a", "b"]``
    pairs.

    >>> parse_merges(["#version: 0.2", "a b", "ab c"])
    [('a', 'b'), ('ab', 'c')]
    >>> parse_merges([["a b", "c"]])
    [('a b', 'c')]
    """
    return list(zip(*merge_columns(merges)))


_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)


def _columns_fast(items: list[Any]) -> tuple[list[str], list[str]] | None:
    """:func:`merge_columns` at C speed for a well-formed list (None: let the slow loop look).
    ``"a b"`` strings are joined by spaces and cut at every space (checked to hold one space
    each: at least one, and twice as many parts as strings); pairs are checked by their type and
    length.

    >>> _columns_fast(["a b", "ab c"]), _columns_fast(["a b c", "d"]), _columns_fast([["a", "b"]])
    ((['a', 'ab'], ['b', 'c']), None, (['a'], ['b']))
    """
    if not items:
        return [], []
    if isinstance(items[0], str):
        if items[0].startswith("#"):
            items = [item for item in items if not (type(item) is str and item.startswith("#version"))]
        try:
            parts = " ".join(items).split(" ")
        except TypeError:  # not all strings
            return None
        # 2n parts with at least one space in each item: exactly one in each
        if len(parts) != 2 * len(items) or min(map(str.count, items, repeat(" "))) != 1:
            return None
        return parts[0::2], parts[1::2]
    if set(map(type, items)) != {list} or set(map(len, items)) != {2}:
        return None
    lefts, rights = list(map(_FIRST, items)), list(map(_SECOND, items))  # zip(*items) is 10x slower
    try:
        "".join(lefts), "".join(rights)  # both all strings
    except TypeError:
        return None
    return lefts, rights


def join_keys(lefts: array, rights: array) -> array:
    """The merge keys ``left << 32 | right`` of two ``array('I')`` of ids, as ``array('Q')``: the
    two halves interleaved as the machine lays out a u64, without an int object per key.

    >>> list(join_keys(array("I", [1, 2]), array("I", [3, 4]))) == [1 << 32 | 3, 2 << 32 | 4]
    True
    """
    halves = array("I", bytes(8 * len(lefts)))
    low, high = (rights, lefts) if sys.byteorder == "little" else (lefts, rights)
    halves[0::2] = low
    halves[1::2] = high
    keys = array("Q")
    keys.frombytes(halves.tobytes())
    return keys


def merges_from_list(vocab: dict[str, int], merges: Any) -> tuple[array, array] | None:
    """The merge arrays (``left << 32 | right`` and the merged token's id, by rank) read straight
    from a file's merge list by the compiled reader (``merge.c``'s ``vocab_merges``: no columns, no
    look-up per merge in Python), or None when it is not installed or the list is not plain ("a b"
    lines or [a, b] lists, every token in the vocabulary): then :func:`merge_columns` and
    :meth:`BPE._build_merges` read it and name what is wrong.

    >>> got = merges_from_list({"a": 0, "b": 1, "ab": 2}, ["a b"])
    >>> got is None or (list(got[0]), list(got[1])) == ([1], [2])
    True
    """
    compiled = compiled_vocab()
    if compiled is None:
        return None
    got = compiled.vocab_merges(vocab, merges)
    if got is None:
        return None
    keys, results = array("Q"), array("I")
    if keys.itemsize != 8 or results.itemsize != 4:
        return None
    keys.frombytes(got[0])
    results.frombytes(got[1])
    return keys, results


class MergeColumns(NamedTuple):
    """A merge list already cut into its two columns (the left tokens and the right ones, by
    rank), as a file reader that cuts merges its own way gives it to :class:`BPE`.

    >>> BPE({"a": 0, "b": 1, "ab": 2}, MergeColumns(["a"], ["b"])).merge_rank("a", "b")
    0
    """

    lefts: list[str]
    rights: list[str]


def merge_columns(merges: Iterable[Any]) -> tuple[list[str], list[str]]:
    """The merge list (either format of :func:`parse_merges`, or :class:`MergeColumns`) as two
    columns, the left tokens and the right ones: no tuple per merge, so a few hundred thousand
    merges load at C speed.

    >>> merge_columns(["#version: 0.2", "a b", "ab c"])
    (['a', 'ab'], ['b', 'c'])
    """
    if isinstance(merges, MergeColumns):
        if len(merges.lefts) != len(merges.rights):
            raise TokenizerFileError("the merge list's two columns differ in length")
        return merges.lefts, merges.rights
    items = merges if isinstance(merges, list) else list(merges)
    fast = _columns_fast(items)
    if fast is not None:
        return fast
    legacy = bool(items) and isinstance(items[0], str)
    # the slow loop finds the first bad item and says what is wrong with it
    out: list[tuple[str, str]] = []
    number = 0
    for item in items:
        if legacy:
            if not isinstance(item, str):
                raise TokenizerFileError(f"merge list mixes 'a b' strings and pairs (item {item!r})")
            if item.startswith("#version"):
                continue
            number += 1
            parts = item.split(" ")
            if len(parts) != 2:
                raise TokenizerFileError(f"merge {number} {item!r} is not two tokens separated by one space")
            out.append((parts[0], parts[1]))
        else:
            number += 1
            if (
                isinstance(item, str)
                or not isinstance(item, Sequence)
                or len(item) != 2
                or not all(isinstance(p, str) for p in item)
            ):
                raise TokenizerFileError(f"merge {number} {item!r} is not a pair of tokens")
            out.append((item[0], item[1]))
    return [a for a, _ in out], [b for _, b in out]


# ----- the model ------------------------------------------------------------------------------------


class BPE(ChunkCache, VocabLookups):
    """Hugging Face's BPE model (see the module docstring); ids and offsets as ``tokenizers``.

    ``vocab`` maps tokens to ids; ``merges`` is the ordered merge list in either format of
    :func:`parse_merges`. A merge naming a token missing from the vocabulary, or whose result is
    missing, is a :class:`TokenizerFileError`; a ``dropout`` other than none or 0 is an
    :class:`UnsupportedComponentError` (its random merges cannot be reproduced).

    >>> model = BPE({"h": 0, "i": 1, "hi": 2, "<unk>": 3}, [("h", "i")], unk_token="<unk>")
    >>> model.tokenize("hi!")
    [(2, 0, 2), (3, 2, 3)]
    """

    kind = "bpe"

    def __init__(
        self,
        vocab: Mapping[str, int],
        merges: Iterable[Any],
        *,
        unk_token: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        ignore_merges: bool = False,
        dropout: float | None = None,
    ) -> None:
        if dropout is not None:
            if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
                raise TokenizerFileError(f"BPE dropout {dropout!r} is not a probability between 0 and 1")
            if dropout != 0:
                raise UnsupportedComponentError("model", "BPE", f"dropout {dropout}: random merges")
        self._vocab = check_vocab(vocab)
        self.unk_token = unk_token
        self.fuse_unk = bool(fuse_unk)
        self.byte_fallback = bool(byte_fallback)
        self.continuing_subword_prefix = continuing_subword_prefix or None
        self.end_of_word_suffix = end_of_word_suffix or None
        self.ignore_merges = bool(ignore_merges)
        # The merge list as two arrays by rank: ``left << 32 | right`` and the result's id.
        built = merges_from_list(self._vocab, merges) if self.continuing_subword_prefix is None else None
        self._keys, self._results = built or self._build_merges(*merge_columns(merges))
        self._setup()

    def _setup(self) -> None:
        """The lookups and caches, from the vocabulary and the merge arrays (also after unpickling)."""
        vocab = self._vocab
        # id -> token, the first of two tokens that share an id (a malformed file)
        self._vocab_r: dict[int, str] = reverse_vocab(vocab)
        # (left << 32 | right) -> rank: built on first use (:meth:`__getattr__`), so a load, and
        # text whose words are all whole tokens, never pay for it
        self.__dict__.pop("_merges", None)
        # With two tokens of one id Hugging Face's stale-entry check can accept a merge the plain
        # scan would not: such vocabularies always use the heap, which does exactly what it does.
        self._always_heap = len(self._vocab_r) != len(vocab)
        self._plain = self.continuing_subword_prefix is None and self.end_of_word_suffix is None
        self.forget()
        self._produced_by: dict[int, list[int]] | None = None
        self._crossing: frozenset[str] | None = None
        self._byte_ids: tuple[int | None, ...] = tuple(map(vocab.get, BYTE_TOKENS))
        #: every character missing from the vocabulary becomes its bytes' tokens
        self._bytes_complete = self.byte_fallback and None not in self._byte_ids
        #: the byte ids of each missing character met (with ``_bytes_complete``)
        self._fallback_ids: dict[str, list[int]] = {}
        #: ``(module, table)``: the compiled loop's copy of the merge list, made on first use
        self._mtable: tuple[Any, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        """The merge map, built on first use: ``(left << 32 | right) -> rank`` from :attr:`_keys`;
        a pair listed twice keeps its last rank, as Hugging Face's map does.

        >>> model = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")])
        >>> "_merges" in vars(model), model._merges, "_merges" in vars(model)
        (False, {1: 0}, True)
        """
        if name != "_merges" or "_keys" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        keys = self._keys.tolist()
        merges: dict[int, int] = dict(zip(keys, range(len(keys))))
        self._merges = merges
        return merges

    _STATE = ("_vocab", "_keys", "_results", "unk_token", "fuse_unk", "byte_fallback", "continuing_subword_prefix",
              "end_of_word_suffix", "ignore_merges")

    def __getstate__(self) -> dict:
        """The vocabulary and the merge arrays (compact; the lookups are rebuilt, caches dropped)."""
        return {name: getattr(self, name) for name in self._STATE}

    def __setstate__(self, state: dict) -> None:
        for name in self._STATE:
            setattr(self, name, state[name])
        self._setup()

    def _build_merges(self, lefts: list[str], rights: list[str]) -> tuple[array, array]:
        """The merge keys (``left << 32 | right``) and the results' ids, by rank, as arrays (each key
        goes straight into its array: no list of them as Python integers is kept)."""
        if len(lefts) > _MASK:
            raise TokenizerFileError("the merge list is too long")
        vocab = self._vocab
        get = vocab.get
        if self.continuing_subword_prefix is None:
            try:  # an id of None (a part not in the vocabulary) is a TypeError in an array
                a_ids = array("I", map(get, lefts))
                b_ids = array("I", map(get, rights))
                new_ids = array("I", map(get, map(operator.add, lefts, rights)))
            except TypeError:
                pass
            else:
                return join_keys(a_ids, b_ids), new_ids
        # the merge by merge loop: the prefix, and the first bad merge's one-line error
        keys = array("Q")
        results = array("I")
        prefix = self.continuing_subword_prefix
        prefix_len = len(prefix.encode()) if prefix else 0
        for rank, (a, b) in enumerate(zip(lefts, rights)):
            where = f"merge {rank + 1} ({a!r} {b!r})"
            a_id = vocab.get(a)
            if a_id is None:
                raise TokenizerFileError(f"{where}: {a!r} is not in the vocabulary")
            b_id = vocab.get(b)
            if b_id is None:
                raise TokenizerFileError(f"{where}: {b!r} is not in the vocabulary")
            if prefix_len:
                # Hugging Face drops the prefix's length from the right part whether or not it
                # starts with the prefix.
                raw = b.encode()
                if len(raw) < prefix_len:
                    raise TokenizerFileError(f"{where}: {b!r} is shorter than the prefix {prefix!r}")
                try:
                    new = a + raw[prefix_len:].decode()
                except UnicodeDecodeError:
                    raise TokenizerFileError(f"{where}: cutting the prefix {prefix!r} off {b!r} splits a character") from None
            else:
                new = a + b
            new_id = vocab.get(new)
            if new_id is None:
                raise TokenizerFileError(f"{where}: the merged token {new!r} is not in the vocabulary")
            keys.append(a_id << 32 | b_id)
            results.append(new_id)
        return keys, results

    # ----- the Model protocol -------------------------------------------------------------------


    # ----- tokenizing ---------------------------------------------------------------------------

    def _tokenize(self, text: str) -> list[tuple[int, int, int]]:
        if self.ignore_merges:
            whole = self._vocab.get(text)
            if whole is not None:
                return [(whole, 0, len(text))]
        if len(text) >= CUT_THRESHOLD and self._plain and not self.ignore_merges and not self._always_heap:
            cuts = self._cut_points(text)
            if cuts:
                return self._tokenize_cut(text, cuts)
        return self._encode_word(text)

    def _encode_word(self, word: str) -> list[tuple[int, int, int]]:
        """One word merged, with its offsets (no cache, no cuts)."""
        ids, lens = self._symbols(word)
        ends = self._merge(ids, lens)
        if lens is None:  # one symbol per character: the ends are character offsets already
            out = []
            start = 0
            for t, end in zip(ids, ends):
                out.append((t, start, end))
                start = end
            return out
        return _with_offsets(word, ids, ends)

    # ----- ids only -----------------------------------------------------------------------------

    def _tokenize_ids(self, text: str) -> list[int]:
        """:meth:`_tokenize` without offsets: the same cuts, merges and ids, no byte-to-character
        arithmetic (what the ids-only encode needs).

        >>> m = BPE({"▁": 0, "a": 1, "b": 2, "▁a": 3, "<unk>": 4}, ["▁ a"], unk_token="<unk>")
        >>> m.tokenize_ids("▁ab😀"), [t for t, _, _ in m.tokenize("▁ab😀")]
        ([3, 2, 4], [3, 2, 4])
        """
        if self.ignore_merges:
            whole = self._vocab.get(text)
            if whole is not None:
                return [whole]
        # the compiled loop merges a long word whole (the same ids: no merge crosses a cut); the
        # offsets path keeps the cuts, whose parts' cache serves the explorer's edits
        if (len(text) >= CUT_THRESHOLD and self._plain and not self.ignore_merges and not self._always_heap
                and compiled_merge() is None):
            cuts = self._cut_points(text)
            if cuts:
                return self._ids_cut(text, cuts)
        return self._ids_word(text)

    def _ids_word(self, word: str) -> list[int]:
        """:meth:`_encode_word`'s ids alone."""
        table = self._compiled_table()
        if self._plain:
            if table is not None and getattr(table[0], "MWORD_ABI", None) == 1:
                # symbols and merges in one call; None: a character with no token and no byte fallback
                found = table[0].mlist_word(table[1], word, self._vocab, self._byte_ids if self._bytes_complete else None)
                if found is not None:
                    return found
            ids = list(map(self._vocab.get, word))
            if None in ids:
                ids = self._symbol_ids_plain(word, ids) if self._bytes_complete else self._symbols_plain(word, ids)[0]
        else:
            ids = self._symbols_slow(word)[0]
        if table is not None:
            return table[0].mlist_merge(table[1], ids)
        if len(ids) >= HEAP_THRESHOLD or self._always_heap:
            self._merge_heap(ids)
        else:
            self._merge_scan(ids)
        return ids  # type: ignore[return-value]

    def _ids_cut(self, word: str, cuts: list[int]) -> list[int]:
        """:meth:`_tokenize_cut`'s ids alone: each part's ids from the ids cache or merged."""
        out: list[int] = []
        extend = out.extend
        recall = self.recall_ids
        start = 0
        for end in [*cuts, len(word)]:
            piece = word[start:end]
            ids = recall(piece)
            if ids is None:
                ids = self.remember_ids(piece, self._ids_word(piece))
            extend(ids)
            start = end
        return out

    def _symbols(self, word: str) -> tuple[list[int], list[int] | None]:
        """The symbols of ``word`` before any merge, and each one's length in bytes, as Hugging
        Face's ``merge_word`` builds them; ``None`` for the lengths when every character of the word
        is a token (one symbol per character, so offsets are counted in characters directly)."""
        if self._plain:
            ids = list(map(self._vocab.get, word))
            if None not in ids:
                return ids, None  # type: ignore[return-value]
            return self._symbols_plain(word, ids)
        ids, lens, _ = self._symbols_slow(word)
        return ids, lens

    def _symbol_ids_plain(self, word: str, found: list[int | None]) -> list[int]:
        """:meth:`_symbols_plain`'s ids alone when every character missing from the vocabulary
        falls back to bytes (``byte_fallback`` with all 256 byte tokens: no unknown token is
        ever made), so the runs of known characters and each missing one's byte ids are joined
        with no lengths worked out.

        >>> m = BPE({"a": 0, **{f"<0x{b:02X}>": b + 1 for b in range(256)}}, [], byte_fallback=True)
        >>> m._symbol_ids_plain("aé", [0, None]), m._symbols_plain("aé", [0, None])[0]
        ([0, 196, 170], [0, 196, 170])
        """
        ids: list[int] = []
        extend = ids.extend
        fallback = self._fallback_ids
        prev = 0
        n = len(word)
        index = found.index
        while prev < n:
            try:
                i = index(None, prev)
            except ValueError:
                extend(found[prev:])  # type: ignore[arg-type]
                break
            if i > prev:
                extend(found[prev:i])  # type: ignore[arg-type]
            ch = word[i]
            got = fallback.get(ch)
            if got is None:
                byte_ids = self._byte_ids
                got = [byte_ids[b] for b in _utf8(ch)]
                if len(fallback) >= CACHE_CAPACITY:
                    fallback.clear()
                fallback[ch] = got  # type: ignore[assignment]
            extend(got)
            prev = i + 1
        return ids

    def _symbols_plain(self, word: str, found: list[int | None]) -> tuple[list[int], list[int]]:
        """:meth:`_symbols_slow` for a word with no prefix or suffix, given each character's id
        (``None`` for the unknown ones): the runs of known characters are copied whole."""
        ids: list[int] = []
        lens: list[int] = []
        unk: list[int] | None = None  # [id, byte length] of a pending unknown
        byte_ids = self._byte_ids
        prev = 0
        n = len(word)
        while prev < n:
            try:
                i = found.index(None, prev)
            except ValueError:
                i = n
            if i > prev:
                if unk is not None:
                    ids.append(unk[0])
                    lens.append(unk[1])
                    unk = None
                ids.extend(found[prev:i])  # type: ignore[arg-type]
                lens.extend(_utf8_lengths(word[prev:i]))
            if i == n:
                break
            raw = _utf8(word[i])
            if self.byte_fallback:
                fallback = [byte_ids[b] for b in raw]
                if None not in fallback:
                    ids.extend(fallback)  # type: ignore[arg-type]
                    lens.extend([1] * len(raw))
                    prev = i + 1
                    continue
            if self.unk_token is not None:
                if unk is not None and self.fuse_unk:
                    unk[1] += len(raw)
                else:
                    unk_id = self._vocab.get(self.unk_token)
                    if unk_id is None:
                        raise TokenizerFileError(f"the unknown token {self.unk_token!r} is not in the vocabulary")
                    if unk is not None:
                        ids.append(unk[0])
                        lens.append(unk[1])
                    unk = [unk_id, len(raw)]
            prev = i + 1
        if unk is not None:
            ids.append(unk[0])
            lens.append(unk[1])
        return ids, lens

    def _symbols_slow(self, word: str) -> tuple[list[int], list[int], list[tuple[str, int, int]]]:
        vocab = self._vocab
        prefix = self.continuing_subword_prefix
        suffix = self.end_of_word_suffix
        ids: list[int] = []
        lens: list[int] = []
        where: list[tuple[str, int, int]] = []  # kind and character span of each symbol
        unk: list[int] | None = None  # [id, byte length, first char, end char]
        last = len(word) - 1
        for i, ch in enumerate(word):
            size = len(_utf8(ch))
            s = ch
            if i and prefix:
                s = prefix + s
            if i == last and suffix:
                s = s + suffix
            found = vocab.get(s)
            if found is not None:
                if unk is not None:
                    ids.append(unk[0])
                    lens.append(unk[1])
                    where.append(("unk", unk[2], unk[3]))
                    unk = None
                ids.append(found)
                lens.append(size)
                where.append(("char", i, i + 1))
                continue
            if self.byte_fallback:
                byte_ids = self._byte_ids
                fallback = [byte_ids[b] for b in _utf8(s)]
                if None not in fallback:
                    # a pending unknown stays pending: Hugging Face adds it after these bytes
                    ids.extend(fallback)  # type: ignore[arg-type]
                    lens.extend([1] * len(fallback))
                    where.extend([("byte", i, i + 1)] * len(fallback))
                    continue
            if self.unk_token is not None:
                if unk is not None and self.fuse_unk:
                    unk[1] += size
                    unk[3] = i + 1
                    continue
                unk_id = vocab.get(self.unk_token)
                if unk_id is None:
                    raise TokenizerFileError(f"the unknown token {self.unk_token!r} is not in the vocabulary")
                if unk is not None:
                    ids.append(unk[0])
                    lens.append(unk[1])
                    where.append(("unk", unk[2], unk[3]))
                unk = [unk_id, size, i, i + 1]
        if unk is not None:
            ids.append(unk[0])
            lens.append(unk[1])
            where.append(("unk", unk[2], unk[3]))
        return ids, lens, where

    def _merge(self, ids: list[int], lens: list[int] | None) -> list[int]:
        """Merge ``ids`` in place; returns each final symbol's end as a byte offset (the sum of
        its initial symbols' lengths, as Hugging Face counts offsets), or with ``lens`` ``None``
        as a count of initial symbols."""
        table = self._compiled_table()
        if table is not None:
            ids[:], bounds = table[0].mlist_merge(table[1], ids, True)
        elif len(ids) >= HEAP_THRESHOLD or self._always_heap:
            bounds = self._merge_heap(ids)
        else:
            bounds = self._merge_scan(ids)
        if lens is None:
            return bounds
        cum = [0]
        total = 0
        for size in lens:
            total += size
            cum.append(total)
        return [cum[b] for b in bounds]

    def _compiled_table(self) -> tuple[Any, Any] | None:
        """``(module, table)`` of the compiled merge loop in use (its table made from the merge
        arrays on first use, again when the module in use changes), or None."""
        module = compiled_merge()
        if module is None:
            return None
        found = self._mtable
        if found is None or found[0] is not module:
            keys, results = self._keys, self._results
            if keys.itemsize != 8 or results.itemsize != 4:  # the table reads the arrays' raw items
                keys, results = array("Q", keys), array("I", results)
            found = self._mtable = (module, module.mlist_build(keys, results))
        return found

    def _merge_scan(self, ids: list[int]) -> list[int]:
        """The list scan for short words: each pair's rank, updated only next to each merge; the
        minimum is the lowest rank and ``index`` finds the leftmost."""
        get = self._merges.get
        results = self._results
        n = len(ids)
        ends = list(range(1, n + 1))
        if n < 2:
            return ends
        none = _NONE
        pairs = [get(ids[i] << 32 | ids[i + 1], none) for i in range(n - 1)]
        while pairs:
            best = min(pairs)
            if best == none:
                break
            i = pairs.index(best)
            new = results[best]
            ids[i] = new
            del ids[i + 1]
            del ends[i]
            del pairs[i]
            if i < len(pairs):
                pairs[i] = get(new << 32 | ids[i + 1], none)
            if i:
                pairs[i - 1] = get(ids[i - 1] << 32 | new, none)
        return ends

    def _merge_heap(self, ids: list[int]) -> list[int]:
        """Hugging Face's ``Word::merge_all``: a heap of ``(rank, position)`` over a linked list of
        symbols; an entry is skipped when its left symbol is gone, is last, or the pair there no
        longer makes the entry's token."""
        get = self._merges.get
        results = self._results
        n = len(ids)
        sym = ids[:]
        nxt = list(range(1, n + 1))  # n: last symbol; n + 1: a symbol merged into its left
        prv = list(range(-1, n - 1))
        heap = []  # rank << 32 | position of the left symbol
        for i in range(n - 1):
            v = get(sym[i] << 32 | sym[i + 1])
            if v is not None:
                heap.append(v << 32 | i)
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        gone = n + 1
        while heap:
            top = pop(heap)
            pos = top & _MASK
            right = nxt[pos]
            if right >= n:  # gone, or the last symbol
                continue
            new = results[top >> 32]
            v = get(sym[pos] << 32 | sym[right])
            if v is None or results[v] != new:
                continue
            sym[pos] = new
            after = nxt[right]
            nxt[right] = gone
            nxt[pos] = after
            if after < n:
                prv[after] = pos
            before = prv[pos]
            if before >= 0:
                v = get(sym[before] << 32 | new)
                if v is not None:
                    push(heap, v << 32 | before)
            if after < n:
                v = get(new << 32 | sym[after])
                if v is not None:
                    push(heap, v << 32 | pos)
        ids.clear()
        ends = []
        i = 0
        while i < n:
            ids.append(sym[i])
            i = nxt[i]
            ends.append(i)
        return ends

    # ----- long words ---------------------------------------------------------------------------

    def _crossing_pairs(self) -> frozenset[str]:
        """Every two-character string found inside a token that some merge makes."""
        if self._crossing is None:
            out: set[str] = set()
            vocab_r = self._vocab_r
            for result in set(self._results):
                token = vocab_r[result]
                out.update(token[i : i + 2] for i in range(len(token) - 1))
            self._crossing = frozenset(out)
        return self._crossing

    def _cut_points(self, word: str) -> list[int]:
        """Offsets where ``word`` can be cut without changing its tokens: between two characters
        that are tokens themselves and that no merged token holds side by side. No merge can join
        the two sides (a merged symbol's token is its parts' tokens end to end), and merges on one
        side never touch the other, so each side merges as it would alone. Not used with a prefix
        or suffix, with two tokens of one id (ids then no longer spell their tokens), nor when a
        character would be dropped (Hugging Face's offsets then shift)."""
        vocab = self._vocab
        missing = {ch for ch in set(word) if ch not in vocab}
        if missing and (self.unk_token is None or self.unk_token not in vocab):
            byte_ids = self._byte_ids
            for ch in missing:
                if not (self.byte_fallback and all(byte_ids[b] is not None for b in _utf8(ch))):
                    return []
        crossing = self._crossing_pairs()
        # one pass in C: each position's pair, whether a merged token holds it
        held = map(crossing.__contains__, map(operator.add, word, word[1:]))
        cuts = list(compress(range(1, len(word)), map(operator.not_, held)))
        if missing:
            cuts = [i for i in cuts if word[i - 1] not in missing and word[i] not in missing]
        return cuts

    def _tokenize_cut(self, word: str, cuts: list[int]) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        start = 0
        for end in [*cuts, len(word)]:
            piece = word[start:end]
            hit = self.recall(piece)
            if hit is None:
                hit = self.remember(piece, self._encode_word(piece))
            if start:
                out.extend([(t, s + start, e + start) for t, s, e in hit])
            else:
                out.extend(hit)
            start = end
        return out

    # ----- the explorer's questions -------------------------------------------------------------

    @property
    def merges(self) -> tuple[MergeRule, ...]:
        """The merge list in order (a pair listed twice appears twice; the later rank is used)."""
        return tuple(self.rule(rank) for rank in range(len(self._keys)))

    @property
    def n_merges(self) -> int:
        """How many lines the merge list has."""
        return len(self._keys)

    def rule(self, rank: int) -> MergeRule:
        """Line ``rank`` of the merge list (0 for the first)."""
        key = self._keys[rank]
        return MergeRule(rank, key >> 32, key & _MASK, self._results[rank])

    def merge_rank(self, left: int | str, right: int | str) -> int | None:
        """The rank of merging ``left`` with ``right`` (ids or token strings), or ``None``."""
        found = self._pair(left, right)
        return None if found is None else found.rank

    def merge_result(self, left: int | str, right: int | str) -> int | None:
        """The id that merging ``left`` with ``right`` makes, or ``None``."""
        found = self._pair(left, right)
        return None if found is None else found.result

    def _pair(self, left: int | str, right: int | str) -> MergeRule | None:
        a = self._vocab.get(left) if isinstance(left, str) else left
        b = self._vocab.get(right) if isinstance(right, str) else right
        if a is None or b is None:
            return None
        v = self._merges.get(a << 32 | b)
        return None if v is None else MergeRule(v, a, b, self._results[v])

    def merges_into(self, token_id: int) -> tuple[MergeRule, ...]:
        """Every merge that makes ``token_id``, lowest rank first (only those in force: of a pair
        listed twice, its last line)."""
        if self._produced_by is None:
            produced: dict[int, list[int]] = {}
            merges = self._merges
            for rank, (key, result) in enumerate(zip(self._keys, self._results)):
                if merges.get(key) == rank:
                    produced.setdefault(result, []).append(rank)
            self._produced_by = produced
        return tuple(self.rule(r) for r in self._produced_by.get(token_id, ()))

    def parents(self, token_id: int) -> Parents | None:
        """The two tokens of the lowest-rank merge that makes ``token_id`` (following parents
        from a token down to characters gives its tree in merge order), or ``None`` for a token
        no merge makes."""
        rules = self.merges_into(token_id)
        return Parents(rules[0].left, rules[0].right) if rules else None

    def replay(self, word: str, *, limit: int = REPLAY_LIMIT) -> BPEReplay:
        """Replay the merges of one word step by step, in exactly the order Hugging Face applies
        them.

        >>> model = BPE({"a": 0, "b": 1, "ab": 2, "abb": 3}, ["a b", "ab b"])
        >>> r = model.replay("abb")
        >>> [(s.position, s.rule.rank, s.after) for s in r.steps], r.tokens
        ([(0, 0, (2, 1)), (0, 1, (3,))], (3,))
        """
        if not word:
            return BPEReplay(word, (), (), (), (), False, True)
        if self.ignore_merges:
            whole = self._vocab.get(word)
            if whole is not None:
                symbol = InitialSymbol(whole, "char", 0, len(word))
                return BPEReplay(word, (symbol,), (), (), (whole,), True, True)
        ids, _, where = self._symbols_slow(word)
        initial = tuple(InitialSymbol(t, kind, s, e) for t, (kind, s, e) in zip(ids, where))
        covered = set()
        for _, s, e in where:
            covered.update(range(s, e))
        dropped = tuple(i for i in range(len(word)) if i not in covered)
        if len(ids) > limit:
            tokens = ids[:]
            self._merge(tokens, None)
            return BPEReplay(word, initial, dropped, (), tuple(tokens), False, False)
        order = self._merge_order(ids)
        steps: list[BPEStep] = []
        current = list(ids)
        origin = list(range(len(ids)))  # the initial index each current symbol starts at
        pair = self._pair
        for number, (pos, rule) in enumerate(order, 1):
            index = origin.index(pos)
            before = tuple(current)
            current[index : index + 2] = [rule.result]
            del origin[index + 1]
            steps.append(BPEStep(number, before, index, rule, tuple(current), pair))
        return BPEReplay(word, initial, dropped, tuple(steps), tuple(current), False, True)

    def _merge_order(self, ids: list[int]) -> list[tuple[int, MergeRule]]:
        """The merges :meth:`_merge_heap` applies, in order: ``(initial index of the left symbol,
        rule)``."""
        get = self._merges.get
        results = self._results
        n = len(ids)
        sym = ids[:]
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        alive = [True] * n
        heap = []
        for i in range(n - 1):
            v = get(sym[i] << 32 | sym[i + 1])
            if v is not None:
                heap.append((v, i, results[v]))
        heapq.heapify(heap)
        order = []
        while heap:
            rank, pos, new = heapq.heappop(heap)
            if not alive[pos] or nxt[pos] >= n:
                continue
            right = nxt[pos]
            v = get(sym[pos] << 32 | sym[right])
            if v is None or results[v] != new:
                continue
            order.append((pos, MergeRule(rank, sym[pos], sym[right], new)))
            sym[pos] = new
            alive[right] = False
            after = nxt[right]
            nxt[pos] = after
            if after < n:
                prv[after] = pos
            before = prv[pos]
            if before >= 0:
                v = get(sym[before] << 32 | new)
                if v is not None:
                    heapq.heappush(heap, (v, before, results[v]))
            if after < n:
                v = get(new << 32 | sym[after])
                if v is not None:
                    heapq.heappush(heap, (v, pos, results[v]))
        return order

    def pair_merges(self) -> dict[tuple[int, int], tuple[int, int]]:
        """The merge map as ``(left, right) -> (rank, result)``, the form :func:`~tokscope.core.reference.merge_list_reference`
        takes."""
        results = self._results
        return {(k >> 32, k & _MASK): (v, results[v]) for k, v in self._merges.items()}

    def merge_ids(self, ids: Sequence[int]) -> list[int]:
        """``ids`` (initial symbols) merged as one word: the ids of the final symbols.

        >>> BPE({"a": 0, "b": 1, "ab": 2}, ["a b"]).merge_ids([0, 1, 1])
        [2, 1]
        """
        out = list(ids)
        self._merge(out, None)
        return out

    def initial_symbols(self, word: str) -> list[int]:
        """The ids of ``word``'s symbols before any merge (for tests against the reference)."""
        return self._symbols_slow(word)[0]


def _utf8(text: str) -> bytes:
    """``text`` in UTF-8; a lone surrogate (which no Hugging Face text can hold, and which the
    tokenizer replaces before any model sees it) as its three WTF-8 bytes rather than an error."""
    return text.encode("utf-8", "surrogatepass")


def _utf8_lengths(text: str) -> list[int]:
    """The UTF-8 length of each character of ``text``.

    >>> _utf8_lengths("aé€😀")
    [1, 2, 3, 4]
    """
    if text.isascii():
        return [1] * len(text)
    return [1 if c < "\x80" else 2 if c < "\u0800" else 3 if c < "\U00010000" else 4 for c in text]


def _with_offsets(text: str, ids: list[int], byte_ends: list[int]) -> list[tuple[int, int, int]]:
    """``(id, start, end)`` in characters from each token's end in bytes (Hugging Face's
    offsets: the running sum of symbol lengths). A byte offset inside a character is placed on
    that whole character; an offset past the word (a byte fallback of the prefix) is clamped."""
    n = len(text)
    if text.isascii() and (not byte_ends or byte_ends[-1] == n):
        out = []
        start = 0
        for t, end in zip(ids, byte_ends):
            out.append((t, start, end))
            start = end
        return out
    char_at: list[int] = []  # char index of each byte
    for i, ch in enumerate(text):
        char_at.extend([i] * len(_utf8(ch)))
    total = len(char_at)
    out = []
    start = 0
    for t, end in zip(ids, byte_ends):
        s = char_at[start] if start < total else n
        e = char_at[end - 1] + 1 if 0 < end <= total else (n if end > total else s)
        out.append((t, s, max(s, e)))
        start = end
    return out


def from_json(obj: Mapping[str, Any]) -> BPE:
    """A :class:`BPE` from the ``"model"`` object of a ``tokenizer.json``.

    >>> m = from_json({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})
    >>> m.tokenize("ab")
    [(2, 0, 2)]
    """
    if obj.get("type", "BPE") != "BPE":
        raise TokenizerFileError(f"model type {obj.get('type')!r} is not BPE")
    if "vocab" not in obj or "merges" not in obj:
        raise TokenizerFileError("BPE model without its vocab or merges")
    if obj["merges"] is None or not isinstance(obj["merges"], list):
        raise TokenizerFileError("BPE merges is not a list")

    def option(name: str, kind: type, default: Any) -> Any:
        value = obj.get(name)
        if value is None:
            return default
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise TokenizerFileError(f"BPE {name} {value!r} is not a {kind.__name__}")
        return value

    dropout = obj.get("dropout")
    if dropout is not None and (isinstance(dropout, bool) or not isinstance(dropout, (int, float))):
        raise TokenizerFileError(f"BPE dropout {dropout!r} is not a number")
    return BPE(
        obj["vocab"],
        obj["merges"],
        unk_token=option("unk_token", str, None),
        fuse_unk=option("fuse_unk", bool, False),
        byte_fallback=option("byte_fallback", bool, False),
        continuing_subword_prefix=option("continuing_subword_prefix", str, None),
        end_of_word_suffix=option("end_of_word_suffix", str, None),
        ignore_merges=option("ignore_merges", bool, False),
        dropout=dropout,
    )
