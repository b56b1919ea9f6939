"""SentencePiece's character model (``char_model.cc``): every character is a token (a
user-defined piece one token as a whole); a character that is not a piece, or is an unused one,
is unknown (runs of unknown characters are one unknown token, see :meth:`.Pieces.finish`).

>>> from .sentencepiece_pieces import Pieces, NORMAL, UNKNOWN
>>> model = SentencePieceChar(Pieces(["<unk>", "a", "b"], [0, -1, -2], [UNKNOWN, NORMAL, NORMAL]))
>>> model.tokenize("abxyb")
[(1, 0, 1), (2, 1, 2), (0, 2, 4), (2, 4, 5)]
"""

from __future__ import annotations

from .sentencepiece_pieces import UNUSED, PiecesModel


class SentencePieceChar(PiecesModel):
    """SentencePiece's character model over a :class:`.Pieces` table."""

    kind = "char"
    label = "characters (SentencePiece)"

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        table = self.table
        raw: list[tuple[int | None, int, int]] = []
        pos = 0
        n = len(text)
        user = table.user_defined
        while pos < n:
            k = (table.user_match(text, pos) if user else 0) or 1
            found = table.lookup(text[pos:pos + k])
            if found is not None and table.types[found] == UNUSED:
                found = None
            raw.append((found, pos, pos + k))
            pos += k
        return table.finish(raw, text)
