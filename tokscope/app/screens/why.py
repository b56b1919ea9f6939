"""Why does it split like that? The merge-tree pane, the explain pane and the rank cut-off.

Left: the merge tree of a token (the selected piece's token, or one picked anywhere — the
vocabulary browser, "used in", the token view), built lazily: a node's two parents are looked up
only when it is expanded. Under it, on ``u``, the tokens that use the cursor's token as a direct
parent ("used in"; the first time for an encoding the whole index is built in a worker, with
progress). Right: the chunk holding the selected piece (or the token's own bytes when it was picked
from the vocabulary), replayed merge by merge — the parts before the step, every adjacent pair
with its rank, the lowest-rank pair chosen, the parts after — then the final pieces, why the
chunk is not one token, and the same word in other contexts. The cut-off box re-runs the replay
with only ranks below N (the core's ``max_rank``; CLI twin: ``tokscope explain --max-rank N``).

That is the screen of byte-level BPE from ranks (the OpenAI encodings, tokenizers trained here).
For every other kind the explain pane shows what :mod:`tokscope.core.explain.why` gives for the chunk, and
the keys that do not apply are hidden (the cut-off row says that it is for ranks only):

* **BPE from a merge list** (Hugging Face byte-level, SentencePiece-style with byte fallback): the
  same step-by-step replay, each pair with its rank in the merge list; the tree shows each merge's
  rank; characters missing from the vocabulary are shown as the bytes they fell back to
  (``‹e2›`` for ``<0xE2>``), as the unknown token, or as dropped;
* **WordPiece**: the greedy longest-match steps, and why a word became the unknown token;
* **Unigram**: the best segmentation with its score beside the next-best ones, each piece's score;
* **WordLevel**, added and special tokens, any other kind: what the model did, in a sentence.

The chunk's form as the model saw it (after the normalizer and pre-tokenizer) is shown when it
differs from the text.

Everything shown comes from :mod:`tokscope.core.explain.ranks`, :mod:`tokscope.core.explain.why`,
:mod:`tokscope.core.explain.facts` and :mod:`tokscope.core.explain.merge_trees` (CLI twins: ``tokscope explain`` and
``tokscope tree``).
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

from ...core.text.display import hex_label, safe_text
from ...core.text.errors import CancelledError, TokscopeError
from ...core.explain.ranks import ChunkExplanation, classify_chunk, explain_chunk, explain_token
from ...core.explain.facts import TokenFacts, token_facts
from ...core.explain.merge_trees import build_index, has_index, is_unreachable, merges_kept, node, used_in
from ...core.tokenizer.tokenizer import Tokenizer
from ...core.text.types import Chunk
from ...core.explain.why import DETAIL_LIMIT, ChunkWhy, method_of
from ...core.explain.why import explain_chunk as why_chunk
from ...core.explain.why import explain_token as why_token
from ..messages import DocChanged, EncodingChanged, SelectionChanged, TokenPicked
from ..render import HEX_STYLE, token_text
from .base import ViewScreen, view_bindings

#: candidate pairs listed per step before "… and N more"
MAX_CANDIDATES = 40
#: "used in" entries listed before "… and N more"
MAX_USES = 500
#: symbols and pieces listed, and characters of a chunk shown, before "… N more" (a kind without
#: a pre-tokenizer, such as Llama 2's, makes a whole paragraph one chunk)
MAX_SYMBOLS = 400
MAX_CHARS = 400
#: characters missing from the vocabulary listed one by one
MAX_MISSING = 20
#: the merge tree's keys, under it
TREE_KEYS = "←→ fold · a all · Enter open · u used in"
#: the cut-off row of a kind without ranks
NO_CUTOFF = "rank cut-off: byte-level BPE from ranks only"


def token_label(tokenizer: Tokenizer, token_id: int) -> Text:
    """``id text rank`` for a tree node or a list entry, the text in the one notation
    (whitespace visible, ``‹f0 9f›`` for bytes that are not whole characters).

    >>> from tokscope.sources import registry
    >>> token_label(registry.load("gpt2"), 262).plain
    '262 ·the'
    """
    label = Text()
    label.append(f"{token_id} ", style="bold")
    if tokenizer.ranks:
        label.append_text(token_text(tokenizer.token_bytes(token_id), style="#8fd3ff"))
        if tokenizer.is_special(token_id):
            label.append(" special", style="magenta")
        return label
    facts = token_facts(tokenizer, token_id)
    label.append_text(piece_text(tokenizer, token_id, style="#8fd3ff", facts=facts))
    if facts.unknown:
        label.append(" unknown token", style="magenta")
    elif facts.special or facts.added:
        label.append(" special" if facts.special else " added", style="magenta")
    elif facts.byte is not None:
        label.append(" byte")
    if facts.merge_rank is not None:
        label.append(f" rank {facts.merge_rank}")
    if facts.score is not None and facts.byte is None:
        label.append(f" score {facts.score:.2f}")
    return label


def piece_text(tokenizer: Tokenizer, token_id: int, style: str = "", facts: TokenFacts | None = None) -> Text:
    """One token in the notation of its kind: byte-level BPE by its bytes (``·the``), a
    byte-fallback token by the byte it stands for (``‹e2›`` for ``<0xE2>``), every other token by
    its vocabulary's spelling (``▁the``, ``##ing``, ``[UNK]``), whitespace made visible and
    controls inert.

    >>> from tokscope.sources import registry
    >>> piece_text(registry.load("gpt2"), 262).plain
    '·the'
    """
    if tokenizer.ranks or tokenizer.kind == "byte-level BPE":
        return token_text(tokenizer.token_bytes(token_id), style=style)
    facts = facts or token_facts(tokenizer, token_id)
    if facts.byte is not None:  # a byte token, even for a byte that is a whole character (<0x0A>)
        return Text(hex_label(bytes([facts.byte])), style=f"{style} {HEX_STYLE}".strip(), no_wrap=True)
    return _text(facts.token, style)


def _text(text: str, style: str = "") -> Text:
    """Text from the user, a file or a tokenizer as one label in the one notation (whitespace
    visible, controls inert)."""
    return token_text(text.encode("utf-8", "surrogatepass"), style=style)


def _long_text(text: str, style: str = "") -> Text:
    """:func:`_text` of at most :data:`MAX_CHARS` characters, then how many more there are."""
    if len(text) <= MAX_CHARS:
        return _text(text, style)
    out = _text(text[:MAX_CHARS], style)
    out.append(f" … {len(text) - MAX_CHARS:,} more characters")
    return out


def _parts(parts: tuple[bytes, ...], highlight: int | None = None) -> Text:
    """Parts as ``[a][b]…``, the pair starting at ``highlight`` reversed; a part never breaks
    across lines (its spaces are drawn ``·``).

    >>> _parts((b" t", b"o")).plain
    '[·t] [o]'
    """
    out = Text()
    for i, part in enumerate(parts):
        style = "reverse bold" if highlight is not None and i in (highlight, highlight + 1) else ""
        if i:
            out.append(" ")  # a line may break here, between two parts
        out.append("[", style=style)
        out.append_text(token_text(part, style=style))
        out.append("]", style=style)
    return out


def _q(data: bytes, style: str = "") -> Text:
    """A token's bytes as one label (no quotes needed: whitespace is visible)."""
    return token_text(data, style=style)


