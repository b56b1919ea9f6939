"""What a count of a conversation holds: token kinds, spans, per-message counts, the format's
control strings and warnings (:class:`ChatCount`)."""

from __future__ import annotations

from dataclasses import dataclass


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
    ``content_specials``: special-token spellings in the messages were read as those tokens.
    ``tool_arguments`` says how a template was given tool-call arguments written as JSON text:
    ``"text"`` (as given, transformers' way), ``"parsed"`` (as objects), ``None`` (none such).
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
    continue_final_message: bool = False
    content_specials: bool = False
    tool_arguments: str | None = None

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
