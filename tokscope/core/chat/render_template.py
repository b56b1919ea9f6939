"""A Hugging Face chat template rendered into parts (:class:`~.formats.TemplateFormat`): the
template renders the messages (:mod:`.templates`), the messages' strings are located in the text,
and :mod:`.attribution` cuts it into parts owned by the prefix, the messages and the suffix."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from .attribution import owner_cuts, parts_from_text, search_contents, turn_start
from .conversation import KNOWN_ROLES, ChatInputError, Conversation, thaw
from .formats import TemplateFormat
from .parts import SPECIAL_PART, TEXT_PART, Rendering, special_regex, unknown_role, who
from .results import ChatWarning
from .templates import REASONING_KEYS, ChatTemplate, ChatTemplateError, locate_content, render_template, scaled_limits, strings_of


def _template_messages(conv: Conversation, parse_arguments: bool) -> tuple[list[dict[str, Any]], str | None]:
    """The messages as ``apply_chat_template`` hands them to a template: keys holding ``None``
    dropped, reasoning also under ``reasoning_content`` and ``thinking``, tool-call arguments
    given as JSON text passed through (``"text"``) or, when asked, parsed into objects
    (``"parsed"``); the second value says which (``None``: no arguments were JSON text)."""
    out = []
    seen = None
    for m in conv.messages:
        msg = {k: v for k, v in thaw(m.raw).items() if v is not None}
        reasoning = next((msg[k] for k in REASONING_KEYS if msg.get(k) is not None), None)
        if reasoning is not None:
            msg = {"thinking": reasoning, **msg, "reasoning_content": reasoning}
        if isinstance(msg.get("tool_calls"), list):
            for call in msg["tool_calls"]:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    seen = seen or "text"
                    if not parse_arguments:
                        continue
                    try:
                        value = json.loads(fn["arguments"])
                    except ValueError:
                        continue
                    if isinstance(value, dict):
                        fn["arguments"] = value
                        seen = "parsed"
        out.append(msg)
    return out, seen


#: what transformers appends to the final message to find where it ends (continue_final_message)
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def _tag_final(messages: list[dict[str, Any]], source: str) -> str:
    """Append :data:`CONTINUE_TAG` to the final message's content (its last text part), as
    ``apply_chat_template(continue_final_message=True)`` does; returns the content tagged."""
    if not messages:
        raise ChatInputError("continue_final_message is set but the conversation is empty")
    last = messages[-1]
    final = last.get("content")
    if final is None:
        raise ChatInputError('continue_final_message is set but the final message has no "content" to continue')
    if "content" not in source:
        raise ChatInputError("continue_final_message is set but the chat template never reads a message's content")
    if isinstance(final, list):
        for part in reversed(final):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                text = part["text"]
                part["text"] = text + CONTINUE_TAG
                return text
        raise ChatInputError("continue_final_message is set but the final message has no text to continue")
    last["content"] = final + CONTINUE_TAG
    return final


def _continue_at(real: str, final: str) -> int:
    """Where transformers cuts the rendering for ``continue_final_message``: before the tag, and
    before the whitespace the template trimmed around it.

    >>> _continue_at("<u>Hi CONTINUE_FINAL_MESSAGE_TAG </u>", "Hi "), _continue_at("<u>Hi CONTINUE_FINAL_MESSAGE_TAG</u>", "Hi")
    (6, 5)
    """
    tag = CONTINUE_TAG.strip()
    if final.strip() not in real or tag not in real:
        raise ChatInputError("continue_final_message is set but the final message does not appear in the rendering "
                             "(the template deletes part of it)")
    at = real.rindex(tag)
    if real[at:at + len(CONTINUE_TAG)] == CONTINUE_TAG:
        return at
    return len(real[:at].rstrip())


def _probe(messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """A short conversation to learn the generation prompt from: the first message when it is a
    system or developer one, and the last user message (``None`` without a user message).

    >>> [m["role"] for m in _probe([{"role": "system"}, {"role": "user"}, {"role": "assistant"}, {"role": "user"}])]
    ['system', 'user']
    """
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    if last_user is None:
        return None
    first = messages[0]
    return [first, last_user] if first is not last_user and first.get("role") in ("system", "developer") else [last_user]


def _generation_prompt(render: Callable[[list[dict[str, Any]], bool], str], messages: list[dict[str, Any]],
                       real: str, gen: bool) -> str | None:
    """What ``add_generation_prompt`` appends: learnt from a short conversation (:func:`_probe`)
    rendered both ways, taken when ``real`` (rendered with ``gen``) agrees with it; else from the
    whole conversation rendered the other way. ``None`` when the two renderings do not differ by
    an appended text."""
    probe = _probe(messages)
    if probe is not None:
        try:
            with_gen, without = render(probe, True), render(probe, False)
        except ChatTemplateError:
            with_gen = without = ""
        found = with_gen[len(without):] if with_gen.startswith(without) else ""
        if found and (real.endswith(found) if gen else not real.endswith(found)):
            return found
    other = render(messages, not gen)
    with_gen, without = (real, other) if gen else (other, real)
    return with_gen[len(without):] if with_gen.startswith(without) else None


def _dropped(conv: Conversation, ranges: list[tuple[int, int, int]]) -> set[int]:
    """The messages with text that the rendering does not hold anywhere (their strings were
    followed and none landed): the template left them out.

    >>> from tokscope.core.chat.conversation import parse_conversation
    >>> _dropped(parse_conversation([{"role": "x", "content": "a"}, {"role": "user", "content": "b"},
    ...                              {"role": "assistant", "content": None}]), [(5, 6, 1)])
    {0}
    """
    found = {i for _, _, i in ranges}
    return {i for i, m in enumerate(conv.messages) if i not in found and any(p.strip() for p in m.parts)}


def _setup(conv: Conversation, fmt: TemplateFormat, cancel: threading.Event | None
           ) -> tuple[str, str, Callable[..., str], list[dict[str, Any]], str | None, Any, Any, dict[str, Any]]:
    """What rendering ``conv`` with ``fmt`` needs: the template's name and source, a render
    function (messages, generation prompt, tools, documents), the messages as a template sees
    them, how tool-call arguments were given, the tools, the documents and the variables."""
    template = fmt.template
    tools_given = bool(conv.tools)
    name, source = template.select(tools=tools_given, name=fmt.template_name)
    variables = {**template.variables(), **dict(fmt.variables)}
    tools = [thaw(t.raw) for t in conv.tools] if tools_given else None
    documents = [dict(d) for d in fmt.documents] if fmt.documents is not None else None
    messages, tool_arguments = _template_messages(conv, fmt.parse_tool_arguments)
    limits = fmt.limits
    if limits is None:
        size = sum(map(len, strings_of(messages))) + sum(map(len, strings_of(tools))) + sum(map(len, strings_of(documents)))
        limits = scaled_limits(size, len(messages), fmt.timeout)

    def render(msgs: list[dict[str, Any]], with_gen: bool, tools_arg: Any = tools, docs: Any = documents) -> str:
        return render_template(source, messages=msgs, tools=tools_arg, documents=docs,
                               add_generation_prompt=with_gen, variables=variables, limits=limits,
                               cancel=cancel)

    return name, source, render, messages, tool_arguments, tools, documents, variables


def render_template_text(conv: Conversation, fmt: TemplateFormat, gen: bool,
                         cancel: threading.Event | None = None) -> str:
    """The rendered text alone, as ``apply_chat_template(..., tokenize=False)`` gives it."""
    _, _, render, messages, _, _, _, _ = _setup(conv, fmt, cancel)
    return render(messages, gen)


def render_with_template(conv: Conversation, fmt: TemplateFormat, tokenizer: Any, gen: bool, cont: bool = False,
                         cancel: threading.Event | None = None) -> Rendering:
    template = fmt.template
    name, source, render, messages, tool_arguments, tools, documents, variables = _setup(conv, fmt, cancel)
    final = _tag_final(messages, source) if cont else None

    real = render(messages, gen)
    gen_text = _generation_prompt(render, messages, real, gen)

    specials = dict(getattr(tokenizer, "special_tokens", {}) or {})
    special_re = special_regex(specials)
    r = Rendering([], bos=template.bos_token)
    r.tool_arguments = tool_arguments
    r.adds_bos = fmt.tokenizer_adds_bos if fmt.tokenizer_adds_bos is not None else template.add_bos_token

    # where the message strings landed: content ranges, and look-alikes of special tokens
    user_texts = strings_of(messages) + strings_of(tools) + strings_of(documents)
    look_alike = special_re if special_re is not None and any(special_re.search(t) for t in user_texts) else None
    located = locate_content(lambda msgs, tools_arg, docs: render(msgs, gen, tools_arg, docs), real, messages,
                             tools, documents, look_alike=look_alike,
                             avoid=(source, *user_texts, *strings_of(variables)))
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
        ranges = search_contents(real, conv)
        r.warnings.append(ChatWarning(
            "attribution", "the template transforms message content, so tokscope located each message's content "
            "by searching the rendered text; the split between template and content may be approximate"))
    elif level == "content" and any(m.tool_calls for m in conv.messages):
        r.warnings.append(ChatWarning(
            "attribution", "the template transforms tool calls, so their arguments are counted as template tokens"))

    # a turn starts with a special token, or with a control token the model's config lists (DeepSeek's
    # <｜Assistant｜> is an added token that is not special)
    start_token = turn_start(gen_text, {**dict.fromkeys(template.control_tokens, -1), **specials})
    suffix_at = len(real) - len(gen_text) if gen and gen_text else len(real)
    dropped = _dropped(conv, ranges) if located.marked and level != "none" else set()
    for i in sorted(dropped):
        r.warnings.append(ChatWarning("dropped", f"{who(conv, i)}: the chat template leaves it out", i))
    controls = [c for c in template.control_tokens if c not in specials]
    boundary_re = special_regex([*specials, *controls]) if controls else special_re
    owners = owner_cuts(real, ranges, conv, start_token, suffix_at, boundary_re, dropped)
    r.parts = parts_from_text(real, ranges, literal, owners, special_re)
    _template_controls(r, template, specials)
    if final is not None:
        r.truncate(_continue_at(real, final))
    for i, m in enumerate(conv.messages):
        if m.role not in KNOWN_ROLES and m.role not in source:
            unknown_role(r, conv, i, f"chat template's ({name})", "; the template does not mention it")
    return r


#: strings that look like control tokens (for the template format's not-special report)
_LOOKALIKE = re.compile(r"<\|[A-Za-z0-9_]+\|>|<(?:start|end)_of_turn>|\[/?INST\]")


def _template_controls(r: Rendering, template: ChatTemplate, specials: Mapping[str, int]) -> None:
    """Record the control strings the template wrote: its special tokens, and the model's control
    tokens (and look-alikes) that this tokenizer only has as text."""
    written = "\0".join(p.text for p in r.parts if p.kind in (TEXT_PART, SPECIAL_PART))
    for p in r.parts:
        if p.kind == SPECIAL_PART and p.text not in r.controls:
            r.controls.append(p.text)
    for control in (*template.control_tokens, *_LOOKALIKE.findall(written)):
        if control and control not in specials and control not in r.controls and control in written:
            r.controls.append(control)
