"""Loading a ``tokenizer.json`` (issue 22 item 4): every family of ``tests/core/hf_files.py`` loaded
through ``model_files.load_path`` first with an empty cache, then from the entry that load wrote,
encodes as ``tokenizers`` does; an entry cut short is ignored, parsed again and written again as it
was. The C-speed paths of construction agree with the entry-by-entry ones they stand in for: the
numbers of a file (``hf_json_float`` against serde_json's digit loop), a Unigram vocabulary, a merge
list of pairs."""

from __future__ import annotations

import gc
import pickle
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

import hf_files  # noqa: E402
from hf_support import FUZZ  # noqa: E402

from tokscope.core.formats import tokenizer_json as hf  # noqa: E402
from tokscope.core.formats.tokenizer_json_models import _digit_loop_float, hf_json_float  # noqa: E402
from tokscope.core.models import bpe, unigram  # noqa: E402
from tokscope.core.text.errors import TokenizerFileError  # noqa: E402
from tokscope.sample_texts import read_sample  # noqa: E402
from tokscope.sources import cache, model_files  # noqa: E402

TEXTS = [read_sample("prose.txt")[:3000], read_sample("code.py")[:2000], " ".join(hf_files.LOOKALIKES),
         "Hello, wörld: 中文 and 😀 emoji\n\n  tabs\there"]


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.tables"))


@pytest.mark.parametrize("name", hf_files.FAMILIES)
def test_a_family_loads_cold_then_from_its_entry_as_tokenizers_encodes(name, tmp_path, monkeypatch):
    try:
        path = hf_files.save(name, tmp_path)
    except hf_files.Missing as exc:
        pytest.skip(str(exc))
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(folder))
    monkeypatch.setattr(cache, "MIN_CACHED_BYTES", 0)  # the small files too (wordlevel's is not cached)
    ref = tokenizers.Tokenizer.from_file(str(path))
    want = [ref.encode(text, add_special_tokens=False).ids for text in TEXTS]
    cold = model_files.load_path(path)
    (entry,) = _entries(folder)
    written = entry.read_bytes()
    warm = model_files.load_path(path)
    for tok in (cold, warm):
        assert [tok.encode(text, allowed_special="all") for text in TEXTS] == want
    assert warm.kind == cold.kind and warm.n_vocab == cold.n_vocab
    # an entry cut short is not trusted: the file is parsed again and the entry written again, whole
    entry.write_bytes(written[: len(written) // 2])
    again = model_files.load_path(path)
    assert [again.encode(text, allowed_special="all") for text in TEXTS] == want
    assert entry.read_bytes() == written


def test_the_collector_is_held_off_only_while_a_file_is_read():
    text = hf_files.build("llama3")
    assert gc.isenabled()
    seen = []
    original = bpe.BPE._setup  # the model's last step (its merge arrays may come from the compiled reader)

    def spy(self):
        seen.append(gc.isenabled())
        return original(self)

    bpe.BPE._setup = spy
    try:
        hf.from_json_text(text, "llama3")
    finally:
        bpe.BPE._setup = original
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:  # a caller that had it off keeps it off
        hf.from_json_text('{"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}', "w")
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(TokenizerFileError):
        hf.from_json_text('{"model": {"type": "WordLevel", "vocab": {"a": "x"}, "unk_token": "a"}}', "w")
    assert gc.isenabled()


NUMBERS = st.from_regex(r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?", fullmatch=True)


@FUZZ
@given(NUMBERS)
def test_the_regular_expression_reads_numbers_as_the_digit_loop(number):
    try:
        want = _digit_loop_float(number)
    except ValueError:
        with pytest.raises(ValueError):
            hf_json_float(number)
        return
    got = hf_json_float(number)
    assert got == want and str(got) == str(want)  # the sign of a zero too


def test_a_number_the_json_reader_would_not_hand_over_is_refused():
    for bad in ("", "-", "1.", ".5", "1e", "１２", "1_0"):
        with pytest.raises(ValueError):
            hf_json_float(bad)


ENTRIES = st.tuples(st.text(max_size=4), st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                                                   st.integers(-10**6, 10**6)))


@FUZZ
@given(st.lists(ENTRIES, min_size=1, max_size=30), st.booleans())
def test_a_unigram_vocabulary_reads_at_c_speed_as_entry_by_entry(entries, as_lists):
    vocab = [list(e) for e in entries] if as_lists else entries
    assert unigram._vocab_columns(vocab) == unigram._checked_columns(vocab)
    model = unigram.Unigram(vocab)
    ids = {}
    for i, (piece, _) in enumerate(entries):
        ids[piece] = i
    assert model.get_vocab() == ids
    assert model._longest == max((len(p) for p in ids if p), default=0)
    # the trie is built when first needed, and again after a pickle (which does not carry it)
    copy = pickle.loads(pickle.dumps(model))
    assert copy._trie_and_longest is None and copy._trie == model._trie


def test_a_bad_unigram_entry_is_still_named():
    for vocab, message in (([["a", 0.0], ["b", True]], "entry 1 ('b'): score True"),
                           ([["a", 0.0], "b"], "entry 1 'b' is not"), ([["a", 0.0], [1, 0.0]], "entry 1: piece 1")):
        assert unigram._vocab_columns(vocab) is None
        with pytest.raises(TokenizerFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
            unigram.Unigram(vocab)


@FUZZ
@given(st.lists(st.tuples(st.text(min_size=1, max_size=3), st.text(min_size=1, max_size=3)), max_size=20))
def test_a_merge_list_of_pairs_is_cut_as_the_loop_cuts_it(pairs):
    items = [list(p) for p in pairs]
    fast = bpe._columns_fast(items)
    assert fast == ([a for a, _ in pairs], [b for _, b in pairs])
    assert bpe.merge_columns(items) == fast


@FUZZ
@given(st.lists(st.text(alphabet="ab \x00#", max_size=5), min_size=1, max_size=20))
def test_a_merge_list_of_lines_is_cut_as_the_loop_cuts_it_or_refused(lines):
    kept = [line for line in lines if not line.startswith("#version")]
    if all(line.count(" ") == 1 for line in kept):
        want = [line.split(" ")[0] for line in kept], [line.split(" ")[1] for line in kept]
        assert bpe.merge_columns(lines) == want
    else:
        assert bpe._columns_fast(lines) is None
        with pytest.raises(TokenizerFileError, match="is not two tokens separated by one space"):
            bpe.merge_columns(lines)
