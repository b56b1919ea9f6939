"""The token inspector: everything about the selected piece."""

from __future__ import annotations

import unicodedata

from rich.text import Text
from textual.widgets import Static

from ...core.display import safe_text
from ...core.document import Document
from ...core.types import byte_kind
from ..render import WS_STYLE, token_text

KIND_LETTER = {"ascii": "A", "lead": "L", "continuation": "C", "invalid": "!"}
KIND_STYLE = {"ascii": "", "lead": "bold", "continuation": "italic", "invalid": "reverse"}

#: bytes shown before "…" in the inspector
MAX_BYTES_SHOWN = 16


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


def inspect(doc: Document | None, index: int | None, width: int = 76) -> Text:
    """The inspector's text for piece ``index`` of ``doc``, for a pane ``width`` cells wide."""
    out = Text(no_wrap=False, overflow="fold")
    if doc is None:
        return Text("loading…")
    if index is None or not doc.ids:
        return Text("No token selected. Tab to the token view and move with ←/→, or click a token.")
    piece = doc.piece(index)
    tok = doc.tokenizer
    data = piece.bytes
    occurrences = doc.occurrences(piece.id)

    def label(s: str) -> None:
        out.append(s, style="bold")

    label("id ")
    out.append(f"{piece.id}")
    label("  rank ")
    out.append("special token" if tok.is_special(piece.id) else f"{tok.token(piece.id).rank}")
    label("  piece ")
    out.append(f"{index + 1}/{len(doc.ids)}")
    label("  seen ")
    out.append(f"{occurrences}×\n")
    label("text ")
    out.append_text(token_text(data, style="reverse"))
    if piece.partial:
        out.append("  partial: part of a character's bytes\n", style="italic")
    else:
        out.append(f"  leading space: {'yes' if data[:1] == b' ' else 'no'}\n")
    label("bytes ")
    out.append_text(byte_line(data))
    out.append("\n")
    tail = f"  len {len(data)} B, {len(data.decode('utf-8', 'ignore'))} ch"
    if piece.partial:
        label("of ")
        parts = partial_chars(doc, index)
        for k, (ch, first, last, size) in enumerate(parts):
            if k:
                out.append(" · ")
            out.append(safe_text(ch), style="bold underline")
            span = f"byte {first}" if first == last else f"bytes {first}-{last}"
            out.append(f" {char_name(ch)} ({span} of {size})")
        if not parts:
            out.append("(partial)")
        out.append(tail)
    else:
        label("decoded ")
        room = max(8, width - len("decoded ") - len(tail))
        full = code_points(piece.text, 10**6)
        if len(full) > room and len(full) <= width - len("decoded "):
            out.append(full + "\n")  # every code point on this line, the lengths on the next
            out.append(tail.strip())
        else:
            out.append(code_points(piece.text, room))
            out.append(tail)
    out.append("\n")
    chunk = doc.chunk_of(index)
    label("chunk ")
    out.append(f"[{chunk.start}:{chunk.end}] ")
    text = chunk.text if len(chunk.text) <= 40 else chunk.text[:40] + "…"
    out.append_text(token_text(text.encode("utf-8", "surrogatepass"), style="reverse"))
    if chunk.special:
        out.append(" (special)")
    return out


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
    """Shows :func:`inspect` for the selected piece."""

    DEFAULT_CSS = """
    Inspector { height: auto; }
    """

    def show(self, doc: Document | None, index: int | None) -> None:
        width = self.content_size.width or 76
        self.update(inspect(doc, index, width), layout=False)  # fixed height in the app's CSS


__all__ = ["Inspector", "inspect", "byte_line", "WS_STYLE"]
