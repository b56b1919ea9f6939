"""A ``str.translate`` table that works each character's mapping out the first time the character
is met and remembers it: a character-by-character stage (or a chain of them) done by one
``translate`` over the whole text, with nothing built per text.

>>> upper = CharMap(str.upper)
>>> "abc ab".translate(upper), sorted(upper)
('ABC AB', [32, 97, 98, 99])
"""

from __future__ import annotations

from collections.abc import Callable

#: How many characters a :class:`CharMap` remembers (emptied when full: a text of every code
#: point costs a bounded table, and the next texts fill it again).
CHAR_MAP_LIMIT = 1 << 16


class CharMap(dict):
    """``{code point: its mapping}`` filled on demand by ``compute(char)`` (a string, ``None`` to
    delete the character); ``str.translate`` asks for each character of the text. ``compute`` may
    raise (an exception that is not a ``LookupError``) to stop the ``translate`` for a character
    whose mapping depends on its neighbours; such a character is not remembered.

    >>> drop_digits = CharMap(lambda c: None if c.isdigit() else c)
    >>> "a1b22".translate(drop_digits)
    'ab'
    >>> small = CharMap(str.upper, limit=2)
    >>> "abc".translate(small), len(small) <= 2
    ('ABC', True)
    """

    __slots__ = ("compute", "limit")

    def __init__(self, compute: Callable[[str], str | None], limit: int = CHAR_MAP_LIMIT) -> None:
        super().__init__()
        self.compute = compute
        self.limit = limit

    def __missing__(self, cp: int) -> str | None:
        value = self.compute(chr(cp))
        if len(self) >= self.limit:
            self.clear()
        self[cp] = value
        return value

    def __reduce__(self):
        return CharMap, (self.compute, self.limit)  # what it remembers is rebuilt
