"""Split: the matches of a pattern (string or Oniguruma regex) and a split behavior, as Hugging
Face's ``pre_tokenizers/split.rs``."""

from __future__ import annotations

import regex

from ..text.errors import TokenizerFileError
from ..text.normalized import BEHAVIORS, NormalizedText, merge_matches, matches_from_spans
from ..patterns.onig import OnigPattern, compile_onig, literal_pattern
from .base import PreTokenizerBase, isolated_strs, pattern_is_local, split_text
from .compiled_split import compile_onig_split


class Split(PreTokenizerBase):
    """Split on a pattern (a plain string, or an Oniguruma regex with ``regex=True``) with one of
    HF's behaviors for the delimiters; ``invert`` splits on what does not match."""

    def __init__(self, pattern: str, behavior: str = "isolated", invert: bool = False, regex: bool = False) -> None:
        if behavior not in BEHAVIORS:
            raise TokenizerFileError(f"pre-tokenizer 'Split': unknown behavior {behavior!r}")
        self.pattern = pattern
        self.behavior = behavior
        self.invert = invert
        self.regex = regex
        # Llama 3's and Qwen2's patterns are cut by the compiled scanner when it is installed
        self._onig: OnigPattern = (compile_onig_split(pattern) if regex
                                   else compile_onig(literal_pattern(pattern), "pre-tokenizer", "Split"))
        self.local = (not regex and bool(pattern)) or (regex and pattern_is_local(pattern))

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return split_text(split, self._onig.spans, self.behavior, self.invert)

    def split_str(self, text: str, first: bool = True) -> list[str]:
        if not text:
            return []
        if not self.regex and not self.invert and self.pattern not in text:
            return [text]  # a string that does not occur: one unmatched piece, whatever the behavior
        if self.behavior == "isolated" and not self.invert:
            return isolated_strs(self._onig, text)
        matches = matches_from_spans(self._onig.spans(text), len(text))
        if self.invert:
            matches = [(s, e, not m) for s, e, m in matches]
        return [text[s:e] for s, e in merge_matches(matches, self.behavior) if s < e]
