"""Hugging Face's BPE model (``tokscope.core.models.bpe``) against ``tokenizers``: random
vocabularies with every option, vocabularies trained here on the samples, and Mistral's
SentencePiece BPE model; the reference loop, the heap and the long-word cuts against each other;
the explorer's parents and replay; errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hf_support import (
    FUZZ,
    SMALL_FUZZ,
    hf_encode,
    hf_model_from_json,
    ours_from_json,
    bare_encode,
    package_file,
    pre_tokenized_words,
    sample_texts,
    sentencepiece_bpe,
    texts_st,
    trained,
    with_byte_tokens,
)
from tokenizers import models as hf_models

from tokscope.core.models import bpe as bpe_merges
from tokscope.core.models.bpe import BPE, parse_merges
from tokscope.core.reference import merge_list_reference as merge_reference
from tokscope.core.text.errors import TokenizerFileError, UnsupportedComponentError
from tokscope.core.formats.tokenizer_json_models import from_json

PREFIX = "##"
SUFFIX = "</w>"
POOL = ["a", "b", "c", "é", "中", "👍", "\u0301", " ", "▁", "#", "<", "x"]
STRANGERS = ["z", "ß", "€", "😀", "ж", "\u200d", "字"]


@st.composite
def bpe_specs(draw, prefix: bool = False, suffix: bool = False):
    """A random BPE model: its vocab, merges and options, and words to encode with it.

    Merges join random pairs of tokens already made, so several pairs often make one token, and a
    pair is sometimes listed again later (Hugging Face keeps the later rank)."""
    alphabet = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=6, unique=True))
    # a token is (text, continuing, end of word)
    tokens: list[tuple[str, bool, bool]] = []
    for ch in alphabet:
        for cont in ((False, True) if prefix else (False,)):
            for end in ((False, True) if suffix else (False,)):
                tokens.append((ch, cont, end))

    def spell(tok):
        text, cont, end = tok
        return (PREFIX if cont else "") + text + (SUFFIX if end else "")

    merges: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(0, 60))):
        if merges and draw(st.integers(0, 9)) == 0:
            merges.append(draw(st.sampled_from(merges)))
            continue
        lefts = [t for t in tokens if not t[2]] if suffix else tokens
        rights = [t for t in tokens if t[1]] if prefix else tokens
        if not lefts or not rights:
            break
        left = draw(st.sampled_from(lefts))
        right = draw(st.sampled_from(rights))
        result = (left[0] + right[0], left[1], right[2])
        if result not in tokens:
            tokens.append(result)
        merges.append((spell(left), spell(right)))
    strings = list(dict.fromkeys(spell(t) for t in tokens))
    extras = []
    if draw(st.booleans()):
        extras.append("<unk>")
    byte_fallback = draw(st.booleans())
    if byte_fallback:
        missing = set(draw(st.lists(st.integers(0, 255), max_size=4)))
        extras += [f"<0x{b:02X}>" for b in range(256) if b not in missing]
    strings += [e for e in extras if e not in strings]
    order = draw(st.permutations(range(len(strings))))
    vocab = {s: i for s, i in zip(strings, order)}
    options = {
        "unk_token": "<unk>" if "<unk>" in vocab or draw(st.integers(0, 5)) == 0 else None,
        "fuse_unk": draw(st.booleans()),
        "byte_fallback": byte_fallback,
        "ignore_merges": draw(st.integers(0, 3)) == 0,
    }
    if prefix:
        options["continuing_subword_prefix"] = PREFIX
    if suffix:
        options["end_of_word_suffix"] = SUFFIX
    # words made mostly of the texts of tokens (so that long merges happen), some strangers
    texts = sorted({t[0] for t in tokens})
    parts = st.one_of(st.sampled_from(texts), st.sampled_from(texts), st.sampled_from(alphabet), st.sampled_from(STRANGERS))
    words = draw(st.lists(st.lists(parts, min_size=1, max_size=12).map("".join), min_size=1, max_size=5))
    return vocab, merges, options, words


def _both(vocab, merges, options, word):
    """Our tokens and Hugging Face's, or the two errors."""
    hf = hf_models.BPE(vocab, merges, **options)
    ours = BPE(vocab, merges, **options)
    try:
        expected = hf_encode(hf, word)
    except Exception as exc:  # the unknown token missing from the vocabulary
        with pytest.raises(TokenizerFileError):
            ours.tokenize(word)
        return None, exc
    return ours.tokenize(word), expected


