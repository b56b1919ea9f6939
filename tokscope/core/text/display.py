"""Showing text and bytes safely and in one notation, for every pane and command.

Two promises live here:

* **Nothing from outside reaches the terminal as a command.** Text that did not come from tokscope
  itself (the user's text, file names, tokenizer names and metadata, corpus text) may hold C0/C1
  controls, escape sequences, bidirectional overrides or zero-width characters. :func:`safe_text`
  replaces each with a visible, inert stand-in (``␛``, ``⟨RLO⟩``, ``⟨U+200B⟩``), so it can be
  printed or drawn as it is.
* **One byte notation.** Bytes that are not whole UTF-8 characters (a partial piece, a byte-fallback
  token) are written ``‹f0 9f›`` everywhere: the token view, the inspector, the why screen,
  insights and the command line's plain output. :func:`parse_hex` reads hex back in any common
  spelling.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from .errors import TokscopeError

#: columns a tab takes when whitespace is drawn
TAB_WIDTH = 4

#: format and separator characters shown by name
NAMED = {
    0x200B: "ZWSP", 0x200C: "ZWNJ", 0x200D: "ZWJ", 0x2060: "WJ", 0xFEFF: "BOM", 0x00AD: "SHY",
    0x200E: "LRM", 0x200F: "RLM", 0x061C: "ALM",
    0x202A: "LRE", 0x202B: "RLE", 0x202C: "PDF", 0x202D: "LRO", 0x202E: "RLO",
    0x2066: "LRI", 0x2067: "RLI", 0x2068: "FSI", 0x2069: "PDI",
    0x2028: "LS", 0x2029: "PS", 0x0085: "NEL",
}

#: the visible stand-ins for whitespace when it is shown
SPACE, TAB, NEWLINE = "·", "→", "⏎"


@lru_cache(maxsize=8192)
def char_glyph(ch: str, ws: bool = False) -> tuple[str, str]:
    """How one character is shown: ``(glyph, kind)``; kind is ``text``, ``ws`` or ``ctrl``.

    With ``ws`` spaces, tabs and newlines get visible stand-ins; without it they stay as they are
    (a newline as nothing: the caller breaks the line).

    >>> char_glyph(" ", True), char_glyph("\\x1b"), char_glyph("\\u202e"), char_glyph("\\x85")
    (('·', 'ws'), ('␛', 'ctrl'), ('⟨RLO⟩', 'ctrl'), ('⟨NEL⟩', 'ctrl'))
    """
    code = ord(ch)
    if ch == " ":
        return (SPACE if ws else " "), "ws"
    if ch == "\t":
        return (TAB + " " * (TAB_WIDTH - 1) if ws else " " * TAB_WIDTH), "ws"
    if ch == "\n":
        return (NEWLINE if ws else ""), "ws"
    if code < 0x20:
        return chr(0x2400 + code), "ctrl"
    if code == 0x7F:
        return "␡", "ctrl"
    if code in NAMED:
        return f"⟨{NAMED[code]}⟩", "ctrl"
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
        return f"⟨U+{code:04X}⟩", "ctrl"
    if category == "Zs" and ws:
        return "␣", "ws"
    return ch, "text"


def safe_text(text: object, ws: bool = False) -> str:
    """``text`` with every character that could act on a terminal (or hide) replaced by its inert
    glyph: the one escaping helper for anything printed or drawn that tokscope did not write.
    Newlines become ``⏎``, tabs ``→`` (one line out, always).

    >>> safe_text("a\\x1b[2Jb\\u202e")
    'a␛[2Jb⟨RLO⟩'
    >>> safe_text("two\\nlines"), safe_text("clip\\x1b]52;c;aGk=\\x07")
    ('two⏎lines', 'clip␛]52;c;aGk=␇')

    A byte that was not UTF-8 and reached a string through ``surrogateescape`` (file names and
    command-line arguments do) is shown as that byte: ``safe_text("n\\udcffame")`` is ``'n‹ff›ame'``.
    """
    text = str(text)
    if text.isascii() and text.isprintable() and not (ws and " " in text):
        return text
    out = []
    for ch in text:
        if ch == "\n":
            out.append(NEWLINE)
        elif ch == "\t":
            out.append(TAB)
        elif "\udc80" <= ch <= "\udcff":  # a byte that was not UTF-8 (a file name, an argument)
            out.append(hex_label(bytes([ord(ch) - 0xDC00])))
        else:
            out.append(char_glyph(ch, ws)[0])
    return "".join(out)


def hex_label(data: bytes) -> str:
    """Bytes that are not whole characters, in tokscope's one notation.

    >>> hex_label(b"\\xf0\\x9f")
    '‹f0 9f›'
    """
    return "‹" + data.hex(" ") + "›"


def token_label(data: bytes, ws: bool = True) -> str:
    """A token's bytes on one line, unambiguous and inert: whole characters as :func:`safe_text`
    shows them (with ``ws`` spaces too become visible, ``·``), bytes that are not whole characters
    as :func:`hex_label`. The one way the command line and the explorer show a token.

    >>> token_label(b" the"), token_label(b"\\n\\n"), token_label("é".encode()[:1]), token_label(b"a\\xe2\\x80")
    ('·the', '⏎⏎', '‹c3›', 'a‹e2 80›')
    >>> token_label(b" a\\tb\\x1b", ws=False)
    ' a→b␛'
    """
    text = data.decode("utf-8", "surrogateescape")
    if text.isascii() and text.isprintable() and not (ws and " " in text):
        return text
    out: list[str] = []
    raw: list[int] = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            raw.append(code - 0xDC00)
            continue
        if raw:
            out.append(hex_label(bytes(raw)))
            raw = []
        if ch == "\t":
            out.append(TAB)
        elif ch == "\n":
            out.append(NEWLINE)
        else:
            out.append(char_glyph(ch, ws)[0])
    if raw:
        out.append(hex_label(bytes(raw)))
    return "".join(out)


def quoted(data: bytes) -> str:
    """A token's bytes between double quotes, spaces as they are (the quotes show where they end):
    how the command line writes a token inside a sentence.

    >>> quoted(b" the"), quoted("é".encode()[1:]), quoted(b"\\n")
    ('" the"', '"‹a9›"', '"⏎"')
    """
    return '"' + token_label(data, ws=False) + '"'


def parse_hex(value: str) -> bytes:
    """Bytes from hex such as ``68656c6c6f``, ``68 65 6c``, ``0x68,0x65`` or ``‹68 65›``; a clear
    error else.

    >>> parse_hex("68 65"), parse_hex("0x68,0x65"), parse_hex("‹f0 9f›")
    (b'he', b'he', b'\\xf0\\x9f')
    """
    cleaned = value.strip().lower().replace("0x", "").replace("\\x", "")
    for sep in (" ", ",", ":", "-", "\t", "‹", "›", "<", ">"):
        cleaned = cleaned.replace(sep, "")
    if not cleaned:
        raise TokscopeError("no bytes given: hex such as 68656c6c6f is expected")
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        bad = next((c for c in cleaned if c not in "0123456789abcdef"), None)
        if bad is not None:
            raise TokscopeError(f"invalid hex {safe_text(value)!r}: {safe_text(bad)!r} is not a hex digit") from None
        raise TokscopeError(f"invalid hex {safe_text(value)!r}: an odd number of hex digits ({len(cleaned)})") from None
