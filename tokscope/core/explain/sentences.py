"""The words of "why", for every kind: every sentence the command line (``tokscope explain``) and the
explorer's why screen (F3) say about a chunk, written once here as plain data.

:func:`why_sentences` turns a :class:`~.why.ChunkWhy` of any kind into a :class:`WhySentences`:
what the chunk is (``what``), the form the model saw when it says more than the text (``form``),
what a replay starts from (``start``), the line above the steps (``heading``), one note per step
(``steps``: a merge's rank, a greedy match's misses), the sentences about the chunk as a whole
(``notes``: characters missing from the vocabulary, why merging or matching stops, the lattice's
next-best search) and the one-sentence summary. :func:`token_sentences` says what a vocabulary
entry is (its facts, whether ordinary encoding can produce it), :func:`cutoff_words` the rank
cut-off in force and :data:`NO_CUTOFF` why another kind has none.

The shells only lay these out: the command line as ``label: text`` lines, the why screen as Rich
text with the label in bold. Text from the user or a tokenizer is already made inert
(:func:`~tokscope.core.text.display.safe_text`) inside the sentences, so both show the same
characters.

>>> from tokscope.core.models.wordpiece import WordPiece
>>> from tokscope.core.tokenizer.tokenizer import Tokenizer
>>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\\w+|\\s+")
>>> from tokscope.core.explain.why import explain_text
>>> words = why_sentences(tok, explain_text(tok, "ab").chunks[0])
>>> words.what, words.start, words.steps
('letters, pattern alternative 1', '2 single bytes', ('rank 256 (the lowest)',))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..text.byte_alphabet import CHAR_TO_BYTE
from ..text.display import hex_label, safe_text
from .facts import fallback_byte, token_facts
from .why import DETAIL_LIMIT, ChunkWhy

if TYPE_CHECKING:
    from ..models.wordpiece import WordPieceExplanation, WordPieceStep
    from ..tokenizer.tokenizer import Tokenizer
    from .ranks import ChunkExplanation

__all__ = ["MISSING_LIMIT", "NO_CUTOFF", "Sentence", "WhySentences", "cutoff_words", "fact_words", "no_merge_reason",
           "shown_form", "step_note", "token_sentences", "unk_words", "why_sentences", "wordpiece_heading",
           "wordpiece_stop", "wordpiece_step_note"]

#: characters missing from the vocabulary told one by one (of each kind), then "… and N more"
MISSING_LIMIT = 20
#: why the rank cut-off does not apply to a kind without ranks (short: it is a line of the why
#: screen, whose right column is about 35 cells wide in a 60-column terminal)
NO_CUTOFF = "cut-off: BPE from ranks only"
#: a candidate pair the rank cut-off leaves out
CUT_OFF = "cut off"
#: a vocabulary entry that ordinary encoding never produces
UNREACHABLE = "ordinary encoding never produces this token"


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence and the label it stands under (``""``: it stands alone).

    >>> Sentence("unknown", '"x" is not in the vocabulary').text
    '"x" is not in the vocabulary'
    """

    label: str
    text: str


@dataclass(frozen=True, slots=True)
class WhySentences:
    """Every sentence about one chunk (see the module docstring); ``None`` and ``()`` where the
    kind has nothing to say."""

    what: str
    form: str | None
    start: str | None
    heading: str | None
    steps: tuple[str, ...]
    notes: tuple[Sentence, ...]
    summary: str

    def sentences(self) -> tuple[str, ...]:
        """Every sentence, in the order the shells show them (labels left out).

        >>> WhySentences("WordLevel", None, None, None, (), (Sentence("", "b"),), "c").sentences()
        ('b', 'c')
        """
        out = [s for s in (self.start, self.heading) if s]
        out += self.steps
        out += [n.text for n in self.notes]
        if self.summary:
            out.append(self.summary)
        return tuple(out)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _q(text: str) -> str:
    """Text from the user or a tokenizer inside a sentence: inert, between double quotes."""
    return f'"{safe_text(text)}"'


# ----- the rank cut-off ------------------------------------------------------------------------------


def cutoff_words(tokenizer: Tokenizer, max_rank: int | None) -> str:
    """The rank cut-off in force, with how many merges it keeps (byte-level BPE from ranks).

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}, r"\\w+")
    >>> cutoff_words(tok, None), cutoff_words(tok, 257)
    ('none (all 2 merges)', 'ranks below 257 (1 merges of 2)')
    """
    from .merge_trees import merges_kept

    every = merges_kept(tokenizer, None)
    if max_rank is None:
        return f"none (all {every:,} merges)"
    return f"ranks below {max_rank:,} ({merges_kept(tokenizer, max_rank):,} merges of {every:,})"


