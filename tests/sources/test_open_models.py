"""Open models in tiktoken's format (Llama 3, Llama 4, Qwen, Tekken): ids equal their own code's.

The references are the models' own tokenizers from the registry packages that carry the files
(``llama-models``, ``mistral-common``; Qwen's package only ships the file, so its reference is a
``tiktoken.Encoding`` built as that package builds it). Files are read from the installed packages.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings

from tokscope.core.text.errors import DisallowedSpecialError
from tokscope.sample_texts import language_text, languages, read_sample
from tokscope.core.formats import tekken
from tokscope.sources import open_models
from tokscope.sources.builtin import SourceError

from helpers import lookalikes_of, unicode_texts

SAMPLES = [read_sample(n) for n in ("default.txt", "multiscript.txt", "code.py", "numbers.txt")] + [
    language_text(lang["code"]) for lang in languages()]


def _llama(version: str):
    pytest.importorskip("llama_models")
    module = pytest.importorskip(f"llama_models.{version}.tokenizer")
    from pathlib import Path

    ref = module.Tokenizer(Path(module.__file__).with_name("tokenizer.model"))
    return ref.model  # the tiktoken.Encoding Meta's code builds


def _qwen():
    import base64

    import tiktoken

    model = open_models.by_name("qwen")
    path = open_models.carrier_path(model)
    if path is None:
        pytest.skip("dashscope is not installed")
    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in path.read_text().splitlines() if line)}
    return tiktoken.Encoding("qwen", pat_str=open_models.QWEN_PATTERN, mergeable_ranks=ranks,
                             special_tokens=open_models.qwen_specials(len(ranks)))


@functools.cache
def _loaded(name: str):
    return open_models.load_named(name)


REFERENCES = {"llama3": lambda: _llama("llama3"), "llama4": lambda: _llama("llama4"), "qwen": _qwen}


@pytest.fixture(scope="module", params=sorted(REFERENCES))
def pair(request):
    ref = REFERENCES[request.param]()
    return _loaded(request.param), ref


def test_special_tokens_equal_the_models_own(pair):
    tok, ref = pair
    assert tok.special_tokens == dict(ref._special_tokens)
    assert tok.n_vocab == ref.n_vocab


def test_samples_in_24_languages_match(pair):
    tok, ref = pair
    for text in SAMPLES:
        assert tok.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
        assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")


TEXTS = unicode_texts(lookalikes_of([*open_models.llama3_specials(0), *open_models.llama4_specials(0)][:300]
                                    + [*open_models.qwen_specials(0)][:20] + list(tekken.DEFAULT_SPECIALS)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_any_text_matches(pair, text):
    tok, ref = pair
    assert tok.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
    assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    try:
        want = ref.encode(text)
    except ValueError:
        with pytest.raises(DisallowedSpecialError):
            tok.encode(text)
    else:
        assert tok.encode(text) == want


@functools.cache
def _tekken(file: str):
    mc = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    from pathlib import Path

    import mistral_common

    return mc.Tekkenizer.from_file(Path(mistral_common.__file__).parent / "data" / file)


@pytest.mark.parametrize("name", sorted(open_models.TEKKEN_CARRIED))
def test_tekken_matches_mistrals_own_code(name):
    ref = _tekken(open_models.TEKKEN_CARRIED[name][0])
    tok = _loaded(name)
    assert tok.n_vocab == ref.n_words
    for i in range(ref.num_special_tokens):  # the special tokens sit below the ranks
        assert tok.token_bytes(i).decode() == ref.id_to_piece(i)
    for text in SAMPLES:
        # Mistral's code encodes special-token text as ordinary text, as --special-as-text does
        assert tok.encode(text, disallowed_special=()) == ref.encode(text, bos=False, eos=False)
    assert tok.special_tokens["<s>"] == ref.bos_id and tok.special_tokens["</s>"] == ref.eos_id


@settings(max_examples=40, deadline=None)
@given(text=TEXTS)
def test_tekken_any_text(text):
    ref = _tekken(open_models.TEKKEN_CARRIED["tekken"][0])
    tok = _loaded("tekken")
    assert tok.encode(text, disallowed_special=()) == ref.encode(text, bos=False, eos=False)


def test_a_rank_file_is_recognized_by_its_hash(tmp_path):
    model = open_models.by_name("llama3")
    path = open_models.carrier_path(model)
    if path is None:
        pytest.skip("llama-models is not installed")
    copy = tmp_path / "tokenizer.model"
    copy.write_bytes(path.read_bytes())
    assert open_models.recognize(copy) is model
    assert open_models.load_rank_file(copy).encode("Hello world") == open_models.load_named("llama3").encode("Hello world")
    copy.write_bytes(path.read_bytes()[:-40] + b"\n")  # a truncated or edited copy is no known model
    with pytest.raises(SourceError, match="no model tokscope knows"):
        open_models.load_rank_file(copy)
    with pytest.raises(SourceError, match="wrong sha256"):
        open_models.load_rank_file(copy, model)


def test_malformed_tekken_files_are_one_line_errors(tmp_path):
    bad = tmp_path / "tekken.json"
    for content in ("{", '{"config": {"pattern": "x"}, "vocab": 3}', '{"config": {}, "vocab": []}',
                    '{"config": {"pattern": ".", "default_num_special_tokens": 1, "default_vocab_size": 3},'
                    ' "vocab": [{"rank": 0, "token_bytes": "!!"}, {"rank": 1, "token_bytes": "YQ=="}]}'):
        bad.write_text(content)
        with pytest.raises(SourceError) as info:
            open_models.load_tekken(bad)
        assert "\n" not in str(info.value)


def test_listing_names_each_model_and_where_it_comes_from():
    infos = {i.name: i for i in open_models.listing()}
    assert set(infos) == set(open_models.names())
    for info in infos.values():
        assert info.kind == "open model" and (info.available or "pip install" in info.detail)


def test_listed_sizes_are_the_loaded_ones():
    for info in open_models.listing():
        if info.available:
            assert _loaded(info.name).n_vocab == info.n_vocab
