"""ChatML rendered into parts (:class:`~.formats.ChatMLFormat`)."""

from __future__ import annotations

from typing import Any

from . import harmony as hm
from .conversation import KNOWN_ROLES, Conversation, thaw
from .formats import CHATML_ASSUMED_IDS, ChatFormatError, ChatMLFormat
from .parts import CONTENT_PART, PREFIX, TEXT_PART, TOOLS_PART, Rendering, suffix_owner, unknown_role, who
from .results import ChatWarning


def render_chatml(conv: Conversation, fmt: ChatMLFormat, tokenizer: Any, gen: bool) -> Rendering:
    r = Rendering([])
    if fmt.assume_ids:
        name = getattr(tokenizer, "name", "")
        ids = CHATML_ASSUMED_IDS.get(name)
        if ids is None:
            raise ChatFormatError(f"no assumed ChatML ids for {name or 'this tokenizer'}; "
                                  f"they are known for {', '.join(CHATML_ASSUMED_IDS)}")
        r.assumed = dict(ids)
    tools_text = hm.tools_section([(t.name, t.description, thaw(t.parameters)) for t in conv.tools]) if conv.tools else None
    approximate = bool(conv.tools)
    first = conv.messages[0] if conv.messages else None
    tools_in_first = tools_text is not None and first is not None and first.role in ("system", "developer")

    def block(owner: int, header: str, body: list[tuple[str, int]]) -> None:
        r.special("<|im_start|>", owner)
        r.add(header, TEXT_PART, owner)
        r.special("<|im_sep|>", owner)
        for text, kind in body:
            r.add(text, kind, owner)
        r.special("<|im_end|>", owner)

    if tools_text is not None and not tools_in_first:
        block(PREFIX, "system", [(tools_text, TOOLS_PART)])
    for i, m in enumerate(conv.messages):
        if m.role not in KNOWN_ROLES:
            unknown_role(r, conv, i, "chatml")
        header = m.role + (f" name={m.name}" if m.name else "")
        approximate = approximate or bool(m.name) or bool(m.tool_calls) or m.role == "tool"
        body = [(p, CONTENT_PART) for p in m.parts]
        if i == 0 and tools_in_first:
            body.append(("\n\n", TEXT_PART))
            body.append((tools_text, TOOLS_PART))
        if m.parts or not m.tool_calls or (i == 0 and tools_in_first):
            block(i, header, body)
        for call in m.tool_calls:
            block(i, f"{m.role} to=functions.{call.name}", [(call.arguments, CONTENT_PART)])
        if m.reasoning:
            r.warnings.append(ChatWarning("approximate", f"{who(conv, i)}: reasoning is not part of ChatML; not counted", i))
    if gen:
        owner = suffix_owner(conv)
        r.special("<|im_start|>", owner)
        r.add("assistant", TEXT_PART, owner)
        r.special("<|im_sep|>", owner)
    if approximate:
        r.warnings.append(ChatWarning(
            "approximate", "OpenAI does not publish how its chat models write tools, tool calls and names; "
            "tokscope writes tools as harmony does, so this part of the count is approximate"))
    return r
