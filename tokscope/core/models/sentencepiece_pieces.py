"""The piece table every SentencePiece model shares: pieces, scores, types, and what SentencePiece
does with a model's raw result (unknown pieces fused, or spelled as ``<0xNN>`` byte pieces).

A piece's type says how the library treats it: ``NORMAL`` pieces and ``USER_DEFINED`` ones are
found in the text (a user-defined piece always whole, :meth:`Pieces.user_match`); ``UNUSED``
pieces are in the table but never emitted; ``CONTROL`` (``<s>``, ``</s>``), ``UNKNOWN``
(``<unk>``) and ``BYTE`` (``<0x41>``) pieces are never matched in the text.

>>> p = Pieces(["<unk>", "a", "<0x62>"], [0.0, -1.0, 0.0], [UNKNOWN, NORMAL, BYTE], byte_fallback=True, strict=False)
>>> p.unk_id, p.token_to_id("a"), p.token_to_id("<0x62>"), p.lookup("<0x62>")
(0, 1, 2, None)
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Sequence

from ..normalizers.sentencepiece import PrefixMatcher
from ..text.errors import TokenizerFileError

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
#: the pieces found in a text
MATCHABLE = frozenset({NORMAL, USER_DEFINED})
SPACE = "\u2581"
_NOT_NORMAL = re.compile(b"[^\x01]")
#: the bytes of the known types (NORMAL to BYTE)
_TYPE_BYTES = bytes(range(1, 7))


def byte_piece(b: int) -> str:
    """The piece of byte ``b``.

    >>> byte_piece(10)
    '<0x0A>'
    """
    return f"<0x{b:02X}>"


class Pieces:
    """The table of a SentencePiece model (the ``pieces`` of its ``ModelProto``).

    ``lookup`` finds a piece the text may produce (normal, user-defined or unused), as the
    library's ``PieceToIdNoReserved``; ``token_to_id`` any piece. A file the library refuses to
    load (an empty piece, a piece defined twice, two unknown pieces, no unknown piece without byte
    fallback, byte pieces missing) is a :class:`TokenizerFileError` naming why.
    """

    def __init__(self, pieces: Sequence[str], scores: Sequence[float], types: Sequence[int], *,
                 byte_fallback: bool = False, strict: bool = True, unk_id: int | None = None) -> None:
        n = len(pieces)
        if not (n == len(scores) == len(types)):
            raise TokenizerFileError("the SentencePiece model's pieces, scores and types differ in number")
        valid = (isinstance(types, bytes) and not types.translate(None, _TYPE_BYTES)) or all(
            isinstance(t, int) and NORMAL <= t <= BYTE for t in set(types))
        if not valid:
            bad = next(i for i, t in enumerate(types) if not isinstance(t, int) or not NORMAL <= t <= BYTE)
            raise TokenizerFileError(f"the SentencePiece model's piece {bad} has an unknown type {types[bad]!r}")
        self.pieces = pieces if type(pieces) is list else list(pieces)
        self.scores = scores if isinstance(scores, array) else array("d", scores)
        self.types = bytes(types)
        self.byte_fallback = bool(byte_fallback)
        # the dicts of the pieces (the look-ups, every piece's first id) are made on first use;
        # a load only checks what the library refuses: a set where a piece defined twice is
        # refused, else the first ids (a dict keeps the last of equal keys: built backwards)
        first: dict[str, int] | None = None
        if strict:
            distinct: set[str] | dict[str, int] = set(self.pieces)
        else:
            distinct = first = dict(zip(reversed(self.pieces), range(n - 1, -1, -1)))
        if "" in distinct:
            raise TokenizerFileError(f"the SentencePiece model's piece {self.pieces.index('')} is empty")
        if len(distinct) != n and strict:
            seen: set[str] = set()
            twice = next(p for p in self.pieces if p in seen or seen.add(p))  # type: ignore[func-returns-value]
            raise TokenizerFileError(f"the SentencePiece model defines the piece {twice!r} twice")
        del distinct
        #: ids of the pieces that are not normal, by type
        self.by_type: dict[int, list[int]] = {}
        for m in _NOT_NORMAL.finditer(self.types):
            self.by_type.setdefault(self.types[m.start()], []).append(m.start())
        self._all_ids: dict[str, int] | None = first
        self._ids: dict[str, int] | None = None
        self._distinct = strict
        unknown = self.by_type.get(UNKNOWN, [])
        if len(unknown) > 1 and strict:
            raise TokenizerFileError("the SentencePiece model has two unknown pieces")
        self.unk_id: int | None = unknown[0] if unknown else None
        if unk_id is not None and 0 <= unk_id < n:  # a format that names its unknown token (GGUF)
            self.unk_id = unk_id
        self._bytes: list[int | None] = [None] * 256
        for i in self.by_type.get(BYTE, ()):
            value = _BYTE_VALUES.get(self.pieces[i])
            if value is None:
                raise TokenizerFileError(f"the SentencePiece model's byte piece {self.pieces[i]!r} is not <0xNN>")
            if self._bytes[value] is None:
                self._bytes[value] = i
        if strict:
            if self.unk_id is None and not self.byte_fallback:
                raise TokenizerFileError("the SentencePiece model has no unknown piece")
            if self.byte_fallback and None in self._bytes:
                raise TokenizerFileError("the SentencePiece model uses byte fallback but lacks some of the 256 byte pieces")
        #: the matcher of user-defined pieces
        self.user_symbols = PrefixMatcher(self.pieces[i] for i in self.by_type.get(USER_DEFINED, ()))

    @property
    def _all(self) -> dict[str, int]:
        """Every piece's first id (in the order of the ids, from the last)."""
        found = self._all_ids
        if found is None:
            n = len(self.pieces)
            found = self._all_ids = dict(zip(reversed(self.pieces), range(n - 1, -1, -1)))
        return found

    @property
    def lookups(self) -> dict[str, int]:
        """``piece -> id`` of the pieces the text may become (read-only by convention): every
        piece's first id without those whose first id is reserved (unknown, control, byte)."""
        found = self._ids
        if found is None:
            reserved = [i for t in (UNKNOWN, CONTROL, BYTE) for i in self.by_type.get(t, ())]
            if self._distinct:  # each piece once: its first id is its id (built forwards)
                found = dict(zip(self.pieces, range(len(self.pieces))))
            else:
                found = dict(self._all) if reserved else self._all
            for i in reserved:
                if found.get(self.pieces[i]) == i:
                    del found[self.pieces[i]]
            self._ids = found
        return found

    # ----- lookups ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.pieces)

    def lookup(self, piece: str) -> int | None:
        """The id of a piece the text may become (normal, user-defined or unused), else None."""
        return self.lookups.get(piece)

    def token_to_id(self, piece: str) -> int | None:
        return self._all.get(piece)

    def id_to_token(self, token_id: int) -> str | None:
        return self.pieces[token_id] if isinstance(token_id, int) and 0 <= token_id < len(self.pieces) else None

    def get_vocab(self) -> dict[str, int]:
        return dict(self._all)

    @property
    def user_defined(self) -> bool:
        return bool(self.user_symbols)

    def user_match(self, text: str, pos: int) -> int:
        """The length of the longest user-defined piece at ``text[pos:]`` (0 if none).

        >>> Pieces(["<unk>", "<x>", "<xy>"], [0, 0, 0], [UNKNOWN, USER_DEFINED, USER_DEFINED]).user_match("a<xy>z", 1)
        4
        """
        return self.user_symbols.match(text, pos)

    # ----- the library's last step --------------------------------------------------------------

    def finish(self, raw: list[tuple[int | None, int, int]], text: str) -> list[tuple[int, int, int]]:
        """SentencePiece's ``Encode`` after its model: ``raw`` is ``(id, start, end)`` per piece of
        ``text`` (``None`` or the unknown id for an unknown piece). With byte fallback an unknown
        piece becomes the byte pieces of its UTF-8 (each spanning the piece); otherwise a run of
        unknown pieces is one unknown token.

        >>> p = Pieces(["<unk>", "a"], [0.0, -1.0], [UNKNOWN, NORMAL])
        >>> p.finish([(None, 0, 1), (0, 1, 2), (1, 2, 3)], "xya")
        [(0, 0, 2), (1, 2, 3)]
        """
        out: list[tuple[int, int, int]] = []
        unk = self.unk_id
        types = self.types
        prev_unk = False
        for token_id, start, end in raw:
            is_unk = token_id is None or token_id == unk or types[token_id] == UNKNOWN
            if is_unk and self.byte_fallback:
                for b in text[start:end].encode("utf-8", "surrogatepass"):
                    out.append((self._bytes[b], start, end))  # type: ignore[arg-type]
            elif is_unk:
                if unk is None:
                    raise TokenizerFileError("the text needs the unknown piece but this SentencePiece model has none")
                if prev_unk:
                    out[-1] = (out[-1][0], out[-1][1], end)
                else:
                    out.append((unk, start, end))
            else:
                out.append((token_id, start, end))  # type: ignore[arg-type]
            prev_unk = is_unk and not self.byte_fallback
        return out


