"""The errors of the sources layer (one line each, safe to print)."""

from __future__ import annotations

from ..core.text.errors import TokscopeError


class SourceError(TokscopeError):
    """An encoding that cannot be loaded: unknown name, missing or corrupt files."""


class BadNameError(SourceError):
    """A name that cannot be a saved tokenizer's (see :func:`tokscope.sources.names.check_saved_name`)."""