def render_explanation(c: ChunkExplanation, position: int, cut: str) -> Text:
    """The explain pane for chunk ``c`` at replay position ``position`` (0 = single bytes,
    k = after step k)."""
    out = Text()
    alt = "" if c.alternative is None else f" · pattern alternative {c.alternative + 1}"
    out.append("chunk ", style="bold")
    out.append_text(_q(c.bytes, "bold"))
    out.append(f"  [{c.chunk.start}:{c.chunk.end}] {c.category}{alt}\n")
    out.append(f"cut-off: {cut}\n", style="dim")
    if c.chunk.special:
        out.append(f"special token {c.tokens[0]}: never merged\n")
    elif not c.replayed:
        out.append(f"{len(c.bytes)} bytes: too long to replay step by step\n")
    elif len(c.bytes) == 1:
        out.append("a single byte: nothing to merge\n")
    elif not c.steps:
        out.append("no merge applies: no adjacent pair of bytes is an allowed token\n")
        out.append("parts  ")
        out.append_text(_parts(c.parts))
        out.append("\n")
    else:
        total = len(c.steps)
        if position == 0:
            out.append(f"start: {len(c.bytes)} single bytes  (step 0 of {total}; n: next)\n", style="bold")
            out.append("parts  ")
            out.append_text(_parts(c.steps[0].before))
            out.append("\n")
        else:
            step = c.steps[position - 1]
            out.append(f"step {position} of {total}", style="bold")
            out.append("  (n/p: next/previous, b/e: first/last)\n", style="dim")
            out.append("before ")
            out.append_text(_parts(step.before, step.position))
            out.append("\npairs  ")
            shown = [x for x in step.candidates if x.rank is not None]
            for k, cand in enumerate(shown[:MAX_CANDIDATES]):
                if k:
                    out.append(" · ")
                style = ("reverse bold" if cand.position == step.position
                         else "strike" if not cand.allowed else "")
                pair = Text()
                pair.append_text(_q(cand.left, style))
                pair.append("+", style=style)
                pair.append_text(_q(cand.right, style))
                pair.append(f" {cand.rank}" + (" (cut off)" if not cand.allowed else ""), style=style)
                out.append_text(pair)
            if len(shown) > MAX_CANDIDATES:
                out.append(f" … and {len(shown) - MAX_CANDIDATES} more")
            if not shown:
                out.append("(none)")
            out.append("\nmerge  ")
            out.append_text(_q(step.left, "bold"))
            out.append(" + ", style="bold")
            out.append_text(_q(step.right, "bold"))
            out.append(" → ", style="bold")
            out.append_text(_q(step.merged, "bold"))
            out.append(f"  rank {step.rank} (the lowest)\n")
            out.append("after  ")
            out.append_text(_parts(step.after, None))
            out.append("\n")
    out.append("\npieces ", style="bold")
    for k, (t, p) in enumerate(zip(c.tokens, c.parts)):
        if k:
            out.append("  ")
        out.append_text(_q(p))
        out.append(f" {t}")
    out.append("\n")
    if c.why is not None:
        out.append("why    ", style="bold")
        out.append(c.why.summary + "\n")
    if c.variants:
        out.append("variants\n", style="bold")
        # the texts say which variant each is (" Word", "WORD", "\nword"), so no labels here
        texts = [_q(v.text.encode("utf-8", "surrogatepass")) for v in c.variants]
        tw = max(t.cell_len for t in texts)
        for v, shown_text in zip(c.variants, texts):
            out.append("  ")
            out.append_text(shown_text)
            out.append(" " * (tw - shown_text.cell_len + 2))
            out.append(" ".join(map(str, v.tokens)) + "\n", style="bold" if len(v.tokens) == 1 else "")
    return out


