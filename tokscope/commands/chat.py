"""``tokscope chat``: what a conversation costs in tokens, rendered as the model sees it.

The input (``tokscope chat FILE``, or standard input) is the ``messages`` list of the
chat-completions API (or an object holding ``messages`` and ``tools``). The format is the
tokenizer's own: a model folder's chat template when the tokenizer came with one, else the format
its special tokens call for (harmony for o200k_harmony, Llama 3's headers, ChatML). Warnings (content that spells a special token, a
doubled BOS, an unknown role, strings of the format that are not special tokens here) go to
standard error; a template that fails is a one-line error with its own message and line.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..core import chat as core_chat
from ..core.chat.templates import ChatTemplate, TemplateLimitError
from ..core.text.display import safe_text
from ..core.text.errors import TokscopeError
from ..inputs.json_input import read_document
from ..inputs.text_input import InputError, read_input
from ..sources.model_files import chat_template_of, contexts_of, describe
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
    """The JSON in ``path``: what cannot be read is an error in the input (exit 1), and a value
    that is a string or a number is not a conversation (nor tools)."""
    value = read_document(path, what, limit=limit)
    if isinstance(value, (list, dict)):
        return value
    kind = {str: "string", bool: "true/false", type(None): "null"}.get(type(value), "number")
    wanted = "a list of messages (or an object with messages and tools)" if what == "the conversation" else "a list"
    where = "standard input" if path == "-" else path
    raise InputError(f"{what} {safe_text(where)} is a JSON {kind}, not {wanted}", kind="not-json", where=where,
                     path=None if path == "-" else path)


class TemplateNestingError(TokscopeError):
    """A chat template nested deeper than Python can compile (about 20 ``for`` or 100 ``if``).

    >>> str(TemplateNestingError(SyntaxError("too many statically nested blocks")))
    'the chat template is nested too deeply to run (too many statically nested blocks); flatten its for/if blocks'
    """

    def __init__(self, exc: SyntaxError) -> None:
        super().__init__(f"the chat template is nested too deeply to run ({exc.msg}); flatten its for/if blocks")


def _seconds(text: str) -> float:
    """A positive number of seconds.

    >>> _seconds("2.5")
    2.5
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"the time limit must be more than 0 seconds, not {text}")
    return value


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


def _template(args: argparse.Namespace, tokenizer: Any) -> ChatTemplate | None:
    """The model's own template, or ``--template FILE``: a ``.json`` tokenizer config, or Jinja
    text rendered with the special-token variables of the model's folder (``bos_token``...), as
    transformers' ``apply_chat_template(chat_template=...)`` keeps the tokenizer's."""
    if not args.template:
        return chat_template_of(tokenizer)
    text = read_input(args.template, limit=args.max_bytes, keep_head=False).text
    if args.template.endswith(".json"):
        return ChatTemplate.from_config(text, origin=args.template)
    files = describe(tokenizer)
    config = files.config if files is not None and isinstance(files.config, dict) else {}
    return ChatTemplate.from_config(config, jinja=text, origin=args.template)


def _format(args: argparse.Namespace, tokenizer: Any, template: ChatTemplate | None) -> Any:
    if args.format == "template" and template is None:
        raise UsageError("--format template needs a chat template: load the model's folder with -e, "
                         "or give one with --template")
    return core_chat.resolve_format(args.format, tokenizer, template, variables=_variables(args.var) or None,
                                    parse_tool_arguments=args.parse_tool_arguments or None,
                                    timeout=args.template_timeout)


def _conversation_file(args: argparse.Namespace) -> str:
    if args.file is not None and args.file_arg is not None:
        raise UsageError("give the conversation once: FILE or -f FILE")
    path = args.file if args.file is not None else args.file_arg
    if path is None and not stdin_is_piped():
        raise UsageError("no conversation: give FILE (a messages list or an object with messages and tools), "
                         "or pipe it into standard input")
    return path or "-"


