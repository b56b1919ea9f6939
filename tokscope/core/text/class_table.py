"""Code point classes as a two-stage table for the compiled runs of ``merge.c`` (``cls_*`` of the
optional ``_tokscope_merge``): a split into runs of one class, the spans of the runs of a set, the
first character of a set, each in one pass over the text with no pattern and no translation
table built per text. Without the compiled module :func:`compiled` is ``None`` and the stages use
their pure-Python paths (:class:`~.unicode.RangeSet`), which stay the tests' oracle.

>>> digits = ClassTable([([(0x30, 0x39)], 1), ([(0x20, 0x20)], 2)])
>>> digits.class_of("7"), digits.class_of(" "), digits.class_of("x")
(1, 2, 0)
>>> digits.split_python("a12 3 "), digits.runs_python("a12 3 "), digits.find_python("ab 1")
(['12', ' ', '3', ' '], [(1, 6)], 2)
"""

from __future__ import annotations

import array
import functools
from collections.abc import Iterable, Sequence
from typing import Any

from .compiled import installed
from .unicode import lower_special_points, table

#: Code points per block, and blocks (the whole Unicode range).
BLOCK = 256
BLOCKS = 0x110000 // BLOCK


_compiled: dict[str, Any] = {"module": installed("CLS_ABI")}


def compiled() -> Any:
    """The compiled module with ``cls_split``/``cls_runs``/``cls_find`` (``None`` when it is not
    installed, or is an older build without them)."""
    return _compiled["module"]


def use_compiled(module: Any) -> Any:
    """Make ``module`` (``None``: the pure-Python paths) the one :func:`compiled` gives, and return
    the one it gave before (the tests run both paths).

    >>> before = use_compiled(None); compiled() is None
    True
    >>> use_compiled(before) is None
    True
    """
    before = _compiled["module"]
    _compiled["module"] = module
    return before


class ClassTable:
    """``(ranges, class)`` pairs as a table of each code point's class (0..255; the first pair
    holding a code point gives it its class, ``default`` when none does): ``stage1`` is the block
    number of each 256 code points (native ``uint16``), ``stage2`` the 256 classes of each
    distinct block.

    >>> ClassTable([([(0x61, 0x7A)], 0)], default=3).split_python("ab.,c")
    ['.,']
    """

    __slots__ = ("stage1", "stage2", "tables")

    def __init__(self, sets: Sequence[tuple[Iterable[tuple[int, int]], int]], default: int = 0) -> None:
        classes = bytearray([default]) * 0x110000
        for ranges, cls in reversed(sets):
            if not 0 <= cls <= 255:
                raise ValueError(f"class {cls} is not 0..255")
            mark = bytes([cls])
            for a, b in ranges:
                classes[a : b + 1] = mark * (b + 1 - a)
        blocks: dict[bytes, int] = {}
        stage1 = array.array("H")
        for k in range(BLOCKS):
            block = bytes(classes[k * BLOCK : (k + 1) * BLOCK])
            stage1.append(blocks.setdefault(block, len(blocks)))
        self.stage1 = stage1.tobytes()
        self.stage2 = b"".join(blocks)
        #: the arguments after the text of the compiled calls
        self.tables = (self.stage1, self.stage2)

    def class_of(self, c: str) -> int:
        """The class of character ``c`` (read from the two stages, as the compiled code does)."""
        cp = ord(c)
        block = array.array("H", self.stage1[2 * (cp // BLOCK) : 2 * (cp // BLOCK) + 2])[0]
        return self.stage2[block * BLOCK + cp % BLOCK]

    # The pure-Python statements of what the compiled calls compute (for the tests).

    def split_python(self, text: str) -> list[str]:
        """``cls_split``: the maximal runs of characters of one same non-zero class."""
        return [text[s:e] for s, e in self.spans_python(text)]

    def spans_python(self, text: str) -> list[tuple[int, int]]:
        """``cls_spans``: the spans of :meth:`split_python`'s runs.

        >>> ClassTable([([(0x61, 0x7A)], 1)], default=2).spans_python("ab, c")
        [(0, 2), (2, 4), (4, 5)]
        """
        out: list[tuple[int, int]] = []
        start, last = 0, 0
        for i, c in enumerate(text):
            k = self.class_of(c)
            if k != last:
                if last:
                    out.append((start, i))
                start, last = i, k
        if last:
            out.append((start, len(text)))
        return out

    def runs_python(self, text: str) -> list[tuple[int, int]]:
        """``cls_runs``: the spans of the maximal runs of characters of any non-zero class."""
        out: list[tuple[int, int]] = []
        start = None
        for i, c in enumerate(text):
            if self.class_of(c):
                if start is None:
                    start = i
            elif start is not None:
                out.append((start, i))
                start = None
        if start is not None:
            out.append((start, len(text)))
        return out

    def find_python(self, text: str) -> int:
        """``cls_find``: the index of the first character of non-zero class, -1 for none."""
        return next((i for i, c in enumerate(text) if self.class_of(c)), -1)


@functools.cache
def set_classes(name: str) -> ClassTable:
    """Table ``name`` of :mod:`.unicode_tables` as class 1 (every other code point 0), built once.

    >>> set_classes("KC_MAYBE").class_of("\\u0301"), set_classes("KC_MAYBE").class_of("a")
    (1, 0)
    """
    return ClassTable([(table(name).ranges, 1)])


@functools.cache
def lower_special_classes() -> ClassTable:
    """The code points :func:`~.unicode.lowercase_str` replaces itself as class 1 (a text with none
    of them lowercases as ``str.lower``).

    >>> lower_special_classes().class_of("Σ"), lower_special_classes().class_of("A")
    (1, 0)
    """
    return ClassTable([([(cp, cp) for cp in lower_special_points()], 1)])
