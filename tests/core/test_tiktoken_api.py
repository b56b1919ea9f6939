"""tiktoken's ``Encoding`` API on the core tokenizer, held to tiktoken itself.

Each test calls the same method on a tokscope tokenizer and on the ``tiktoken.Encoding`` built
from the same ranks, pattern and special tokens (``reference_for``), and wants the same result or
the same kind of error. Deviations are named in the test that shows them.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest
from helpers import lookalikes_of, unicode_texts
from hypothesis import given, settings
from hypothesis import strategies as st

import tokscope
from tokscope.core import Tokenizer
from tokscope.sources.tiktoken_adapter import model_table, reference_for

NAMES = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
SOME = ["gpt2", "cl100k_base", "o200k_base"]

_refs: dict[str, object] = {}


def pair(name: str):
    tok = tokscope.get_encoding(name)
    if name not in _refs:
        _refs[name] = reference_for(tok)
    return tok, _refs[name]


def outcome(fn, *args, **kwargs):
    """The result of a call, or the kind of error it raised (so both sides can be compared)."""
    try:
        return ("ok", fn(*args, **kwargs))
    except (KeyError, ValueError, TypeError, OverflowError, UnicodeError) as exc:
        for kind in (UnicodeError, KeyError, OverflowError, TypeError, ValueError):
            if isinstance(exc, kind):
                return ("error", kind.__name__)
        raise  # pragma: no cover


TEXT = "hello world <|endoftext|> 请考试我的软件！12345\n\n  x 👍 ' s 'll\t\r\n"
BATCH = ["hello world", "goodbye world", "", "  \n", "<|endoftext|> x", "نص عربي", "\ud83d lone"]


# ----- the package's entry points ------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_get_encoding_returns_the_core_tokenizer_tiktoken_agrees_with(name):
    tok, ref = pair(name)
    assert isinstance(tok, Tokenizer) and tok is tokscope.get_encoding(name)
    assert tok.name == ref.name
    assert (tok.n_vocab, tok.max_token_value) == (ref.n_vocab, ref.max_token_value)
    assert tok.special_tokens_set == ref.special_tokens_set
    assert tok.encode(TEXT, allowed_special="all") == ref.encode(TEXT, allowed_special="all")


def test_get_encoding_takes_aliases_and_files_and_refuses_unknown_names(tmp_path):
    assert tokscope.get_encoding("o200k") is tokscope.get_encoding("o200k_base")
    with pytest.raises(ValueError, match="unknown encoding"):
        tokscope.get_encoding("no_such_encoding")
    from tokscope.core.train.trainer import train
    from tokscope.core.formats import saved as serialize

    result = train(["low lower lowest " * 20], merges=5, pattern=r" ?\S+|\s+")
    path = tmp_path / "mine.json"
    serialize.save(path, serialize.from_result(result, "mine"))
    tok = tokscope.get_encoding(str(path))
    assert tok.encode_batch(["lowest low"]) == [result.tokenizer().encode("lowest low")]


def test_list_encoding_names_is_tiktokens():
    import tiktoken

    assert tokscope.list_encoding_names() == tiktoken.list_encoding_names()


@pytest.mark.parametrize("model", ["gpt2", "gpt-2", "text-davinci-003", "text-davinci-edit-001", "gpt-3.5-turbo-0301",
                                   "gpt-4", "gpt-4-0613", "gpt-4o", "gpt-4o-2024-05-13", "gpt-oss-120b", "o1", "o3-mini",
                                   "gpt-5", "ft:gpt-4o:org::id", "text-embedding-3-small", "davinci", "ada"])
def test_encoding_for_model_follows_tiktokens_table(model):
    import tiktoken

    assert tokscope.encoding_name_for_model(model) == tiktoken.encoding_name_for_model(model)
    assert tokscope.encoding_for_model(model).name == tiktoken.encoding_name_for_model(model)


def test_every_model_in_tiktokens_table_maps_to_an_encoding_tokscope_loads():
    exact, prefixes = model_table()
    assert exact and prefixes
    for model, name in exact.items():
        assert tokscope.encoding_name_for_model(model) == name
    for prefix, name in prefixes.items():
        assert tokscope.encoding_name_for_model(prefix + "x") == name
    assert set(exact.values()) | set(prefixes.values()) <= set(tokscope.list_encoding_names())


def test_an_unknown_model_is_a_key_error_naming_tokscope():
    with pytest.raises(KeyError, match="tokscope.get_encoding"):
        tokscope.encoding_name_for_model("no-such-model")


def test_import_tokscope_loads_neither_tiktoken_nor_the_core():
    code = "import sys, tokscope; print(sorted(m for m in sys.modules if m.startswith(('tiktoken', 'tokscope.', 'regex', 'typing'))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# ----- batches --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SOME)
def test_batches_match_tiktoken(name):
    tok, ref = pair(name)
    for kwargs in ({}, {"allowed_special": "all"}, {"disallowed_special": ()}, {"allowed_special": {"<|endoftext|>"}},
                   {"allowed_special": {"<|endoftext|>", "<|not_special_here|>"}}, {"num_threads": 1}):
        assert outcome(tok.encode_batch, BATCH, **kwargs) == outcome(ref.encode_batch, BATCH, **kwargs)
    assert outcome(tok.encode_batch, BATCH) == ("error", "ValueError")  # the special token is refused
    assert tok.encode_ordinary_batch(BATCH) == ref.encode_ordinary_batch(BATCH)
    assert tok.encode_ordinary_batch(BATCH, num_threads=2) == ref.encode_ordinary_batch(BATCH, num_threads=2)
    ids = ref.encode_batch(BATCH, disallowed_special=()) + [[], [tok.max_token_value], ref.encode("é")[:1]]
    assert tok.decode_batch(ids) == ref.decode_batch(ids)
    assert tok.decode_bytes_batch(ids) == ref.decode_bytes_batch(ids)
    assert outcome(tok.decode_batch, ids, errors="strict") == outcome(ref.decode_batch, ids, errors="strict")
    assert tok.decode_batch(ids, errors="ignore", num_threads=3) == ref.decode_batch(ids, errors="ignore", num_threads=3)


def test_batches_keep_order_and_take_any_iterable():
    tok, ref = pair("cl100k_base")
    texts = [f"line {i} " * (i % 7) for i in range(200)]
    assert tok.encode_ordinary_batch(iter(texts)) == ref.encode_ordinary_batch(texts)
    assert tok.encode_batch(texts, num_threads=4) == [tok.encode(t) for t in texts]
    assert tok.encode_ordinary_batch([]) == [] == tok.decode_batch([])


@settings(max_examples=60, deadline=None)
@given(batch=st.lists(unicode_texts(lookalikes_of(["<|endoftext|>", "<|fim_prefix|>"])), max_size=5))
def test_batch_roundtrip_matches_tiktoken(batch):
    tok, ref = pair("cl100k_base")
    encoded = tok.encode_batch(batch, allowed_special="all")
    assert encoded == ref.encode_batch(batch, allowed_special="all")
    assert tok.decode_batch(encoded) == ref.decode_batch(encoded)


# ----- single tokens --------------------------------------------------------------------------------


def shared_special_ids(tok) -> set[int]:
    """Ids that several special tokens share (o200k_harmony's 200018: ``<|endofprompt|>`` from
    o200k_base and ``<|reserved_200018|>`` from its reserved range)."""
    seen: dict[int, int] = {}
    for token_id in tok.special_tokens.values():
        seen[token_id] = seen.get(token_id, 0) + 1
    return {token_id for token_id, n in seen.items() if n > 1}


@pytest.mark.parametrize("name", NAMES)
def test_single_tokens_match_tiktoken_across_the_vocabulary(name):
    tok, ref = pair(name)
    step = 7 if tok.n_vocab > 60_000 else 3
    shared = shared_special_ids(tok)
    for token in [*range(0, tok.n_vocab, step), *tok.special_tokens.values(), tok.n_vocab, tok.n_vocab + 5]:
        if token in shared:
            continue  # see test_an_id_two_special_tokens_share_decodes_as_tiktoken_decodes_it
        got = outcome(tok.decode_single_token_bytes, token)
        assert got == outcome(ref.decode_single_token_bytes, token)
        if got[0] == "ok":
            assert tok.encode_single_token(got[1]) == ref.encode_single_token(got[1]) == token
    for special, token in tok.special_tokens.items():
        assert tok.encode_single_token(special) == ref.encode_single_token(special) == token
    some = [0, 1, *(i for i in tok.special_tokens.values() if i not in shared)]
    assert tok.decode_tokens_bytes(some) == ref.decode_tokens_bytes(some)


def test_an_id_two_special_tokens_share_decodes_as_tiktoken_decodes_it():
    tok, ref = pair("o200k_harmony")
    assert shared_special_ids(tok) == {200018}
    assert ref.decode_single_token_bytes(200018) == b"<|endofprompt|>" == ref.decode_bytes([200018])
    assert tok.decode_bytes([200018]) == ref.decode_bytes([200018])


@pytest.mark.parametrize("arg", [b"not a single token at all", "not a single token at all", "\ud800", 5, None,
                                 bytearray(b"a"), b"\xff\xfe"])
def test_encode_single_token_errors_match_tiktoken(arg):
    tok, ref = pair("cl100k_base")
    assert outcome(tok.encode_single_token, arg) == outcome(ref.encode_single_token, arg)


@pytest.mark.parametrize("arg", [-1, 2**32, 2**40, 100_256 + 10_000, "5", 5.0, None, True])
def test_decode_single_token_bytes_errors_match_tiktoken(arg):
    tok, ref = pair("cl100k_base")
    assert outcome(tok.decode_single_token_bytes, arg) == outcome(ref.decode_single_token_bytes, arg)
    assert outcome(tok.decode_tokens_bytes, [arg]) == outcome(ref.decode_tokens_bytes, [arg])


def test_eot_token_and_special_token_facts():
    for name in NAMES:
        tok, ref = pair(name)
        assert tok.eot_token == ref.eot_token
        for token in (0, tok.eot_token, tok.max_token_value):
            assert tok.is_special_token(token) == ref.is_special_token(token)
    plain = Tokenizer("plain", {bytes([b]): b for b in range(256)}, r"\S+|\s+")
    with pytest.raises(KeyError):
        plain.eot_token  # noqa: B018 -- tiktoken raises KeyError too


def test_token_byte_values_match_tiktoken():
    for name in ("gpt2", "o200k_base"):
        tok, ref = pair(name)
        assert tok.token_byte_values() == ref.token_byte_values()


# ----- offsets --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["hello world", "hello world<|endoftext|> green cow", "我非常渴望与人工智能一起工作",
                                  "நடிகர் சூர்யா", " Ġ除", "", "a\u0301👍🏽 x"])
def test_decode_with_offsets_matches_tiktoken(text):
    for name in SOME:
        tok, ref = pair(name)
        ids = ref.encode(text, allowed_special="all")
        assert tok.decode_with_offsets(ids) == ref.decode_with_offsets(ids)


def test_decode_with_offsets_refuses_invalid_utf8_as_tiktoken():
    tok, ref = pair("cl100k_base")
    ids = ref.encode("é")
    partial = [ref.encode_single_token(b"\xc3")] if b"\xc3" in ref.token_byte_values() else ids[:1]
    assert outcome(tok.decode_with_offsets, partial) == outcome(ref.decode_with_offsets, partial)


@settings(max_examples=80, deadline=None)
@given(text=unicode_texts(lookalikes_of(["<|endoftext|>"])))
def test_decode_with_offsets_matches_tiktoken_on_any_text(text):
    tok, ref = pair("o200k_base")
    ids = ref.encode(text, allowed_special="all")
    assert outcome(tok.decode_with_offsets, ids) == outcome(ref.decode_with_offsets, ids)


# ----- bytes and unstable endings --------------------------------------------------------------------

BYTES = [b"", b"abc", b" \xec\x8b\xa4\xed", b"\x80", b"\x80" * 7, b"hello \xff world", b"  \n\xe4\xbd", b"\xe4\xbd\xa0\xe5",
         b"x" * 300 + b"\xc3", "  \n  ".encode() + b"\xf0\x9f", b"<|endoftext|>\xff", b"\xed\xa0\x80", b"ab\xf4\x90\x80\x80"]


@pytest.mark.parametrize("name", SOME)
def test_encode_bytes_matches_tiktoken(name):
    tok, ref = pair(name)
    for data in BYTES:
        assert tok._encode_bytes(data) == ref._encode_bytes(data), data
        assert tok.decode_bytes(tok._encode_bytes(data)) == data


@settings(max_examples=150, deadline=None)
@given(data=st.one_of(st.binary(max_size=40), unicode_texts().map(lambda t: t.encode("utf-8", "surrogatepass"))),
       cut=st.integers(0, 40))
def test_encode_bytes_matches_tiktoken_on_any_bytes(data, cut):
    for name in ("cl100k_base", "o200k_base"):
        tok, ref = pair(name)
        for piece in (data, data[:cut], data[cut:]):
            assert tok._encode_bytes(piece) == ref._encode_bytes(piece)


def test_encode_bytes_wants_bytes():
    tok, ref = pair("cl100k_base")
    assert outcome(tok._encode_bytes, "text") == outcome(ref._encode_bytes, "text") == ("error", "TypeError")


def normalized(result):
    stable, completions = result
    return stable, sorted(tuple(c) for c in completions)


@pytest.mark.parametrize("text", ["hello fanta", "hello", "", " ", "hello \n", "x\n\n", "12345", "<|endoftext|>",
                                  "hi <|endoftext|>", "the  ", "a\u3000", "你好", "é", "def f():\n    "])
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_encode_with_unstable_matches_tiktoken(name, text):
    tok, ref = pair(name)
    kwargs = {"allowed_special": "all"}
    assert normalized(tok.encode_with_unstable(text, **kwargs)) == normalized(ref.encode_with_unstable(text, **kwargs))


def test_encode_with_unstable_refuses_special_tokens_as_tiktoken():
    tok, ref = pair("cl100k_base")
    for kwargs in ({}, {"disallowed_special": ()}, {"allowed_special": {"<|fim_prefix|>"}}):
        got = outcome(lambda: normalized(tok.encode_with_unstable("a <|endoftext|> b", **kwargs)))
        assert got == outcome(lambda: normalized(ref.encode_with_unstable("a <|endoftext|> b", **kwargs)))


@settings(max_examples=25, deadline=None)
@given(text=st.lists(st.sampled_from(list("ab xé\n\t1") + ["  ", "'s", "你"]), max_size=8).map("".join))
def test_encode_with_unstable_matches_tiktoken_on_any_text(text):
    tok, ref = pair("cl100k_base")
    assert normalized(tok.encode_with_unstable(text)) == normalized(ref.encode_with_unstable(text))


# ----- input checks -----------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [b"bytes", None, 5, ["a"]])
def test_batches_raise_type_error_for_items_that_are_not_str(bad):
    tok, ref = pair("cl100k_base")
    for method in ("encode_batch", "encode_ordinary_batch"):
        assert outcome(getattr(tok, method), ["ok", bad]) == outcome(getattr(ref, method), ["ok", bad]) \
            == ("error", "TypeError")


@pytest.mark.parametrize("bad", [b"bytes", None, 5])
def test_encode_raises_type_error_for_input_that_is_not_str(bad):
    tok, ref = pair("cl100k_base")
    for method in ("encode", "encode_ordinary"):
        assert outcome(getattr(tok, method), bad) == outcome(getattr(ref, method), bad) == ("error", "TypeError")


def test_allowed_special_naming_a_string_that_is_no_special_token_is_ignored():
    """One allowed set shared across encodings: strings not special here are ignored, as tiktoken."""
    shared = {"<|endoftext|>", "<|im_start|>", "<|not a token|>"}
    for name in NAMES:
        tok, ref = pair(name)
        text = "a <|endoftext|> b <|im_start|> <|not a token|>"
        assert outcome(tok.encode, text, allowed_special=shared) == outcome(ref.encode, text, allowed_special=shared)
        assert outcome(tok.encode_batch, [text], allowed_special=shared) == \
            outcome(ref.encode_batch, [text], allowed_special=shared)


# ----- other kinds of tokenizer -----------------------------------------------------------------------


class _WordModel:
    """The smallest non-BPE model (a WordLevel-like stand-in, for the checks that need no encoding)."""

    kind = "wordlevel"

    def __init__(self, vocab):
        self.vocab = vocab
        self.by_id = {i: t for t, i in vocab.items()}

    def tokenize(self, text):
        return [(self.vocab[text], 0, len(text))]

    def token_to_id(self, token):
        return self.vocab.get(token)

    def id_to_token(self, token_id):
        return self.by_id.get(token_id)

    def get_vocab(self):
        return dict(self.vocab)

    @property
    def vocab_size(self):
        return len(self.vocab)


class _PieceDecoder:
    """A WordPiece-like decoder: ``##ing`` adds ``ing`` to a text."""

    def token_bytes(self, token):
        return token.removeprefix("##").encode()

    def decode_chain(self, tokens):
        return [t.removeprefix("##") for t in tokens]


