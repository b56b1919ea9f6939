"""Names and paths to tokenizers, offline: where tokscope finds the vocabularies it explores.

- :mod:`.registry`: the order a name is tried in (built-in, open model, saved, file or folder);
- :mod:`.builtin` and :mod:`.tiktoken_adapter` (the only module importing tiktoken): the OpenAI
  encodings; :mod:`.names`: their names and aliases;
- :mod:`.open_models`: open models' files recognised by sha256; :mod:`.model_files`: a
  ``tokenizer.json``, a folder, a chat template beside it; :mod:`.hub`: the Hugging Face cache
  layout, read only; :mod:`.cache`: parsed files kept by sha256; :mod:`.saved`: tokenizers
  trained here.

The file formats themselves are read by :mod:`tokscope.core.formats`; the user's text is read by
:mod:`tokscope.inputs`. The names below are imported on first use.
"""

from __future__ import annotations

__all__ = ["DEFAULT_ENCODING", "EncodingInfo", "SourceError", "list_encodings", "load"]


def __getattr__(name: str) -> object:
    # static imports (the layer contracts see them), run on first use of a name
    if name == "SourceError":
        from . import builtin as module
    elif name in ("DEFAULT_ENCODING", "EncodingInfo", "list_encodings", "load"):
        from . import registry as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)
