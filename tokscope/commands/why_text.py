"""Why a text splits as it does, as plain text and ``--json``: the one renderer of
:class:`~tokscope.core.explain.why.ChunkWhy` for ``explain`` and ``tree`` (the explorer's why
screen draws the same data, :mod:`tokscope.app.widgets.why_pane`). Every sentence is the core's
(:mod:`tokscope.core.explain.sentences`), the same the why screen shows: this module lays them
out as ``label: sentence`` lines beside the tokens, steps and trees.

What each kind shows, from the core's :class:`~tokscope.core.explain.why.ChunkWhy`:

* **byte-level BPE from ranks** (the OpenAI encodings, tokenizers trained here): the pattern
  alternative that matched the chunk, every merge step with its rank (``--pairs``: every candidate
  pair), why the chunk is not one token, and variants; a rank cut-off applies;
* **BPE from a merge list** (``tokenizer.json``: byte-level, SentencePiece-style, byte fallback):
  the symbols before any merge, every merge with its rank (its line in the merge list, from 0),
  the merge tree of each token, and the characters that fell back to bytes or to the unknown
  token;
* **WordPiece**: the greedy longest matches and, for ``[UNK]``, why the whole word became it;
* **Unigram**: the best segmentation and its score beside the next-best ones;
* **WordLevel**: whether the chunk is an entry of the vocabulary.

A token is written the way its vocabulary spells it (``"▁the"``, ``"##ing"``), except a
byte-fallback token, written as the byte it stands for (``‹e2›``, tokscope's one byte notation),
and the tokens of a byte-level vocabulary, written as their bytes (``"Ġthe"`` is ``" the"``).
Everything that comes from the text or the tokenizer passes through
:func:`~tokscope.core.text.display.safe_text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.explain.facts import token_facts
from ..core.explain.sentences import CUT_OFF, Sentence, WhySentences, cutoff_words, why_sentences
from ..core.explain.sentences import fact_words  # noqa: F401  (tree's facts line reads it here)
from ..core.explain.why import NBEST
from ..core.text.display import hex_label, quoted, safe_text, token_label

if TYPE_CHECKING:
    from ..core.explain.merge_trees import MergeNode
    from ..core.explain.ranks import MergeStep
    from ..core.tokenizer.tokenizer import Tokenizer
    from ..core.explain.why import ChunkWhy, TextWhy

#: Chunks longer than this many characters get no context variants (as for byte-level BPE).
VARIANT_LIMIT = 200
#: A merge step's line shows the parts after it when there are at most this many; a chunk that is a
#: whole paragraph (SentencePiece-style files do not pre-split) would print the paragraph per step.
PARTS_LIMIT = 80
#: JSON gives each merge step's symbols and candidate pairs for chunks of at most this many
#: symbols (``"detail": true``); a longer chunk lists the merges alone (a 2,000-symbol chunk would
#: otherwise be millions of candidates).
DETAIL_SYMBOLS = 256


class Labels:
    """How tokens of one tokenizer are written, memoised (a replay writes the same few tokens
    many times).

    ``quoted(id)`` is the token inside a sentence (``"▁the"``, ``‹e2›``); ``bare(id)`` the same
    without quotes, for the bracketed parts of a replay step; ``byte(id)`` the byte a
    byte-fallback token stands for, or ``None``.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        #: a byte-level vocabulary spells bytes in GPT-2's alphabet: its tokens are shown as bytes
        self.as_bytes = tokenizer.kind == "byte-level BPE"
        self._cache: dict[int, tuple[str, str, int | None]] = {}

    def _get(self, token_id: int) -> tuple[str, str, int | None]:
        found = self._cache.get(token_id)
        if found is None:
            tok = self.tokenizer
            byte = None if tok.is_added(token_id) else token_facts(tok, token_id).byte
            if byte is not None:
                shown = hex_label(bytes([byte]))
                found = (shown, shown, byte)
            elif self.as_bytes and not tok.is_added(token_id):
                data = tok.token_bytes(token_id)
                found = (quoted(data), token_label(data, ws=False), None)
            else:
                spelling = safe_text(tok.token_str(token_id))
                found = (f'"{spelling}"', spelling, None)
            self._cache[token_id] = found
        return found

    def quoted(self, token_id: int) -> str:
        return self._get(token_id)[0]

    def bare(self, token_id: int) -> str:
        return self._get(token_id)[1]

    def byte(self, token_id: int) -> int | None:
        return self._get(token_id)[2]