def step_note(rank: int) -> str:
    """What a merge step says after the pair it merged: its rank, the lowest of the candidates.

    >>> step_note(258)
    'rank 258 (the lowest)'
    """
    return f"rank {rank} (the lowest)"


# ----- byte-level BPE from ranks -------------------------------------------------------------------


def no_merge_reason(c: ChunkExplanation) -> str:
    """Why the replay of a chunk of several bytes made no merge at all: no adjacent pair of bytes is
    a token, or (under a rank cut-off) none is one below it.

    >>> from tokscope.core.explain.ranks import ChunkExplanation, MissingMerge, WhyNotOneToken
    >>> from tokscope.core.text.types import Chunk
    >>> why = WhyNotOneToken(False, None, None, False, False, None, (MissingMerge(b"a", b"b", 300),), b"a", 97, "")
    >>> no_merge_reason(ChunkExplanation(Chunk("ab", 0, 2), "letters", 0, 0, 2, (97, 98), (b"a", b"b"), (), True,
    ...                                  why, ()))
    'no adjacent pair of bytes is a token below the cut-off'
    """
    if c.why is not None and any(m.rank is not None for m in c.why.missing):
        return "no adjacent pair of bytes is a token below the cut-off"
    return "no adjacent pair of bytes is a token"


def ranks_sentences(c: ChunkExplanation) -> WhySentences:
    """Byte-level BPE from ranks: the pattern alternative, the replay's start and steps, and why
    merging stops (or never starts)."""
    what = c.category + ("" if c.alternative is None else f", pattern alternative {c.alternative + 1}")
    notes: list[Sentence] = []
    start = None
    if c.chunk.special:
        notes.append(Sentence("", f"special token {c.tokens[0]}: never merged"))
    elif not c.replayed:
        notes.append(Sentence("", f"{len(c.bytes)} bytes: too long to replay step by step"))
    elif len(c.bytes) == 1:
        notes.append(Sentence("", "a single byte: nothing to merge"))
    elif not c.steps:
        notes.append(Sentence("", f"no merge applies: {no_merge_reason(c)}"))
    else:
        start = f"{len(c.bytes)} single bytes"
    steps = tuple(step_note(s.rank) for s in c.steps)
    return WhySentences(what, None, start, None, steps, tuple(notes), safe_text(c.why.summary) if c.why else "")


# ----- every other kind -----------------------------------------------------------------------------


def shown_form(tokenizer: Tokenizer, w: ChunkWhy) -> str | None:
    """The form the model saw, when it says more than the chunk's text (``None`` when it is the
    text). A byte-level vocabulary sees its bytes in GPT-2's alphabet (``ĠcafÃ©``): its form is
    shown decoded, so only a normalizer's change shows, and none when there is none.

    >>> from tokscope.core.text.types import Chunk
    >>> class Tok:
    ...     kind = "byte-level BPE"
    >>> shown_form(Tok(), ChunkWhy(Chunk(" hi", 0, 3, form="Ġhi"), (), "BPE", ""))
    >>> shown_form(Tok(), ChunkWhy(Chunk(" cafe\u0301", 0, 6, form="ĠcafÃ©"), (), "BPE", ""))
    ' café'
    """
    form = w.chunk.form
    if form is None or form == w.chunk.text or w.chunk.special:
        return None
    if tokenizer.kind == "byte-level BPE" and all(ch in CHAR_TO_BYTE for ch in form):
        decoded = bytes(CHAR_TO_BYTE[ch] for ch in form).decode("utf-8", errors="replace")
        return None if decoded == w.chunk.text else decoded
    return form


def _capped(label: str, texts: list[str], what: str) -> list[Sentence]:
    """At most :data:`MISSING_LIMIT` sentences under ``label``, then how many more ``what``."""
    out = [Sentence(label, t) for t in texts[:MISSING_LIMIT]]
    if len(texts) > MISSING_LIMIT:
        out.append(Sentence(label, f"… and {len(texts) - MISSING_LIMIT} more {what}"))
    return out


def byte_fallback_sentences(tokenizer: Tokenizer, tokens: tuple[int, ...]) -> list[Sentence]:
    """Byte fallback, from the tokens themselves (any kind): each run of byte tokens with the text
    it spells."""
    if not getattr(tokenizer.model, "byte_fallback", False):
        return []
    runs: list[list[int]] = []
    previous = False
    bytes_of: dict[int, int | None] = {}
    for t in tokens:
        if t not in bytes_of:
            bytes_of[t] = fallback_byte(tokenizer, t)
        b = bytes_of[t]
        if b is None:
            previous = False
            continue
        if previous:
            runs[-1].append(b)
        else:
            runs.append([b])
        previous = True
    texts = []
    for run in runs:
        data = bytes(run)
        texts.append(f"{_q(data.decode('utf-8', 'replace'))} is not in the vocabulary: its UTF-8 bytes "
                     f"{hex_label(data)} are {_plural(len(run), 'byte token')}")
    return _capped("byte fallback", texts, "characters")


