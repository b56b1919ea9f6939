"""Are two tokenizers the same, and where do they first disagree?

:func:`diff_tokenizers` compares tokenizer A with tokenizer B in three ways and returns one
:class:`TokenizerDiff` (frozen dataclasses throughout), which ``tokscope diff`` prints and the
comparison screen shows in one line:

* **vocabularies** (:func:`vocab_diff`, :func:`added_diff`): each model token is keyed by what it
  decodes to (:meth:`~.Tokenizer.token_bytes`: byte-level BPE's ``Ġthe``, SentencePiece's ``▁the``,
  a rank file's ``b" the"`` and a WordPiece ``the`` are all `` the``; ``##the`` is ``the``), with a
  tag for byte-fallback tokens (``<0x41>`` is not ``A``). The result counts the tokens only in A,
  only in B, the same token under different ids, and different merge ranks (both merge lists) or
  scores (both Unigram). Added and special tokens are compared by their content: id, whether they
  are special, and their matching flags (``lstrip``, ``single_word`` ...) where both keep them.
* **stages** (:func:`stage_table`): kind, normalizer, pre-tokenizer, model options, added tokens,
  template, post-processor and decoder of each, side by side in words. Two stages described
  differently may still behave the same (a rank file's GPT-2 pattern and Hugging Face's ByteLevel
  pre-tokenizer do), so this table informs and never decides the verdict.
* **a differential search** (:func:`search_difference`): the given text (if any), then texts made
  by a seeded generator (:func:`generated_texts`: many scripts, emoji with ZWJ and flags,
  whitespace runs, digit runs, contractions, special-token look-alikes, combining marks, mixed
  case), encoded by both with special tokens treated as text (as ``encode_ordinary``), until
  their splits differ or the time budget ends. A text found is shrunk (delta debugging: drop
  chunks, then single characters, while the splits still differ), and the shortest one found is
  reported with both splits. When every token the two share has the same id, splits are compared
  by ids; otherwise by the pieces' character and byte spans (where they cut).

The verdict is ``same`` when the vocabularies and added tokens match (same tokens, same ids) and
the search found no text that splits differently; ``differ`` otherwise.

>>> from tokscope.core.tokenizer.tokenizer import Tokenizer
>>> ranks = {bytes([b]): b for b in range(256)}
>>> a = Tokenizer("a", {**ranks, b"  ": 256}, r"\\S+|\\s+")
>>> b = Tokenizer("b", {**ranks, b"  ": 256}, r"\\S+|\\s+")
>>> diff_tokenizers(a, b, seconds=0.2).verdict
'same'
>>> c = Tokenizer("c", {**ranks, b"  ": 256}, r"\\S+|\\s")
>>> d = diff_tokenizers(a, c, seconds=5)
>>> d.verdict, d.search.difference.text, d.search.compared
('differ', '  ', 'ids')
>>> [p.token for p in d.search.difference.a], [p.token for p in d.search.difference.b]
(['  '], [' ', ' '])

``progress(tried, fraction)`` is called now and then (``fraction`` of the time budget used);
setting ``cancel`` stops the search with :class:`~tokscope.core.text.errors.CancelledError`.

JSON (``tokscope diff --json``, :func:`diff_json`; schema 1; new keys may be added)::

    {"schema": 1, "verdict": "same" | "differ",
     "a": {"name", "kind", "n_vocab"}, "b": {...},
     "vocab": {"a_tokens", "b_tokens", "shared", "only_a", "only_b", "different_id",
               "different_value", "value": "merge rank" | "score" | null, "same_ids": bool,
               "examples": {"only_a" | "only_b" | "different_id" | "different_value":
                            [{"bytes": hex, "tag", "a_id", "b_id", "a_token", "b_token",
                              "a_value", "b_value"}]}},
     "added": {"a_tokens", "b_tokens", "differences":
               [{"content", "a_id", "b_id", "a_special", "b_special", "a_flags", "b_flags"}]},
     "stages": [{"stage", "a", "b", "same"}],
     "search": {"special_tokens": "text", "compared": "ids" | "spans", "seed",
                "budget_seconds", "seconds", "tried", "timed_out", "text_given",
                "text_differs": bool | null,
                "difference": null | {"text", "chars", "source": "text" | "generated",
                                      "category", "minimal", "first_char",
                                      "a": [piece], "b": [piece]}}}

where a piece is ``{"id", "token", "bytes": hex, "start", "end", "byte_start", "byte_end"}``
(``token``: the vocabulary's spelling; offsets into the difference's text, characters and UTF-8
bytes). A ``*_value`` is a merge rank or a score; ``*_flags`` a list of flag names or null.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..added_tokens.added_vocabulary import AddedToken
from ..models.bpe import byte_token_value
from ..text.errors import CancelledError, TokscopeError
from ..tokenizer.tokenizer import Tokenizer

__all__ = [
    "ATOMS", "AddedDifference", "AddedDiff", "DEFAULT_SECONDS", "Difference", "SearchReport", "SplitPiece",
    "StageRow", "TokenEntry", "TokenizerDiff", "VocabDiff", "added_diff", "describe", "describe_model",
    "describe_template", "diff_json", "diff_tokenizers", "first_difference", "generated_texts", "search_difference",
    "shrink", "split", "stage_table", "vocab_diff",
]

#: the search's default time budget, in seconds
DEFAULT_SECONDS = 5.0
#: how many examples of each kind of vocabulary difference are kept
EXAMPLES = 20
#: a differing text longer than this is first narrowed to a window around where the splits part
WINDOW_FROM = 256

Progress = Callable[[int, float], None]


# ----- vocabularies ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TokenEntry:
    """One vocabulary entry as A and B have it (``None`` on the side that lacks it).

    ``bytes`` is what the token decodes to; ``tag`` is ``"byte"`` for a byte-fallback token
    (``<0x41>``), ``""`` otherwise; ``*_value`` a merge rank or a score."""

    bytes: bytes
    tag: str
    a_id: int | None
    b_id: int | None
    a_token: str | None
    b_token: str | None
    a_value: float | None = None
    b_value: float | None = None


@dataclass(frozen=True, slots=True)
class VocabDiff:
    """The model vocabularies compared (added tokens are left to :class:`AddedDiff`)."""

    a_tokens: int
    b_tokens: int
    shared: int
    only_a: int
    only_b: int
    different_id: int
    different_value: int
    #: what ``different_value`` compares: ``"merge rank"``, ``"score"``, or None (not comparable)
    value: str | None
    only_a_examples: tuple[TokenEntry, ...]
    only_b_examples: tuple[TokenEntry, ...]
    different_id_examples: tuple[TokenEntry, ...]
    different_value_examples: tuple[TokenEntry, ...]

    @property
    def same(self) -> bool:
        return not (self.only_a or self.only_b or self.different_id or self.different_value)


@dataclass(frozen=True, slots=True)
class AddedDifference:
    """An added token that A and B do not have alike (``None``: that side lacks it)."""

    content: str
    a_id: int | None
    b_id: int | None
    a_special: bool | None
    b_special: bool | None
    a_flags: tuple[str, ...] | None = None
    b_flags: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class AddedDiff:
    a_tokens: int
    b_tokens: int
    differences: tuple[AddedDifference, ...]

    @property
    def same(self) -> bool:
        return not self.differences


def _model_entries(tok: Tokenizer, cancel: threading.Event | None) -> dict[tuple[bytes, str, int], tuple[int, str]]:
    """``(bytes, tag, n) -> (id, spelling)`` for every model token that is not an added token
    (``n`` numbers tokens that decode alike, in id order)."""
    pairs: list[tuple[int, bytes, str, str]] = []
    if tok.ranks:
        for data, token_id in tok.ranks.items():
            if not tok.is_added(token_id):
                pairs.append((token_id, data, "", ""))
    else:
        fallback = bool(getattr(tok.model, "byte_fallback", False))
        for k, (spelling, token_id) in enumerate(tok.model.get_vocab().items()):
            if k % 4096 == 0 and cancel is not None and cancel.is_set():
                raise CancelledError("diff cancelled")
            if tok.is_added(token_id):
                continue
            try:
                data = tok.token_bytes(token_id)
            except TokscopeError:
                continue
            tag = "byte" if fallback and byte_token_value(spelling) is not None else ""
            pairs.append((token_id, data, tag, spelling))
    pairs.sort()
    out: dict[tuple[bytes, str, int], tuple[int, str]] = {}
    seen: dict[tuple[bytes, str], int] = {}
    for token_id, data, tag, spelling in pairs:
        n = seen.get((data, tag), 0)
        seen[(data, tag)] = n + 1
        out[(data, tag, n)] = (token_id, spelling)
    return out


def _value_kind(a: Tokenizer, b: Tokenizer) -> str | None:
    """What per-token value both have: merge ranks of two merge lists, or two Unigram models' scores
    (a rank file's rank is its id, compared already)."""
    if a.model.kind == b.model.kind == "unigram" and hasattr(a.model, "score") and hasattr(b.model, "score"):
        return "score"
    if (a.model.kind == b.model.kind == "bpe" and not a.ranks and not b.ranks
            and hasattr(a.model, "merges_into") and hasattr(b.model, "merges_into")):
        return "merge rank"
    return None


def _value(tok: Tokenizer, kind: str, token_id: int) -> float | None:
    """A Unigram token's score, or the rank of the first merge line that makes a BPE token (``None``
    for a symbol no merge makes)."""
    if kind == "score":
        return tok.model.score(token_id)
    rules = tok.model.merges_into(token_id)
    return rules[0].rank if rules else None


def vocab_diff(a: Tokenizer, b: Tokenizer, *, examples: int = EXAMPLES,
               cancel: threading.Event | None = None) -> VocabDiff:
    """Compare the model vocabularies of ``a`` and ``b`` by what each token decodes to.

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> base = {bytes([b]): b for b in range(256)}
    >>> d = vocab_diff(Tokenizer("a", {**base, b"ab": 256, b"cd": 257}, r"\\S+"),
    ...                Tokenizer("b", {**base, b"cd": 256, b"ef": 257}, r"\\S+"))
    >>> d.only_a, d.only_b, d.different_id, d.shared
    (1, 1, 1, 257)
    >>> d.different_id_examples[0].bytes, d.different_id_examples[0].a_id, d.different_id_examples[0].b_id
    (b'cd', 257, 256)
    """
    ea, eb = _model_entries(a, cancel), _model_entries(b, cancel)
    kind = _value_kind(a, b)
    only_a = [k for k in ea if k not in eb]
    only_b = [k for k in eb if k not in ea]
    shared = [k for k in ea if k in eb]
    moved = [k for k in shared if ea[k][0] != eb[k][0]]
    valued: list[TokenEntry] = []
    n_valued = 0
    if kind is not None:
        for k in shared:
            if cancel is not None and cancel.is_set():
                raise CancelledError("diff cancelled")
            va, vb = _value(a, kind, ea[k][0]), _value(b, kind, eb[k][0])
            if va != vb:
                n_valued += 1
                if len(valued) < examples:
                    valued.append(TokenEntry(k[0], k[1], ea[k][0], eb[k][0], ea[k][1], eb[k][1], va, vb))

    def entry(k: tuple[bytes, str, int]) -> TokenEntry:
        ia, ib = ea.get(k), eb.get(k)
        return TokenEntry(k[0], k[1], ia[0] if ia else None, ib[0] if ib else None,
                          ia[1] if ia else None, ib[1] if ib else None)

    def first(keys: list[tuple[bytes, str, int]], side: dict) -> tuple[TokenEntry, ...]:
        return tuple(entry(k) for k in sorted(keys, key=lambda k: side[k][0])[:examples])

    return VocabDiff(
        len(ea), len(eb), len(shared), len(only_a), len(only_b), len(moved), n_valued, kind,
        first(only_a, ea), first(only_b, eb), first(moved, ea), tuple(valued),
    )


_FLAGS = ("single_word", "lstrip", "rstrip", "normalized")


def _added_flags(tok: Tokenizer) -> dict[str, tuple[str, ...]]:
    """The matching flags of each added token, where the tokenizer keeps them (a ``tokenizer.json``'s
    added tokens do; tiktoken's special tokens have none)."""
    tokens = getattr(tok.added, "tokens", None)
    if not isinstance(tokens, (list, tuple)):
        return {}
    return {t.content: tuple(f for f in _FLAGS if getattr(t, f)) for t in tokens if isinstance(t, AddedToken)}


def added_diff(a: Tokenizer, b: Tokenizer) -> AddedDiff:
    """Compare added and special tokens by content: id, special or not, matching flags.

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> base = {bytes([b]): b for b in range(256)}
    >>> d = added_diff(Tokenizer("a", base, r"\\S+", {"<|end|>": 256, "<x>": 257}),
    ...                Tokenizer("b", base, r"\\S+", {"<|end|>": 257}))
    >>> [(x.content, x.a_id, x.b_id) for x in d.differences]
    [('<|end|>', 256, 257), ('<x>', 257, None)]
    """
    ta, tb = a.added_tokens, b.added_tokens
    fa, fb = _added_flags(a), _added_flags(b)
    out = []
    for content in sorted(set(ta) | set(tb), key=lambda c: (min(ta.get(c, 1 << 62), tb.get(c, 1 << 62)), c)):
        ia, ib = ta.get(content), tb.get(content)
        sa = a.is_special(ia) if ia is not None else None
        sb = b.is_special(ib) if ib is not None else None
        flags_a, flags_b = fa.get(content), fb.get(content)
        flags_differ = flags_a is not None and flags_b is not None and flags_a != flags_b
        if ia != ib or sa != sb or flags_differ:
            out.append(AddedDifference(content, ia, ib, sa, sb, flags_a, flags_b))
    return AddedDiff(len(ta), len(tb), tuple(out))


# ----- stages -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StageRow:
    stage: str
    a: str
    b: str

    @property
    def same(self) -> bool:
        return self.a == self.b


def describe(stage: Any) -> str:
    """A stage in words: its own ``describe()`` when it has one, else its ``repr`` when its class
    writes one, else its class name with its public attributes.

    >>> describe(None)
    'none'
    >>> class Strip:
    ...     def __init__(self): self.left, self._cache = True, {}
    >>> describe(Strip())
    'Strip(left=True)'
    """
    if stage is None:
        return "none"
    own = getattr(stage, "describe", None)
    if callable(own):
        return str(own())
    if type(stage).__repr__ is not object.__repr__:
        return repr(stage)
    fields = getattr(stage, "__dict__", {})
    shown = ", ".join(f"{k}={_short(v)}" for k, v in fields.items() if not k.startswith("_"))
    return f"{type(stage).__name__}({shown})"


def _short(value: Any) -> str:
    if isinstance(value, (list, tuple)) and value and all(hasattr(v, "__dict__") or hasattr(v, "__slots__") for v in value):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    if isinstance(value, dict) and len(value) > 8:
        return f"{{{len(value)} entries}}"
    return repr(value)


#: a model's documented options (see :mod:`tokscope.core.tokenizer.stages`), shown where set
_MODEL_OPTIONS = ("unk_token", "unk_id", "continuing_subword_prefix", "end_of_word_suffix", "byte_fallback",
                  "fuse_unk", "ignore_merges", "dropout", "max_input_chars_per_word")


def describe_model(tok: Tokenizer) -> str:
    """The model's kind, size and options.

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> describe_model(Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+"))
    'byte-level BPE from ranks, 256 tokens'
    """
    model = tok.model
    if tok.ranks:
        return f"{tok.kind} from ranks, {len(tok.ranks):,} tokens"
    parts = [f"{tok.kind} ({type(model).__name__}), {model.vocab_size:,} tokens"]
    for name in _MODEL_OPTIONS:
        value = getattr(model, name, None)
        if value not in (None, False):
            parts.append(f"{name}={value!r}")
    return ", ".join(parts)


def describe_template(tok: Tokenizer) -> str:
    """The template around one sequence, as Hugging Face writes it (``[CLS] $A [SEP]``).

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> describe_template(Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+"))
    '$A'
    """
    try:
        before, after = tok.template()
    except TokscopeError as exc:
        return f"cannot apply: {exc}"
    return " ".join([*(tok.token_str(i) for i in before), "$A", *(tok.token_str(i) for i in after)])


def stage_table(a: Tokenizer, b: Tokenizer) -> tuple[StageRow, ...]:
    """Each stage of ``a`` and ``b`` side by side, in words."""

    def pre(tok: Tokenizer) -> str:
        return f"pattern {tok.pattern}" if tok.pattern is not None else describe(tok.pre_tokenizer)

    def added(tok: Tokenizer) -> str:
        return f"{len(tok.added_tokens):,} ({len(tok.special_tokens):,} special)"

    rows = [
        ("kind", lambda t: t.kind),
        ("normalizer", lambda t: describe(t.normalizer)),
        ("pre-tokenizer", pre),
        ("model", describe_model),
        ("added tokens", added),
        ("template", describe_template),
        ("post-processor", lambda t: describe(t.post_processor)),
        ("decoder", lambda t: describe(t.decoder)),
    ]
    return tuple(StageRow(name, how(a), how(b)) for name, how in rows)


# ----- splits ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SplitPiece:
    """One token of a split: its id, the vocabulary's spelling, its bytes and where it sits."""

    id: int
    token: str
    bytes: bytes
    start: int
    end: int
    byte_start: int
    byte_end: int


def split(tok: Tokenizer, text: str) -> tuple[SplitPiece, ...]:
    """``text`` as ``tok`` cuts it, special tokens treated as text (as ``encode_ordinary``).

    >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
    >>> [p.token for p in split(Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+", {"<s>": 256}), "<s>")]
    ['<', 's', '>']
    """
    return tuple(SplitPiece(p.id, tok.token_str(p.id), p.bytes, p.start, p.end, p.byte_start, p.byte_end)
                 for p in tok.pieces(text, allowed_special=(), disallowed_special=()))


def _key(pieces: Sequence[SplitPiece], by_ids: bool) -> tuple:
    if by_ids:
        return tuple(p.id for p in pieces)
    return tuple((p.start, p.end, p.byte_start, p.byte_end) for p in pieces)


def _cuts(tok: Tokenizer, text: str, by_ids: bool) -> tuple | str:
    """What :func:`_key` gives for ``split(tok, text)``, without building the pieces (ids through
    ``encode_ordinary``'s fast path); ``"error: ..."`` when ``tok`` refuses the text."""
    try:
        if by_ids:
            return tuple(tok.encode_ordinary(text))
        return tuple((p.start, p.end, p.byte_start, p.byte_end)
                     for p in tok.pieces(text, allowed_special=(), disallowed_special=()))
    except CancelledError:
        raise
    except TokscopeError as exc:
        return f"error: {exc}"


def _safe_split(tok: Tokenizer, text: str) -> tuple[SplitPiece, ...] | str:
    try:
        return split(tok, text)
    except CancelledError:
        raise
    except TokscopeError as exc:  # one side refusing a text is a difference too
        return f"error: {exc}"


def first_difference(a: Sequence[SplitPiece], b: Sequence[SplitPiece], by_ids: bool) -> int:
    """The character offset where two splits of one text first part ways.

    >>> p = lambda i, s, e: SplitPiece(i, "", b"", s, e, s, e)
    >>> first_difference([p(1, 0, 2), p(2, 2, 4)], [p(1, 0, 2), p(3, 2, 3), p(4, 3, 4)], by_ids=False)
    2
    """
    for pa, pb in zip(a, b):
        if _key([pa], by_ids) != _key([pb], by_ids):
            return min(pa.start, pb.start)
    shorter = a if len(a) < len(b) else b
    return shorter[-1].end if shorter else 0


# ----- the generator -----------------------------------------------------------------------------------

#: the generator's building blocks, by category
ATOMS: dict[str, tuple[str, ...]] = {
    "latin": ("a", "the", "The", "hello", " world", "naïve", "café", "straße", "ÆØÅ", "œuvre"),
    "cyrillic": ("привет", "Привет мир", "ёж"),
    "greek": ("γειά σου", "Ελλάδα", "ς"),
    "arabic": ("مرحبا", "السلام عليكم", "ﻻ"),
    "hebrew": ("שלום", "עברית"),
    "devanagari": ("नमस्ते", "हिन्दी", "क्षत्रिय"),
    "thai": ("สวัสดี", "ภาษาไทย"),
    "cjk": ("你好", "世界", "日本語", "東京タワー", "ひらがな", "漢字かな交じり"),
    "hangul": ("안녕하세요", "한국어", "가"),
    "emoji": ("😀", "👍🏽", "👨\u200d👩\u200d👧\u200d👦", "🇺🇸", "🇯🇵", "❤️", "🏳️\u200d🌈", "🤖"),
    "whitespace": (" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\t\t", "\u3000", "\u2009",
                   "    \n", " \t"),
    "digits": ("1", "12", "123", "1234", "12345", "123456789", "3.14", "1,000", "٣٤٥", "१२३", "０１"),
    "punctuation": ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "don't", "It's", "WE'RE", "...", "!!", "?!", "--",
                    "—", "“quoted”", "(x)", "a.b", "#", "@", "{}", "</>", "::", "'", "\"", "_", "$"),
    "special": ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<s>", "</s>", "<unk>", "<pad>", "[CLS]", "[SEP]",
                "[MASK]", "[UNK]", "<|begin_of_text|>", "<0x41>", "▁", "Ġ", "##ing", "<mask>"),
    "combining": ("e\u0301", "a\u0308", "n\u0303\u0304", "A\u030a", "\u0915\u094d\u0937", "o\u0328\u0301"),
    "case": ("HeLLo", "iPhone", "McDonald", "ÉCOLE", "ǅ", "İstanbul", "ΣΑΣ", "ﬁ", "Ⅻ"),
    "code": ("def f(x):", "x+=1", "if(a){b}", "http://x.y/z", "a_b", "camelCase", "0x1F"),
}


