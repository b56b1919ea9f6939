"""Replace (a string or pattern in each token), as Hugging Face's ``normalizers/replace.rs`` decodes."""

from __future__ import annotations

from typing import Any

import regex

from ..patterns.guard import budget, check_pattern, timed_out
from ..text.errors import TokenizerFileError
from .base import DecoderBase


class Replace(DecoderBase):
    """Replaces every match of ``pattern`` in each token by ``content``. ``pattern`` is a string
    (matched as it is) or, with ``regex=True``, a regular expression (Hugging Face compiles it
    with Oniguruma; here the ``regex`` module, which reads the usual syntax the same way).

    >>> Replace("▁", " ").decode_chain(["▁a▁b"])
    [' a b']
    """

    def __init__(self, pattern: str, content: str, *, regex: bool = False) -> None:
        if not isinstance(pattern, str) or not isinstance(content, str):
            raise TokenizerFileError("Replace decoder pattern and content must be strings")
        self.pattern = pattern
        self.content = content
        self.is_regex = regex
        self._regex = None
        if regex:
            try:
                self._regex = _compile(pattern)
            except Exception as exc:  # regex.error
                raise TokenizerFileError(f"Replace decoder pattern {pattern!r} does not compile: {exc}") from None

    def replace(self, token: str) -> str:
        if self._regex is None:
            return token.replace(self.pattern, self.content)
        if not token:
            return token
        out = []
        prev = 0
        try:
            for m in self._regex.finditer(token, timeout=budget(len(token))):
                out.append(token[prev : m.start()])
                out.append(self.content)
                prev = m.end()
        except TimeoutError:
            raise timed_out(self.pattern, "Replace decoder pattern") from None
        out.append(token[prev:])
        return "".join(out)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self.replace(t) for t in tokens]


def _compile(pattern: str) -> Any:
    check_pattern(pattern, "Replace decoder pattern")  # the limits a user's own pattern has
    return regex.compile(pattern, regex.V0)
