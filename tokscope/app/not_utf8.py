"""A text that is not UTF-8, as the explorer says it: the question its dialogs ask, without the
command line's advice (``--errors replace``): the explorer offers the way on itself, a button that
reads the file again with U+FFFD for the bad bytes."""

from __future__ import annotations

from ..core.text.display import safe_text
from ..inputs.text_input import InputError

#: what the explorer calls a text read with U+FFFD for its bad bytes (titles, dialogs)
REPLACED = "opened with replacements"


def not_utf8_question(problem: InputError) -> str:
    """What is wrong with the input, in one sentence.

    >>> from tokscope.inputs.text_input import decode_input
    >>> try:
    ...     decode_input(b"ab\\xff", "notes.txt")
    ... except InputError as exc:
    ...     not_utf8_question(exc)
    'notes.txt is not valid UTF-8: byte 0xff at offset 2 does not decode.'
    """
    kind = "a binary file" if problem.kind == "binary" else "not valid UTF-8"
    return f"{safe_text(problem.where)} is {kind}: byte 0x{problem.byte:02x} at offset {problem.offset} does not decode."
