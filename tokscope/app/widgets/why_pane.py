"""The why screen's explain pane: one :class:`~tokscope.core.explain.why.ChunkWhy` of any kind drawn
as Rich text (:func:`render_why`), and tokens written in their kind's notation (:func:`piece_text`,
:func:`token_label`). The command line draws the same data as plain text
(:mod:`tokscope.commands.why_text`).

* **byte-level BPE from ranks**: the replay merge by merge — the parts before the step, every
  adjacent pair with its rank, the lowest-rank pair chosen, the parts after — then the final
  pieces, why the chunk is not one token, and the same word in other contexts;
* **BPE from a merge list**: the same step-by-step replay, each pair with its rank in the merge
  list; characters missing from the vocabulary are shown as the bytes they fell back to (``‹e2›``
  for ``<0xE2>``), as the unknown token, or as dropped;
* **WordPiece**: the greedy longest-match steps, and why a word became the unknown token;
* **Unigram**: the best segmentation with its score beside the next-best ones, each piece's score;
* **WordLevel**, added and special tokens, any other kind: what the model did, in a sentence.

Every sentence is the core's (:mod:`tokscope.core.explain.sentences`), the command line's too:
this module lays them out, a label in bold before its sentence.
"""

from __future__ import annotations

from rich.text import Text

from ...core.explain.facts import TokenFacts, token_facts
from ...core.explain.sentences import CUT_OFF, Sentence, WhySentences, why_sentences
from ...core.explain.why import ChunkWhy
from ...core.text.display import hex_label
from ...core.tokenizer.tokenizer import Tokenizer
from ..render import HEX_STYLE, token_text

#: the keys that step through a replay, after a step's number
STEP_KEYS = "  n/p: next/prev, b/e: ends\n"
#: candidate pairs listed per step before "… and N more"
MAX_CANDIDATES = 40
#: symbols and pieces listed, and characters of a chunk shown, before "… N more" (a kind without
#: a pre-tokenizer, such as Llama 2's, makes a whole paragraph one chunk)
MAX_SYMBOLS = 400
MAX_CHARS = 400


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


