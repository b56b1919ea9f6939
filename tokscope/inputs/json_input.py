"""A JSON document a user hands over (a conversation, tool definitions), read with messages that
say what is wrong with it.

:func:`parse_document` takes what editors and other programs write: a leading byte order mark is
dropped. What cannot be read is a one-line :class:`~tokscope.inputs.text_input.InputError` of
kind ``not-json`` (an error in the input, exit code 1 on the command line, not a usage error):
text after the value, a number too long to read (Python refuses integers of more than 4300
digits), nesting too deep for the parser, or plain bad JSON, with the line and column.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.text.display import safe_text
from .text_input import DEFAULT_MAX_BYTES, InputError, read_input

__all__ = ["MAX_NUMBER_DIGITS", "parse_document", "read_document"]

#: the most digits a JSON integer may have (Python's own limit for turning text into an int)
MAX_NUMBER_DIGITS = 4300


class _LongNumber(Exception):
    def __init__(self, digits: int) -> None:
        super().__init__(digits)
        self.digits = digits


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_NUMBER_DIGITS:
        raise _LongNumber(digits)
    return int(text)


def parse_document(text: str, what: str, where: str = "", *, path: str | None = None) -> Any:
    """The value of the JSON document ``text``; ``what`` and ``where`` name it in errors.

    >>> parse_document('\\ufeff[1, 2]', "the tools")
    [1, 2]
    >>> parse_document('[1] [2]', "the conversation", "c.json")
    Traceback (most recent call last):
    tokscope.inputs.text_input.InputError: the conversation c.json is not valid JSON: there is more after the value (line 1, column 5)
    >>> parse_document('[' + '9' * 5000 + ']', "the conversation", "c.json")
    Traceback (most recent call last):
    tokscope.inputs.text_input.InputError: the conversation c.json holds a number of 5,000 digits (at most 4300 can be read)
    >>> parse_document('[1,', "the tools")
    Traceback (most recent call last):
    tokscope.inputs.text_input.InputError: the tools is not valid JSON: Expecting value (line 1, column 4)
    """
    shown = f"{what} {safe_text(where)}" if where else what

    def fail(message: str) -> InputError:
        return InputError(f"{shown} {message}", kind="not-json", where=where, path=path)

    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(text, parse_int=_parse_int)
    except _LongNumber as exc:
        raise fail(f"holds a number of {exc.digits:,} digits (at most {MAX_NUMBER_DIGITS} can be read)") from None
    except RecursionError:
        raise fail("nests too deeply to read") from None
    except json.JSONDecodeError as exc:
        reason = "there is more after the value" if exc.msg == "Extra data" else exc.msg
        raise fail(f"is not valid JSON: {reason} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:  # a float or a string the decoder refuses
        raise fail(f"is not valid JSON: {exc}") from None


def read_document(source: str | None, what: str, *, limit: int = DEFAULT_MAX_BYTES) -> Any:
    """The JSON value of a file (standard input for ``None`` or ``"-"``), read as
    :func:`~tokscope.inputs.text_input.read_input` reads text, then :func:`parse_document`."""
    read = read_input(source, limit=limit, keep_head=False)
    return parse_document(read.text, what, read.where, path=read.path)
