r"""Hugging Face's pre-tokenizers, each matching ``tokenizers`` on the chunks and their alignment.

Every class satisfies :class:`~.pipeline.PreTokenizer`: ``pre_tokenize`` cuts each
:class:`~.normalized.NormalizedText` into chunks (empty chunks dropped), each still aligned to the
original text; ByteLevel and Metaspace also rewrite them (a ByteLevel chunk's stand-in characters
each align to the original character of their byte). :func:`from_json` reads the
``"pre_tokenizer"`` object of a ``tokenizer.json``.

>>> bl = ByteLevel(add_prefix_space=False)
>>> [(c.text, c.original_start, c.original_end) for c in bl.pre_tokenize([NormalizedText.identity("Hi é!")])]
[('Hi', 0, 2), ('ĠÃ©', 2, 4), ('!', 4, 5)]
>>> ms = Metaspace()
>>> [c.text for c in ms.pre_tokenize([NormalizedText.identity("Hey friend")])]
['▁Hey', '▁friend']
"""

from __future__ import annotations

import functools
from collections.abc import Sequence as Seq
from typing import Any

import regex

from ..text.byte_alphabet import BYTE_TO_CHAR
from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..text.unicode import WHITESPACE, RangeSet, char_class, parse_ranges, table
from ..text.normalized import BEHAVIORS, NormalizedText, merge_matches, matches_from_spans
from ..normalizers.byte_level import BYTE_STANDINS, to_byte_level
from ..patterns.onig import OnigPattern, compile_onig, literal_pattern

__all__ = [
    "BertPreTokenizer",
    "ByteLevel",
    "CharDelimiterSplit",
    "Digits",
    "FixedLength",
    "Metaspace",
    "Punctuation",
    "Sequence",
    "Split",
    "UnicodeScripts",
    "Whitespace",
    "WhitespaceSplit",
    "from_json",
    "GPT2_PATTERN",
]

#: The pattern of HF's ``ByteLevel`` pre-tokenizer (``use_regex``), compiled with Oniguruma.
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

_ASCII_STANDINS = str.maketrans({b: BYTE_TO_CHAR[b] for b in range(128)})


def slices(text: NormalizedText, spans: Seq[tuple[int, int]]) -> list[NormalizedText]:
    """``text.slice`` of each non-empty span (sorted)."""
    return text.slices(spans)


def split_text(text: NormalizedText, finder: Any, behavior: str, invert: bool = False) -> list[NormalizedText]:
    """HF's ``NormalizedString::split`` with a pattern whose matches ``finder(text)`` returns as
    ``(start, end)`` spans (empty matches included)."""
    t = text.text
    if not t:
        return []
    if not invert and behavior == "isolated" and isinstance(getattr(finder, "__self__", None), OnigPattern):
        pieces = finder.__self__.isolated(t)
        if pieces is not None:
            if text.linear:
                o = text.original_start
                out = []
                for piece in pieces:
                    e = o + len(piece)
                    out.append(NormalizedText(piece, o, e))
                    o = e
                return out
            spans_from = []
            s = 0
            for piece in pieces:
                spans_from.append((s, s + len(piece)))
                s += len(piece)
            return slices(text, spans_from)
    spans = finder(t)
    if not invert and behavior == "isolated":
        pieces = []
        prev = 0
        for s, e in spans:
            if prev != s:
                pieces.append((prev, s))
            pieces.append((s, e))
            prev = e
        if prev != len(t):
            pieces.append((prev, len(t)))
        return slices(text, pieces)
    matches = matches_from_spans(spans, len(t))
    if invert:
        matches = [(s, e, not m) for s, e, m in matches]
    return slices(text, merge_matches(matches, behavior))


def isolated_strs(pattern: OnigPattern, text: str) -> list[str]:
    """The pieces of ``text`` (non-empty) under HF's ``isolated`` behavior, as strings: the
    matches and the text between them.

    >>> isolated_strs(compile_onig(r"\\d+"), "ab12c3")
    ['ab', '12', 'c', '3']
    """
    pieces = pattern.isolated(text)
    if pieces is not None:
        return pieces
    out = []
    prev = 0
    for s, e in pattern.spans(text):
        if prev != s:
            out.append(text[prev:s])
        if s != e:
            out.append(text[s:e])
        prev = e
    if prev != len(text):
        out.append(text[prev:])
    return out