def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _chunk_bytes(c: ChunkWhy) -> bytes:
    return c.chunk.text.encode("utf-8", errors="replace")


# ----- explain: plain text -------------------------------------------------------------------------


def header(tokenizer: Tokenizer, result: TextWhy) -> str:
    """The first line of ``explain``: the encoding (its kind, when it is not from ranks), how many
    chunks and tokens, and the rank cut-off when there is one."""
    kind = "" if tokenizer.ranks else f" ({safe_text(tokenizer.kind)})"
    cut = "" if result.max_rank is None else f", cut-off: {cutoff_words(tokenizer, result.max_rank)}"
    return (f"{safe_text(result.encoding)}{kind}: {_plural(len(result.chunks), 'chunk')}, "
            f"{_plural(len(result.tokens), 'token')}{cut}")


def chunk_title(number: int, c: ChunkWhy, words: WhySentences) -> str:
    """``chunk N: "text"  [start:end]  what``: what is the pattern alternative's category for
    byte-level BPE from ranks, else the method (the core's ``words.what``)."""
    data = c.ranks.bytes if c.ranks is not None else _chunk_bytes(c)
    return f"chunk {number}: {quoted(data)}  [{c.chunk.start}:{c.chunk.end}]  {words.what}"


def print_text_why(tokenizer: Tokenizer, result: TextWhy, *, pairs: bool, variants: bool, out: Any,
                   nbest: int = NBEST) -> None:
    """``explain``, chunk by chunk, for every kind."""
    labels = Labels(tokenizer)
    out.write(header(tokenizer, result) + "\n")
    for number, c in enumerate(result.chunks, 1):
        words = why_sentences(tokenizer, c)
        out.write(f"\n{chunk_title(number, c, words)}\n")
        print_chunk_body(tokenizer, labels, c, pairs=pairs, variants=variants, out=out, nbest=nbest, words=words)


def print_sentences(sentences: tuple[Sentence, ...], w: Any) -> None:
    """The core's sentences, one a line: ``label: text``, or the text alone."""
    for n in sentences:
        w(f"  {n.label}: {n.text}\n" if n.label else f"  {n.text}\n")


def print_chunk_body(tokenizer: Tokenizer, labels: Labels, c: ChunkWhy, *, pairs: bool, variants: bool,
                     out: Any, token: bool = False, nbest: int = NBEST, words: WhySentences | None = None) -> None:
    """Everything under one chunk's title: the form, the kind's own facts, the pieces, why, and
    the variants, in the core's words (:func:`~tokscope.core.explain.sentences.why_sentences`). For
    a vocabulary entry explained on its own (``token``) its spelling stands in for the form, so
    neither the form nor byte fallback is shown."""
    w = out.write
    if words is None:
        words = why_sentences(tokenizer, c, token=token)
    if c.ranks is not None:
        _print_ranks(c, words, pairs=pairs, variants=variants, w=w)
        return
    if c.method == "added":
        w(f"  why: {words.summary}\n")
        return
    if words.form is not None:
        w(f'  form (what the model saw): "{safe_text(words.form)}"\n')
    if c.bpe is not None:
        _print_bpe(labels, c, words, pairs, w)
    elif c.wordpiece is not None:
        _print_wordpiece(labels, c, words, w)
    elif c.unigram is not None:
        _print_unigram(tokenizer, c, w)
    print_sentences(words.notes, w)
    if c.unigram is not None:
        scores = {i: token_facts(tokenizer, i).score for i in set(c.tokens)}
        pieces = "  ".join(f"{labels.quoted(t)} {t}" + ("" if scores[t] is None else f" ({scores[t]:.3f})")
                           for t in c.tokens)
    else:
        pieces = "  ".join(f"{labels.quoted(t)} {t}" for t in c.tokens)
    w(f"  pieces: {pieces}\n" if c.tokens else "  pieces: none\n")
    if words.summary:
        w(f"  why: {words.summary}\n")  # inert already (the core's)
    if c.trees:
        drawn = [t for t in c.trees if t.children]
        if drawn:
            w("  merge trees (each token by its lowest-rank merge):\n")
            for tree in drawn:
                for line in draw_tree(tokenizer, tree, labels):
                    w(f"    {line}\n")
    if variants:
        _print_variants(tokenizer, c, w)


def _parts_line(parts: tuple[bytes, ...]) -> str:
    return " ".join(f"[{token_label(p, ws=False)}]" for p in parts)


