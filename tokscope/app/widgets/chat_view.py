"""The rendered prompt of a conversation: a token view whose pieces are coloured by what they are.

Every id of a chat rendering has a kind (:attr:`tokscope.core.chat.ChatCount.kinds`): template
text (grey), template special tokens (the token view's special colour), message content (the
token view's alternating colours, as in the explorer), tokens the tokenizer merged from template
text and content (amber on grey, underlined) and tool definitions (olive). :func:`legend` draws
the key. The chat screen and compare's chat mode use it; it is a compare pane, so compare's
plumbing (picks, scrolling, no typing) works unchanged.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from ...core.chat.results import CONTENT, MIXED, TEMPLATE, TOOLS
from ...core.document.document import SPECIAL
from .compare_view import ComparePane
from .token_view import Palette, TokenView

#: what each kind is called in the legend, in legend order
KIND_NAMES = {TEMPLATE: "template", "s": "special", CONTENT: "content", MIXED: "merged", TOOLS: "tools"}


class ChatPromptView(ComparePane):
    """A chat rendering's tokens (see the module docstring); :meth:`set_kinds` after ``set_doc``.

    | Class | Description |
    | :- | :- |
    | `chat-view--template-1`, `-2` | template text, alternating |
    | `chat-view--merged` | a token made of template text and content |
    | `chat-view--tools-1`, `-2` | tool definitions, alternating |
    """

    COMPONENT_CLASSES = TokenView.COMPONENT_CLASSES | {
        "chat-view--template-1", "chat-view--template-2", "chat-view--merged", "chat-view--tools-1",
        "chat-view--tools-2",
    }

    DEFAULT_CSS = """
    ChatPromptView > .chat-view--template-1 { background: #363636; color: #e8e8e8; }
    ChatPromptView > .chat-view--template-2 { background: #4a4a4a; color: #f4f4f4; }
    ChatPromptView > .chat-view--merged { background: #363636; color: #ffd27f; text-style: bold underline; }
    ChatPromptView > .chat-view--tools-1 { background: #4a4a12; color: #f4f4f4; }
    ChatPromptView > .chat-view--tools-2 { background: #5c5c1c; color: #f4f4f4; }
    ChatPromptView.-ansi > .chat-view--template-1 { background: ansi_bright_black; color: ansi_bright_white; }
    ChatPromptView.-ansi > .chat-view--template-2 { background: ansi_white; color: ansi_black; }
    ChatPromptView.-ansi > .chat-view--merged { background: ansi_bright_black; color: ansi_bright_yellow; }
    ChatPromptView.-ansi > .chat-view--tools-1 { background: ansi_yellow; color: ansi_black; }
    ChatPromptView.-ansi > .chat-view--tools-2 { background: ansi_green; color: ansi_black; }
    ChatPromptView.-mono > .chat-view--template-1, ChatPromptView.-mono > .chat-view--template-2 { text-style: italic; }
    ChatPromptView.-mono > .chat-view--merged { text-style: bold italic underline; }
    ChatPromptView.-mono > .chat-view--tools-1, ChatPromptView.-mono > .chat-view--tools-2 { text-style: italic underline; }
    """

    def __init__(self, key: str = "chat", *, kind: str = "truecolor", id: str | None = None) -> None:
        super().__init__(key, kind=kind, id=id)
        self.kinds = ""
        self._kind_styles: dict[str, Style] | None = None

    def set_kinds(self, kinds: str) -> None:
        self.kinds = kinds
        self.refresh_all()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._kind_styles = None

    @property
    def kind_styles(self) -> dict[str, Style]:
        styles = self._kind_styles
        if styles is None:
            get = self.get_component_rich_style
            styles = self._kind_styles = {
                name: get(f"chat-view--{name}", partial=True)
                for name in ("template-1", "template-2", "merged", "tools-1", "tools-2")
            }
        return styles

    def _base_style(self, i: int, token_id: int, flags: int, pal: Palette) -> Style:
        kind = self.kinds[i] if i < len(self.kinds) else CONTENT
        if flags & SPECIAL:
            return pal.special
        styles = self.kind_styles
        if kind == TEMPLATE:
            return styles["template-2" if i & 1 else "template-1"]
        if kind == MIXED:
            return styles["merged"]
        if kind == TOOLS:
            return styles["tools-2" if i & 1 else "tools-1"]
        return pal.alternate[i % len(pal.alternate)]

    def kind_of(self, i: int) -> str:
        """The legend's name of piece ``i``'s kind (``special`` for a template special token)."""
        doc = self.doc
        if doc is not None and i < len(doc) and doc.flags[i] & SPECIAL:
            return KIND_NAMES["s"]
        return KIND_NAMES.get(self.kinds[i] if i < len(self.kinds) else CONTENT, "content")


def legend(view: ChatPromptView, kinds: str, specials: bool) -> Text:
    """The key to the colours, with only the kinds that occur (``specials``: a special token does)."""
    pal = view.palette
    styles = view.kind_styles
    present = set(kinds)
    out = Text(no_wrap=True)
    items = []
    if TEMPLATE in present:
        items.append(("template", styles["template-1"]))
    if specials:
        items.append(("special", pal.special))
    if CONTENT in present or MIXED in present:
        items.append(("content", pal.alternate[0]))
    if MIXED in present:
        items.append(("merged", styles["merged"]))
    if TOOLS in present:
        items.append(("tools", styles["tools-1"]))
    for k, (label, style) in enumerate(items):
        if k:
            out.append(" ")
        out.append(f" {label} ", style=style)
    return out
