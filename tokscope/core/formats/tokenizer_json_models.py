"""The models of a ``tokenizer.json``: :func:`from_json` reads its ``"model"`` object.

Read the file with :func:`load_json` (or ``json.loads(text, parse_float=hf_json_float)``), not a
plain ``json.loads``: Hugging Face's JSON reader turns a decimal number into a float by a fast
method that is not always correctly rounded, so about one Unigram score in twenty is one unit in
the last place away from what Python reads, enough to flip a segmentation where two paths tie.
:func:`hf_json_float` does exactly what that reader does.

>>> model = from_json(load_json('{"type": "WordLevel", "vocab": {"hi": 0, "<unk>": 1}, "unk_token": "<unk>"}'))
>>> model.kind, model.tokenize("hi")
('wordlevel', [(0, 0, 2)])
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from ..models import bpe as bpe_merges
from ..models import unigram
from ..models import wordlevel
from ..models import wordpiece
from ..models.bpe import BPE
from ..text.errors import TokenizerFileError, UnsupportedComponentError
from ..models.unigram import Unigram
from ..models.wordlevel import WordLevel
from ..models.wordpiece import WordPiece

HFModel = BPE | WordPiece | Unigram | WordLevel

#: the reader of each model kind a tokenizer.json may name ("model": {"type": ...}): a new kind is a
#: module in core/models/ and a line here
MODEL_READERS = {
    "BPE": bpe_merges.from_json,
    "WordPiece": wordpiece.from_json,
    "WordLevel": wordlevel.from_json,
    "Unigram": unigram.from_json,
}


_U64 = 2**64 - 1
_POW10 = tuple(float(f"1e{k}") for k in range(309))


#: a JSON number as the JSON reader hands it over: sign, integer digits, fraction digits, exponent
_match_number = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]+))?").fullmatch
#: significands of up to this many digits always fit in 64 bits (10**19 - 1 < 2**64 - 1)
_FIT_DIGITS = 19


def hf_json_float(text: str) -> float:
    """The float Hugging Face's ``tokenizers`` reads from the JSON number ``text`` (serde_json
    without its ``float_roundtrip`` option): the digits as a 64-bit integer (digits past its range
    dropped), converted to a float, then multiplied or divided once by a power of ten.

    >>> hf_json_float("-7.3218854949502745"), float("-7.3218854949502745")
    (-7.321885494950275, -7.3218854949502745)
    >>> hf_json_float("0.5"), hf_json_float("-1e-3"), hf_json_float("12")
    (0.5, -0.001, 12.0)

    A number of at most 19 digits (every score a file holds) is cut by one regular expression and
    its digits read by ``int``; a longer one goes digit by digit (:func:`_digit_loop_float`).
    """
    m = _match_number(text)
    if m is None:
        raise ValueError(f"not a JSON number: {text!r}")
    sign, whole, frac, exp = m.groups()
    if frac is None:
        frac = ""
    if len(whole) + len(frac) > _FIT_DIGITS:
        return _digit_loop_float(text)
    if exp is None:  # the usual score: an int over a float converts the int first, then divides once
        value = int(whole + frac) / _POW10[len(frac)]
        return -value if sign else value
    return _scaled(float(int(whole + frac)), int(exp) - len(frac), not sign, text)


def _digit_loop_float(text: str) -> float:
    """:func:`hf_json_float` digit by digit, as serde_json reads (the digits past 64 bits dropped).

    >>> _digit_loop_float("123456789012345678901234.5"), float("123456789012345678901234.5")
    (1.2345678901234567e+23, 1.2345678901234569e+23)
    """
    s = text
    n = len(s)
    i = 0
    positive = True
    if i < n and s[i] == "-":
        positive = False
        i += 1
    significand = 0
    exponent = 0
    limit, last = divmod(_U64, 10)
    while i < n and "0" <= s[i] <= "9":
        digit = ord(s[i]) - 48
        if significand > limit or (significand == limit and digit > last):
            while i < n and "0" <= s[i] <= "9":  # further integer digits only scale
                exponent += 1
                i += 1
            break
        significand = significand * 10 + digit
        i += 1
    if i < n and s[i] == ".":
        i += 1
        overflow = False
        while i < n and "0" <= s[i] <= "9":
            digit = ord(s[i]) - 48
            if overflow or significand > limit or (significand == limit and digit > last):
                overflow = True  # further decimal digits are ignored
            else:
                significand = significand * 10 + digit
                exponent -= 1
            i += 1
    if i < n and s[i] in "eE":
        i += 1
        sign = 1
        if i < n and s[i] in "+-":
            sign = -1 if s[i] == "-" else 1
            i += 1
        if i >= n or not s[i:].isdigit():
            raise ValueError(f"not a JSON number: {text!r}")
        exponent += sign * int(s[i:])
        i = n
    if i != n:
        raise ValueError(f"not a JSON number: {text!r}")
    return _scaled(float(significand), exponent, positive, text)


def _scaled(value: float, exponent: int, positive: bool, text: str) -> float:
    """``value`` times ten to ``exponent`` as serde_json scales it (once by a power of ten when it
    can, else by 1e308 steps down; too large is an error naming ``text``).

    >>> _scaled(5.0, -1, False, "-0.5")
    -0.5
    >>> _scaled(3.0, 400, True, "3e400")
    Traceback (most recent call last):
    ...
    ValueError: number out of range: '3e400'
    """
    while True:
        k = -exponent if exponent < 0 else exponent
        if k < len(_POW10):
            if exponent >= 0:
                value *= _POW10[k]
                if value == float("inf"):
                    raise ValueError(f"number out of range: {text!r}")
            else:
                value /= _POW10[k]
            break
        if value == 0.0:
            break
        if exponent >= 0:
            raise ValueError(f"number out of range: {text!r}")
        value /= 1e308
        exponent += 308
    return value if positive else -value


def _float_reader() -> Any:
    """What the JSON reader calls for each float: :func:`hf_json_float`, compiled for the usual
    score (``hf_json_float`` of ``_tokscope_merge``, which hands any other number to the Python
    one) when installed: a Unigram file's thousands of scores were half of its JSON read.

    >>> json_float("-7.3218854949502745"), json_float("1e-3")
    (-7.321885494950275, 0.001)
    """
    try:
        import _tokscope_merge
    except ImportError:
        return hf_json_float
    if getattr(_tokscope_merge, "HFFLOAT_ABI", None) != 1:
        return hf_json_float
    return functools.partial(_tokscope_merge.hf_json_float, hf_json_float)


#: the ``parse_float`` of every read of a ``tokenizer.json`` (:func:`_float_reader`)
json_float = _float_reader()


def load_json(text: str | bytes) -> Any:
    """A ``tokenizer.json`` read as Hugging Face reads it (its floats by :func:`hf_json_float`);
    a file that is not JSON is a :class:`TokenizerFileError`."""
    try:
        return json.loads(text, parse_float=json_float)
    except (ValueError, RecursionError) as exc:
        raise TokenizerFileError(f"the tokenizer file is not valid JSON: {exc}") from None


def _legacy_type(obj: Mapping[str, Any]) -> str:
    """The model type of an old file whose model has no ``"type"``, as Hugging Face guesses it
    (it tries BPE, WordPiece, WordLevel, then Unigram)."""
    if "merges" in obj:
        return "BPE"
    if isinstance(obj.get("vocab"), list):
        return "Unigram"
    if "continuing_subword_prefix" in obj or "max_input_chars_per_word" in obj:
        return "WordPiece"
    return "WordLevel"


def from_json(obj: Any) -> HFModel:
    """The model described by the ``"model"`` object of a ``tokenizer.json``: BPE, WordPiece,
    Unigram or WordLevel. Another type is an :class:`UnsupportedComponentError`.

    >>> from_json({"type": "Mystery"})
    Traceback (most recent call last):
    ...
    tokscope.core.text.errors.UnsupportedComponentError: unsupported model 'Mystery' in this tokenizer file
    """
    if not isinstance(obj, Mapping):
        raise TokenizerFileError("the tokenizer file's model is not an object")
    kind = obj.get("type")
    if kind is None:
        kind = _legacy_type(obj)
    if not isinstance(kind, str):
        raise TokenizerFileError(f"model type {kind!r} is not a string")
    reader = MODEL_READERS.get(kind)
    if reader is None:
        raise UnsupportedComponentError("model", kind)
    return reader(obj)
