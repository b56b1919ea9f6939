"""The classic argument for BPE, measured on one text: characters vs words vs learned subwords.

The text is split once: the first ``split`` of it (moved forward to the next whitespace, so no
word is cut) is the *training part*, the rest the *held-out part*. Each tokenizer builds its
vocabulary on the training part only:

* **character**: every distinct character of the training part;
* **word**: every distinct word of the training part, where a word is a run of letters, digits
  and underscores (``\\w+``) and every other non-space character is a word of its own (``,``);
  whitespace is dropped;
* **BPE**: a byte-level BPE of ``vocab_size`` mergeable tokens trained on the training part with
  the given pattern.

For each: the vocabulary size, the sequence length of the whole text (an unknown character or
word counts as one ``<unk>`` token), the sequence length of the held-out part, and the
*out-of-vocabulary* (OOV) rate there: the share of held-out tokens not in the vocabulary
(BPE works on bytes, so it has none: an unseen word is spelled with smaller pieces). The most
common unseen words are reported with the pieces BPE cuts them into.

Finally the *word-crossing* count: how many learned tokens run past the end of a word (contain
whitespace after a non-whitespace byte, see :func:`~tokscope.core.train.trainer.crosses_word`) when BPE
is trained with no pre-tokenization (``none``) and with the pattern, at the same size.

>>> report = baselines("the cat sat on the mat. the dog sat on the log.", split=0.5, vocab_size=260)
>>> report.word.vocab_size, report.word.test_oov, [u.word for u in report.unseen_words]
(6, 2, ['dog', 'log'])
>>> report.char.test_oov, report.bpe.test_oov
(4, 0)
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import regex

from ..text.errors import TokscopeError
from .trainer import PATTERN_NONE, PATTERN_WORDS, TrainProgress, crosses_word, train

#: What the word tokenizer counts as one word.
WORD_PATTERN = r"\w+|[^\w\s]"
_WORD_RE = regex.compile(WORD_PATTERN)


class BaselinesError(TokscopeError):
    """A text or options the baselines cannot use."""


@dataclass(frozen=True, slots=True)
class BaselineFigures:
    """One tokenizer's figures. ``test_oov`` counts held-out tokens missing from the vocabulary;
    ``test_unseen_types`` counts distinct ones."""

    kind: str
    vocab_size: int
    tokens: int
    test_tokens: int
    test_oov: int
    test_types: int
    test_unseen_types: int

    @property
    def oov_rate(self) -> float:
        return self.test_oov / self.test_tokens if self.test_tokens else 0.0

    @property
    def unseen_type_rate(self) -> float:
        return self.test_unseen_types / self.test_types if self.test_types else 0.0


@dataclass(frozen=True, slots=True)
class UnseenWord:
    word: str
    count: int
    pieces: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class CrossingFigures:
    """Learned tokens crossing a word boundary, without and with pre-tokenization."""

    pattern_name: str
    merges_without: int
    crossing_without: int
    merges_with: int
    crossing_with: int
    examples_without: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class BaselinesReport:
    chars: int
    split: float
    split_at: int
    char: BaselineFigures
    word: BaselineFigures
    bpe: BaselineFigures
    unseen_words: tuple[UnseenWord, ...]
    crossing: CrossingFigures


def split_text(text: str, split: float) -> int:
    """Where the training part ends: ``split`` of the characters, moved forward to the next
    whitespace (or back to the last one when there is none after), so no word is cut.

    >>> split_text("aaa bbb ccc", 0.5), split_text("aaa bbbbbbbb", 0.5)
    (7, 3)
    """
    if not 0.0 < split < 1.0:
        raise BaselinesError(f"the split must be between 0 and 1 (exclusive); got {split}")
    at = int(len(text) * split)
    found = regex.compile(r"\s").search(text, at)
    if found:
        return found.start()
    before = max(text.rfind(c, 0, at) for c in " \t\n\r")
    if before <= 0:
        raise BaselinesError("the text is too short: it needs at least two words to split")
    return before


def _figures(kind: str, train_items: list, whole_items: int, test_items: list) -> BaselineFigures:
    vocab = set(train_items)
    unseen = [t for t in test_items if t not in vocab]
    return BaselineFigures(
        kind=kind,
        vocab_size=len(vocab),
        tokens=whole_items,
        test_tokens=len(test_items),
        test_oov=len(unseen),
        test_types=len(set(test_items)),
        test_unseen_types=len(set(unseen)),
    )


def baselines(
    text: str,
    *,
    split: float = 0.5,
    vocab_size: int = 1000,
    pattern: str = PATTERN_WORDS,
    pattern_name: str = "words",
    top: int = 10,
    progress: Callable[[str, TrainProgress], None] | None = None,
    cancel: threading.Event | None = None,
) -> BaselinesReport:
    """Measure the character, word and BPE tokenizers on ``text`` (see the module docstring).

    ``progress`` receives ``("bpe" | "none", TrainProgress)`` from the training runs.
    """
    at = split_text(text, split)
    train_part, test_part = text[:at], text[at:]
    train_words = _WORD_RE.findall(train_part)
    test_words = _WORD_RE.findall(test_part)
    if not train_words or not test_words:
        raise BaselinesError("the text is too short: both parts of the split need at least one word")
    char = _figures("character", list(train_part), len(text), list(test_part))
    word = _figures("word", train_words, len(train_words) + len(test_words), test_words)

    def report(stage: str) -> Callable[[TrainProgress], None] | None:
        return None if progress is None else (lambda p: progress(stage, p))

    result = train(train_part, vocab_size=vocab_size, pattern=pattern, pattern_name=pattern_name,
                   progress=report("bpe"), cancel=cancel)
    tokenizer = result.tokenizer("bpe")
    test_tokens = len(tokenizer.encode_ordinary(test_part))
    bpe = BaselineFigures(
        kind="bpe",
        vocab_size=result.vocab_size,
        tokens=len(tokenizer.encode_ordinary(text)),
        test_tokens=test_tokens,
        test_oov=0,
        test_types=0,
        test_unseen_types=0,
    )
    vocab = set(train_words)
    unseen_counts = Counter(w for w in test_words if w not in vocab)
    unseen = tuple(
        UnseenWord(w, n, tuple(tokenizer.token_bytes(i) for i in tokenizer.encode_ordinary(w)))
        for w, n in unseen_counts.most_common(max(top, 0))
    )
    if pattern == PATTERN_NONE:
        plain = result
    else:
        plain = train(train_part, vocab_size=vocab_size, pattern=PATTERN_NONE, pattern_name="none",
                      progress=report("none"), cancel=cancel)
    crossing_without = [m.bytes for m in plain.merges if crosses_word(m.bytes)]
    crossing = CrossingFigures(
        pattern_name=pattern_name,
        merges_without=len(plain.merges),
        crossing_without=len(crossing_without),
        merges_with=len(result.merges),
        crossing_with=sum(1 for m in result.merges if crosses_word(m.bytes)),
        examples_without=tuple(crossing_without[:10]),
    )
    return BaselinesReport(len(text), split, at, char, word, bpe, unseen, crossing)
