"""Count a conversation: render it in a format, encode it, attribute every token, warn.

The result (:class:`~.results.ChatCount`) holds the rendered text, the ids, a kind for every token
(template, content, both, tool definitions), spans that tile the ids (a prefix, one or more per
message, the suffix with the generation prompt), per message the content and template token
counts, the overhead, the cost of the tool definitions, and warnings."""

from __future__ import annotations

import difflib
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from .conversation import ChatInputError, Conversation, parse_conversation
from .encoding import Encoder, encode_parts
from .formats import ChatFormat, ChatMLFormat, HarmonyFormat, Llama3Format, TemplateFormat, resolve_format
from .parts import CONTENT_PART, PREFIX, Rendering, collect_user_strings, special_regex
from .render_chatml import render_chatml
from .render_harmony import render_harmony
from .render_llama3 import render_llama3
from .render_template import render_template_text, render_with_template
from .results import CONTENT, MIXED, TEMPLATE, TOOLS, ChatCount, ChatWarning, MessageCount, Span
from .templates import ChatTemplate
from .warnings import bos_warnings, injection_warnings, not_special_warnings
from ..text.errors import CancelledError


#: whether a count ends with the generation prompt unless told otherwise (the explorer's chat screen
#: and ``tokscope chat`` alike): on, because what is counted is a request, and a chat-completions
#: request is always rendered with it (the model answers after the assistant header)
ADD_GENERATION_PROMPT = True


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CancelledError("counting the conversation was cancelled")


def _render(conv: Conversation, fmt: ChatFormat, tokenizer: Any, gen: bool, cont: bool = False,
            cancel: threading.Event | None = None) -> Rendering:
    if isinstance(fmt, ChatMLFormat):
        r = render_chatml(conv, fmt, tokenizer, gen)
    elif isinstance(fmt, HarmonyFormat):
        r = render_harmony(conv, fmt, gen)
    elif isinstance(fmt, Llama3Format):
        r = render_llama3(conv, fmt, gen)
    else:
        r = render_with_template(conv, fmt, tokenizer, gen, cont, cancel)
        cont = False  # the template's own cut, as transformers makes it
    if cont:
        _leave_open(r, conv)
    collect_user_strings(r, conv)
    return r


def _leave_open(r: Rendering, conv: Conversation) -> None:
    """End the rendering right after the final message's content (``continue_final_message``)."""
    last = len(conv.messages) - 1
    pos = end = 0
    for p in r.parts:
        pos += len(p.text)
        if p.owner == last and p.kind == CONTENT_PART:
            end = pos
    if last < 0 or not end:
        raise ChatInputError("continue_final_message is set but the final message has no content to continue")
    r.truncate(end)


#: the longest stretch of ids compared id by id to find the tool definitions' tokens
_DIFF_LIMIT = 20_000


