"""GPT-2's printable stand-ins for bytes (the "byte-level" alphabet).

Byte-level BPE vocabularies in GPT-2's ``vocab.bpe`` and in Hugging Face ``tokenizer.json`` files
write each byte as one printable character: printable Latin-1 bytes stand for themselves, and the
others (controls, space, 0x7F-0xA0, 0xAD) take the code points from U+0100 upwards, in byte order.
So ``Ġ`` (U+0120) is the space byte and ``Ċ`` (U+010A) the newline.

>>> BYTE_TO_CHAR[ord(" ")], BYTE_TO_CHAR[ord("a")], BYTE_TO_CHAR[0x0A]
('Ġ', 'a', 'Ċ')
>>> bytes(CHAR_TO_BYTE[c] for c in "ĠhÃ©")
b' h\\xc3\\xa9'
"""

from __future__ import annotations


def _table() -> list[str]:
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    out = [""] * 256
    for b in printable:
        out[b] = chr(b)
    n = 0
    for b in range(256):
        if not out[b]:
            out[b] = chr(256 + n)
            n += 1
    return out


#: ``byte -> stand-in character``
BYTE_TO_CHAR: tuple[str, ...] = tuple(_table())
#: ``stand-in character -> byte``
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}
#: ``str.translate`` table from stand-ins to the Latin-1 character of their byte
_TO_LATIN1 = {ord(c): b for c, b in CHAR_TO_BYTE.items()}


def to_alphabet(data: bytes) -> str:
    """The stand-in characters of ``data``.

    >>> to_alphabet(" é".encode())
    'ĠÃ©'
    """
    return "".join([BYTE_TO_CHAR[b] for b in data])


