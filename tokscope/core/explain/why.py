"""Why a chunk became its tokens, for every kind of tokenizer: one entry point for the UI and CLI.

:func:`explain_text` explains every chunk of a text, :func:`explain_chunk` one chunk (a chunk of
:meth:`.Tokenizer.chunks` or of a document), :func:`explain_at` the chunk under a character, and
:func:`explain_token` a vocabulary entry on its own. Each gives a :class:`ChunkWhy`: the chunk (with
the form the model saw, ``Chunk.form``), its tokens, a one-sentence summary, and the facts of the
model's kind:

* **byte-level BPE from ranks** (the OpenAI encodings, tokenizers trained here): ``ranks``, the
  :class:`.explain.ChunkExplanation` (the merge replay with ranks, "why not one token", variants;
  a rank cut-off applies);
* **BPE from a merge list** (Hugging Face's, byte-level or SentencePiece-style): ``bpe``, the
  :class:`.bpe_merges.BPEReplay` (each merge with its rank in the merge list, the pairs it beat,
  byte-fallback and unknown symbols), and ``trees``, each token's merge tree (node ranks from
  merge order, :attr:`.merges.MergeNode.merge_rank`);
* **WordPiece**: ``wordpiece``, the greedy longest-match steps and, for ``[UNK]``, why;
* **Unigram**: ``unigram``, the best segmentation with its score beside the next-best ones;
* **WordLevel**: ``wordlevel``, whether the chunk is an entry or became the unknown token;
* any other model (a kind defined elsewhere through :mod:`.pipeline`'s protocols): the tokens
  the model gave, with ``method`` ``"model"``.

The words both shells say about a :class:`ChunkWhy` (the steps' notes, why merging or matching
stops, missing characters, the lattice's search) are worked out from it by
:mod:`.sentences`.

Added and special tokens are their own chunks (``method`` ``"added"``). A rank cut-off
(``max_rank``) applies to byte-level BPE from ranks only; another kind raises
:class:`~.errors.NotForThisKindError` naming it.

>>> from tokscope.core.tokenizer.tokenizer import Tokenizer
>>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\\w+|\\s+")
>>> w = explain_text(tok, "ab a")
>>> [(c.chunk.text, c.tokens, c.method) for c in w.chunks]
[('ab', (256,), 'byte-level BPE'), (' ', (32,), 'byte-level BPE'), ('a', (97,), 'byte-level BPE')]
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..text.errors import CancelledError, NotForThisKindError
from ..tokenizer.tokenizer import fix_surrogates
from ..text.types import Chunk

if TYPE_CHECKING:
    from ..models.bpe import BPEReplay
    from .ranks import ChunkExplanation
    from .merge_trees import MergeNode
    from ..tokenizer.tokenizer import Tokenizer
    from ..models.unigram import Segmentation
    from ..models.wordpiece import WordPieceExplanation

__all__ = ["ChunkWhy", "TextWhy", "UnigramWhy", "WordLevelWhy", "explain_at", "explain_chunk", "explain_text",
           "explain_token", "method_of"]

#: Chunks longer than this many characters get no n-best search (Unigram) and no merge trees.
DETAIL_LIMIT = 256
#: Next-best Unigram segmentations shown by default.
NBEST = 3


@dataclass(frozen=True, slots=True)
class UnigramWhy:
    """The best segmentation of a chunk (the one Viterbi takes: the tokens) with its score, and
    the next-best ones, best first; ``margin`` is how much higher the best one scores than the
    first of them. An unknown character is its own piece, scored ``unk_score``. ``searched``:
    whether the next-best ones were looked for (``False`` for a chunk over :data:`DETAIL_LIMIT`
    characters or a model without an unknown piece, ``None`` when none were asked for)."""

    best: Segmentation
    alternatives: tuple[Segmentation, ...]
    margin: float | None
    unk_score: float
    searched: bool | None = None


@dataclass(frozen=True, slots=True)
class WordLevelWhy:
    """Whether the chunk is a vocabulary entry; if not, it is the unknown token ``unk_token``."""

    known: bool
    unk_token: str | None


@dataclass(frozen=True, slots=True)
class ChunkWhy:
    """Why one chunk became its tokens (see the module docstring; the facts of other kinds are
    ``None``). ``method`` is ``"byte-level BPE"`` (from ranks), ``"BPE"`` (a merge list),
    ``"WordPiece"``, ``"Unigram"``, ``"WordLevel"``, ``"added"`` or ``"model"``."""

    chunk: Chunk
    tokens: tuple[int, ...]
    method: str
    summary: str
    ranks: ChunkExplanation | None = None
    bpe: BPEReplay | None = None
    trees: tuple[MergeNode, ...] = ()
    wordpiece: WordPieceExplanation | None = None
    unigram: UnigramWhy | None = None
    wordlevel: WordLevelWhy | None = None

    @property
    def form(self) -> str:
        """The text the model saw (the chunk's normalized, pre-tokenized form)."""
        return self.chunk.form if self.chunk.form is not None else self.chunk.text


@dataclass(frozen=True, slots=True)
class TextWhy:
    """Every chunk of a text explained, in order; ``tokens`` is the whole encoding."""

    encoding: str
    text: str
    chunks: tuple[ChunkWhy, ...]
    max_rank: int | None = None

    @property
    def tokens(self) -> tuple[int, ...]:
        return tuple(t for c in self.chunks for t in c.tokens)


def method_of(tokenizer: Tokenizer) -> str:
    """How :func:`explain_chunk` explains this tokenizer's chunks (the ``method`` of its
    :class:`ChunkWhy`), from its model's kind."""
    if tokenizer.ranks:
        return "byte-level BPE"
    return {"bpe": "BPE", "wordpiece": "WordPiece", "unigram": "Unigram", "wordlevel": "WordLevel"}.get(
        tokenizer.model.kind, "model")


def _show(tokenizer: Tokenizer, ids: Collection[int]) -> str:
    return " + ".join(repr(tokenizer.token_str(i)) for i in ids)


def _from_ranks(found: ChunkExplanation) -> ChunkWhy:
    """Byte-level BPE from ranks as one case of :class:`ChunkWhy` (its facts in ``ranks``)."""
    return ChunkWhy(found.chunk, found.tokens, "byte-level BPE", found.why.summary if found.why else "", ranks=found)


def _check_cutoff(tokenizer: Tokenizer, max_rank: int | None) -> None:
    if max_rank is not None and not tokenizer.ranks:
        raise NotForThisKindError("a rank cut-off", tokenizer.name, tokenizer.kind, "byte-level BPE from ranks")


def explain_chunk(
    tokenizer: Tokenizer, text: str, chunk: Chunk, *, max_rank: int | None = None, nbest: int = NBEST,
    allowed_special: Any = (), with_variants: bool = True,
) -> ChunkWhy:
    """Explain one chunk of ``text`` (its offsets are into ``text``; ``allowed_special`` as the
    text was cut, so that the chunk's form is found in the right part of it). ``with_variants``:
    byte-level BPE from ranks also encodes the chunk's word in other contexts."""
    method = method_of(tokenizer)
    _check_cutoff(tokenizer, max_rank)
    if method == "byte-level BPE":
        from . import ranks as explain

        item = explain.classify_chunk(tokenizer, text, chunk)
        return _from_ranks(explain.explain_chunk(tokenizer, item, max_rank=max_rank, with_variants=with_variants))
    if chunk.special:
        token_id = tokenizer.token_to_id(chunk.text)
        if token_id is None:
            token_id = tokenizer.encode(chunk.text, allowed_special="all")[0]
        what = "special" if tokenizer.is_special(token_id) else "added"
        return ChunkWhy(chunk, (token_id,), "added",
                        f"{chunk.text!r} is the {what} token {token_id}: cut out of the text before anything else, never merged")
    if chunk.form is None:
        form = tokenizer.chunk_form(text, chunk.start, chunk.end, allowed_special=allowed_special)
        if form is not None:
            chunk = Chunk(chunk.text, chunk.start, chunk.end, chunk.special, form)
    form = chunk.form if chunk.form is not None else chunk.text
    model: Any = tokenizer.model
    tokens = tuple(t for t, _, _ in model.tokenize(form))
    if method == "BPE":
        return _bpe(tokenizer, chunk, form, tokens)
    if method == "WordPiece":
        found = model.explain(form)
        return ChunkWhy(chunk, tokens, method, found.summary, wordpiece=found)
    if method == "Unigram":
        return _unigram(tokenizer, chunk, form, tokens, nbest)
    if getattr(model, "kind", None) == "sentencepiece-bpe":
        return _score_bpe(tokenizer, chunk, form, tokens)
    if method == "WordLevel":
        known = model.token_to_id(form) is not None
        unk = getattr(model, "unk_token", None)
        summary = (f"{form!r} is an entry of the vocabulary (id {tokens[0]})" if known
                   else f"{form!r} is not an entry of the vocabulary, so it is the unknown token {unk!r}")
        return ChunkWhy(chunk, tokens, method, summary, wordlevel=WordLevelWhy(known, unk))
    return ChunkWhy(chunk, tokens, "model", f"the model ({tokenizer.kind}) cut {form!r} into {_show(tokenizer, tokens)}")


def _bpe(tokenizer: Tokenizer, chunk: Chunk, form: str, tokens: tuple[int, ...]) -> ChunkWhy:
    from .merge_trees import merge_tree

    model: Any = tokenizer.model
    replay = model.replay(form)
    trees: tuple = ()
    if len(form) <= DETAIL_LIMIT:
        trees = tuple(merge_tree(tokenizer, t) for t in dict.fromkeys(tokens))
    if replay.whole_word:
        summary = f"{form!r} is itself a token ({tokens[0]}): with ignore_merges a whole word is looked up first"
    else:
        kinds = {s.kind for s in replay.initial}
        start = []
        if "byte" in kinds:
            start.append("characters missing from the vocabulary became their UTF-8 bytes (<0x..> tokens)")
        if "unk" in kinds:
            start.append(f"characters missing from the vocabulary became the unknown token {model.unk_token!r}")
        if replay.dropped:
            start.append(f"{len(replay.dropped)} characters missing from the vocabulary were dropped")
        steps = len(replay.steps) if replay.replayed else None
        how = (f"{steps} merge{'' if steps == 1 else 's'}, lowest merge rank first" if steps is not None
               else "merged (too long to replay step by step)")
        summary = (f"{len(replay.initial)} symbols, {how}: {_show(tokenizer, tokens)}"
                   + (f"; {'; '.join(start)}" if start else ""))
        if len(tokens) > 1:
            summary += "; no merge in the list joins the final parts"
    return ChunkWhy(chunk, tokens, "BPE", summary, bpe=replay, trees=trees)


def _score_bpe(tokenizer: Tokenizer, chunk: Chunk, form: str, tokens: tuple[int, ...]) -> ChunkWhy:
    """SentencePiece's BPE (and llama.cpp's SPM): merges by the merged piece's score, highest
    first (leftmost of equal scores), replayed step by step for a chunk of at most
    ``DETAIL_LIMIT`` characters."""
    model: Any = tokenizer.model
    if len(form) > DETAIL_LIMIT:
        return ChunkWhy(chunk, tokens, "BPE by score",
                        f"{len(form)} characters merged by score, highest first (too long to replay step by step): "
                        f"{len(tokens)} tokens")
    replay = model.replay(form)
    shown = ", ".join(f"{m.piece!r} ({m.score:g})" for m in replay.steps[:6])
    more = f" and {len(replay.steps) - 6} more" if len(replay.steps) > 6 else ""
    steps = len(replay.steps)
    summary = (f"{len(replay.initial)} symbols, {steps} merge{'' if steps == 1 else 's'}, the highest-scoring piece "
               f"first{': ' + shown + more if steps else ''}; tokens {_show(tokenizer, tokens)}")
    unknown = [s for s in replay.final if model.token_to_id(s) is None]
    if unknown:
        spelled = "its UTF-8 bytes (<0x..> tokens)" if getattr(model, "byte_fallback", False) else "the unknown token"
        summary += f"; {len(unknown)} symbol{'' if len(unknown) == 1 else 's'} no piece covers became {spelled}"
    return ChunkWhy(chunk, tokens, "BPE by score", summary)


def _unigram(tokenizer: Tokenizer, chunk: Chunk, form: str, tokens: tuple[int, ...], nbest: int) -> ChunkWhy:
    model: Any = tokenizer.model
    best = model.best(form)
    alternatives: tuple = ()
    searched = None if nbest <= 0 else len(form) <= DETAIL_LIMIT and model.unk_id is not None
    if searched:
        found = model.nbest(form, nbest + 1)
        alternatives = tuple(s for s in found if s.ids != best.ids)[:nbest]
    margin = best.score - alternatives[0].score if alternatives else None
    pieces = " + ".join(repr(p) for p in best.pieces)
    summary = f"the best of all segmentations scores {best.score:.3f}: {pieces}"
    if margin is not None:
        summary += f", {margin:.3f} above the next best ({' + '.join(repr(p) for p in alternatives[0].pieces)})"
    unigram = UnigramWhy(best, alternatives, margin, model.unk_score, searched)
    return ChunkWhy(chunk, tokens, "Unigram", summary, unigram=unigram)


def explain_text(
    tokenizer: Tokenizer,
    text: str,
    *,
    max_rank: int | None = None,
    allowed_special: Any = (),
    disallowed_special: Any = (),
    nbest: int = NBEST,
    with_variants: bool = True,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> TextWhy:
    """Every chunk of ``text`` explained (special tokens are ordinary text unless allowed, as in
    :meth:`.Tokenizer.chunks`). ``progress(done, total)`` is called per chunk (characters);
    setting ``cancel`` stops with :class:`~.errors.CancelledError`."""
    _check_cutoff(tokenizer, max_rank)
    if tokenizer.ranks:
        return _ranks_text(tokenizer, text, max_rank=max_rank, allowed_special=allowed_special,
                           disallowed_special=disallowed_special, with_variants=with_variants, progress=progress,
                           cancel=cancel)
    text = fix_surrogates(text)
    out = []
    for chunk in tokenizer.chunks(text, allowed_special=allowed_special, disallowed_special=disallowed_special):
        if cancel is not None and cancel.is_set():
            raise CancelledError("explaining was cancelled")
        out.append(explain_chunk(tokenizer, text, chunk, max_rank=max_rank, nbest=nbest,
                                 allowed_special=allowed_special))
        if progress is not None:
            progress(chunk.end, len(text))
    return TextWhy(tokenizer.name, text, tuple(out))


def _ranks_text(tokenizer: Tokenizer, text: str, **options: Any) -> TextWhy:
    """Byte-level BPE from ranks: the chunks are classified in one pass over the text (which
    pattern alternative matched each), then each is one :class:`ChunkWhy`."""
    from .ranks import explain

    found = explain(tokenizer, text, **options)
    return TextWhy(found.encoding, found.text, tuple(_from_ranks(c) for c in found.chunks), found.max_rank)


def explain_at(tokenizer: Tokenizer, text: str, offset: int, *, max_rank: int | None = None,
               allowed_special: Any = (), nbest: int = NBEST) -> ChunkWhy | None:
    """The chunk covering character ``offset`` of ``text`` explained (the last chunk at the end,
    the next one in a gap between chunks; ``None`` for a text with no chunk)."""
    text = fix_surrogates(text)
    chunks = tokenizer.chunks(text, allowed_special=allowed_special)
    if not chunks:
        return None
    chosen = next((c for c in chunks if c.end > offset), chunks[-1])
    return explain_chunk(tokenizer, text, chosen, max_rank=max_rank, nbest=nbest, allowed_special=allowed_special)


def explain_token(tokenizer: Tokenizer, token_id: int, *, max_rank: int | None = None, nbest: int = NBEST) -> ChunkWhy:
    """How the model cuts a vocabulary entry's own spelling, as if it were a chunk by itself (for
    a token picked from the vocabulary): a token that does not come back as itself is
    unreachable (see :func:`.merges.is_unreachable`).

    Two kinds of entry are not explained by cutting their spelling, because that is not how
    ordinary encoding could reach them: a byte-fallback token (``<0xE2>``) stands for one byte,
    which the model emits for a character missing from the vocabulary (its summary says whether
    that can happen); a WordPiece or WordLevel word-initial entry is first normalized and
    pre-tokenized, so when the whole pipeline does not give it back, ``tokens`` are what it gives
    instead and the summary says so.
    """
    if tokenizer.ranks and not tokenizer.is_added(token_id):
        from . import ranks as explain

        return _from_ranks(explain.explain_token(tokenizer, token_id, max_rank=max_rank))
    spelling = tokenizer.token_str(token_id)
    if tokenizer.is_added(token_id):
        return explain_chunk(tokenizer, spelling, Chunk(spelling, 0, len(spelling), special=True))
    text = tokenizer.token_bytes(token_id).decode("utf-8", "replace")
    # the model sees the spelling itself: the normalizer is not run on it again (it would put a
    # ▁ before a SentencePiece piece that does not start a word, and explain "▁hell" for "hell")
    chunk = Chunk(text, 0, len(text), form=spelling)
    model: Any = tokenizer.model
    if getattr(model, "byte_fallback", False):
        from ..models.bpe import byte_token_value

        value = byte_token_value(spelling)
        if value is not None:
            if max_rank is not None:
                raise NotForThisKindError("a rank cut-off", tokenizer.name, tokenizer.kind, "byte-level BPE from ranks")
            return _byte_token(tokenizer, token_id, chunk, value)
    prefix = getattr(model, "continuing_subword_prefix", None)
    if model.kind == "wordpiece" and prefix and spelling.startswith(prefix) and len(spelling) > len(prefix):
        from .merge_trees import is_unreachable

        core = spelling[len(prefix):]
        summary = (f"{spelling!r} continues a word: after the longest match from the word's start, it is "
                   f"taken when the rest starts with {core!r} and no longer {prefix!r} entry matches")
        if is_unreachable(tokenizer, token_id):
            summary += "; but no word tried gives it after a first piece, so ordinary encoding never produces it"
        return ChunkWhy(chunk, (token_id,), "WordPiece", summary)
    found = explain_chunk(tokenizer, text, chunk, max_rank=max_rank, nbest=nbest)
    if model.kind in ("wordpiece", "wordlevel"):
        whole = tuple(tokenizer.encode(spelling, disallowed_special=()))
        if whole != (token_id,):
            summary = (f"{spelling!r} is an entry of the vocabulary, but the whole pipeline (normalizer and "
                       f"pre-tokenizer first) turns its text into {_show(tokenizer, whole) or 'nothing'}, so "
                       f"ordinary encoding never produces it")
            return ChunkWhy(found.chunk, whole, found.method, summary, wordpiece=found.wordpiece,
                            wordlevel=found.wordlevel)
    return found


def _byte_token(tokenizer: Tokenizer, token_id: int, chunk: Chunk, value: int) -> ChunkWhy:
    """A byte-fallback token: the byte it stands for, and whether byte fallback can emit it (an
    ASCII character that is itself a token never falls back; some bytes never occur in UTF-8)."""
    from .merge_trees import is_unreachable

    spelling = tokenizer.token_str(token_id)
    shown = f"{spelling!r} stands for the byte {value:02x}"
    if not is_unreachable(tokenizer, token_id):
        return ChunkWhy(chunk, (token_id,), method_of(tokenizer),
                        f"{shown}: a character missing from the vocabulary becomes its UTF-8 bytes, "
                        f"and this is one of them (byte fallback)")
    own = tokenizer.token_to_id(chr(value)) if value < 0x80 else None
    if own is not None:
        return ChunkWhy(chunk, (own,), method_of(tokenizer),
                        f"{shown}, the character {chr(value)!r}, which is itself a token ({own}): byte fallback "
                        f"never needs it, so ordinary encoding never produces it")
    return ChunkWhy(chunk, (), method_of(tokenizer),
                    f"{shown}, which never occurs in UTF-8 text: ordinary encoding never produces it")