def _check(spec):
    vocab, merges, options, words = spec
    offsets = not (
        options.get("byte_fallback") and (options.get("continuing_subword_prefix") or options.get("end_of_word_suffix"))
    )
    for word in words:
        got, expected = _both(vocab, merges, options, word)
        if got is None:
            continue
        if offsets:
            assert got == expected, (word, options)
        else:  # see test_prefix_with_byte_fallback_offsets_are_clamped
            assert [t for t, _, _ in got] == [t for t, _, _ in expected], (word, options)


@FUZZ
@given(bpe_specs())
def test_random_vocabularies_match_tokenizers(spec):
    _check(spec)


@FUZZ
@given(bpe_specs(prefix=True))
def test_random_vocabularies_with_a_continuing_prefix_match_tokenizers(spec):
    _check(spec)


@FUZZ
@given(bpe_specs(suffix=True))
def test_random_vocabularies_with_an_end_of_word_suffix_match_tokenizers(spec):
    _check(spec)


@SMALL_FUZZ
@given(bpe_specs(prefix=True, suffix=True))
def test_random_vocabularies_with_prefix_and_suffix_match_tokenizers(spec):
    _check(spec)


@FUZZ
@given(bpe_specs(), st.data())
def test_scan_heap_and_reference_agree(spec, data):
    vocab, merges, options, words = spec
    options = {**options, "unk_token": "<unk>" if "<unk>" in vocab else None}
    model = BPE(vocab, merges, **options)
    reference = model.pair_merges()
    word = "".join(words) * data.draw(st.integers(1, 3))
    initial = model.initial_symbols(word)
    assert model._symbols(word)[0] == initial  # the run-copying path builds the same symbols
    expected = merge_reference(initial, reference)
    scan = list(initial)
    heap = list(initial)
    model._merge_scan(scan)
    model._merge_heap(heap)
    assert scan == expected
    assert heap == expected
    assert model.merge_ids(initial) == expected  # the merge loop in use (compiled or pure)
    if not options["ignore_merges"] or vocab.get(word) is None:
        assert [t for t, _, _ in model.tokenize(word)] == expected


@FUZZ
@given(bpe_specs(), st.data())
def test_long_words_cut_where_no_merge_crosses(spec, data):
    vocab, merges, options, words = spec
    model = BPE(vocab, merges, **options)
    word = "".join(data.draw(st.permutations(words * data.draw(st.integers(1, 6)))))
    if options["ignore_merges"] and word in vocab:
        return
    try:
        expected = model._encode_word(word)
    except TokenizerFileError:
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bpe_merges, "CUT_THRESHOLD", 2)
        assert model.tokenize(word) == expected


@FUZZ
@given(bpe_specs())
def test_replay_ends_in_the_tokens_and_follows_the_merge_order(spec):
    vocab, merges, options, words = spec
    model = BPE(vocab, merges, **options)
    for word in words:
        try:
            tokens = [t for t, _, _ in model.tokenize(word)]
        except TokenizerFileError:
            continue
        replay = model.replay(word)
        assert list(replay.tokens) == tokens
        if replay.whole_word:
            assert replay.steps == () and len(tokens) == 1
            continue
        assert [s.id for s in replay.initial] == model.initial_symbols(word)
        current = [s.id for s in replay.initial]
        for step in replay.steps:
            assert step.before == tuple(current)
            allowed = [c for c in step.candidates if c.rank is not None]
            best = min(c.rank for c in allowed)
            # the lowest rank, leftmost on ties (the vocabularies here have one id per token)
            assert step.rule.rank == best
            assert step.position == min(c.position for c in allowed if c.rank == best)
            current[step.position : step.position + 2] = [step.rule.result]
            assert step.after == tuple(current)
        assert all(c.rank is None for c in _pairs(model, current))


def _pairs(model, ids):
    return [
        bpe_merges.PairCandidate(i, a, b, model.merge_rank(a, b), model.merge_result(a, b))
        for i, (a, b) in enumerate(zip(ids, ids[1:]))
    ]


