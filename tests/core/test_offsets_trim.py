"""The model's offsets and the file's truncation and padding, against Hugging Face's ``tokenizers``.

RoBERTa-style files are built here with ``tokenizers`` (a ByteLevel pre-tokenizer and a BPE
trained on the samples, see ``hf_files``), then their post-processor is set every way that moves
offsets: RobertaProcessing and ByteLevel with ``trim_offsets`` on and off, ``add_prefix_space``
both ways (in the pre-tokenizer and in the post-processor), and a Sequence of a trimming ByteLevel
and a template. On any Unicode text (space runs, emoji, CJK, combining marks, ``<mask>``) the ids
and the character offsets of :meth:`Tokenizer.encode_with_offsets` are the library's, with and
without the template; ``encode --json`` writes the same offsets. Files that set ``truncation``
and ``padding`` give the library's ids and offsets with ``add_special_tokens`` (and in
``encode_batch``), and its refusals are one-line errors.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenizers

import hf_files
from hf_support import FUZZ, SMALL_FUZZ
from tokscope.core.formats.tokenizer_json import from_json_text
from tokscope.core.processors.offsets import TrimStep, model_span, trim_span
from tokscope.core.text.errors import TokscopeError

ROOT = Path(__file__).resolve().parents[2]

#: text made of the runs that move offsets: spaces of every kind, emoji, CJK, combining marks
PARTS = st.one_of(
    st.text(alphabet=" \t\n\u00a0\u3000", min_size=1, max_size=5),
    st.sampled_from(["hello", "world", "the", "Token", " a", "é", "e\u0301", "\u0301\u0302", "中文字", "日本",
                     "😀", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "<mask>", " <mask>", "<s>", "x86_64", "Ⅻ"]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6),
)
TEXTS = st.lists(PARTS, max_size=12).map("".join)


def _roberta(post: dict | None, *, pre_prefix: bool = True) -> str:
    obj = json.loads(hf_files.build("roberta"))
    obj["pre_tokenizer"]["add_prefix_space"] = pre_prefix
    if post is not None:
        obj["post_processor"] = post
    return json.dumps(obj)


def _ids(text: str, token: str) -> int:
    return json.loads(text)["model"]["vocab"].get(token) or next(
        t["id"] for t in json.loads(text)["added_tokens"] if t["content"] == token)


def _post(kind: str, trim: bool, prefix: bool) -> dict:
    text = hf_files.build("roberta")
    sep, cls = _ids(text, "</s>"), _ids(text, "<s>")
    byte_level = {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": trim, "use_regex": True}
    if kind == "roberta":
        return {"type": "RobertaProcessing", "sep": ["</s>", sep], "cls": ["<s>", cls], "trim_offsets": trim,
                "add_prefix_space": prefix}
    if kind == "bytelevel":
        return byte_level

    def special(name: str) -> dict:
        return {"SpecialToken": {"id": name, "type_id": 0}}

    a = {"Sequence": {"id": "A", "type_id": 0}}
    b = {"Sequence": {"id": "B", "type_id": 1}}
    template = {"type": "TemplateProcessing", "single": [special("<s>"), a, special("</s>")],
                "pair": [special("<s>"), a, special("</s>"), b, special("</s>")],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [cls], "tokens": ["<s>"]},
                                   "</s>": {"id": "</s>", "ids": [sep], "tokens": ["</s>"]}}}
    if kind == "roberta+bytelevel":  # the ByteLevel after it sees <s> first: its text starts at 1
        roberta = _post("roberta", trim, prefix)
        return {"type": "Sequence", "processors": [roberta, {**byte_level, "add_prefix_space": not prefix}]}
    return {"type": "Sequence", "processors": [byte_level, template]}


CONFIGS = [(kind, trim, prefix, pre) for kind in ("roberta", "bytelevel", "sequence", "roberta+bytelevel")
           for trim in (True, False) for prefix in (True, False) for pre in (True, False)]


@functools.cache
def _pairs():
    """Each configuration's file read by tokenizers and by tokscope."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    out = {}
    for kind, trim, prefix, pre in CONFIGS:
        text = _roberta(_post(kind, trim, prefix), pre_prefix=pre)
        out[kind, trim, prefix, pre] = (tokenizers.Tokenizer.from_str(text), from_json_text(text, f"{kind}"))
    return out


def _check(text: str) -> None:
    for config, (hf, ours) in _pairs().items():
        for add in (False, True):
            expected = hf.encode(text, add_special_tokens=add)
            ids, offsets = ours.encode_with_offsets(text, allowed_special="all", add_special_tokens=add)
            assert ids == expected.ids, (config, add, text)
            assert offsets == expected.offsets, (config, add, text, expected.tokens)


