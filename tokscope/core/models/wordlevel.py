"""Hugging Face's WordLevel model: each chunk is one vocabulary entry, or the unknown token.

>>> model = WordLevel({"<unk>": 0, "hello": 1}, unk_token="<unk>")
>>> model.tokenize("hello"), model.tokenize("bye")
([(1, 0, 5)], [(0, 0, 3)])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import VocabLookups, check_vocab, reverse_vocab
from ..text.errors import TokenizerFileError


class WordLevel(VocabLookups):
    """Hugging Face's WordLevel model (``unk_token`` defaults to ``<unk>`` as there). A chunk that
    is not in the vocabulary when the unknown token is not either is a
    :class:`TokenizerFileError`, as Hugging Face fails there too (even for an empty chunk)."""

    kind = "wordlevel"

    def __init__(self, vocab: Mapping[str, int], *, unk_token: str | None = "<unk>") -> None:
        self._vocab = check_vocab(vocab)
        self.unk_token = "<unk>" if unk_token is None else unk_token

    def id_to_token(self, token_id: int) -> str | None:
        """The token of an id (its reverse map made on first use: an encode never needs it).

        >>> WordLevel({"<unk>": 0, "a": 1, "b": 1}).id_to_token(1)
        'a'
        """
        reverse = self.__dict__.get("_vocab_r")
        if reverse is None:
            reverse = self._vocab_r = reverse_vocab(self._vocab)
        return reverse.get(token_id)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_vocab_r", None)  # made again on first use, as after a load
        return state

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        found = self._vocab.get(text)
        if found is None:
            found = self._vocab.get(self.unk_token)
            if found is None:
                raise TokenizerFileError(
                    f"{text[:40]!r} is not in the WordLevel vocabulary and neither is its unknown token {self.unk_token!r}"
                )
        return [(found, 0, len(text))]

    def tokenize_ids(self, text: str) -> list[int]:
        """The id of :meth:`tokenize` alone (the ids-only path: no offsets built).

        >>> WordLevel({"<unk>": 0, "hi": 1}).tokenize_ids("hi"), WordLevel({"<unk>": 0}).tokenize_ids("x")
        ([1], [0])
        """
        vocab = self._vocab
        found = vocab.get(text)
        if found is None:
            found = vocab.get(self.unk_token)
            if found is None:
                return [self.tokenize(text)[0][0]]  # the error of an unknown chunk with no unknown token
        return [found]

    def is_unknown(self, text: str) -> bool:
        """True when ``text`` is not itself an entry (it becomes the unknown token)."""
        return text not in self._vocab


def from_json(obj: Mapping[str, Any]) -> WordLevel:
    """A :class:`WordLevel` from the ``"model"`` object of a ``tokenizer.json``.

    >>> from_json({"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}).tokenize("b")
    [(0, 0, 1)]
    """
    if obj.get("type", "WordLevel") != "WordLevel":
        raise TokenizerFileError(f"model type {obj.get('type')!r} is not WordLevel")
    for name in ("vocab", "unk_token"):
        if name not in obj:
            raise TokenizerFileError(f"WordLevel model without {name}")
    if not isinstance(obj["unk_token"], str):
        raise TokenizerFileError(f"WordLevel unk_token {obj['unk_token']!r} is not a string")
    return WordLevel(obj["vocab"], unk_token=obj["unk_token"])
