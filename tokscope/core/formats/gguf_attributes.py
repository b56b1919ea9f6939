"""Which tokens of a GGUF file llama.cpp cuts out of the text first, and how: its token attributes.

llama.cpp gives each token attribute bits from its ``tokenizer.ggml.token_type``, then corrects
them by the token's text (``llama_vocab::impl::load`` in ``src/llama-vocab.cpp``): a token that
ends generation (``<|eot_id|>``, ``</s>`` ...) gains the control bit, and so does a
fill-in-the-middle token (``<｜fim▁begin｜>``, ``<fim_prefix>`` ...) of a role the file names no
token for; gpt-oss's message markup
becomes user-defined, Gemma 4's ``</s>`` normal, and the ``<|end|>`` of a vocabulary that also
has ``<|return|>`` and ``<|call|>`` user-defined. Its "special tokens cache" is then every token
with the control, user-defined or unknown bit; ``tokenizer_st_partition`` cuts those out of the
raw text, longest first, the control and unknown ones only with ``parse_special``.

Some models also get **strip** attributes, by name (the GGUF file holds none):

* ``LSTRIP`` on ``<mask>`` when ``tokenizer.ggml.pre`` names ``jina-v2-de``/``-es``/``-code`` or
  ``general.architecture`` names ``nomic-bert-moe``/``jina-bert-v3``;
* else ``RSTRIP`` on every token of the cache and on ``</s>``, but not on ``<unk>``, ``<s>``,
  ``<|endoftext|>``, when ``general.name`` (ASCII-lowercased) holds ``phi-3`` or ``phi3``;
* else ``LSTRIP`` on ``[MASK]`` when ``general.name`` holds ``modern-bert``.

When such a token is cut out, the whitespace before it (``LSTRIP``) or after it (``RSTRIP``) in
the same stretch of text is dropped: C's ``isspace`` in the C locale, so only the six ASCII
spaces :data:`C_SPACE` (a no-break or ideographic space stays text). :func:`matched_tokens`
gives the added tokens for :class:`~..added_tokens.added_vocabulary.AddedVocabulary`, built with
``strip=C_SPACE``.

>>> meta = {"general.name": "Phi3"}
>>> toks = ["<unk>", "<s>", "</s>", "a", "<|end|>", "<|user|>"]
>>> [(t.content, t.special, t.rstrip) for t in matched_tokens(meta, toks, [3, 3, 4, 1, 3, 3])]
[('<unk>', True, False), ('<s>', True, False), ('</s>', True, True), ('<|end|>', True, True), ('<|user|>', True, True)]
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from ..added_tokens.added_vocabulary import AddedToken

#: ``tokenizer.ggml.token_type`` values, as llama.cpp numbers them
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

#: the characters C's ``isspace`` accepts in the C locale: what llama.cpp strips beside a token
C_SPACE = frozenset(" \t\n\v\f\r")

#: tokens llama.cpp gives the control bit whatever the file says (they end generation)
END_OF_GENERATION = frozenset({
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
})
#: tokens llama.cpp always matches in text (gpt-oss's message markup)
ALWAYS_USER_DEFINED = frozenset({"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})

_LSTRIP_PRE = ("jina-v2-de", "jina-v2-es", "jina-v2-code")
_LSTRIP_ARCH = ("nomic-bert-moe", "jina-bert-v3")
_PHI3 = ("phi-3", "phi3")
_PHI3_RSTRIP = ("</s>",)
_PHI3_NO_RSTRIP = ("<unk>", "<s>", "<|endoftext|>")


def _ascii_lower(text: str) -> str:
    """``std::tolower`` byte by byte in the C locale: only A-Z change.

    >>> _ascii_lower("Phi-3 İ")
    'phi-3 İ'
    """
    return text.translate(_LOWER)


_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _string(meta: Mapping[str, Any], key: str) -> str:
    value = meta.get(key)
    return value if isinstance(value, str) else ""


def indices(tokens: Sequence[str], text: str) -> list[int]:
    """Every index of ``text`` in ``tokens`` (a C-speed scan per hit).

    >>> indices(("a", "b", "a"), "a"), indices(("a",), "z")
    ([0, 2], [])
    """
    out = []
    index = getattr(tokens, "index")
    start = 0
    while True:
        try:
            start = index(text, start)
        except ValueError:
            return out
        out.append(start)
        start += 1


def _last(tokens: Sequence[str], text: str) -> int | None:
    """The id llama.cpp's ``token_to_id`` gives ``text`` (the last token so spelled)."""
    found = indices(tokens, text)
    return found[-1] if found else None


