"""Chat conversations as a chat-completions API takes them, checked and frozen.

Input is a list of messages (``role``; ``content`` as a string, ``None`` or a list of
``{"type": "text", "text": ...}`` parts; ``name``; an assistant's ``tool_calls``; a tool message's
``tool_call_id``; an assistant's reasoning as ``reasoning_content``, ``reasoning`` or
``thinking``) and ``tools`` (JSON-schema function definitions). :func:`parse_conversation` checks
it and returns a :class:`Conversation`; every error is one line counting messages from 1.
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .templates import REASONING_KEYS
from ..text.errors import TokscopeError
from ..tokenizer.tokenizer import fix_surrogates


class ChatInputError(TokscopeError, ValueError):
    """A conversation that is not a valid chat-completions ``messages`` list (or ``tools``)."""


#: roles the chat-completions API knows
KNOWN_ROLES = ("system", "developer", "user", "assistant", "tool")
#: content part types that carry text, and the key that holds it
TEXT_PART_TYPES = {"text": "text", "input_text": "text", "output_text": "text", "refusal": "refusal"}


def freeze(value: Any) -> Any:
    """JSON data made read-only: dicts become mapping proxies and lists tuples.

    >>> f = freeze({"a": [1, {"b": "c"}]})
    >>> f["a"][1]["b"], type(f["a"]).__name__
    ('c', 'tuple')
    """
    if isinstance(value, Mapping):
        return types.MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The plain dicts and lists back from :func:`freeze` (fresh copies a template may see).

    >>> thaw(freeze({"a": [1, {"b": None}]}))
    {'a': [1, {'b': None}]}
    """
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
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
        tools.append(Tool(name, description, freeze(parameters), freeze(raw)))
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
    tokscope.core.chat.conversation.ChatInputError: message 1 has no 'role'
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
            raw=freeze(msg),
        ))
    return Conversation(tuple(messages), _parse_tools(tools))
