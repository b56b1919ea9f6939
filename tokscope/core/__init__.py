"""tokscope's core: the tokenizer pipeline of every kind tokscope reads, and everything computed
from it. Standard library and ``regex`` only (and, for chat templates, ``jinja2`` in its sandbox);
nothing here imports Textual, Rich or tiktoken. Plain data in, frozen dataclasses out; progress by
callback, cancellation by ``threading.Event``.

The folders follow Hugging Face ``tokenizers``' pipeline, each importing only the ones below it
(an import-linter ``layers`` contract in pyproject.toml checks the order):

=================  ==============================================================================
``text/``          types, errors, aligned normalized text, the byte alphabet, display, Unicode
``patterns/``      the regex guard, Oniguruma translation, tiktoken's patterns
``normalizers/``   one module per family (unicode, bert, strip, replace, ...); ``from_json``
``pre_tokenizers/`` one module per family; ``from_json``
``models/``        one module per kind: ranks BPE, merge-list BPE, WordPiece, Unigram, WordLevel,
                   and their shared base (``base.py``)
``added_tokens/``, ``processors/``, ``decoders/``   added tokens, templates, decoders
``tokenizer/``     the stage protocols (``stages.py``), the ``Tokenizer``, tiktoken's API
``formats/``       every reader and writer of tokenizer files, and the sniffing table
``document/``      the incremental document, its scan and block tables, cuts, streaming
``explain/``       why a chunk became its tokens (every kind), merge trees, facts, search
``insights/``, ``train/``, ``chat/``   stats and compare, training, chat formats and counts
``reference.py``   slow, obviously correct oracles the tests compare against
=================  ==============================================================================

Where a new thing goes: a normalizer or pre-tokenizer is a module in its stage's folder with a line
in that folder's ``from_json``; a model kind is a module in ``models/`` with a line in
``formats/tokenizer_json_models.py``; a file format is a module in ``formats/`` with a row in
``formats/sniff.py``.

The names below are imported on first use (``from tokscope.core import Tokenizer``), so importing
one small module of the core does not load the whole pipeline.
"""

from __future__ import annotations

__all__ = [
    "CancelledError", "Chunk", "DisallowedSpecialError", "Parents", "Piece", "Token", "Tokenizer", "TokscopeError",
    "UnknownTokenError", "byte_kind", "fix_surrogates", "is_continuation", "is_whole_utf8", "merge",
]


def __getattr__(name: str) -> object:
    # static imports (the layer contracts see them), run on first use of a name
    if name == "merge":
        from .models import ranks as module
    elif name in ("CancelledError", "DisallowedSpecialError", "TokscopeError", "UnknownTokenError"):
        from .text import errors as module
    elif name in ("Tokenizer", "fix_surrogates"):
        from .tokenizer import tokenizer as module
    elif name in ("Chunk", "Parents", "Piece", "Token", "byte_kind", "is_continuation", "is_whole_utf8"):
        from .text import types as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)