#: the fill-in-the-middle roles: the keys that name each one's token (the deprecated one too),
#: and the texts llama.cpp looks for when none does, in its order
FILL_IN_THE_MIDDLE: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id"),
     ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>",
      "<|prefix|>")),
    (("tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id"),
     ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>",
      "<|suffix|>")),
    (("tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id"),
     ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>",
      "<|middle|>")),
    (("tokenizer.ggml.fim_pad_token_id",), ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]")),
    (("tokenizer.ggml.fim_rep_token_id",), ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>")),
    (("tokenizer.ggml.fim_sep_token_id",), ("<|file_sep|>",)),
)


def _fill_in_the_middle(meta: Mapping[str, Any], tokens: Sequence[str], named: Any) -> list[int]:
    """The tokens llama.cpp gives the control bit as fill-in-the-middle tokens: for each role the
    file names no token for (a key in range), the token it finds by text. Of several candidates
    llama.cpp takes the first its hash map yields, which no file states; the first in its list is
    taken here.

    >>> _fill_in_the_middle({}, ["a", "<PRE>", "<｜fim▁begin｜>"], {"a", "<PRE>", "<｜fim▁begin｜>"})
    [2]
    >>> _fill_in_the_middle({"tokenizer.ggml.fim_pre_token_id": 1}, ["a", "<PRE>"], {"a", "<PRE>"})
    []
    """
    n = len(tokens)
    out = []
    for keys, texts in FILL_IN_THE_MIDDLE:
        if any(isinstance(meta.get(k), int) and not isinstance(meta.get(k), bool) and 0 <= meta[k] < n for k in keys):
            continue
        for text in texts:
            if text in named:
                found = _last(tokens, text)
                if found is not None:
                    out.append(found)
                break
    return out


#: every text :func:`special_kinds` looks for by name
_NAMED_TEXTS = END_OF_GENERATION | ALWAYS_USER_DEFINED | frozenset(t for _, texts in FILL_IN_THE_MIDDLE for t in texts)


def special_kinds(tokens: Sequence[str], types: Sequence[int], meta: Mapping[str, Any] | None = None) -> dict[int, bool]:
    """llama.cpp's special-tokens cache after its corrections by text: ``{id: special}``, where
    ``special`` is whether the token has the control or unknown bit (matched only with
    ``parse_special``), else it is user-defined (always matched). With ``meta`` (the file's
    metadata), the fill-in-the-middle tokens the file names no id for gain the control bit too.

    >>> special_kinds(["<unk>", "</s>", "x", "<|start|>"], [2, 4, 1, 3])
    {0: True, 1: True, 3: False}
    >>> special_kinds(["<unk>", "<fim_prefix>"], [2, 4], {})
    {0: True, 1: True}
    """
    kinds = {i: kind != USER_DEFINED for i, kind in _special_types(types)}
    named = _NAMED_TEXTS.intersection(tokens)  # the texts below the vocabulary holds: one pass, no set of it
    if meta is not None:
        for i in _fill_in_the_middle(meta, tokens, named):
            kinds[i] = True  # attr |= CONTROL
    present = END_OF_GENERATION.intersection(named)
    for text in present:
        for i in indices(tokens, text):
            kinds[i] = True  # attr |= CONTROL
    for text in ALWAYS_USER_DEFINED.intersection(named):
        for i in indices(tokens, text):
            kinds[i] = False  # attr = USER_DEFINED
    if {"<|return|>", "<|call|>", "<|end|>"} <= present or {"<|calls|>", "<|flush|>", "<|end|>"} <= present:
        for i in indices(tokens, "<|end|>"):
            kinds[i] = False
    if {"<|tool_response>", "</s>"} <= present:  # Gemma 4's </s> is plain text (attr = NORMAL)
        for i in indices(tokens, "</s>"):
            kinds.pop(i, None)
    return dict(sorted(kinds.items()))


