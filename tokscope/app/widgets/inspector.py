"""The token inspector: everything about the selected piece."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...core.types import byte_kind
from ...core.document import Document
from ..render import safe_text

KIND_LETTER = {"ascii": "A", "lead": "L", "continuation": "C", "invalid": "!"}
KIND_STYLE = {"ascii": "", "lead": "bold", "continuation": "italic", "invalid": "reverse"}

#: bytes shown before "…" in the inspector
MAX_BYTES_SHOWN = 16


def inspect(doc: Document | None, index: int | None, occurrences: int | None = None) -> Text:
    """The inspector's text for piece ``index`` of ``doc``."""
    out = Text(no_wrap=False, overflow="fold")
    if doc is None:
        return Text("loading…")
    if index is None or not doc.ids:
        return Text("No token selected. Tab to the token view and move with ←/→, or click a token.", style="dim")
    piece = doc.piece(index)
    tok = doc.tokenizer
    token = tok.token(piece.id)
    data = piece.bytes
    if occurrences is None:
        occurrences = doc.occurrences(piece.id)
    label = lambda s: out.append(s, style="bold")  # noqa: E731
    label("id ")
    out.append(f"{piece.id}")
    label("  rank ")
    out.append("special token" if token.special else f"{token.rank}")
    label("  piece ")
    out.append(f"{index + 1}/{len(doc.ids)}")
    label("  seen ")
    out.append(f"{occurrences}×\n")
    label("text ")
    if piece.partial:
        shown = safe_text(data.decode("utf-8", "replace"), ws=True)
        out.append(f"{shown!s}", style="reverse")
        out.append("  partial: only part of a character's bytes\n", style="italic")
    else:
        out.append(safe_text(piece.text, ws=True), style="reverse")
        lead = data[:1] == b" "
        out.append(f"  leading space: {'yes' if lead else 'no'}\n")
    label("bytes ")
    out.append_text(byte_line(data))
    out.append("\n")
    label("decoded ")
    if piece.partial:
        whole = data.decode("utf-8", "ignore")
        state = _partial_state(data)
        out.append(f"{safe_text(whole, ws=True)!s} {state}" if whole else f"{state}")
    else:
        chars = " ".join(f"U+{ord(c):04X}" for c in piece.text[:4]) + (" …" if len(piece.text) > 4 else "")
        out.append(f"{chars}")
    out.append("  ")
    label("len ")
    out.append(f"{len(data)} B, {len(data.decode('utf-8', 'ignore'))} ch\n")
    chunk = doc.chunk_of(index)
    label("chunk ")
    out.append(f"[{chunk.start}:{chunk.end}] ")
    text = chunk.text if len(chunk.text) <= 40 else chunk.text[:40] + "…"
    out.append(safe_text(text, ws=True), style="reverse")
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
        out.append(" (ASCII)", style="dim")
        return out
    shown = data[: limit * 2 // 3]
    for k, b in enumerate(shown):
        kind = byte_kind(b)
        out.append(f"{b:02x}", style=KIND_STYLE[kind])
        out.append(f":{KIND_LETTER[kind]}" + (" " if k + 1 < len(shown) else ""), style="dim")
    if len(data) > len(shown):
        out.append(f" … (+{len(data) - len(shown)})")
    return out


def _partial_state(data: bytes) -> str:
    """Say which character bytes a partial piece holds.

    >>> _partial_state(b"\\xf0\\x9f")
    '(starts a 4-byte character: 2 of 4 bytes)'
    >>> _partial_state(b"\\x91\\x8d")
    '(ends a character: 2 continuation bytes)'
    """
    parts = []
    i = 0
    while i < len(data) and byte_kind(data[i]) == "continuation":
        i += 1
    if i:
        parts.append(f"ends a character: {i} continuation byte{'s' if i > 1 else ''}")
    # trailing incomplete character
    j = len(data) - 1
    while j >= i and byte_kind(data[j]) == "continuation":
        j -= 1
    if j >= i and byte_kind(data[j]) == "lead":
        lead = data[j]
        need = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        have = len(data) - j
        if have < need:
            parts.append(f"starts a {need}-byte character: {have} of {need} bytes")
    return "(" + "; ".join(parts) + ")" if parts else "(partial)"


class Inspector(Static):
    """Shows :func:`inspect` for the selected piece."""

    DEFAULT_CSS = """
    Inspector { height: auto; }
    """

    def show(self, doc: Document | None, index: int | None) -> None:
        self.update(inspect(doc, index), layout=False)  # fixed height in the app's CSS
