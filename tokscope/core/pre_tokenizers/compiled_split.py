"""The split of the tiktoken-family patterns at C speed: ``split.c`` beside this file, compiled.

The OpenAI encodings' patterns (cl100k_base's, o200k_base's, GPT-2's), Llama 3's and Qwen's are
each written out in C as a state machine that cuts text exactly as the ``regex`` module does
(:class:`~tokscope.core.patterns.tiktoken_syntax.ChunkPattern`, which stays the fallback and the
test oracle). A pattern is recognised by its exact string, never by a name: for any other,
:func:`compile_split` gives the plain :class:`ChunkPattern`. The extension is optional (built at
install when the machine has a C compiler); without it the known patterns split by the regex too.

The scanner's character classes are the regex path's own: a flags byte per code point, filled a
block of 256 code points at a time, the first time a text holds one of them, by matching the
pattern's classes (pinned to :data:`~tokscope.core.patterns.tiktoken_syntax.PATTERN_UNICODE_VERSION`
exactly as the regex path pins them, in the blocks where pinning changes a class) over the block's
code points (see :func:`block_flags`). Nothing is built at load: an English text fills one block.

>>> pattern = compile_split(GPT2_PATTERN)
>>> pattern.split("Hello world's  end")
['Hello', ' world', "'s", ' ', ' end']
"""

from __future__ import annotations

import functools
import threading

import regex

from ..patterns.onig import OnigPattern, compile_onig, translate_onig
from ..patterns.tiktoken_syntax import (
    GPT2_PATTERN,
    LINE_SAFE_PATTERNS,
    ChunkPattern,
    compile_pattern,
    moved_ranges,
    translate_pattern,
)
from ..text import unicode_tables
from ..text.unicode import parse_ranges

#: cl100k_base's and o200k_base's patterns (o200k_harmony shares the latter)
CL100K_PATTERN, O200K_PATTERN = sorted(LINE_SAFE_PATTERNS, key=len)

#: Llama 3's pattern, as Meta's tiktoken file spells it (tokscope.sources.open_models has it too)
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")

#: Qwen's pattern: Llama 3's with one digit a chunk (tokscope.sources.open_models has it too)
QWEN_PATTERN = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")

#: pattern -> the number of its state machine in ``split.c`` (KIND_* there)
KINDS: dict[str, int] = {CL100K_PATTERN: 1, O200K_PATTERN: 2, GPT2_PATTERN: 3, LLAMA3_PATTERN: 4, QWEN_PATTERN: 5}

