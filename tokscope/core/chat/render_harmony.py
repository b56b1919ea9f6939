"""Harmony (gpt-oss) rendered into parts, as ``openai-harmony`` renders it
(:class:`~.formats.HarmonyFormat`; the text of system and developer messages is :mod:`.harmony`'s)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import harmony as hm
from .conversation import ChatInputError, Conversation, thaw
from .formats import HarmonyFormat
from .parts import (CONTENT_PART, PREFIX, SPECIAL_PART, TEXT_PART, TOOLS_PART, Part, Rendering, suffix_owner,
                    unknown_role, who)
from .results import ChatWarning


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


def render_harmony(conv: Conversation, fmt: HarmonyFormat, gen: bool) -> Rendering:
    r = Rendering([], piecewise=True)
    n = len(conv.messages)
    tool_entries = [(t.name, t.description, thaw(t.parameters)) for t in conv.tools]
    tools_text = hm.tools_section(tool_entries) if tool_entries else None
    system_owner = 0 if n and conv.messages[0].role == "system" else PREFIX
    out: list[_HMessage] = [_HMessage(system_owner, "system", role="system", runs=[[(hm.system_text(
        model_identity=fmt.model_identity, knowledge_cutoff=fmt.knowledge_cutoff, current_date=fmt.current_date,
        reasoning_effort=fmt.reasoning_effort, function_tools=bool(tool_entries)), TEXT_PART)]])]
    tools_placed = tools_text is None
    leading = True
    call_names: dict[str, str] = {}

    def place_tools_alone() -> None:
        nonlocal tools_placed
        out.append(_HMessage(PREFIX, "developer", role="developer", runs=[[(tools_text, TOOLS_PART)]]))
        tools_placed = True

    for i, m in enumerate(conv.messages):
        if m.role in ("system", "developer"):
            give = not tools_placed and leading
            pieces = hm.developer_parts(m.content, tools_text if give else None)
            kinds = [(CONTENT_PART if instr else (TOOLS_PART if give and text.lstrip("\n").startswith("# Tools") else TEXT_PART))
                     for text, instr in pieces]
            run = [(text, kind) for (text, _), kind in zip(pieces, kinds)]
            if give:
                tools_placed = True
            out.append(_HMessage(i, "developer", name=m.name, role="developer", runs=[run] if run else []))
            continue
        if leading and not tools_placed:
            place_tools_alone()
        leading = False
        runs = [[(p, CONTENT_PART)] for p in m.parts]
        if m.role == "user":
            out.append(_HMessage(i, "user", name=m.name, role="user", runs=runs))
        elif m.role == "assistant":
            if m.reasoning is not None:
                out.append(_HMessage(i, "assistant", name=m.name, channel="analysis", role="assistant",
                                     runs=[[(m.reasoning, CONTENT_PART)]]))
            own = m.raw.get("channel") if isinstance(m.raw, Mapping) else None
            channel = own if isinstance(own, str) and own else ("commentary" if m.tool_calls else "final")
            if m.content or (not m.tool_calls and m.reasoning is None):
                out.append(_HMessage(i, "assistant", name=m.name, channel=channel, role="assistant", runs=runs))
            for call in m.tool_calls:
                if call.id is not None:
                    call_names[call.id] = call.name
                out.append(_HMessage(i, "assistant", name=m.name, recipient=f"functions.{call.name}",
                                     channel="commentary", content_type=fmt.tool_content_type, role="assistant",
                                     runs=[[(call.arguments, CONTENT_PART)]]))
        elif m.role == "tool":
            fname = call_names.get(m.tool_call_id or "") or m.name
            if not fname:
                raise ChatInputError(f"{who(conv, i)}: no earlier tool call has id {m.tool_call_id!r} and the "
                                     "message has no 'name'; harmony names a tool result after its function")
            author = fname if "." in fname else f"functions.{fname}"
            out.append(_HMessage(i, author, recipient="assistant", channel="commentary", role="tool", runs=runs))
        else:
            unknown_role(r, conv, i, "harmony", " (openai-harmony would refuse it)")
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
                    "dropped", f"the reasoning of {', '.join(who(conv, o) for o in owners)} is not rendered: "
                    "harmony drops analysis before the final answer (drop_analysis=False keeps it)", owners[0]))

    for h in out:
        o = h.owner
        r.special("<|start|>", o)
        if h.role == "tool":
            r.add(h.role_text, TEXT_PART, o, True)
        else:
            r.add(h.role_text, TEXT_PART, o, True)
            if h.name is not None:
                r.add(":" + h.name, TEXT_PART, o, True)
        if h.recipient is not None and h.recipient != "all":
            r.add(f" to={h.recipient}", TEXT_PART, o, True)
        if h.channel is not None:
            r.special("<|channel|>", o)
            r.add(h.channel, TEXT_PART, o, True)
        if h.content_type is not None:
            if h.content_type.startswith("<|constrain|>"):
                r.add(" ", TEXT_PART, o, True)
                r.special("<|constrain|>", o)
                rest = h.content_type[len("<|constrain|>"):]
                if rest:
                    r.add(rest, TEXT_PART, o, True)
            else:
                r.add(" " + h.content_type, TEXT_PART, o, True)
        r.special("<|message|>", o)
        for run in h.runs:
            first = True
            for text, kind in run:
                if text:
                    r.add(text, kind, o, first)
                    first = False
        r.special("<|call|>" if h.role == "assistant" and h.recipient is not None else "<|end|>", o)
    if gen:
        owner = suffix_owner(conv)
        r.special("<|start|>", owner)
        r.add("assistant", TEXT_PART, owner, True)
    elif fmt.final_return and out and out[-1].role == "assistant" and out[-1].channel == "final":
        last = r.parts[-1]
        r.parts[-1] = Part("<|return|>", SPECIAL_PART, last.owner, True)
        if "<|return|>" not in r.controls:
            r.controls.append("<|return|>")
    return r
