"""The Unicode normalization forms (NFD, NFKD, NFC, NFKC) and Nmt, as Hugging Face's
``normalizers/unicode.rs``."""

from __future__ import annotations

import regex

from ..text.class_table import compiled, set_classes
from ..text.unicode import table, normalize_changes, normalize_runs, starter_spans, unstable_runs
from ..text.normalized import NormalizedText
from .base import NormalizerBase, apply_changes
from .strip import remove_class


class UnicodeForm(NormalizerBase):
    form = ""

    def safe_start(self, text: str, pos: int) -> bool:
        # a character outside the form's "may change" table never joins the one before it
        return pos <= 0 or pos >= len(text) or text[pos] < "\x80" or text[pos] not in table(MAYBE_TABLE[self.form])

    def normalize(self, text: NormalizedText) -> NormalizedText:
        runs = self.unstable_runs(text.text)
        if not runs:
            return text
        return apply_changes(text, [(s, e, normalize_changes(self.form, text.text[s:e])) for s, e in runs])

    def normalize_str(self, text: str) -> str:
        """The form of ``text`` (characters only).

        >>> NFKC().normalize_str("ﬁ e\\u0301 ok")
        'fi é ok'
        """
        if text.isascii():
            return text  # every form leaves ASCII as it is
        return normalize_runs(self.form, text, self.unstable_runs(text))

    def unstable_runs(self, text: str) -> list[tuple[int, int]]:
        """:func:`~.unicode.unstable_runs` of this form: its may-change runs found by the compiled
        class runs when they are installed (one pass, no translation table per text).

        >>> NFC().unstable_runs("cafe\\u0301 ok")
        [(3, 5)]
        """
        module = compiled()
        if module is None or text.isascii():
            return unstable_runs(self.form, text)
        runs = module.cls_runs(text, *set_classes(MAYBE_TABLE[self.form]).tables)
        return starter_spans(runs) if runs else []


MAYBE_TABLE = {"NFD": "D_MAYBE", "NFKD": "D_MAYBE", "NFC": "C_MAYBE", "NFKC": "KC_MAYBE"}


class NFD(UnicodeForm):
    """Canonical decomposition (HF's Unicode 9.0 tables)."""

    form = "NFD"


class NFKD(UnicodeForm):
    """Compatibility decomposition (HF's Unicode 9.0 tables)."""

    form = "NFKD"


class NFC(UnicodeForm):
    """Canonical composition (HF's Unicode 9.0 tables)."""

    form = "NFC"


class NFKC(UnicodeForm):
    """Compatibility composition (HF's Unicode 9.0 tables)."""

    form = "NFKC"


class Nmt(NormalizerBase):
    """SentencePiece's NMT cleanup: ASCII controls removed, other spaces made ``" "``."""

    _REMOVE = regex.compile("[\x01-\x08\x0b\x0e-\x1f\x7f\x8f\x9f]+")
    _SPACES = str.maketrans({c: " " for c in "\t\n\x0c\r\u1680\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u2581\ufeff\ufffd"})

    def normalize(self, text: NormalizedText) -> NormalizedText:
        text = remove_class(text, self._REMOVE)
        return text.with_text(text.text.translate(self._SPACES))

    def normalize_str(self, text: str) -> str:
        return self._REMOVE.sub("", text).translate(self._SPACES)
