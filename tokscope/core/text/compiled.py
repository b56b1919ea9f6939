"""The optional compiled module, part by part: ``_tokscope_merge`` (``merge.c``, built at install
when the machine has a C compiler) holds several parts, each with its own version constant
(``MLIST_ABI``, ``PCM_ABI`` ...). A stage uses a part only when the installed module has it at
version 1 (an older build lacks the newer parts), and otherwise its pure-Python path, which stays
the tests' oracle; the tests switch each part on and off to hold the two paths to each other.

>>> part = CompiledPart("NO_SUCH_ABI")
>>> part.get() is None, part.available()
(True, False)
>>> stand_in = object()
>>> with part.switched(True, stand_in):
...     part.get() is stand_in
True
>>> part.get() is None
True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def installed(abi: str) -> Any:
    """``_tokscope_merge`` when it is installed with part ``abi`` at version 1, else None."""
    try:
        import _tokscope_merge
    except ImportError:
        return None
    return _tokscope_merge if getattr(_tokscope_merge, abi, None) == 1 else None


class CompiledPart:
    """One part of the compiled module: the module while the part is in use, else None."""

    __slots__ = ("abi", "module", "on")

    def __init__(self, abi: str) -> None:
        self.abi = abi
        self.module: Any = installed(abi)
        self.on = True

    def get(self) -> Any:
        """The module in use for this part, or None (the pure-Python path)."""
        return self.module if self.on else None

    def available(self) -> bool:
        """True when the part is installed (or a module built elsewhere was put in)."""
        return self.module is not None

    def use(self, on: bool, module: Any = None) -> None:
        """Use the part when installed (``on``, the default) or the pure-Python path; ``module``
        puts in one built elsewhere (the tests build one from this checkout when none is
        installed)."""
        if module is not None:
            self.module = module
        self.on = bool(on)

    @contextmanager
    def switched(self, on: bool, module: Any = None) -> Iterator[CompiledPart]:
        """:meth:`use` for the ``with`` block, then the part as it was."""
        was = self.module, self.on
        self.use(on, module)
        try:
            yield self
        finally:
            self.module, self.on = was