#: characters of every class a pattern tells apart (spaces, letters of both cases, digits, marks,
#: punctuation, emoji, CJK), whose pairs the generator tries before the blocks
PAIR_CHARS = " \t\n\u00a0aAsé1'.!-_<[😀日я\u0301\u200d"


def _atoms() -> list[tuple[str, str]]:
    return [(cat, atom) for cat, atoms in ATOMS.items() for atom in atoms]


def generated_texts(seed: int = 0) -> Iterator[tuple[str, str, str]]:
    """``(stage, category, text)`` without end, the same for the same seed: every single
    character of the building blocks (:data:`ATOMS`; stage ``chars``), every pair of
    :data:`PAIR_CHARS` (``pairs``), then the blocks themselves, shortest first (``blocks``), then seeded mixes of two to eight blocks, sometimes with spaces
    or newlines between them, a block upper-cased or repeated (``mixes``).

    >>> from itertools import islice
    >>> list(islice(generated_texts(), 3))
    [('chars', 'latin', 'a'), ('chars', 'latin', 't'), ('chars', 'latin', 'h')]
    >>> list(islice(generated_texts(7), 900))[-1] == list(islice(generated_texts(7), 900))[-1]
    True
    """
    atoms = _atoms()
    seen: set[str] = set()
    for cat, atom in atoms:
        for ch in atom:
            if ch not in seen:
                seen.add(ch)
                yield "chars", cat, ch
    for x in PAIR_CHARS:
        for y in PAIR_CHARS:
            seen.add(x + y)
            yield "pairs", "pairs", x + y
    for cat, atom in sorted(atoms, key=lambda x: len(x[1])):
        if atom not in seen:
            seen.add(atom)
            yield "blocks", cat, atom
    rng = random.Random(seed)
    while True:
        n = rng.randint(2, 8)
        picked = [rng.choice(atoms) for _ in range(n)]
        glue = rng.choice(("", "", " ", "\n"))
        parts = []
        for _, atom in picked:
            roll = rng.random()
            if roll < 0.1:
                atom = atom.upper()
            elif roll < 0.2:
                atom = atom * rng.randint(2, 4)
            parts.append(atom)
        yield "mixes", "+".join(dict.fromkeys(c for c, _ in picked)), glue.join(parts)