#: a byte that is an unknown, control or user-defined type
_SPECIAL_TYPE = re.compile(b"[\x02\x03\x04]")


def _special_types(types: Sequence[int]) -> list[tuple[int, int]]:
    """``(index, type)`` of every unknown, control or user-defined type, found at C speed.

    >>> _special_types([1, 3, 1, 4, 300, 2])
    [(1, 3), (3, 4), (5, 2)]
    """
    try:
        blob = array("b", types).tobytes()
    except (OverflowError, TypeError):  # a type beyond a byte (undefined in llama.cpp)
        return [(i, k) for i, k in enumerate(types) if k in (UNKNOWN, CONTROL, USER_DEFINED)]
    return [(m.start(), blob[m.start()]) for m in _SPECIAL_TYPE.finditer(blob)]


def strip_flags(meta: Mapping[str, Any], tokens: Sequence[str], cached: Sequence[int]) -> dict[int, tuple[bool, bool]]:
    """``{id: (lstrip, rstrip)}`` for the tokens llama.cpp gives a strip attribute, by the model's
    names (see the module); ``cached`` is its special-tokens cache. A token the rules name that the
    vocabulary lacks is skipped (llama.cpp warns for a missing mask and fails to load a Phi-3
    without ``</s>``).

    >>> strip_flags({"general.architecture": "nomic-bert-moe"}, ["<s>", "<mask>"], [0, 1])
    {1: (True, False)}
    >>> strip_flags({"general.name": "modern-bert-base"}, ["[MASK]"], [0])
    {0: (True, False)}
    >>> strip_flags({"general.name": "Llama"}, ["<s>"], [0])
    {}
    """
    pre = _string(meta, "tokenizer.ggml.pre")
    arch = _string(meta, "general.architecture")
    name = _ascii_lower(_string(meta, "general.name"))
    flags: dict[int, tuple[bool, bool]] = {}
    if any(p in pre for p in _LSTRIP_PRE) or any(a in arch for a in _LSTRIP_ARCH):
        mask = _last(tokens, "<mask>")
        if mask is not None:
            flags[mask] = (True, False)
    elif any(p in name for p in _PHI3):
        rstrip = {i: True for i in cached}
        for text in _PHI3_RSTRIP:
            i = _last(tokens, text)
            if i is not None:
                rstrip[i] = True
        for text in _PHI3_NO_RSTRIP:
            i = _last(tokens, text)
            if i is not None:
                rstrip[i] = False
        flags = {i: (False, True) for i, on in rstrip.items() if on}
    elif "modern-bert" in name:
        mask = _last(tokens, "[MASK]")
        if mask is not None:
            flags[mask] = (True, False)
    return flags


def matched_tokens(meta: Mapping[str, Any], tokens: Sequence[str], types: Sequence[int],
                   contents: Sequence[str] | None = None) -> list[AddedToken]:
    """The added tokens of a GGUF tokenizer as llama.cpp partitions text: its special-tokens cache
    (:func:`special_kinds`) with its strip attributes (:func:`strip_flags`), matched on the raw
    text; ``contents`` spells each token in the text where that differs from ``tokens``
    (WordPiece's ``vocab.txt`` spelling)."""
    kinds = special_kinds(tokens, types, meta)
    flags = strip_flags(meta, tokens, list(kinds))
    spelled = tokens if contents is None else contents
    out = []
    for i, special in kinds.items():
        lstrip, rstrip = flags.get(i, (False, False))
        out.append(AddedToken(spelled[i], i, special=special, normalized=False, lstrip=lstrip, rstrip=rstrip))
    return out