@FUZZ
@given(TEXTS)
def test_offsets_equal_hugging_faces_on_any_text(text):
    _check(text)


@pytest.mark.parametrize("text", [
    "", " ", "   ", "hello world", " hello  world ", "  hello", "a é  😀 x", "<mask> hi", "hi <mask>  there",
    "中文 字\u3000日本", "e\u0301\u0301  \u0301", "\t\n  \u00a0x", "👨\u200d👩\u200d👧 👍🏽",
])
def test_offsets_equal_hugging_faces_on_corner_texts(text):
    _check(text)


def test_the_trim_rule_on_hugging_faces_own_example():
    # the encoding of tokenizers' processor_trims_offsets test: tokens and spans in, trimmed spans out
    tokens = ["Ġ", "ĠĠĠĠHelloĠĠ", "ĠĠHello", "HelloĠĠ", "ĠĠĠĠ"]
    spans = [(0, 1), (0, 11), (11, 18), (18, 25), (25, 29)]
    steps = (TrimStep(True),)
    assert [model_span(t, s, k, steps) for k, (t, s) in enumerate(zip(tokens, spans))] == [
        (0, 0), (4, 9), (13, 18), (18, 23), (29, 29)]
    assert trim_span("Ġhi", (0, 3), 0, True) == (0, 3)  # the one space add_prefix_space put there
    assert trim_span("ĠĠhi", (0, 4), 0, True) == (2, 4)


def test_a_tokenizer_without_trimming_reports_the_pieces_spans():
    obj = json.loads(hf_files.build("gpt2"))
    obj["post_processor"]["trim_offsets"] = False
    ours = from_json_text(json.dumps(obj), "gpt2")
    pieces = ours.pieces(" a  b")
    assert ours.trim_steps == ()
    assert ours.model_offsets(" a  b", pieces) == [(p.start, p.end) for p in pieces]
    assert from_json_text(hf_files.build("gpt2"), "gpt2").model_offsets(" a  b", pieces) != [(p.start, p.end) for p in pieces]


