"""Fresh multilingual text for the benches: never-repeated words in 23 languages and their scripts.

The project's sample passages (``samples/languages``, one short passage per language) are too
short for a 1 MB run, and repeating them would flatter a "cold" run (the second copy hits the
chunk cache). So each language's passage trains a character model (order 3, fixed seed) that
writes new text in the same letters, with the same word lengths and punctuation; paragraphs
of the languages alternate. Nothing is downloaded.

    from _fresh_text import multilingual
    text = multilingual(1_000_000)
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

LANGUAGES = Path(__file__).resolve().parents[1] / "samples" / "languages"
ORDER = 3


def _model(text: str) -> dict[str, list[str]]:
    follow: dict[str, list[str]] = defaultdict(list)
    padded = "\n" * ORDER + text
    for i in range(len(text)):
        follow[padded[i : i + ORDER]].append(padded[i + ORDER])
    return follow


def _paragraph(follow: dict[str, list[str]], rng: random.Random, size: int) -> str:
    state = "\n" * ORDER
    out = []
    for _ in range(size):
        options = follow.get(state)
        if not options:
            state = "\n" * ORDER
            options = follow[state]
        ch = rng.choice(options)
        out.append(ch)
        state = state[1:] + ch
    return "".join(out).strip() + "\n\n"


def languages() -> list[str]:
    """The codes of the non-English passages, in the order of ``index.json``."""
    index = json.loads((LANGUAGES / "index.json").read_text(encoding="utf-8"))
    return [entry["code"] for entry in index if entry["code"] != "en"]


def multilingual(size: int = 1_000_000, seed: int = 22, codes: list[str] | None = None) -> str:
    """About ``size`` characters: paragraphs of ~800 characters, the languages in turn."""
    rng = random.Random(seed)
    models = [_model((LANGUAGES / f"{code}.txt").read_text(encoding="utf-8")) for code in (codes or languages())]
    out: list[str] = []
    total = 0
    while total < size:
        for follow in models:
            part = _paragraph(follow, rng, 800)
            out.append(part)
            total += len(part)
            if total >= size:
                break
    return "".join(out)[:size]


LOCALE = Path("/usr/share/locale")


def translations(size: int = 1_000_000) -> str | None:
    """About ``size`` characters of real translated text: the message catalogs of the system's
    programs (``/usr/share/locale/*/LC_MESSAGES/*.mo``, read with the standard library's
    ``gettext``), one string from each language in turn, each string once. None when the system
    has no catalogs (then :func:`multilingual` stands in)."""
    import gettext

    folders = sorted(p for p in LOCALE.glob("*") if (p / "LC_MESSAGES").is_dir() and not p.name.startswith("en"))
    if not folders:
        return None
    quota = 2 * size // len(folders) + 1
    per_language: list[list[str]] = []
    seen: set[str] = set()
    for folder in folders:
        texts: list[str] = []
        have = 0
        for path in sorted((folder / "LC_MESSAGES").glob("*.mo")):
            if have >= quota:
                break
            try:
                with open(path, "rb") as f:
                    catalog = gettext.GNUTranslations(f)._catalog  # noqa: SLF001 - the parsed messages
            except (OSError, ValueError, IndexError, LookupError, UnicodeDecodeError):  # one gettext cannot read
                continue
            for key, value in catalog.items():
                if key and isinstance(value, str) and value and value != key and value not in seen:
                    seen.add(value)
                    texts.append(value + "\n")
                    have += len(value) + 1
        if texts:
            per_language.append(texts)
    out: list[str] = []
    total = 0
    for row in range(max(map(len, per_language), default=0)):
        for texts in per_language:
            if row < len(texts):
                out.append(texts[row])
                total += len(texts[row])
        if total >= size:
            break
    text = "".join(out)[:size]
    return text if len(text) >= size // 2 else None


def fresh_multilingual(size: int = 1_000_000) -> str:
    """Real translations when the system has them, else the generated :func:`multilingual`."""
    return translations(size) or multilingual(size)
