"""The base every normalizer shares (``normalize_str``, ``safe_start``, its repr) and
:func:`apply_changes`, which applies Hugging Face's ``(char, change)`` streams to an aligned text."""

from __future__ import annotations

from collections.abc import Sequence as Seq

from ..text.normalized import NormalizedText


class NormalizerBase:
    local = True

    def normalize(self, text: NormalizedText) -> NormalizedText:  # pragma: no cover - abstract
        raise NotImplementedError

    def safe_start(self, text: str, pos: int) -> bool:
        """Whether normalizing ``text`` from ``pos`` on gives, there, what normalizing it whole
        gives (no character before ``pos`` composes, reorders or matches with the one at
        ``pos``): where a local pipeline may start again. True for character-by-character
        stages."""
        return True

    def normalize_str(self, text: str) -> str:
        return self.normalize(NormalizedText.identity(text)).text

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


def apply_changes(text: NormalizedText, edits: Seq[tuple[int, int, list[tuple[str, int]]]]) -> NormalizedText:
    """Apply HF ``(char, change)`` streams to spans of ``text`` (sorted, disjoint), each stream
    replacing exactly its span's characters (as :meth:`~.normalized.NormalizedText.transform`
    would on the whole text); the rest of the text keeps its alignment."""
    out = []
    for s, e, changes in edits:
        chars = "".join(c for c, _ in changes)
        sources = []
        p = s
        for _, ch in changes:
            if ch > 0:
                sources.append(p - 1)
            else:
                sources.append(p)
                p += 1 - ch
        if chars == text.text[s:e] and sources == list(range(s, e)):
            continue
        out.append((s, e, chars, sources))
    return text.edit(out) if out else text
