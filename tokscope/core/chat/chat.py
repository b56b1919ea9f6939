"""Conversations as a model sees them: render chat messages in a model's format and count them.

Input is what a chat-completions API takes: a list of messages (``role``; ``content`` as a string,
``None`` or a list of ``{"type": "text", "text": ...}`` parts; ``name``; an assistant's
``tool_calls``; a tool message's ``tool_call_id``; an assistant's reasoning as
``reasoning_content``, ``reasoning`` or ``thinking``) and ``tools`` (JSON-schema function
definitions). :func:`parse_conversation` checks it and :func:`count_chat` renders it in one of
these formats and encodes it with a tokscope tokenizer:

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
    any Hugging Face chat template, rendered as ``transformers`` does (:mod:`.chat_template`).

The result (:class:`ChatCount`) holds the rendered text, the ids, a kind for every token (template,
content, both, tool definitions), spans that tile the ids (a prefix, one or more per message, the
suffix with the generation prompt), per message the content and template token counts, the
overhead, the cost of the tool definitions, and warnings.

How the ids are made: the rendering is a list of parts (template text, special tokens, message
content). Template special tokens become their ids; all other text is encoded as ordinary text
between them, so the ids equal encoding the whole rendered text with the template's special
tokens allowed (harmony instead encodes piece by piece, as its renderer does). Content is never
read as special tokens, even when it spells one: the warnings say so and by how much a runtime that
matches special tokens in text would differ. Token kinds and spans come from the tokens' character
offsets against the parts; a token that the tokenizer merged across a template/content boundary is
marked ``m`` (both) and counted as content.
"""

from __future__ import annotations

import bisect
import inspect
import json
import re
import threading
import types
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from . import harmony as hm
from .templates import (DEFAULT_LIMITS, REASONING_KEYS, ChatTemplate, RenderLimits, locate_content, render_template,
                            strings_of)
from .context import CONTEXT_WINDOWS, ENCODING_MODELS, ContextWindow, context_window, context_windows_for
from ..text.errors import CancelledError, TokscopeError
from ..tokenizer.tokenizer import fix_surrogates

__all__ = [
    "ChatInputError", "ChatFormatError", "ToolCall", "Tool", "Message", "Conversation", "parse_conversation",
    "ChatMLFormat", "HarmonyFormat", "Llama3Format", "TemplateFormat", "FORMAT_NAMES",
    "Span", "MessageCount", "FormatToken", "ChatWarning", "ChatCount", "count_chat",
    "FormatInfo", "chat_formats", "pick_format",
    "ContextWindow", "context_window", "context_windows_for", "CONTEXT_WINDOWS", "ENCODING_MODELS",
    "TEMPLATE", "CONTENT", "MIXED", "TOOLS",
]


class ChatInputError(TokscopeError, ValueError):
    """A conversation that is not a valid chat-completions ``messages`` list (or ``tools``)."""


class ChatFormatError(TokscopeError, ValueError):
    """A chat format that does not exist or cannot be used as asked."""


# ----- input -----------------------------------------------------------------------------------

#: roles the chat-completions API knows
KNOWN_ROLES = ("system", "developer", "user", "assistant", "tool")
#: content part types that carry text, and the key that holds it
TEXT_PART_TYPES = {"text": "text", "input_text": "text", "output_text": "text", "refusal": "refusal"}


def _freeze(value: Any) -> Any:
    """JSON data made read-only: dicts become mapping proxies and lists tuples.

    >>> f = _freeze({"a": [1, {"b": "c"}]})
    >>> f["a"][1]["b"], type(f["a"]).__name__
    ('c', 'tuple')
    """
    if isinstance(value, Mapping):
        return types.MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    """The plain dicts and lists back from :func:`_freeze` (fresh copies a template may see).

    >>> _thaw(_freeze({"a": [1, {"b": None}]}))
    {'a': [1, {'b': None}]}
    """
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def _plain(value: Any, where: str) -> Any:
    """Check that ``value`` is JSON data (fixing lone surrogates in strings) and copy it."""
    if value is None or type(value) in (bool, int, float):
        return value
    if isinstance(value, str):
        return fix_surrogates(str.__str__(value))
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ChatInputError(f"{where} has a key that is not a string ({k!r})")
            out[k] = _plain(v, where)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, where) for v in value]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    raise ChatInputError(f"{where} holds a {type(value).__name__}, which is not JSON data")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call of an assistant message; ``arguments`` is its JSON text as given (a dict
    is written as JSON)."""

    id: str | None
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Tool:
    """One function tool: its name, description and JSON-schema ``parameters`` (read-only), and
    the definition as given (``raw``, what a chat template sees)."""

    name: str
    description: str
    parameters: Any
    raw: Any = field(repr=False)


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message. ``parts`` are its text parts (a string content is one part; ``None`` is
    none); ``raw`` is the message as given (read-only), what a chat template sees."""

    role: str
    parts: tuple[str, ...]
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    reasoning: str | None = None
    raw: Any = field(default=None, repr=False)

    @property
    def content(self) -> str:
        """The text parts joined (empty when there is no content)."""
        return "".join(self.parts)


@dataclass(frozen=True, slots=True)
class Conversation:
    """Checked messages and tools (see :func:`parse_conversation`)."""

    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()


