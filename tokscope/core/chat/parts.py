"""A rendering as a list of parts (template text, special tokens, message content, tool
definitions), each owned by the prefix, a message or the suffix: what every format's renderer
builds and what the encoding reads."""

from __future__ import annotations

import json
from functools import lru_cache
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import regex

from .conversation import Conversation, thaw
from .results import ChatWarning


#: what a part is: a control string of the format, template text, message content, tool definitions
SPECIAL_PART, TEXT_PART, CONTENT_PART, TOOLS_PART = 0, 1, 2, 3
#: the owner of parts before the first message (a message owns its index, the suffix len(messages))
PREFIX = -1


@dataclass(slots=True)
class Part:
    """A piece of the rendering: ``kind`` (a ``*_PART``), its ``owner``; ``new_run`` starts a run
    encoded on its own (harmony); ``as_special`` reads a non-control part as the special token it
    spells (content read as transformers reads it)."""

    text: str
    kind: int
    owner: int
    new_run: bool = False
    as_special: bool = False


@dataclass(slots=True)
class Rendering:
    parts: list[Part]
    piecewise: bool = False
    warnings: list[ChatWarning] = field(default_factory=list)
    controls: list[str] = field(default_factory=list)  # the format's control strings, in order of first use
    assumed: dict[str, int] = field(default_factory=dict)
    bos: str | None = None
    adds_bos: bool | None = None
    user_strings: list[tuple[int | None, str, str]] = field(default_factory=list)  # (message, what, text)
    tool_arguments: str | None = None  # how a template saw tool-call arguments given as JSON text

    def add(self, text: str, kind: int, owner: int, new_run: bool = False) -> None:
        if text or kind == SPECIAL_PART:
            self.parts.append(Part(text, kind, owner, new_run))

    def special(self, text: str, owner: int) -> None:
        if text not in self.controls:
            self.controls.append(text)
        self.parts.append(Part(text, SPECIAL_PART, owner, True))

    def truncate(self, at: int) -> None:
        """Keep the first ``at`` characters of the rendering (cutting the part that straddles it).

        >>> r = Rendering([Part("ab", TEXT_PART, 0), Part("cd", CONTENT_PART, 0), Part("ef", TEXT_PART, 0)])
        >>> r.truncate(3); [p.text for p in r.parts]
        ['ab', 'c']
        """
        out, pos = [], 0
        for p in self.parts:
            if pos >= at:
                break
            if pos + len(p.text) > at:
                p = Part(p.text[: at - pos], p.kind, p.owner, p.new_run, p.as_special)
            out.append(p)
            pos += len(p.text)
        self.parts = out

    def read_specials(self, pattern: regex.Pattern[str]) -> None:
        """Spellings of special tokens (``pattern``) in every part that is not a control string are
        read as those tokens, as ``apply_chat_template`` then ``encode`` reads them.

        >>> r = Rendering([Part("a<s>b", CONTENT_PART, 0)])
        >>> r.read_specials(special_regex(["<s>"])); [(p.text, p.as_special) for p in r.parts]
        [('a', False), ('<s>', True), ('b', False)]
        """
        out = []
        for p in self.parts:
            if p.kind == SPECIAL_PART or p.as_special:
                out.append(p)
                continue
            at = 0
            for found in pattern.finditer(p.text):
                s, e = found.span()
                if s > at:
                    out.append(Part(p.text[at:s], p.kind, p.owner, p.new_run and at == 0))
                out.append(Part(p.text[s:e], p.kind, p.owner, True, True))
                at = e
            if at == 0:
                out.append(p)
            elif at < len(p.text):
                out.append(Part(p.text[at:], p.kind, p.owner, True))
        self.parts = out


def suffix_owner(conv: Conversation) -> int:
    return len(conv.messages)


def who(conv: Conversation, i: int) -> str:
    return f"message {i + 1} ({conv.messages[i].role})"


def unknown_role(r: Rendering, conv: Conversation, i: int, fmt_name: str, extra: str = "") -> None:
    r.warnings.append(ChatWarning(
        "unknown-role", f"{who(conv, i)}: the {fmt_name} format has no role {conv.messages[i].role!r}; "
        f"written as it is{extra}", i))


def collect_user_strings(r: Rendering, conv: Conversation) -> None:
    for i, m in enumerate(conv.messages):
        for part in m.parts:
            r.user_strings.append((i, "content", part))
        if m.reasoning:
            r.user_strings.append((i, "reasoning", m.reasoning))
        for call in m.tool_calls:
            r.user_strings.append((i, "tool call", call.name + " " + call.arguments))
    for tool in conv.tools:
        r.user_strings.append((None, "tool definition", json.dumps(thaw(tool.raw), ensure_ascii=False)))


def special_regex(strings: Collection[str]) -> regex.Pattern[str] | None:
    """A pattern matching any of ``strings``, longest first (``None`` when there are none).

    >>> special_regex(["<|a|>", "<|a|>b"]).findall("<|a|>b <|a|>"), special_regex([])
    (['<|a|>b', '<|a|>'], None)
    """
    alternatives = tuple(sorted({s for s in strings if s}))
    if not alternatives:
        return None
    return _compiled_alternatives(alternatives)


#: the deepest nesting of groups :func:`special_regex` writes its prefix tree with (the regex
#: module parses nested groups recursively; deeper trees, which real tokenizers never make, are
#: written as the plain alternation)
_TRIE_MAX_DEPTH = 24


@lru_cache(maxsize=32)
def _compiled_alternatives(alternatives: tuple[str, ...]) -> regex.Pattern[str]:
    source = _trie_source(alternatives)
    if source is None:
        ordered = sorted(alternatives, key=lambda s: (-len(s), s))
        source = "|".join(regex.escape(s) for s in ordered)
    return regex.compile(source)


def _trie_source(strings: Sequence[str], max_depth: int = _TRIE_MAX_DEPTH) -> str | None:
    """A regular expression matching the same as the alternation of ``strings`` longest first,
    written as their prefix tree: a tokenizer's thousand special tokens share their first
    characters, and the tree tries each character once instead of every token at every position.
    At a node the longer continuations are tried before the string that ends there, so the match
    at a position is the longest of the strings there, as with the alternation. ``None`` when
    the groups would nest deeper than ``max_depth``.

    >>> _trie_source(["ab", "abc", "b"]), _trie_source(["a", "aa", "aaa"], max_depth=1)
    ('(?:ab(?:c)?|b)', None)
    """
    root: dict[str, dict] = {}
    for s in strings:
        node = root
        for ch in s:
            node = node.setdefault(ch, {})
        node[""] = {}
    # iteratively, deepest nodes first: a node's source is its children's, each after its character
    order: list[tuple[dict[str, dict], int]] = []
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        order.append((node, depth))
        grouped = len(node) > 1 or "" in node
        for ch, child in node.items():
            if ch:
                stack.append((child, depth + grouped))
    source: dict[int, str] = {}
    for node, depth in reversed(order):
        alts = [regex.escape(ch) + source.pop(id(child)) for ch, child in sorted(node.items()) if ch]
        if not alts:
            source[id(node)] = ""
            continue
        if len(alts) > 1 or "" in node:
            if depth > max_depth:
                return None
            body = "(?:" + "|".join(alts) + ")"
        else:
            body = alts[0]
        source[id(node)] = body + "?" if "" in node else body
    return source[id(root)]