def _bpe(tokenizer: Tokenizer, w: ChunkWhy) -> WhySentences:
    replay = w.bpe
    assert replay is not None
    notes: list[Sentence] = []
    start = None
    model: Any = tokenizer.model
    word = replay.word
    if not replay.whole_word:  # else the summary says it: the word itself is looked up first
        unknown: dict[tuple[int, int], None] = {}
        for s in replay.initial:
            if s.kind == "unk":
                unknown.setdefault((s.start, s.end))
        unk = _q(getattr(model, "unk_token", None) or "")
        notes += _capped("unknown", [f"{_q(word[a:b])} is not in the vocabulary and there is no byte fallback: "
                                     f"it is the unknown token {unk}" for a, b in unknown], "characters")
        if replay.dropped:
            chars = "".join(word[i] for i in replay.dropped)
            notes.append(Sentence("dropped", f"{_q(chars)} is not in the vocabulary, with no byte fallback and no "
                                             f"unknown token: no symbol at all"))
        if not replay.replayed:
            notes.append(Sentence("", f"{len(replay.initial)} symbols: too long to replay step by step"))
        elif not replay.steps:
            notes.append(Sentence("", "a single symbol: nothing to merge" if len(replay.initial) == 1
                                  else "no merge applies: the merge list has no adjacent pair of these symbols"))
        else:
            start = _plural(len(replay.initial), "symbol")
    steps = tuple(step_note(s.rule.rank) for s in replay.steps)
    return WhySentences(w.method, shown_form(tokenizer, w), start, None, steps, tuple(notes), safe_text(w.summary))


# ----- WordPiece ------------------------------------------------------------------------------------


def wordpiece_heading(found: WordPieceExplanation) -> str:
    """The line above WordPiece's greedy steps.

    >>> from tokscope.core.models.wordpiece import WordPiece
    >>> wordpiece_heading(WordPiece({"[UNK]": 0, "a": 1}).explain("a"))
    'greedy longest match from the left (words up to 100 characters)'
    """
    return f"greedy longest match from the left (words up to {found.limit} characters)"


def wordpiece_step_note(step: WordPieceStep) -> str:
    """What one greedy step says after its token: how many longer candidates missed, or that the
    rest of the word is one entry.

    >>> from tokscope.core.models.wordpiece import WordPiece
    >>> [wordpiece_step_note(s) for s in WordPiece({"[UNK]": 0, "a": 1, "##bc": 2}).explain("abc").steps]
    ['2 longer not in the vocabulary', 'the whole rest is an entry']
    """
    if step.missed:
        return f"{step.missed} longer not in the vocabulary"
    return "the whole word is an entry" if step.start == 0 else "the whole rest is an entry"


def unk_words(model: Any, tokens: tuple[int, ...] = ()) -> str:
    """The unknown token as the sentences name it: its spelling, then its id when the word became it.

    >>> class Model:
    ...     unk_token = "[UNK]"
    >>> unk_words(Model(), (100,)), unk_words(object())
    ('[UNK] 100', 'the unknown token')
    """
    unk = getattr(model, "unk_token", None) or "the unknown token"
    return f"{unk} {tokens[0]}" if tokens else unk


def wordpiece_stop(found: WordPieceExplanation, prefix: str, unk: str) -> str | None:
    """Why WordPiece gave up on a word (it is then the unknown token, ``unk`` with its id): too
    long, or no entry matching at some character; ``None`` for a word it matched.

    >>> from tokscope.core.models.wordpiece import WordPiece
    >>> wordpiece_stop(WordPiece({"[UNK]": 0, "a": 1}).explain("ab"), "##", "[UNK] 0")
    'no match at character 1: "##b" is not in the vocabulary, so the whole word "ab" is [UNK] 0'
    """
    if found.reason == "too_long":
        return (f"{found.chars} characters, more than max_input_chars_per_word ({found.limit}): the whole word is "
                f"{unk} and no match is tried")
    if found.reason != "no_match" or found.failed_at is None:
        return None
    at = found.failed_at
    rest = (prefix if at else "") + found.word[at:]
    if len(found.word) - at == 1:
        what = f'"{rest}" is not in the vocabulary'
    else:
        first = (prefix if at else "") + found.word[at]
        what = f'no entry matches the start of "{rest}", not even "{first}"'
    return f'no match at character {at}: {what}, so the whole word "{found.word}" is {unk}'