def cut_mode(pieces: Iterable[str], suffix: bool = False) -> str:
    """Where no piece of ``pieces`` can cross in a normalized text: ``every`` ``▁`` when none holds
    one inside it (after its first character; before its last for a suffix model), ``runs``
    (only where a ``▁`` meets another character) when those that do are runs of ``▁`` alone
    (Llama's ``▁▁▁▁``), else ``none``.

    >>> cut_mode(["▁a", "b"]), cut_mode(["▁a", "▁▁"]), cut_mode(["a▁b"])
    ('every', 'runs', 'none')
    """
    inside = [p for p in pieces if SPACE in (p[:-1] if suffix else p[1:])]
    return "every" if not inside else "runs" if all(p.strip(SPACE) == "" for p in inside) else "none"


def cut_words(text: str, mode: str, suffix: bool = False) -> list[tuple[int, int]]:
    """Spans of ``text`` no piece crosses (see :func:`cut_mode`): cut before each ``▁`` (after it,
    for a suffix model), or only where a ``▁`` meets another character; the whole text for
    ``none``.

    >>> cut_words("▁a▁▁b", "every"), cut_words("▁a▁▁b", "runs"), cut_words("a▁b▁", "every", True)
    ([(0, 2), (2, 3), (3, 5)], [(0, 2), (2, 5)], [(0, 2), (2, 4)])
    """
    n = len(text)
    if mode == "none" or SPACE not in text:
        return [(0, n)]
    out = []
    start = 0
    pos = text.find(SPACE)
    while pos >= 0:
        cut = pos + 1 if suffix else pos
        if start < cut < n and (mode == "every" or (text[cut] if suffix else text[cut - 1]) != SPACE):
            out.append((start, cut))
            start = cut
        pos = text.find(SPACE, pos + 1)
    out.append((start, n))
    return out