#: The classes of the flags byte (bits 0-4), as the patterns write them: each is matched with
#: :func:`translate_pattern`'s pinning, as the regex path matches it.
CLASSES: tuple[tuple[int, str], ...] = (
    (0x01, r"\s"),
    (0x02, r"\p{L}"),
    (0x04, r"\p{N}"),
    (0x08, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (0x10, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
)

#: What a character folds to under ``(?i:...)`` (bits 5-7 of the flags byte), for the contractions
#: ``'s 't 'd 'm 'll 've 're``: the regex module's own case-insensitive matching decides.
FOLDS: tuple[tuple[int, str], ...] = (
    (1 << 5, r"(?i:[sdmt])"),
    (2 << 5, r"(?i:l)"),
    (3 << 5, r"(?i:[vr])"),
    (4 << 5, r"(?i:e)"),
)

_FOLD_BITS = 0xE0
BLOCK = 256


@functools.cache
def _class_patterns(classes: tuple[tuple[int, str], ...], pinned: bool) -> tuple[tuple[int, regex.Pattern[str]], ...]:
    """Each class compiled as a run of its members, pinned as the regex path pins it (the pinned
    translation takes a moment to build: only blocks that hold a moved code point need it)."""
    return tuple((bit, regex.compile("(?:%s)+" % translate_pattern(body, pin_unicode=pinned)[0]))
                 for bit, body in classes)


@functools.cache
def _moved_blocks() -> frozenset[int]:
    """The blocks holding a code point whose class the regex path pins."""
    return frozenset(b for first, last in moved_ranges() for b in range(first // BLOCK, last // BLOCK + 1))


@functools.cache
def _onig_class_patterns(classes: tuple[tuple[int, str], ...], pinned: bool) -> tuple[tuple[int, regex.Pattern[str]], ...]:
    """Each class, read as an Oniguruma pattern, compiled as a run of its members: pinned to
    Oniguruma's tables as the Split's pinned translation pins it (:func:`translate_onig`)."""
    return tuple((bit, regex.compile("(?:%s)+" % translate_onig(body, pin=pinned)[0])) for bit, body in classes)


#: the measured tables (unicode_tables.ONIG_RESIDUE) of the shorthand classes
_ONIG_SHORTHANDS = {"s": "SPACE", "S": "SPACE", "w": "WORD", "W": "WORD", "d": "DIGIT", "D": "DIGIT"}


@functools.cache
def _onig_suspect_blocks(classes: tuple[tuple[int, str], ...] = CLASSES + FOLDS) -> frozenset[int]:
    """The blocks holding a code point where Oniguruma's tables and the ``regex`` module's may
    disagree on one of ``classes``' properties: the code points new to Oniguruma's Unicode and the
    measured residue of each property the classes name (of every property, for a name that is not
    a table's: the pinned translation pins a class on these, a superset here is only slower).
    Block 0 has none for these classes: an ASCII text never builds the pinned classes."""
    names: set[str] = set()
    for _bit, body in classes:
        names.update(_ONIG_SHORTHANDS[c] for c in regex.findall(r"\\([sSwWdD])", body))
        names.update(regex.findall(r"\\[pP]\{\^?([^}]*)\}", body))
    residues = unicode_tables.ONIG_RESIDUE
    if not names <= residues.keys():
        names = set(residues)
    tables = [unicode_tables.ONIG_NEW, *(residues[name] for name in sorted(names))]
    return frozenset(b for table in tables for first, last in parse_ranges(table)
                     for b in range(first // BLOCK, last // BLOCK + 1))


def block_flags(block: int, classes: tuple[tuple[int, str], ...] = CLASSES + FOLDS, onig: bool = False) -> bytes:
    r"""The flags byte of each of the 256 code points of ``block`` (lone surrogates included), from
    the ``regex`` module's matches of ``classes``: as the tiktoken-syntax path pins them, or with
    ``onig`` as a ``tokenizer.json`` Split's Oniguruma pattern pins them.

    >>> flags = block_flags(0)
    >>> flags[ord(" ")], flags[ord("a")], flags[ord("S")], flags[ord("7")], flags[ord("!")]
    (1, 18, 42, 4, 0)
    >>> block_flags(0x08, onig=True)[0x97]  # U+0897 ARABIC PEPET: a mark (bits 3 and 4)
    24
    """
    chars = "".join(map(chr, range(block * BLOCK, (block + 1) * BLOCK)))
    flags = bytearray(BLOCK)
    if onig:
        patterns = _onig_class_patterns(classes, block in _onig_suspect_blocks(classes))
    else:
        patterns = _class_patterns(classes, block in _moved_blocks())
    for bit, pattern in patterns:
        for found in pattern.finditer(chars):
            for i in range(found.start(), found.end()):
                if bit & _FOLD_BITS and flags[i] & _FOLD_BITS:  # a code, not a bit: one per character
                    raise ValueError(f"U+{block * BLOCK + i:04X} folds to two contraction letters")
                flags[i] |= bit
    return bytes(flags)


def _import_compiled() -> object | None:
    """The compiled scanner (a top-level module, so a checkout run from its folder finds it too)."""
    try:
        import _tokscope_split
    except ImportError:
        return None
    return _tokscope_split if getattr(_tokscope_split, "SPLIT_ABI", None) == 1 else None


class _Scanner:
    """The compiled module and its table of classes, filled on demand (under a lock: two threads
    filling the same block would only write the same bytes, but fill each block once)."""

    def __init__(self, module: object, classes: tuple[tuple[int, str], ...] = CLASSES + FOLDS, onig: bool = False) -> None:
        self.module = module
        self.classes = classes
        self.onig = onig
        self.table = module.new_table()  # type: ignore[attr-defined]
        self.lock = threading.Lock()

    def split(self, kind: int, text: str) -> list[str]:
        module = self.module
        chunks = module.split(self.table, kind, text)  # type: ignore[attr-defined]
        while chunks is None:
            with self.lock:
                for block in module.missing(self.table, text):  # type: ignore[attr-defined]
                    module.fill(self.table, block, block_flags(block, self.classes, self.onig))  # type: ignore[attr-defined]
            chunks = module.split(self.table, kind, text)  # type: ignore[attr-defined]
        return chunks


_module = _import_compiled()
#: the scanner of tiktoken-syntax patterns, and that of tokenizer.json Splits (its own table: the
#: classes as Oniguruma's tables give them)
_state: dict[str, _Scanner | None] = {
    "scanner": _Scanner(_module) if _module is not None else None,
    "onig": _Scanner(_module, onig=True) if _module is not None else None,
    "deepseek": None,
}


def _deepseek_scanner(module: object | None, classes: tuple[tuple[int, str], ...] | None = None) -> _Scanner | None:
    """The scanner of DeepSeek's Splits (None when the module predates their machines)."""
    if module is None or getattr(module, "DS_ABI", None) != 1:
        return None
    return _Scanner(module, classes or DS_CLASSES, onig=True)


def compiled_available() -> bool:
    """True when the compiled scanner is installed (it gives the same chunks as the regex path)."""
    return _module is not None


def use_compiled(on: bool, module: object | None = None, classes: tuple[tuple[int, str], ...] | None = None,
                 onig_classes: tuple[tuple[int, str], ...] | None = None,
                 deepseek_classes: tuple[tuple[int, str], ...] | None = None) -> None:
    """Split with the compiled scanner when installed (the default), or with the regex path (tests
    and benches compare the two); ``module`` puts in a scanner built elsewhere (the tests build one
    when none is installed), ``classes`` a table built from other classes (a test checks that a
    wrong table is caught), ``onig_classes`` and ``deepseek_classes`` the same for the
    tokenizer.json Splits' tables."""
    global _module
    if module is not None:
        _module = module
    if not on or _module is None:
        _state["scanner"] = _state["onig"] = _state["deepseek"] = None
        return
    if module is not None or deepseek_classes is not None or _state["deepseek"] is None:
        _state["deepseek"] = _deepseek_scanner(_module, deepseek_classes)
    if module is not None or classes is not None or _state["scanner"] is None:
        _state["scanner"] = _Scanner(_module, classes or CLASSES + FOLDS)
    if module is not None or onig_classes is not None or _state["onig"] is None:
        _state["onig"] = _Scanner(_module, onig_classes or CLASSES + FOLDS, onig=True)


def compiled_in_use() -> bool:
    return _state["scanner"] is not None


class ScannedPattern(ChunkPattern):
    """A :class:`ChunkPattern` whose whole-text :meth:`split` and :meth:`findall`, and
    :meth:`segments`, run the compiled scanner (when in use; every other method, and any call with
    ``pos``/``endpos``, is the regex path's)."""

    __slots__ = ("kind",)

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.kind = KINDS[pattern]

    def __reduce__(self):
        return compile_split, (self.pattern,)

    def split(self, text: str) -> list[str]:
        scanner = _state["scanner"]
        if scanner is None:
            return super().split(text)
        chunks = scanner.module.split(scanner.table, self.kind, text)  # type: ignore[attr-defined]
        return scanner.split(self.kind, text) if chunks is None else chunks

    def segments(self, text: str) -> list[str]:
        scanner = _state["scanner"]
        if scanner is None or not self.line_safe:
            return super().segments(text)
        return scanner.module.segments(text)  # type: ignore[attr-defined]

    def findall(self, text: str, pos: int | None = None, endpos: int | None = None) -> list[str]:
        scanner = _state["scanner"]
        if scanner is None or pos is not None or endpos is not None:
            return super().findall(text, pos, endpos)
        return scanner.split(self.kind, text)


@functools.lru_cache(maxsize=64)
def compile_split(pattern: str) -> ChunkPattern:
    """The compiled pattern for a pre-tokenizer: a :class:`ScannedPattern` for the patterns the
    scanner knows, else :func:`compile_pattern`'s (the same chunks either way).

    >>> type(compile_split(O200K_PATTERN)).__name__, type(compile_split(r"\\S+|\\s+")).__name__
    ('ScannedPattern', 'ChunkPattern')
    """
    if pattern in KINDS:
        return ScannedPattern(pattern)
    return compile_pattern(pattern)


#: The Oniguruma patterns of tokenizer.json Splits that the scanner cuts: Llama 3's and Qwen2's, as
#: ``transformers`` writes them, are the tiktoken-syntax patterns of :data:`KINDS` character for
#: character, and their translation (:func:`translate_onig`) is the same regex with each class
#: pinned to Oniguruma's tables: the scanner with a table of those pinned classes cuts as the
#: translation does (the tests hold it to :meth:`OnigPattern.for_text`'s matches). HF's ByteLevel
#: pattern and DeepSeek's Splits join them below; cl100k_base's and o200k_base's patterns are not
#: in tokenizer.json files as such.
ONIG_KINDS: dict[str, int] = {LLAMA3_PATTERN: KINDS[LLAMA3_PATTERN], QWEN_PATTERN: KINDS[QWEN_PATTERN]}

#: The pattern of HF's ``ByteLevel`` pre-tokenizer (``use_regex``), an Oniguruma pattern. It is
#: tiktoken's GPT-2 pattern (:data:`KINDS`) in other words: the contractions spelled one by one, and
#: ``\s+(?!\S)|\s+`` for ``\s++$|\s+(?!\S)|\s`` (both take a trailing run of spaces whole, and a
#: lone space before a non-space alone), so the scanner cuts it with GPT-2's machine.
BYTE_LEVEL_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
ONIG_KINDS[BYTE_LEVEL_PATTERN] = KINDS[GPT2_PATTERN]

#: DeepSeek V3's three Split patterns, as its tokenizer.json spells them, and their machines'
#: numbers (KIND_DS_* in ``split.c``): these do not tile the text (a piece between two matches is
#: a piece too), and they read a table of their own classes, :data:`DS_CLASSES`
DEEPSEEK_PATTERNS: dict[str, int] = {
    r"\p{N}{1,3}": 6,
    r"[一-龥぀-ゟ゠-ヿ]+": 7,
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+": 8,
}
ONIG_KINDS.update(DEEPSEEK_PATTERNS)

#: The classes of a DeepSeek table's flags byte, as the patterns write them (read as Oniguruma's)
DS_CLASSES: tuple[tuple[int, str], ...] = (
    (0x01, r"\s"),
    (0x02, r"\p{L}"),
    (0x04, r"\p{N}"),
    (0x08, r"\p{M}"),
    (0x10, r"[\p{P}\p{S}]"),
)


_GAP_KINDS = frozenset(DEEPSEEK_PATTERNS.values())
_state["deepseek"] = _deepseek_scanner(_module)


class ScannedOnigPattern(OnigPattern):
    """An :class:`OnigPattern` whose matches (:meth:`isolated`, :meth:`spans`) are the compiled
    scanner's chunks, cut with a table of Oniguruma's classes (when the scanner is in use; every
    other method is the regex path's). The tiktoken-family patterns' matches tile the text, each a
    chunk; DeepSeek's do not, and :meth:`isolated` gives the text between them as pieces too (their
    :meth:`spans` are the regex path's).

    >>> pattern = compile_onig_split(LLAMA3_PATTERN)
    >>> pattern.isolated("I'll pay 1234 €"), pattern.spans("ab  c")
    (['I', "'ll", ' pay', ' ', '123', '4', ' €'], [(0, 2), (2, 3), (3, 5)])
    """

    __slots__ = ("kind",)

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.kind = ONIG_KINDS[pattern]

    def __reduce__(self):
        return compile_onig_split, (self.pattern,)

    def isolated(self, text: str) -> list[str] | None:
        scanner = _state["deepseek" if self.kind in _GAP_KINDS else "onig"]
        if scanner is None:
            return super().isolated(text)
        return scanner.split(self.kind, text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        scanner = _state["onig"]
        if scanner is None or self.kind in _GAP_KINDS:  # pieces that are not matches: the regex's
            return super().spans(text)
        out = []
        start = 0
        for chunk in scanner.split(self.kind, text):
            end = start + len(chunk)
            out.append((start, end))
            start = end
        return out


@functools.lru_cache(maxsize=64)
def compile_onig_split(pattern: str) -> OnigPattern:
    """A Split's Oniguruma pattern: a :class:`ScannedOnigPattern` for the ones the scanner cuts,
    else :func:`compile_onig`'s (the same matches either way).

    >>> type(compile_onig_split(QWEN_PATTERN)).__name__, type(compile_onig_split(r"\\s+")).__name__
    ('ScannedOnigPattern', 'OnigPattern')
    """
    if pattern in ONIG_KINDS:
        return ScannedOnigPattern(pattern)
    return compile_onig(pattern, "pre-tokenizer", "Split")
