"""Hugging Face's WordPiece model (BERT): greedy longest match from the start of the word.

At each position the longest vocabulary entry that the rest of the word starts with is taken
(written with ``continuing_subword_prefix``, ``##`` by default, everywhere but at the start of the
word). If at some position no entry matches, the *whole word* becomes the unknown token; so does a
word longer than ``max_input_chars_per_word`` characters (counted as Hugging Face counts them:
Unicode code points, so ``e`` + a combining accent is two).

>>> model = WordPiece({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "##a": 4})
>>> [model.id_to_token(t) for t, _, _ in model.tokenize("unaffable")]
['un', '##aff', '##able']
>>> model.explain("unxable").summary
"no token matches at character 2 ('x'), so the whole word is [UNK]"
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .base import ChunkCache, VocabLookups, check_vocab, longest_tokens, reverse_vocab
from ..text.errors import TokenizerFileError
from ..text.compiled import CompiledPart


compiled_part = CompiledPart("WPIECE_ABI")


def compiled_available() -> bool:
    """True when the compiled ids loop is installed (it cuts as :meth:`WordPiece._tokenize`)."""
    return compiled_part.available()


def use_compiled(on: bool, module: Any = None) -> None:
    """Take ids with the compiled loop when installed (the default), or with the pure-Python one
    (the tests' oracle); ``module`` puts in a compiled one built elsewhere (the tests build one when
    none is installed).

    >>> was = compiled_available()
    >>> use_compiled(False); compiled_ids() is None
    True
    >>> use_compiled(True); (compiled_ids() is not None) == was
    True
    """
    compiled_part.use(on, module)


def compiled_ids() -> Any:
    """The compiled module in use for the ids, or None (the pure-Python loop)."""
    return compiled_part.get()


@dataclass(frozen=True, slots=True)
class WordPieceStep:
    """One greedy match: the token that covers characters ``start:end`` of the word (its string
    carries the prefix after the first step), and how many longer candidates were tried and
    missed before it."""

    start: int
    end: int
    token: int
    text: str
    missed: int


@dataclass(frozen=True, slots=True)
class WordPieceExplanation:
    """Why a word became its tokens.

    ``steps`` are the greedy matches in order (for an unknown word: the matches found before the
    position where none matched). ``reason`` is ``None`` for a known word, ``"too_long"`` when the
    word has more than ``limit`` characters, ``"no_match"`` when no token matches at character
    ``failed_at``. ``summary`` says it in one sentence.
    """

    word: str
    tokens: tuple[int, ...]
    steps: tuple[WordPieceStep, ...]
    unknown: bool
    reason: str | None
    failed_at: int | None
    chars: int
    limit: int
    summary: str


class WordPiece(ChunkCache, VocabLookups):
    """Hugging Face's WordPiece model; ids and offsets as ``tokenizers``.

    >>> WordPiece({"[UNK]": 0, "a": 1, "##b": 2}).tokenize("abb")
    [(1, 0, 1), (2, 1, 2), (2, 2, 3)]
    """

    kind = "wordpiece"
    #: the continuation and bound tables of the compiled ids loop, made on first use (never pickled)
    _continued: tuple | None = None

    def __init__(
        self,
        vocab: Mapping[str, int],
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
    ) -> None:
        if isinstance(max_input_chars_per_word, bool) or not isinstance(max_input_chars_per_word, int) or max_input_chars_per_word < 0:
            raise TokenizerFileError(f"WordPiece max_input_chars_per_word {max_input_chars_per_word!r} is not a count")
        self._vocab = check_vocab(vocab)
        self._vocab_r = reverse_vocab(self._vocab)
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.max_input_chars_per_word = max_input_chars_per_word
        # no match can be longer than the longest entry (less the prefix after the start)
        self._longest, self._longest_cont = longest_tokens(self._vocab, continuing_subword_prefix)
        self.forget()


    def _unk(self, text: str) -> list[tuple[int, int, int]]:
        unk = self._vocab.get(self.unk_token)
        if unk is None:
            raise TokenizerFileError(f"the WordPiece unknown token {self.unk_token!r} is not in the vocabulary")
        return [(unk, 0, len(text))]


    def _tokenize(self, text: str) -> list[tuple[int, int, int]]:
        n = len(text)
        if n > self.max_input_chars_per_word:
            return self._unk(text)
        get = self._vocab.get
        prefix = self.continuing_subword_prefix
        out: list[tuple[int, int, int]] = []
        start = 0
        while start < n:
            if start:
                end = min(n, start + self._longest_cont)
                while end > start:
                    found = get(prefix + text[start:end])
                    if found is not None:
                        break
                    end -= 1
            else:
                end = min(n, self._longest)
                while end > 0:
                    found = get(text[:end])
                    if found is not None:
                        break
                    end -= 1
            if end == start:
                return self._unk(text)
            out.append((found, start, end))  # type: ignore[arg-type]
            start = end
        return out

    def continued(self) -> dict[str, int]:
        """The entries written with ``continuing_subword_prefix``, the prefix taken off (built on
        first use, not pickled): a continuation is looked up with no string put together.

        >>> WordPiece({"[UNK]": 0, "a": 1, "##b": 2}).continued()
        {'b': 2}
        """
        return self._lookups()[1]

    def _lookups(self, module: Any = None) -> tuple[str, dict[str, int], dict[str, int], dict[str, int], bytes | None]:
        """``(prefix, continued, heads, continued heads, filter)``: :meth:`continued` and, for the
        entries at the start of a word and for the continuations, each first character's longest
        entry (no longer candidate can match there; none at all when the character starts none);
        with the compiled ``module``, its filter of the candidates (else ``None``).

        >>> WordPiece({"[UNK]": 0, "ab": 1, "##b": 2, "##bcd": 3})._lookups()[2:]
        ({'[': 5, 'a': 2, '#': 5}, {'b': 3}, None)
        """
        found = self._continued
        if found is None or found[0] != self.continuing_subword_prefix:
            prefix = self.continuing_subword_prefix
            k = len(prefix)
            cont = {t[k:]: i for t, i in self._vocab.items() if t.startswith(prefix)}
            found = self._continued = (prefix, cont, _heads(self._vocab), _heads(cont), None)
        if module is not None and found[4] is None:
            size = filter_size(len(self._vocab) + len(found[1]))
            found = self._continued = found[:4] + (module.wpiece_filter(self._vocab, found[1], size),)
        return found

    def _tokenize_ids(self, text: str) -> list[int]:
        """The ids of :meth:`_tokenize`, by the compiled loop when there is one.

        >>> WordPiece({"[UNK]": 0, "a": 1, "##b": 2})._tokenize_ids("abbc")
        [0]
        """
        module = compiled_ids()
        if module is None:
            return self._tokenize_ids_python(text)
        found = self._continued
        if found is None or found[4] is None or found[0] != self.continuing_subword_prefix:
            found = self._lookups(module)
        limit = min(self.max_input_chars_per_word, sys.maxsize)  # a file's limit may be any integer
        ids = module.wpiece_ids(text, self._vocab, found[1], found[2], found[3], limit, found[4])
        return ids if ids is not None else [self._unk(text)[0][0]]

    def _tokenize_ids_python(self, text: str) -> list[int]:
        """:meth:`_tokenize`'s ids, continuations looked up in :meth:`continued`, candidates no
        longer than the longest entry that starts with their first character.

        >>> WordPiece({"[UNK]": 0, "a": 1, "##b": 2})._tokenize_ids_python("abb")
        [1, 2, 2]
        """
        n = len(text)
        if n > self.max_input_chars_per_word:
            return [self._unk(text)[0][0]]
        _, cont, heads, cont_heads, _ = self._lookups()
        table, bounds = self._vocab, heads
        out: list[int] = []
        start = 0
        while start < n:
            end = min(n, start + bounds.get(text[start], 0))
            while end > start:
                found = table.get(text[start:end])
                if found is not None:
                    break
                end -= 1
            else:
                return [self._unk(text)[0][0]]
            out.append(found)
            start = end
            table, bounds = cont, cont_heads
        return out

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_continued", None)  # rebuilt on demand
        return state

    def explain(self, text: str) -> WordPieceExplanation:
        """The greedy steps of one word and, for an unknown word, why."""
        n = len(text)
        limit = self.max_input_chars_per_word
        tokens = tuple(t for t, _, _ in self.tokenize(text))
        if n > limit:
            summary = f"the word has {n} characters, more than the limit of {limit}, so it is {self.unk_token}"
            return WordPieceExplanation(text, tokens, (), True, "too_long", None, n, limit, summary)
        get = self._vocab.get
        prefix = self.continuing_subword_prefix
        steps: list[WordPieceStep] = []
        start = 0
        while start < n:
            top = min(n, start + (self._longest_cont if start else self._longest))
            missed = n - top  # longer candidates skipped at once: no entry is that long
            end = top
            found = None
            while end > start:
                candidate = (prefix if start else "") + text[start:end]
                found = get(candidate)
                if found is not None:
                    steps.append(WordPieceStep(start, end, found, candidate, missed))
                    break
                missed += 1
                end -= 1
            if found is None:
                summary = (
                    f"no token matches at character {start} ({text[start]!r}), so the whole word is {self.unk_token}"
                )
                return WordPieceExplanation(text, tokens, tuple(steps), True, "no_match", start, n, limit, summary)
            start = end
        parts = " + ".join(s.text for s in steps)
        summary = f"longest matches from the left: {parts}" if steps else "an empty word has no tokens"
        return WordPieceExplanation(text, tokens, tuple(steps), False, None, None, n, limit, summary)


def filter_size(entries: int) -> int:
    """The bytes of the compiled loop's filter for ``entries`` entries: a power of two, about 16
    bits an entry or more (two bits set per entry: few candidates pass that are no entry).

    >>> filter_size(0), filter_size(36_000)
    (8, 131072)
    """
    return max(8, min(1 << 26, 1 << (2 * entries - 1).bit_length()))


def _heads(vocab: Mapping[str, int]) -> dict[str, int]:
    """Each first character of the entries and the length of the longest entry it starts.

    >>> _heads({"ab": 0, "abc": 1, "b": 2, "": 3})
    {'a': 3, 'b': 1}
    """
    out: dict[str, int] = {}
    get = out.get
    for token in vocab:
        if token and len(token) > get(token[0], 0):
            out[token[0]] = len(token)
    return out


def from_json(obj: Mapping[str, Any]) -> WordPiece:
    """A :class:`WordPiece` from the ``"model"`` object of a ``tokenizer.json`` (Hugging Face
    requires all four fields).

    >>> from_json({"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
    ...            "max_input_chars_per_word": 100, "vocab": {"[UNK]": 0, "a": 1}}).tokenize("a")
    [(1, 0, 1)]
    """
    if obj.get("type", "WordPiece") != "WordPiece":
        raise TokenizerFileError(f"model type {obj.get('type')!r} is not WordPiece")
    for name in ("unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"):
        if name not in obj:
            raise TokenizerFileError(f"WordPiece model without {name}")
    for name in ("unk_token", "continuing_subword_prefix"):
        if not isinstance(obj[name], str):
            raise TokenizerFileError(f"WordPiece {name} {obj[name]!r} is not a string")
    return WordPiece(
        obj["vocab"],
        unk_token=obj["unk_token"],
        continuing_subword_prefix=obj["continuing_subword_prefix"],
        max_input_chars_per_word=obj["max_input_chars_per_word"],
    )
