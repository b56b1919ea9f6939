"""Benchmark corpora built at run time from files every Python install has (no download).

* :func:`prose` -- English prose: the language reference text in ``pydoc_data.topics``, then the
  standard library's docstrings, so that 1 MB is written once, not repeated (a repeated text would
  flatter a "cold" run, since the second copy hits the caches).
* :func:`code` -- Python source: the standard library's own modules, in a fixed order.

Both are cut to about ``size`` characters at a line break, so every run measures the same text.
Other benches import these (``from _corpus import prose, code``).
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

MB = 1_000_000


def _cut(parts: list[str], size: int) -> str:
    out: list[str] = []
    total = 0
    while total < size:
        for part in parts:
            out.append(part)
            total += len(part)
            if total >= size:
                break
    text = "".join(out)[:size]
    cut = text.rfind("\n")
    return text[: cut + 1] if cut > size // 2 else text


def _docstrings(size: int) -> list[str]:
    """About ``size`` characters of docstrings of the standard library's modules, classes and
    functions (sorted file order)."""
    import ast

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    seen: set[str] = set()
    total = 0
    for path in sorted(stdlib.rglob("*.py")):
        if total >= size:
            break
        if "test" in path.parts or "idlelib" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > 80 and doc not in seen:
                    seen.add(doc)
                    out.append(doc.strip() + "\n\n")
                    total += len(out[-1])
    return out


def prose(size: int = MB) -> str:
    """About ``size`` characters of English prose written once: the topics of Python's language
    reference, then standard-library docstrings."""
    from pydoc_data.topics import topics

    parts = [topics[key].strip() + "\n\n" for key in sorted(topics)]
    have = sum(map(len, parts))
    if have < size:
        parts += _docstrings(size - have)
    return _cut(parts, size)


def code(size: int = MB) -> str:
    """About ``size`` characters of Python code from the standard library (sorted file order)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    parts = []
    for path in sorted(stdlib.glob("*.py")):
        try:
            parts.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if sum(map(len, parts)) > size:
            break
    return _cut(parts, size)


CORPORA = {"prose": prose, "code": code}
