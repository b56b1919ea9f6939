"""The compiled character-class runs (``cls_split``/``cls_runs``/``cls_find`` of ``merge.c``) and
the stages that use them (the ``Whitespace`` pre-tokenizer, the Unicode forms, ``Lowercase``, and
the ``wordlevel`` family whole), each run with the compiled runs and with the pure-Python paths,
held to the pure statements of :class:`~tokscope.core.text.class_table.ClassTable`, to the
stages' pure paths and to ``tokenizers``: hypothesis text over the whole of Unicode (emoji, CJK,
combining marks, lone surrogates, added-token look-alikes, every kind of white space), every
table boundary, the samples, and hostile calls."""

from __future__ import annotations

import pickle
import sys

import hf_files
import pytest
from compiled_merge import class_runs_module
from hf_support import FUZZ, SMALL_FUZZ, TRICKY_CHARS, sample_texts, texts_st
from hf_text_support import hf_pretokens
from hf_text_support import texts as stage_texts_st
from hypothesis import given
from hypothesis import strategies as st

from tokscope.core.formats import tokenizer_json as hf
from tokscope.core.models.wordlevel import WordLevel
from tokscope.core.normalizers.unicode import MAYBE_TABLE, NFC, NFD, NFKC, NFKD
from tokscope.core.normalizers.utils import Lowercase
from tokscope.core.pre_tokenizers.whitespace import WS, Whitespace, word_classes
from tokscope.core.text import class_table
from tokscope.core.text.class_table import ClassTable, lower_special_classes, set_classes
from tokscope.core.text.normalized import NormalizedText
from tokscope.core.text.unicode import lowercase_str, normalize_str, table, unstable_runs

tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers library is the oracle of these tests")

#: text with lone surrogates, non-BMP characters and the tables' edges among the rest
wide_st = st.one_of(
    texts_st,
    stage_texts_st,
    st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40),
    st.lists(st.sampled_from(hf_files.LOOKALIKES + TRICKY_CHARS + ["\ud800", "\udfff", "a\udc00b"]), max_size=12).map("".join),
)

FORMS = {"NFC": NFC, "NFD": NFD, "NFKC": NFKC, "NFKD": NFKD}


def _tables() -> dict[str, ClassTable]:
    out = {"word": word_classes(), "lower": lower_special_classes()}
    out.update({name: set_classes(name) for name in sorted(set(MAYBE_TABLE.values()))})
    return out


@pytest.fixture(scope="module")
def module():
    found = class_runs_module()
    if found is None:
        pytest.skip("no compiled class runs: not installed, and no C compiler to build one")
    return found


@pytest.fixture(params=["compiled", "pure"], scope="module")
def runs(request):
    """The stages with the compiled class runs or with their pure-Python paths."""
    module = class_runs_module() if request.param == "compiled" else None
    if request.param == "compiled" and module is None:
        pytest.skip("no compiled class runs: not installed, and no C compiler to build one")
    was = class_table.use_compiled(module)
    assert class_table.compiled() is module
    yield request.param
    class_table.use_compiled(was)


