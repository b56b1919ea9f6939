"""Columns of ints kept in blocks that documents share, so an edit costs little.

A :class:`BlockTable` holds rows of ints (a document's pieces: id, start, end, flags; or its
chunks: start, end) in blocks of about :data:`BLOCK` rows, each block with a base added to its
offset fields. A splice rebuilds the one or two blocks around an edit, shares every other block
with the table it came from, and moves the offsets after the edit by changing one base per block:
an edit of a long text touches a few blocks instead of copying and shifting 300k-entry lists.
Tables are never mutated once built, so a worker thread can build the next one while the UI reads
the current one. :class:`Column` is one field as a read-only sequence.

Each block's fields are ``array('q')``: eight bytes a value, where a list of ints costs a pointer
and an int object each (about 36 bytes), so a 1 MB document's tables take a fifth of the memory.
"""

from __future__ import annotations

import itertools
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence


#: rows per block of a doc's piece and chunk tables: an edit rebuilds the one or two blocks it
#: touches and moves every later block by changing its base, instead of copying whole lists
BLOCK = 1024


class BlockTable:
    """Rows of ints kept in blocks that docs share (never mutated once built).

    ``blocks[k]`` is a tuple of ``array('q')``, one per field; the fields listed in ``offsets`` hold
    character offsets relative to ``bases[k]``. ``firsts[k]`` is the index of block ``k``'s first
    row. No block is empty.

    >>> t = BlockTable.from_columns([[7, 8, 9], [0, 2, 5]], offsets=(1,), block=2)
    >>> t2 = t.splice(1, 2, [[42], [2]], delta=3)  # row 1 replaced, row 2 moved by 3
    >>> [t2.get(0, i) for i in range(3)], [t2.get(1, i) for i in range(3)], t2.bisect(1, 8, False)
    ([7, 42, 9], [0, 2, 8], 2)
    """

    __slots__ = ("blocks", "bases", "firsts", "n", "offsets")

    def __init__(self, blocks: list[tuple[array, ...]], bases: list[int], offsets: tuple[int, ...]) -> None:
        self.blocks = blocks
        self.bases = bases
        self.offsets = offsets
        firsts = []
        n = 0
        for block in blocks:
            firsts.append(n)
            n += len(block[0])
        self.firsts = firsts
        self.n = n

    @classmethod
    def from_columns(cls, columns: list[list[int]], offsets: tuple[int, ...], block: int | None = None) -> BlockTable:
        """A table of absolute values (bases 0) cut into blocks of about ``block`` (default
        :data:`BLOCK`) rows."""
        block = block or BLOCK
        n = len(columns[0])
        if n == 0:
            return cls([], [], offsets)
        count = max(1, round(n / block))
        size = -(-n // count)
        blocks = [tuple(array("q", c[a : a + size]) for c in columns) for a in range(0, n, size)]
        return cls(blocks, [0] * len(blocks), offsets)

    def get(self, f: int, i: int) -> int:
        k = bisect_right(self.firsts, i) - 1
        value = self.blocks[k][f][i - self.firsts[k]]
        return value + self.bases[k] if f in self.offsets else value

    def bisect(self, f: int, x: int, right: bool) -> int:
        """``bisect_right`` (or ``bisect_left``) of ``x`` in offset field ``f`` (non-decreasing)."""
        blocks, bases = self.blocks, self.bases
        lo, hi = 0, len(blocks)
        while lo < hi:  # the first block whose last value is > x (right) or >= x (left)
            mid = (lo + hi) // 2
            last = blocks[mid][f][-1] + bases[mid]
            if last > x or (not right and last == x):
                hi = mid
            else:
                lo = mid + 1
        if lo == len(blocks):
            return self.n
        col = blocks[lo][f]
        x -= bases[lo]
        return self.firsts[lo] + (bisect_right(col, x) if right else bisect_left(col, x))

    def column(self, f: int) -> list[int]:
        """Field ``f`` as one flat list of absolute values."""
        out: list[int] = []
        if f in self.offsets:
            for block, base in zip(self.blocks, self.bases):
                out.extend(map(base.__add__, block[f]) if base else block[f])
        else:
            for block in self.blocks:
                out.extend(block[f])
        return out

    def values(self, f: int, i0: int, i1: int) -> list[int]:
        """Field ``f`` of rows ``[i0, i1)`` (not for offset fields)."""
        out: list[int] = []
        if i0 >= i1:
            return out
        k = bisect_right(self.firsts, i0) - 1
        while k < len(self.blocks) and self.firsts[k] < i1:
            a = self.firsts[k]
            out.extend(self.blocks[k][f][max(0, i0 - a) : i1 - a])
            k += 1
        return out

    def splice(self, i0: int, i1: int, rows: list[list[int]], delta: int) -> BlockTable:
        """A new table: rows ``[i0, i1)`` replaced by ``rows`` (columns of absolute values), and
        ``delta`` added to the offset fields of every row from ``i1`` on. Blocks away from the
        splice are shared with this table."""
        blocks, bases, firsts, offsets = self.blocks, self.bases, self.firsts, self.offsets
        nb = len(blocks)
        if nb == 0:
            return BlockTable.from_columns(rows, offsets)
        ka = bisect_right(firsts, i0) - 1 if i0 < self.n else nb - 1
        kb = bisect_right(firsts, i1) - 1 if i1 < self.n else nb - 1
        a0, b0 = firsts[ka], firsts[kb]
        base_a, base_b = bases[ka], bases[kb] + delta
        middle = []
        for f, new in enumerate(rows):
            pre = blocks[ka][f][: i0 - a0].tolist()
            post = blocks[kb][f][i1 - b0 :].tolist()
            if f in offsets:
                if base_a:
                    pre = [v + base_a for v in pre]
                if base_b:
                    post = [v + base_b for v in post]
            middle.append(pre + list(new) + post)
        mid = BlockTable.from_columns(middle, offsets)
        tail = bases[kb + 1 :]
        if delta:
            tail = [b + delta for b in tail]
        return BlockTable(blocks[:ka] + mid.blocks + blocks[kb + 1 :], bases[:ka] + mid.bases + tail, offsets)


class Column(Sequence):
    """One field of a doc's pieces or chunks (``doc.ids``, ``doc.starts``...) as a read-only
    sequence of ints. Compares equal to a list with the same values; ``list(column)`` or
    ``column.tolist()`` gives a plain list."""

    __slots__ = ("_table", "_f", "_offset", "_list")

    def __init__(self, table: BlockTable, f: int) -> None:
        self._table = table
        self._f = f
        self._offset = f in table.offsets
        self._list: array | None = None

    def __len__(self) -> int:
        return self._table.n

    def __bool__(self) -> bool:
        return self._table.n > 0

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return self.tolist()[index]
        t = self._table
        if index < 0:
            index += t.n
        if not 0 <= index < t.n:
            raise IndexError("index out of range")
        k = bisect_right(t.firsts, index) - 1
        value = t.blocks[k][self._f][index - t.firsts[k]]
        return value + t.bases[k] if self._offset else value

    def tolist(self) -> list[int]:
        if self._list is None:
            self._list = array("q", self._table.column(self._f))  # kept compact: 8 bytes a value
        return self._list.tolist()

    def __iter__(self):
        if self._list is not None:
            return iter(self._list)
        t, f = self._table, self._f
        if not self._offset:
            return itertools.chain.from_iterable(block[f] for block in t.blocks)
        return itertools.chain.from_iterable(
            map(base.__add__, block[f]) if base else block[f] for block, base in zip(t.blocks, t.bases)
        )

    def __contains__(self, value: object) -> bool:
        if not self._offset:
            return any(value in block[self._f] for block in self._table.blocks)
        return any(v == value for v in self)

    def count(self, value: int) -> int:
        if not self._offset:
            return sum(block[self._f].count(value) for block in self._table.blocks)
        return sum(block[self._f].count(value - base) for block, base in zip(self._table.blocks, self._table.bases))

    def index(self, value: int, start: int = 0, stop: int | None = None) -> int:  # type: ignore[override]
        if start or stop is not None:
            return self.tolist().index(value, start, len(self) if stop is None else stop)
        t = self._table
        for first, block, base in zip(t.firsts, t.blocks, t.bases):
            try:
                return first + block[self._f].index(value - base if self._offset else value)
            except ValueError:
                continue
        raise ValueError(f"{value!r} is not in column")

    def bisect_left(self, x: int) -> int:
        return self._table.bisect(self._f, x, False)

    def bisect_right(self, x: int) -> int:
        return self._table.bisect(self._f, x, True)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Column):
            return len(self) == len(other) and self.tolist() == other.tolist()
        if isinstance(other, list):
            return len(self) == len(other) and self.tolist() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.tolist())