def test_replay_steps_of_a_small_word():
    vocab = {"h": 0, "u": 1, "g": 2, "ug": 3, "hug": 4, "<unk>": 5}
    model = BPE(vocab, ["u g", "h ug"], unk_token="<unk>")
    replay = model.replay("hug!")
    assert [(s.kind, s.start, s.end) for s in replay.initial] == [("char", 0, 1), ("char", 1, 2), ("char", 2, 3), ("unk", 3, 4)]
    assert [(s.number, s.position, s.rule.rank, s.after) for s in replay.steps] == [(1, 1, 0, (0, 3, 2, 5)) if False else (1, 1, 0, (0, 3, 5)), (2, 0, 1, (4, 5))]
    first = replay.steps[0]
    assert [(c.left, c.right, c.rank) for c in first.candidates] == [(0, 1, None), (1, 2, 0), (2, 5, None)]
    assert replay.tokens == (4, 5) and replay.replayed and not replay.whole_word
    dropped = BPE(vocab, ["u g", "h ug"]).replay("h!ug")
    assert dropped.dropped == (1,) and dropped.tokens == (4,)
    assert not BPE(vocab, ["u g"]).replay("hug" * 10, limit=5).replayed


def test_parents_rank_and_every_merge_making_a_token():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    model = BPE(vocab, ["a b", "b c", "ab c", "a bc", "a b"])
    assert model.merge_rank("a", "b") == 4  # listed twice: the later rank, as Hugging Face
    assert model.merge_rank(0, 1) == 4 and model.merge_rank("b", "a") is None
    assert model.merge_result("ab", "c") == 5
    assert [(r.rank, r.left, r.right) for r in model.merges_into(5)] == [(2, 3, 2), (3, 0, 4)]
    assert model.parents(5) == bpe_merges.Parents(3, 2)
    assert model.parents(3) == bpe_merges.Parents(0, 1)
    assert model.parents(0) is None
    assert len(model.merges) == 5


def test_a_token_made_by_two_pairs():
    # "abc" is made by ("ab", "c") at rank 1 and by ("a", "bc") at rank 3: which one applies
    # depends on which pair the word reaches first.
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "d": 6}
    merges = [("a", "b"), ("ab", "c"), ("b", "c"), ("a", "bc")]
    for word in ["abc", "abcd", "dabc", "abcabc", "bcabc"]:
        hf = hf_models.BPE(vocab, merges)
        assert BPE(vocab, merges).tokenize(word) == hf_encode(hf, word)
    merges = [("b", "c"), ("a", "bc"), ("a", "b"), ("ab", "c")]
    assert BPE(vocab, merges).replay("abc").steps[-1].rule.rank == 1


@pytest.mark.parametrize("option", ["continuing_subword_prefix", "end_of_word_suffix"])
def test_prefix_or_suffix_with_byte_fallback_offsets_are_clamped(option):
    """Known deviation: with a continuing prefix (or end-of-word suffix) and byte fallback,
    Hugging Face turns the prefix itself into byte tokens too (``##é`` -> four bytes) and counts
    each as one byte of the word, so its offsets run past the end of the text. The ids match;
    ours stay inside the word."""
    vocab = {"a": 0, "##a": 1, "a</w>": 1, **{f"<0x{b:02X}>": 2 + b for b in range(256)}}
    options = {option: "##" if option == "continuing_subword_prefix" else "</w>", "byte_fallback": True}
    hf = hf_models.BPE(vocab, [], **options)
    expected = hf_encode(hf, "aé")
    got = BPE(vocab, [], **options).tokenize("aé")
    assert [t for t, _, _ in got] == [t for t, _, _ in expected]
    assert len(got) > 3
    assert max(e for _, _, e in expected) > len("aé")
    assert max(e for _, _, e in got) <= len("aé")


