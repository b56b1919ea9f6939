"""What the models share: their vocabulary lookups and the per-chunk cache.

* :class:`VocabLookups`: the Model protocol's vocabulary half for a model holding a ``token -> id``
  dict (BPE from a merge list, WordPiece, WordLevel), with :func:`check_vocab` and
  :func:`reverse_vocab` to build it;
* :class:`ChunkCache`: the tokens of each chunk a model has cut, kept (bounded) so a repeated word
  is looked up instead of cut again; a model writes ``_tokenize`` and inherits ``tokenize``.

>>> class Upper(ChunkCache):
...     def __init__(self):
...         self.forget()
...     def _tokenize(self, text):
...         return [(ord(c), i, i + 1) for i, c in enumerate(text)]
>>> m = Upper()
>>> m.tokenize("ab"), m.recall("ab"), m.tokenize_ids("abc")
([(97, 0, 1), (98, 1, 2)], ((97, 0, 1), (98, 1, 2)), [97, 98, 99])
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Mapping
from typing import Any

from ..text.compiled import CompiledPart
from ..text.errors import TokenizerFileError


# :func:`check_vocab` and :func:`reverse_vocab` in one pass each over a plain dict (``merge.c``'s
# ``vocab_check`` and ``vocab_reverse``); without them, or for another shape, the Python below.
compiled_part = CompiledPart("VOCAB_ABI")


def use_compiled(on: bool, module: Any = None) -> None:
    """Check vocabularies with the compiled functions when installed (the default), or in Python
    (the tests' oracle; tests compare the two); ``module`` puts in a compiled one built elsewhere.

    >>> was = compiled_vocab() is not None
    >>> use_compiled(False); compiled_vocab() is None
    True
    >>> use_compiled(True); (compiled_vocab() is not None) == was
    True
    """
    compiled_part.use(on, module)

#: the largest id a vocabulary may hold (ids are unsigned 32-bit, as in Hugging Face)
MAX_ID = 0xFFFFFFFF
#: Chunks shorter than this many characters are cached (Hugging Face caches below 256 bytes).
CACHE_MAX_CHARS = 256
#: The cache is emptied when it holds this many chunks.
CACHE_CAPACITY = 100_000

Tokens = tuple[tuple[int, int, int], ...]


def compiled_vocab() -> Any:
    """The compiled vocabulary functions in use (``merge.c``'s ``vocab_*``), or None: the Python ones."""
    return compiled_part.get()


def check_vocab(vocab: Any, what: str = "vocabulary") -> dict[str, int]:
    """``vocab`` as a plain ``str -> id`` dict; a key that is not a string or an id that is not a
    whole number from 0 to 2**32 - 1 is a :class:`TokenizerFileError`.

    >>> check_vocab({"a": 0})
    {'a': 0}
    """
    compiled = compiled_part.get()
    if compiled is not None:
        checked = compiled.vocab_check(vocab)
        if checked is not None:
            return checked
    if not isinstance(vocab, Mapping):
        raise TokenizerFileError(f"the {what} is not a mapping of tokens to ids")
    # at C speed for a plain dict (a set of the keys' and ids' types, then the ids' range)
    if (type(vocab) is dict and vocab and set(map(type, vocab)) == {str} and set(map(type, vocab.values())) == {int}
            and min(vocab.values()) >= 0 and max(vocab.values()) <= MAX_ID):
        return dict(vocab)
    out: dict[str, int] = {}
    for token, token_id in vocab.items():
        if not isinstance(token, str):
            raise TokenizerFileError(f"{what} entry {token!r} is not a string")
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id <= MAX_ID:
            raise TokenizerFileError(f"{what} entry {token!r} has a bad id {token_id!r}")
        out[token] = token_id
    return out


def reverse_vocab(vocab: Mapping[str, int]) -> dict[int, str]:
    """``id -> token``; when two tokens share an id (a malformed file) the first one is kept.

    >>> reverse_vocab({"a": 0, "b": 1, "c": 0})
    {0: 'a', 1: 'b'}
    """
    compiled = compiled_part.get()
    if compiled is not None:
        reverse = compiled.vocab_reverse(vocab)
        if reverse is not None:
            return reverse
    return dict(zip(reversed(vocab.values()), reversed(vocab.keys())))


def vocab_from_table(text: str, sep: str, ids: array) -> dict[str, int]:
    """``{token: id}`` from ``text`` cut at every ``sep`` (one character) and an ``array('q')`` of
    ids, one per token (a token listed twice keeps its last id): how tokscope's cache keeps a
    vocabulary. A ValueError when the counts differ.

    >>> vocab_from_table("a\\x00b\\x00", "\\x00", array("q", [4, 7, 9]))
    {'a': 4, 'b': 7, '': 9}
    """
    compiled = compiled_part.get()
    if compiled is not None and ids.typecode == "q":
        got = compiled.vocab_table(text, sep, ids)
        if got is not None:
            return got
    tokens = text.split(sep)
    if len(tokens) != len(ids):
        raise ValueError("the tokens and their ids differ in number")
    return dict(zip(tokens, ids.tolist()))


def longest_tokens(vocab: dict[str, int], prefix: str) -> tuple[int, int]:
    """The most characters of a token, and of a token that starts with ``prefix`` less the prefix
    (0 when none does): WordPiece's longest-match search never looks further.

    >>> longest_tokens({"ab": 0, "##abc": 1, "x": 2}, "##"), longest_tokens({"a": 0}, "##")
    ((5, 3), (1, 0))
    """
    compiled = compiled_part.get()
    if compiled is not None:
        got = compiled.vocab_longest(vocab, prefix)
        if got is not None:
            return got[0], max(got[1], len(prefix)) - len(prefix)
    longest = max(map(len, vocab), default=0)
    continued = filter(operator.methodcaller("startswith", prefix), vocab)
    return longest, max(map(len, continued), default=len(prefix)) - len(prefix)


class VocabLookups:
    """The Model protocol's vocabulary half for a model holding ``_vocab`` (``token -> id``) and
    ``_vocab_r`` (:func:`reverse_vocab` of it): BPE, WordPiece and WordLevel share it."""

    _vocab: dict[str, int]
    _vocab_r: dict[int, str]

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self._vocab_r.get(token_id)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)


class ChunkCache:
    """The per-chunk cache of a model (see the module docstring). A subclass calls
    :meth:`forget` when it is built and writes ``_tokenize(text)``; caches are not pickled."""

    _cache: dict[str, Tokens]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that rewrites how a chunk is tokenized (``tokenize`` or ``_tokenize``) but
        not its ids-only twin takes the ids of its own tokens, so the ids-only path never skips
        its rule."""
        super().__init_subclass__(**kwargs)
        if "tokenize" in cls.__dict__ and "tokenize_ids" not in cls.__dict__:
            cls.tokenize_ids = _ids_of_tokens  # type: ignore[method-assign]
        elif "_tokenize" in cls.__dict__ and "_tokenize_ids" not in cls.__dict__:
            cls._tokenize_ids = ChunkCache._tokenize_ids  # type: ignore[method-assign]

    def forget(self) -> None:
        """Empty the caches (also how a model starts them)."""
        self._cache = {}
        self._ids_cache: dict[str, list[int]] = {}

    def recall(self, text: str) -> Tokens | None:
        """The cached tokens of ``text``, or ``None``."""
        return self._cache.get(text)

    def remember(self, text: str, tokens: Any) -> Tokens:
        """Keep ``tokens`` (``(id, start, end)`` triples) as ``text``'s, when ``text`` is short enough;
        returns them as a tuple."""
        value = tuple(tokens)
        if len(text) < CACHE_MAX_CHARS:
            if len(self._cache) >= CACHE_CAPACITY:
                self._cache.clear()
            self._cache[text] = value
        return value

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        """The tokens of one chunk: ``(id, start, end)``, character offsets into ``text``."""
        if not text:
            return []
        hit = self._cache.get(text)
        if hit is not None:
            return list(hit)
        out = self._tokenize(text)
        self.remember(text, out)
        return out

    def _tokenize(self, text: str) -> list[tuple[int, int, int]]:
        raise NotImplementedError

    def tokenize_ids(self, text: str) -> list[int]:
        """The ids of one chunk, ``[t[0] for t in tokenize(text)]``, with no offsets worked out
        where the model can skip them (its ``_tokenize_ids``). The chunk's ids are not kept here:
        the tokenizer's ids-only path keeps each chunk's ids itself; tokens cached by
        :meth:`tokenize` are used."""
        if not text:
            return []
        hit = self._cache.get(text)
        if hit is not None:
            return [t[0] for t in hit]
        return self._tokenize_ids(text)

    def _tokenize_ids(self, text: str) -> list[int]:
        return [t[0] for t in self._tokenize(text)]

    def recall_ids(self, text: str) -> list[int] | None:
        """The ids kept by :meth:`remember_ids` for ``text``, or ``None`` (the ids-only twin of
        :meth:`recall`, for the parts of a long chunk the model cuts itself)."""
        return self._ids_cache.get(text)

    def remember_ids(self, text: str, ids: list[int]) -> list[int]:
        """Keep ``ids`` as ``text``'s when ``text`` is short enough (bounded as :meth:`remember`)."""
        if len(text) < CACHE_MAX_CHARS:
            if len(self._ids_cache) >= CACHE_CAPACITY:
                self._ids_cache.clear()
            self._ids_cache[text] = ids
        return ids

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"] = {}  # caches are not kept in a pickle
        state["_ids_cache"] = {}
        return state


def _ids_of_tokens(model: Any, text: str) -> list[int]:
    """The ids of ``model.tokenize(text)``."""
    return [t[0] for t in model.tokenize(text)]

