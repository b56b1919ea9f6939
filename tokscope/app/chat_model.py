"""The conversation the chat screen edits, and the counting that the chat screen and compare share.

A :class:`ChatDraft` is a chat-completions ``messages`` list (each message a plain dict, so the
fields the screen does not edit, such as ``tool_calls``, ``name`` or ``tool_call_id``, stay as
they were loaded), the ``tools`` given with it, the generation-prompt switch and the format
choice. :func:`count_draft` renders and counts it for one tokenizer with the core
(:func:`tokscope.core.chat.count_chat`, the model's own template from
:func:`tokscope.sources.model_files.chat_template_of`, its context sizes from
:func:`~tokscope.sources.model_files.contexts_of`: the calls ``tokscope chat`` makes) and lays it
out for the token views. It runs in worker threads; nothing here touches a widget.
"""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from ..core import chat as core_chat
from ..core.chat.templates import ChatTemplate, ChatTemplateError, one_line
from ..core.chat.context import ContextWindow
from ..core.text.display import safe_text
from ..core.document.document import Document
from ..core.text.errors import CancelledError, TokscopeError
from .render import TEXT, layout

#: the roles the screen cycles through (Ctrl+R); a loaded message may hold another
ROLES = core_chat.KNOWN_ROLES

#: the conversation the screen starts from when the explorer holds its built-in sample
EXAMPLE: tuple[dict[str, Any], ...] = (
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "What is a token?"},
    {"role": "assistant", "content": "A piece of text, often a word or part of one, that a model reads as one unit."},
    {"role": "user", "content": "How many tokens does this conversation cost?"},
)

#: the format choices besides the core's format names: the tokenizer's own, and ChatML counted
#: with the single ids the web token counters assume
AUTO, CHATML_IDS = "auto", "chatml-ids"


def content_of(message: dict[str, Any]) -> str:
    """A message's text as the editor shows it: the string, or its text parts joined.

    >>> content_of({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
    'ab'
    >>> content_of({"role": "assistant", "content": None})
    ''
    """
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                key = core_chat.TEXT_PART_TYPES.get(part.get("type"))  # type: ignore[arg-type]
                text = part.get(key) if key else None
                if isinstance(text, str):
                    out.append(text)
        return "".join(out)
    return str(content)


def set_content(message: dict[str, Any], text: str) -> None:
    """Give ``message`` the text ``text``; content parts stay as they were when the text is theirs."""
    if content_of(message) == text and message.get("content") is not None:
        return
    if text == "" and message.get("content") is None:
        return
    message["content"] = text


def preview(message: dict[str, Any], width: int = 40) -> str:
    """One line for the message list: the content's first line (made safe), else the tool calls.

    >>> preview({"role": "user", "content": "first line\\nsecond"}), preview({"role": "assistant", "content": ""})
    ('first line…', '(empty)')
    """
    text = content_of(message)
    if not text.strip():
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            names = []
            for call in calls:
                function = call.get("function", call) if isinstance(call, dict) else {}
                names.append(str(function.get("name", "?")) if isinstance(function, dict) else "?")
            return safe_text("→ " + ", ".join(names))[:width]
        return "(empty)"
    first = text.lstrip("\n").split("\n", 1)
    more = len(first) > 1 and first[1].strip() != ""
    line = safe_text(first[0][: width * 4])  # a stand-in is a few cells at most
    if len(line) > width:
        return line[: width - 1] + "…"
    return line + ("…" if more else "")


@dataclass
class ChatDraft:
    """The conversation being edited (see the module docstring)."""

    messages: list[dict[str, Any]]
    tools: list[Any] | None = None
    generation: bool = core_chat.ADD_GENERATION_PROMPT
    format: str = AUTO
    #: the JSON file it was loaded from or saved to last
    path: str | None = None
    #: the conversation's JSON when it was made, loaded or saved (``None``: now)
    baseline: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.baseline is None:
            self.baseline = self.to_json()

    @property
    def modified(self) -> bool:
        """Whether the messages or tools changed since the draft was made, loaded or saved
        (the generation prompt and the format are settings, not the conversation).

        >>> d = ChatDraft.example(); d.modified
        False
        >>> d.messages[0]["content"] = "Be brief."; d.modified
        True
        >>> d.mark_saved("c.json"); d.modified, d.path
        (False, 'c.json')
        """
        return self.to_json() != self.baseline

    def mark_saved(self, path: str | None = None) -> None:
        """The draft as it is now is what was saved (to ``path``) or is to be let go."""
        self.baseline = self.to_json()
        if path is not None:
            self.path = path

    @classmethod
    def example(cls) -> ChatDraft:
        return cls([dict(m) for m in EXAMPLE])

    @classmethod
    def from_text(cls, text: str) -> ChatDraft:
        """One user message holding ``text`` (the explorer's own text)."""
        return cls([{"role": "user", "content": text}])

    @classmethod
    def from_json(cls, data: Any, path: str | None = None) -> ChatDraft:
        """A draft of a chat-completions ``messages`` list or an object with ``messages`` and
        ``tools``, checked by the core first (:class:`~tokscope.core.chat.ChatInputError`)."""
        core_chat.parse_conversation(data)  # one-line errors, counted from message 1
        if isinstance(data, dict):
            messages, tools = data["messages"], data.get("tools")
        else:
            messages, tools = data, None
        return cls([dict(m) for m in messages], list(tools) if tools else None, path=path)

    def snapshot(self) -> ChatDraft:
        """A deep copy (what a worker counts, and what an undo brings back)."""
        return ChatDraft(copy.deepcopy(self.messages), copy.deepcopy(self.tools), self.generation, self.format, self.path,
                         self.baseline)

    def conversation(self) -> dict[str, Any]:
        """The chat-completions object: ``messages`` and, when there are any, ``tools``."""
        out: dict[str, Any] = {"messages": self.messages}
        if self.tools:
            out["tools"] = self.tools
        return out

    def to_json(self) -> str:
        return json.dumps(self.conversation(), ensure_ascii=False, indent=2) + "\n"