# ----- the explain pane of every other kind (tokscope.core.explain.why) ------------------------------------


class _Names:
    """Tokens shown in their kind's notation, each looked up once per pane."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._facts: dict[int, TokenFacts] = {}

    def facts(self, token_id: int) -> TokenFacts:
        found = self._facts.get(token_id)
        if found is None:
            found = self._facts[token_id] = token_facts(self.tokenizer, token_id)
        return found

    def text(self, token_id: int, style: str = "") -> Text:
        return piece_text(self.tokenizer, token_id, style, self.facts(token_id))

    def symbols(self, ids: tuple[int, ...], highlight: int | None = None) -> Text:
        """Symbols as ``[a] [b] …``, the pair starting at ``highlight`` reversed (as :func:`_parts`);
        of a long word, :data:`MAX_SYMBOLS` of them around the pair."""
        out = Text()
        first = 0
        if len(ids) > MAX_SYMBOLS:
            first = max(0, min(len(ids) - MAX_SYMBOLS, (highlight or 0) - MAX_SYMBOLS // 2))
            if first:
                out.append(f"… {first} before ")
        last = min(len(ids), first + MAX_SYMBOLS)
        for i in range(first, last):
            style = "reverse bold" if highlight is not None and i in (highlight, highlight + 1) else ""
            if i > first:
                out.append(" ")
            out.append("[", style=style)
            out.append_text(self.text(ids[i], style))
            out.append("]", style=style)
        if last < len(ids):
            out.append(f" … {len(ids) - last} after")
        return out

    def pieces(self, ids: tuple[int, ...]) -> Text:
        """``piece id  piece id …``, the final tokens (the first :data:`MAX_SYMBOLS`)."""
        out = Text()
        for k, token_id in enumerate(ids[:MAX_SYMBOLS]):
            if k:
                out.append("  ")
            out.append_text(self.text(token_id))
            out.append(f" {token_id}")
        if len(ids) > MAX_SYMBOLS:
            out.append(f"  … and {len(ids) - MAX_SYMBOLS} more")
        return out


def _why_header(w: ChunkWhy, tokenizer: Tokenizer) -> Text:
    """The chunk, its offsets and kind, and the form the model saw when it is not the text."""
    out = Text()
    out.append("chunk ", style="bold")
    out.append_text(_long_text(w.chunk.text, "bold"))
    out.append(f"  [{w.chunk.start}:{w.chunk.end}]" + ("  added token" if w.method == "added" else "") + "\n")
    if w.method != "added" and w.form != w.chunk.text:
        # after the normalizer and the pre-tokenizer (the kind is in the title)
        out.append("model saw ", style="bold")
        out.append_text(_long_text(w.form, "bold"))
        out.append("  (each byte a character)\n" if tokenizer.kind == "byte-level BPE" else "\n")
    return out


def _bpe_start(w: ChunkWhy, names: _Names) -> Text:
    """Characters missing from the vocabulary: the bytes they fell back to, the unknown token, or
    dropped (from the replay's initial symbols)."""
    replay = w.bpe
    out = Text()
    if replay is None:
        return out
    word = replay.word
    groups: dict[tuple[int, int, str], list[int]] = {}
    for symbol in replay.initial:
        if symbol.kind != "char":
            groups.setdefault((symbol.start, symbol.end, symbol.kind), []).append(symbol.id)
    for shown, ((start, end, kind), ids) in enumerate(groups.items()):
        if shown == MAX_MISSING:
            out.append(f"missing … and {len(groups) - MAX_MISSING} more characters\n")
            break
        out.append("missing ", style="bold")
        out.append_text(_text(word[start:end], "bold"))
        if kind == "byte":
            out.append(" is not in the vocabulary, so it fell back to its UTF-8 bytes: ")
            for token_id in ids:
                out.append_text(names.text(token_id))
                out.append(" ")
            out.append("(tokens " + " ".join(map(str, ids)) + ")\n")
        else:
            out.append(" is not in the vocabulary and has no byte fallback: the unknown token ")
            out.append_text(names.pieces(tuple(ids)))
            out.append("\n")
    if replay.dropped:
        out.append("dropped ", style="bold")
        out.append_text(_long_text("".join(word[i] for i in replay.dropped), "bold"))
        out.append(" not in the vocabulary, no byte fallback and no unknown token: no symbol at all\n")
    return out


def render_bpe(w: ChunkWhy, names: _Names, position: int) -> Text:
    """A merge list's replay at ``position`` (0 = one symbol per character; k = after merge k),
    each pair with its rank in the merge list."""
    replay = w.bpe
    out = Text()
    if replay is None:
        return out
    if replay.whole_word:
        out.append("the whole word is a token: with ignore_merges it is looked up before any merge\n")
    elif not replay.replayed:
        out.append(f"{len(replay.initial)} symbols: too long to replay step by step\n")
    elif not replay.steps:
        if len(replay.initial) == 1:
            out.append("a single symbol: nothing to merge\n")
        else:
            out.append("no merge applies: the merge list names no adjacent pair\n")
        out.append("parts  ")
        out.append_text(names.symbols(replay.tokens))
        out.append("\n")
    else:
        total = len(replay.steps)
        if position == 0:
            out.append(f"start: {len(replay.initial)} symbols  (step 0 of {total}; n: next)\n", style="bold")
            out.append("parts  ")
            out.append_text(names.symbols(replay.steps[0].before))
            out.append("\n")
        else:
            step = replay.steps[position - 1]
            out.append(f"step {position} of {total}", style="bold")
            out.append("  n/p: next/prev, b/e: ends\n", style="dim")
            out.append("before ")
            out.append_text(names.symbols(step.before, step.position))
            out.append("\npairs  ")
            shown = [x for x in step.candidates if x.rank is not None]
            for k, cand in enumerate(shown[:MAX_CANDIDATES]):
                if k:
                    out.append(" · ")
                style = "reverse bold" if cand.position == step.position else ""
                out.append_text(names.text(cand.left, style))
                out.append("+", style=style)
                out.append_text(names.text(cand.right, style))
                out.append(f" {cand.rank}", style=style)
            if len(shown) > MAX_CANDIDATES:
                out.append(f" … and {len(shown) - MAX_CANDIDATES} more")
            out.append("\nmerge  ")
            out.append_text(names.text(step.rule.left, "bold"))
            out.append(" + ", style="bold")
            out.append_text(names.text(step.rule.right, "bold"))
            out.append(" → ", style="bold")
            out.append_text(names.text(step.rule.result, "bold"))
            out.append(f"  rank {step.rule.rank} (the lowest)\n")
            out.append("after  ")
            out.append_text(names.symbols(step.after))
            out.append("\n")
    if position == 0:  # where the symbols are made
        out.append_text(_bpe_start(w, names))
    return out


def render_wordpiece(w: ChunkWhy, names: _Names) -> Text:
    """WordPiece's greedy longest matches from the left and, for the unknown token, why."""
    found = w.wordpiece
    out = Text()
    if found is None:
        return out
    unk = safe_text(getattr(names.tokenizer.model, "unk_token", "the unknown token"))
    if found.reason == "too_long":
        out.append("too long ", style="bold")
        out.append(f"{found.chars} characters, more than max_input_chars_per_word ({found.limit}): the whole "
                   f"word is {unk} and no match is tried\n")
        return out
    out.append(f"greedy longest match from the left (words up to {found.limit} characters)\n", style="bold")
    for k, step in enumerate(found.steps, 1):
        out.append(f"{k:>2} [{step.start}:{step.end}] ")
        out.append_text(names.text(step.token, "bold"))
        out.append(f" {step.token}")
        if step.missed:
            out.append(f"  {step.missed} longer not in the vocabulary\n")
        else:
            out.append("  the whole word is an entry\n" if step.start == 0 else "  the whole rest is an entry\n")
    if found.reason == "no_match" and found.failed_at is not None:
        at = found.failed_at
        prefix = getattr(names.tokenizer.model, "continuing_subword_prefix", "") if at else ""
        rest = found.word[at:]
        out.append("no match ", style="bold")
        out.append(f"at character {at}: ")
        if len(rest) == 1:
            out.append_text(_text(prefix + rest, "bold"))
            out.append(" is not in the vocabulary")
        else:
            out.append("no entry matches the start of ")
            out.append_text(_long_text(prefix + rest))
            out.append(", not even ")
            out.append_text(_text(prefix + rest[0], "bold"))
        out.append(f", so the whole word is {unk}")
        if w.tokens:
            out.append(f" {w.tokens[0]}")
        out.append("\n")
    return out


def render_unigram(w: ChunkWhy, names: _Names) -> Text:
    """Unigram's best segmentation and its score beside the next-best ones, each piece's score."""
    found = w.unigram
    out = Text()
    if found is None:
        return out
    unknown = names.tokenizer.unknown_id

    def cut(pieces: tuple[str, ...]) -> Text:
        t = Text()
        for k, piece in enumerate(pieces[:MAX_SYMBOLS]):
            if k:
                t.append(" + ")
            t.append_text(_text(piece))
        if len(pieces) > MAX_SYMBOLS:
            t.append(f" … and {len(pieces) - MAX_SYMBOLS} more")
        return t

    rows = [("best", found.best)] + [("next" if k == 0 else "", s) for k, s in enumerate(found.alternatives)]
    for label, seg in rows:
        # score, how far below the best, the cut
        out.append(f"{label:<5}", style="bold")
        out.append(f"{seg.score:8.3f}", style="bold" if seg is found.best else "")
        out.append(" " * 8 if seg is found.best else f" {seg.score - found.best.score:7.3f}")
        out.append("  ")
        out.append_text(cut(seg.pieces))
        out.append("\n")
    if not found.alternatives:
        if len(w.form) > DETAIL_LIMIT:
            out.append(f"next   not searched for a chunk over {DETAIL_LIMIT} characters\n")
        else:
            out.append("next   none: no other segmentation was found\n")
    out.append("scores ", style="bold")  # each piece's log probability, adding up to the best's score
    for k, (piece, token_id) in enumerate(zip(found.best.pieces[:MAX_SYMBOLS], found.best.ids)):
        if k:
            out.append(" + ")
        out.append_text(_text(piece))
        score = found.unk_score if token_id == unknown else names.facts(token_id).score
        out.append(f" {score:.3f}" if score is not None else " ?")
    if len(found.best.pieces) > MAX_SYMBOLS:
        out.append(f" + … {len(found.best.pieces) - MAX_SYMBOLS} more")
    out.append(f" = {found.best.score:.3f}\n")
    fallback = any(names.facts(t).byte is not None for t in w.tokens)
    missing = [piece for piece, token_id in zip(found.best.pieces, found.best.ids) if token_id == unknown]
    for shown, piece in enumerate(missing):
        if shown == MAX_MISSING:
            out.append(f"missing … and {len(missing) - MAX_MISSING} more unknown pieces\n")
            break
        out.append("missing ", style="bold")
        out.append_text(_long_text(piece, "bold"))
        out.append(f" is not in the vocabulary: an unknown piece scored {found.unk_score:.3f} (the lowest score "
                   "less 10)")
        if fallback:
            out.append(", so it fell back to its UTF-8 bytes: ")
            data = piece.encode("utf-8", "surrogatepass")
            out.append(" ".join(hex_label(bytes([b])) for b in data[:MAX_SYMBOLS]), style="bold")
            if len(data) > MAX_SYMBOLS:
                out.append(f" … and {len(data) - MAX_SYMBOLS} more")
        out.append("\n")
    return out


def render_why(w: ChunkWhy, tokenizer: Tokenizer, position: int) -> Text:
    """The explain pane for a chunk of any kind but byte-level BPE from ranks (see the module
    docstring), the merge replay at ``position``."""
    names = _Names(tokenizer)
    out = _why_header(w, tokenizer)
    if w.bpe is not None:
        out.append_text(render_bpe(w, names, position))
    elif w.wordpiece is not None:
        out.append_text(render_wordpiece(w, names))
    elif w.unigram is not None:
        out.append_text(render_unigram(w, names))
    out.append("\npieces ", style="bold")
    out.append_text(names.pieces(w.tokens))
    out.append("\n")
    if w.summary:
        out.append("why    ", style="bold")
        out.append(safe_text(w.summary) + "\n")
    return out


class MergeTree(Tree[int]):
    """The merge tree of one token; children (the two parents of a merge) load on expansion."""

    BINDINGS = [
        Binding("right", "expand_or_child", "Expand", show=False),
        Binding("left", "collapse_or_parent", "Collapse", show=False),
        Binding("a", "expand_everything", "Expand all", show=False),
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
        """Load and expand the whole subtree under the cursor (a tree has at most 2n-1 nodes for
        an n-byte token, so this is always small)."""
        start = self.cursor_node or self.root
        stack = [start]
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
    WhyScreen #why-title { height: 1; background: $panel; padding: 0 1; }
    WhyScreen #why-body { height: 1fr; }
    WhyScreen #why-left { width: 2fr; min-width: 30; }
    WhyScreen.-no-merges #why-left { width: 1fr; min-width: 26; }
    WhyScreen #why-right { width: 3fr; }
    WhyScreen MergeTree { height: 1fr; border: round $foreground 45%; }
    WhyScreen MergeTree:focus { border: round $accent; }
    WhyScreen #why-used { height: 8; border: round $foreground 45%; display: none; }
    WhyScreen #why-used.-shown { display: block; }
    WhyScreen #why-used:focus { border: round $accent; }
    WhyScreen #why-cut-row { height: 1; }
    WhyScreen #why-cut-row > Static { width: auto; margin: 0 1 0 1; }
    WhyScreen #why-cutoff { width: 1fr; height: 1; border: none; padding: 0; }
    WhyScreen #why-scroll { height: 1fr; border: round $foreground 45%; padding: 0 1; }
    WhyScreen #why-scroll:focus { border: round $accent; }
    """

    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("n", "step(1)", "Next"),
        Binding("p", "step(-1)", "Prev"),
        Binding("b", "step_to('first')", "First", show=False),
        Binding("e", "step_to('last')", "Last", show=False),
        Binding("u", "used_in", "Used in"),
        Binding("backspace", "history_back", "Back in history", show=False),
        Binding("c", "focus_cutoff", "Cut-off"),
        Binding("f", "vocabulary", "Vocab"),
    ]

    def __init__(self, token_id: int | None = None, *, from_text: bool = False) -> None:
        super().__init__()
        self._requested = token_id
        self._requested_from_text = from_text or token_id is None
        self.token_id: int | None = None
        self.history: list[int] = []
        self.explanation: ChunkExplanation | None = None  # byte-level BPE from ranks
        self.why: ChunkWhy | None = None  # every other kind (tokscope.core.explain.why)
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
                    yield Static("cut-off: ranks below", id="why-cut-label")
                    yield Input(placeholder="all (type N, Enter)", id="why-cutoff", restrict=r"[0-9_]*",
                                max_length=9)
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
        self.query_one("#why-cut-label", Static).update("cut-off: ranks below" if ranks else NO_CUTOFF)

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
        self.explanation = None
        self.why = None
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
        result: ChunkExplanation | ChunkWhy
        try:
            if tokenizer.ranks:
                if chunk is not None:
                    result = explain_chunk(tokenizer, classify_chunk(tokenizer, text, chunk), max_rank=max_rank)
                else:
                    result = explain_token(tokenizer, token_id, max_rank=max_rank)
            elif chunk is not None:
                result = why_chunk(tokenizer, text, chunk, allowed_special=allowed_special)
            else:
                result = why_token(tokenizer, token_id)
        except TokscopeError as exc:
            self.app.call_from_thread(self._explain_failed, key)
            self.app.call_from_thread(self.notify, safe_text(exc), severity="error", markup=False)
            return
        self.app.call_from_thread(self._show_explanation, token_id, max_rank, result, key)

    def _explain_failed(self, key: object) -> None:
        if key is not None and key == self._why_key:
            self._why_key = None  # asked again, it is tried again

    def _show_explanation(self, token_id: int, max_rank: int | None, result: ChunkExplanation | ChunkWhy,
                          key: object = None) -> None:
        if not self.is_attached:
            return
        if key is not None:  # another kind: current while it is of the chunk (or token) shown
            if key != self._why_key:
                return
        elif token_id != self.token_id or max_rank != self._max_rank():
            return
        if isinstance(result, ChunkWhy):
            self.explanation, self.why = None, result
        else:
            self.explanation, self.why = result, None
        self.position = 0
        self._render_explanation()

    def total_steps(self) -> int:
        """How many merge steps the explain pane can step through (0 for kinds without merges)."""
        if self.explanation is not None:
            return len(self.explanation.steps)
        if self.why is not None and self.why.bpe is not None:
            return len(self.why.bpe.steps)
        return 0

    def cut_description(self) -> str:
        tokenizer = self.tokenizer
        if tokenizer is None:
            return ""
        kept = merges_kept(tokenizer, self.max_rank)
        if self.max_rank is None:
            return f"none (all {kept:,} merges)"
        return f"ranks below {self.max_rank:,} ({kept:,} merges of {merges_kept(tokenizer, None):,})"

    def _render_explanation(self) -> None:
        tokenizer = self.tokenizer
        if self.explanation is not None:
            shown = render_explanation(self.explanation, self.position, self.cut_description())
        elif self.why is not None and tokenizer is not None:
            shown = render_why(self.why, tokenizer, self.position)
        else:
            return
        self.query_one("#why-explain", Static).update(shown)
        scroll = self.query_one("#why-scroll", VerticalScroll)
        total = self.total_steps()
        scroll.border_title = f"explain · step {self.position}/{total}" if total else "explain"

    def action_step(self, delta: int) -> None:
        if self.explanation is None and self.why is None:
            return
        self.position = max(0, min(self.total_steps(), self.position + delta))
        self._render_explanation()

    def action_step_to(self, where: str) -> None:
        if self.explanation is None and self.why is None:
            return
        self.position = 0 if where == "first" else self.total_steps()
        self._render_explanation()

    # ----- the cut-off ------------------------------------------------------------------------

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
                                                          "vocabulary", "history_back"}:
            return False
        tokenizer = self.tokenizer
        if tokenizer is None:
            return True
        if action == "focus_cutoff":
            return bool(tokenizer.ranks)
        if action in {"step", "step_to", "used_in"}:
            return self._has_merges(tokenizer)
        return True