def parts_text(parts: tuple[bytes, ...], highlight: int | None = None) -> Text:
    """Parts as ``[a][b]…``, the pair starting at ``highlight`` reversed; a part never breaks
    across lines (its spaces are drawn ``·``).

    >>> parts_text((b" t", b"o")).plain
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


def sentences_text(sentences: tuple[Sentence, ...]) -> Text:
    """The core's sentences, one a line, each label in bold before its sentence.

    >>> sentences_text((Sentence("next", "none: no other segmentation was found"), Sentence("", "a b"))).plain
    'next   none: no other segmentation was found\\na b\\n'
    """
    out = Text()
    for n in sentences:
        if n.label:
            out.append(f"{n.label:<6} ", style="bold")
        out.append(n.text + "\n")
    return out


def render_explanation(c: ChunkExplanation, words: WhySentences, position: int, cut: str) -> Text:
    """The explain pane for chunk ``c`` of byte-level BPE from ranks at replay position
    ``position`` (0 = single bytes, k = after step k), in the core's words."""
    out = Text()
    out.append("chunk ", style="bold")
    out.append_text(_q(c.bytes, "bold"))
    out.append(f"  [{c.chunk.start}:{c.chunk.end}] {words.what}\n")
    out.append(f"cut-off: {cut}\n", style="dim")
    out.append_text(sentences_text(words.notes))
    if not c.chunk.special and c.replayed and not c.steps and len(c.bytes) > 1:  # no merge applies
        out.append("parts  ")
        out.append_text(parts_text(c.parts))
        out.append("\n")
    elif c.steps:
        total = len(c.steps)
        if position == 0:
            out.append(f"start: {words.start}  (step 0 of {total}; n: next)\n", style="bold")
            out.append("parts  ")
            out.append_text(parts_text(c.steps[0].before))
            out.append("\n")
        else:
            step = c.steps[position - 1]
            out.append(f"step {position} of {total}", style="bold")
            out.append(STEP_KEYS, style="dim")
            out.append("before ")
            out.append_text(parts_text(step.before, step.position))
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
                pair.append(f" {cand.rank}" + (f" ({CUT_OFF})" if not cand.allowed else ""), style=style)
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
            out.append(f"  {words.steps[position - 1]}\n")
            out.append("after  ")
            out.append_text(parts_text(step.after, None))
            out.append("\n")
    out.append("\npieces ", style="bold")
    for k, (t, p) in enumerate(zip(c.tokens, c.parts)):
        if k:
            out.append("  ")
        out.append_text(_q(p))
        out.append(f" {t}")
    out.append("\n")
    if words.summary:
        out.append("why    ", style="bold")
        out.append(words.summary + "\n")
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
        """Symbols as ``[a] [b] …``, the pair starting at ``highlight`` reversed (as :func:`parts_text`);
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


def _why_header(w: ChunkWhy, words: WhySentences) -> Text:
    """The chunk, its offsets, and the form the model saw when it says more than the text."""
    out = Text()
    out.append("chunk ", style="bold")
    out.append_text(_long_text(w.chunk.text, "bold"))
    out.append(f"  [{w.chunk.start}:{w.chunk.end}]" + ("  added token" if w.method == "added" else "") + "\n")
    if words.form is not None:
        # after the normalizer and the pre-tokenizer (the kind is in the title)
        out.append("model saw ", style="bold")
        out.append_text(_long_text(words.form, "bold"))
        out.append("\n")
    return out


def render_bpe(w: ChunkWhy, words: WhySentences, names: _Names, position: int) -> Text:
    """A merge list's replay at ``position`` (0 = one symbol per character; k = after merge k),
    each pair with its rank in the merge list."""
    replay = w.bpe
    out = Text()
    if replay is None or replay.whole_word or not replay.replayed:
        return out
    if not replay.steps:
        out.append("parts  ")
        out.append_text(names.symbols(replay.tokens))
        out.append("\n")
        return out
    total = len(replay.steps)
    if position == 0:
        out.append(f"start: {words.start}  (step 0 of {total}; n: next)\n", style="bold")
        out.append("parts  ")
        out.append_text(names.symbols(replay.steps[0].before))
        out.append("\n")
        return out
    step = replay.steps[position - 1]
    out.append(f"step {position} of {total}", style="bold")
    out.append(STEP_KEYS, style="dim")
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
    out.append(f"  {words.steps[position - 1]}\n")
    out.append("after  ")
    out.append_text(names.symbols(step.after))
    out.append("\n")
    return out


def render_wordpiece(w: ChunkWhy, words: WhySentences, names: _Names) -> Text:
    """WordPiece's greedy longest matches from the left (why a word became the unknown token is
    among the notes)."""
    found = w.wordpiece
    out = Text()
    if found is None:
        return out
    if words.heading:
        out.append(words.heading + "\n", style="bold")
    for k, (step, note) in enumerate(zip(found.steps, words.steps), 1):
        out.append(f"{k:>2} [{step.start}:{step.end}] ")
        out.append_text(names.text(step.token, "bold"))
        out.append(f" {step.token}  {note}\n")
    return out


def render_unigram(w: ChunkWhy, names: _Names) -> Text:
    """Unigram's best segmentation and its score beside the next-best ones, each piece's score
    (an empty search and the unknown pieces are among the notes)."""
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
    return out


def render_why(w: ChunkWhy, tokenizer: Tokenizer, position: int, cut: str = "", words: WhySentences | None = None,
               before: tuple[Sentence, ...] = ()) -> Text:
    """The explain pane for a chunk of any kind (see the module docstring), the merge replay at
    ``position``; ``cut`` describes the rank cut-off (byte-level BPE from ranks); ``words`` are
    the core's sentences about the chunk (worked out here when not given); ``before``, sentences
    about the token shown first (a vocabulary entry explained on its own)."""
    if words is None:
        words = why_sentences(tokenizer, w)
    out = sentences_text(before)
    if w.ranks is not None:
        out.append_text(render_explanation(w.ranks, words, position, cut))
        return out
    names = _Names(tokenizer)
    out.append_text(_why_header(w, words))
    if w.bpe is not None:
        out.append_text(render_bpe(w, words, names, position))
    elif w.wordpiece is not None:
        out.append_text(render_wordpiece(w, words, names))
    elif w.unigram is not None:
        out.append_text(render_unigram(w, names))
    out.append_text(sentences_text(words.notes))
    out.append("\npieces ", style="bold")
    out.append_text(names.pieces(w.tokens))
    out.append("\n")
    if words.summary:
        out.append("why    ", style="bold")
        out.append(words.summary + "\n")
    return out