def byte_value(piece: str) -> int | None:
    """``<0x41>`` -> 65 (exactly that spelling: two upper-case hex digits).

    >>> byte_value("<0x41>"), byte_value("<0x4a>")
    (65, None)
    """
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        digits = piece[3:5]
        if all(c in "0123456789ABCDEF" for c in digits):
            return int(digits, 16)
    return None


#: ``byte_value`` of every byte piece
_BYTE_VALUES = {byte_piece(b): b for b in range(256)}


class PiecesModel:
    """What every SentencePiece model kind (unigram, BPE, char, word) answers from its
    :class:`Pieces` table (``self.table``): the vocabulary look-ups of the Model protocol and a
    piece's score as the file stores it."""

    table: Pieces

    def __init__(self, pieces: Pieces) -> None:
        self.table = pieces
        self.byte_fallback = pieces.byte_fallback
        self.unk_id = pieces.unk_id

    def token_to_id(self, token: str) -> int | None:
        return self.table.token_to_id(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self.table.id_to_token(token_id)

    def get_vocab(self) -> dict[str, int]:
        return self.table.get_vocab()

    @property
    def vocab_size(self) -> int:
        return len(self.table)

    def score(self, token_id: int) -> float:
        """The piece's score as the file stores it."""
        return self.table.scores[token_id]