def mark_tool_tokens(ids: Sequence[int], kinds: list[str], bare: Sequence[int]) -> None:
    """Mark as tool definitions (``d``) the template tokens of ``ids`` that the rendering without
    tools (``bare``) does not have: beyond the common start and end, the two are compared id by id
    when short enough, else the whole middle is the tools'. Content is never marked.

    >>> kinds = list("tcttttc")
    >>> mark_tool_tokens([1, 2, 7, 8, 3, 4, 5], kinds, [1, 2, 3, 4, 5]); "".join(kinds)
    'tcddttc'
    """
    n, m = len(ids), len(bare)
    prefix = 0
    while prefix < min(n, m) and ids[prefix] == bare[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(n, m) - prefix and ids[n - 1 - suffix] == bare[m - 1 - suffix]:
        suffix += 1
    new, old = ids[prefix:n - suffix], bare[prefix:m - suffix]
    if not old or len(new) + len(old) > _DIFF_LIMIT:
        added = [(prefix, n - suffix)]
    else:
        added = [(prefix + j1, prefix + j2) for op, _, _, j1, j2
                 in difflib.SequenceMatcher(None, list(old), list(new), autojunk=False).get_opcodes()
                 if op in ("insert", "replace")]
    for lo, hi in added:
        for k in range(lo, hi):
            if kinds[k] == TEMPLATE:
                kinds[k] = TOOLS


def _ids_without_tools(enc: Encoder, r: Rendering, conv: Conversation, fmt: ChatFormat, tokenizer: Any, gen: bool,
                       cont: bool, content_specials: bool, template: ChatTemplate | None,
                       cancel: threading.Event | None) -> Sequence[int]:
    """The ids of the conversation counted without its tools (what the tools add is the difference).

    A template's rendering without tools is encoded with every special token read as one when no
    message spells a special token (then that is what the full count would do): one render
    instead of the several a full count takes. Otherwise, the full count."""
    bare = Conversation(conv.messages, ())
    pattern = special_regex(enc.specials)
    plain = content_specials or pattern is None or not any(pattern.search(t) for _, _, t in r.user_strings)
    if isinstance(fmt, TemplateFormat) and not cont and plain:
        text = render_template_text(bare, fmt, gen, cancel)
        return enc.tok.encode(text, allowed_special=set(enc.specials), disallowed_special=(), **enc.extra)
    return count_chat(tokenizer, bare, fmt, add_generation_prompt=gen, continue_final_message=cont,
                      content_specials=content_specials, template=template, cancel=cancel).ids


def _check_roles(conv: Conversation, specials: Mapping[str, int]) -> None:
    pattern = special_regex(specials)
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
    add_generation_prompt: bool = ADD_GENERATION_PROMPT,
    continue_final_message: bool = False,
    content_specials: bool = False,
    template: ChatTemplate | None = None,
    cancel: threading.Event | None = None,
) -> ChatCount:
    """Render ``conversation`` in ``format`` and count it with ``tokenizer``.

    ``conversation`` is anything :func:`parse_conversation` takes; ``format`` a name from
    :data:`FORMAT_NAMES`, ``"auto"`` (:func:`pick_format`) or a format object with options;
    ``template`` the model's chat template for ``"template"`` (and for ``"auto"``).
    ``add_generation_prompt`` (default on, as an API call is counted) appends the assistant
    header the model answers after. ``continue_final_message`` (transformers' option for
    prefilling the answer; not with the generation prompt) ends the rendering inside the final
    message, right after its content. ``content_specials`` reads special-token spellings in
    the messages and tools as those tokens, as ``apply_chat_template`` then ``encode`` does
    (default: as text, with a warning). The tokenizer needs ``encode(text, allowed_special=...,
    disallowed_special=...)`` and ``special_tokens``; with ``token_bytes`` or ``pieces`` token
    offsets are exact. Setting ``cancel`` stops with :class:`CancelledError` (checked between
    steps and while a template renders).

    >>> from tokscope.sources import registry
    >>> c = count_chat(registry.load("o200k_harmony"), [{"role": "user", "content": "Hi"}], "harmony")
    >>> c.messages[0].content_tokens, c.text[-51:]
    (1, '<|start|>user<|message|>Hi<|end|><|start|>assistant')
    """
    conv = parse_conversation(conversation, tools)
    fmt = resolve_format(format, tokenizer, template)
    if continue_final_message and add_generation_prompt:
        raise ChatInputError("continue_final_message and add_generation_prompt do not go together: one continues the "
                             "final message, the other starts a new assistant turn")
    enc = Encoder(tokenizer)
    _check_roles(conv, enc.specials)
    r = _render(conv, fmt, tokenizer, add_generation_prompt, continue_final_message, cancel)
    pattern = special_regex(enc.specials) if content_specials else None
    if pattern is not None:
        r.read_specials(pattern)
    _check_cancel(cancel)
    ids, kinds, offsets, owners, report = encode_parts(enc, r)
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
        if owner == PREFIX:
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
    warnings.extend(not_special_warnings(report, name, fmt.name))
    warnings.extend(injection_warnings(enc, r, fmt.name, conv, content_specials))
    warnings.extend(bos_warnings(enc, r, ids))
    merged = kinds.count(MIXED)
    if merged:
        warnings.append(ChatWarning(
            "merged", f"{merged} token{'s' if merged > 1 else ''} join{'s' if merged == 1 else ''} template text and "
            "message content (the tokenizer merged across the boundary); counted as content"))

    tool_tokens = None
    if conv.tools:
        bare_ids = _ids_without_tools(enc, r, conv, fmt, tokenizer, add_generation_prompt, continue_final_message,
                                      content_specials, template, cancel)
        tool_tokens = len(ids) - len(bare_ids)
        if isinstance(fmt, TemplateFormat):  # the other formats mark their tools' parts themselves
            mark_tool_tokens(ids, kinds, bare_ids)
        if tool_tokens == 0:
            warnings.append(ChatWarning(
                "unused-tools", f"the {fmt.name} format writes no tool definitions here, so the model never sees "
                f"the {len(conv.tools)} tool{'s' if len(conv.tools) > 1 else ''} given"))
    return ChatCount(fmt.name, name, text, tuple(ids), "".join(kinds), tuple(offsets), tuple(spans),
                     tuple(per_message), tuple(report.values()), tuple(warnings), tool_tokens, add_generation_prompt,
                     continue_final_message, content_specials, r.tool_arguments)
