"""``tokscope chat``: what a conversation costs in tokens, rendered as the model sees it.

The input is the ``messages`` list of the chat-completions API (or an object holding ``messages``
and ``tools``). The format is the tokenizer's own: a model folder's chat template when the
tokenizer came with one, else the format its special tokens call for (harmony for
o200k_harmony, Llama 3's headers, ChatML). Warnings (content that spells a special token, a
doubled BOS, an unknown role, strings of the format that are not special tokens here) go to
standard error; a template that fails is a one-line error with its own message and line.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..core.chat import chat as core_chat
from ..core.chat.templates import ChatTemplate
from ..core.text.display import safe_text
from ..sources.model_files import chat_template_of, contexts_of
from ..sources.text_input import read_input, read_json
from .common import (
    PROG,
    UsageError,
    add_encoding_option,
    add_max_bytes_option,
    load_encoding,
    print_json,
    stdin_is_piped,
)


def _read_json_file(path: str, what: str, limit: int) -> Any:
    # a file that is not JSON is bad input (exit 1), not a misused command line (exit 2)
    return read_json(path, what, limit=limit)


def _variables(pairs: list[str] | None) -> dict[str, Any]:
    """``NAME=VALUE`` pairs; the value is read as JSON when it is JSON (``true``, ``3``), else kept
    as a string.

    >>> _variables(["enable_thinking=false", "who=me"])
    {'enable_thinking': False, 'who': 'me'}
    """
    out: dict[str, Any] = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name.isidentifier():
            raise UsageError(f"--var needs NAME=VALUE, not {safe_text(pair)!r}")
        try:
            out[name] = json.loads(value)
        except ValueError:
            out[name] = value
    return out


def _format(args: argparse.Namespace, template: ChatTemplate | None) -> Any:
    variables = _variables(args.var)
    if args.format in (None, "auto"):
        if template is not None:
            return core_chat.TemplateFormat(variables=variables) if variables else "auto"
        return "auto"
    if args.format == "template":
        if template is None:
            raise UsageError("--format template needs a chat template: load the model's folder with -e, "
                             "or give one with --template")
        return core_chat.TemplateFormat(variables=variables)
    return args.format


def cmd_chat(args: argparse.Namespace) -> int:
    tokenizer = load_encoding(args.encoding)
    if args.file is None and not stdin_is_piped():
        raise UsageError("no conversation: give -f FILE (a messages list or an object with messages and tools), "
                         "or pipe it into standard input")
    conversation = _read_json_file(args.file or "-", "the conversation", args.max_bytes)
    tools = _read_json_file(args.tools, "the tools", args.max_bytes) if args.tools else None
    template = chat_template_of(tokenizer)
    if args.template:
        text = read_input(args.template, limit=args.max_bytes, keep_head=False).text
        if args.template.endswith(".json"):
            template = ChatTemplate.from_config(text, origin=args.template)
        else:
            template = ChatTemplate.from_jinja(text, origin=args.template)
    count = core_chat.count_chat(tokenizer, conversation, _format(args, template), tools=tools,
                                 add_generation_prompt=args.add_generation_prompt, template=template)
    for warning in count.warnings:
        print(f"{PROG}: warning: {safe_text(warning.message)}", file=sys.stderr)
    windows = contexts_of(tokenizer)
    if args.json:
        print_json(chat_json(count, windows))
        return 0
    sys.stdout.write(plain(count, windows) + "\n")
    return 0


def chat_json(count: core_chat.ChatCount, windows: tuple[Any, ...]) -> dict[str, Any]:
    """The ``--json`` object: ``text``, ``ids``, ``messages`` (``role``, ``tokens``, ``start``/``end``),
    ``overhead``, ``total``, and more."""
    return {
        "encoding": count.tokenizer,
        "format": count.format,
        "text": count.text,
        "ids": list(count.ids),
        "messages": [
            {"index": m.index, "role": m.role, "tokens": m.tokens, "content_tokens": m.content_tokens,
             "start": m.spans[0][0] if m.spans else None, "end": m.spans[-1][1] if m.spans else None,
             "spans": [list(s) for s in m.spans]}
            for m in count.messages
        ],
        "kinds": count.kinds,
        "overhead": count.overhead,
        "total": count.total,
        "content_tokens": count.content_tokens,
        "tool_tokens": count.tool_tokens,
        "add_generation_prompt": count.add_generation_prompt,
        "exact": count.exact,
        "format_tokens": [{"text": t.text, "id": t.id, "text_tokens": t.text_tokens, "uses": t.uses,
                           "assumed": t.assumed} for t in count.format_tokens],
        "context": [{"model": w.model, "tokens": w.tokens, "remaining": w.remaining(count.total)} for w in windows],
        "warnings": [{"kind": w.kind, "message": w.message, "index": w.index} for w in count.warnings],
    }


def plain(count: core_chat.ChatCount, windows: tuple[Any, ...]) -> str:
    """The rendered prompt (made safe to print), the ids, per-message counts, overhead and total."""
    lines = [f"{count.tokenizer} · {count.format}" + ("" if count.exact else " (some format strings are text here)"),
             "", "rendered:"]
    lines += ["  " + safe_text(line) for line in count.text.split("\n")]
    lines += ["", "ids: " + " ".join(map(str, count.ids)), "", "messages:"]
    width = max((len(m.role) for m in count.messages), default=4)
    for m in count.messages:
        where = f"ids {m.spans[0][0]}-{m.spans[-1][1]}" if m.spans else "not rendered"
        lines.append(f"  {m.index + 1:>3}. {safe_text(m.role):<{width}}  {m.tokens:>6,} tokens "
                     f"({m.content_tokens:,} content, {m.template_tokens:,} template)  {where}")
    lines.append("")
    parts = ["template"] + (["generation prompt"] if count.add_generation_prompt else []) + (
        ["tool definitions"] if count.tool_tokens else [])
    lines.append(f"overhead: {count.overhead:,} tokens ({', '.join(parts)})")
    if count.tool_tokens:
        lines.append(f"tools: {count.tool_tokens:,} tokens")
    lines.append(f"total: {count.total:,} tokens")
    known = [w for w in windows if w.tokens is not None]
    if known:
        lines.append("context: " + " · ".join(w.fit(count.total) for w in known))
    return "\n".join(lines)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chat", help="count a conversation as the model's chat format renders it")
    add_encoding_option(p)
    p.add_argument("-f", "--file", metavar="FILE",
                   help="the conversation: a chat-completions messages list, or an object with messages and tools "
                        "(default: standard input)")
    p.add_argument("--tools", metavar="FILE", help="tool definitions (a JSON list of function schemas)")
    p.add_argument("--add-generation-prompt", action="store_true",
                   help="end with the header the model answers after (as an API request does)")
    p.add_argument("--format", choices=("auto", *core_chat.FORMAT_NAMES), default="auto",
                   help="the chat format (default: the model's template, else the one its special tokens call for)")
    p.add_argument("--template", metavar="FILE",
                   help="a chat template to use: a .jinja file or a tokenizer_config.json")
    p.add_argument("--var", action="append", metavar="NAME=VALUE",
                   help="a template variable, e.g. enable_thinking=false (repeatable)")
    add_max_bytes_option(p, hidden=True)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_chat)
