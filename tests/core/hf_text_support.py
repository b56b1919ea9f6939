"""Shared helpers of the HF text-stage tests: the ``tokenizers`` oracle, text strategies, samples.

The oracle reads HF's alignment through ``PreTokenizedString``: after a normalizer, each
normalized character is sliced out on its own, and ``get_splits`` gives its original span. Offsets
are taken as bytes and converted here (``get_splits`` with char offsets leaves a span that ends at
the end of the text in bytes, an HF quirk this would otherwise trip over).
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from tokenizers import PreTokenizedString

from tokscope.core.patterns.tiktoken_syntax import _pinned_table

LONG = os.environ.get("TOKSCOPE_FUZZ") == "long"
EXAMPLES = int(os.environ.get("TOKSCOPE_FUZZ_EXAMPLES", 20_000 if LONG else 30))
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=not LONG, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def sample_texts() -> dict[str, str]:
    """Every file of ``samples/`` (the languages included), by relative path."""
    out = {}
    for p in sorted(SAMPLES.rglob("*")):
        if p.is_file() and p.suffix in (".txt", ".py", ".json", ".md"):
            out[str(p.relative_to(SAMPLES))] = p.read_text(encoding="utf-8")
    return out


# ----- text ---------------------------------------------------------------------------------------

_MOVED = sorted(_pinned_table())[::7]
TRICKY = [
    " ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x85", "\u2028", "\u2029", "\u3000", "\xa0",
    "\u1680", "\u200b", "\u200d", "\ufeff", "\x00", "\x01", "\x1c", "\x7f", "\ufffd", "\ufffe", "\uffff",
    "\U0010fffe", "\ue000", "e\u0301", "a\u0308\u0323", "\u0301", "\u0345", "\u0f73", "\u1100\u1161\u11a8",
    "한국어", "가", "中文字", "\u3400", "\U00020000", "\uf900", "ｈｅｌｌｏ", "ﬁ", "ﬃ", "ſ", "ß", "ẞ", "İ",
    "ı", "ΣΑΣ", "Σ", "ǅ", "Ⅻ", "½", "²", "١٢٣", "٣", "१२३", "০", "๓", "𝟘", "１２３", "0", "42", "3.14",
    "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "👍🏽", "🇫🇷", "1\ufe0f\u20e3", "क्ष", "क्षि", "\u0915\u093c",
    "שָׁלוֹם", "مَرْحَبًا", "\u0600" "1", "ไทย", "Ελληνικά", "Привет", "'s", "'S", "'ll", "'ve", "'re", "'d", "’s",
    "...", "!?", "--", "—", "«»", "“”", "¿", "¡", "、", "。", "，", "（", "）", "<s>", "</s>", "[CLS]", "[SEP]",
    "<|endoftext|>", "<unk>", "▁", "▁▁", "Ġ", "Hello", "HELLO", "hello world", "don't", "x86_64", "a-b", "a_b",
    "\u0130stanbul", "\u00c5", "\u212b", "\u1e9b\u0323", "\u0390", "\u1f80", "\u0344", "\U0001d15e",
    "\U00011938", "\U00011935\U00011930", "\u32ff", "\ua7f2", "\U000107bb", "\U00016ea0", "\u0295",
]
TRICKY += [chr(c) for c in _MOVED[:60]]

pieces_st = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=8),
    st.text(st.characters(codec="utf-8", categories=("L", "M", "N", "Zs")), max_size=6),
    st.sampled_from(TRICKY),
    st.text(alphabet=" \t\r\n\x0b\x0c\x85\u2028\u3000\xa0", min_size=1, max_size=5),
    st.text(alphabet="0123456789٠١٢३४५", min_size=1, max_size=6),
    st.text(alphabet="aAeEsStTlLdDmMrRvV'’ſ ", min_size=1, max_size=8),
)
texts = st.lists(pieces_st, max_size=16).map("".join)


# ----- the oracle -----------------------------------------------------------------------------------


def byte_to_char(text: str):
    """``byte offset -> char offset`` for every character boundary of ``text``."""
    table = {}
    b = 0
    for i, c in enumerate(text):
        table[b] = i
        b += len(c.encode("utf-8"))
    table[b] = len(text)
    return table


def hf_alignment(hf_normalizer, text: str) -> tuple[str, list[tuple[int, int]]]:
    """HF's normalized text of ``text`` and each normalized character's original span."""
    pts = PreTokenizedString(text)
    if hf_normalizer is not None:
        pts.normalize(lambda ns: hf_normalizer.normalize(ns))
    normalized = "".join(s for s, _, _ in pts.get_splits())
    pts.split(lambda i, ns: [ns[j] for j in range(len(ns.normalized))])
    b2c = byte_to_char(text)
    spans = [(b2c[a], b2c[b]) for _, (a, b), _ in pts.get_splits(offset_type="byte")]
    return normalized, spans


def hf_pretokens(hf_normalizer, hf_pretokenizer, text: str) -> list[tuple[str, tuple[int, int]]]:
    """HF's pre-tokens of ``text`` (after ``hf_normalizer``) with their original char spans."""
    pts = PreTokenizedString(text)
    if hf_normalizer is not None:
        pts.normalize(lambda ns: hf_normalizer.normalize(ns))
    hf_pretokenizer.pre_tokenize(pts)
    b2c = byte_to_char(text)
    return [(s, (b2c[a], b2c[b])) for s, (a, b), _ in pts.get_splits(offset_type="byte")]


def hf_pretoken_alignments(hf_normalizer, hf_pretokenizer, text: str) -> list[list[tuple[int, int]]]:
    """For each HF pre-token, each of its characters' original spans."""
    pts = PreTokenizedString(text)
    if hf_normalizer is not None:
        pts.normalize(lambda ns: hf_normalizer.normalize(ns))
    hf_pretokenizer.pre_tokenize(pts)
    sizes = [len(s) for s, _, _ in pts.get_splits()]
    pts.split(lambda i, ns: [ns[j] for j in range(len(ns.normalized))])
    b2c = byte_to_char(text)
    spans = [(b2c[a], b2c[b]) for _, (a, b), _ in pts.get_splits(offset_type="byte")]
    out, k = [], 0
    for n in sizes:
        out.append(spans[k : k + n])
        k += n
    return out
