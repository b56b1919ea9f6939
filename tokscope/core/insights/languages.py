"""Token counts of the same passage in many languages, and each language's "premium" over a
reference language (English): how many times as many tokens the same meaning costs.

The core takes plain texts (``{code: text}``); loading the shipped samples is the caller's job
(``tokscope.sample_texts.languages()`` / ``language_text(code)``). Texts are encoded as ordinary
text (special-token look-alikes are not special here).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..text.measure import count_words
from ..text.errors import CancelledError
from ..tokenizer.tokenizer import Tokenizer


@dataclass(frozen=True, slots=True)
class LanguageRow:
    """One language: its size and, per encoding (in :attr:`LanguageTable.encodings` order), the
    token count and the premium (count / the reference language's count; ``None`` without one)."""

    code: str
    name: str
    chars: int
    bytes: int
    words: int
    counts: tuple[int, ...]
    premiums: tuple[float | None, ...]


@dataclass(frozen=True, slots=True)
class LanguageTable:
    encodings: tuple[str, ...]
    reference: str
    rows: tuple[LanguageRow, ...]

    def row(self, code: str) -> LanguageRow:
        for row in self.rows:
            if row.code == code:
                return row
        raise KeyError(code)

    def max_count(self) -> int:
        return max((c for row in self.rows for c in row.counts), default=0)


def premium(count: int, reference: int) -> float | None:
    """``count / reference``, or ``None`` when the reference has no tokens.

    >>> premium(150, 100), premium(3, 0)
    (1.5, None)
    """
    return count / reference if reference else None


def language_table(
    texts: Mapping[str, str],
    tokenizers: Sequence[Tokenizer],
    *,
    names: Mapping[str, str] | None = None,
    reference: str = "en",
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> LanguageTable:
    """Count each text's tokens with each tokenizer (rows in ``texts`` order).

    ``names`` maps a code to a display name (default: the code). ``progress(done, total)`` is
    called after each text; setting ``cancel`` stops with :class:`CancelledError`. Premiums are
    ``None`` when ``reference`` is not among the texts.
    """
    total = len(texts)
    counted: list[tuple[str, str, tuple[int, ...]]] = []
    for done, (code, text) in enumerate(texts.items(), 1):
        if cancel is not None and cancel.is_set():
            raise CancelledError("cancelled")
        counts = tuple(len(tok.encode_ordinary(text)) for tok in tokenizers)
        counted.append((code, text, counts))
        if progress is not None:
            progress(done, total)
    ref_counts = next((c for code, _, c in counted if code == reference), None)
    rows = []
    for code, text, counts in counted:
        premiums = (
            tuple(premium(c, r) for c, r in zip(counts, ref_counts)) if ref_counts is not None
            else tuple(None for _ in counts)
        )
        rows.append(LanguageRow(
            code, (names or {}).get(code, code), len(text), len(text.encode("utf-8", "surrogatepass")),
            count_words(text), counts, premiums,
        ))
    return LanguageTable(tuple(t.name for t in tokenizers), reference, tuple(rows))