# ----- formats -----------------------------------------------------------------------------------


def format_choices(tokenizer: Any, template: ChatTemplate | None) -> list[tuple[str, str]]:
    """``(label, value)`` of the formats the screen offers for ``tokenizer``: its own first
    (``auto``), then every usable one of :func:`~tokscope.core.chat.chat_formats`; a format whose
    control strings are not special tokens here is marked ``as text``.

    >>> from tokscope.sources import registry
    >>> [v for _, v in format_choices(registry.load("o200k_base"), None)]
    ['auto', 'chatml', 'chatml-ids', 'harmony', 'llama3']
    >>> format_choices(registry.load("o200k_harmony"), None)[0]
    ('auto: harmony', 'auto')
    """
    out = [(f"auto: {core_chat.pick_format(tokenizer, template)}", AUTO)]
    name = getattr(tokenizer, "name", "")
    for info in core_chat.chat_formats(tokenizer, template):
        if not info.usable:
            continue
        out.append((info.name if info.exact else f"{info.name} (as text)", info.name))
        if info.name == "chatml" and name in core_chat.CHATML_ASSUMED_IDS:
            out.append(("chatml: web ids", CHATML_IDS))
    return out


def format_arg(choice: str) -> Any:
    """What :func:`~tokscope.core.chat.count_chat` takes for a choice of :func:`format_choices`."""
    if choice == CHATML_IDS:
        return core_chat.ChatMLFormat(assume_ids=True)
    return choice


# ----- counting ----------------------------------------------------------------------------------


class DrawnTokenizer:
    """The tokenizer as the token views draw a chat rendering: ids a format assumed (ChatML's
    ids in the web counters, not in the published vocabulary) are special tokens spelling their
    text; everything else is the tokenizer's own."""

    def __init__(self, tokenizer: Any, assumed: dict[int, bytes]) -> None:
        self._tokenizer = tokenizer
        self._assumed = assumed

    def token_bytes(self, token_id: int) -> bytes:
        data = self._assumed.get(token_id)
        return data if data is not None else self._tokenizer.token_bytes(token_id)

    def is_special(self, token_id: int) -> bool:
        return token_id in self._assumed or self._tokenizer.is_special(token_id)

    def is_added(self, token_id: int) -> bool:
        return token_id in self._assumed or self._tokenizer.is_added(token_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tokenizer, name)


@dataclass
class ChatResult:
    """One count of a draft under one tokenizer: ``count`` (None when it failed: ``error`` is the
    one-line reason), the document and rows the token views draw, and what the screen shows around
    it (``choices``, the format ``choice`` used, the context ``windows``)."""

    tokenizer: Any
    choice: str
    choices: list[tuple[str, str]]
    windows: tuple[ContextWindow, ...] = ()
    count: core_chat.ChatCount | None = None
    error: str | None = None
    doc: Document | None = None
    rows: list[int] = field(default_factory=lambda: [0])
    width: int = 0
    mode: str = TEXT

    @property
    def assumed(self) -> bool:
        return self.count is not None and any(t.assumed for t in self.count.format_tokens)


def template_of(tokenizer: Any) -> ChatTemplate | None:
    """The model's own chat template (:func:`~tokscope.sources.model_files.chat_template_of`), looked up
    once per tokenizer (kept in its ``derived`` facts: it reads the model's folder)."""
    from ..sources.model_files import chat_template_of

    def build() -> ChatTemplate | None:
        try:
            return chat_template_of(tokenizer)
        except Exception:  # noqa: BLE001 - a tokenizer with no folder facts has no template
            return None

    derived = getattr(tokenizer, "derived", None)
    return derived("chat.template", build) if callable(derived) else build()


