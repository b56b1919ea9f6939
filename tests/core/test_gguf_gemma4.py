"""GGUF tokenizer model ``gemma4`` (Gemma 4's SentencePiece-style BPE), as llama.cpp runs it.

llama.cpp's vectors for ``ggml-vocab-gemma-4.gguf`` run in tests/core/test_gguf.py with the other
vocab files. Here: the tokenizer against a literal transcription of llama.cpp's algorithm
(:func:`_llama_cpp_gemma4`: spaces as ``▁``, lines cut from newline runs, a newline run that is a
token taken whole, string-keyed merges lowest rank then leftmost, unknown symbols as ``<0xXX>``
bytes) on multi-script text and on any text; and llama.cpp's rules on small files: the newline-run
lookup, BOS added whatever the file says, ``</s>`` beside ``<|tool_response>`` is text."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gguf_files import llama_cpp_models  # noqa: E402,F401
from test_gguf import MULTI_SCRIPT, _languages, _load  # noqa: E402

from tokscope.core.formats import gguf  # noqa: E402
from tokscope.core.models.bpe import BYTE_TOKENS  # noqa: E402

NAME = "ggml-vocab-gemma-4.gguf"


@functools.lru_cache(maxsize=1)
def _oracle_tables(path: Path):
    meta = gguf.read_metadata(path)
    tokens = meta["tokenizer.ggml.tokens"]
    vocab = {t: i for i, t in enumerate(tokens)}
    ranks = {}
    for rank, merge in enumerate(meta["tokenizer.ggml.merges"]):
        cut = merge.find(" ", 1)
        ranks[(merge[:cut], merge[cut + 1:])] = rank  # a pair listed twice keeps its last rank, as emplace does not
    types = meta["tokenizer.ggml.token_type"]
    always = sorted((t for t, k in zip(tokens, types) if k == gguf.USER_DEFINED and t not in gguf._END_OF_GENERATION),
                    key=len, reverse=True)
    return vocab, ranks, always


def _llama_cpp_gemma4(text: str, vocab, ranks, always) -> list[int]:
    """llama.cpp's ``llm_tokenizer_bpe_session::tokenize`` for pre-tokenizer ``gemma4``, transcribed
    plainly (no special-token parsing: user-defined tokens only, which llama.cpp always matches)."""
    out: list[int] = []
    pieces = re.split("(" + "|".join(map(re.escape, always)) + ")", text) if always else [text]
    for n, piece in enumerate(pieces):
        if n % 2:
            out.append(vocab[piece])
            continue
        for word in re.findall(r"[^\n]+|\n+", piece.replace(" ", "\u2581")):
            if not word.strip("\n") and word in vocab:
                out.append(vocab[word])
                continue
            symbols = list(word)
            while len(symbols) > 1:
                best = None
                for i in range(len(symbols) - 1):
                    rank = ranks.get((symbols[i], symbols[i + 1]))
                    if rank is not None and (best is None or rank < best[0]):
                        best = (rank, i)
                if best is None:
                    break
                i = best[1]
                symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
            for symbol in symbols:
                if symbol in vocab:
                    out.append(vocab[symbol])
                else:
                    out.extend(vocab[f"<0x{b:02X}>"] for b in symbol.encode("utf-8") if f"<0x{b:02X}>" in vocab)
    return out


def _check(path: Path, texts) -> None:
    tokenizer, _ = _load(path)
    tables = _oracle_tables(path)
    for text in texts:
        ids = tokenizer.encode(text, disallowed_special=())
        assert ids == _llama_cpp_gemma4(text, *tables), text
        assert tokenizer.decode(ids) == text.replace("\u2581", " ")  # llama.cpp's decoding too: ▁ is a space


def test_gemma4_matches_llama_cpps_algorithm_on_multi_script_text(llama_cpp_models):
    texts = MULTI_SCRIPT + _languages() + [
        "a\n\n\n\n\n\n\n\nb", "\n" * 40, "x" * 300, "▁▁▁ spaces   and\ttabs\t\t\n", "<|tool_call>call<tool_call|> <|\"|>",
        "<turn|> <|turn>user <bos> text", "\U0001fae8 \U000e0100 \ufffd \x00 control",
    ]
    _check(llama_cpp_models / NAME, texts)


_TEXT = st.lists(st.one_of(st.text(st.characters(codec="utf-8"), max_size=8),
                           st.sampled_from([" ", "\n", "\n\n", "  ", "▁", "123", "<turn|>", "<|\"|>", "e\u0301",
                                            "😶\u200d🌫️", "我想", "\t"])), max_size=12).map("".join)


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=_TEXT)
def test_gemma4_matches_llama_cpps_algorithm_on_any_text(llama_cpp_models, text):
    _check(llama_cpp_models / NAME, [text])


def test_gemma4_facts_bos_and_special_tokens(llama_cpp_models):
    tokenizer, facts = _load(llama_cpp_models / NAME)
    assert facts.model == "gemma4" and facts.add_bos and not facts.add_eos and facts.notes == ()
    assert dict(facts.special_tokens) == {"bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>",
                                          "pad_token": "<pad>", "mask_token": "<mask>"}
    assert tokenizer.encode("Hello world", add_special_tokens=True)[0] == 2
    # control tokens only where special tokens are allowed; user-defined ones always
    assert tokenizer.encode("<turn|>", allowed_special="all") == [106]
    assert len(tokenizer.encode("<turn|>", disallowed_special=())) > 1
    assert tokenizer.encode('<|"|>', disallowed_special=()) == [52]
    # spaces are ▁ in the tokens and spaces again in the text
    ids = tokenizer.encode(" two  spaces", disallowed_special=())
    assert tokenizer.model.id_to_token(ids[0]).startswith("\u2581") and tokenizer.decode(ids) == " two  spaces"


def _tiny(tmp_path: Path, **changes) -> Path:
    """A small gemma4 file: the 256 byte tokens, newline tokens with no merge reaching them, ``▁a``."""
    tokens = ["<pad>", "<eos>", "<bos>", "<unk>", *BYTE_TOKENS, "\n", "\n\n", "\n\n\n", "a", "\u2581", "\u2581a",
              "<|tool_response>", "</s>", "<|\"|>"]
    types = [3, 3, 3, 3, *[6] * 256, 1, 1, 1, 1, 1, 1, 4, 3, 4]
    meta = {"tokenizer.ggml.model": "gemma4", "tokenizer.ggml.pre": "something-else", "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": types, "tokenizer.ggml.merges": ["\u2581 a"],
            "tokenizer.ggml.bos_token_id": 2, "tokenizer.ggml.eos_token_id": 1, "tokenizer.ggml.add_bos_token": False,
            **changes}
    meta = {k: v for k, v in meta.items() if v is not None}
    path = tmp_path / "tiny-gemma4.gguf"
    path.write_bytes(gguf.build_metadata(meta))
    return path


def test_a_newline_run_that_is_a_token_is_taken_whole(tmp_path):
    tokenizer, _ = gguf.load(_tiny(tmp_path))
    nl = {n: tokenizer.encode("\n" * n, disallowed_special=()) for n in (1, 2, 3, 4)}
    assert nl[1] == [260] and nl[2] == [261] and nl[3] == [262]
    assert nl[4] == [260] * 4  # not a token: merged, and no merge joins newlines
    assert tokenizer.encode("a a\n\n", disallowed_special=()) == [263, 265, 261]
    assert tokenizer.encode("é", disallowed_special=()) == [4 + 0xC3, 4 + 0xA9]  # byte fallback
    assert tokenizer.decode(tokenizer.encode("a a\n\né", disallowed_special=())) == "a a\n\né"
    replay = tokenizer.model.replay("\n\n\n")
    assert replay.whole_word and replay.tokens == (262,) and not tokenizer.model.replay("a").whole_word


def test_bos_is_added_even_where_the_file_says_not_to(tmp_path):
    tokenizer, facts = gguf.load(_tiny(tmp_path))
    assert facts.add_bos and tokenizer.encode("a", add_special_tokens=True) == [2, 263]
    tokenizer, facts = gguf.load(_tiny(tmp_path, **{"tokenizer.ggml.add_eos_token": True}))
    assert tokenizer.encode("a", add_special_tokens=True) == [2, 263, 1]


def test_end_of_s_beside_tool_response_is_plain_text(tmp_path):
    tokenizer, _ = gguf.load(_tiny(tmp_path))
    assert tokenizer.encode("</s>", allowed_special="all") != [267]  # llama.cpp makes </s> a normal token
    assert tokenizer.encode("<|tool_response>", allowed_special="all") == [266]
    assert tokenizer.encode('<|"|>', disallowed_special=()) == [268]


def test_a_gpt2_file_naming_pre_gemma4_runs_the_same_way(tmp_path):
    path = _tiny(tmp_path, **{"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gemma4"})
    tokenizer, facts = gguf.load(path)
    assert facts.add_bos and tokenizer.encode("a a\n\n", disallowed_special=()) == [263, 265, 261]


def test_a_raw_utf8_vocabulary_without_all_byte_tokens_is_refused(tmp_path):
    path = tmp_path / "nobytes.gguf"
    path.write_bytes(gguf.build_metadata({"tokenizer.ggml.model": "gemma4", "tokenizer.ggml.tokens": ["a", "b", "ab"],
                                          "tokenizer.ggml.merges": ["a b"]}))
    with pytest.raises(gguf.TokenizerFileError, match="256 <0xXX> byte tokens") as caught:
        gguf.load(path)
    assert str(path) in str(caught.value)