def cmd_chat(args: argparse.Namespace) -> int:
    path = _conversation_file(args)
    tokenizer = load_encoding(args.encoding)
    conversation = _read_json_file(path, "the conversation", args.max_bytes)
    tools = _read_json_file(args.tools, "the tools", args.max_bytes) if args.tools else None
    template = _template(args, tokenizer)
    generation = args.add_generation_prompt
    if generation is None:
        generation = core_chat.ADD_GENERATION_PROMPT and not args.continue_final_message
    try:
        count = core_chat.count_chat(tokenizer, conversation, _format(args, tokenizer, template), tools=tools,
                                     add_generation_prompt=generation,
                                     continue_final_message=args.continue_final_message,
                                     content_specials=args.content_specials, template=template)
    except SyntaxError as exc:  # Python's compiler refused the code Jinja made of a deeply nested template
        raise TemplateNestingError(exc) from None
    except TemplateLimitError as exc:
        if "time limit" in str(exc):
            raise TemplateLimitError(f"{exc}; --template-timeout SECONDS sets it", exc.line) from None
        raise
    files = describe(tokenizer)
    if files is not None and files.chat_note and not args.template:  # e.g. Ollama's Go template, not used
        print(f"{PROG}: note: {safe_text(files.chat_note)}", file=sys.stderr)
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
        "continue_final_message": count.continue_final_message,
        "content_specials": count.content_specials,
        "tool_arguments": count.tool_arguments,
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
    lines.extend(notes(count))
    known = [w for w in windows if w.tokens is not None]
    if known:
        lines.append("context: " + " · ".join(w.fit(count.total) for w in known))
    return "\n".join(lines)


def notes(count: core_chat.ChatCount) -> list[str]:
    """How the count was made where it could have been made otherwise.

    >>> from tokscope.sources import registry
    >>> notes(core_chat.count_chat(registry.load("o200k_harmony"), [{"role": "user", "content": "Hi"}]))
    ['generation prompt: on (the assistant header an API request ends with)']
    """
    out = []
    if count.continue_final_message:
        out.append("generation prompt: off; the final message is left open (continue_final_message)")
    elif count.add_generation_prompt:
        out.append("generation prompt: on (the assistant header an API request ends with)")
    else:
        out.append("generation prompt: off")
    if count.tool_arguments == "text":
        out.append("tool-call arguments: the JSON text as given, as transformers passes it "
                   "(--parse-tool-arguments gives the template objects)")
    elif count.tool_arguments == "parsed":
        out.append("tool-call arguments: parsed into objects before rendering (--parse-tool-arguments)")
    if count.content_specials:
        out.append("special-token spellings in the messages: read as the special tokens (--content-specials)")
    return out


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chat", help="count a conversation as the model's chat format renders it")
    add_encoding_option(p)
    p.add_argument("file_arg", nargs="?", metavar="FILE",
                   help="the conversation: a chat-completions messages list, or an object with messages and tools "
                        "(default: standard input)")
    p.add_argument("-f", "--file", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--tools", metavar="FILE", help="tool definitions (a JSON list of function schemas)")
    p.add_argument("--add-generation-prompt", action=argparse.BooleanOptionalAction, default=None,
                   help="end with the header the model answers after, as an API request does (default: on, in the "
                        "explorer too; off with --continue-final-message)")
    p.add_argument("--continue-final-message", action="store_true",
                   help="leave the final message open for the model to continue (prefilling its answer), as "
                        "transformers' continue_final_message")
    p.add_argument("--format", choices=("auto", *core_chat.FORMAT_NAMES), default="auto",
                   help="the chat format (default: the model's template, else the one its special tokens call for)")
    p.add_argument("--template", metavar="FILE",
                   help="a chat template to use: a .jinja file (with the model folder's bos_token and other "
                        "special-token variables) or a tokenizer_config.json")
    p.add_argument("--var", action="append", metavar="NAME=VALUE",
                   help="a template variable, e.g. enable_thinking=false, or a harmony option, e.g. "
                        "reasoning_effort=high (repeatable)")
    p.add_argument("--parse-tool-arguments", action="store_true",
                   help="give the template tool-call arguments as objects parsed from their JSON text, as some "
                        "servers do (default: the text as given, as transformers does)")
    p.add_argument("--content-specials", action="store_true",
                   help="read special-token spellings in the messages as those tokens, as apply_chat_template then "
                        "encode does (default: as text, with a warning saying the difference)")
    p.add_argument("--template-timeout", type=_seconds, metavar="SECONDS",
                   help="the chat template's time limit (default: 2 s, more for long conversations)")
    add_max_bytes_option(p, hidden=True)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_chat)
