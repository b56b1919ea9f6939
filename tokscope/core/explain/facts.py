"""What the inspector shows about a token or a piece, for every kind of tokenizer.

:func:`token_facts` gathers, for one id, what its kind knows about it: the vocabulary's spelling
(``Ġthe``, ``▁the``, ``##ing``, ``<0xE2>``), the bytes it adds to a decoded text, whether it is
special, added or the unknown token, and the kind's own facts: the merge rank and parents of a BPE
token (ranks from merge order for a merge list, the rank itself for byte-level BPE from ranks),
the score of a Unigram piece, the continuation prefix of a WordPiece or BPE piece, the end-of-word
suffix, the byte a byte-fallback token stands for. :func:`piece_facts` adds where a piece sits in
a text and the form the model saw for its chunk (``Chunk.form``: after normalizer and
pre-tokenizer).

Every fact is read through the tokenizer's public API and its model's documented attributes; a
model of another kind (see :mod:`.pipeline`) gets the facts every kind has.

>>> from tokscope.core.tokenizer.tokenizer import Tokenizer
>>> tok = Tokenizer("t", {b"a": 0, b"b": 1, b"ab": 2}, r"\\w+")
>>> f = token_facts(tok, 2)
>>> f.token, f.merge_rank, f.parents
('ab', 2, Parents(left=0, right=1))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..text.types import Chunk, Parents, Piece

if TYPE_CHECKING:
    from ..tokenizer.tokenizer import Tokenizer

__all__ = ["PieceFacts", "TokenFacts", "fallback_byte", "merge_rank", "piece_facts", "token_facts"]

#: model kinds whose pieces carry a score the inspector shows (Unigram's log probability;
#: SentencePiece's BPE merges the highest-scoring piece first; its char and word models keep one)
SCORED_KINDS = frozenset({"unigram", "sentencepiece-bpe", "char", "word"})


@dataclass(frozen=True, slots=True)
class TokenFacts:
    """One token as its kind knows it (``None``: the fact does not apply to this token or kind).

    ``token`` is the vocabulary's spelling and ``bytes`` what the token adds to a decoded text.
    ``merge_rank``: for BPE, the rank of the merge that makes the token (byte-level BPE from ranks:
    its rank; a merge list: the position of its first merge line), ``None`` for a symbol no merge
    makes. ``score``: a Unigram piece's log probability. ``continuation``: the prefix a WordPiece
    or BPE continuation piece carries (``##``); ``end_of_word``: the suffix of a BPE piece that
    ends a word (``</w>``). ``byte``: the byte a byte-fallback token (``<0xE2>``) stands for.
    ``leading_space``: the token starts with a space in decoded text (``Ġ``, ``▁``, or a
    WordPiece piece that is not a continuation).
    """

    id: int
    kind: str
    token: str
    bytes: bytes
    special: bool
    added: bool
    unknown: bool
    merge_rank: int | None
    parents: Parents | None
    score: float | None
    continuation: str | None
    end_of_word: str | None
    byte: int | None
    leading_space: bool


@dataclass(frozen=True, slots=True)
class PieceFacts:
    """A piece of a text with its token's facts: the original text it covers, its offsets, the
    chunk it belongs to and the chunk's form as the model saw it (``None`` when that is the
    original text, or for an added token)."""

    token: TokenFacts
    text: str
    start: int
    end: int
    byte_start: int
    byte_end: int
    partial: bool
    chunk: Chunk
    form: str | None


def merge_rank(tokenizer: Tokenizer, token_id: int) -> int | None:
    """The merge rank of a BPE token: its rank for byte-level BPE from ranks (``None`` for a
    single byte), else the rank of the lowest merge line that makes it (``None`` for a symbol no
    merge makes, and for models without merges).

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> merge_rank(Tokenizer("t", {b"a": 0, b"b": 1, b"ab": 2}, r"\\w+"), 2)
    2
    """
    if tokenizer.is_added(token_id):
        return None
    if tokenizer.ranks:
        return token_id if len(tokenizer.token_bytes(token_id)) > 1 else None
    into = getattr(tokenizer.model, "merges_into", None)
    if into is None:
        return None
    rules = into(token_id)
    return rules[0].rank if rules else None


def _byte_value(token: str) -> int | None:
    from ..models.bpe import byte_token_value

    return byte_token_value(token)


def fallback_byte(tokenizer: Tokenizer, token_id: int) -> int | None:
    """The byte a byte-fallback token (``<0xE2>``) stands for, ``None`` for any other token: the
    one fact of :func:`token_facts` that byte fallback needs, without the others.

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> fallback_byte(Tokenizer("t", {b"a": 0, b"b": 1}, r"\\w"), 0) is None
    True
    """
    model: Any = tokenizer.model
    if not getattr(model, "byte_fallback", False) or tokenizer.is_added(token_id):
        return None
    return _byte_value(tokenizer.token_str(token_id))


def token_facts(tokenizer: Tokenizer, token_id: int) -> TokenFacts:
    """The facts of one token (an unknown id raises :class:`~.errors.UnknownTokenError`)."""
    data = tokenizer.token_bytes(token_id)
    spelling = tokenizer.token_str(token_id)
    added = tokenizer.is_added(token_id)
    model: Any = tokenizer.model
    kind = tokenizer.kind
    score = None
    continuation = end_of_word = None
    byte = None
    if not added:
        if model.kind in SCORED_KINDS and hasattr(model, "score"):
            score = model.score(token_id)
        prefix = getattr(model, "continuing_subword_prefix", None)
        if prefix and spelling.startswith(prefix) and len(spelling) > len(prefix):
            continuation = prefix
        suffix = getattr(model, "end_of_word_suffix", None)
        if suffix and spelling.endswith(suffix) and len(spelling) > len(suffix):
            end_of_word = suffix
        if getattr(model, "byte_fallback", False):
            byte = _byte_value(spelling)
    parents = None if added else tokenizer.parents(token_id)
    if model.kind == "wordpiece" and not added:
        leading = continuation is None
    else:
        leading = data[:1] == b" "
    return TokenFacts(
        token_id, kind, spelling, data, tokenizer.is_special(token_id), added, token_id == tokenizer.unknown_id,
        merge_rank(tokenizer, token_id), parents, score, continuation, end_of_word, byte, leading,
    )


def piece_facts(tokenizer: Tokenizer, text: str, piece: Piece, chunk: Chunk, *, allowed_special: Any = ()) -> PieceFacts:
    """The facts of ``piece`` (a piece of ``text``) in ``chunk`` (the chunk that holds it, as
    :meth:`.Document.chunk_of` or :meth:`.Tokenizer.chunks` gives it; ``allowed_special`` as the
    text was encoded)."""
    form = None
    if not chunk.special:
        form = chunk.form if chunk.form is not None else tokenizer.chunk_form(
            text, chunk.start, chunk.end, allowed_special=allowed_special)
    return PieceFacts(token_facts(tokenizer, piece.id), text[piece.start:piece.end], piece.start, piece.end,
                      piece.byte_start, piece.byte_end, piece.partial, chunk, form)
