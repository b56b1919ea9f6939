"""Conversations as a model sees them: render chat messages in a model's format and count them.

:func:`count_chat` takes a chat-completions conversation and a tokenizer and returns a
:class:`ChatCount`. The work is done in stages, one module each:

``conversation``   check and freeze the input (:func:`parse_conversation`)
``formats``        the formats (ChatML, harmony, Llama 3, a Hugging Face template) and which fits
``templates``      Hugging Face chat templates: choose one, render it sandboxed, locate the content
``deadline``       stop a runaway template render at its time limit (or when cancelled)
``harmony``        the text harmony writes for system/developer messages and tool definitions
``parts``          a rendering as parts (template text, special tokens, content, tool definitions)
``render_chatml``, ``render_llama3``, ``render_harmony``, ``render_template``  one renderer per format
``attribution``    who owns each piece of a rendered template (prefix, a message, the suffix)
``encoding``       parts to ids, with offsets, kinds and owners
``warnings``       what a reader of the count should know
``results``        the frozen result types
``count``          :func:`count_chat`, the whole path
``context``        context sizes of well-known models

A new chat format is a dataclass in ``formats``, a ``render_NAME`` module building parts, and one
line in ``count``'s dispatcher.
"""

from types import ModuleType
from typing import Any

#: each public name and the module (in this package) that defines it; a name is imported on first
#: use, so importing one module of the package (``context``, by a model loader) does not import the
#: template sandbox (jinja2) with the rest
_WHERE = {
    **dict.fromkeys(("CONTEXT_WINDOWS", "ENCODING_MODELS", "ContextWindow", "context_window", "context_windows_for"),
                    "context"),
    **dict.fromkeys(("KNOWN_ROLES", "TEXT_PART_TYPES", "ChatInputError", "Conversation", "Message", "Tool", "ToolCall",
                     "parse_conversation"), "conversation"),
    **dict.fromkeys(("ADD_GENERATION_PROMPT", "count_chat"), "count"),
    **dict.fromkeys(("CHATML_ASSUMED_IDS", "FORMAT_NAMES", "ChatFormatError", "ChatMLFormat", "FormatInfo",
                     "HarmonyFormat", "Llama3Format", "TemplateFormat", "chat_formats", "pick_format",
                     "resolve_format"), "formats"),
    **dict.fromkeys(("CONTENT", "MIXED", "TEMPLATE", "TOOLS", "ChatCount", "ChatWarning", "FormatToken", "MessageCount",
                     "Span"), "results"),
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (then kept as this package's own).

    >>> import tokscope.core.chat as chat
    >>> chat.count_chat.__module__, chat.Span.__module__
    ('tokscope.core.chat.count', 'tokscope.core.chat.results')
    """
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_module(where), name)
    globals()[name] = value
    return value


def _module(where: str) -> ModuleType:
    """One module of this package, imported statically (so the import contracts see it)."""
    if where == "context":
        from . import context as module
    elif where == "conversation":
        from . import conversation as module
    elif where == "count":
        from . import count as module
    elif where == "formats":
        from . import formats as module
    else:
        from . import results as module
    return module


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


__all__ = [
    "ChatInputError", "ChatFormatError", "ToolCall", "Tool", "Message", "Conversation", "parse_conversation",
    "KNOWN_ROLES", "TEXT_PART_TYPES", "CHATML_ASSUMED_IDS",
    "ChatMLFormat", "HarmonyFormat", "Llama3Format", "TemplateFormat", "FORMAT_NAMES",
    "Span", "MessageCount", "FormatToken", "ChatWarning", "ChatCount", "count_chat",
    "FormatInfo", "chat_formats", "pick_format", "resolve_format", "ADD_GENERATION_PROMPT",
    "ContextWindow", "context_window", "context_windows_for", "CONTEXT_WINDOWS", "ENCODING_MODELS",
    "TEMPLATE", "CONTENT", "MIXED", "TOOLS",
]