def _print_ranks(chunk: ChunkWhy, words: WhySentences, *, pairs: bool, variants: bool, w: Any) -> None:
    """Byte-level BPE from ranks: the chunk's bytes, each merge step with its rank, the pieces,
    why it is not one token, and the variants."""
    c = chunk.ranks
    assert c is not None
    if c.chunk.special:
        print_sentences(words.notes, w)
        return
    w(f"  bytes: {c.bytes.hex(' ')}\n")
    if words.start:
        w(f"  start: {words.start}\n")
    for step, note in zip(c.steps, words.steps):
        w(f"  {step.number:>3}. {quoted(step.left)} + {quoted(step.right)} -> "
          f"{quoted(step.merged)}  {note}   {_parts_line(step.after)}\n")
        if pairs:
            listed = ", ".join(
                f"{quoted(x.left)}+{quoted(x.right)} {x.rank}{'' if x.allowed else f' ({CUT_OFF})'}"
                for x in step.candidates if x.rank is not None
            )
            w(f"       candidates: {listed}\n")
    print_sentences(words.notes, w)
    pieces = "  ".join(f"{quoted(p)} {t}" for t, p in zip(c.tokens, c.parts))
    w(f"  pieces: {pieces}\n")
    if words.summary:
        w(f"  why: {words.summary}\n")
    if c.variants and variants:
        _print_variant_rows(c.variants, w)


def _print_variant_rows(found: Any, w: Any) -> None:
    w("  variants:\n")
    width = max(len(quoted(v.text.encode())) for v in found)
    for v in found:
        shown = quoted(v.text.encode())
        ids = " ".join(str(i) for i in v.tokens)
        w(f"    {shown:<{width}} {ids:<24} {v.label}\n")


def _print_bpe(labels: Labels, c: ChunkWhy, words: WhySentences, pairs: bool, w: Any) -> None:
    """A merge list's symbols before any merge, then each merge with its rank in the merge list."""
    replay = c.bpe
    assert replay is not None
    if replay.whole_word:
        return  # the summary says it: the word itself is looked up first
    w(f"  symbols: {' '.join(labels.quoted(s.id) for s in replay.initial)}\n")
    if words.start:
        w(f"  start: {words.start}\n")
    for step, note in zip(replay.steps, words.steps):
        rule = step.rule
        if len(step.after) <= PARTS_LIMIT:
            parts = " ".join(f"[{labels.bare(t)}]" for t in step.after)
        else:
            parts = f"at symbol {step.position} of {len(step.before)}"
        w(f"  {step.number:>3}. {labels.quoted(rule.left)} + {labels.quoted(rule.right)} -> "
          f"{labels.quoted(rule.result)}  {note}   {parts}\n")
        if pairs:
            listed = ", ".join(f"{labels.quoted(x.left)}+{labels.quoted(x.right)} {x.rank}"
                               for x in step.candidates if x.rank is not None)
            w(f"       candidates: {listed}\n")


def _print_wordpiece(labels: Labels, c: ChunkWhy, words: WhySentences, w: Any) -> None:
    """WordPiece's greedy steps (why a word became the unknown token is among the notes)."""
    found = c.wordpiece
    assert found is not None
    if words.heading:
        w(f"  {words.heading}\n")
    for number, (step, note) in enumerate(zip(found.steps, words.steps), 1):
        w(f"  {number:>3}. [{step.start}:{step.end}] {labels.quoted(step.token)} {step.token}  {note}\n")


def _segmentation(tokenizer: Tokenizer, seg: Any) -> str:
    unk = tokenizer.unknown_id
    return " + ".join(f'"{safe_text(p)}"' + (" (unknown)" if i == unk else "") for p, i in zip(seg.pieces, seg.ids))


def _print_unigram(tokenizer: Tokenizer, c: ChunkWhy, w: Any) -> None:
    """The best segmentation and the next-best ones with their scores (an empty search is among
    the notes)."""
    found = c.unigram
    assert found is not None
    w(f"  best: {_segmentation(tokenizer, found.best)}  score {found.best.score:.3f}\n")
    for seg in found.alternatives:
        w(f"  next: {_segmentation(tokenizer, seg)}  score {seg.score:.3f} "
          f"({found.best.score - seg.score:.3f} below the best)\n")


def _print_variants(tokenizer: Tokenizer, c: ChunkWhy, w: Any) -> None:
    from ..core.explain.ranks import variants

    if len(c.chunk.text) > VARIANT_LIMIT:
        return
    found = variants(tokenizer, c.chunk.text)
    if found:
        _print_variant_rows(found, w)


