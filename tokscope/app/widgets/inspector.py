"""The token inspector: everything about the selected piece, as its tokenizer's kind knows it.

Byte-level BPE from ranks (the OpenAI encodings, tokenizers trained here) shows the id, which is
also the rank. Every other kind shows the facts of :mod:`tokscope.core.explain.facts`: the merge rank of a
BPE token from its merge list, a Unigram piece's score, the byte of a byte-fallback token, the
vocabulary's spelling (``▁the``, ``Ġthe``, ``##ing``, ``<0xE2>``), whether the piece continues
or ends a word, what an unknown token covers, and the chunk as the model saw it when a normalizer
or pre-tokenizer rewrote it. Facts that cost more than a glance (the first look into a large merge
list, the form of a chunk a normalizer sees whole) are gathered in a thread worker.
"""

from __future__ import annotations

import unicodedata
import weakref

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import RenderResult
from textual.geometry import Region
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widgets import Static

from ...core.text.display import safe_text
from ...core.document.document import Document
from ...core.text.errors import TokscopeError
from ...core.explain.facts import PieceFacts, TokenFacts, piece_facts
from ...core.text.types import byte_kind, is_whole_utf8
from ..render import WS_STYLE, token_text

KIND_LETTER = {"ascii": "A", "lead": "L", "continuation": "C", "invalid": "!"}
KIND_STYLE = {"ascii": "", "lead": "bold", "continuation": "italic", "invalid": "reverse"}

#: bytes shown before "…" in the inspector
MAX_BYTES_SHOWN = 16
#: characters of a chunk shown before "…"
MAX_CHUNK_SHOWN = 40
#: a chunk up to this long has its form worked out at once (for a tokenizer whose stages are local)
QUICK_CHUNK = 2048


def char_name(ch: str) -> str:
    """``U+00E9 LATIN SMALL LETTER E WITH ACUTE`` (the code point alone when it has no name).

    >>> char_name("é"), char_name("\\x1b")
    ('U+00E9 LATIN SMALL LETTER E WITH ACUTE', 'U+001B')
    """
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def code_points(text: str, room: int) -> str:
    """``U+0020 U+0063 …``: as many code points of ``text`` as fit ``room`` cells.

    >>> code_points(" café", 40)
    'U+0020 U+0063 U+0061 U+0066 U+00E9'
    >>> code_points(" café", 16)
    'U+0020 U+0063 …'
    """
    parts = [f"U+{ord(c):04X}" for c in text]
    out = " ".join(parts)
    if len(out) <= room:
        return out
    shown = []
    width = 0
    for part in parts:
        if width + len(part) + 1 + 1 > room:
            break
        shown.append(part)
        width += len(part) + 1
    return " ".join(shown) + " …"


def clipped(text: str, cells: int, style: str = "") -> Text:
    """``text`` as a label (:func:`tokscope.app.render.token_text`) at most ``cells`` wide, a cut
    marked with ``…``.

    >>> clipped("unbelievable", 6).plain, clipped("日本語です", 6).plain, clipped("short", 6).plain
    ('unbel…', '日本…', 'short')
    """
    cells = max(2, cells)
    label = token_text(text[:cells].encode("utf-8", "surrogatepass"), style=style)
    if len(text) > cells and label.cell_len <= cells:
        label.append("…")  # cut by characters: say so
    _fit(label, cells)
    return label


def _fit(label: Text, cells: int) -> None:
    """Cut ``label`` to ``cells`` cells, the cut marked with ``…`` (nothing when it fits)."""
    if label.cell_len <= cells:
        return
    used = keep = 0
    for ch in label.plain:
        used += cell_len(ch)
        if used > cells - 1:
            break
        keep += 1
    label.right_crop(len(label.plain) - keep)
    label.append("…", style="")


def partial_chars(doc: Document, index: int) -> list[tuple[str, int, int, int]]:
    """The characters piece ``index`` holds only part of: ``(character, first byte, last byte,
    bytes in the character)``, bytes counted from 1.

    A partial piece overlaps at most two characters partly: the one its first bytes finish and
    the one its last bytes begin.
    """
    piece = doc.piece(index)
    out = []
    text = doc.text
    for pos in sorted({piece.start, max(piece.start, piece.end - 1)}):
        if pos >= len(text):
            continue
        ch = text[pos]
        size = len(ch.encode("utf-8", "surrogatepass"))
        b0 = doc.byte_offset(pos)
        lo, hi = max(piece.byte_start, b0), min(piece.byte_end, b0 + size)
        if hi > lo and (hi - lo) < size:
            out.append((ch, lo - b0 + 1, hi - b0, size))
    return out


