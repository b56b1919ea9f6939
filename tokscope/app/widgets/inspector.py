"""The token inspector: everything about the selected piece."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...core.types import byte_kind
from ..model import TokenDoc
from ..render import safe_text

KIND_LETTER = {"ascii": "A", "lead": "L", "continuation": "C", "invalid": "!"}
KIND_STYLE = {"ascii": "", "lead": "bold", "continuation": "italic", "invalid": "reverse"}

#: bytes shown before "…" in the inspector
MAX_BYTES_SHOWN = 16


def inspect(doc: TokenDoc | None, index: int | None, occurrences: int | None = None) -> Text:
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
    for k, b in enumerate(data[:MAX_BYTES_SHOWN]):
        kind = byte_kind(b)
        out.append(f"{b:02x}", style=KIND_STYLE[kind])
        out.append(f"{KIND_LETTER[kind]} ", style="dim")
    if len(data) > MAX_BYTES_SHOWN:
        out.append(f"… (+{len(data) - MAX_BYTES_SHOWN})")
    out.append("\n")
    label("decoded ")
    if piece.partial:
        whole = data.decode("utf-8", "ignore")
        state = _partial_state(data)
        out.append(f"{safe_text(whole, ws=True)!s} {state}\n" if whole else f"{state}\n")
    else:
        chars = " ".join(f"U+{ord(c):04X}" for c in piece.text[:6]) + (" …" if len(piece.text) > 6 else "")
        out.append(f"{chars}\n")
    label("length ")
    out.append(f"{len(data)} bytes, {len(data.decode('utf-8', 'ignore'))} chars  ")
    chunk = doc.chunk_of(index)
    label("chunk ")
    out.append(f"[{chunk.start}:{chunk.end}] ")
    text = chunk.text if len(chunk.text) <= 40 else chunk.text[:40] + "…"
    out.append(safe_text(text, ws=True), style="reverse")
    if chunk.special:
        out.append(" (special)")
    out.append("\n")
    out.append("bytes: A ascii · L lead · C continuation", style="dim")
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

    def show(self, doc: TokenDoc | None, index: int | None) -> None:
        self.update(inspect(doc, index))