# ----- explain: JSON ---------------------------------------------------------------------------------


def token_ref(tokenizer: Tokenizer, labels: Labels, token_id: int) -> dict[str, Any]:
    """One token in JSON: its id, spelling, the bytes it stands for, and its byte if it is a
    byte-fallback token."""
    return {"id": token_id, "token": tokenizer.token_str(token_id), "bytes": tokenizer.token_bytes(token_id).hex(),
            "byte": labels.byte(token_id)}


def chunk_why_json(tokenizer: Tokenizer, labels: Labels, c: ChunkWhy, *, variants: bool) -> dict[str, Any]:
    value: dict[str, Any] = {
        "text": c.chunk.text,
        "start": c.chunk.start,
        "end": c.chunk.end,
        "special": c.chunk.special,
        "form": None if c.chunk.special else c.form,
        "method": c.method,
        "tokens": list(c.tokens),
        "pieces": [token_ref(tokenizer, labels, t) for t in c.tokens],
        "summary": c.summary,
    }
    if c.bpe is not None:
        r = c.bpe
        detail = len(r.initial) <= DETAIL_SYMBOLS

        def step_json(s: Any) -> dict[str, Any]:
            value = {
                "number": s.number,
                "position": s.position,
                "rank": s.rule.rank,
                "left": s.rule.left,
                "right": s.rule.right,
                "result": s.rule.result,
                "merge": [tokenizer.token_str(s.rule.left), tokenizer.token_str(s.rule.right)],
            }
            if detail:
                value["before"] = list(s.before)
                value["after"] = list(s.after)
                value["candidates"] = [{"position": x.position, "left": x.left, "right": x.right, "rank": x.rank,
                                        "result": x.result} for x in s.candidates]
            return value

        value["bpe"] = {
            "initial": [{"id": s.id, "token": tokenizer.token_str(s.id), "kind": s.kind, "start": s.start,
                         "end": s.end, "byte": labels.byte(s.id)} for s in r.initial],
            "dropped": list(r.dropped),
            "whole_word": r.whole_word,
            "replayed": r.replayed,
            "detail": detail,
            "steps": [step_json(s) for s in r.steps],
        }
        value["trees"] = [node_json(tokenizer, t) for t in c.trees]
    if c.wordpiece is not None:
        wp = c.wordpiece
        value["wordpiece"] = {
            "word": wp.word, "unknown": wp.unknown, "reason": wp.reason, "failed_at": wp.failed_at,
            "chars": wp.chars, "limit": wp.limit,
            "steps": [{"start": s.start, "end": s.end, "id": s.token, "token": s.text, "missed": s.missed}
                      for s in wp.steps],
        }
    if c.unigram is not None:
        u = c.unigram

        def seg(s: Any) -> dict[str, Any]:
            return {"pieces": list(s.pieces), "ids": list(s.ids), "spans": [list(x) for x in s.spans], "score": s.score}

        value["unigram"] = {"best": seg(u.best), "alternatives": [seg(a) for a in u.alternatives], "margin": u.margin,
                            "unk_score": u.unk_score,
                            "scores": [token_facts(tokenizer, t).score for t in c.tokens]}
    if c.wordlevel is not None:
        value["wordlevel"] = {"known": c.wordlevel.known, "unk_token": c.wordlevel.unk_token}
    if variants and not c.chunk.special and len(c.chunk.text) <= VARIANT_LIMIT:
        from ..core.explain.ranks import variants as find

        value["variants"] = [{"label": v.label, "text": v.text, "tokens": list(v.tokens)} for v in find(tokenizer, c.chunk.text)]
    else:
        value["variants"] = []
    return value


def step_json(step: MergeStep) -> dict[str, Any]:
    """One merge step of byte-level BPE from ranks (parts as hex)."""
    return {
        "number": step.number,
        "left": step.left.hex(),
        "right": step.right.hex(),
        "rank": step.rank,
        "position": step.position,
        "result": step.merged.hex(),
        "before": [p.hex() for p in step.before],
        "after": [p.hex() for p in step.after],
        "candidates": [
            {"position": c.position, "left": c.left.hex(), "right": c.right.hex(), "rank": c.rank, "allowed": c.allowed}
            for c in step.candidates
        ],
    }


