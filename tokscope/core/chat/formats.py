"""The chat formats a conversation can be rendered in, and which one fits a tokenizer.

``chatml``
    OpenAI's ``<|im_start|>role<|im_sep|>content<|im_end|>`` as the web token counters write it.
    cl100k_base and o200k_base have no such special tokens: the strings are counted as the text
    they are (and the result says so), unless ``ChatMLFormat(assume_ids=True)`` counts them as
    the single ids those counters assume.
``harmony``
    gpt-oss's format, token for token as ``openai-harmony`` renders it (see :class:`HarmonyFormat`
    for how chat messages map to harmony messages).
``llama3``
    ``<|begin_of_text|><|start_header_id|>role<|end_header_id|>\\n\\ncontent<|eot_id|>``.
``template``
    any Hugging Face chat template, rendered as ``transformers`` does (:mod:`.templates`).

Each format is a frozen dataclass of its options; :func:`resolve_format` turns a name into one,
:func:`chat_formats` says how well each fits a tokenizer and :func:`pick_format` picks one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import harmony as hm
from .templates import ChatTemplate, RenderLimits
from ..text.errors import TokscopeError


class ChatFormatError(TokscopeError, ValueError):
    """A chat format that does not exist or cannot be used as asked."""


FORMAT_NAMES = ("chatml", "harmony", "llama3", "template")

#: the ids tiktokenizer and similar web counters give the ChatML strings (not in the published files)
CHATML_ASSUMED_IDS: dict[str, dict[str, int]] = {
    "cl100k_base": {"<|im_start|>": 100264, "<|im_end|>": 100265, "<|im_sep|>": 100266},
    "o200k_base": {"<|im_start|>": 200264, "<|im_end|>": 200265, "<|im_sep|>": 200266},
}


@dataclass(frozen=True, slots=True)
class ChatMLFormat:
    """OpenAI ChatML as web token counters write it: ``<|im_start|>role<|im_sep|>content<|im_end|>``
    per message, ``<|im_start|>assistant<|im_sep|>`` as the generation prompt.

    ``assume_ids``: count the three strings as the single ids the counters assume for
    cl100k_base/o200k_base (:data:`CHATML_ASSUMED_IDS`) instead of as text. Tools, tool calls
    and names have no published rendering; tokscope writes tools as harmony does (the TypeScript
    namespace) after the first system message, calls as ``assistant to=functions.NAME`` turns and
    names as ``role name=NAME``, and warns that the count is approximate.
    """

    assume_ids: bool = False
    name: str = field(default="chatml", init=False)


@dataclass(frozen=True, slots=True)
class HarmonyFormat:
    """Harmony (gpt-oss), matching ``openai-harmony``'s renderer token for token.

    Chat messages map to harmony messages so:

    * a harmony system message (model identity, knowledge cutoff, optional current date,
      reasoning effort, required channels, and the line about function calls when there are
      tools) always comes first; it is part of the first message's span when that is a
      ``system`` message, else of the prefix;
    * every ``system`` or ``developer`` message becomes a developer message ``# Instructions``
      with its text (as the openai-harmony examples do); the tool definitions (``# Tools``, the
      ``functions`` namespace) go into the first one when it comes before any other message,
      else into a developer message of their own after the system message (prefix);
    * ``user`` → ``user``; ``name`` → ``user:NAME``; several text parts → several texts;
    * ``assistant``: its reasoning → an ``analysis`` message; its content → ``final``, or
      ``commentary`` (a preamble) when it has tool calls, or the message's own ``channel``;
      each tool call → ``assistant to=functions.NAME<|channel|>commentary <|constrain|>json``
      with the arguments, ending in ``<|call|>``;
    * ``tool`` → ``functions.NAME to=assistant<|channel|>commentary``, NAME found from
      ``tool_call_id`` among the earlier calls (or the message's ``name``);
    * as the renderer does by default (``drop_analysis``), analysis messages before the first
      final message are dropped when the last assistant message is final;
    * the generation prompt is ``<|start|>assistant``; with ``final_return`` and no generation
      prompt a closing final message ends in ``<|return|>`` (the renderer's training form).
    """

    model_identity: str | None = hm.DEFAULT_IDENTITY
    knowledge_cutoff: str | None = hm.DEFAULT_KNOWLEDGE_CUTOFF
    current_date: str | None = None
    reasoning_effort: str | None = "medium"
    drop_analysis: bool = True
    tool_content_type: str | None = "<|constrain|>json"
    final_return: bool = False
    name: str = field(default="harmony", init=False)


@dataclass(frozen=True, slots=True)
class Llama3Format:
    """Llama 3's headers: ``<|begin_of_text|>``, then per message
    ``<|start_header_id|>role<|end_header_id|>\\n\\n`` + the trimmed content + ``<|eot_id|>``;
    the generation prompt is the assistant header. Tool results use the ``ipython`` role; a tool
    call is written as Llama 3.1 writes it (``{"name": ..., "parameters": ...}``, one turn per
    call, after the message's text if it has any); tool definitions go into the system header as
    Llama 3.1's template writes them when they are not in the first user message (without its
    date lines)."""

    name: str = field(default="llama3", init=False)


@dataclass(frozen=True, slots=True)
class TemplateFormat:
    """A Hugging Face chat template, rendered as ``apply_chat_template`` does.

    ``template_name`` picks one of several templates (default: ``tool_use`` with tools, else
    ``default``); ``variables`` adds template variables (``enable_thinking``, ``date_string``...)
    over the special-token ones; ``documents`` is passed as ``documents``.
    ``parse_tool_arguments`` turns tool-call arguments given as JSON text into objects (as some
    inference servers do before rendering); off by default, as ``apply_chat_template`` passes
    the string through. ``limits`` is the render's budget (default:
    :func:`~.templates.scaled_limits` of the conversation, with ``timeout`` seconds when given).
    ``tokenizer_adds_bos``
    says whether the model's runtime tokenizer adds a BOS token of its own (default: the config's
    ``add_bos_token``, else asked of the tokenizer); it only feeds the doubled-BOS warning.
    """

    template: ChatTemplate
    template_name: str | None = None
    variables: Mapping[str, Any] = field(default_factory=dict)
    documents: Sequence[Mapping[str, Any]] | None = None
    parse_tool_arguments: bool = False
    tokenizer_adds_bos: bool | None = None
    limits: RenderLimits | None = None
    timeout: float | None = None
    name: str = field(default="template", init=False)


ChatFormat = ChatMLFormat | HarmonyFormat | Llama3Format | TemplateFormat


#: the harmony options a template-style variable may set (``reasoning_effort=high``...)
HARMONY_VARIABLES = ("reasoning_effort", "model_identity", "knowledge_cutoff", "current_date", "drop_analysis",
                     "final_return", "tool_content_type")
#: the reasoning efforts gpt-oss knows
REASONING_EFFORTS = ("low", "medium", "high")


def _harmony_with(fmt: HarmonyFormat, variables: Mapping[str, Any]) -> HarmonyFormat:
    """``fmt`` with the options ``variables`` name (each of :data:`HARMONY_VARIABLES`).

    >>> _harmony_with(HarmonyFormat(), {"reasoning_effort": "high"}).reasoning_effort
    'high'
    >>> _harmony_with(HarmonyFormat(), {"enable_thinking": False})
    Traceback (most recent call last):
    ...
    tokscope.core.chat.formats.ChatFormatError: the harmony format has no variable 'enable_thinking'; it takes reasoning_effort, model_identity, knowledge_cutoff, current_date, drop_analysis, final_return, tool_content_type
    """
    for name, value in variables.items():
        if name not in HARMONY_VARIABLES:
            raise ChatFormatError(f"the harmony format has no variable {name!r}; it takes {', '.join(HARMONY_VARIABLES)}")
        if name in ("drop_analysis", "final_return"):
            if not isinstance(value, bool):
                raise ChatFormatError(f"harmony's {name} is true or false, not {value!r}")
        elif value is not None and not isinstance(value, str):
            raise ChatFormatError(f"harmony's {name} is a string, not {value!r}")
        if name == "reasoning_effort" and value is not None and value.lower() not in REASONING_EFFORTS:
            raise ChatFormatError(f"harmony's reasoning_effort is one of {', '.join(REASONING_EFFORTS)}, not {value!r}")
    return dataclasses.replace(fmt, **dict(variables))


def resolve_format(fmt: Any, tokenizer: Any, template: ChatTemplate | None, *,
                   variables: Mapping[str, Any] | None = None, parse_tool_arguments: bool | None = None,
                   timeout: float | None = None) -> ChatFormat:
    """The format object for ``fmt`` (a name of :data:`FORMAT_NAMES`, ``"auto"`` or a format),
    with options: ``variables`` are a template's extra variables, or harmony's options
    (:data:`HARMONY_VARIABLES`); ChatML and Llama 3 take none. ``parse_tool_arguments`` and
    ``timeout`` (the render's time limit in seconds) apply to templates only.

    >>> from tokscope.sources import registry
    >>> resolve_format("auto", registry.load("o200k_harmony"), None, variables={"reasoning_effort": "low"})
    HarmonyFormat(model_identity='You are ChatGPT, a large language model trained by OpenAI.', knowledge_cutoff='2024-06', current_date=None, reasoning_effort='low', drop_analysis=True, tool_content_type='<|constrain|>json', final_return=False, name='harmony')
    >>> resolve_format("llama3", None, None, variables={"x": 1})
    Traceback (most recent call last):
    ...
    tokscope.core.chat.formats.ChatFormatError: the llama3 format takes no variables (they are for chat templates and harmony)
    """
    if not isinstance(fmt, (ChatMLFormat, HarmonyFormat, Llama3Format, TemplateFormat)):
        if fmt is None or fmt == "auto":
            fmt = pick_format(tokenizer, template)
        if fmt == "chatml":
            fmt = ChatMLFormat()
        elif fmt == "harmony":
            fmt = HarmonyFormat()
        elif fmt == "llama3":
            fmt = Llama3Format()
        elif fmt == "template":
            if template is None:
                raise ChatFormatError("the template format needs a chat template (tokenizer_config.json or chat_template.jinja)")
            fmt = TemplateFormat(template)
        else:
            raise ChatFormatError(f"unknown chat format {fmt!r}; choose one of {', '.join(FORMAT_NAMES)} or auto")
    if isinstance(fmt, TemplateFormat):
        changes: dict[str, Any] = {}
        if variables:
            changes["variables"] = {**dict(fmt.variables), **dict(variables)}
        if parse_tool_arguments is not None:
            changes["parse_tool_arguments"] = parse_tool_arguments
        if timeout is not None:
            changes["timeout"] = timeout
        return dataclasses.replace(fmt, **changes) if changes else fmt
    if variables:
        if isinstance(fmt, HarmonyFormat):
            return _harmony_with(fmt, variables)
        raise ChatFormatError(f"the {fmt.name} format takes no variables (they are for chat templates and harmony)")
    return fmt


FORMAT_TOKENS = {
    "chatml": ("<|im_start|>", "<|im_sep|>", "<|im_end|>"),
    "harmony": ("<|start|>", "<|message|>", "<|end|>", "<|channel|>", "<|call|>", "<|return|>", "<|constrain|>"),
    "llama3": ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"),
}

FORMAT_DESCRIPTIONS = {
    "chatml": "OpenAI ChatML as web token counters write it",
    "harmony": "gpt-oss harmony, as openai-harmony renders it",
    "llama3": "Llama 3 header format",
    "template": "the model's own Hugging Face chat template",
}


@dataclass(frozen=True, slots=True)
class FormatInfo:
    """One format for one tokenizer: ``usable`` (it can be rendered), ``exact`` (its control
    strings are all single special tokens here), ``missing`` (those that are not) and a note."""

    name: str
    description: str
    usable: bool
    exact: bool
    missing: tuple[str, ...]
    note: str


def chat_formats(tokenizer: Any, template: ChatTemplate | None = None) -> tuple[FormatInfo, ...]:
    """Every chat format and how well it fits ``tokenizer`` (the template format needs ``template``).

    >>> from tokscope.sources import registry
    >>> [(f.name, f.exact) for f in chat_formats(registry.load("o200k_harmony"))][:3]
    [('chatml', False), ('harmony', True), ('llama3', False)]
    """
    specials = dict(getattr(tokenizer, "special_tokens", {}) or {})
    name = getattr(tokenizer, "name", "")
    out = []
    for fmt, strings in FORMAT_TOKENS.items():
        missing = tuple(s for s in strings if s not in specials)
        if fmt == "chatml" and name in CHATML_ASSUMED_IDS and missing:
            note = "control strings counted as text (or as assumed ids with assume_ids)"
        elif missing:
            note = f"{len(missing)} of its control strings are not special tokens here; counted as text"
        else:
            note = "all control strings are special tokens"
        out.append(FormatInfo(fmt, FORMAT_DESCRIPTIONS[fmt], True, not missing, missing, note))
    if template is None:
        out.append(FormatInfo("template", FORMAT_DESCRIPTIONS["template"], False, False, (), "no chat template given"))
    else:
        names = ", ".join(template.names)
        out.append(FormatInfo("template", FORMAT_DESCRIPTIONS["template"], True, True, (), f"templates: {names}"))
    return tuple(out)


def pick_format(tokenizer: Any, template: ChatTemplate | None = None) -> str:
    """The format a tokenizer's model most likely uses: its own template when given, else the
    format whose control tokens it has, else ``chatml`` (OpenAI's encodings and anything else).

    >>> from tokscope.sources import registry
    >>> pick_format(registry.load("o200k_harmony")), pick_format(registry.load("cl100k_base"))
    ('harmony', 'chatml')
    """
    if template is not None:
        return "template"
    specials = getattr(tokenizer, "special_tokens", {}) or {}
    for fmt in ("harmony", "llama3", "chatml"):
        if all(s in specials for s in FORMAT_TOKENS[fmt][:3]):
            return fmt
    return "chatml"