# ----- shrinking -------------------------------------------------------------------------------------------


def shrink(text: str, differs: Callable[[str], bool], out_of_time: Callable[[], bool] = lambda: False) -> str:
    """A shorter text that still ``differs``, by delta debugging: try each chunk alone, then the
    text without each chunk, halving the chunks until single characters; stops early (with the
    shortest text so far) when ``out_of_time()``.

    >>> shrink("xxabxx", lambda t: "ab" in t)
    'ab'
    >>> shrink("a---b", lambda t: "a" in t and "b" in t)
    'ab'
    """
    chars = list(text)
    n = 2
    while len(chars) >= 2 and not out_of_time():
        size = -(-len(chars) // n)
        chunks = [chars[i:i + size] for i in range(0, len(chars), size)]
        reduced = False
        for chunk in chunks:
            if len(chunks) > 1 and differs("".join(chunk)):
                chars, n, reduced = chunk, 2, True
                break
            if out_of_time():
                return "".join(chars)
        if not reduced:
            for k in range(len(chunks)):
                rest = [c for j, part in enumerate(chunks) if j != k for c in part]
                if rest and differs("".join(rest)):
                    chars, n, reduced = rest, max(n - 1, 2), True
                    break
                if out_of_time():
                    return "".join(chars)
        if not reduced:
            if n >= len(chars):
                break
            n = min(2 * n, len(chars))
    return "".join(chars)


# ----- the search ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Difference:
    """The shortest text found on which the two split differently, with both splits.

    ``source`` is ``"text"`` when it was cut from the given text, ``"generated"`` otherwise;
    ``category`` names the generator's blocks it came from; ``minimal`` is True when shrinking
    ran to the end (no single character or chunk can be removed); ``first_char`` is where the
    splits first part ways. A side's split is a string (``"error: ..."``) when it refused the text.
    """

    text: str
    a: tuple[SplitPiece, ...] | str
    b: tuple[SplitPiece, ...] | str
    source: str
    category: str
    minimal: bool
    first_char: int


@dataclass(frozen=True, slots=True)
class SearchReport:
    compared: str
    seed: int
    budget: float
    seconds: float
    tried: int
    timed_out: bool
    text_given: bool
    text_differs: bool | None
    difference: Difference | None


class _Search:
    def __init__(self, a: Tokenizer, b: Tokenizer, by_ids: bool, budget: float, clock: Callable[[], float],
                 cancel: threading.Event | None, progress: Progress | None) -> None:
        self.a, self.b, self.by_ids = a, b, by_ids
        self.budget, self.clock, self.cancel, self.progress = budget, clock, cancel, progress
        self.begun = clock()
        self.tried = 0
        self.timed_out = False

    def out_of_time(self) -> bool:
        if self.cancel is not None and self.cancel.is_set():
            raise CancelledError("diff cancelled")
        used = self.clock() - self.begun
        if used >= self.budget:
            self.timed_out = True
            return True
        return False

    def splits(self, text: str) -> tuple[Any, Any]:
        return _safe_split(self.a, text), _safe_split(self.b, text)

    def differs(self, text: str) -> bool:
        self.tried += 1
        if self.progress is not None and self.tried % 64 == 0:
            self.progress(self.tried, min(1.0, (self.clock() - self.begun) / self.budget) if self.budget > 0 else 1.0)
        return _cuts(self.a, text, self.by_ids) != _cuts(self.b, text, self.by_ids)

    def narrow(self, text: str) -> str:
        """A window of a long ``text`` around where the two first part ways that still differs
        (the narrowest of a few), or ``text`` itself: shrinking a long text from the whole of it
        would take many passes over it."""
        if len(text) <= WINDOW_FROM:
            return text
        try:
            sa, sb = (tok.pieces(text, allowed_special=(), disallowed_special=()) for tok in (self.a, self.b))
        except TokscopeError:
            return text
        at = first_difference(sa, sb, self.by_ids)  # type: ignore[arg-type]  # Piece has the fields it reads
        for radius in (16, 64, 256, 1024, 4096):
            if self.out_of_time():
                break
            window = text[max(0, at - radius):at + radius]
            if len(window) < len(text) and self.differs(window):
                return window
        return text

    def found(self, text: str, source: str, category: str) -> Difference:
        small = shrink(self.narrow(text), self.differs, self.out_of_time)
        minimal = not self.timed_out
        sa, sb = self.splits(small)
        first = 0
        if not isinstance(sa, str) and not isinstance(sb, str):
            first = first_difference(sa, sb, self.by_ids)
        return Difference(small, sa, sb, source, category, minimal, first)


def search_difference(a: Tokenizer, b: Tokenizer, text: str | None = None, *, seconds: float = DEFAULT_SECONDS,
                      seed: int = 0, by_ids: bool = True, clock: Callable[[], float] = time.monotonic,
                      cancel: threading.Event | None = None, progress: Progress | None = None,
                      max_found: int = 8) -> SearchReport:
    """Look for the shortest text that ``a`` and ``b`` split differently, within ``seconds``.

    The given ``text`` is tried first (whole), then the generator's texts in order
    (:func:`generated_texts`); each difference found is shrunk (:func:`shrink`). The search stops
    at the end of the first stage of the generator that found one (single characters, blocks;
    in the mixes at the first found), keeping the shortest of up to ``max_found``, so the same
    seed gives the same answer whenever the search finishes within its budget. ``by_ids``
    compares ids, else character and byte spans.
    """
    search = _Search(a, b, by_ids, seconds, clock, cancel, progress)
    best: Difference | None = None
    text_differs = None

    def keep(candidate: Difference) -> None:
        nonlocal best
        if best is None or len(candidate.text) < len(best.text):
            best = candidate

    if text:
        text_differs = search.differs(text)
        if text_differs:
            keep(search.found(text, "text", "given text"))
    stage, found_in_stage = None, 0
    for now, category, candidate in generated_texts(seed):
        if search.out_of_time():
            break
        if now != stage:
            if best is not None and stage is not None:
                break  # a later stage's texts are longer
            stage, found_in_stage = now, 0
        if search.differs(candidate):
            keep(search.found(candidate, "generated", category))
            found_in_stage += 1
            if stage == "mixes" or found_in_stage >= max_found or len(best.text) <= 1:
                break
    if search.progress is not None:
        search.progress(search.tried, 1.0)
    return SearchReport("ids" if by_ids else "spans", seed, seconds, search.clock() - search.begun, search.tried,
                        search.timed_out, bool(text), text_differs, best)


# ----- the whole diff ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TokenizerDiff:
    a_name: str
    b_name: str
    a_kind: str
    b_kind: str
    a_vocab: int
    b_vocab: int
    vocab: VocabDiff
    added: AddedDiff
    stages: tuple[StageRow, ...]
    search: SearchReport

    @property
    def same(self) -> bool:
        return self.vocab.same and self.added.same and self.search.difference is None

    @property
    def verdict(self) -> str:
        return "same" if self.same else "differ"

    def summary(self) -> str:
        """One line: the verdict and why.

        >>> from tokscope.core.tokenizer.tokenizer import Tokenizer
        >>> t = Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+")
        >>> diff_tokenizers(t, t, seconds=0).summary()
        'same: same vocabulary and ids; no text found that splits differently (0 tried)'
        """
        v = self.vocab
        if v.same and self.added.same:
            vocab = "same vocabulary and ids"
        else:
            parts = []
            if v.only_a or v.only_b:
                parts.append(f"{_count(v.only_a, 'token')} only in A, {v.only_b:,} only in B")
            if v.different_id:
                parts.append(f"{_count(v.different_id, 'token')} under other ids")
            if v.different_value:
                parts.append(f"{_count(v.different_value, 'other ' + str(v.value))}")
            if self.added.differences:
                n = len(self.added.differences)
                parts.append(f"{_count(n, 'added token')} differ{'s' if n == 1 else ''}")
            vocab = ", ".join(parts)
        found = self.search.difference
        if found is None:
            split_part = f"no text found that splits differently ({self.search.tried:,} tried)"
        else:
            split_part = f"split differently on a {len(found.text)}-character text"
        return f"{self.verdict}: {vocab}; {split_part}"


def _count(n: int, word: str) -> str:
    """``1 token``, ``2 tokens``.

    >>> _count(1, "token"), _count(1200, "added token")
    ('1 token', '1,200 added tokens')
    """
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def diff_tokenizers(a: Tokenizer, b: Tokenizer, text: str | None = None, *, seconds: float = DEFAULT_SECONDS,
                    seed: int = 0, clock: Callable[[], float] = time.monotonic,
                    cancel: threading.Event | None = None, progress: Progress | None = None) -> TokenizerDiff:
    """Compare ``a`` and ``b`` (see the module docstring); ``seconds`` bounds the search only."""
    vocab = vocab_diff(a, b, cancel=cancel)
    added = added_diff(a, b)
    by_ids = vocab.different_id == 0 and not any(
        d.a_id is not None and d.b_id is not None and d.a_id != d.b_id for d in added.differences)
    found = search_difference(a, b, text, seconds=seconds, seed=seed, by_ids=by_ids, clock=clock, cancel=cancel,
                              progress=progress)
    return TokenizerDiff(a.name, b.name, a.kind, b.kind, a.n_vocab, b.n_vocab, vocab, added, stage_table(a, b), found)


# ----- JSON ------------------------------------------------------------------------------------------------


def _entry_json(e: TokenEntry) -> dict[str, Any]:
    return {"bytes": e.bytes.hex(), "tag": e.tag, "a_id": e.a_id, "b_id": e.b_id, "a_token": e.a_token,
            "b_token": e.b_token, "a_value": e.a_value, "b_value": e.b_value}


def _split_json(pieces: tuple[SplitPiece, ...] | str) -> list[dict[str, Any]] | str:
    if isinstance(pieces, str):
        return pieces
    return [{"id": p.id, "token": p.token, "bytes": p.bytes.hex(), "start": p.start, "end": p.end,
             "byte_start": p.byte_start, "byte_end": p.byte_end} for p in pieces]


def diff_json(d: TokenizerDiff) -> dict[str, Any]:
    """The diff as plain JSON data (schema in the module docstring)."""
    v, s = d.vocab, d.search
    found = s.difference
    return {
        "schema": 1,
        "verdict": d.verdict,
        "a": {"name": d.a_name, "kind": d.a_kind, "n_vocab": d.a_vocab},
        "b": {"name": d.b_name, "kind": d.b_kind, "n_vocab": d.b_vocab},
        "vocab": {
            "a_tokens": v.a_tokens, "b_tokens": v.b_tokens, "shared": v.shared, "only_a": v.only_a,
            "only_b": v.only_b, "different_id": v.different_id, "different_value": v.different_value,
            "value": v.value, "same_ids": v.different_id == 0,
            "examples": {
                "only_a": [_entry_json(e) for e in v.only_a_examples],
                "only_b": [_entry_json(e) for e in v.only_b_examples],
                "different_id": [_entry_json(e) for e in v.different_id_examples],
                "different_value": [_entry_json(e) for e in v.different_value_examples],
            },
        },
        "added": {
            "a_tokens": d.added.a_tokens, "b_tokens": d.added.b_tokens,
            "differences": [
                {"content": x.content, "a_id": x.a_id, "b_id": x.b_id, "a_special": x.a_special,
                 "b_special": x.b_special, "a_flags": None if x.a_flags is None else list(x.a_flags),
                 "b_flags": None if x.b_flags is None else list(x.b_flags)}
                for x in d.added.differences
            ],
        },
        "stages": [{"stage": r.stage, "a": r.a, "b": r.b, "same": r.same} for r in d.stages],
        "search": {
            "special_tokens": "text", "compared": s.compared, "seed": s.seed, "budget_seconds": s.budget,
            "seconds": round(s.seconds, 3), "tried": s.tried, "timed_out": s.timed_out, "text_given": s.text_given,
            "text_differs": s.text_differs,
            "difference": None if found is None else {
                "text": found.text, "chars": len(found.text), "source": found.source, "category": found.category,
                "minimal": found.minimal, "first_char": found.first_char,
                "a": _split_json(found.a), "b": _split_json(found.b),
            },
        },
    }