def test_other_kinds_refuse_what_needs_byte_level_bpe_and_serve_the_rest():
    tok = Tokenizer.from_stages("words", model=_WordModel({"ing": 0, "##ing": 1, "cat": 2}), decoder=_PieceDecoder())
    for call in (lambda: tok._encode_bytes(b"x"), lambda: tok.encode_with_unstable("x"), tok.token_byte_values,
                 lambda: tok.decode_with_offsets([0])):
        with pytest.raises(TypeError, match="needs byte-level BPE"):
            call()
    assert tok.decode_single_token_bytes(2) == b"cat"
    assert tok.encode_single_token("cat") == 2
    with pytest.raises(ValueError, match="2 tokens"):
        tok.encode_single_token("ing")  # both ing and ##ing stand for b"ing"
    with pytest.raises(KeyError):
        tok.encode_single_token("dog")
    assert tok.decode_bytes_batch([[2], []]) == [b"cat", b""]


# ----- worker processes -------------------------------------------------------------------------------


def _encode_batch_in_worker(tok, texts):
    return tok.encode_batch(texts, allowed_special="all"), tok.decode_batch(tok.encode_ordinary_batch(texts))


def test_a_pickled_tokenizer_runs_the_batch_api_identically_in_worker_processes():
    import multiprocessing

    tok, ref = pair("cl100k_base")
    texts = [f"{t} {i}" for i, t in enumerate(BATCH * 3)]
    want = (ref.encode_batch(texts, allowed_special="all"), ref.decode_batch(ref.encode_ordinary_batch(texts)))
    assert pickle.loads(pickle.dumps(tok)).encode_batch(texts, allowed_special="all") == want[0]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.starmap(_encode_batch_in_worker, [(tok, texts[:10]), (tok, texts[10:])])
    assert results[0][0] + results[1][0] == want[0]
    assert results[0][1] + results[1][1] == want[1]


