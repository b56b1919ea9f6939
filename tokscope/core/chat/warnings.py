"""The warnings a chat count carries: special-token spellings in content, control strings that
are not special tokens here, a doubled BOS."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .conversation import Conversation
from .encoding import Encoder, accepts
from .formats import CHATML_ASSUMED_IDS
from .parts import Rendering, special_regex, who
from .results import ChatWarning, FormatToken
from ..text.errors import TokscopeError


def _difference(a: int, b: int) -> str:
    """``b`` against ``a`` as a signed difference.

    >>> _difference(10, 7), _difference(3, 5), _difference(2, 2)
    ('3 fewer', '2 more', 'the same number')
    """
    if a == b:
        return "the same number"
    return f"{a - b} fewer" if b < a else f"{b - a} more"


def injection_warnings(enc: Encoder, r: Rendering, fmt_name: str, conv: Conversation,
                       content_specials: bool = False) -> list[ChatWarning]:
    """Message text (or a tool definition) that spells a special token or a control string of the
    format. By default it is counted as text; the warning says how many tokens reading it as the
    special token (``content_specials``, transformers' default) gives, and the other way round."""
    out = []
    special_re = special_regex(enc.specials)
    lookalike_re = special_regex([c for c in r.controls if c not in enc.specials and c not in r.assumed])
    for index, what, text in r.user_strings:
        where = who(conv, index) if index is not None else "a tool definition"
        if special_re is not None:
            spelled = sorted({x.group() for x in special_re.finditer(text)})
            if spelled:
                as_text = len(enc.ordinary(text))
                try:
                    as_special = len(enc.tok.encode(text, allowed_special="all", disallowed_special=(), **enc.extra))
                except TokscopeError:
                    as_special = as_text
                names = ", ".join(repr(s) for s in spelled[:3]) + (" and more" if len(spelled) > 3 else "")
                plural = "s" if len(spelled) > 1 else ""
                if content_specials:
                    message = (
                        f"{where}: {what} spells the special token{plural} {names}; counted as the control "
                        f"token{plural} ({as_special} tokens), as apply_chat_template then encode reads it: the "
                        f"model sees the control token itself; as text it would be {as_text} tokens "
                        f"({_difference(as_special, as_text)})")
                else:
                    harmony_note = "; openai-harmony does the same" if fmt_name == "harmony" else ""
                    message = (
                        f"{where}: {what} spells the special token{plural} {names}; tokscope counts it as text "
                        f"({as_text} tokens){harmony_note}; a runtime that reads special tokens in text "
                        f"(apply_chat_template's default, tiktoken with allowed_special='all'; tokscope's "
                        f"content_specials) would see {as_special} tokens ({_difference(as_text, as_special)}) and "
                        f"the control token itself; tiktoken's default refuses such text")
                out.append(ChatWarning("special-in-content", message, index))
        if lookalike_re is not None:
            spelled = sorted({x.group() for x in lookalike_re.finditer(text)})
            if spelled:
                out.append(ChatWarning(
                    "format-lookalike",
                    f"{where}: {what} spells {', '.join(repr(s) for s in spelled[:3])}, which this format writes as "
                    "plain text here: the model cannot tell it from the template's own", index))
    return out


def not_special_warnings(report: Mapping[str, FormatToken], tokenizer_name: str, fmt_name: str) -> list[ChatWarning]:
    out = []
    assumed = [t for t in report.values() if t.assumed and t.uses]
    if assumed:
        out.append(ChatWarning(
            "approximate", f"{', '.join(repr(t.text) for t in assumed)} counted as the single ids web token counters "
            f"assume ({', '.join(str(t.id) for t in assumed)}); they are not in {tokenizer_name}'s published file"))
    missing = [t for t in report.values() if t.id is None and t.uses]
    if not missing:
        return out
    listed = ", ".join(f"{t.text!r} ({t.text_tokens} tokens)" for t in missing[:6])
    hint = ""
    if fmt_name == "chatml" and tokenizer_name in CHATML_ASSUMED_IDS:
        hint = "; OpenAI's servers use private ids for them (web counters assume single ids: ChatMLFormat(assume_ids=True))"
    out.append(ChatWarning(
        "not-special", f"{listed} {'is' if len(missing) == 1 else 'are'} not special tokens of {tokenizer_name}: "
        f"counted as the text they are{hint}"))
    return out


def _tokenizer_adds_bos(tokenizer: Any, bos_id: int) -> bool | None:
    """Whether the tokenizer's own encoding adds ``bos_id`` in front (``None``: cannot tell)."""
    flag = getattr(tokenizer, "add_bos_token", None)
    if isinstance(flag, bool):
        return flag
    template = getattr(tokenizer, "template", None)
    if callable(template):  # the template's own ends: no truncation or padding a file may set
        try:
            prefix, _ = template()
        except Exception:  # noqa: BLE001 - a probe only
            return None
        return bool(prefix) and prefix[0] == bos_id
    encode = getattr(tokenizer, "encode", None)
    if encode is None or not accepts(encode, "add_special_tokens"):
        return None
    try:
        ids = encode("a", add_special_tokens=True)
    except Exception:  # noqa: BLE001 - a probe only
        return None
    return bool(ids) and ids[0] == bos_id


def bos_warnings(enc: Encoder, r: Rendering, ids: Sequence[int]) -> list[ChatWarning]:
    bos = r.bos
    if not bos or bos not in enc.specials or not ids:
        return []
    bos_id = enc.specials[bos]
    out = []
    if len(ids) > 1 and ids[0] == bos_id and ids[1] == bos_id:
        out.append(ChatWarning("double-bos", f"the rendering starts with {bos!r} twice"))
    elif ids[0] == bos_id:
        adds = r.adds_bos if r.adds_bos is not None else _tokenizer_adds_bos(enc.tok, bos_id)
        if adds:
            out.append(ChatWarning(
                "double-bos", f"the template writes {bos!r} and the tokenizer adds one too when it adds special "
                "tokens: encode the rendered text without them (as apply_chat_template does) or the model sees two"))
    return out