def test_byte_fallback_and_unknowns_keep_hugging_faces_order():
    # é has no <0xA9> token: it becomes <unk>, which Hugging Face adds only at the next known
    # character, after the bytes of € that came in between.
    vocab = {"a": 0, "b": 1, "<unk>": 2, **{f"<0x{b:02X}>": 3 + b for b in range(256) if b != 0xA9}}
    for fuse in (False, True):
        options = {"unk_token": "<unk>", "byte_fallback": True, "fuse_unk": fuse}
        hf = hf_models.BPE(vocab, [], **options)
        for word in ["aé€b", "é€é", "éé€", "aéb€"]:
            assert BPE(vocab, [], **options).tokenize(word) == hf_encode(hf, word), (word, fuse)


def test_unknown_characters_without_an_unknown_token_are_dropped():
    vocab = {"a": 0, "b": 1, "ab": 2}
    hf = hf_models.BPE(vocab, [("a", "b")])
    for word in ["axb", "éab", "aéb", "xx"]:
        assert BPE(vocab, [("a", "b")]).tokenize(word) == hf_encode(hf, word)


def test_ignore_merges_takes_the_word_as_it_is():
    vocab = {"a": 0, "b": 1, "ab": 2, "ab</w>": 3, "b</w>": 4}
    options = {"ignore_merges": True, "end_of_word_suffix": "</w>"}
    hf = hf_models.BPE(vocab, [("a", "b</w>")], **options)
    ours = BPE(vocab, [("a", "b</w>")], **options)
    for word in ["ab", "abab", "b"]:
        assert ours.tokenize(word) == hf_encode(hf, word)


# ----- trained and real vocabularies ------------------------------------------------------------

TRAINED = [
    ("plain", {"vocab_size": 600}),
    ("prefix", {"vocab_size": 700, "continuing_subword_prefix": "##"}),
    ("suffix", {"vocab_size": 700, "end_of_word_suffix": "</w>"}),
    ("small alphabet", {"vocab_size": 400, "limit_alphabet": 60}),
    ("fused unknowns", {"vocab_size": 400, "limit_alphabet": 60, "fuse_unk": True}),
    ("byte level", {"vocab_size": 800, "pre": "bytelevel"}),
]


def _trained_pair(options, byte_fallback=False, missing=()):
    obj = trained("bpe", **options)["model"]
    if byte_fallback:
        obj = with_byte_tokens(obj, missing=missing)
    return ours_from_json(obj), hf_model_from_json(obj)


@pytest.mark.parametrize("name,options", TRAINED, ids=[t[0] for t in TRAINED])
@pytest.mark.parametrize("byte_fallback", [False, True], ids=["", "byte fallback"])
def test_trained_vocabularies_match_on_every_sample(name, options, byte_fallback):
    ours, hf = _trained_pair(options, byte_fallback, missing=(0xA9, 0x80, 0xE0))
    pre = options.get("pre", "whitespace")
    # with a prefix or suffix, byte fallback offsets differ (see test_..._offsets_are_clamped)
    ids_only = byte_fallback and ("continuing_subword_prefix" in options or "end_of_word_suffix" in options)

    def same(text):
        got, expected = ours.tokenize(text), bare_encode(hf, text)
        if ids_only:
            got, expected = [t for t, _, _ in got], [t for t, _, _ in expected]
        assert got == expected, text

    for text in sample_texts().values():
        for word in pre_tokenized_words(text, pre):
            same(word)
        same(text[:300])  # a long word of many scripts, through the cut and heap paths


@SMALL_FUZZ
@given(texts_st)
def test_trained_vocabularies_match_on_generated_text(text):
    for options in ({"vocab_size": 400, "limit_alphabet": 60}, {"vocab_size": 700, "continuing_subword_prefix": "##"}):
        ours, hf = _trained_pair(options, True, missing=(0xA9,))
        expected = bare_encode(hf, text)
        got = ours.tokenize(text)
        if options.get("continuing_subword_prefix"):
            got, expected = [t for t, _, _ in got], [t for t, _, _ in expected]
        assert got == expected


@pytest.fixture(scope="module")
def mistral(list_merge_loop):  # made again for each merge loop: the chunk cache is the model's
    path = package_file("mistral_common", "data", "tokenizer.model.v1")
    vocab, merges = sentencepiece_bpe(str(path))
    options = {"unk_token": "<unk>", "fuse_unk": True, "byte_fallback": True}
    return BPE(vocab, merges, **options), hf_models.BPE(vocab, merges, **options)


