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

from .context import CONTEXT_WINDOWS, ENCODING_MODELS, ContextWindow, context_window, context_windows_for
from .conversation import (KNOWN_ROLES, TEXT_PART_TYPES, ChatInputError, Conversation, Message, Tool, ToolCall,
                           parse_conversation)
from .count import ADD_GENERATION_PROMPT, count_chat
from .formats import (CHATML_ASSUMED_IDS, FORMAT_NAMES, ChatFormatError, ChatMLFormat, FormatInfo, HarmonyFormat,
                      Llama3Format, TemplateFormat, chat_formats, pick_format, resolve_format)
from .results import CONTENT, MIXED, TEMPLATE, TOOLS, ChatCount, ChatWarning, FormatToken, MessageCount, Span

__all__ = [
    "ChatInputError", "ChatFormatError", "ToolCall", "Tool", "Message", "Conversation", "parse_conversation",
    "KNOWN_ROLES", "TEXT_PART_TYPES", "CHATML_ASSUMED_IDS",
    "ChatMLFormat", "HarmonyFormat", "Llama3Format", "TemplateFormat", "FORMAT_NAMES",
    "Span", "MessageCount", "FormatToken", "ChatWarning", "ChatCount", "count_chat",
    "FormatInfo", "chat_formats", "pick_format", "resolve_format", "ADD_GENERATION_PROMPT",
    "ContextWindow", "context_window", "context_windows_for", "CONTEXT_WINDOWS", "ENCODING_MODELS",
    "TEMPLATE", "CONTENT", "MIXED", "TOOLS",
]
