"""Hugging Face's normalizers, each matching ``tokenizers`` on the text and on the alignment.

Every class satisfies :class:`~.pipeline.Normalizer`: ``normalize`` rewrites a
:class:`~.normalized.NormalizedText` (keeping each character aligned to the original text as HF
does), ``normalize_str`` gives the characters only. :func:`from_json` reads the ``"normalizer"``
object of a ``tokenizer.json``.

>>> n = from_json({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]})
>>> n.normalize_str("Ｈｅｌｌｏ")
'hello'
>>> t = n.normalize(NormalizedText.identity("ﬁ!"))
>>> t.text, t.alignments()
('fi!', [(0, 1), (0, 1), (1, 2)])
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence as Seq
from typing import Any

import regex

from ..text.byte_alphabet import BYTE_TO_CHAR
from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..text.unicode import (
    WHITESPACE,
    RangeSet,
    table,
    lowercase_parts,
    lowercase_str,
    normalize_changes,
    unstable_runs,
)
from ..text.unicode import normalize_str as _nf_str
from ..text.normalized import NormalizedText
from ..patterns.guard import check_file_string
from ..patterns.onig import compile_onig, literal_pattern

__all__ = [
    "BertNormalizer",
    "ByteLevel",
    "Lowercase",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Nmt",
    "Precompiled",
    "Prepend",
    "Replace",
    "Sequence",
    "Strip",
    "StripAccents",
    "from_json",
]


class _Base:
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


# ----- Unicode normalization forms -----------------------------------------------------------------


class _Form(_Base):
    form = ""

    def safe_start(self, text: str, pos: int) -> bool:
        # a character outside the form's "may change" table never joins the one before it
        return pos <= 0 or pos >= len(text) or text[pos] < "\x80" or text[pos] not in table(_MAYBE_TABLE[self.form])

    def normalize(self, text: NormalizedText) -> NormalizedText:
        runs = unstable_runs(self.form, text.text)
        if not runs:
            return text
        return apply_changes(text, [(s, e, normalize_changes(self.form, text.text[s:e])) for s, e in runs])

    def normalize_str(self, text: str) -> str:
        return _nf_str(self.form, text)


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


_MAYBE_TABLE = {"NFD": "D_MAYBE", "NFKD": "D_MAYBE", "NFC": "C_MAYBE", "NFKC": "KC_MAYBE"}


class NFD(_Form):
    """Canonical decomposition (HF's Unicode 9.0 tables)."""

    form = "NFD"


class NFKD(_Form):
    """Compatibility decomposition (HF's Unicode 9.0 tables)."""

    form = "NFKD"


class NFC(_Form):
    """Canonical composition (HF's Unicode 9.0 tables)."""

    form = "NFC"


class NFKC(_Form):
    """Compatibility composition (HF's Unicode 9.0 tables)."""

    form = "NFKC"


# ----- simple normalizers --------------------------------------------------------------------------


class Lowercase(_Base):
    """Rust's ``char::to_lowercase`` per character (no final sigma; ``İ`` becomes two characters).

    >>> Lowercase().normalize_str("ΟΔΟΣ")
    'οδοσ'
    """

    def normalize(self, text: NormalizedText) -> NormalizedText:
        low, dotted = lowercase_parts(text.text)
        text = text.with_text(low)
        if dotted:
            text = text.edit([(i, i + 1, "i\u0307", [i, i]) for i in dotted])
        return text

    def normalize_str(self, text: str) -> str:
        return lowercase_str(text)


class Strip(_Base):
    """Whitespace (Rust's ``char::is_whitespace``) removed from the left and/or right."""

    local = False

    def __init__(self, left: bool = True, right: bool = True) -> None:
        self.left = left
        self.right = right

    def normalize(self, text: NormalizedText) -> NormalizedText:
        return text.strip(self.left, self.right)

    def normalize_str(self, text: str) -> str:
        ws = "".join(WHITESPACE)
        if self.left:
            text = text.lstrip(ws)
        if self.right:
            text = text.rstrip(ws)
        return text


def _remove_class(text: NormalizedText, chars: RangeSet | regex.Pattern[str]) -> NormalizedText:
    """``text`` without the characters of ``chars`` (HF's ``filter``)."""
    pattern = chars.finder(text.text, "+") if isinstance(chars, RangeSet) else chars
    if pattern is None:
        return text
    spans = [m.span() for m in pattern.finditer(text.text)]
    return text.remove_spans(spans) if spans else text


def _remove_str(text: str, chars: RangeSet) -> str:
    pattern = chars.finder(text, "+")
    return pattern.sub("", text) if pattern is not None else text


class StripAccents(_Base):
    """Combining marks removed (HF's ``is_combining_mark``, Unicode 9.0); usually after NFD.

    >>> StripAccents().normalize_str("e\\u0301a")
    'ea'
    """

    def normalize(self, text: NormalizedText) -> NormalizedText:
        if text.text.isascii():
            return text
        return _remove_class(text, table("COMBINING"))

    def normalize_str(self, text: str) -> str:
        if text.isascii():
            return text
        return _remove_str(text, table("COMBINING"))


class Prepend(_Base):
    """``prepend`` before a non-empty text, aligned with its first character."""

    local = False

    def __init__(self, prepend: str) -> None:
        self.prepend = prepend

    def normalize(self, text: NormalizedText) -> NormalizedText:
        return text.prepend(self.prepend) if text.text else text

    def normalize_str(self, text: str) -> str:
        return self.prepend + text if text else text


class Replace(_Base):
    """Every match of ``pattern`` (a plain string, or an Oniguruma regex with ``regex=True``)
    replaced by ``content``; each new character aligns to the match's last character.

    >>> Replace(" ", "▁").normalize_str("a b")
    'a▁b'
    """

    def __init__(self, pattern: str, content: str, regex: bool = False) -> None:
        self.pattern = pattern
        self.content = content
        self.regex = regex
        source = pattern if regex else literal_pattern(pattern)
        self._onig = compile_onig(source, "normalizer", "Replace")
        # a plain one-character pattern replaced by one character is a 1:1 map
        self._one_to_one = not regex and len(pattern) == 1 and len(content) == 1
        self._plain = not regex and bool(pattern)
        self.local = self._plain

    def normalize(self, text: NormalizedText) -> NormalizedText:
        t = text.text
        if self._plain and self.pattern not in t:
            return text
        if self._one_to_one:
            return text.with_text(t.replace(self.pattern, self.content))
        return text.replace_matches(self._onig.find_matches(t), self.content)

    def normalize_str(self, text: str) -> str:
        if self._plain:
            return text.replace(self.pattern, self.content)
        return self.normalize(NormalizedText.identity(text)).text

    def safe_start(self, text: str, pos: int) -> bool:
        n = len(self.pattern)
        if n <= 1 or pos <= 0:
            return True
        # no match of the pattern runs across pos (matches are found left to right from the start)
        lo = max(0, pos - n + 1)
        found = text.find(self.pattern, lo, pos + n - 1)
        return found < 0 or found >= pos


class Nmt(_Base):
    """SentencePiece's NMT cleanup: ASCII controls removed, other spaces made ``" "``."""

    _REMOVE = regex.compile("[\x01-\x08\x0b\x0e-\x1f\x7f\x8f\x9f]+")
    _SPACES = str.maketrans({c: " " for c in "\t\n\x0c\r\u1680\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u2581\ufeff\ufffd"})

    def normalize(self, text: NormalizedText) -> NormalizedText:
        text = _remove_class(text, self._REMOVE)
        return text.with_text(text.text.translate(self._SPACES))

    def normalize_str(self, text: str) -> str:
        return self._REMOVE.sub("", text).translate(self._SPACES)


class ByteLevel(_Base):
    """Every character replaced by the byte-level stand-ins of its UTF-8 bytes (all aligned to
    it).

    >>> t = ByteLevel().normalize(NormalizedText.identity("é"))
    >>> t.text, t.alignments()
    ('Ã©', [(0, 1), (0, 1)])
    """

    def normalize(self, text: NormalizedText) -> NormalizedText:
        t = text.text
        if not t:
            return text
        if t.isascii():
            return text.with_text(t.translate(_ASCII_STANDINS))
        return to_byte_level(text)

    def normalize_str(self, text: str) -> str:
        return "".join([BYTE_TO_CHAR[b] for b in text.encode("utf-8", "surrogatepass")])


_NON_ASCII = regex.compile(r"[^\x00-\x7f]+")
_ASCII_STANDINS = str.maketrans({b: BYTE_TO_CHAR[b] for b in range(128)})


#: ``str.translate`` table from a Latin-1 character (one byte) to its byte-level stand-in
_BYTE_STANDINS = str.maketrans({b: BYTE_TO_CHAR[b] for b in range(256)})


def to_byte_level(text: NormalizedText) -> NormalizedText:
    """Each character replaced by the stand-ins of its UTF-8 bytes, all aligned to it (HF's
    ByteLevel transform: the first byte replaces the character, the others are inserted).

    >>> t = to_byte_level(NormalizedText.identity("aé", 3))
    >>> t.text, t.alignments()
    ('aÃ©', [(3, 4), (4, 5), (4, 5)])
    """
    t = text.text
    standins = t.encode("utf-8", "surrogatepass").decode("latin-1").translate(_BYTE_STANDINS)
    if len(standins) == len(t):
        return text.with_text(standins)
    if text._runs is None:
        # build the runs directly: a block of its bytes' stand-ins per character
        o = text.original_start
        sizes = [1 if c < "\x80" else 2 if c < "\u0800" else 3 if c < "\U00010000" else 4 for c in t]
        starts = list(itertools.accumulate(sizes, initial=0))
        starts.pop()
        runs = [(o + k, o + k + 1, False) for k in range(len(t))]
        return NormalizedText(standins, text.original_start, text.original_end, starts, runs)
    edits = []
    for m in _NON_ASCII.finditer(t):
        s, e = m.span()
        sources: list[int] = []
        for k in range(s, e):
            sources.extend([k] * len(t[k].encode("utf-8", "surrogatepass")))
        edits.append((s, e, "\0" * len(sources), sources))
    return text.edit(edits).with_text(standins)


class BertNormalizer(_Base):
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
                text = _remove_class(text, table("BERT_REMOVED"))
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
            text = _remove_class(text, table("MN"))
        if self.lowercase:
            text = Lowercase().normalize(text)
        return text

    def safe_start(self, text: str, pos: int) -> bool:
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        if not strip or pos <= 0 or pos >= len(text) or text[pos] < "\x80":
            return True
        return text[pos] not in table("D_MAYBE")

    def normalize_str(self, text: str) -> str:
        if self.clean_text:
            if not text.isascii() or _ASCII_CONTROL.search(text):
                text = _remove_str(text, table("BERT_REMOVED"))
            text = text.translate(self._SPACES)
        if self.handle_chinese_chars and not text.isascii():
            text = self._CJK.sub(lambda m: " " + m.group() + " ", text)
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        if strip and not text.isascii():
            text = _remove_str(_nf_str("NFD", text), table("MN"))
        if self.lowercase:
            text = lowercase_str(text)
        return text


_ASCII_CONTROL = regex.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class Precompiled(_Base):
    """SentencePiece's precompiled character map (see :mod:`.precompiled`)."""

    def __init__(self, charsmap: bytes) -> None:
        from .precompiled import CharsMap

        self._map = CharsMap(charsmap)

    def normalize(self, text: NormalizedText) -> NormalizedText:
        return self._map.normalize(text)

    def normalize_str(self, text: str) -> str:
        return self._map.normalize_str(text)

    def safe_start(self, text: str, pos: int) -> bool:
        if pos <= 0 or pos >= len(text):
            return True
        from .precompiled import graphemes

        # a charsmap rewrites whole graphemes: start only where one starts (and not between
        # the \r and \n of a line break)
        return len(graphemes(text[pos - 1 : pos + 1])) == 2 and text[pos - 1 : pos + 1] != "\r\n"


class Sequence(_Base):
    """Normalizers applied in order."""

    def __init__(self, normalizers: Seq[Any]) -> None:
        self.normalizers = list(normalizers)
        self.local = all(n.local for n in self.normalizers)

    def normalize(self, text: NormalizedText) -> NormalizedText:
        for n in self.normalizers:
            text = n.normalize(text)
        return text

    def normalize_str(self, text: str) -> str:
        for n in self.normalizers:
            text = n.normalize_str(text)
        return text

    def safe_start(self, text: str, pos: int) -> bool:
        # each stage on the text as the stage before it left it: checked on the original text,
        # which is exact for the first stage and, the stages being local, enough for the rest
        # when none of them moves characters across pos
        return all(getattr(n, "safe_start", None) is None or n.safe_start(text, pos) for n in self.normalizers)


# ----- tokenizer.json ------------------------------------------------------------------------------


def _field(obj: dict, name: str, kind: type | tuple[type, ...], default: Any = ..., *, type_name: str) -> Any:
    if name not in obj:
        if default is ...:
            raise TokenizerFileError(f"normalizer {type_name!r} has no {name!r}")
        return default
    value = obj[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TokenizerFileError(f"normalizer {type_name!r}: {name!r} is not a {getattr(kind, '__name__', kind)}")
    return value


def _pattern(obj: dict, type_name: str) -> tuple[str, bool]:
    pattern = obj.get("pattern")
    if not isinstance(pattern, dict) or len(pattern) != 1:
        raise TokenizerFileError(f"{type_name}: 'pattern' must be {{'String': ...}} or {{'Regex': ...}}")
    (kind, value), = pattern.items()
    if kind not in ("String", "Regex") or not isinstance(value, str):
        raise TokenizerFileError(f"{type_name}: 'pattern' must be {{'String': ...}} or {{'Regex': ...}}")
    return value, kind == "Regex"


def _build(obj: Any) -> Any:
    if not isinstance(obj, dict):
        raise TokenizerFileError("a normalizer must be a JSON object")
    t = obj.get("type")
    if t is None:
        raise UnsupportedComponentError("normalizer", "(no type)", "an untagged legacy normalizer")
    if t in ("NFC", "NFD", "NFKC", "NFKD"):
        return {"NFC": NFC, "NFD": NFD, "NFKC": NFKC, "NFKD": NFKD}[t]()
    if t == "Lowercase":
        return Lowercase()
    if t == "Strip":
        return Strip(
            _field(obj, "strip_left", bool, type_name=t), _field(obj, "strip_right", bool, type_name=t)
        )
    if t == "StripAccents":
        return StripAccents()
    if t == "Prepend":
        return Prepend(check_file_string(_field(obj, "prepend", str, type_name=t), "normalizer Prepend 'prepend'"))
    if t == "Replace":
        pattern, is_regex = _pattern(obj, t)
        content = check_file_string(_field(obj, "content", str, type_name=t), "normalizer Replace 'content'")
        return Replace(pattern, content, regex=is_regex)
    if t in ("BertNormalizer", "Bert"):
        strip = obj.get("strip_accents")
        if strip is not None and not isinstance(strip, bool):
            raise TokenizerFileError("normalizer 'BertNormalizer': 'strip_accents' is not a bool or null")
        return BertNormalizer(
            _field(obj, "clean_text", bool, True, type_name=t),
            _field(obj, "handle_chinese_chars", bool, True, type_name=t),
            strip,
            _field(obj, "lowercase", bool, True, type_name=t),
        )
    if t == "Precompiled":
        import base64
        import binascii

        blob = _field(obj, "precompiled_charsmap", str, type_name=t)
        try:
            data = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise TokenizerFileError("normalizer 'Precompiled': 'precompiled_charsmap' is not base64") from None
        return Precompiled(data)
    if t == "Nmt":
        return Nmt()
    if t == "ByteLevel":
        return ByteLevel()
    if t == "Sequence":
        items = _field(obj, "normalizers", list, type_name=t)
        return Sequence([_build(item) for item in items])
    raise UnsupportedComponentError("normalizer", str(t))


def from_json(obj: dict | None) -> Any:
    """The normalizer of a ``tokenizer.json``'s ``"normalizer"`` object (``None`` for none).

    >>> from_json({"type": "Lowercase"})
    Lowercase()
    >>> from_json(None) is None
    True
    """
    if obj is None:
        return None
    return _build(obj)