def chunk_json(c: ChunkExplanation) -> dict[str, Any]:
    """One chunk of byte-level BPE from ranks in JSON (parts and pairs as hex)."""
    why = c.why
    return {
        "text": c.chunk.text,
        "start": c.chunk.start,
        "end": c.chunk.end,
        "byte_start": c.byte_start,
        "byte_end": c.byte_end,
        "special": c.chunk.special,
        "category": c.category,
        "alternative": c.alternative,
        "bytes": c.bytes.hex(),
        "tokens": list(c.tokens),
        "pieces": [{"id": t, "bytes": p.hex(), "text": p.decode("utf-8", errors="replace")}
                   for t, p in zip(c.tokens, c.parts)],
        "replayed": c.replayed,
        "steps": [step_json(s) for s in c.steps],
        "why": None if why is None else {
            "one_token": why.one_token,
            "token": why.token,
            "blocked_by_cutoff": why.blocked_by_cutoff,
            "unreachable": why.unreachable,
            "parents": None if why.parents is None else [why.parents.left, why.parents.right],
            "missing": [{"left": m.left.hex(), "right": m.right.hex(), "rank": m.rank} for m in why.missing],
            "longest_prefix": why.longest_prefix.hex(),
            "longest_prefix_id": why.longest_prefix_id,
            "summary": why.summary,
        },
        "variants": [{"label": v.label, "text": v.text, "tokens": list(v.tokens)} for v in c.variants],
    }


def any_chunk_json(tokenizer: Tokenizer, labels: Labels, c: ChunkWhy, *, variants: bool) -> dict[str, Any]:
    """One chunk of any kind in JSON: byte-level BPE from ranks keeps its own (hex) shape."""
    if c.ranks is not None:
        return chunk_json(c.ranks)
    return chunk_why_json(tokenizer, labels, c, variants=variants)


def text_why_json(tokenizer: Tokenizer, result: TextWhy, *, variants: bool) -> dict[str, Any]:
    """``explain --json``: byte-level BPE from ranks gives the cut-off and how many merges it
    keeps; every other kind its kind and its merges."""
    from ..core.explain.merge_trees import full_max_rank, merges_kept

    if tokenizer.ranks:
        return {
            "encoding": result.encoding,
            "text": result.text,
            "max_rank": result.max_rank,
            "merges_kept": merges_kept(tokenizer, result.max_rank),
            "full_max_rank": full_max_rank(tokenizer),
            "tokens": list(result.tokens),
            "chunks": [chunk_json(c.ranks) for c in result.chunks if c.ranks is not None],
        }
    labels = Labels(tokenizer)
    return {
        "encoding": result.encoding,
        "kind": tokenizer.kind,
        "text": result.text,
        "max_rank": None,
        "merges": merges_kept(tokenizer, None),
        "tokens": list(result.tokens),
        "chunks": [chunk_why_json(tokenizer, labels, c, variants=variants) for c in result.chunks],
    }


# ----- merge trees -----------------------------------------------------------------------------------


def node_label(tokenizer: Tokenizer, n: MergeNode, labels: Labels) -> str:
    """One node of a merge tree: its id, how it is written, its bytes in hex, and its rank (from
    ranks) or the rank of the merge that makes it (its line in the merge list)."""
    if tokenizer.ranks:
        return f"{n.id} {quoted(n.bytes)} {n.bytes.hex()} " + ("special" if n.rank is None else f"rank {n.rank}")
    if tokenizer.is_special(n.id):
        how = " special"
    elif n.merge_rank is not None:
        how = f" rank {n.merge_rank}"
    else:
        how = " no merge" if tokenizer.model.kind == "bpe" else ""
    return f"{n.id} {labels.quoted(n.id)} {n.bytes.hex()}{how}"


def draw_tree(tokenizer: Tokenizer, tree: MergeNode, labels: Labels | None = None) -> list[str]:
    """The tree drawn with box characters, one node a line (:func:`node_label`)."""
    from ..core.explain.merge_trees import draw_tree as draw

    labels = labels or Labels(tokenizer)
    return draw(tree, lambda n: node_label(tokenizer, n, labels))


def node_json(tokenizer: Tokenizer, n: MergeNode) -> dict[str, Any]:
    """A merge tree as nested plain data: the core's fields (``id``, ``bytes`` in hex, ``rank``,
    ``children``) with the vocabulary's spelling (``token``) and the merge rank (``merge_rank``)."""
    return {
        "id": n.id,
        "bytes": n.bytes.hex(),
        "rank": n.rank,
        "merge_rank": n.merge_rank,
        "token": n.token if n.token is not None else tokenizer.token_str(n.id),
        "children": [node_json(tokenizer, c) for c in n.children],
    }
