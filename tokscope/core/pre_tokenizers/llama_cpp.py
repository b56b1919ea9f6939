r"""llama.cpp's pre-tokenizers for byte-level BPE, chosen by a GGUF file's ``tokenizer.ggml.pre``.

A GGUF file names its pre-tokenizer (``llama-bpe``, ``qwen2``, ``deepseek-coder`` ...) instead of
spelling it out; llama.cpp's ``src/llama-vocab.cpp`` maps each name to a *kind* and each kind to
a list of regexes. The text is cut by the first regex (matches and the text between them both
kept, Hugging Face's ``isolated`` Split), each piece cut again by the next regex, and so on; the
pieces are then put in GPT-2's byte-level stand-ins. :func:`lookup` gives a name's
:class:`LlamaCppPre` (its regexes and the flags llama.cpp sets with it) and :func:`pre_tokenizer`
the pipeline stage, built from :class:`~.Split` and :class:`~.ByteLevel`, the regexes compiled by
the Oniguruma translation of :mod:`..patterns.onig`.

A file without a name, or named ``default``, gets llama.cpp's default regexes, which were written
for no model in particular; :attr:`LlamaCppPre.warning` says so, for the user to see. A name
llama.cpp does not know, or a kind it splits with hand-written code rather than regexes, is
refused by name.

>>> pre = lookup("qwen2")
>>> pre.kind, pre.warning
('qwen2', None)
>>> pre_tokenizer(pre).split_str("Hello world's 123")
['Hello', 'Ġworld', "'s", 'Ġ', '1', '2', '3']
>>> lookup(None).warning
"default pre-tokenizer: this GGUF names no pre-tokenizer, so llama.cpp splits it with its default regexes, which may differ from the original model's"
>>> lookup("mystery")
Traceback (most recent call last):
...
tokscope.core.text.errors.UnsupportedComponentError: unsupported pre-tokenizer 'mystery' in this tokenizer file (llama.cpp does not know this tokenizer.ggml.pre name)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..text.errors import UnsupportedComponentError
from . import ByteLevel, Sequence, Split

# ----- the regexes, by kind --------------------------------------------------------------------------

#: English contractions spelled without a case-insensitive group (llama.cpp's spelling of
#: ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``)
_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#: GPT-2's pattern without its final ``|\s+``
_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
#: the tail most newer patterns share
_TAIL = r"\s*[\r\n]+|\s+(?!\S)|\s+"
_LLAMA3 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|" + _TAIL
_QWEN2 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|" + _TAIL
#: DeepSeek V3's main pattern (ASCII punctuation then letters; letters with marks; symbols)
_DEEPSEEK3 = ("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
              "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+")
_CJK_KANA = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
_CJK_HANGUL = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
#: the letter classes of GPT-4o-style patterns, as llama.cpp spells them (a letter that is not
#: ASCII lower case, then letters that are not ASCII upper case)
_UPPER, _LOWER = r"((?=[\p{L}])([^a-z]))", r"((?=[\p{L}])([^A-Z]))"
_MARKED_UPPER, _MARKED_LOWER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"


def _cased(upper: str, lower: str, after: str = "") -> str:
    """A word of letters in GPT-4o's two shapes (upper-case letters then lower-case ones, or the
    reverse), each with an optional leading non-letter and ``after`` it."""
    lead = r"[^\r\n\p{L}\p{N}]?"
    return f"{lead}{upper}*{lower}+{after}|{lead}{upper}+{lower}*{after}"


_OPT = "(?:" + _CONTRACTIONS[3:-1] + ")?"
_BLOOM = r" ?[^(\s|.,!?…。，、।۔،)]+"
_DEEPSEEK_LLM_LETTERS = (
    "[A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377"
    "\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f"
    "\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
    "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d"
    "\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb"
    "\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128"
    "\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4"
    "\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf"
    "\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3"
    "\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+")

#: each kind's regexes, applied in turn
REGEXES: dict[str, tuple[str, ...]] = {
    "default": (r"[\p{P}\$\+<=>\^~\|]+", _GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"),
    "llama3": (_LLAMA3,),
    "jais2": (_LLAMA3.replace(r"|\s+(?!\S)|\s+", "") .replace(r"\s*[\r\n]+", r"\s*[\r\n]+|" + "|".join(
        rf"\s{{{n}}}(?!\S)" for n in (512, 256, 128, 64, 32, 16, 8, 4)) + r"|\s{1,2}(?!\S)|\s{1}"),),
    "deepseek-llm": ("[\r\n]", r"\s?" + _DEEPSEEK_LLM_LETTERS, "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+", r"\s+$",
                     _CJK_HANGUL, r"\p{N}+"),
    "deepseek3": (r"\p{N}{1,3}", _CJK_KANA, _DEEPSEEK3),
    "spark2_5": (r"\p{N}{1,3}", _CJK_KANA, _DEEPSEEK3.replace("[\r\n]*|\\s*[\r\n]+|", "|[\r\n]|"),
                 r"\p{N}"),
    "youtu": (("[\uac00-\ud7a3\u3131-\u318e]+|[\uff01\u2026\u201c\u201d\u2018\u2019\u2014\uff1a\uff1b\uff0c\u3001-\u303f"
               "\ufe30-\ufe4f]+|[\u3105-\u312f]+|") + _CJK_KANA,
              _cased(_MARKED_UPPER, _MARKED_LOWER, _OPT) + r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|" + _TAIL),
    "deepseek-coder": ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK_HANGUL, r"\p{N}"),
    "falcon": (r"[\p{P}\$\+<=>\^~\|`]+", _GPT2, r"[0-9][0-9][0-9]"),
    "starcoder": (r"\p{N}", _GPT2),
    "gpt2": (_GPT2,),
    "qwen2": (_QWEN2,),
    "qwen35": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|" + _TAIL,),
    "bloom": (_BLOOM,),
    "chatglm4": (_LLAMA3,),
    "viking": (_BLOOM, r"\p{N}"),
    "tekken": (_cased(_UPPER, _LOWER) + r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|" + _TAIL,),
    "chameleon": ("<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", r"([\t\n]|    |  )", r"\p{N}",
                  r"[\p{P}!-/:-@\[-`{-~]", _GPT2),
    "gpt4o": (_cased(_UPPER, _LOWER, _OPT) + r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|" + _TAIL,),
    "granite-emb-multi": ((_cased(_UPPER, _LOWER, _OPT) + r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|" + _TAIL)
                          .replace(r"(?=[\p{L}])", r"(?=[\p{L}\p{M}])"),),
    "tiny-aya": (r"\d{1,3}(?=(?:\d{3})*\b)",
                 _cased(_MARKED_UPPER, _MARKED_LOWER, _OPT) + r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|" + _TAIL),
    "superbpe": (r"\p{N}+", r"(?=(\d{3})+(?!\d))"),
    "bailingmoe": (r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",),
    "seed-coder": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|" + _TAIL,),
    "ufakzeka": (_QWEN2[len(_CONTRACTIONS) + 1:],),
    "laguna": (r"[^\n]+|[\n]+", _QWEN2),
    "exaone-moe": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+",),
    "minicpm5": (r"\p{N}{1,3}", _LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}+")),
    # SentencePiece-style BPE (spaces already ``▁``): lines and runs of newlines, merged on raw UTF-8
    "gemma4": (r"[^\n]+|[\n]+",),
}

#: kinds llama.cpp cuts with hand-written code, or BPE on raw UTF-8 with rules of their own that
#: no test vector checks here: refused by name rather than approximated
UNSUPPORTED: dict[str, str] = {
    "kimi-k2": "llama.cpp splits it with hand-written code for Han characters",
    "afmoe": "llama.cpp groups its digits with hand-written code",
    "sarvam-moe": "SentencePiece-style BPE on raw UTF-8 with rules of its own, not checked against llama.cpp",
    "whitespace": "BPE on raw UTF-8, not byte-level",
}


@dataclass(frozen=True, slots=True)
class LlamaCppPre:
    """What a ``tokenizer.ggml.pre`` name makes llama.cpp do: the ``kind`` of split (a key of
    :data:`REGEXES`) and the flags it sets with it."""

    name: str | None
    kind: str
    #: a word already in the vocabulary is one token, before any merge (Llama 3, Tekken ...)
    ignore_merges: bool = False
    #: llama.cpp's default for adding BOS (None: the model type's default; the file's
    #: ``tokenizer.ggml.add_bos_token`` wins over either)
    add_bos: bool | None = None
    #: llama.cpp drops the BOS id (ChatGLM)
    no_bos: bool = False
    #: llama.cpp adds BOS even where the file's ``tokenizer.ggml.add_bos_token`` says not to (Gemma 4)
    force_bos: bool = False
    #: the pieces are put in GPT-2's byte-level stand-ins; False: BPE runs on the text itself, a
    #: character missing from the vocabulary falling back to ``<0xE2>``-style byte tokens (Gemma 4)
    byte_encode: bool = True
    #: spaces become ``▁`` before the split, as SentencePiece writes them (Gemma 4)
    escape_whitespaces: bool = False
    #: a word made only of newlines that is itself a token is that token, before any merge (Gemma 4)
    whole_newline_runs: bool = False

    @property
    def regexes(self) -> tuple[str, ...]:
        return REGEXES[self.kind]

    @property
    def warning(self) -> str | None:
        """What the user should know about this choice (a missing or ``default`` name), or None."""
        if self.kind != "default":
            return None
        said = "names no pre-tokenizer" if self.name is None else f"says pre-tokenizer {self.name!r}"
        return (f"default pre-tokenizer: this GGUF {said}, so llama.cpp splits it with its default regexes, "
                f"which may differ from the original model's")


def _names() -> dict[str, LlamaCppPre]:
    table: dict[str, LlamaCppPre] = {}

    def add(kind: str, *names: str, **flags: bool) -> None:
        for name in names:
            table[name] = LlamaCppPre(name, kind, **flags)

    add("default", "default")
    add("minicpm5", "minicpm5", ignore_merges=True)
    add("llama3", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano", ignore_merges=True, add_bos=True)
    add("deepseek-llm", "deepseek-llm")
    add("deepseek-coder", "deepseek-coder")
    add("deepseek3", "deepseek-v3", "hunyuan-dense", "hy_v4", "joyai-llm")
    add("spark2_5", "spark2_5")
    add("youtu", "youtu", ignore_merges=True)
    add("falcon", "falcon")
    add("gpt2", "mpt", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
        "mellum", "modern-bert", "olmo", "jais", "exaone4", "trillion", "granite-docling")
    add("gpt2", "jina-v1-en", "jina-v2-code", "roberta-bpe")  # llama.cpp's add_sep is for embeddings only
    add("starcoder", "starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2")
    add("jais2", "jais-2")
    add("qwen2", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open")
    add("qwen35", "qwen35")
    add("llama3", "dbrx", "smaug-bpe")
    add("bloom", "poro-chat", "bloom", "gpt3-finnish")
    add("chatglm4", "chatglm-bpe", no_bos=True)
    add("chatglm4", "glm4", "glm5", no_bos=True, ignore_merges=True)
    add("viking", "viking")
    add("tekken", "tekken", ignore_merges=True, add_bos=True)
    add("chameleon", "chameleon", add_bos=True)
    add("gpt4o", "gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2")
    add("granite-emb-multi", "granite-embed-multi-97m", ignore_merges=True)
    add("tiny-aya", "tiny_aya", "cohere2moe")
    add("superbpe", "superbpe")
    add("bailingmoe", "bailingmoe", "bailingmoe2", "llada-moe")
    add("seed-coder", "seed-coder")
    add("ufakzeka", "ufakzeka")
    add("qwen2", "grok-2")
    add("laguna", "laguna")
    add("exaone-moe", "exaone-moe")
    add("gemma4", "gemma4", "granite-embed-multi-311m", add_bos=True, force_bos=True, byte_encode=False,
        escape_whitespaces=True, whole_newline_runs=True)
    return table


#: every ``tokenizer.ggml.pre`` name llama.cpp knows for byte-level BPE, with what it selects
NAMES: dict[str, LlamaCppPre] = _names()
#: names of kinds tokscope refuses (see :data:`UNSUPPORTED`)
_UNSUPPORTED_NAMES = {"kimi-k2": "kimi-k2", "afmoe": "afmoe", "sarvam-moe": "sarvam-moe", "whitespace": "whitespace"}


def lookup(name: str | None) -> LlamaCppPre:
    """What llama.cpp does for the ``tokenizer.ggml.pre`` name ``name`` (None or empty: the file
    names none, and llama.cpp uses its default). An unknown name, or one tokscope cannot
    reproduce, is an :class:`UnsupportedComponentError` naming it."""
    if not name:
        return LlamaCppPre(None, "default")
    found = NAMES.get(name)
    if found is not None:
        return found
    if name in _UNSUPPORTED_NAMES:
        raise UnsupportedComponentError("pre-tokenizer", name, UNSUPPORTED[_UNSUPPORTED_NAMES[name]])
    raise UnsupportedComponentError("pre-tokenizer", name, "llama.cpp does not know this tokenizer.ggml.pre name")


def pre_tokenizer(pre: LlamaCppPre) -> Sequence:
    """The pipeline stage for ``pre``: each regex an ``isolated`` split, then byte-level stand-ins
    (unless :attr:`LlamaCppPre.byte_encode` is off). ``▁`` for spaces (``escape_whitespaces``) is
    the normalizer's job, before this stage.

    >>> pre_tokenizer(lookup("gemma4")).split_str("▁a▁b\\n\\n c")
    ['▁a▁b', '\\n\\n', ' c']
    """
    stages: list = [Split(pattern, "isolated", regex=True) for pattern in pre.regexes]
    if pre.byte_encode:
        stages.append(ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False))
    return Sequence(stages)
