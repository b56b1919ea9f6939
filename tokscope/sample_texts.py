"""The sample texts the project ships (``samples/`` in the repository, ``tokscope.samples`` installed)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path


@cache
def samples_dir() -> Path:
    """The folder holding the samples, in a checkout or in an installed package."""
    here = Path(__file__).resolve().parent
    checkout = here.parent / "samples"  # a source checkout: samples/ beside the package
    if (checkout / "default.txt").is_file():
        return checkout
    return here / "samples"  # installed: packaged as tokscope.samples


def read_sample(name: str) -> str:
    """One sample's text, e.g. ``read_sample("default.txt")``."""
    return (samples_dir() / name).read_text(encoding="utf-8")


def languages() -> list[dict[str, str]]:
    """The multi-language passage's languages: ``code``, ``name``, ``script`` (English first)."""
    return json.loads((samples_dir() / "languages" / "index.json").read_text(encoding="utf-8"))


def language_text(code: str) -> str:
    return (samples_dir() / "languages" / f"{code}.txt").read_text(encoding="utf-8")
