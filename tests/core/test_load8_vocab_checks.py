"""Issue 22 item 4 (load8): the compiled vocabulary checks (``merge.c``'s ``vocab_check``,
``vocab_reverse``, ``vocab_longest``) give what the Python ones give, on any vocabulary: the same
copy or the same one-line refusal, the same id -> token map (the first token of a repeated id),
the same longest entries; and a model built either way is the same model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.models import base
from tokscope.core.models.wordlevel import WordLevel
from tokscope.core.models.wordpiece import WordPiece
from tokscope.core.text.errors import TokenizerFileError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from compiled_merge import _with_abi  # noqa: E402

COMPILED = _with_abi("VOCAB_ABI")
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="no C compiler for the compiled vocabulary checks")

#: tokens from a wide alphabet: emoji, CJK, combining marks, lone surrogates, prefixes, specials
TOKEN = st.text(st.one_of(st.sampled_from(["#", "▁", "Ġ", "😀", "中", "\u0301", "\ud800", "\udfff", "<", "|", ">", " ",
                                           "\t", "\x00", "a", "é"]), st.characters()), max_size=6)
ID = st.one_of(st.integers(0, 50), st.integers(0, 2**32 - 1), st.sampled_from([0, 2**32 - 1, 2**32, -1, 2**64, -(2**70)]))
ODD = st.sampled_from([True, False, 1.0, "3", None, 2**32, -1])


def pure(fn, *args):
    base.use_compiled(False)
    try:
        return outcome(fn, *args)
    finally:
        base.use_compiled(True, COMPILED)


def compiled(fn, *args):
    base.use_compiled(True, COMPILED)
    return outcome(fn, *args)


def outcome(fn, *args):
    try:
        got = fn(*args)
    except TokenizerFileError as exc:
        return "error", str(exc)
    return "ok", got, list(got.items()) if isinstance(got, dict) else None


@pytest.fixture(autouse=True)
def _restore():
    yield
    base.use_compiled(True)


@needs_compiled
@settings(max_examples=70, deadline=None)
@given(st.dictionaries(TOKEN, ID, max_size=12), st.lists(st.tuples(st.one_of(TOKEN, st.integers()), st.one_of(ID, ODD)),
                                                          max_size=2))
def test_check_vocab_is_the_python_check(vocab, odd):
    assert compiled(base.check_vocab, vocab) == pure(base.check_vocab, vocab)
    mixed = {**vocab, **dict(odd)}
    assert compiled(base.check_vocab, mixed) == pure(base.check_vocab, mixed)


@needs_compiled
@settings(max_examples=70, deadline=None)
@given(st.dictionaries(TOKEN, st.integers(0, 8), max_size=14))
def test_reverse_vocab_keeps_the_first_token_of_an_id_as_python_does(vocab):
    got = compiled(base.reverse_vocab, vocab)
    assert got[:2] == pure(base.reverse_vocab, vocab)[:2]
    assert got[1] == {i: next(t for t, j in vocab.items() if j == i) for i in set(vocab.values())}


@needs_compiled
@settings(max_examples=70, deadline=None)
@given(st.dictionaries(TOKEN, st.integers(0, 9), max_size=14), st.sampled_from(["##", "", "▁", "😀", "\ud800", "a"]))
def test_longest_tokens_is_the_python_count(vocab, prefix):
    assert compiled(base.longest_tokens, vocab, prefix) == pure(base.longest_tokens, vocab, prefix)


@needs_compiled
@pytest.mark.parametrize("vocab", [{}, {"a": True}, {"a": 1.0}, {"a": -1}, {"a": 2**32}, {1: 0}, {"a": 0, "b": "1"}])
def test_a_bad_or_empty_vocabulary_is_refused_or_kept_alike(vocab):
    assert compiled(base.check_vocab, vocab) == pure(base.check_vocab, vocab)
    assert COMPILED.vocab_check(vocab) is None  # anything but a plain one goes to the Python loop


@needs_compiled
def test_subclasses_and_other_mappings_go_to_python():
    class Key(str):
        pass

    class Id(int):
        pass

    assert COMPILED.vocab_check({Key("a"): 0}) is None and COMPILED.vocab_check({"a": Id(0)}) is None
    assert COMPILED.vocab_reverse({"a": Id(0)}) is None and COMPILED.vocab_longest({Key("a"): 0}, "#") is None
    assert compiled(base.check_vocab, {Key("a"): Id(3)}) == pure(base.check_vocab, {Key("a"): Id(3)})


@needs_compiled
@settings(max_examples=40, deadline=None)
@given(st.dictionaries(TOKEN, st.integers(0, 30), min_size=1, max_size=12), st.lists(TOKEN, max_size=6))
def test_a_model_built_either_way_tokenizes_alike(vocab, words):
    vocab = {**vocab, "[UNK]": 31, "<unk>": 32}
    models = []
    for on in (False, True):
        base.use_compiled(on, COMPILED if on else None)
        wp, wl = WordPiece(vocab), WordLevel(vocab)
        models.append((wp._vocab, wp._vocab_r, wp._longest, wp._longest_cont, [wl.id_to_token(i) for i in range(34)],
                       [wp.tokenize(w) for w in words if w], [wl.tokenize(w) for w in words]))
    assert models[0] == models[1]


def table_outcome(text, sep, ids):
    try:
        got = base.vocab_from_table(text, sep, ids)
    except ValueError:
        return "error"
    return got, list(got.items())


@needs_compiled
@settings(max_examples=70, deadline=None)
@given(st.lists(TOKEN, max_size=10), st.sampled_from(["\x00", "\ufdd0", "\ufdd1", "\ufdef", "😀", "a"]),
       st.lists(st.integers(-(2**63), 2**63 - 1), max_size=12), st.integers(-1, 1))
def test_a_vocabulary_table_reads_as_split_and_zip(tokens, sep, ids, extra):
    """Tokens that hold the separator, repeated tokens (the last id wins), too few or too many ids."""
    from array import array

    text = sep.join(tokens)
    ids = array("q", (ids + [0] * len(tokens))[: max(0, len(text.split(sep)) + extra)])
    base.use_compiled(False)
    want = table_outcome(text, sep, ids)
    base.use_compiled(True, COMPILED)
    assert table_outcome(text, sep, ids) == want


@needs_compiled
def test_a_vocabulary_table_of_other_types_goes_to_python():
    from array import array

    assert COMPILED.vocab_table("a", "xy", array("q", [1])) is None
    with pytest.raises(ValueError):
        COMPILED.vocab_table("a", "x", array("i", [1]))
    base.use_compiled(True, COMPILED)
    assert base.vocab_from_table("a,b", ",", array("i", [1, 2])) == {"a": 1, "b": 2}


PIECE = st.text(st.sampled_from(["a", "b", "Ġ", "😀", "中", "\u0301", "\ud800", "#", " ", "x"]), min_size=0, max_size=3)


def bpe_outcome(vocab, merges, **options):
    from tokscope.core.models.bpe import BPE

    try:
        model = BPE(vocab, merges, **options)
    except (TokenizerFileError, UnicodeError) as exc:  # a lone surrogate cut by the prefix: ValueError, named by the reader
        return "error", type(exc).__name__, str(exc)
    return list(model._keys), list(model._results), model.tokenize("abab😀中\u0301")


@needs_compiled
@settings(max_examples=80, deadline=None)
@given(st.lists(PIECE, min_size=1, max_size=10, unique=True), st.lists(st.tuples(PIECE, PIECE), max_size=8),
       st.sampled_from(["lines", "pairs", "tuples", "mixed"]), st.booleans(), st.sampled_from([None, "##"]),
       st.booleans())
def test_a_merge_list_reads_compiled_as_the_columns_and_loop_read_it(pieces, pairs, form, version, prefix, complete):
    """Merges whose tokens or result are missing, "a b" lines with no space or two, a '#version'
    line, tuples, a mixed list, a subword prefix (never compiled): the same arrays or the same error;
    with ``complete`` every merge's parts and result are in the vocabulary (a list that builds)."""
    known = [x for a, b in (pairs if complete else pairs[: len(pairs) // 2]) for x in ((a, b, a + b) if complete else (a + b,))]
    vocab = {p: i for i, p in enumerate(dict.fromkeys(pieces + known))}
    if form == "lines":
        merges = [f"{a} {b}" for a, b in pairs]
    elif form == "pairs":
        merges = [[a, b] for a, b in pairs]
    elif form == "tuples":
        merges = list(pairs)
    else:
        merges = [f"{a} {b}" if i % 2 else [a, b] for i, (a, b) in enumerate(pairs)]
    if version and form == "lines":
        merges.insert(0, "#version: 0.2")
    options = {"continuing_subword_prefix": prefix} if prefix else {}
    base.use_compiled(False)
    want = bpe_outcome(vocab, merges, **options)
    base.use_compiled(True, COMPILED)
    assert bpe_outcome(vocab, merges, **options) == want


@needs_compiled
def test_the_compiled_merge_reader_takes_only_plain_lists():
    vocab = {"a": 0, "b": 1, "ab": 2}
    assert COMPILED.vocab_merges(vocab, ["a b"]) is not None and COMPILED.vocab_merges(vocab, [["a", "b"]]) is not None
    for merges in ([], ["#version: 0.2", "a b"], ["a  b"], ["ab"], [("a", "b")], [["a", "b", "c"]], ["a x"], [["a", 1]]):
        assert COMPILED.vocab_merges(vocab, merges) is None, merges
    assert COMPILED.vocab_merges({"a": 0, "b": 1, "ab": 2**32}, ["a b"]) is None
    assert COMPILED.vocab_merges({"a": 0, "b": 1, "ab": True}, ["a b"]) is None
