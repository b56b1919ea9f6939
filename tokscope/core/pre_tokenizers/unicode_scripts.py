"""UnicodeScripts (a cut where the script changes), as Hugging Face's
``pre_tokenizers/unicode_scripts``."""

from __future__ import annotations

import functools

from ..text.unicode import parse_ranges, table
from ..text.normalized import NormalizedText
from .base import PreTokenizerBase, slices


class UnicodeScripts(PreTokenizerBase):
    """A chunk per run of one script (SentencePiece's rule: Hiragana, Katakana and U+30FC count as
    Han; spaces and unlisted characters belong to any script). As in HF, characters of no script
    before the first one that has a script are dropped (``" a"`` gives ``"a"``)."""

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        t = split.text
        script_of = _scripts()
        # HF cuts before every character whose script differs from the last one seen, the first
        # one included; what comes before that first cut (characters of no script) is dropped
        cuts = []
        last = None
        for i, c in enumerate(t):
            s = script_of(c)
            if s is not None:
                if s != last:
                    cuts.append(i)
                last = s
        bounds = [*cuts, len(t)]
        return slices(split, list(zip(bounds, bounds[1:])))


@functools.cache
def _scripts():
    from ..text import unicode_tables as hf_tables

    table: dict[int, int] = {}
    for k, ranges in enumerate(hf_tables.UNICODE_SCRIPTS):
        for a, b in parse_ranges(ranges):
            for cp in range(a, b + 1):
                table[cp] = k
    get = table.get
    return lambda c: get(ord(c))