def _llama_word(text: str) -> str:
    """What a Llama 2 / Mistral v0.1 tokenizer.json hands its model: the whole text as one word
    (no pre-tokenizer), spaces turned into ``▁`` and one ``▁`` in front."""
    return "▁" + text.replace(" ", "▁")


def test_mistral_v1_matches_on_every_sample_as_one_word(mistral):
    ours, hf = mistral
    for name, text in sample_texts().items():
        word = _llama_word(text)
        assert ours.tokenize(word) == hf_encode(hf, word), name


@FUZZ
@given(texts_st)
def test_mistral_v1_matches_on_generated_text(mistral, text):
    ours, hf = mistral
    word = _llama_word(text)
    assert ours.tokenize(word) == hf_encode(hf, word)


def test_mistral_v1_long_repetitive_text_uses_cuts_and_heap(mistral):
    ours, hf = mistral
    word = _llama_word(("ab" * 300 + " ") * 3 + "€" * 200 + "字" * 300 + "aaaa" * 100)
    assert ours.tokenize(word) == hf_encode(hf, word)


@pytest.fixture(scope="module")
def gpt2(list_merge_loop):
    """GPT-2's byte-level BPE as a Hugging Face vocab and merge list, built from the gpt2 ranks the
    project's sources load (each token's merge is its parents)."""
    from tokscope.core.text.byte_alphabet import to_alphabet
    from tokscope.sources import registry

    tok = registry.load("gpt2")
    vocab = {to_alphabet(tok.token_bytes(i)): i for i in range(256 + tok.n_merges)}
    merges = []
    for i in range(256, 256 + tok.n_merges):
        p = tok.parents(i)
        merges.append((to_alphabet(tok.token_bytes(p.left)), to_alphabet(tok.token_bytes(p.right))))
    return tok, BPE(vocab, merges), hf_models.BPE(vocab, merges)


def test_gpt2_as_a_merge_list_matches_tokenizers_and_tiktoken_rules(gpt2):
    from tokscope.core.text.byte_alphabet import to_alphabet

    tok, ours, hf = gpt2
    for name, text in sample_texts().items():
        for chunk in tok.chunks(text):
            piece = chunk.text
            word = to_alphabet(piece.encode())
            got = [t for t, _, _ in ours.tokenize(word)]
            assert got == [t for t, _, _ in hf_encode(hf, word)], (name, piece)
            assert got == list(tok.encode_chunk(piece)), (name, piece)


@FUZZ
@given(texts_st)
def test_gpt2_as_a_merge_list_on_generated_text(gpt2, text):
    from tokscope.core.text.byte_alphabet import to_alphabet

    tok, ours, hf = gpt2
    for chunk in tok.chunks(text):
        word = to_alphabet(chunk.text.encode("utf-8", "surrogatepass"))
        assert ours.tokenize(word) == hf_encode(hf, word)


