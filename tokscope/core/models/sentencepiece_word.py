"""SentencePiece's word model (``word_model.cc``): the normalized text is cut before every ``▁``
(whatever the model says of whitespace as a suffix, as the library does) and each word is one
token, or unknown (runs of unknown words are one unknown token, see :meth:`.Pieces.finish`).

>>> from .sentencepiece_pieces import Pieces, NORMAL, UNKNOWN
>>> model = SentencePieceWord(Pieces(["<unk>", "▁a", "▁b"], [0, -1, -2], [UNKNOWN, NORMAL, NORMAL]))
>>> model.tokenize("▁a▁c▁b")
[(1, 0, 2), (0, 2, 4), (2, 4, 6)]
"""

from __future__ import annotations

from .sentencepiece_pieces import SPACE, UNUSED, PiecesModel


def split_words(text: str) -> list[tuple[int, int]]:
    """The library's ``SplitIntoWords``: a word starts at the text's start and at every ``▁``.

    >>> split_words("▁a▁▁b")
    [(0, 2), (2, 3), (3, 5)]
    """
    out = []
    start = 0
    pos = text.find(SPACE, 1)
    while pos >= 0:
        out.append((start, pos))
        start = pos
        pos = text.find(SPACE, pos + 1)
    if start < len(text):
        out.append((start, len(text)))
    return out


class SentencePieceWord(PiecesModel):
    """SentencePiece's word model over a :class:`.Pieces` table."""

    kind = "word"
    label = "words (SentencePiece)"

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        table = self.table
        raw: list[tuple[int | None, int, int]] = []
        for start, end in split_words(text):
            found = table.lookup(text[start:end])
            if found is not None and table.types[found] == UNUSED:
                found = None
            raw.append((found, start, end))
        return table.finish(raw, text)
