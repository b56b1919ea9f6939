"""Installed packages' folders, found without importing them: the registry packages that carry
official vocabulary files (GPT-2's, cl100k's, o200k's; Meta's, Qwen's and Mistral's open models).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


def package_dir(package: str) -> Path | None:
    """A package's folder, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])
