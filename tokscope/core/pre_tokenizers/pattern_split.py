"""The pre-tokenizer of byte-level BPE from ranks: the matches of a tiktoken-syntax pattern (what
tiktoken's ``Encoding`` does with its ``pat_str``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .compiled_split import compile_split

if TYPE_CHECKING:
    from ..text.normalized import NormalizedText


class PatternSplit:
    """The pre-tokenizer of byte-level BPE from ranks: matches of a tiktoken-syntax pattern (the
    known patterns of the OpenAI encodings and Llama 3 split by the compiled scanner when it is
    installed: see :mod:`.compiled_split`).

    >>> PatternSplit(r"\\S+|\\s+").compiled.findall("a b")
    ['a', ' ', 'b']
    """

    local = True

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.compiled = compile_split(pattern)

    def __reduce__(self):
        return PatternSplit, (self.pattern,)

    def split_str(self, text: str, first: bool = True) -> list[str]:
        return self.compiled.findall(text)

    def pre_tokenize(self, splits: list[NormalizedText]) -> list[NormalizedText]:
        out = []
        for split in splits:
            for found in self.compiled.finditer(split.text):
                out.append(split.slice(found.start(), found.end()))
        return out