def model_span(doc: Document, index: int) -> tuple[int, int] | None:
    """The offsets the model reports for piece ``index`` when they are not the piece's span (a
    ``trim_offsets`` post-processor leaves out a token's spaces), else ``None``; as Hugging
    Face's ``encode`` reports them by default (with the template).

    >>> from tokscope.core import Tokenizer
    >>> doc = Document.build(Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+"), "a b")
    >>> model_span(doc, 1) is None
    True
    """
    tok = doc.tokenizer
    if not tok.trim_steps:
        return None
    piece = doc.piece(index)
    span = tok.model_offsets(doc.text, [piece], first=index, add_special_tokens=True)[0]
    return None if span == (piece.start, piece.end) else span


def type_fact(doc: Document, token_id: int) -> str:
    """``type normal (GGUF: normal)``: the piece type a SentencePiece table gives the token and,
    for a GGUF file, the file's own token type (llama.cpp's, before its corrections: a BPE GGUF
    has only that one); ``""`` for other kinds.

    >>> from tokscope.core import Tokenizer
    >>> type_fact(Document.build(Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+"), "a"), 97)
    ''
    """
    from ...sources.model_files import describe

    tok = doc.tokenizer
    piece = tok.piece_type(token_id)
    files = describe(tok)
    gguf = files.gguf.token_type(token_id) if files is not None and files.gguf is not None else None
    if piece is None:
        return f"type GGUF {gguf}" if gguf is not None else ""
    return f"type {piece}" + (f" (GGUF: {gguf})" if gguf is not None else "")


def kind_fact(facts: TokenFacts) -> tuple[str, str]:
    """The first line's fact about a token of a kind other than byte-level BPE from ranks:
    ``(label, value)``, the label empty when the value says it all.

    >>> from tokscope.core.explain.facts import TokenFacts
    >>> base = dict(id=5, kind="WordPiece", token="##ing", bytes=b"ing", special=False, added=False,
    ...             unknown=False, merge_rank=None, parents=None, score=None, continuation="##",
    ...             end_of_word=None, byte=None, leading_space=False)
    >>> kind_fact(TokenFacts(**base))
    ('', 'WordPiece')
    >>> kind_fact(TokenFacts(**{**base, "kind": "BPE", "merge_rank": 7}))
    ('rank ', '7')
    >>> kind_fact(TokenFacts(**{**base, "kind": "Unigram", "score": -7.25}))
    ('score ', '-7.25')
    """
    if facts.unknown:
        return "", "unknown token"
    if facts.special:
        return "", "special token"
    if facts.added:
        return "", "added token"
    if facts.byte is not None:
        return "byte ", f"0x{facts.byte:02X} (byte fallback)"
    if facts.merge_rank is not None:
        return "rank ", f"{facts.merge_rank}"
    if facts.score is not None:
        return "score ", f"{facts.score:.2f}"
    if "BPE" in facts.kind:
        return "", "no merge: in the alphabet"
    return "", facts.kind


def word_fact(facts: TokenFacts) -> str:
    """Where the token sits in a word: a continuation or end-of-word mark, or its leading space.

    >>> from tokscope.core.explain.facts import TokenFacts
    >>> f = TokenFacts(5, "WordPiece", "##ing", b"ing", False, False, False, None, None, None, "##", None, None, False)
    >>> word_fact(f)
    'continues a word (##)'
    """
    if facts.continuation is not None:
        return f"continues a word ({safe_text(facts.continuation)})"
    if facts.kind == "WordPiece" and not facts.added:
        return "starts a word"
    leading = f"leading space: {'yes' if facts.leading_space else 'no'}"
    if facts.end_of_word is not None:
        return f"ends a word ({safe_text(facts.end_of_word)}), {leading}"
    return leading


