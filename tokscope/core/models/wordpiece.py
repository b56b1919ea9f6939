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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .base import ChunkCache, VocabLookups, check_vocab, longest_tokens, reverse_vocab
from ..text.errors import TokenizerFileError



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
