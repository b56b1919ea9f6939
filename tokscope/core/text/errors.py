"""Errors the core raises. Each carries a one-line message fit to show a user as it is."""

from __future__ import annotations


class TokscopeError(Exception):
    """Base of every error tokscope reports to a user (one line, no traceback)."""


class DisallowedSpecialError(TokscopeError, ValueError):
    """The text contains a special token that the caller did not allow.

    As in tiktoken, special tokens in user text are refused unless allowed, because text that
    happens to contain ``<|endoftext|>`` must not silently turn into the real control token.
    """

    def __init__(self, token: str, *, hint: str | None = None) -> None:
        self.token = token
        message = (
            f"text contains the special token {token!r}; to encode it as a special token allow it "
            f"(allowed_special={{{token!r}}} or 'all'), or to encode it as ordinary text disable "
            f"the check (disallowed_special=())"
        )
        super().__init__(hint.format(token=token) if hint else message)


class UnknownTokenError(TokscopeError, KeyError):
    """An id that is not in the vocabulary."""

    def __init__(self, token_id: int, n_vocab: int | None = None) -> None:
        self.token_id = token_id
        bound = f" (this vocabulary has ids below {n_vocab})" if n_vocab is not None else ""
        super().__init__(f"unknown token id {token_id}{bound}")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class CancelledError(TokscopeError):
    """A long operation stopped because its cancel event was set."""


class TokenizerFileError(TokscopeError):
    """A tokenizer file (``tokenizer.json``, a rank file, a saved tokenizer) that cannot be used:
    malformed, truncated, or inconsistent (a merge naming a token missing from the vocabulary)."""


class UnsupportedComponentError(TokenizerFileError):
    """A stage of a tokenizer file that tokscope does not implement. Using the file anyway would
    give wrong tokens, so it is refused, naming the stage and its type.

    >>> str(UnsupportedComponentError("normalizer", "ByteLevel"))
    "unsupported normalizer 'ByteLevel' in this tokenizer file"
    >>> str(UnsupportedComponentError("model", "BPE", "dropout 0.1"))
    "unsupported model 'BPE' in this tokenizer file (dropout 0.1)"
    """

    def __init__(self, stage: str, name: str, detail: str | None = None) -> None:
        self.stage = stage
        self.name = name
        extra = f" ({detail})" if detail else ""
        super().__init__(f"unsupported {stage} {name!r} in this tokenizer file{extra}")


class NotForThisKindError(TokscopeError, TypeError):
    """A feature that does not apply to this kind of tokenizer, named in the message (a rank
    cut-off needs byte-level BPE from ranks; WordPiece has no merges).

    >>> str(NotForThisKindError("a rank cut-off", "bert", "WordPiece", "byte-level BPE from ranks"))
    'a rank cut-off needs byte-level BPE from ranks; bert is WordPiece'
    """

    def __init__(self, feature: str, name: str, kind: str, needs: str) -> None:
        self.feature = feature
        self.kind = kind
        super().__init__(f"{feature} needs {needs}; {name} is {kind}")