def _json_loads(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ChatInputError(f"{what} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None


def _str_field(msg: Mapping[str, Any], key: str, where: str) -> str | None:
    value = msg.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ChatInputError(f"{where}: '{key}' must be a string, not {type(value).__name__}")
    return value


def _parse_parts(content: Any, where: str) -> tuple[str, ...]:
    if content is None:
        return ()
    if isinstance(content, str):
        return (content,)
    if isinstance(content, list):
        parts = []
        for j, part in enumerate(content, 1):
            if isinstance(part, str):
                parts.append(part)
                continue
            if not isinstance(part, Mapping):
                raise ChatInputError(f"{where}: content part {j} is a {type(part).__name__}, not an object")
            kind = part.get("type")
            if kind is None:
                raise ChatInputError(f"{where}: content part {j} has no 'type'")
            key = TEXT_PART_TYPES.get(kind)
            if key is None:
                raise ChatInputError(f"{where}: content part {j} is of type {kind!r}; tokscope counts text parts only")
            text = part.get(key)
            if not isinstance(text, str):
                raise ChatInputError(f"{where}: content part {j} ({kind}) has no '{key}' string")
            parts.append(text)
        return tuple(parts)
    raise ChatInputError(f"{where}: content must be a string, a list of parts or null, not {type(content).__name__}")


def _parse_tool_calls(value: Any, where: str) -> tuple[ToolCall, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ChatInputError(f"{where}: 'tool_calls' must be a list")
    calls = []
    for j, call in enumerate(value, 1):
        here = f"{where}, tool call {j}"
        if not isinstance(call, Mapping):
            raise ChatInputError(f"{here} is not an object")
        function = call.get("function", call)
        if not isinstance(function, Mapping):
            raise ChatInputError(f"{here}: 'function' must be an object")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ChatInputError(f"{here} has no function name")
        arguments = function.get("arguments", "")
        if arguments is None:
            arguments = ""
        if not isinstance(arguments, str):
            if not isinstance(arguments, (Mapping, list)):
                raise ChatInputError(f"{here}: 'arguments' must be JSON text or an object")
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise ChatInputError(f"{here}: 'id' must be a string")
        calls.append(ToolCall(call_id, name, arguments))
    return tuple(calls)


def _parse_tools(value: Any) -> tuple[Tool, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ChatInputError("'tools' must be a list of function definitions")
    tools = []
    for i, raw in enumerate(value, 1):
        where = f"tool {i}"
        raw = _plain(raw, where)
        if not isinstance(raw, dict):
            raise ChatInputError(f"{where} is not an object")
        function = raw.get("function", raw) if raw.get("type", "function") == "function" else None
        if not isinstance(function, dict):
            raise ChatInputError(f"{where} is not a function definition (type {raw.get('type')!r})")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ChatInputError(f"{where} has no name")
        description = function.get("description") or ""
        if not isinstance(description, str):
            raise ChatInputError(f"{where} ({name}): 'description' must be a string")
        parameters = function.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            raise ChatInputError(f"{where} ({name}): 'parameters' must be a JSON-schema object")
        tools.append(Tool(name, description, _freeze(parameters), _freeze(raw)))
    return tuple(tools)


def parse_conversation(data: Any, tools: Any = None) -> Conversation:
    """Check a conversation and return it as a :class:`Conversation`.

    ``data`` is a list of messages, an object with ``messages`` (and optionally ``tools``), their
    JSON text, or a :class:`Conversation`; ``tools`` (given here or in ``data``) is a list of
    function definitions (``{"type": "function", "function": {...}}`` or the bare function).
    Errors are one line and count messages from 1.

    >>> c = parse_conversation([{"role": "user", "content": [{"type": "text", "text": "Hi"}]}])
    >>> c.messages[0].role, c.messages[0].content
    ('user', 'Hi')
    >>> parse_conversation([{"content": "Hi"}])
    Traceback (most recent call last):
    ...
    tokscope.core.chat.chat.ChatInputError: message 1 has no 'role'
    """
    if isinstance(data, Conversation):
        return data if tools is None else Conversation(data.messages, _parse_tools(_plain(tools, "tools")))
    if isinstance(data, str):
        data = _json_loads(data, "the conversation")
    if isinstance(data, Mapping):
        if "messages" not in data:
            raise ChatInputError("a conversation object needs a 'messages' list")
        if tools is None:
            tools = data.get("tools")
        data = data["messages"]
    if not isinstance(data, (list, tuple)):
        raise ChatInputError(f"a conversation is a list of messages, not {type(data).__name__}")
    messages = []
    for i, msg in enumerate(data, 1):
        where = f"message {i}"
        if not isinstance(msg, Mapping):
            raise ChatInputError(f"{where} is a {type(msg).__name__}, not an object")
        msg = _plain(msg, where)
        role = msg.get("role")
        if role is None:
            raise ChatInputError(f"{where} has no 'role'")
        if not isinstance(role, str) or not role.strip():
            raise ChatInputError(f"{where}: 'role' must be a non-empty string")
        where = f"message {i} ({role})"
        parts = _parse_parts(msg.get("content"), where)
        reasoning = None
        for key in REASONING_KEYS:
            reasoning = _str_field(msg, key, where)
            if reasoning is not None:
                break
        messages.append(Message(
            role=role,
            parts=parts,
            name=_str_field(msg, "name", where),
            tool_calls=_parse_tool_calls(msg.get("tool_calls"), where),
            tool_call_id=_str_field(msg, "tool_call_id", where),
            reasoning=reasoning,
            raw=_freeze(msg),
        ))
    return Conversation(tuple(messages), _parse_tools(tools))


# ----- formats ---------------------------------------------------------------------------------

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
    ``parse_tool_arguments`` turns tool-call arguments given as JSON text into objects, as
    templates expect (and as inference servers do before rendering). ``tokenizer_adds_bos``
    says whether the model's runtime tokenizer adds a BOS token of its own (default: the config's
    ``add_bos_token``, else asked of the tokenizer); it only feeds the doubled-BOS warning.
    """

    template: ChatTemplate
    template_name: str | None = None
    variables: Mapping[str, Any] = field(default_factory=dict)
    documents: Sequence[Mapping[str, Any]] | None = None
    parse_tool_arguments: bool = True
    tokenizer_adds_bos: bool | None = None
    limits: RenderLimits = DEFAULT_LIMITS
    name: str = field(default="template", init=False)


ChatFormat = ChatMLFormat | HarmonyFormat | Llama3Format | TemplateFormat


# ----- results ---------------------------------------------------------------------------------

#: token kinds in :attr:`ChatCount.kinds`
TEMPLATE, CONTENT, MIXED, TOOLS = "t", "c", "m", "d"


@dataclass(frozen=True, slots=True)
class Span:
    """A run of ids owned by one part of the conversation: ``kind`` is ``prefix`` (before the
    first message: BOS, default system text, tool definitions of their own), ``message`` (then
    ``message`` is its index in the input) or ``suffix`` (the generation prompt). ``start``/
    ``end`` index the ids, ``text_start``/``text_end`` the rendered text."""

    kind: str
    message: int | None
    role: str | None
    start: int
    end: int
    text_start: int
    text_end: int
    content_tokens: int

    @property
    def tokens(self) -> int:
        return self.end - self.start

    @property
    def template_tokens(self) -> int:
        return self.tokens - self.content_tokens


@dataclass(frozen=True, slots=True)
class MessageCount:
    """One input message: its ``tokens`` (template and content), ``content_tokens`` and the
    ``spans`` ``(start, end)`` of the ids it owns (usually one; none when the format drops it or
    its template leaves no trace of it)."""

    index: int
    role: str
    tokens: int
    content_tokens: int
    spans: tuple[tuple[int, int], ...]

    @property
    def template_tokens(self) -> int:
        return self.tokens - self.content_tokens

    @property
    def rendered(self) -> bool:
        return bool(self.spans)


@dataclass(frozen=True, slots=True)
class FormatToken:
    """A control string the format wrote: its ``id`` when it is one special token of the
    tokenizer (or an assumed id), else ``None`` with ``text_tokens``, the tokens its text takes;
    ``uses`` is how often it occurs."""

    text: str
    id: int | None
    text_tokens: int
    uses: int
    assumed: bool = False

    @property
    def special(self) -> bool:
        return self.id is not None


@dataclass(frozen=True, slots=True)
class ChatWarning:
    """Something a reader of the count should know; ``message`` is one line, ``index`` the input
    message concerned (if any). The kinds:

    ``special-in-content``: message text spells a special token (encoded as text; how a
    runtime that reads special tokens in text would differ); ``format-lookalike``: it spells a
    control string the format writes as plain text here; ``not-special``: control strings of the
    format that are not special tokens of this tokenizer; ``double-bos``; ``unknown-role``;
    ``approximate``: a part of the rendering that is a guess; ``dropped``: content the format
    leaves out; ``merged``: tokens joining template text and content; ``attribution``: the
    template rewrote the messages, so the content was located by search; ``unused-tools``.
    """

    kind: str
    message: str
    index: int | None = None


@dataclass(frozen=True, slots=True)
class ChatCount:
    """A conversation rendered and counted (see the module docstring).

    ``kinds`` has one letter per id: ``t`` template, ``c`` content, ``m`` a token the tokenizer
    merged from template text and content (counted as content), ``d`` tool definitions.
    ``offsets`` are the ids' character offsets in ``text``. ``spans`` tile the ids in order;
    ``messages`` has one entry per input message. ``tool_tokens`` is how many ids the tool
    definitions add (the total with them minus the total without), ``None`` without tools.
    """

    format: str
    tokenizer: str
    text: str
    ids: tuple[int, ...]
    kinds: str
    offsets: tuple[tuple[int, int], ...]
    spans: tuple[Span, ...]
    messages: tuple[MessageCount, ...]
    format_tokens: tuple[FormatToken, ...]
    warnings: tuple[ChatWarning, ...]
    tool_tokens: int | None
    add_generation_prompt: bool

    @property
    def total(self) -> int:
        return len(self.ids)

    @property
    def content_tokens(self) -> int:
        """Tokens of message content (including tokens merged with template text)."""
        return self.kinds.count(CONTENT) + self.kinds.count(MIXED)

    @property
    def overhead(self) -> int:
        """Template tokens outside any message's content, the generation prompt included."""
        return self.total - self.content_tokens

    @property
    def exact(self) -> bool:
        """True when every control string of the format is one special token here."""
        return all(t.id is not None for t in self.format_tokens)

    def prefix_tokens(self) -> int:
        return sum(s.tokens for s in self.spans if s.kind == "prefix")

    def suffix_tokens(self) -> int:
        return sum(s.tokens for s in self.spans if s.kind == "suffix")


# ----- rendering into parts --------------------------------------------------------------------

_SPECIAL, _TEXT, _CONTENT, _TOOLS = 0, 1, 2, 3
_PREFIX = -1


@dataclass(slots=True)
class _Part:
    text: str
    kind: int
    owner: int
    new_run: bool = False


@dataclass(slots=True)
class _Rendering:
    parts: list[_Part]
    piecewise: bool = False
    warnings: list[ChatWarning] = field(default_factory=list)
    controls: list[str] = field(default_factory=list)  # the format's control strings, in order of first use
    assumed: dict[str, int] = field(default_factory=dict)
    bos: str | None = None
    adds_bos: bool | None = None
    user_strings: list[tuple[int | None, str, str]] = field(default_factory=list)  # (message, what, text)

    def add(self, text: str, kind: int, owner: int, new_run: bool = False) -> None:
        if text or kind == _SPECIAL:
            self.parts.append(_Part(text, kind, owner, new_run))

    def special(self, text: str, owner: int) -> None:
        if text not in self.controls:
            self.controls.append(text)
        self.parts.append(_Part(text, _SPECIAL, owner, True))


def _suffix_owner(conv: Conversation) -> int:
    return len(conv.messages)


def _who(conv: Conversation, i: int) -> str:
    return f"message {i + 1} ({conv.messages[i].role})"


def _unknown_role(r: _Rendering, conv: Conversation, i: int, fmt_name: str, extra: str = "") -> None:
    r.warnings.append(ChatWarning(
        "unknown-role", f"{_who(conv, i)}: the {fmt_name} format has no role {conv.messages[i].role!r}; "
        f"written as it is{extra}", i))


def _collect_user_strings(r: _Rendering, conv: Conversation) -> None:
    for i, m in enumerate(conv.messages):
        for part in m.parts:
            r.user_strings.append((i, "content", part))
        if m.reasoning:
            r.user_strings.append((i, "reasoning", m.reasoning))
        for call in m.tool_calls:
            r.user_strings.append((i, "tool call", call.name + " " + call.arguments))
    for tool in conv.tools:
        r.user_strings.append((None, "tool definition", json.dumps(_thaw(tool.raw), ensure_ascii=False)))


def _render_chatml(conv: Conversation, fmt: ChatMLFormat, tokenizer: Any, gen: bool) -> _Rendering:
    r = _Rendering([])
    if fmt.assume_ids:
        name = getattr(tokenizer, "name", "")
        ids = CHATML_ASSUMED_IDS.get(name)
        if ids is None:
            raise ChatFormatError(f"no assumed ChatML ids for {name or 'this tokenizer'}; "
                                  f"they are known for {', '.join(CHATML_ASSUMED_IDS)}")
        r.assumed = dict(ids)
    tools_text = hm.tools_section([(t.name, t.description, _thaw(t.parameters)) for t in conv.tools]) if conv.tools else None
    approximate = bool(conv.tools)
    first = conv.messages[0] if conv.messages else None
    tools_in_first = tools_text is not None and first is not None and first.role in ("system", "developer")

    def block(owner: int, header: str, body: list[tuple[str, int]]) -> None:
        r.special("<|im_start|>", owner)
        r.add(header, _TEXT, owner)
        r.special("<|im_sep|>", owner)
        for text, kind in body:
            r.add(text, kind, owner)
        r.special("<|im_end|>", owner)

    if tools_text is not None and not tools_in_first:
        block(_PREFIX, "system", [(tools_text, _TOOLS)])
    for i, m in enumerate(conv.messages):
        if m.role not in KNOWN_ROLES:
            _unknown_role(r, conv, i, "chatml")
        header = m.role + (f" name={m.name}" if m.name else "")
        approximate = approximate or bool(m.name) or bool(m.tool_calls) or m.role == "tool"
        body = [(p, _CONTENT) for p in m.parts]
        if i == 0 and tools_in_first:
            body.append(("\n\n", _TEXT))
            body.append((tools_text, _TOOLS))
        if m.parts or not m.tool_calls or (i == 0 and tools_in_first):
            block(i, header, body)
        for call in m.tool_calls:
            block(i, f"{m.role} to=functions.{call.name}", [(call.arguments, _CONTENT)])
        if m.reasoning:
            r.warnings.append(ChatWarning("approximate", f"{_who(conv, i)}: reasoning is not part of ChatML; not counted", i))
    if gen:
        owner = _suffix_owner(conv)
        r.special("<|im_start|>", owner)
        r.add("assistant", _TEXT, owner)
        r.special("<|im_sep|>", owner)
    if approximate:
        r.warnings.append(ChatWarning(
            "approximate", "OpenAI does not publish how its chat models write tools, tool calls and names; "
            "tokscope writes tools as harmony does, so this part of the count is approximate"))
    return r


def _render_llama3(conv: Conversation, fmt: Llama3Format, gen: bool) -> _Rendering:
    r = _Rendering([], bos="<|begin_of_text|>")
    r.special("<|begin_of_text|>", _PREFIX)

    def header(owner: int, role: str) -> None:
        r.special("<|start_header_id|>", owner)
        r.add(role, _TEXT, owner)
        r.special("<|end_header_id|>", owner)
        r.add("\n\n", _TEXT, owner)

    start = 0
    if conv.tools:
        system_first = bool(conv.messages) and conv.messages[0].role == "system"
        owner = 0 if system_first else _PREFIX
        header(owner, "system")
        r.add(LLAMA3_TOOLS_PREAMBLE, _TOOLS, owner)
        for tool in conv.tools:
            r.add(json.dumps(_thaw(tool.raw), ensure_ascii=False, indent=4) + "\n\n", _TOOLS, owner)
        if system_first:
            r.add(conv.messages[0].content.strip(), _CONTENT, owner)
            start = 1
        r.special("<|eot_id|>", owner)
    for i in range(start, len(conv.messages)):
        m = conv.messages[i]
        if m.role not in ("system", "user", "assistant", "tool", "ipython"):
            _unknown_role(r, conv, i, "llama3")
        role = "ipython" if m.role == "tool" else m.role
        if m.parts or not m.tool_calls:
            header(i, role)
            r.add(m.content.strip(), _CONTENT, i)
            r.special("<|eot_id|>", i)
        for call in m.tool_calls:
            header(i, role)
            r.add('{"name": "', _TEXT, i)
            r.add(call.name, _CONTENT, i)
            r.add('", "parameters": ', _TEXT, i)
            r.add(_llama_arguments(call.arguments), _CONTENT, i)
            r.add("}", _TEXT, i)
            r.special("<|eot_id|>", i)
        if m.reasoning:
            r.warnings.append(ChatWarning("approximate", f"{_who(conv, i)}: reasoning is not part of the llama3 format; not counted", i))
    if gen:
        header(_suffix_owner(conv), "assistant")
    return r


LLAMA3_TOOLS_PREAMBLE = (
    "You have access to the following functions. To call a function, please respond with JSON for a function call."
    'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.'
    "Do not use variables.\n\n"
)


def _llama_arguments(arguments: str) -> str:
    """Tool-call arguments as Llama 3.1's template writes them (``tojson`` of the object).

    >>> _llama_arguments('{"city":"Paris"}'), _llama_arguments('not json')
    ('{"city": "Paris"}', '"not json"')
    """
    try:
        value = json.loads(arguments)
    except ValueError:
        value = arguments
    return json.dumps(value, ensure_ascii=False)


@dataclass(slots=True)
class _HMessage:
    owner: int
    role_text: str
    name: str | None = None
    recipient: str | None = None
    channel: str | None = None
    content_type: str | None = None
    runs: list[list[tuple[str, int]]] = field(default_factory=list)
    role: str = ""


def _render_harmony(conv: Conversation, fmt: HarmonyFormat, gen: bool) -> _Rendering:
    r = _Rendering([], piecewise=True)
    n = len(conv.messages)
    tool_entries = [(t.name, t.description, _thaw(t.parameters)) for t in conv.tools]
    tools_text = hm.tools_section(tool_entries) if tool_entries else None
    system_owner = 0 if n and conv.messages[0].role == "system" else _PREFIX
    out: list[_HMessage] = [_HMessage(system_owner, "system", role="system", runs=[[(hm.system_text(
        model_identity=fmt.model_identity, knowledge_cutoff=fmt.knowledge_cutoff, current_date=fmt.current_date,
        reasoning_effort=fmt.reasoning_effort, function_tools=bool(tool_entries)), _TEXT)]])]
    tools_placed = tools_text is None
    leading = True
    call_names: dict[str, str] = {}

    def place_tools_alone() -> None:
        nonlocal tools_placed
        out.append(_HMessage(_PREFIX, "developer", role="developer", runs=[[(tools_text, _TOOLS)]]))
        tools_placed = True

    for i, m in enumerate(conv.messages):
        if m.role in ("system", "developer"):
            give = not tools_placed and leading
            pieces = hm.developer_parts(m.content, tools_text if give else None)
            kinds = [(_CONTENT if instr else (_TOOLS if give and text.lstrip("\n").startswith("# Tools") else _TEXT))
                     for text, instr in pieces]
            run = [(text, kind) for (text, _), kind in zip(pieces, kinds)]
            if give:
                tools_placed = True
            out.append(_HMessage(i, "developer", name=m.name, role="developer", runs=[run] if run else []))
            continue
        if leading and not tools_placed:
            place_tools_alone()
        leading = False
        runs = [[(p, _CONTENT)] for p in m.parts]
        if m.role == "user":
            out.append(_HMessage(i, "user", name=m.name, role="user", runs=runs))
        elif m.role == "assistant":
            if m.reasoning is not None:
                out.append(_HMessage(i, "assistant", name=m.name, channel="analysis", role="assistant",
                                     runs=[[(m.reasoning, _CONTENT)]]))
            own = m.raw.get("channel") if isinstance(m.raw, Mapping) else None
            channel = own if isinstance(own, str) and own else ("commentary" if m.tool_calls else "final")
            if m.content or (not m.tool_calls and m.reasoning is None):
                out.append(_HMessage(i, "assistant", name=m.name, channel=channel, role="assistant", runs=runs))
            for call in m.tool_calls:
                if call.id is not None:
                    call_names[call.id] = call.name
                out.append(_HMessage(i, "assistant", name=m.name, recipient=f"functions.{call.name}",
                                     channel="commentary", content_type=fmt.tool_content_type, role="assistant",
                                     runs=[[(call.arguments, _CONTENT)]]))
        elif m.role == "tool":
            fname = call_names.get(m.tool_call_id or "") or m.name
            if not fname:
                raise ChatInputError(f"{_who(conv, i)}: no earlier tool call has id {m.tool_call_id!r} and the "
                                     "message has no 'name'; harmony names a tool result after its function")
            author = fname if "." in fname else f"functions.{fname}"
            out.append(_HMessage(i, author, recipient="assistant", channel="commentary", role="tool", runs=runs))
        else:
            _unknown_role(r, conv, i, "harmony", " (openai-harmony would refuse it)")
            out.append(_HMessage(i, m.role, name=m.name, role=m.role, runs=runs))
    if not tools_placed:
        place_tools_alone()

    # the renderer's auto_drop_analysis
    last_assistant = next((h for h in reversed(out) if h.role == "assistant"), None)
    if fmt.drop_analysis and last_assistant is not None and last_assistant.channel == "final":
        first_final = next((k for k, h in enumerate(out) if h.channel == "final"), None)
        if first_final is not None:
            dropped = [h for k, h in enumerate(out) if k < first_final and h.channel == "analysis"]
            if dropped:
                out = [h for k, h in enumerate(out) if not (k < first_final and h.channel == "analysis")]
                owners = sorted({h.owner for h in dropped})
                r.warnings.append(ChatWarning(
                    "dropped", f"the reasoning of {', '.join(_who(conv, o) for o in owners)} is not rendered: "
                    "harmony drops analysis before the final answer (drop_analysis=False keeps it)", owners[0]))

    for h in out:
        o = h.owner
        r.special("<|start|>", o)
        if h.role == "tool":
            r.add(h.role_text, _TEXT, o, True)
        else:
            r.add(h.role_text, _TEXT, o, True)
            if h.name is not None:
                r.add(":" + h.name, _TEXT, o, True)
        if h.recipient is not None and h.recipient != "all":
            r.add(f" to={h.recipient}", _TEXT, o, True)
        if h.channel is not None:
            r.special("<|channel|>", o)
            r.add(h.channel, _TEXT, o, True)
        if h.content_type is not None:
            if h.content_type.startswith("<|constrain|>"):
                r.add(" ", _TEXT, o, True)
                r.special("<|constrain|>", o)
                rest = h.content_type[len("<|constrain|>"):]
                if rest:
                    r.add(rest, _TEXT, o, True)
            else:
                r.add(" " + h.content_type, _TEXT, o, True)
        r.special("<|message|>", o)
        for run in h.runs:
            first = True
            for text, kind in run:
                if text:
                    r.add(text, kind, o, first)
                    first = False
        r.special("<|call|>" if h.role == "assistant" and h.recipient is not None else "<|end|>", o)
    if gen:
        owner = _suffix_owner(conv)
        r.special("<|start|>", owner)
        r.add("assistant", _TEXT, owner, True)
    elif fmt.final_return and out and out[-1].role == "assistant" and out[-1].channel == "final":
        last = r.parts[-1]
        r.parts[-1] = _Part("<|return|>", _SPECIAL, last.owner, True)
        if "<|return|>" not in r.controls:
            r.controls.append("<|return|>")
    return r


# ----- chat templates: where the content is ------------------------------------------------------



def _template_messages(conv: Conversation, parse_arguments: bool) -> list[dict[str, Any]]:
    """The messages as ``apply_chat_template`` hands them to a template: keys holding ``None``
    dropped, reasoning also under ``reasoning_content`` and ``thinking``, tool-call arguments
    parsed from JSON text when asked."""
    out = []
    for m in conv.messages:
        msg = {k: v for k, v in _thaw(m.raw).items() if v is not None}
        reasoning = next((msg[k] for k in REASONING_KEYS if msg.get(k) is not None), None)
        if reasoning is not None:
            msg = {"thinking": reasoning, **msg, "reasoning_content": reasoning}
        if parse_arguments and isinstance(msg.get("tool_calls"), list):
            for call in msg["tool_calls"]:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    try:
                        value = json.loads(fn["arguments"])
                    except ValueError:
                        continue
                    if isinstance(value, dict):
                        fn["arguments"] = value
        out.append(msg)
    return out


def _special_regex(strings: Collection[str]) -> regex.Pattern[str] | None:
    alternatives = sorted((s for s in strings if s), key=lambda s: (-len(s), s))
    if not alternatives:
        return None
    return regex.compile("|".join(regex.escape(s) for s in alternatives))


def _render_with_template(conv: Conversation, fmt: TemplateFormat, tokenizer: Any, gen: bool,
                          cancel: threading.Event | None = None) -> _Rendering:
    template = fmt.template
    tools_given = bool(conv.tools)
    name, source = template.select(tools=tools_given, name=fmt.template_name)
    variables = {**template.variables(), **dict(fmt.variables)}
    tools = [_thaw(t.raw) for t in conv.tools] if tools_given else None
    documents = [dict(d) for d in fmt.documents] if fmt.documents is not None else None
    messages = _template_messages(conv, fmt.parse_tool_arguments)

    def render(msgs: list[dict[str, Any]], with_gen: bool, tools_arg: Any = tools, docs: Any = documents) -> str:
        return render_template(source, messages=msgs, tools=tools_arg, documents=docs,
                               add_generation_prompt=with_gen, variables=variables, limits=fmt.limits,
                               cancel=cancel)

    real = render(messages, gen)
    other = render(messages, not gen)
    with_gen, without = (real, other) if gen else (other, real)
    gen_text = with_gen[len(without):] if with_gen.startswith(without) else None

    specials = dict(getattr(tokenizer, "special_tokens", {}) or {})
    special_re = _special_regex(specials)
    r = _Rendering([], bos=template.bos_token)
    r.adds_bos = fmt.tokenizer_adds_bos if fmt.tokenizer_adds_bos is not None else template.add_bos_token

    # where the message strings landed: content ranges, and look-alikes of special tokens
    user_texts = strings_of(messages) + strings_of(tools) + strings_of(documents)
    look_alike = special_re if special_re is not None and any(special_re.search(t) for t in user_texts) else None
    located = locate_content(lambda msgs, tools_arg, docs: render(msgs, gen, tools_arg, docs), real, messages,
                             tools, documents, look_alike=look_alike,
                             avoid=(source, other, *user_texts, *strings_of(variables)))
    ranges = list(located.content)
    literal = list(located.literal)
    level = located.level
    if not located.marked and look_alike is not None:
        r.warnings.append(ChatWarning(
            "attribution", "the template rewrites the messages, so tokscope cannot tell its own special tokens "
            "from look-alikes in the messages; every special token spelled in the messages is counted as text"))
        spelled = {x.group() for t in user_texts for x in look_alike.finditer(t)}
        literal = [(x.start(), x.end()) for x in look_alike.finditer(real) if x.group() in spelled]
    if level == "none" and any(p.strip() for m in conv.messages for p in m.parts):
        ranges = _search_contents(real, conv)
        r.warnings.append(ChatWarning(
            "attribution", "the template transforms message content, so tokscope located each message's content "
            "by searching the rendered text; the split between template and content may be approximate"))
    elif level == "content" and any(m.tool_calls for m in conv.messages):
        r.warnings.append(ChatWarning(
            "attribution", "the template transforms tool calls, so their arguments are counted as template tokens"))

    start_token = _turn_start(gen_text, specials)
    suffix_at = len(real) - len(gen_text) if gen and gen_text else len(real)
    owners = _owners(real, ranges, conv, start_token, suffix_at, special_re)
    r.parts = _parts_from_text(real, ranges, literal, owners, special_re)
    _template_controls(r, template, specials)
    for i, m in enumerate(conv.messages):
        if m.role not in KNOWN_ROLES and m.role not in source:
            _unknown_role(r, conv, i, f"chat template's ({name})", "; the template does not mention it")
    return r


def _search_contents(text: str, conv: Conversation) -> list[tuple[int, int, int]]:
    """Content ranges found by searching each message's text in order (the fallback)."""
    ranges = []
    pos = 0
    for i, m in enumerate(conv.messages):
        for part in m.parts:
            core = part.strip()
            if not core:
                continue
            at = text.find(core, pos)
            if at >= 0:
                ranges.append((at, at + len(core), i))
                pos = at + len(core)
    return ranges


def _turn_start(gen_text: str | None, specials: Mapping[str, int]) -> str | None:
    """The special token a turn starts with, learnt from the generation prompt.

    >>> _turn_start("<|im_start|>assistant\\n", {"<|im_start|>": 1}), _turn_start("[/INST]", {"<|x|>": 2})
    ('<|im_start|>', None)
    """
    if not gen_text:
        return None
    best = None
    for s in specials:
        if gen_text.startswith(s) and (best is None or len(s) > len(best)):
            best = s
    return best


def _cut_gap(text: str, lo: int, hi: int, special_re: regex.Pattern[str] | None, leading: bool) -> int:
    """Where the template text between two messages' contents (``text[lo:hi]``) is cut when no
    turn-start token is known: after the first special token (the previous turn's end) and the
    whitespace after it, else after the first run of newlines, else at ``lo``. Before the first
    message (``leading``) the prefix ends after the first special token only when the gap holds
    two or more (a BOS, then the turn's own start); otherwise it is all the first message's.

    >>> import regex
    >>> specials = regex.compile("|".join(map(regex.escape, ["<s>", "[INST]", "</s>"])))
    >>> text = "<s>[INST] Hi [/INST] Hello</s>[INST] Bye"
    >>> _cut_gap(text, 0, 10, specials, True), _cut_gap(text, 26, 37, specials, False)
    (3, 30)
    """
    hits = list(special_re.finditer(text, lo, hi)) if special_re is not None else []
    if leading:
        return hits[0].end() if len(hits) >= 2 else lo
    if hits:
        cut = hits[0].end()
        while cut < hi and text[cut].isspace():
            cut += 1
        return cut
    newline = text.find("\n", lo, hi)
    if newline < 0:
        return lo
    while newline < hi and text[newline] == "\n":
        newline += 1
    return newline


def _owners(text: str, ranges: list[tuple[int, int, int]], conv: Conversation, start_token: str | None,
            suffix_at: int, special_re: regex.Pattern[str] | None) -> list[tuple[int, int]]:
    """Cut the rendered text into ``(start, owner)`` pieces: prefix, messages, suffix."""
    n = len(conv.messages)
    regions: list[list[int]] = []  # [message, start, end]
    for start, end, i in sorted(ranges):
        if regions and regions[-1][0] == i:
            regions[-1][2] = max(regions[-1][2], end)
        else:
            regions.append([i, start, end])
    cuts: list[tuple[int, int]] = [(0, _PREFIX)]

    def starts_in(lo: int, hi: int) -> list[int]:
        if not start_token or hi <= lo:
            return []
        out, at = [], text.find(start_token, lo, hi)
        while at >= 0:
            out.append(at)
            at = text.find(start_token, at + len(start_token), hi)
        return out

    anchored = {reg[0] for reg in regions}
    prev_msg, prev_end = _PREFIX, 0
    for msg, start, end in regions:
        between = [k for k in range(prev_msg + 1, msg) if k not in anchored] if msg > prev_msg else []
        hits = starts_in(prev_end, start)
        if hits and len(hits) >= len(between) + 1:
            hits = hits[len(hits) - len(between) - 1:]
            for k, at in zip(between, hits):
                cuts.append((at, k))
            cut = hits[-1]
        elif hits:
            cut = hits[-1]
        else:
            cut = _cut_gap(text, prev_end, start, special_re, leading=prev_msg == _PREFIX)
        cuts.append((max(cut, prev_end if prev_msg != _PREFIX else 0), msg))
        prev_msg, prev_end = msg, end
    if regions:
        after = [k for k in range(prev_msg + 1, n) if k not in anchored]
        hits = starts_in(prev_end, suffix_at)
        if after and len(hits) >= len(after):
            for k, at in zip(after, hits[len(hits) - len(after):]):
                cuts.append((at, k))
    elif n:
        hits = starts_in(0, suffix_at)
        if len(hits) >= n:
            for k, at in zip(range(n), hits[len(hits) - n:]):
                cuts.append((at, k))
    cuts.append((suffix_at, n))
    # keep the cuts in text order; a later cut never moves before an earlier one
    ordered: list[tuple[int, int]] = []
    for at, owner in cuts:
        if ordered and at < ordered[-1][0]:
            at = ordered[-1][0]
        ordered.append((at, owner))
    return ordered


def _merge_intervals(intervals: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, merged ``(start, end)`` intervals.

    >>> _merge_intervals([(5, 7), (0, 2), (1, 3), (3, 4)])
    [(0, 4), (5, 7)]
    """
    out: list[tuple[int, int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _parts_from_text(text: str, ranges: list[tuple[int, int, int]], literal: list[tuple[int, int]],
                     owners: list[tuple[int, int]], special_re: regex.Pattern[str] | None) -> list[_Part]:
    """Parts of a rendered template: message content, the special tokens of the template's own
    text (never inside content or look-alike ranges), and template text, each with its owner."""
    content = _merge_intervals([(s, e) for s, e, _ in ranges if e > s])
    protected = _merge_intervals(content + [(s, e) for s, e in literal if e > s])
    specials: dict[int, int] = {}
    if special_re is not None:
        starts = [s for s, _ in protected]
        for found in special_re.finditer(text):
            s, e = found.span()
            k = bisect.bisect_right(starts, s) - 1
            overlaps = (k >= 0 and protected[k][1] > s) or (k + 1 < len(protected) and protected[k + 1][0] < e)
            if not overlaps:
                specials[s] = e
    inside_special = sorted(specials.items())

    def in_special(at: int) -> bool:
        k = bisect.bisect_right(inside_special, (at, len(text) + 1)) - 1
        return k >= 0 and inside_special[k][0] < at < inside_special[k][1]

    bounds = {0, len(text)}
    for s, e in content:
        bounds.update((s, e))
    for s, e in literal:
        bounds.update((s, e))
    for s, e in specials.items():
        bounds.update((s, e))
    owner_at = []
    for at, owner in owners:
        at = min(at, len(text))
        while in_special(at):  # a turn never starts inside a special token
            at -= 1
        owner_at.append((at, owner))
        bounds.add(at)
    points = sorted(bounds)
    cut_points = [at for at, _ in owner_at]
    content_starts = [s for s, _ in content]
    parts: list[_Part] = []
    for a, b in zip(points, points[1:]):
        if a == b:
            continue
        k = bisect.bisect_right(cut_points, a) - 1
        owner = owner_at[k][1] if k >= 0 else _PREFIX
        c = bisect.bisect_right(content_starts, a) - 1
        if specials.get(a) == b:
            parts.append(_Part(text[a:b], _SPECIAL, owner, True))
        elif c >= 0 and content[c][1] >= b:
            parts.append(_Part(text[a:b], _CONTENT, owner))
        else:
            parts.append(_Part(text[a:b], _TEXT, owner))
    return parts


#: strings that look like control tokens (for the template format's not-special report)
_LOOKALIKE = re.compile(r"<\|[A-Za-z0-9_]+\|>|<(?:start|end)_of_turn>|\[/?INST\]")


def _template_controls(r: _Rendering, template: ChatTemplate, specials: Mapping[str, int]) -> None:
    """Record the control strings the template wrote: its special tokens, and the model's control
    tokens (and look-alikes) that this tokenizer only has as text."""
    written = "\0".join(p.text for p in r.parts if p.kind in (_TEXT, _SPECIAL))
    for p in r.parts:
        if p.kind == _SPECIAL and p.text not in r.controls:
            r.controls.append(p.text)
    for control in (*template.control_tokens, *_LOOKALIKE.findall(written)):
        if control and control not in specials and control not in r.controls and control in written:
            r.controls.append(control)


# ----- encoding --------------------------------------------------------------------------------


def _accepts(func: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


#: every byte value that is not a UTF-8 continuation byte (deleted to count continuation bytes)
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)


class _Encoder:
    """The tokenizer calls the chat core makes: ordinary text, and tokens with character offsets.

    Offsets come from the tokens' bytes when the tokenizer has ``token_bytes`` and its tokens
    spell the text byte for byte (fast: the tokenizer's own ``encode``), else from ``pieces``,
    else (``encode`` alone) from encoding prefixes at the part boundaries.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tok = tokenizer
        self.specials: dict[str, int] = dict(getattr(tokenizer, "special_tokens", {}) or {})
        self.extra: dict[str, Any] = {"add_special_tokens": False} if _accepts(tokenizer.encode, "add_special_tokens") else {}
        pieces = getattr(tokenizer, "pieces", None)
        self.has_pieces = callable(pieces)
        self.pieces_extra = self.extra if self.has_pieces and _accepts(pieces, "add_special_tokens") else {}
        self.token_bytes = getattr(tokenizer, "token_bytes", None)
        self.exact = self.has_pieces or callable(self.token_bytes)
        self._cache: dict[str, int] = {}
        self._info: dict[int, tuple[int, int, bool]] = {}

    def ordinary(self, text: str) -> list[int]:
        return list(self.tok.encode(text, allowed_special=(), disallowed_special=(), **self.extra))

    def count(self, text: str) -> int:
        n = self._cache.get(text)
        if n is None:
            n = len(self.ordinary(text))
            if len(self._cache) < 4096:
                self._cache[text] = n
        return n

    def _by_bytes(self, text: str, ids: list[int]) -> tuple[list[int], list[int]] | None:
        info = self._info
        token_bytes = self.token_bytes
        starts: list[int] = []
        ends: list[int] = []
        chars = 0
        total = 0
        try:
            for tid in ids:
                entry = info.get(tid)
                if entry is None:
                    data = token_bytes(tid)
                    # (byte length, characters begun, starts inside a character)
                    entry = (len(data), len(data) - len(data.translate(None, _NOT_CONTINUATION)),
                             bool(data) and 0x80 <= data[0] < 0xC0)
                    info[tid] = entry
                total += entry[0]
                starts.append(chars - 1 if entry[2] else chars)
                chars += entry[1]
                ends.append(chars)
        except Exception:  # noqa: BLE001 - an id without bytes: use another way
            return None
        if total != len(text.encode("utf-8")) or chars != len(text):
            return None  # the tokenizer changes the text (normalizes it): its tokens do not spell it
        return starts, ends

    def tokens(self, text: str, allowed: Collection[str] = (), cuts: Sequence[int] = ()) -> tuple[list[int], list[int], list[int]] | None:
        """``(ids, starts, ends)`` of ``text`` with ``allowed`` special tokens read as such;
        ``None`` when offsets cannot be had with specials (the caller encodes run by run)."""
        if callable(self.token_bytes):
            ids = list(self.tok.encode(text, allowed_special=allowed, disallowed_special=(), **self.extra))
            placed = self._by_bytes(text, ids)
            if placed is not None:
                return ids, placed[0], placed[1]
        if self.has_pieces:
            got = self.tok.pieces(text, allowed_special=allowed, disallowed_special=(), **self.pieces_extra)
            return [p.id for p in got], [p.start for p in got], [p.end for p in got]
        if allowed:
            return None
        placed = _tokens_by_prefixes(self.ordinary, text, cuts)
        return [t[0] for t in placed], [t[1] for t in placed], [t[2] for t in placed]


def _tokens_by_prefixes(encode: Callable[[str], list[int]], text: str, cuts: Sequence[int]) -> list[tuple[int, int, int]]:
    """Place the tokens of ``text`` between the part boundaries ``cuts`` using only ``encode``.

    The tokens before a boundary are the common prefix of ``encode(text[:cut])`` and
    ``encode(text)``; when that prefix is shorter than the left side's own tokens, the next token
    straddles the boundary and gets both regions as its offsets. Offsets are the regions', not
    the tokens' own (a tokenizer with ``pieces`` gives exact ones).

    >>> enc = lambda s: [ord(c) for c in s]  # one token per character
    >>> _tokens_by_prefixes(enc, "abc", [1])
    [(97, 0, 1), (98, 1, 3), (99, 1, 3)]
    >>> pairs = lambda s: [s[i:i + 2] for i in range(0, len(s), 2)]  # "abcd" -> "ab", "cd"
    >>> _tokens_by_prefixes(pairs, "abcd", [1])
    [('ab', 0, 4), ('cd', 1, 4)]
    """
    ids = encode(text)
    cuts = sorted({c for c in cuts if 0 < c < len(text)})
    bounds = [0, *cuts, len(text)]
    firsts = [0]
    straddles = set()
    for cut in cuts:
        left = encode(text[:cut])
        k = 0
        while k < len(left) and k < len(ids) and left[k] == ids[k]:
            k += 1
        if k < len(left):
            straddles.add(k)
        firsts.append(max(k, firsts[-1]))
    firsts.append(len(ids))
    out = []
    for r in range(len(bounds) - 1):
        for k in range(firsts[r], firsts[r + 1]):
            lo = bounds[r - 1] if (r and k == firsts[r] and k in straddles) else bounds[r]
            out.append((ids[k], lo, bounds[r + 1]))
    return out


_KIND_LETTER = {_SPECIAL: TEMPLATE, _TEXT: TEMPLATE, _CONTENT: CONTENT, _TOOLS: TOOLS}


def _encode(enc: _Encoder, r: _Rendering) -> tuple[list[int], list[str], list[tuple[int, int]], list[int], dict[str, FormatToken]]:
    parts = r.parts
    starts = []
    pos = 0
    for p in parts:
        starts.append(pos)
        pos += len(p.text)
    part_ends = [st + len(p.text) for st, p in zip(starts, parts)]
    text = "".join(p.text for p in parts)
    # a special part that is not a special token of this tokenizer (nor assumed) is template text
    real_special = [p.kind == _SPECIAL and (p.text in enc.specials or p.text in r.assumed) for p in parts]

    placed = None
    if not r.piecewise and not r.assumed:
        placed = _whole_text(enc, text, parts, starts, real_special)
    if placed is not None:
        ids, tstart, tend = placed
    else:
        ids, tstart, tend = [], [], []
        run_start: int | None = None

        def flush(a: int, b: int) -> None:
            lo, hi = starts[a], part_ends[b - 1]
            if hi <= lo:
                return
            got = enc.tokens(text[lo:hi], (), [starts[k] - lo for k in range(a + 1, b)])
            assert got is not None
            ids.extend(got[0])
            tstart.extend(x + lo for x in got[1])
            tend.extend(x + lo for x in got[2])

        for k, p in enumerate(parts):
            if real_special[k]:
                if run_start is not None:
                    flush(run_start, k)
                    run_start = None
                ids.append(enc.specials.get(p.text, r.assumed.get(p.text)))
                tstart.append(starts[k])
                tend.append(part_ends[k])
                continue
            if run_start is not None and r.piecewise and p.new_run:
                flush(run_start, k)
                run_start = None
            if run_start is None:
                run_start = k
        if run_start is not None:
            flush(run_start, len(parts))

    # attribute every token to the parts it overlaps
    kinds: list[str] = []
    owners: list[int] = []
    nparts = len(parts)
    k = 0
    for s, e in zip(tstart, tend):
        if e <= s:
            e = s + 1
        while k < nparts and part_ends[k] <= s:
            k += 1
        if k >= nparts:
            kinds.append(TEMPLATE)
            owners.append(parts[-1].owner if parts else _PREFIX)
            continue
        part = parts[k]
        if e <= part_ends[k]:
            kinds.append(_KIND_LETTER[part.kind])
            owners.append(part.owner)
            continue
        has_content = has_other = has_tools = False
        j = k
        while j < nparts and starts[j] < e:
            pk = parts[j].kind
            if pk == _CONTENT:
                has_content = True
            elif pk == _TOOLS:
                has_tools = True
            else:
                has_other = True
            j += 1
        if has_content:
            kinds.append(MIXED if (has_other or has_tools) else CONTENT)
        else:
            kinds.append(TOOLS if has_tools else TEMPLATE)
        owners.append(part.owner)
    offsets = list(zip(tstart, tend))

    report: dict[str, FormatToken] = {}
    uses: dict[str, int] = {}
    for p in parts:
        if p.kind == _SPECIAL:
            uses[p.text] = uses.get(p.text, 0) + 1
    written = "\0".join(p.text for p in parts if p.kind == _TEXT)
    for control in r.controls:
        if control in enc.specials:
            report[control] = FormatToken(control, enc.specials[control], enc.count(control), uses.get(control, 0))
        elif control in r.assumed:
            report[control] = FormatToken(control, r.assumed[control], enc.count(control), uses.get(control, 0), True)
        else:
            report[control] = FormatToken(control, None, enc.count(control), uses.get(control, 0) + written.count(control))
    return ids, kinds, offsets, owners, report


def _whole_text(enc: _Encoder, text: str, parts: list[_Part], starts: list[int],
                real_special: list[bool]) -> tuple[list[int], list[int], list[int]] | None:
    """Encode the whole rendered text in one call with the template's special tokens allowed,
    when that cannot read anything else as a special token; else ``None`` (encode run by run)."""
    if not enc.exact:
        return None
    allowed = {p.text for p, real in zip(parts, real_special) if real}
    pattern = _special_regex(allowed)
    expected = {(starts[k], starts[k] + len(p.text)) for k, (p, real) in enumerate(zip(parts, real_special)) if real}
    if pattern is not None:
        for found in pattern.finditer(text):
            if found.span() not in expected:
                return None
    # another special token spelled in text stays text either way (it is not allowed)
    return enc.tokens(text, allowed)


# ----- warnings --------------------------------------------------------------------------------


def _injection_warnings(enc: _Encoder, r: _Rendering, fmt_name: str, conv: Conversation) -> list[ChatWarning]:
    out = []
    special_re = _special_regex(enc.specials)
    lookalike_re = _special_regex([c for c in r.controls if c not in enc.specials and c not in r.assumed])
    for index, what, text in r.user_strings:
        where = _who(conv, index) if index is not None else "a tool definition"
        if special_re is not None:
            spelled = sorted({x.group() for x in special_re.finditer(text)})
            if spelled:
                as_text = len(enc.ordinary(text))
                try:
                    as_special = len(enc.tok.encode(text, allowed_special="all", disallowed_special=(), **enc.extra))
                except TokscopeError:
                    as_special = as_text
                names = ", ".join(repr(s) for s in spelled[:3]) + (" and more" if len(spelled) > 3 else "")
                harmony_note = "; openai-harmony does the same" if fmt_name == "harmony" else ""
                out.append(ChatWarning(
                    "special-in-content",
                    f"{where}: {what} spells the special token{'s' if len(spelled) > 1 else ''} {names}; tokscope counts "
                    f"it as text ({as_text} tokens){harmony_note}; a runtime that reads special tokens in text "
                    f"(apply_chat_template without sanitizing, tiktoken with allowed_special='all') would see "
                    f"{as_special} tokens and the control token itself; tiktoken's default refuses such text",
                    index))
        if lookalike_re is not None:
            spelled = sorted({x.group() for x in lookalike_re.finditer(text)})
            if spelled:
                out.append(ChatWarning(
                    "format-lookalike",
                    f"{where}: {what} spells {', '.join(repr(s) for s in spelled[:3])}, which this format writes as "
                    "plain text here: the model cannot tell it from the template's own", index))
    return out


def _not_special_warnings(report: Mapping[str, FormatToken], tokenizer_name: str, fmt_name: str) -> list[ChatWarning]:
    out = []
    assumed = [t for t in report.values() if t.assumed and t.uses]
    if assumed:
        out.append(ChatWarning(
            "approximate", f"{', '.join(repr(t.text) for t in assumed)} counted as the single ids web token counters "
            f"assume ({', '.join(str(t.id) for t in assumed)}); they are not in {tokenizer_name}'s published file"))
    missing = [t for t in report.values() if t.id is None and t.uses]
    if not missing:
        return out
    listed = ", ".join(f"{t.text!r} ({t.text_tokens} tokens)" for t in missing[:6])
    hint = ""
    if fmt_name == "chatml" and tokenizer_name in CHATML_ASSUMED_IDS:
        hint = "; OpenAI's servers use private ids for them (web counters assume single ids: ChatMLFormat(assume_ids=True))"
    out.append(ChatWarning(
        "not-special", f"{listed} {'is' if len(missing) == 1 else 'are'} not special tokens of {tokenizer_name}: "
        f"counted as the text they are{hint}"))
    return out


def _tokenizer_adds_bos(tokenizer: Any, bos_id: int) -> bool | None:
    """Whether the tokenizer's own encoding adds ``bos_id`` in front (``None``: cannot tell)."""
    flag = getattr(tokenizer, "add_bos_token", None)
    if isinstance(flag, bool):
        return flag
    encode = getattr(tokenizer, "encode", None)
    if encode is None or not _accepts(encode, "add_special_tokens"):
        return None
    try:
        ids = encode("a", add_special_tokens=True)
    except Exception:  # noqa: BLE001 - a probe only
        return None
    return bool(ids) and ids[0] == bos_id


def _bos_warnings(enc: _Encoder, r: _Rendering, ids: Sequence[int]) -> list[ChatWarning]:
    bos = r.bos
    if not bos or bos not in enc.specials or not ids:
        return []
    bos_id = enc.specials[bos]
    out = []
    if len(ids) > 1 and ids[0] == bos_id and ids[1] == bos_id:
        out.append(ChatWarning("double-bos", f"the rendering starts with {bos!r} twice"))
    elif ids[0] == bos_id:
        adds = r.adds_bos if r.adds_bos is not None else _tokenizer_adds_bos(enc.tok, bos_id)
        if adds:
            out.append(ChatWarning(
                "double-bos", f"the template writes {bos!r} and the tokenizer adds one too when it adds special "
                "tokens: encode the rendered text without them (as apply_chat_template does) or the model sees two"))
    return out


# ----- counting --------------------------------------------------------------------------------


def _resolve_format(fmt: Any, tokenizer: Any, template: ChatTemplate | None) -> ChatFormat:
    if isinstance(fmt, (ChatMLFormat, HarmonyFormat, Llama3Format, TemplateFormat)):
        return fmt
    if fmt is None or fmt == "auto":
        fmt = pick_format(tokenizer, template)
    if fmt == "chatml":
        return ChatMLFormat()
    if fmt == "harmony":
        return HarmonyFormat()
    if fmt == "llama3":
        return Llama3Format()
    if fmt == "template":
        if template is None:
            raise ChatFormatError("the template format needs a chat template (tokenizer_config.json or chat_template.jinja)")
        return TemplateFormat(template)
    raise ChatFormatError(f"unknown chat format {fmt!r}; choose one of {', '.join(FORMAT_NAMES)} or auto")


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CancelledError("counting the conversation was cancelled")


def _render(conv: Conversation, fmt: ChatFormat, tokenizer: Any, gen: bool,
            cancel: threading.Event | None = None) -> _Rendering:
    if isinstance(fmt, ChatMLFormat):
        r = _render_chatml(conv, fmt, tokenizer, gen)
    elif isinstance(fmt, HarmonyFormat):
        r = _render_harmony(conv, fmt, gen)
    elif isinstance(fmt, Llama3Format):
        r = _render_llama3(conv, fmt, gen)
    else:
        r = _render_with_template(conv, fmt, tokenizer, gen, cancel)
    _collect_user_strings(r, conv)
    return r


def _check_roles(conv: Conversation, specials: Mapping[str, int]) -> None:
    pattern = _special_regex(specials)
    if pattern is None:
        return
    for i, m in enumerate(conv.messages):
        if pattern.search(m.role) or (m.name and pattern.search(m.name)):
            raise ChatInputError(f"message {i + 1}: its role or name spells a special token")


def count_chat(
    tokenizer: Any,
    conversation: Any,
    format: str | ChatFormat = "auto",  # noqa: A002 - the natural name
    *,
    tools: Any = None,
    add_generation_prompt: bool = True,
    template: ChatTemplate | None = None,
    cancel: threading.Event | None = None,
) -> ChatCount:
    """Render ``conversation`` in ``format`` and count it with ``tokenizer``.

    ``conversation`` is anything :func:`parse_conversation` takes; ``format`` a name from
    :data:`FORMAT_NAMES`, ``"auto"`` (:func:`pick_format`) or a format object with options;
    ``template`` the model's chat template for ``"template"`` (and for ``"auto"``).
    ``add_generation_prompt`` (default on, as an API call is counted) appends the assistant
    header the model answers after. The tokenizer needs ``encode(text, allowed_special=...,
    disallowed_special=...)`` and ``special_tokens``; with ``token_bytes`` or ``pieces`` token
    offsets are exact. Setting ``cancel`` stops with :class:`CancelledError` (checked between
    steps and while a template renders).

    >>> from tokscope.sources import registry
    >>> c = count_chat(registry.load("o200k_harmony"), [{"role": "user", "content": "Hi"}], "harmony")
    >>> c.messages[0].content_tokens, c.text[-51:]
    (1, '<|start|>user<|message|>Hi<|end|><|start|>assistant')
    """
    conv = parse_conversation(conversation, tools)
    fmt = _resolve_format(format, tokenizer, template)
    enc = _Encoder(tokenizer)
    _check_roles(conv, enc.specials)
    r = _render(conv, fmt, tokenizer, add_generation_prompt, cancel)
    _check_cancel(cancel)
    ids, kinds, offsets, owners, report = _encode(enc, r)
    _check_cancel(cancel)
    text = "".join(p.text for p in r.parts)
    name = getattr(tokenizer, "name", "") or type(tokenizer).__name__
    n = len(conv.messages)

    spans: list[Span] = []
    k = 0
    while k < len(ids):
        owner = owners[k]
        j = k
        content = 0
        while j < len(ids) and owners[j] == owner:
            if kinds[j] in (CONTENT, MIXED):
                content += 1
            j += 1
        if owner == _PREFIX:
            kind, index, role = "prefix", None, None
        elif owner >= n:
            kind, index, role = "suffix", None, None
        else:
            kind, index, role = "message", owner, conv.messages[owner].role
        spans.append(Span(kind, index, role, k, j, offsets[k][0], offsets[j - 1][1], content))
        k = j
    by_message: dict[int, list[Span]] = {}
    for span in spans:
        if span.message is not None:
            by_message.setdefault(span.message, []).append(span)
    per_message = []
    for i, m in enumerate(conv.messages):
        own = by_message.get(i, [])
        per_message.append(MessageCount(i, m.role, sum(s.tokens for s in own), sum(s.content_tokens for s in own),
                                        tuple((s.start, s.end) for s in own)))

    warnings = list(r.warnings)
    warnings.extend(_not_special_warnings(report, name, fmt.name))
    warnings.extend(_injection_warnings(enc, r, fmt.name, conv))
    warnings.extend(_bos_warnings(enc, r, ids))
    merged = kinds.count(MIXED)
    if merged:
        warnings.append(ChatWarning(
            "merged", f"{merged} token{'s' if merged > 1 else ''} join{'s' if merged == 1 else ''} template text and "
            "message content (the tokenizer merged across the boundary); counted as content"))

    tool_tokens = None
    if conv.tools:
        bare = count_chat(tokenizer, Conversation(conv.messages, ()), fmt,
                          add_generation_prompt=add_generation_prompt, template=template, cancel=cancel)
        tool_tokens = len(ids) - bare.total
        if tool_tokens == 0:
            warnings.append(ChatWarning(
                "unused-tools", f"the {fmt.name} format writes no tool definitions here, so the model never sees "
                f"the {len(conv.tools)} tool{'s' if len(conv.tools) > 1 else ''} given"))
    return ChatCount(fmt.name, name, text, tuple(ids), "".join(kinds), tuple(offsets), tuple(spans),
                     tuple(per_message), tuple(report.values()), tuple(warnings), tool_tokens, add_generation_prompt)


# ----- which format ------------------------------------------------------------------------------

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