@pytest.mark.parametrize("context", [None, "spawn"])
def test_batches_in_worker_processes_match_tiktoken(context):
    """num_processes (tokscope's own keyword) gives what tiktoken's threads give, in order; with
    spawn, each worker gets the tokenizer pickled."""
    import multiprocessing

    tok, ref = pair("cl100k_base")
    ctx = multiprocessing.get_context(context) if context else None
    texts = [f"{t} {i} " * (i % 5 + 1) for i, t in enumerate(BATCH * 4)]
    ids = ref.encode_batch(texts, allowed_special="all")
    assert tok.encode_batch(texts, allowed_special="all", num_processes=2, mp_context=ctx) == ids
    assert tok.encode_ordinary_batch(texts, num_processes=2, mp_context=ctx) == ref.encode_ordinary_batch(texts)
    assert tok.decode_batch(ids, num_processes=2, mp_context=ctx) == ref.decode_batch(ids)
    assert tok.decode_bytes_batch(ids, num_processes=0, mp_context=ctx) == ref.decode_bytes_batch(ids)


def test_batches_in_worker_processes_check_their_input_first():
    tok, _ = pair("cl100k_base")
    with pytest.raises(TypeError):
        tok.encode_ordinary_batch(["ok", b"not text"], num_processes=2)
    with pytest.raises(ValueError):  # refused in the worker, raised here
        tok.encode_batch(["ok", "<|endoftext|>"], num_processes=2)
    assert tok.encode_batch([], num_processes=2) == []
