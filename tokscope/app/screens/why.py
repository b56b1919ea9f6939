"""Why does it split like that? The merge-tree pane, the explain pane and the rank cut-off.

Left: the merge tree of a token (the selected piece's token, or one picked anywhere — the
vocabulary browser, "used in", the token view), built lazily: a node's two parents are looked up
only when it is expanded. Under it, on ``u``, the tokens that use the cursor's token as a direct
parent ("used in"; the first time for an encoding the whole index is built in a worker, with
progress). Right: the chunk holding the selected piece (or the token's own spelling when it was
picked from the vocabulary) explained by :func:`tokscope.core.explain.why.explain_chunk` for every
kind, worded by :mod:`tokscope.core.explain.sentences` (the command line's words) and drawn by
:mod:`tokscope.app.widgets.why_pane`; ``n``/``p`` step through a merge replay, ``b``/``e`` go to
its ends, ``a`` expands the whole tree.
The cut-off box re-runs the replay with only ranks below N (the core's ``max_rank``; byte-level BPE
from ranks only). Keys that do not apply to the kind are hidden.

CLI twins: ``tokscope explain`` and ``tokscope tree``.
"""

from __future__ import annotations

import threading

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Footer, Input, OptionList, Static, Tree
from textual.widgets.option_list import Option
from textual.widgets.tree import TreeNode

from ...core.explain.merge_trees import build_index, has_index, is_unreachable, node, used_in
from ...core.explain.sentences import NO_CUTOFF, Sentence, WhySentences, cutoff_words, token_sentences, why_sentences
from ...core.explain.why import ChunkWhy, method_of
from ...core.explain.why import explain_chunk as why_chunk
from ...core.explain.why import explain_token as why_token
from ...core.text.display import safe_text
from ...core.text.errors import CancelledError, TokscopeError
from ...core.text.types import Chunk
from ...core.tokenizer.tokenizer import Tokenizer
from ..messages import DocChanged, EncodingChanged, SelectionChanged, TokenPicked
from ..render import token_text
from ..widgets.why_pane import MAX_CHARS, MAX_SYMBOLS, piece_text, render_why, token_label
from .base import ViewScreen, view_bindings

__all__ = ["MAX_CHARS", "MAX_SYMBOLS", "NO_CUTOFF", "MergeTree", "WhyScreen"]

#: "used in" entries listed before "… and N more"
MAX_USES = 500
#: the merge tree's keys, under it
TREE_KEYS = "←→ fold · Enter open"
#: the cut-off box and its label (the explain pane says the cut-off in force in the core's words)
CUT_LABEL = "ranks below"
CUT_PLACEHOLDER = "all (N, Enter)"


class MergeTree(Tree[int]):
    """The merge tree of one token; children (the two parents of a merge) load on expansion."""

    BINDINGS = [
        Binding("right", "expand_or_child", "Expand", show=False),
        Binding("left", "collapse_or_parent", "Collapse", show=False),
        *view_bindings(),
    ]

    def action_expand_or_child(self) -> None:
        n = self.cursor_node
        if n is None:
            return
        if n.allow_expand and not n.is_expanded:
            n.expand()
        elif n.children:
            self.move_cursor(n.children[0])

    def action_expand_everything(self) -> None:
        """Load and expand the whole tree, from its root wherever the cursor is (a tree has at
        most 2n-1 nodes for an n-byte token, so this is always small)."""
        stack = [self.root]
        while stack:
            n = stack.pop()
            self.screen.load_children(n)  # type: ignore[attr-defined]
            if n.allow_expand:
                n.expand()
            stack.extend(n.children)

    def action_collapse_or_parent(self) -> None:
        n = self.cursor_node
        if n is None:
            return
        if n.is_expanded and n.children:
            n.collapse()
        elif n.parent is not None:
            self.move_cursor(n.parent)