def error_line(exc: BaseException) -> str:
    """A failure as one line: the core's own message (a template's names its line)."""
    if isinstance(exc, (TokscopeError, ChatTemplateError)):
        return safe_text(one_line(str(exc) or type(exc).__name__))
    return safe_text(one_line(f"{type(exc).__name__}: {exc}"))


def count_draft(tokenizer: Any, draft: ChatDraft, *, choice: str | None = None, width: int = 80, mode: str = TEXT,
                ws: bool = True, cancel: threading.Event | None = None) -> ChatResult:
    """Render and count ``draft`` under ``tokenizer`` and lay it out ``width`` cells wide.

    ``choice`` (default: the draft's) is a value of :func:`format_choices`; one the tokenizer does
    not offer becomes ``auto``. Raises :class:`~tokscope.core.text.errors.CancelledError` when
    ``cancel`` is set; every other failure is the result's ``error``.

    >>> from tokscope.sources import registry
    >>> r = count_draft(registry.load("o200k_harmony"), ChatDraft.example())
    >>> r.count.format, r.count.total == len(r.doc.ids), r.error
    ('harmony', True, None)
    """
    from ..sources.model_files import contexts_of

    template = template_of(tokenizer)
    choices = format_choices(tokenizer, template)
    choice = choice if choice is not None else draft.format
    if choice not in [v for _, v in choices]:
        choice = AUTO
    result = ChatResult(tokenizer, choice, choices, width=width, mode=mode)
    try:
        result.windows = contexts_of(tokenizer)
    except Exception:  # noqa: BLE001 - a context size is a nicety
        result.windows = ()
    try:
        count = core_chat.count_chat(tokenizer, draft.conversation(), format_arg(choice),
                                     add_generation_prompt=draft.generation, template=template, cancel=cancel)
        assumed = {t.id: t.text.encode("utf-8") for t in count.format_tokens if t.assumed and t.id is not None}
        drawn = DrawnTokenizer(tokenizer, assumed) if assumed else tokenizer
        doc = Document.from_tokens(drawn, count.text, count.ids, count.offsets)
        if cancel is not None and cancel.is_set():
            raise CancelledError("superseded")
        rows = layout(doc, width, mode, ws)
    except CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing template or conversation is shown as one line
        result.error = error_line(exc)
        return result
    result.count, result.doc, result.rows = count, doc, rows
    return result


def overhead_parts(count: core_chat.ChatCount) -> list[tuple[str, int]]:
    """What the overhead is made of: template tokens (before, between and around the messages)
    and the generation prompt; the tool definitions' cost is separate (``count.tool_tokens``)."""
    suffix = count.suffix_tokens()
    parts = [("template", count.overhead - suffix)]
    if count.add_generation_prompt or suffix:
        parts.append(("generation prompt", suffix))
    return parts


def summary_line(count: core_chat.ChatCount) -> str:
    """``90 tokens = 21 content + 69 overhead (66 template, 3 generation prompt)``, and the tools.

    >>> from tokscope.sources import registry
    >>> summary_line(count_draft(registry.load("llama3"), ChatDraft.example()).count)
    '65 tokens = 40 content + 25 overhead (21 template, 4 generation prompt)'
    """
    parts = ", ".join(f"{n:,} {what}" for what, n in overhead_parts(count))
    if not count.add_generation_prompt:
        parts += ", generation prompt off"
    line = f"{count.total:,} tokens = {count.content_tokens:,} content + {count.overhead:,} overhead ({parts})"
    if count.tool_tokens is not None:
        line += f"; the tool definitions add {count.tool_tokens:,}"
    return line


def fit_line(windows: tuple[ContextWindow, ...], used: int) -> str:
    """The context sizes the count is held to, smallest first, models of one size together
    (each said as ``ContextWindow.fit`` says it for ``tokscope chat``).

    >>> from tokscope.core.chat.context import context_windows_for
    >>> fit_line(context_windows_for("cl100k_base"), 100)
    'context: gpt-4 8,192 (8,092 left) · gpt-3.5-turbo 16,385 (16,285 left) · gpt-4-turbo 128,000 (127,900 left)'
    >>> fit_line(context_windows_for("o200k_harmony"), 100)
    'context: gpt-oss-20b, gpt-oss-120b 131,072 (130,972 left)'
    """
    sizes: dict[int, list[str]] = {}
    for w in windows:
        if w.tokens is not None:
            sizes.setdefault(w.tokens, []).append(w.model)
    if not sizes:
        return "context size: unknown for this tokenizer"
    fits = [ContextWindow(", ".join(models), tokens).fit(used) for tokens, models in sorted(sizes.items())]
    return "context: " + " · ".join(safe_text(f) for f in fits)
