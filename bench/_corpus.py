"""Benchmark corpora built at run time from files every Python install has (no download).

* :func:`prose` -- English prose: the language reference text in ``pydoc_data.topics``, then the
  standard library's docstrings, so that 1 MB is written once, not repeated (a repeated text would
  flatter a "cold" run, since the second copy hits the caches).
* :func:`code` -- Python source: the standard library's own modules, in a fixed order.
* :func:`lexicon` -- sentences of made-up words drawn from a 60,000-word lexicon with Zipf's law
  (fixed seed): 1 MB of English has too few distinct words for 30,000 merges at minimum frequency
  2 with the GPT-2 pattern (training stops after ~10,000), this text has enough for 30,000.

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


def lexicon(size: int = MB, seed: int = 15) -> str:
    """About ``size`` characters of Zipf-distributed sentences over a made-up 60,000-word lexicon
    (syllables of English spelling; word ``r`` has weight ``1 / (r + 10)``), fixed ``seed``."""
    import random

    rng = random.Random(seed)
    onsets = ["", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
              "br", "cr", "dr", "fl", "gr", "pl", "pr", "st", "str", "th", "sh", "ch", "tr", "sp", "sl", "qu"]
    nuclei = ["a", "e", "i", "o", "u", "ai", "ea", "ee", "ou", "oo", "y", "io", "ie"]
    codas = ["", "", "n", "r", "s", "t", "l", "m", "nd", "ng", "st", "ck", "rt", "ns", "x", "sh"]
    seen: set[str] = set()
    words: list[str] = []
    while len(words) < 60_000:
        n = rng.choice((1, 2, 2, 2, 3, 3, 3, 4, 4, 5))
        word = "".join(rng.choice(onsets) + rng.choice(nuclei) + rng.choice(codas) for _ in range(n))
        if word not in seen:
            seen.add(word)
            words.append(word)
    weights = [1 / (r + 10) for r in range(len(words))]
    out: list[str] = []
    total = 0
    while total < size:
        sentence = rng.choices(words, weights, k=rng.randint(4, 18))
        sentence[0] = sentence[0].capitalize()
        line = " ".join(sentence) + rng.choice(".....?!") + rng.choice(("  ", " ", " ", "\n\n"))
        out.append(line)
        total += len(line)
    return _cut(out, size)


CORPORA = {"prose": prose, "code": code}
