"""BertNormalizer (clean text, CJK spacing, accents, lower case), as Hugging Face's
``normalizers/bert.rs``."""

from __future__ import annotations

import regex

from ..text.char_map import CharMap
from ..text.unicode import WHITESPACE, ccc, table, lowercase_str
from ..text.unicode import normalize_str as _nf_str
from ..text.normalized import NormalizedText
from .base import NormalizerBase
from .strip import remove_class, remove_str
from .unicode import NFD
from .utils import Lowercase


class BertNormalizer(NormalizerBase):
    """BERT's cleanup: controls removed and whitespace made ``" "`` (``clean_text``), spaces put
    around CJK ideographs (``handle_chinese_chars``), accents stripped (``strip_accents``; when
    ``None``, it follows ``lowercase``), lowercased (``lowercase``).

    >>> BertNormalizer().normalize_str("Héllo\\t中国")
    'hello  中  国 '
    """

    _CJK = regex.compile(
        "[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f"
        "\U0002b740-\U0002b81f\U0002b920-\U0002ceaf\uf900-\ufaff\U0002f800-\U0002fa1f]"
    )
    _SPACES = str.maketrans({c: " " for c in WHITESPACE})

    #: the settings and the character table normalize_str translates with, taken on first use
    #: (never pickled)
    _chars: tuple | None = None

    def __init__(
        self,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
    ) -> None:
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.lowercase = lowercase

    def normalize(self, text: NormalizedText) -> NormalizedText:
        if self.clean_text:
            if not text.text.isascii() or _ASCII_CONTROL.search(text.text):
                text = remove_class(text, table("BERT_REMOVED"))
            text = text.with_text(text.text.translate(self._SPACES))
        if self.handle_chinese_chars and not text.text.isascii():
            pieces: list[tuple[int, int] | tuple[str, int]] = []
            last = 0
            for m in self._CJK.finditer(text.text):
                s = m.start()
                pieces.append((last, s))
                pieces.append((" " + text.text[s] + " ", s))
                last = s + 1
            if pieces:
                pieces.append((last, len(text.text)))
                text = text.rebuild(pieces)
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        if strip and not text.text.isascii():
            text = NFD().normalize(text)
            text = remove_class(text, table("MN"))
        if self.lowercase:
            text = Lowercase().normalize(text)
        return text

    def safe_start(self, text: str, pos: int) -> bool:
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        if not strip or pos <= 0 or pos >= len(text) or text[pos] < "\x80":
            return True
        return text[pos] not in table("D_MAYBE")

    def normalize_str(self, text: str) -> str:
        """The normalized text, by one ``str.translate`` over a table of each character's
        normalization (every stage works character by character; the one exception, NFD's
        canonical reordering, is left to :meth:`normalize_str_staged` for the texts it can touch).

        >>> BertNormalizer().normalize_str("Ça\\u0301\\x00 Σ\\u3000北")
        'ca σ  北 '
        """
        config = (self.clean_text, self.handle_chinese_chars, self.strip_accents, self.lowercase)
        chars = self._chars
        if chars is None or chars[0] != config:
            chars = self._chars = (config, _table_for(config))
        try:
            return text.translate(chars[1])
        except _Reorders:
            return self.normalize_str_staged(text)

    def _char(self, c: str) -> str:
        """One character's normalization; raises :class:`_Reorders` when canonical reordering
        may move a character of its NFD that stays (a mark that is not Mn: its place depends on
        its neighbours)."""
        cleaned = self.clean_text and (c in _REMOVED or c in WHITESPACE)
        if self._strips() and not cleaned and any(ccc(d) and d not in _MN for d in _nf_str("NFD", c)):
            raise _Reorders(c)
        return self.normalize_str_staged(c)

    def _strips(self) -> bool:
        return self.lowercase if self.strip_accents is None else self.strip_accents

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_chars", None)  # rebuilt on demand
        return state

    def normalize_str_staged(self, text: str) -> str:
        """The stages one after the other (the oracle of :meth:`normalize_str`).

        >>> BertNormalizer().normalize_str_staged("Héllo\\t中国")
        'hello  中  国 '
        """
        if self.clean_text:
            if not text.isascii() or _ASCII_CONTROL.search(text):
                text = remove_str(text, table("BERT_REMOVED"))
            text = text.translate(self._SPACES)
        if self.handle_chinese_chars and not text.isascii():
            text = self._CJK.sub(lambda m: " " + m.group() + " ", text)
        if self._strips() and not text.isascii():
            text = remove_str(_nf_str("NFD", text), table("MN"))
        if self.lowercase:
            text = lowercase_str(text)
        return text


_ASCII_CONTROL = regex.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_REMOVED = table("BERT_REMOVED")
_MN = table("MN")


#: each configuration's table of characters, shared by its normalizers (a batch's fresh
#: tokenizers, the workers' copies): what a character becomes depends on the configuration alone
_TABLES: dict[tuple, CharMap] = {}


def _table_for(config: tuple) -> CharMap:
    """The shared :class:`CharMap` of a configuration ``(clean_text, handle_chinese_chars,
    strip_accents, lowercase)``.

    >>> _table_for((True, True, None, True)) is _table_for((True, True, None, True))
    True
    """
    try:
        found = _TABLES.get(config)
    except TypeError:  # a setting that is not hashable: a table of its own
        return CharMap(BertNormalizer(*config)._char)
    if found is None:
        found = _TABLES[config] = CharMap(BertNormalizer(*config)._char)
    return found


class _Reorders(Exception):
    """A character whose normalization depends on its neighbours (see ``BertNormalizer._char``)."""