class WhyScreen(ViewScreen):
    """Merge tree, "used in", the merge replay of the selected chunk, and the rank cut-off."""

    DEFAULT_CSS = """
    WhyScreen { layout: vertical; }
    WhyScreen #why-title { height: auto; background: $panel; padding: 0 1; }
    WhyScreen #why-body { height: 1fr; }
    WhyScreen #why-left { width: 2fr; min-width: 30; }
    WhyScreen.-no-merges #why-left { width: 1fr; min-width: 26; }
    WhyScreen #why-right { width: 3fr; }
    WhyScreen MergeTree { height: 1fr; border: round $foreground 45%; }
    WhyScreen MergeTree:focus { border: round $accent; }
    WhyScreen #why-used { height: 8; border: round $foreground 45%; display: none; }
    WhyScreen #why-used.-shown { display: block; }
    WhyScreen #why-used:focus { border: round $accent; }
    WhyScreen #why-cut-row { height: auto; }
    WhyScreen #why-cut-row > Static { width: auto; margin: 0 1 0 1; }
    WhyScreen.-no-ranks #why-cut-row > Static { width: 1fr; }
    WhyScreen #why-cutoff { width: 1fr; height: 1; border: none; padding: 0; }
    WhyScreen #why-scroll { height: 1fr; border: round $foreground 45%; padding: 0 1; }
    WhyScreen #why-scroll:focus { border: round $accent; }
    """

    BINDINGS = [
        Binding("escape", "close", "Back"),
        # the footer fits 80 columns with the app's keys: a pair of keys is listed once ("n/p")
        Binding("n", "step(1)", "Step", key_display="n/p", tooltip="next merge step"),
        Binding("p", "step(-1)", "Prev", show=False),
        Binding("b", "step_to('first')", "End", key_display="b/e", tooltip="first / last merge step"),
        Binding("e", "step_to('last')", "Last", show=False),
        # before the keys that leave a narrow footer first (the last ones shown)
        Binding("a", "expand_all", "All", tooltip="expand the whole merge tree"),
        Binding("u", "used_in", "Uses", tooltip="the tokens this one is a parent of"),
        Binding("backspace", "history_back", "Back in history", show=False),
        Binding("c", "focus_cutoff", "Cut", tooltip="the rank cut-off"),
        Binding("f", "vocabulary", "Vocab"),
    ]

    def __init__(self, token_id: int | None = None, *, from_text: bool = False) -> None:
        super().__init__()
        self._requested = token_id
        self._requested_from_text = from_text or token_id is None
        self.token_id: int | None = None
        self.history: list[int] = []
        self.why: ChunkWhy | None = None  # the chunk (or token) explained, any kind
        self.words: WhySentences | None = None  # the core's sentences about it
        self.token_words: tuple[Sentence, ...] = ()  # and about the token, explained on its own
        self._why_key: object = None  # what self.why is (or is being worked out) of
        self.position = 0
        self.max_rank: int | None = None
        self.from_text = False  # the explanation is of the selected chunk (else of the token's bytes)
        self._cancel = threading.Event()
        self._uses_for: int | None = None

    # ----- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("Why does it split like that?", id="why-title")
        with Horizontal(id="why-body"):
            with Vertical(id="why-left"):
                tree = MergeTree("", id="why-tree")
                tree.auto_expand = False
                tree.border_title = "merge tree"
                tree.border_subtitle = TREE_KEYS
                yield tree
                used = OptionList(id="why-used")
                used.border_title = "used in"
                yield used
            with Vertical(id="why-right"):
                with Horizontal(id="why-cut-row"):
                    # short enough for the right column at 60 columns (about 30 cells)
                    yield Static(CUT_LABEL, id="why-cut-label")
                    yield Input(placeholder=CUT_PLACEHOLDER, id="why-cutoff", restrict=r"[0-9_]*", max_length=9)
                scroll = VerticalScroll(id="why-scroll")
                scroll.border_title = "explain"
                with scroll:
                    yield Static("", id="why-explain")
        yield Footer(compact=True, show_command_palette=False)

    @property
    def tokenizer(self) -> Tokenizer | None:
        return getattr(self.app, "tokenizer", None)

    def reopen(self, token_id: int | None = None, from_text: bool = False) -> None:
        """Opened again (from the vocabulary, the token view): show ``token_id``."""
        if token_id is not None:
            self.show_token(token_id, from_text=from_text)

    def on_token_picked(self, event: TokenPicked) -> None:
        self._show_picked(event.token_id)

    def on_selection_changed(self, event: SelectionChanged) -> None:
        self._follow_selection()

    def on_doc_changed(self, event: DocChanged) -> None:
        self._follow_selection()

    def on_encoding_changed(self, event: EncodingChanged) -> None:
        self._encoding_changed()

    def on_mount(self) -> None:
        app = self.app
        token_id = self._requested if self._requested is not None else getattr(app, "selected_token_id", None)
        self.query_one(MergeTree).focus()
        self._show_cut_row(self.tokenizer)
        if token_id is None:
            self._show_title()
            self.query_one("#why-explain", Static).update("Select a token in the explorer (or pick one with f).")
            return
        self.show_token(token_id, from_text=self._requested_from_text)

    def on_unmount(self) -> None:
        self._cancel.set()

    # ----- the token shown --------------------------------------------------------------------

    def show_token(self, token_id: int, *, from_text: bool = False, remember: bool = True) -> None:
        """Root the tree at ``token_id`` and explain the selected chunk (``from_text``) or the
        token's own bytes."""
        tokenizer = self.tokenizer
        if tokenizer is None or not tokenizer.has_token(token_id):
            self.notify(f"Token {token_id} is not in this vocabulary", severity="warning")
            return
        if remember and self.token_id is not None and self.token_id != token_id:
            self.history.append(self.token_id)
        self.token_id = token_id
        self.from_text = from_text
        tree = self.query_one(MergeTree)
        tree.reset(token_label(tokenizer, token_id), token_id)
        tree.root.allow_expand = self._expandable(tokenizer, token_id)
        if tree.root.allow_expand:
            tree.root.expand()
        tree.move_cursor(tree.root)
        unreachable = is_unreachable(tokenizer, token_id)
        merges = self._has_merges(tokenizer)
        tree.border_title = (f"merge tree of {token_id}" if merges else f"token {token_id}") + (
            " · unreachable!" if unreachable else "")
        tree.border_subtitle = TREE_KEYS if merges else escape(f"{safe_text(tokenizer.kind)}: no merges")
        self._show_cut_row(tokenizer)
        self.set_class(not merges, "-no-merges")
        self.refresh_bindings()
        used = self.query_one("#why-used", OptionList)
        used.remove_class("-shown")
        self._uses_for = None
        self._show_title()
        self.recompute()
        if not has_index(tokenizer):
            self._prefetch_index(tokenizer, self._cancel)

    @work(thread=True, exclusive=True, group="why-index", exit_on_error=False)
    def _prefetch_index(self, tokenizer: Tokenizer, cancel: threading.Event) -> None:
        """Build the "used in" index in the background as soon as the screen opens, so that ``u``
        usually answers at once (a second or two for a 200k vocabulary, once per encoding)."""
        try:
            build_index(tokenizer, cancel=cancel)
        except CancelledError:
            return

    def _expandable(self, tokenizer: Tokenizer, token_id: int) -> bool:
        return bool(node(tokenizer, token_id).children)

    @staticmethod
    def _has_merges(tokenizer: Tokenizer | None) -> bool:
        """Whether the kind builds tokens by merges (a merge tree, "used in", a replay to step)."""
        return tokenizer is not None and (bool(tokenizer.ranks) or method_of(tokenizer) == "BPE")

    def _show_cut_row(self, tokenizer: Tokenizer | None) -> None:
        """The cut-off box for byte-level BPE from ranks; for another kind, a line saying that it
        does not apply."""
        ranks = tokenizer is None or bool(tokenizer.ranks)
        self.query_one("#why-cutoff", Input).display = ranks
        self.set_class(not ranks, "-no-ranks")  # the sentence alone, wrapped when it must be
        self.query_one("#why-cut-label", Static).update(CUT_LABEL if ranks else NO_CUTOFF)

    def _show_title(self) -> None:
        tokenizer = self.tokenizer
        name = safe_text(tokenizer.name) if tokenizer is not None else "?"
        if self.token_id is None or tokenizer is None:
            self.query_one("#why-title", Static).update(Text(f"Why does it split like that? · {name}"))
            return
        title = Text(f"Token {self.token_id} ")
        if tokenizer.ranks:
            what = "the selected chunk" if self.from_text else "its own bytes"
            title.append_text(token_text(tokenizer.token_bytes(self.token_id)))
            title.append(f" · {name} · explaining {what}")
        else:
            # the kind before the name: a long model id is what a narrow terminal cuts
            what = "selected chunk" if self.from_text else "its own spelling"
            title.append_text(piece_text(tokenizer, self.token_id))
            title.append(f" · {safe_text(tokenizer.kind)} · {what} · {name}")
        self.query_one("#why-title", Static).update(title)

    def _show_picked(self, token_id: int) -> None:
        if self.is_attached and token_id != self.token_id:
            self.show_token(token_id, from_text=False)

    def _follow_selection(self) -> None:
        """While explaining the selected chunk, follow the explorer's selection."""
        if not self.is_attached or not self.from_text:
            return
        token_id = getattr(self.app, "selected_token_id", None)
        if token_id is not None:
            if token_id != self.token_id:
                self.show_token(token_id, from_text=True)
            else:
                self.recompute()

    def _encoding_changed(self) -> None:
        """Another encoding: wait for the text's new pieces (``doc_changed``), then follow the
        selection again; ids of the old encoding mean nothing in the new one."""
        if not self.is_attached:
            return
        self.history.clear()
        self.token_id = None
        self.why = None
        self.words = None
        self.token_words = ()
        self._why_key = None
        self.from_text = True
        self._uses_for = None
        self.query_one("#why-used", OptionList).remove_class("-shown")
        self.query_one(MergeTree).reset("…")
        self._show_cut_row(self.tokenizer)
        self.refresh_bindings()
        self._show_title()
        self.query_one("#why-explain", Static).update("re-tokenizing with the new encoding…")

    # ----- the lazy tree ----------------------------------------------------------------------

    @on(Tree.NodeExpanded)
    def _load_children(self, event: Tree.NodeExpanded) -> None:
        event.stop()
        self.load_children(event.node)

    def load_children(self, n: TreeNode[int]) -> None:
        """Add a node's two parents (once), each expandable when it has parents itself."""
        tokenizer = self.tokenizer
        if n.children or n.data is None or tokenizer is None:
            return
        for child in node(tokenizer, n.data).children:
            added = n.add(token_label(tokenizer, child.id), child.id)
            added.allow_expand = self._expandable(tokenizer, child.id)

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected) -> None:
        """Enter on a node below the root: root the tree at that token."""
        event.stop()
        tree = self.query_one(MergeTree)
        n = event.node
        if n is not tree.root and n.data is not None:
            self.show_token(n.data)

    @on(OptionList.OptionSelected, "#why-used")
    def _use_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a "used in" entry: open that token in the tree."""
        event.stop()
        if event.option.id is not None:
            self.show_token(int(event.option.id.split(":")[0]))
            self.query_one(MergeTree).focus()

    def action_history_back(self) -> None:
        if self.history:
            self.show_token(self.history.pop(), remember=False)

    # ----- used in ----------------------------------------------------------------------------

    def action_used_in(self) -> None:
        tokenizer = self.tokenizer
        tree = self.query_one(MergeTree)
        n = tree.cursor_node
        if tokenizer is None or n is None or n.data is None:
            return
        used = self.query_one("#why-used", OptionList)
        used.add_class("-shown")
        used.border_title = f"used in: {n.data}"
        self._uses_for = n.data
        if not has_index(tokenizer):
            used.clear_options()
            used.add_option(Option("building the merge index…", disabled=True))
        self._load_uses(tokenizer, n.data, self._cancel)

    @work(thread=True, exclusive=True, group="why-used", exit_on_error=False)
    def _load_uses(self, tokenizer: Tokenizer, token_id: int, cancel: threading.Event) -> None:
        last = [-1]

        def progress(done: int, total: int) -> None:
            percent = done * 100 // max(total, 1)
            if percent // 10 != last[0]:
                last[0] = percent // 10
                self.app.call_from_thread(self._uses_progress, token_id, percent)

        try:
            uses = used_in(tokenizer, token_id, progress=progress, cancel=cancel)
        except CancelledError:
            return
        except TokscopeError as exc:
            self.app.call_from_thread(self.notify, safe_text(exc), severity="error", markup=False)
            return
        self.app.call_from_thread(self._show_uses, token_id, uses)

    def _uses_progress(self, token_id: int, percent: int) -> None:
        if self._uses_for != token_id or not self.is_attached:
            return
        used = self.query_one("#why-used", OptionList)
        used.clear_options()
        used.add_option(Option(f"building the merge index… {percent}%", disabled=True))

    def _show_uses(self, token_id: int, uses) -> None:  # noqa: ANN001
        if self._uses_for != token_id or not self.is_attached:
            return
        tokenizer = self.tokenizer
        used = self.query_one("#why-used", OptionList)
        used.clear_options()
        used.border_title = f"used in: {token_id} ({len(uses)} tokens)"
        if not uses:
            used.add_option(Option("no token has it as a parent", disabled=True))
            return
        options = []
        for u in uses[:MAX_USES]:
            label = Text()
            label.append(f"{u.child} ", style="bold")
            label.append_text(piece_text(tokenizer, u.child, style="#8fd3ff"))
            other = piece_text(tokenizer, u.other)
            if u.side == "left":
                label.append("  = this + ")
                label.append_text(other)
            else:
                label.append("  = ")
                label.append_text(other)
                label.append(" + this")
            options.append(Option(label, id=f"{u.child}:{u.side}"))  # a token may use it on both sides
        if len(uses) > MAX_USES:
            options.append(Option(f"… and {len(uses) - MAX_USES} more (tokscope tree --used-in)", disabled=True))
        used.add_options(options)
        used.highlighted = 0
        used.focus()

    # ----- the explain pane -------------------------------------------------------------------

    def recompute(self) -> None:
        tokenizer = self.tokenizer
        if tokenizer is None or self.token_id is None:
            return
        app = self.app
        doc = getattr(app, "doc", None)
        index = getattr(app, "selected_index", None)
        chunk = None
        text = ""
        if self.from_text and doc is not None and index is not None and index < len(doc.ids):
            chunk = doc.chunk_of(index)
            text = doc.text
        allowed = getattr(app, "encode_kwargs", dict)().get("allowed_special", ())
        key = None
        if not tokenizer.ranks:
            # what the explanation is of: moving between the pieces of one chunk changes nothing (a
            # kind without a pre-tokenizer makes a paragraph one chunk, seconds to replay)
            key = (tokenizer, doc, chunk.start, chunk.end, allowed) if chunk is not None else (tokenizer, self.token_id)
            if key == self._why_key:
                return
        self._why_key = key
        self._explain(tokenizer, self.token_id, text, chunk, self._max_rank(), allowed, key)

    def _max_rank(self) -> int | None:
        """The cut-off in force: a kind without ranks has none (the box keeps its value for the
        next encoding from ranks)."""
        tokenizer = self.tokenizer
        return self.max_rank if tokenizer is not None and tokenizer.ranks else None

    @work(thread=True, exclusive=True, group="why-explain", exit_on_error=False)
    def _explain(self, tokenizer: Tokenizer, token_id: int, text: str, chunk: Chunk | None, max_rank: int | None,
                 allowed_special: object = (), key: object = None) -> None:
        try:
            if chunk is not None:
                result = why_chunk(tokenizer, text, chunk, max_rank=max_rank, allowed_special=allowed_special)
                words = why_sentences(tokenizer, result)
                about: tuple[Sentence, ...] = ()
            else:
                result = why_token(tokenizer, token_id, max_rank=max_rank)
                words = why_sentences(tokenizer, result, token=True)
                about = token_sentences(tokenizer, token_id)
        except TokscopeError as exc:
            self.app.call_from_thread(self._explain_failed, key)
            self.app.call_from_thread(self.notify, safe_text(exc), severity="error", markup=False)
            return
        self.app.call_from_thread(self._show_explanation, token_id, max_rank, result, key, words, about)

    def _explain_failed(self, key: object) -> None:
        if key is not None and key == self._why_key:
            self._why_key = None  # asked again, it is tried again

    def _show_explanation(self, token_id: int, max_rank: int | None, result: ChunkWhy, key: object = None,
                          words: WhySentences | None = None, about: tuple[Sentence, ...] = ()) -> None:
        if not self.is_attached:
            return
        if key is not None:  # another kind: current while it is of the chunk (or token) shown
            if key != self._why_key:
                return
        elif token_id != self.token_id or max_rank != self._max_rank():
            return
        self.why = result
        self.words = words
        self.token_words = about
        self.position = 0
        self._render_explanation()

    def total_steps(self) -> int:
        """How many merge steps the explain pane can step through (0 for kinds without merges)."""
        w = self.why
        if w is not None and w.ranks is not None:
            return len(w.ranks.steps)
        if w is not None and w.bpe is not None:
            return len(w.bpe.steps)
        return 0

    def cut_description(self) -> str:
        tokenizer = self.tokenizer
        return "" if tokenizer is None else cutoff_words(tokenizer, self.max_rank)

    def _render_explanation(self) -> None:
        tokenizer = self.tokenizer
        if self.why is None or tokenizer is None:
            return
        shown = render_why(self.why, tokenizer, self.position, self.cut_description(), self.words, self.token_words)
        self.query_one("#why-explain", Static).update(shown)
        scroll = self.query_one("#why-scroll", VerticalScroll)
        total = self.total_steps()
        scroll.border_title = f"explain · step {self.position}/{total}" if total else "explain"

    def action_step(self, delta: int) -> None:
        if self.why is None:
            return
        self.position = max(0, min(self.total_steps(), self.position + delta))
        self._render_explanation()

    def action_step_to(self, where: str) -> None:
        if self.why is None:
            return
        self.position = 0 if where == "first" else self.total_steps()
        self._render_explanation()

    # ----- the cut-off ------------------------------------------------------------------------

    def action_expand_all(self) -> None:
        self.query_one(MergeTree).action_expand_everything()

    def action_focus_cutoff(self) -> None:
        self.query_one("#why-cutoff", Input).focus()

    @on(Input.Submitted, "#why-cutoff")
    def _cutoff_submitted(self, event: Input.Submitted) -> None:
        value = event.value.replace("_", "").strip()
        self.set_cutoff(int(value) if value else None)
        self.query_one(MergeTree).focus()

    def set_cutoff(self, max_rank: int | None) -> None:
        """Re-run the replay with only ranks below ``max_rank`` (``None``: the whole vocabulary)."""
        self.max_rank = max_rank
        self.query_one("#why-cutoff", Input).value = "" if max_rank is None else str(max_rank)
        self.recompute()

    # ----- other ------------------------------------------------------------------------------

    def action_vocabulary(self) -> None:
        # through the app's registry of views: the vocabulary browser opens this screen in turn
        self.app.open_view("vocab")  # type: ignore[attr-defined]

    def action_close(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one(MergeTree).focus()
            return
        self._cancel.set()
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Letter keys type into the cut-off box while it has focus. Keys that do not apply to the
        kind are off and hidden: the cut-off is for byte-level BPE from ranks only; stepping and
        "used in" for kinds that merge."""
        if isinstance(self.focused, Input) and action in {"step", "step_to", "used_in", "focus_cutoff",
                                                          "vocabulary", "history_back", "expand_all"}:
            return False
        tokenizer = self.tokenizer
        if tokenizer is None:
            return True
        if action == "focus_cutoff":
            return bool(tokenizer.ranks)
        if action in {"step", "step_to", "used_in", "expand_all"}:
            return self._has_merges(tokenizer)
        return True