def inspect(doc: Document | None, index: int | None, width: int = 76, facts: PieceFacts | None = None,
            rows: int | None = None) -> Text:
    """The inspector's text for piece ``index`` of ``doc``, for a pane ``width`` cells wide and
    ``rows`` high (``None``: as high as it needs).

    For a tokenizer that is not byte-level BPE from ranks, ``facts`` are the piece's facts
    (:func:`tokscope.core.explain.facts.piece_facts`); ``None`` shows ``…`` where they go until they come.
    """
    out = Text(no_wrap=False, overflow="fold")
    if doc is None:
        return Text("loading…")
    if index is None or not doc.ids:
        return _with_notes(Text("No token selected. Tab to the token view and move with ←/→, or click a token."), doc)
    piece = doc.piece(index)
    tok = doc.tokenizer
    ranked = bool(tok.ranks)
    token = None if ranked or facts is None else facts.token

    def label(s: str) -> None:
        out.append(s, style="bold")

    # id, what the kind says about the token, where the piece is
    label("id ")
    out.append(f"{piece.id}")
    if ranked:
        label("  rank ")
        out.append("special token" if tok.is_special(piece.id) else f"{tok.token(piece.id).rank}")
    elif token is None:
        out.append("  …")
    else:
        name, value = kind_fact(token)
        out.append("  ")
        if name:
            label(name)
        out.append(value)
    label("  piece ")
    out.append(f"{index + 1}/{len(doc.ids)}")
    label("  seen ")
    out.append(f"{doc.occurrences(piece.id)}×")

    # beside the bytes: the offsets the model reports when they leave out the spaces the view
    # draws (trim_offsets), and a SentencePiece or GGUF token's type; on this row where the pane
    # shows no bytes row
    extras = []
    span = model_span(doc, index)
    if span is not None:
        extras.append(("model offsets ", f"[{span[0]}:{span[1]}]"))
    types = type_fact(doc, piece.id)
    if types:
        extras.append(("type ", types.removeprefix("type ")))
    if rows is not None and rows < 3:
        used = len(out.plain)
        for name, value in extras:
            short = name.split()[0] + " "
            if used + 2 + len(short) + len(value) <= width:
                label("  " + short)
                out.append(value)
                used += 2 + len(short) + len(value)
        extras = []
    out.append("\n")
    if token is not None and token.unknown:
        _unknown_rows(out, label, piece, facts.text, width)  # type: ignore[union-attr]
    else:
        _token_rows(out, label, doc, index, token, width, spare=rows is None or rows > 5, extras=extras)
    out.append("\n")

    chunk = doc.chunk_of(index) if facts is None else facts.chunk
    label("chunk ")
    if ranked:
        out.append(f"[{chunk.start}:{chunk.end}] ")
        text = chunk.text if len(chunk.text) <= MAX_CHUNK_SHOWN else chunk.text[:MAX_CHUNK_SHOWN] + "…"
        out.append_text(token_text(text.encode("utf-8", "surrogatepass"), style="reverse"))
        if chunk.special:
            out.append(" (special)")
        return _with_notes(out, doc)
    where = f"[{chunk.start}:{chunk.end}] "
    out.append(where)
    form = None if facts is None else facts.form
    spare = rows is None or rows > 5
    room = MAX_CHUNK_SHOWN
    if form is not None and not spare:  # the original and the form share the last row
        room = min(MAX_CHUNK_SHOWN, (width - len("chunk ") - len(where) - len("  model saw ")) // 2)
    out.append_text(clipped(chunk.text, room, style="reverse"))
    if chunk.special:
        out.append(" (added)" if token is not None and not token.special else " (special)")
    if form is not None:
        label("\nmodel saw " if spare else "  model saw ")
        out.append_text(clipped(form, room))
    return _with_notes(out, doc)


def _with_notes(out: Text, doc: Document) -> Text:
    """``out`` and, under it, what the user should know about how the tokenizer was read."""
    from ...sources.model_files import notes_of

    for note in notes_of(doc.tokenizer):
        out.append("\n⚠ ", style="bold")
        out.append(safe_text(note))
    return out


def _fit_last(out: Text, name: str, value: str) -> None:
    """Where a short pane has no row for an extra fact: its value alone, in place of the bytes'
    ``(ASCII)`` note when that is what the row ends with (the value is what matters)."""
    if out.plain.endswith(" (ASCII)"):
        out.right_crop(len(" (ASCII)"))
        out.append("  ")
        out.append(f"{name.split()[0]} {value}", style="bold")


def _token_rows(out: Text, label, doc: Document, index: int, token: TokenFacts | None, width: int,
                spare: bool = True, extras: list[tuple[str, str]] = ()) -> None:  # type: ignore[assignment]
    """The rows of a token that is not the unknown token: its text (with the vocabulary's spelling
    and where it sits in a word), its bytes, and its code points or the characters it is part of
    (with a ``spare`` row, every code point that fits a row, the lengths on the next)."""
    piece = doc.piece(index)
    data = piece.bytes
    # a piece of another kind than byte-level BPE may share a character with its neighbour (a
    # Metaspace ▁ put before a word takes the word's first character) while its own bytes are whole
    sharing = piece.partial and token is not None and is_whole_utf8(data)
    if sharing:
        after = f"shares {safe_text(doc.text[piece.start:piece.end])} with {_neighbour(doc, index)}"
    elif piece.partial:
        after = "partial: part of a character's bytes"
    elif token is not None:
        after = word_fact(token)
    else:
        after = f"leading space: {'yes' if data[:1] == b' ' else 'no'}"
    shown = token_text(data, style="reverse")
    spelling = None
    if token is not None and token.token != data.decode("utf-8", "replace"):
        spelling = Text(safe_text(token.token))
    room = width - len("text ") - len("  ") - len(after) - (len("  vocab ") if spelling is not None else 0)
    if spelling is not None:
        # the spelling gets what the text leaves; in a short pane at least half the row
        want = room - shown.cell_len
        _fit(spelling, max(6, want) if spare else max(6, min(spelling.cell_len, max(want, room // 2))))
        room -= spelling.cell_len
    if not spare:
        _fit(shown, max(6, room))  # a long token would push the chunk out of the pane
    label("text ")
    out.append_text(shown)
    if spelling is not None:
        label("  vocab ")
        out.append_text(spelling)
    out.append(f"  {after}\n", style="italic" if piece.partial and not sharing else "")
    label("bytes ")
    shown_bytes = byte_line(data)
    out.append_text(shown_bytes)
    used = len("bytes ") + shown_bytes.cell_len
    for name, value in extras:  # on the bytes row where they fit, else on a row of their own
        if used + 2 + len(name) + len(value) <= width:
            out.append("  ")
            used += 2
        elif spare:
            out.append("\n")
            used = 0
        else:
            _fit_last(out, name, value)
            continue
        label(name)
        out.append(value)
        used += len(name) + len(value)
    out.append("\n")
    tail = f"  len {len(data)} B, {len(data.decode('utf-8', 'ignore'))} ch"
    if piece.partial and not sharing:
        label("of ")
        parts = partial_chars(doc, index)
        of = of_text(parts, named=True)
        if not spare and of.cell_len > width - len("of ") - len(tail):
            of = of_text(parts, named=False)  # the names would push the chunk out of the pane
        out.append_text(of)
        out.append(tail)
        return
    label("decoded ")
    room = max(8, width - len("decoded ") - len(tail))
    full = code_points(piece.text, 10**6)
    if spare and len(full) > room and len(full) <= width - len("decoded "):
        out.append(full + "\n")  # every code point on this line, the lengths on the next
        out.append(tail.strip())
    else:
        out.append(code_points(piece.text, room))
        out.append(tail)


def _unknown_rows(out: Text, label, piece, covered: str, width: int) -> None:
    """The rows of the unknown token: its spelling, the text it stands for (its characters and
    lengths), that text's bytes."""
    label("text ")
    out.append_text(token_text(piece.bytes, style="reverse"))
    out.append("  unknown: the vocabulary has no token for this text\n")
    data = covered.encode("utf-8", "surrogatepass")
    tail = f"  len {len(data)} B, {len(covered)} ch"
    label("covers ")
    shown = clipped(covered, MAX_CHUNK_SHOWN // 2, style="reverse")
    out.append_text(shown)
    room = max(8, width - len("covers ") - shown.cell_len - 2 - len(tail))
    names = char_name(covered) if len(covered) == 1 else code_points(covered, room)
    out.append("  " + (names if len(names) <= room else names[: room - 1] + "…"))
    out.append(tail + "\n")
    label("bytes ")
    out.append_text(byte_line(data))


def of_text(parts: list[tuple[str, int, int, int]], *, named: bool = True) -> Text:
    """The characters a partial piece is part of (:func:`partial_chars`), with their names or
    (``named`` False, where room is short) their code points only.

    >>> of_text([("é", 1, 1, 2)]).plain, of_text([("é", 1, 1, 2)], named=False).plain
    ('é U+00E9 LATIN SMALL LETTER E WITH ACUTE (byte 1 of 2)', 'é U+00E9 (byte 1 of 2)')
    """
    out = Text()
    for k, (ch, first, last, size) in enumerate(parts):
        if k:
            out.append(" · ")
        out.append(safe_text(ch), style="bold underline")
        span = f"byte {first}" if first == last else f"bytes {first}-{last}"
        out.append(f" {char_name(ch) if named else f'U+{ord(ch):04X}'} ({span} of {size})")
    if not parts:
        out.append("(partial)")
    return out


def _neighbour(doc: Document, index: int) -> str:
    """Which piece next to ``index`` covers the same characters: ``the next piece`` ..."""
    piece = doc.piece(index)

    def same(i: int) -> bool:
        if not 0 <= i < len(doc.ids):
            return False
        other = doc.piece(i)
        return other.start < piece.end and piece.start < other.end

    before, after = same(index - 1), same(index + 1)
    if before and after:
        return "the pieces around it"
    return "the piece before" if before else "the next piece" if after else "another piece"


def byte_line(data: bytes, limit: int = MAX_BYTES_SHOWN) -> Text:
    """Bytes in hex, each marked A (ASCII), L (lead) or C (continuation); all-ASCII says so once.

    >>> byte_line("é!".encode()).plain
    'c3:L a9:C 21:A'
    >>> byte_line(b"hi").plain
    '68 69 (ASCII)'
    """
    out = Text()
    if data.isascii():
        out.append(data[:limit].hex(" "))
        out.append(f" … (+{len(data) - limit})" if len(data) > limit else "")
        out.append(" (ASCII)")
        return out
    shown = data[: limit * 2 // 3]
    for k, b in enumerate(shown):
        kind = byte_kind(b)
        out.append(f"{b:02x}", style=KIND_STYLE[kind])
        out.append(f":{KIND_LETTER[kind]}" + (" " if k + 1 < len(shown) else ""))
    if len(data) > len(shown):
        out.append(f" … (+{len(data) - len(shown)})")
    return out


class Inspector(Static):
    """Shows :func:`inspect` for the selected piece.

    The facts of a tokenizer other than byte-level BPE from ranks come from a thread worker when
    they are not at hand (the first look at a tokenizer builds its merge index; a tokenizer whose
    normalizer sees the whole text works out a chunk's form from all of it). One look runs at a
    time; the newest selection asked for while it runs is looked at next, the ones between are
    skipped.
    """

    DEFAULT_CSS = """
    Inspector { height: auto; }
    """

    def __init__(self, *args, ceiling: float | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: seconds a file's pattern may run when facts are looked at on the UI thread (the
        #: explorer's, as for edits); one that runs out of it is looked at in the worker
        self.ceiling = ceiling
        self._wanted: tuple[Document | None, int | None] = (None, None)
        self._facts: tuple[Document, int, PieceFacts] | None = None
        self._pending: tuple[Document, int] | None = None
        self._busy = False
        #: tokenizers whose facts have been looked at once (what stays costly after is the form)
        self._warm: weakref.WeakSet = weakref.WeakSet()
        #: tokenizers whose pattern ran out of the UI thread's ceiling here: looked at in the worker
        self._slow: weakref.WeakSet = weakref.WeakSet()
        self._title = "token"
        #: what is shown: the text, and what it was drawn from (the same again draws nothing)
        self._shown: Text | None = None
        self._drawn: tuple | None = None
        #: the rows shown, drawn for a width (None: drawn when next painted)
        self._rows: list[Strip] | None = None
        self._rows_width = 0
        self._show_pending = False  # a show() waits for the next refresh

    @property
    def facts(self) -> PieceFacts | None:
        """The facts shown for the selected piece (None: byte-level BPE from ranks, or not yet)."""
        doc, index = self._wanted
        got = self._facts
        return got[2] if got is not None and got[0] is doc and got[1] == index else None

    def show(self, doc: Document | None, index: int | None) -> None:
        """Show piece ``index`` of ``doc``: drawn after the next refresh (the token view's repaint
        of an edit is not held up by it), once for however many selections come before that."""
        self._wanted = (doc, index)
        if not self._show_pending:
            self._show_pending = True
            self.call_after_refresh(self._show_wanted)

    def _show_wanted(self) -> None:
        self._show_pending = False
        doc, index = self._wanted
        facts = None
        if doc is not None and index is not None and 0 <= index < len(doc.ids) and not doc.tokenizer.ranks:
            facts = self.facts
            if facts is None and self._quick(doc, index):
                facts = self._gather_now(doc, index)
            if facts is None:
                self._request(doc, index)
        self._draw(facts)

    def _draw(self, facts: PieceFacts | None) -> None:
        doc, index = self._wanted
        width = self.content_size.width or 76
        rows = self.content_size.height or None
        drawn = (doc, index, width, rows, facts)
        if drawn != self._drawn:  # the app shows the selection again after each edit: once is enough
            self._drawn = drawn
            self._put(inspect(doc, index, width, facts, rows))
        if doc is not None:  # a note on how the tokenizer was read stays in sight in the title
            from ...sources.model_files import notes_of, short_note

            title = "token" + "".join(f" · ⚠ {short_note(note)}" for note in notes_of(doc.tokenizer))
            if title != self._title:
                self._title = self.border_title = title

    def _put(self, content: Text) -> None:
        """Show ``content``, repainting only the rows that differ from those shown (the same text
        repaints nothing)."""
        old, self._shown = self._shown, content
        if old is not None and old == content:
            return
        before, before_width = self._rows, self._rows_width
        if before is None or not self.size.width or self.text_selection is not None:
            self._rows = None  # drawn when painted
            self.refresh()
            return
        width, after = self._rows_of(content)
        if width != before_width:
            self.refresh()
            return
        changed = [y for y in range(max(len(before), len(after)))
                   if y >= len(before) or y >= len(after) or before[y] != after[y]]
        # rows next to each other are one region
        spans: list[list[int]] = []
        for y in changed:
            if spans and spans[-1][1] == y:
                spans[-1][1] = y + 1
            else:
                spans.append([y, y + 1])
        if spans:
            self.refresh(*(Region(0, y0, width, y1 - y0) for y0, y1 in spans))

    def _rows_of(self, content: Text) -> tuple[int, list[Strip]]:
        """``content`` drawn at the pane's width, as Static draws it: ``(width, rows)``, also kept
        as what is shown."""
        width = self.size.width
        rows = Visual.to_strips(self, visualize(self, content, markup=False), width, None, self.visual_style)
        self._rows, self._rows_width = rows, width
        return width, rows

    def render(self) -> RenderResult:
        return self._shown if self._shown is not None else super().render()

    def render_line(self, y: int) -> Strip:
        # the rows :meth:`_put` drew (Static's own drawing when text is selected with the mouse)
        if self._shown is None or self.text_selection is not None:
            return super().render_line(y)
        rows = self._rows
        if rows is None or self._rows_width != self.size.width:
            rows = self._rows_of(self._shown)[1]
        return rows[y] if y < len(rows) else Strip.blank(self.size.width, self.visual_style.rich_style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._rows = None  # a theme or a class changed the pane's colours

    def _quick(self, doc: Document, index: int) -> bool:
        tok = doc.tokenizer
        if tok not in self._warm or not tok.restartable or tok in self._slow:
            return False
        chunk = doc.chunk_of(index)
        return chunk.end - chunk.start <= QUICK_CHUNK

    def _gather_now(self, doc: Document, index: int) -> PieceFacts | None:
        from contextlib import nullcontext

        from ...core.patterns.guard import PatternTimeoutError, time_ceiling

        try:
            # on the UI thread a file's pattern gets the short ceiling edits get; one that runs
            # out of it (it backtracks) is looked at in the worker instead (None: _request)
            with time_ceiling(self.ceiling) if self.ceiling is not None else nullcontext():
                facts = piece_facts(doc.tokenizer, doc.text, doc.piece(index), doc.chunk_of(index),
                                    allowed_special="all" if doc.specials else ())
        except PatternTimeoutError:
            self._slow.add(doc.tokenizer)  # from now on in the worker only
            return None
        except TokscopeError:
            return None
        self._facts = (doc, index, facts)
        return facts

    def _request(self, doc: Document, index: int) -> None:
        self._pending = (doc, index)
        if not self._busy:
            self._next()

    def _next(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None or pending != self._wanted:
            return
        doc, index = pending
        self._busy = True
        self._gather(doc, index, doc.piece(index), doc.chunk_of(index))

    @work(thread=True, group="inspector", exit_on_error=False)
    def _gather(self, doc: Document, index: int, piece, chunk) -> None:
        facts = None
        try:
            facts = piece_facts(doc.tokenizer, doc.text, piece, chunk, allowed_special="all" if doc.specials else ())
        except TokscopeError:
            pass
        finally:
            try:
                self.app.call_from_thread(self._gathered, doc, index, facts)
            except RuntimeError:  # the app is closing
                pass

    def _gathered(self, doc: Document, index: int, facts: PieceFacts | None) -> None:
        self._busy = False
        if facts is not None:
            self._warm.add(doc.tokenizer)
            self._facts = (doc, index, facts)
            if self._wanted[0] is doc and self._wanted[1] == index:
                self._draw(facts)
        self._next()


__all__ = ["WS_STYLE", "Inspector", "byte_line", "inspect"]