def _hf_safe(text: str) -> str:
    """``text`` as ``tokenizers`` receives it (a lone surrogate cannot cross into Rust)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# ----- the compiled calls against their pure statements ------------------------------------------


def test_every_table_boundary_has_its_ranges_class(module):
    """Each range's first and last code point and their neighbours, in every table: the two
    stages give the class the ranges say, and the compiled lookup reads the same class."""
    word = table("RX_WORD")

    def expected_word(cp: int) -> int:
        return 1 if chr(cp) in word else 0 if chr(cp) in WS else 2

    cases = {"word": (word_classes(), expected_word)}
    for name in sorted(set(MAYBE_TABLE.values())):
        cases[name] = (set_classes(name), lambda cp, rs=table(name): int(chr(cp) in rs))
    cases["RX_WORD as a set"] = (set_classes("RX_WORD"), lambda cp: int(chr(cp) in word))
    checked = 0
    for classes, expected in cases.values():
        points = {0, 0x10FFFF, 0xD800, 0xDFFF}
        for rs in (word, WS, *(table(n) for n in MAYBE_TABLE.values())):
            for a, b in rs.ranges:
                points.update(p for p in (a - 1, a, b, b + 1) if 0 <= p <= 0x10FFFF)
        text = "".join(map(chr, sorted(points)))
        for cp in sorted(points):
            assert classes.class_of(chr(cp)) == expected(cp), hex(cp)
        assert module.cls_split(text, *classes.tables) == classes.split_python(text)
        assert module.cls_spans(text, *classes.tables) == classes.spans_python(text)
        assert module.cls_runs(text, *classes.tables) == classes.runs_python(text)
        checked += len(points)
    assert checked > 3000


@FUZZ
@given(wide_st, st.sampled_from(sorted(_tables())))
def test_the_compiled_runs_are_their_pure_statements(module, text, name):
    classes = _tables()[name]
    assert module.cls_split(text, *classes.tables) == classes.split_python(text)
    assert module.cls_spans(text, *classes.tables) == classes.spans_python(text)
    assert module.cls_runs(text, *classes.tables) == classes.runs_python(text)
    assert module.cls_find(text, *classes.tables) == classes.find_python(text)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 0x10FFFF), st.integers(0, 300), st.integers(0, 3)), max_size=6), wide_st)
def test_random_tables_split_as_their_pure_statements(module, sets, text):
    classes = ClassTable([([(a, min(a + n, 0x10FFFF))], k) for a, n, k in sets], default=len(sets) % 2)
    assert module.cls_split(text, *classes.tables) == classes.split_python(text)
    assert module.cls_spans(text, *classes.tables) == classes.spans_python(text)
    assert module.cls_runs(text, *classes.tables) == classes.runs_python(text)
    assert module.cls_find(text, *classes.tables) == classes.find_python(text)


def test_hostile_calls_are_one_line_errors_never_a_crash(module):
    stage1, stage2 = word_classes().tables
    for bad in [(), ("a",), ("a", stage1), (b"a", stage1, stage2), ("a", bytearray(stage1), stage2),
                ("a", stage1, None), ("a", stage1, stage2, 1)]:
        with pytest.raises(TypeError):
            module.cls_split(*bad)
    for short in (b"", stage1[:-1], stage1 + b"\0\0"):
        with pytest.raises(ValueError, match="stage1"):
            module.cls_runs("a", short, stage2)
        with pytest.raises(ValueError, match="stage1"):
            module.cls_spans("a", short, stage2)
    # block numbers past stage2's end read as class 0: wrong classes, never a read out of bounds
    everything = "".join(map(chr, range(0, 0x110000, 97))) + "\ud800\udfff\U0010ffff"
    assert module.cls_split(everything, b"\xff" * len(stage1), b"") == []
    short = stage2[:300]

    def bounded(c: str) -> int:  # the class with an out-of-range block read as 0
        block = int.from_bytes(stage1[2 * (ord(c) >> 8) : 2 * (ord(c) >> 8) + 2], sys.byteorder)
        off = block * 256 + (ord(c) & 255)
        return short[off] if off < len(short) else 0

    want = [i for i, c in enumerate(everything) if bounded(c)]
    got = [i for s, e in module.cls_runs(everything, stage1, short) for i in range(s, e)]
    assert got == want and want
    assert module.cls_find(everything, b"\xff" * len(stage1), b"\x01" * 256) == -1
    assert module.cls_spans(everything, b"\xff" * len(stage1), b"") == []
    assert module.cls_find("", stage1, stage2) == -1 and module.cls_split("", stage1, stage2) == []


# ----- the stages, with the compiled runs and without --------------------------------------------


@FUZZ
@given(wide_st)
def test_whitespace_split_str_is_the_pure_split_and_tokenizers(runs, text):
    ours = Whitespace().split_str(text)
    was = class_table.use_compiled(None)
    try:
        pure = Whitespace().split_str(text)
    finally:
        class_table.use_compiled(was)
    assert ours == pure
    safe = _hf_safe(text)
    assert Whitespace().split_str(safe) == [p for p, _ in tokenizers.pre_tokenizers.Whitespace().pre_tokenize_str(safe)]


@FUZZ
@given(wide_st)
def test_whitespace_aligned_chunks_are_the_pure_ones_and_tokenizers(runs, text):
    """The aligned path (pieces, offsets): the chunks and their spans in the text."""
    ours = Whitespace().pre_tokenize_str(text)
    was = class_table.use_compiled(None)
    try:
        pure = Whitespace().pre_tokenize_str(text)
    finally:
        class_table.use_compiled(was)
    assert ours == pure
    assert [p for p, _ in ours] == Whitespace().split_str(text)
    safe = _hf_safe(text)
    assert Whitespace().pre_tokenize_str(safe) == hf_pretokens(None, tokenizers.pre_tokenizers.Whitespace(), safe)


@FUZZ
@given(wide_st, st.sampled_from(sorted(FORMS)))
def test_unicode_forms_are_the_pure_form_and_tokenizers(runs, text, form):
    assert FORMS[form]().normalize_str(text) == normalize_str(form, text)
    safe = _hf_safe(text)
    assert FORMS[form]().normalize_str(safe) == getattr(tokenizers.normalizers, form)().normalize_str(safe)


@FUZZ
@given(wide_st, st.sampled_from(sorted(FORMS)))
def test_unicode_forms_align_as_the_pure_runs(runs, text, form):
    """The aligned path (pieces, offsets): the runs found and the alignment made from them."""
    assert FORMS[form]().unstable_runs(text) == unstable_runs(form, text)
    ours = FORMS[form]().normalize(NormalizedText.identity(text))
    was = class_table.use_compiled(None)
    try:
        pure = FORMS[form]().normalize(NormalizedText.identity(text))
    finally:
        class_table.use_compiled(was)
    assert (ours.text, ours.alignments()) == (pure.text, pure.alignments())
    assert ours.text == normalize_str(form, text)


@FUZZ
@given(wide_st)
def test_lowercase_is_rusts_lowercase(runs, text):
    assert Lowercase().normalize_str(text) == lowercase_str(text)
    ours = Lowercase().normalize(NormalizedText.identity(text))
    was = class_table.use_compiled(None)
    try:
        pure = Lowercase().normalize(NormalizedText.identity(text))
    finally:
        class_table.use_compiled(was)
    assert (ours.text, ours.alignments()) == (pure.text, pure.alignments())
    safe = _hf_safe(text)
    assert Lowercase().normalize_str(safe) == tokenizers.normalizers.Lowercase().normalize_str(safe)


def test_the_stages_on_every_sample(runs):
    hf_norm = tokenizers.normalizers.Sequence([tokenizers.normalizers.NFKC(), tokenizers.normalizers.Lowercase()])
    hf_pre = tokenizers.pre_tokenizers.Whitespace()
    for name, text in sample_texts().items():
        normed = Lowercase().normalize_str(NFKC().normalize_str(text))
        assert normed == hf_norm.normalize_str(text), name
        assert Whitespace().split_str(normed) == [p for p, _ in hf_pre.pre_tokenize_str(normed)], name
        for form, stage in FORMS.items():
            assert stage().normalize_str(text) == normalize_str(form, text), (name, form)


# ----- the wordlevel family whole -----------------------------------------------------------------


@pytest.fixture(scope="module")
def frozen():
    try:
        return pickle.dumps(hf.from_json_text(hf_files.build("wordlevel"), "wordlevel"))
    except hf_files.Missing as exc:
        pytest.skip(str(exc))


def _expected(texts: list[str]) -> list[list[int]]:
    ref = hf_files.hf_tokenizer("wordlevel")
    ref.encode_special_tokens = True
    return [e.ids for e in ref.encode_batch([_hf_safe(t) for t in texts], add_special_tokens=False)]


@SMALL_FUZZ
@given(st.lists(wide_st, max_size=8))
def test_wordlevel_batches_equal_tokenizers(runs, frozen, texts):
    tok = pickle.loads(frozen)
    expected = _expected(texts)
    assert tok.encode_many(texts, disallowed_special=()) == expected
    assert [tok.encode(t, disallowed_special=()) for t in texts] == expected
    assert [[p.id for p in tok.pieces(t, disallowed_special=())] for t in texts] == expected


def test_wordlevel_samples_and_lookalikes_equal_tokenizers(runs, frozen):
    texts = [line for text in sample_texts().values() for line in text.splitlines()]
    texts += hf_files.LOOKALIKES + ["", " ", "a\ud800b", "".join(TRICKY_CHARS), "  <|tool|>  x\t\t", "ΣΑΣ İSTANBUL ﬁ ｈｅｌｌｏ"]
    tok = pickle.loads(frozen)
    assert tok.encode_many(texts, disallowed_special=()) == _expected(texts)


def test_wordlevel_tokenize_ids_is_tokenizes_id():
    model = WordLevel({"<unk>": 0, "hi": 1, "": 2})
    for chunk in ["hi", "", "x", "\ud800", "hi!"]:
        assert model.tokenize_ids(chunk) == [t[0] for t in model.tokenize(chunk)]
    with pytest.raises(Exception, match="not in the WordLevel vocabulary"):
        WordLevel({"a": 0}, unk_token="<unk>").tokenize_ids("b")
