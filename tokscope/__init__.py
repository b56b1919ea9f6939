"""tokscope: a terminal explorer for how language models cut text into tokens.

From Python, tokscope offers tiktoken's entry points; the tokenizers they return have tiktoken's
``Encoding`` API (see :mod:`tokscope.core.tokenizer.tiktoken_api`)::

    import tokscope
    enc = tokscope.get_encoding("o200k_base")      # or an alias, a saved tokenizer, a path
    enc.encode("hello world"), enc.encode_batch(["a", "b"])
    tokscope.encoding_for_model("gpt-4o").name     # 'o200k_base'

Everything is imported on first use, so ``import tokscope`` stays cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing would add to the start-up time of `import tokscope`
if TYPE_CHECKING:
    from .core.tokenizer.tokenizer import Tokenizer


__all__ = ["__version__", "encoding_for_model", "encoding_name_for_model", "get_encoding", "list_encoding_names"]


def get_encoding(encoding_name: str) -> Tokenizer:
    """The tokenizer for any name or path ``-e`` takes: an OpenAI encoding (``o200k_base``, or an
    alias such as ``o200k``), a saved tokenizer's name, or a tokenizer file (loaded once per process,
    as ``tiktoken.get_encoding``). Unknown names raise ``ValueError``, as tiktoken does; a known
    encoding whose files cannot be found raises tokscope's ``SourceError``."""
    from .sources.registry import SourceError, builtin_names, canonical_name, load

    try:
        return load(encoding_name)
    except SourceError as exc:
        if canonical_name(encoding_name) in builtin_names():
            raise  # a known encoding whose files are missing: tokscope's own error says how to get them
        raise ValueError(str(exc)) from exc


def list_encoding_names() -> list[str]:
    """The OpenAI encodings tokscope knows (those of the installed tiktoken's registry)."""
    from .sources.names import builtin_names

    return list(builtin_names())


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding a model uses (``gpt-4o`` -> ``o200k_base``), from the installed
    tiktoken's model table; ``KeyError`` for a model it does not know."""
    from .sources.tiktoken_adapter import encoding_name_for_model as lookup

    return lookup(model_name)


def encoding_for_model(model_name: str) -> Tokenizer:
    """The tokenizer of the encoding a model uses (``KeyError`` for a model it does not know)."""
    return get_encoding(encoding_name_for_model(model_name))


def __getattr__(name: str) -> str:
    # the version is read on first use, so that ``import tokscope`` loads no module of the package
    if name == "__version__":
        from .version import __version__

        return __version__
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
