"""Llama 3's header format rendered into parts (:class:`~.formats.Llama3Format`)."""

from __future__ import annotations

import json

from .conversation import Conversation, thaw
from .formats import Llama3Format
from .parts import CONTENT_PART, PREFIX, TEXT_PART, TOOLS_PART, Rendering, suffix_owner, unknown_role, who
from .results import ChatWarning


def render_llama3(conv: Conversation, fmt: Llama3Format, gen: bool) -> Rendering:
    r = Rendering([], bos="<|begin_of_text|>")
    r.special("<|begin_of_text|>", PREFIX)

    def header(owner: int, role: str) -> None:
        r.special("<|start_header_id|>", owner)
        r.add(role, TEXT_PART, owner)
        r.special("<|end_header_id|>", owner)
        r.add("\n\n", TEXT_PART, owner)

    start = 0
    if conv.tools:
        system_first = bool(conv.messages) and conv.messages[0].role == "system"
        owner = 0 if system_first else PREFIX
        header(owner, "system")
        r.add(LLAMA3_TOOLS_PREAMBLE, TOOLS_PART, owner)
        for tool in conv.tools:
            r.add(json.dumps(thaw(tool.raw), ensure_ascii=False, indent=4) + "\n\n", TOOLS_PART, owner)
        if system_first:
            r.add(conv.messages[0].content.strip(), CONTENT_PART, owner)
            start = 1
        r.special("<|eot_id|>", owner)
    for i in range(start, len(conv.messages)):
        m = conv.messages[i]
        if m.role not in ("system", "user", "assistant", "tool", "ipython"):
            unknown_role(r, conv, i, "llama3")
        role = "ipython" if m.role == "tool" else m.role
        if m.parts or not m.tool_calls:
            header(i, role)
            r.add(m.content.strip(), CONTENT_PART, i)
            r.special("<|eot_id|>", i)
        for call in m.tool_calls:
            header(i, role)
            r.add('{"name": "', TEXT_PART, i)
            r.add(call.name, CONTENT_PART, i)
            r.add('", "parameters": ', TEXT_PART, i)
            r.add(_llama_arguments(call.arguments), CONTENT_PART, i)
            r.add("}", TEXT_PART, i)
            r.special("<|eot_id|>", i)
        if m.reasoning:
            r.warnings.append(ChatWarning("approximate", f"{who(conv, i)}: reasoning is not part of the llama3 format; not counted", i))
    if gen:
        header(suffix_owner(conv), "assistant")
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