def test_the_sentencepiece_reader_of_these_tests():
    """The helper that reads Mistral's .model file without protobuf, against sentencepiece and the
    merges transformers derives (when those are installed)."""
    spm = pytest.importorskip("sentencepiece")
    convert = pytest.importorskip("transformers.convert_slow_tokenizer")
    from hf_support import sentencepiece_pieces

    path = str(package_file("mistral_common", "data", "tokenizer.model.v1"))
    pieces = sentencepiece_pieces(path)
    sp = spm.SentencePieceProcessor(model_file=path)
    assert [(p, s) for p, s, _ in pieces] == [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    vocab, merges = sentencepiece_bpe(path)
    assert merges == [tuple(m) for m in convert.generate_merges(vocab)]


# ----- the file format and errors -----------------------------------------------------------------


def test_merges_in_both_formats_and_version_lines():
    assert parse_merges(["#version: 0.2", "a b", "ab c"]) == [("a", "b"), ("ab", "c")]
    assert parse_merges([["a b", "c"], ("x", "y")]) == [("a b", "c"), ("x", "y")]
    vocab = {"a b": 0, "c": 1, "a bc": 2}
    assert BPE(vocab, [["a b", "c"]]).merge_rank("a b", "c") == 0
    for bad in (["a b c"], ["ab"], [["a", "b", "c"]], ["a b", ["a", "b"]], [3]):
        with pytest.raises(TokenizerFileError):
            parse_merges(bad)


def test_from_json_reads_a_saved_model():
    obj = trained("bpe", vocab_size=300, continuing_subword_prefix="##")["model"]
    text = json.loads(json.dumps(obj))
    assert from_json(text).get_vocab() == obj["vocab"]
    legacy = {**obj, "merges": [" ".join(m) for m in obj["merges"]]}
    assert from_json(legacy).merges == from_json(obj).merges
    del legacy["type"]
    assert from_json(legacy).kind == "bpe"


@pytest.mark.parametrize(
    "merges,needle",
    [([("a", "q")], "'q' is not in the vocabulary"), ([("q", "a")], "'q'"), ([("b", "b")], "'bb'")],
)
def test_a_merge_naming_a_missing_token_is_refused(merges, needle):
    with pytest.raises(TokenizerFileError, match=needle):
        BPE({"a": 0, "b": 1, "ab": 2}, merges)
    with pytest.raises(Exception):
        hf_models.BPE({"a": 0, "b": 1, "ab": 2}, merges)


def test_no_whole_word_shortcut_without_ignore_merges():
    # "abc" is a token, but no merge builds it from "ab" + "c": Hugging Face gives two tokens, so
    # the core may not take a word that is a token as one (only ignore_merges does that).
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    merges = [("a", "b"), ("b", "c")]
    assert BPE(vocab, merges).tokenize("abc") == hf_encode(hf_models.BPE(vocab, merges), "abc") == [(3, 0, 2), (2, 2, 3)]
    assert BPE(vocab, merges, ignore_merges=True).tokenize("abc") == [(5, 0, 3)]


def test_prefix_cut_blindly_as_hugging_face_does():
    # Hugging Face drops len(prefix) bytes off the right part whether or not it has the prefix.
    vocab = {"a": 0, "bcd": 1, "ad": 2}
    assert BPE(vocab, [("a", "bcd")], continuing_subword_prefix="##").merge_result("a", "bcd") == 2
    with pytest.raises(TokenizerFileError, match="shorter than the prefix"):
        BPE({"a": 0, "b": 1}, [("a", "b")], continuing_subword_prefix="##")


def test_dropout_is_refused_but_zero_is_fine():
    vocab = {"a": 0}
    with pytest.raises(UnsupportedComponentError, match="dropout"):
        BPE(vocab, [], dropout=0.1)
    with pytest.raises(UnsupportedComponentError, match="model 'BPE'"):
        from_json({"type": "BPE", "vocab": vocab, "merges": [], "dropout": 0.5})
    with pytest.raises(TokenizerFileError, match="probability"):
        BPE(vocab, [], dropout=1.5)
    assert BPE(vocab, [], dropout=0.0).tokenize("a") == [(0, 0, 1)]


def test_bad_vocabularies_and_a_missing_unknown_token():
    for bad in ({"a": -1}, {"a": "1"}, {"a": 1.0}, {"a": True}, {"a": 2**32}, ["a"]):
        with pytest.raises(TokenizerFileError):
            BPE(bad, [])
    model = BPE({"a": 0}, [], unk_token="<unk>")
    with pytest.raises(TokenizerFileError, match="unknown token '<unk>'"):
        model.tokenize("b")
    assert model.tokenize("a") == [(0, 0, 1)]
    with pytest.raises(TokenizerFileError):
        from_json({"type": "BPE", "vocab": {}})


def test_two_tokens_of_one_id():
    """Known deviation: Hugging Face keeps one of two tokens that share an id for ``id_to_token``
    (which one depends on its hash map); tokscope keeps the first. Merging then follows Hugging
    Face's heap exactly, stale-entry check by result id included."""
    vocab = {"a": 0, "b": 1, "ab": 2, "x": 2, "c": 3, "abc": 4}
    model = BPE(vocab, [("a", "b"), ("ab", "c")])
    assert model.id_to_token(2) == "ab" and model._always_heap
    hf = hf_models.BPE(vocab, [("a", "b"), ("ab", "c")])
    for word in ["abc", "ababc", "xc"]:
        assert [t for t, _, _ in model.tokenize(word)] == [t for t, _, _ in hf_encode(hf, word)]