def test_encode_json_follows_the_files_trim_offsets(tmp_path):
    path = tmp_path / "roberta.json"
    path.write_text(_roberta(_post("roberta", True, True)), encoding="utf-8")
    text = " hello  world 😀 "
    hf = tokenizers.Tokenizer.from_str(path.read_text(encoding="utf-8"))
    for flag in ([], ["--add-special-tokens"]):
        out = subprocess.run([sys.executable, "-m", "tokscope.cli", "encode", "-e", str(path), "--json", *flag, text],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert out.returncode == 0, out.stderr
        rows = json.loads(out.stdout)["tokens"]
        expected = hf.encode(text, add_special_tokens=bool(flag))
        assert [r["id"] for r in rows] == expected.ids
        kept = [(r["start"], r["end"]) for r in rows if not r.get("template")]
        assert kept == [o for o, s in zip(expected.offsets, expected.special_tokens_mask) if not s]
        moved = [r for r in rows if "piece_start" in r]
        assert moved, "the spaces of ' hello  world' are trimmed"
        for r in moved:  # the piece's span is kept beside the model's, and the bytes follow the offsets
            assert r["piece_start"] <= r["start"] <= r["end"] <= r["piece_end"]
            start_byte = len(text[:r["start"]].encode())
            assert r["byte_start"] == start_byte  # the first byte of the first character kept
            if not r["partial"]:
                assert r["byte_end"] - r["byte_start"] == len(text[r["start"]:r["end"]].encode())


# ----- truncation and padding ------------------------------------------------------------------


def _with(truncation: dict | None, padding: dict | None, name: str = "bert") -> str:
    obj = json.loads(hf_files.build(name))
    obj["truncation"] = truncation
    obj["padding"] = padding
    return json.dumps(obj)


TRUNCATIONS = [None] + [
    {"direction": d, "max_length": n, "strategy": s, "stride": stride}
    for d in ("Right", "Left") for n in (0, 1, 2, 3, 5) for s, stride in (("LongestFirst", 0), ("OnlyFirst", 1))
]
PADDINGS = [None] + [
    {"strategy": strategy, "direction": d, "pad_to_multiple_of": m, "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}
    for strategy in ("BatchLongest", {"Fixed": 6}, {"Fixed": 0}) for d in ("Right", "Left") for m in (None, 4)
]


@functools.cache
def _cut_pair(k: int):
    """Configuration ``k``: a truncation, a padding, and the bert or roberta file they are set in."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    truncation, padding = TRUNCATIONS[k], PADDINGS[k % len(PADDINGS)]
    name = ("bert", "roberta")[k % 2]
    text = _with(truncation, padding, name)
    return (name, truncation, padding), tokenizers.Tokenizer.from_str(text), from_json_text(text, name)


def _hf_or_error(hf, text):
    try:
        return hf.encode(text)
    except BaseException as exc:  # tokenizers panics (PanicException is a BaseException) or raises
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return None


def _check_cut(k: int, text: str) -> None:
    config, hf, ours = _cut_pair(k)
    expected = _hf_or_error(hf, text)
    if expected is None:  # tokenizers refuses (a stride not below the room left): so does tokscope
        with pytest.raises(TokscopeError):
            ours.encode(text, allowed_special="all", add_special_tokens=True)
        return
    assert ours.encode(text, allowed_special="all", add_special_tokens=True) == expected.ids, config
    ids, offsets = ours.encode_with_offsets(text, allowed_special="all", add_special_tokens=True)
    assert (ids, offsets) == (expected.ids, expected.offsets), config
    # without the template the text's own tokens: tokscope's default, whatever the file sets
    assert ours.encode(text, allowed_special="all") == [p.id for p in ours.pieces(text, allowed_special="all")]


@pytest.mark.parametrize("k", range(len(TRUNCATIONS)))
def test_every_truncation_and_padding_equals_hugging_faces(k):
    for text in ("", "hi", " hello  world, how are you 😀 today?", "a b c d e f g h i j k"):
        _check_cut(k, text)


@SMALL_FUZZ
@given(st.integers(0, len(TRUNCATIONS) - 1), TEXTS)
def test_truncation_and_padding_equal_hugging_faces_on_any_text(k, text):
    _check_cut(k, text)


def test_encode_batch_pads_as_hugging_face_does():
    padding = {"strategy": "BatchLongest", "direction": "Left", "pad_to_multiple_of": 4, "pad_id": 0,
               "pad_type_id": 0, "pad_token": "[PAD]"}
    text = _with({"direction": "Right", "max_length": 7, "strategy": "LongestFirst", "stride": 0}, padding)
    hf, ours = tokenizers.Tokenizer.from_str(text), from_json_text(text, "bert")
    batch = ["hi", "hello there my friend, how are you today?", "a b c"]
    assert ours.encode_batch(batch, add_special_tokens=True) == [e.ids for e in hf.encode_batch(batch)]
    assert ours.encode_batch(batch) == [ours.encode(t) for t in batch]  # no template, no padding


def test_refusals_are_one_line_errors():
    only_second = _with({"direction": "Right", "max_length": 4, "strategy": "OnlySecond", "stride": 0}, None)
    with pytest.raises(TokscopeError, match="OnlySecond"):
        from_json_text(only_second, "b").encode("a b c d e f", add_special_tokens=True)
    with pytest.raises(Exception, match="truncation direction"):
        from_json_text(_with({"direction": "Up", "max_length": 4, "strategy": "LongestFirst", "stride": 0}, None), "b")
    with pytest.raises(Exception, match="padding strategy"):
        from_json_text(_with(None, {"strategy": "Longest", "direction": "Right", "pad_id": 0}), "b")


def test_encode_applies_them_with_add_special_tokens_and_says_so_without(tmp_path):
    path = tmp_path / "bert.json"
    path.write_text(_with({"direction": "Left", "max_length": 5, "strategy": "LongestFirst", "stride": 0},
                          {"strategy": {"Fixed": 8}, "direction": "Right", "pad_to_multiple_of": None, "pad_id": 0,
                           "pad_type_id": 0, "pad_token": "[PAD]"}), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    text = "hello there my friend how are you"

    def run(*args):
        return subprocess.run([sys.executable, "-m", "tokscope.cli", "encode", "-e", str(path), *args, text],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)

    out = run("--add-special-tokens")
    assert out.returncode == 0, out.stderr
    assert [int(t) for t in out.stdout.split()] == hf.encode(text).ids
    rows = json.loads(run("--add-special-tokens", "--json").stdout)["tokens"]
    assert [r["id"] for r in rows] == hf.encode(text).ids
    assert [not r.get("padding", False) for r in rows] == [bool(a) for a in hf.encode(text).attention_mask]
    plain = run()  # the text's own tokens, as without the settings, and one note that says why
    bare = tokenizers.Tokenizer.from_str(hf_files.build("bert"))
    assert [int(t) for t in plain.stdout.split()] == bare.encode(text, add_special_tokens=False).ids
    assert len(plain.stderr.strip().splitlines()) == 1
    assert "truncation" in plain.stderr and "padding" in plain.stderr and "--add-special-tokens" in plain.stderr
