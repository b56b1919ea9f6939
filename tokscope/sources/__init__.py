"""Turn outside vocabularies into core tokenizers (OpenAI encodings, saved files)."""

from .builtin import SourceError
from .registry import DEFAULT_ENCODING, EncodingInfo, list_encodings, load

__all__ = ["DEFAULT_ENCODING", "EncodingInfo", "SourceError", "list_encodings", "load"]