def _wordpiece(tokenizer: Tokenizer, w: ChunkWhy) -> WhySentences:
    found = w.wordpiece
    assert found is not None
    model: Any = tokenizer.model
    heading = None
    steps: tuple[str, ...] = ()
    if found.reason != "too_long":
        heading = wordpiece_heading(found)
        steps = tuple(wordpiece_step_note(s) for s in found.steps)
    stop = wordpiece_stop(found, getattr(model, "continuing_subword_prefix", "") or "",
                          unk_words(model, w.tokens if found.unknown else ()))
    notes = () if stop is None else (Sentence("", safe_text(stop)),)
    return WhySentences(w.method, shown_form(tokenizer, w), None, heading, steps, notes, safe_text(w.summary))


# ----- Unigram --------------------------------------------------------------------------------------


def _unigram(tokenizer: Tokenizer, w: ChunkWhy) -> list[Sentence]:
    """The lattice's next-best search when it found none, and each unknown piece with its score."""
    found = w.unigram
    assert found is not None
    notes: list[Sentence] = []
    if not found.alternatives and found.searched is not None:
        if found.searched:
            why = "none: no other segmentation was found"
        elif len(w.form) > DETAIL_LIMIT:
            why = f"not searched for a chunk over {DETAIL_LIMIT} characters"
        else:
            why = "not searched: the model has no unknown piece"
        notes.append(Sentence("next", why))
    unknown = tokenizer.unknown_id
    missing = [piece for piece, token_id in zip(found.best.pieces, found.best.ids) if token_id == unknown]
    notes += _capped("unknown", [f"{_q(piece)} is not in the vocabulary: an unknown piece scored "
                                 f"{found.unk_score:.3f} (the lowest score less 10)" for piece in missing], "pieces")
    return notes


# ----- every kind ------------------------------------------------------------------------------------


def why_sentences(tokenizer: Tokenizer, w: ChunkWhy, *, token: bool = False) -> WhySentences:
    """Every sentence about one chunk of any kind (see the module docstring). For a vocabulary
    entry explained on its own (``token``: its spelling stands in for the chunk) neither the form
    nor byte fallback is told: the spelling is what the model saw, and a byte token is the entry
    itself."""
    if w.ranks is not None:
        return ranks_sentences(w.ranks)
    if w.bpe is not None:
        found = _bpe(tokenizer, w)
    elif w.wordpiece is not None:
        found = _wordpiece(tokenizer, w)
    else:
        notes = _unigram(tokenizer, w) if w.unigram is not None else []
        form = None if w.method == "added" else shown_form(tokenizer, w)
        found = WhySentences(w.method, form, None, None, (), tuple(notes), safe_text(w.summary))
    if token and found.form is not None:
        found = WhySentences(found.what, None, found.start, found.heading, found.steps, found.notes, found.summary)
    if w.method == "added" or token:
        return found
    fallback = byte_fallback_sentences(tokenizer, w.tokens)
    if not fallback:
        return found
    return WhySentences(found.what, found.form, found.start, found.heading, found.steps,
                        found.notes + tuple(fallback), found.summary)


# ----- a vocabulary entry on its own --------------------------------------------------------------------


def fact_words(tokenizer: Tokenizer, token_id: int) -> list[str]:
    """What the inspector knows about a token, as short phrases (score, continuation, byte ...).

    >>> from tokscope.core.models.wordpiece import WordPiece
    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> tok = Tokenizer.from_stages("w", model=WordPiece({"[UNK]": 0, "a": 1, "##b": 2}))
    >>> fact_words(tok, 2), fact_words(tok, 0)
    (['continues a word (##)'], ['the unknown token'])
    """
    f = token_facts(tokenizer, token_id)
    out = []
    if f.score is not None:
        out.append(f"score {f.score:.3f}")
    if f.continuation is not None:
        out.append(f"continues a word ({safe_text(f.continuation)})")
    if f.end_of_word is not None:
        out.append(f"ends a word ({safe_text(f.end_of_word)})")
    if f.byte is not None:
        out.append(f"byte fallback for {hex_label(bytes([f.byte]))}")
    if f.unknown:
        out.append("the unknown token")
    if f.added and not f.special:
        out.append("added token")
    return out


def token_sentences(tokenizer: Tokenizer, token_id: int) -> tuple[Sentence, ...]:
    """What a vocabulary entry explained on its own is: its facts (a kind without ranks) and
    whether ordinary encoding can produce it at all."""
    from .merge_trees import is_unreachable

    out = []
    if not tokenizer.ranks:
        facts = fact_words(tokenizer, token_id)
        if facts:
            out.append(Sentence("facts", ", ".join(facts)))
    if is_unreachable(tokenizer, token_id):
        out.append(Sentence("unreachable", UNREACHABLE))
    return tuple(out)
