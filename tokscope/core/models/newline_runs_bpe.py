"""llama.cpp's BPE for Gemma 4: Hugging Face's merge-list BPE, except that a word made only of
newlines that is itself a token is that token, before any merge.

Gemma 4's GGUF is SentencePiece-style BPE over whole lines (the pre-tokenizer cuts lines from runs
of newlines), and llama.cpp looks a run of newlines up whole (its fix for Gemma 4 files whose merge
list does not reach the vocabulary's newline tokens); every other word is merged as
:class:`~.bpe.BPE` merges it.

>>> model = NewlineRunsBPE({"\\n": 0, "\\n\\n\\n": 1, "a": 2, "aaa": 3}, [])
>>> [t for t, _, _ in model.tokenize("\\n\\n\\n")], [t for t, _, _ in model.tokenize("aaa")]
([1], [2, 2, 2])
>>> model.tokenize_ids("\\n\\n\\n"), model.tokenize_ids("aaa")
([1], [2, 2, 2])
>>> model.replay("\\n\\n\\n").whole_word
True
"""

from __future__ import annotations

from .bpe import BPE, REPLAY_LIMIT, BPEReplay, InitialSymbol


def _newlines_only(word: str) -> bool:
    """
    >>> _newlines_only("\\n\\n"), _newlines_only("\\n "), _newlines_only("")
    (True, False, False)
    """
    return bool(word) and not word.strip("\n")


class NewlineRunsBPE(BPE):
    """:class:`~.bpe.BPE` with llama.cpp's whole-token rule for runs of newlines (see the module
    docstring); built and used exactly as :class:`~.bpe.BPE`."""

    def _tokenize(self, text: str) -> list[tuple[int, int, int]]:
        if _newlines_only(text):
            whole = self.token_to_id(text)
            if whole is not None:
                return [(whole, 0, len(text))]
        return super()._tokenize(text)

    def _tokenize_ids(self, text: str) -> list[int]:
        if _newlines_only(text):
            whole = self.token_to_id(text)
            if whole is not None:
                return [whole]
        return super()._tokenize_ids(text)

    def replay(self, word: str, *, limit: int = REPLAY_LIMIT) -> BPEReplay:
        if _newlines_only(word):
            whole = self.token_to_id(word)
            if whole is not None:
                symbol = InitialSymbol(whole, "char", 0, len(word))
                return BPEReplay(word, (symbol,), (), (), (whole,), True, True)
        return super().replay(word, limit=limit)