def byte_level_str(text: str) -> str:
    """``text`` in GPT-2's byte-level stand-ins (each UTF-8 byte one character).

    >>> byte_level_str(" é")
    'ĠÃ©'
    """
    if text.isascii():
        return text.translate(_ASCII_STANDINS)
    return text.encode("utf-8", "surrogatepass").decode("latin-1").translate(BYTE_STANDINS)


class _Base:
    #: see :attr:`.pipeline.PreTokenizer.local`
    local = True
    #: False for a stage that rewrites each split but never cuts it (ByteLevel without its regex,
    #: Metaspace without ``split``): behind a local stage that cuts, such a stage stays local
    splits = True
    #: True when the stage looks at where a split starts in the original text (Metaspace's
    #: ``first``), so that only text at offset 0 of the original is treated as its start
    needs_start = False

    def pre_tokenize(self, splits: list[NormalizedText]) -> list[NormalizedText]:
        out: list[NormalizedText] = []
        for split in splits:
            if split.text:
                out.extend(self._one(split))
        return out

    def _one(self, split: NormalizedText) -> list[NormalizedText]:  # pragma: no cover - abstract
        raise NotImplementedError

    def split_str(self, text: str, first: bool = True) -> list[str]:
        """The chunks of ``text`` as strings (the ids-only fast path: no alignment is kept).
        ``first`` says whether ``text`` starts at offset 0 of the original text; it matters only
        to stages with :attr:`needs_start`, and is exact for them only when ``text`` is the
        original text itself (no normalizer rewrote it).

        The chunks are always those of :meth:`pre_tokenize` on the same text."""
        return [c.text for c in self.pre_tokenize([NormalizedText.identity(text, 0 if first else 1)])]

    def pre_tokenize_str(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """The chunks of ``text`` with their original spans, as HF's ``pre_tokenize_str``."""
        return [(c.text, (c.original_start, c.original_end)) for c in self.pre_tokenize([NormalizedText.identity(text)])]

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


def _pattern_is_local(pattern: str) -> bool:
    """A regex whose matches from a chunk boundary on do not depend on the text before it: no
    look-behind, word boundary, ``\\G``/``\\A`` or ``^`` outside a character class (a ``^``
    inside one, as DeepSeek's punctuation class has, anchors nothing).

    >>> _pattern_is_local(r"[!^_]+|\\s+"), _pattern_is_local(r"^a"), _pattern_is_local(r"[^a]|(?<=x)y")
    (True, False, False)
    """
    if any(tok in pattern for tok in ("(?<", "\\b", "\\B", "\\G", "\\A")):
        return False
    in_class = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":  # a ] right after [ or [^ is a literal
                i += 1
            continue
        elif c == "^":
            return False
        i += 1
    return True


# ----- ByteLevel ------------------------------------------------------------------------------------


class ByteLevel(_Base):
    """GPT-2's pre-tokenizer: a space before each split that lacks one (``add_prefix_space``),
    GPT-2's pattern (``use_regex``), then every chunk in byte-level stand-ins.

    ``trim_offsets`` only changes the offsets HF's ByteLevel post-processor reports; it is kept
    here for that stage and changes nothing in the chunks.
    """

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex
        self._pattern = compile_onig(GPT2_PATTERN, "pre-tokenizer", "ByteLevel") if use_regex else None
        self.local = use_regex and not add_prefix_space
        self.splits = use_regex

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        if self.add_prefix_space and not split.text.startswith(" "):
            split = split.prepend(" ")
        if self._pattern is None:
            chunks = [split]
        else:
            chunks = split_text(split, self._pattern.spans, "isolated")
        out = []
        for c in chunks:
            t = c.text
            if t.isascii():
                out.append(c.with_text(t.translate(_ASCII_STANDINS)))
            else:
                out.append(to_byte_level(c))
        return out

    def split_str(self, text: str, first: bool = True) -> list[str]:
        if not text:
            return []
        if self.add_prefix_space and not text.startswith(" "):
            text = " " + text
        pieces = [text] if self._pattern is None else isolated_strs(self._pattern, text)
        return [byte_level_str(p) for p in pieces]


# ----- Split ------------------------------------------------------------------------------------------


class Split(_Base):
    """Split on a pattern (a plain string, or an Oniguruma regex with ``regex=True``) with one of
    HF's behaviors for the delimiters; ``invert`` splits on what does not match."""

    def __init__(self, pattern: str, behavior: str = "isolated", invert: bool = False, regex: bool = False) -> None:
        if behavior not in BEHAVIORS:
            raise TokenizerFileError(f"pre-tokenizer 'Split': unknown behavior {behavior!r}")
        self.pattern = pattern
        self.behavior = behavior
        self.invert = invert
        self.regex = regex
        self._onig: OnigPattern = compile_onig(pattern if regex else literal_pattern(pattern), "pre-tokenizer", "Split")
        self.local = (not regex and bool(pattern)) or (regex and _pattern_is_local(pattern))

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return split_text(split, self._onig.spans, self.behavior, self.invert)

    def split_str(self, text: str, first: bool = True) -> list[str]:
        if not text:
            return []
        if self.behavior == "isolated" and not self.invert:
            return isolated_strs(self._onig, text)
        matches = matches_from_spans(self._onig.spans(text), len(text))
        if self.invert:
            matches = [(s, e, not m) for s, e, m in matches]
        return [text[s:e] for s, e in merge_matches(matches, self.behavior) if s < e]


# ----- character-class splits ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def _char_split(split: NormalizedText, chars: RangeSet, behavior: str) -> list[NormalizedText]:
    """HF's split on a character predicate (each matching character its own match)."""
    t = split.text
    cls = chars.class_for(t)
    if cls is None:
        return slices(split, [(0, len(t))])
    neg = "[^" + cls[1:]
    if behavior == "removed":
        return slices(split, [m.span() for m in _compiled(neg + "+").finditer(t)])
    if behavior == "isolated":
        return slices(split, [m.span() for m in _compiled(neg + "+|" + cls).finditer(t)])
    if behavior == "contiguous":
        return slices(split, [m.span() for m in _compiled(neg + "+|" + cls + "+").finditer(t)])
    spans = [m.span() for m in _compiled(cls).finditer(t)]
    return slices(split, merge_matches(matches_from_spans(spans, len(t)), behavior))


_WS = RangeSet([(ord(c), ord(c)) for c in WHITESPACE])
_WS_CLASS = char_class(_WS.ranges)


class WhitespaceSplit(_Base):
    """Split on whitespace (Rust's ``char::is_whitespace``), which is removed."""

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return _char_split(split, _WS, "removed")

    def split_str(self, text: str, first: bool = True) -> list[str]:
        return _compiled("[^" + _WS_CLASS[1:] + "+").findall(text)


class Whitespace(_Base):
    r"""The chunks ``\w+|[^\w\s]+`` of the Rust ``regex`` crate (its Unicode ``\w``)."""

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        t = split.text
        word = table("RX_WORD").class_for(t)
        if word is None:
            pattern = _compiled("[^" + _WS_CLASS[1:] + "+")
        else:
            pattern = _compiled(f"{word}+|[^{word[1:-1]}{_WS_CLASS[1:-1]}]+")
        return slices(split, [m.span() for m in pattern.finditer(t)])


class Punctuation(_Base):
    """Split on punctuation (ASCII punctuation or HF's Unicode punctuation) with a behavior."""

    def __init__(self, behavior: str = "isolated") -> None:
        if behavior not in BEHAVIORS:
            raise TokenizerFileError(f"pre-tokenizer 'Punctuation': unknown behavior {behavior!r}")
        self.behavior = behavior

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return _char_split(split, table("PUNCT"), self.behavior)


class BertPreTokenizer(_Base):
    """BERT's: split on whitespace (removed), then on punctuation (isolated): runs of other
    characters, and each punctuation character alone (one regex over the whole split, built from
    the punctuation ranges the split holds)."""

    def _finder(self, text: str) -> regex.Pattern[str]:
        present = table("PUNCT").present(text)
        if not present:
            return _compiled("[^" + _WS_CLASS[1:] + "+")
        punct = char_class(present)[1:-1]
        return _compiled(f"[^{_WS_CLASS[1:-1]}{punct}]+|[{punct}]")

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return slices(split, [m.span() for m in self._finder(split.text).finditer(split.text)])

    def split_str(self, text: str, first: bool = True) -> list[str]:
        return self._finder(text).findall(text)


class Digits(_Base):
    """Split on numeric characters (Rust's ``char::is_numeric``): each alone
    (``individual_digits``) or in runs."""

    def __init__(self, individual_digits: bool = False) -> None:
        self.individual_digits = individual_digits

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return _char_split(split, table("NUMERIC"), "isolated" if self.individual_digits else "contiguous")


class CharDelimiterSplit(_Base):
    """Split on one character, which is removed."""

    def __init__(self, delimiter: str) -> None:
        if len(delimiter) != 1:
            raise TokenizerFileError("pre-tokenizer 'CharDelimiterSplit': the delimiter must be one character")
        self.delimiter = delimiter

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        return _char_split(split, RangeSet([(ord(self.delimiter), ord(self.delimiter))]), "removed")


class Metaspace(_Base):
    """SentencePiece's spaces: every ``" "`` becomes ``replacement``, which is prepended to each
    split (``always``), to the split at the start of the text (``first``) or never; then, with
    ``split``, each chunk starts at a ``replacement`` (HF's merged-with-next)."""

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        if len(replacement) != 1:
            raise TokenizerFileError("pre-tokenizer 'Metaspace': the replacement must be one character")
        if prepend_scheme not in ("always", "first", "never"):
            raise TokenizerFileError(f"pre-tokenizer 'Metaspace': unknown prepend_scheme {prepend_scheme!r}")
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split
        self._rep = RangeSet([(ord(replacement), ord(replacement))])
        self.local = split and prepend_scheme == "never"
        self.splits = split
        self.needs_start = prepend_scheme == "first"

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        rep = self.replacement
        t = split.text
        if " " in t:
            split = split.with_text(t.replace(" ", rep))
        if not split.text.startswith(rep):
            if self.prepend_scheme == "always" or (self.prepend_scheme == "first" and split.original_start == 0):
                split = split.prepend(rep)
        if not self.split:
            return [split]
        if rep not in split.text[1:]:
            return split.slices([(0, len(split.text))])  # one chunk (the common case)
        return _char_split(split, self._rep, "merged_with_next")

    def split_str(self, text: str, first: bool = True) -> list[str]:
        if not text:
            return []
        rep = self.replacement
        if " " in text:
            text = text.replace(" ", rep)
        if not text.startswith(rep):
            if self.prepend_scheme == "always" or (self.prepend_scheme == "first" and first):
                text = rep + text
        if not self.split or rep not in text[1:]:
            return [text]
        head, *rest = text.split(rep)
        out = [head] if head else []
        out.extend([rep + piece for piece in rest])
        return out


class FixedLength(_Base):
    """Chunks of ``length`` characters."""

    def __init__(self, length: int = 5) -> None:
        if length < 0:
            raise TokenizerFileError("pre-tokenizer 'FixedLength': the length must not be negative")
        self.length = length
        self.local = False

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        n = len(split.text)
        if self.length == 0:
            raise UnsupportedComponentError("pre-tokenizer", "FixedLength", "length 0")
        return slices(split, [(s, min(s + self.length, n)) for s in range(0, n, self.length)])


class UnicodeScripts(_Base):
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


class Sequence(_Base):
    """Pre-tokenizers applied in order."""

    def __init__(self, pretokenizers: Seq[Any]) -> None:
        self.pretokenizers = list(pretokenizers)
        local, cut = True, False
        for p in self.pretokenizers:
            if p.local:
                cut = cut or p.splits
            elif not (cut and not p.splits):
                local = False
        self.local = local and cut
        self.needs_start = any(p.needs_start for p in self.pretokenizers)

    def pre_tokenize(self, splits: list[NormalizedText]) -> list[NormalizedText]:
        for p in self.pretokenizers:
            splits = p.pre_tokenize(splits)
        return splits

    def split_str(self, text: str, first: bool = True) -> list[str]:
        if self.needs_start:  # where each split starts matters: keep the alignment
            return _Base.split_str(self, text, first)
        pieces = [text] if text else []
        for p in self.pretokenizers:
            out: list[str] = []
            for piece in pieces:
                out.extend(p.split_str(piece, False))
            pieces = [piece for piece in out if piece]
        return pieces


# ----- tokenizer.json -------------------------------------------------------------------------------------


def _field(obj: dict, name: str, kind: type, default: Any = ..., *, type_name: str) -> Any:
    if name not in obj or (obj[name] is None and default is not ...):
        if default is ...:
            raise TokenizerFileError(f"pre-tokenizer {type_name!r} has no {name!r}")
        return default
    value = obj[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TokenizerFileError(f"pre-tokenizer {type_name!r}: {name!r} is not a {kind.__name__}")
    return value


_BEHAVIOR_NAMES = {
    "Removed": "removed", "Isolated": "isolated", "MergedWithPrevious": "merged_with_previous",
    "MergedWithNext": "merged_with_next", "Contiguous": "contiguous",
}


def _behavior(obj: dict, type_name: str, default: str | None = None) -> str:
    value = obj.get("behavior", default)
    if value is None:
        raise TokenizerFileError(f"pre-tokenizer {type_name!r} has no 'behavior'")
    if value not in _BEHAVIOR_NAMES:
        raise TokenizerFileError(f"pre-tokenizer {type_name!r}: unknown behavior {value!r}")
    return _BEHAVIOR_NAMES[value]


def _build(obj: Any) -> Any:
    if not isinstance(obj, dict):
        raise TokenizerFileError("a pre-tokenizer must be a JSON object")
    t = obj.get("type")
    if t is None:
        raise UnsupportedComponentError("pre-tokenizer", "(no type)", "an untagged legacy pre-tokenizer")
    if t == "ByteLevel":
        return ByteLevel(
            _field(obj, "add_prefix_space", bool, type_name=t),
            _field(obj, "trim_offsets", bool, type_name=t),
            _field(obj, "use_regex", bool, True, type_name=t),
        )
    if t == "Split":
        pattern = obj.get("pattern")
        if not isinstance(pattern, dict) or len(pattern) != 1:
            raise TokenizerFileError("pre-tokenizer 'Split': 'pattern' must be {'String': ...} or {'Regex': ...}")
        (kind, value), = pattern.items()
        if kind not in ("String", "Regex") or not isinstance(value, str):
            raise TokenizerFileError("pre-tokenizer 'Split': 'pattern' must be {'String': ...} or {'Regex': ...}")
        return Split(value, _behavior(obj, t), _field(obj, "invert", bool, type_name=t), regex=kind == "Regex")
    if t == "Metaspace":
        replacement = _field(obj, "replacement", str, type_name=t)
        scheme = obj.get("prepend_scheme", "always")
        if scheme not in ("always", "first", "never"):
            raise TokenizerFileError(f"pre-tokenizer 'Metaspace': unknown prepend_scheme {scheme!r}")
        if obj.get("add_prefix_space") is False:
            # as HF: the legacy field may only say what prepend_scheme says (default "always")
            if scheme != "never":
                raise TokenizerFileError("pre-tokenizer 'Metaspace': add_prefix_space does not match prepend_scheme")
        split = obj.get("split")
        return Metaspace(replacement, scheme, True if split is None else bool(split))
    if t == "Whitespace":
        return Whitespace()
    if t == "WhitespaceSplit":
        return WhitespaceSplit()
    if t == "BertPreTokenizer":
        return BertPreTokenizer()
    if t == "Punctuation":
        return Punctuation(_behavior(obj, t, "Isolated"))
    if t == "Digits":
        return Digits(_field(obj, "individual_digits", bool, type_name=t))
    if t == "CharDelimiterSplit":
        return CharDelimiterSplit(_field(obj, "delimiter", str, type_name=t))
    if t == "UnicodeScripts":
        return UnicodeScripts()
    if t == "FixedLength":
        return FixedLength(_field(obj, "length", int, 5, type_name=t))
    if t == "Sequence":
        items = _field(obj, "pretokenizers", list, type_name=t)
        return Sequence([_build(item) for item in items])
    raise UnsupportedComponentError("pre-tokenizer", str(t))


def from_json(obj: dict | None) -> Any:
    """The pre-tokenizer of a ``tokenizer.json``'s ``"pre_tokenizer"`` object (``None``: none).

    >>> from_json({"type": "Digits", "individual_digits": True})
    Digits(individual_digits=True)
    """
    if obj is None:
        return None
    return _build(obj)
