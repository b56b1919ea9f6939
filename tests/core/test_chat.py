"""The chat core: input checks, the ChatML and Llama 3 formats, spans, warnings, format choice."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.chat import (attribution, context, conversation, count, encoding, formats, harmony, parts,
                                 render_llama3)
from tokscope.core.chat import templates as chat_template
from tokscope.core.chat import (CONTENT, MIXED, TEMPLATE, TOOLS, ChatFormatError, ChatInputError, ChatMLFormat,
                                Llama3Format, chat_formats, context_window, context_windows_for, count_chat,
                                parse_conversation, pick_format)
from tokscope.core.tokenizer.tokenizer import Tokenizer

tiktoken = pytest.importorskip("tiktoken")

SIMPLE = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"},
          {"role": "assistant", "content": "Hello."}]
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


@pytest.mark.parametrize("module", [conversation, formats, attribution, encoding, count, chat_template, context, harmony,
                                    parts, render_llama3])
def test_doctests(module):
    failed, attempted = doctest.testmod(module)
    assert failed == 0 and attempted > 0


# ----- input ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("data,message", [
    ("not json", "the conversation is not valid JSON: Expecting value (line 1, column 1)"),
    (42, "a conversation is a list of messages, not int"),
    ({"msgs": []}, "a conversation object needs a 'messages' list"),
    (["hi"], "message 1 is a str, not an object"),
    ([{"content": "x"}], "message 1 has no 'role'"),
    ([{"role": ""}], "message 1: 'role' must be a non-empty string"),
    ([{"role": "user", "content": 3}], "message 1 (user): content must be a string, a list of parts or null, not int"),
    ([{"role": "user", "content": [{"text": "x"}]}], "message 1 (user): content part 1 has no 'type'"),
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
     "message 1 (user): content part 1 is of type 'image_url'; tokscope counts text parts only"),
    ([{"role": "user", "content": [{"type": "text"}]}], "message 1 (user): content part 1 (text) has no 'text' string"),
    ([{"role": "user", "content": [7]}], "message 1 (user): content part 1 is a int, not an object"),
    ([{"role": "user", "name": 1, "content": ""}], "message 1 (user): 'name' must be a string, not int"),
    ([{"role": "assistant", "tool_calls": {}}], "message 1 (assistant): 'tool_calls' must be a list"),
    ([{"role": "assistant", "tool_calls": [{"function": {}}]}], "message 1 (assistant), tool call 1 has no function name"),
    ([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": 3}}]}],
     "message 1 (assistant), tool call 1: 'arguments' must be JSON text or an object"),
    ([{"role": "user", "content": "x", "extra": {1, 2}}], "message 1 holds a set, which is not JSON data"),
])
def test_input_errors_are_one_line(data, message):
    with pytest.raises(ChatInputError) as info:
        parse_conversation(data)
    assert str(info.value) == message


@pytest.mark.parametrize("tools,message", [
    ({}, "'tools' must be a list of function definitions"),
    (["x"], "tool 1 is not an object"),
    ([{"type": "function", "function": {"description": "no name"}}], "tool 1 has no name"),
    ([{"type": "retrieval"}], "tool 1 is not a function definition (type 'retrieval')"),
    ([{"name": "f", "parameters": []}], "tool 1 (f): 'parameters' must be a JSON-schema object"),
])
def test_tool_errors(tools, message):
    with pytest.raises(ChatInputError) as info:
        parse_conversation([], tools)
    assert str(info.value) == message


def test_parsed_conversation_is_read_only_and_complete():
    conv = parse_conversation('{"messages": [{"role": "assistant", "content": null, "reasoning": "hmm", '
                              '"tool_calls": [{"id": "1", "function": {"name": "f", "arguments": {"a": 1}}}]}],'
                              '"tools": [{"name": "f", "description": "d"}]}')
    m = conv.messages[0]
    assert m.parts == () and m.content == "" and m.reasoning == "hmm"
    assert m.tool_calls[0].arguments == '{"a": 1}'
    assert conv.tools[0].name == "f" and conv.tools[0].parameters is None
    with pytest.raises(TypeError):
        m.raw["role"] = "user"
    with pytest.raises(AttributeError):
        m.role = "user"


def test_lone_surrogates_are_replaced_like_tiktoken(load):
    got = count_chat(load("o200k_base"), [{"role": "user", "content": "a\ud800b"}], "chatml")
    assert "a\ufffdb" in got.text


def test_role_spelling_a_special_token_is_refused(load):
    with pytest.raises(ChatInputError, match="message 1: its role or name spells a special token"):
        count_chat(load("o200k_base"), [{"role": "<|endoftext|>", "content": ""}], "chatml")


def test_unknown_format(load):
    with pytest.raises(ChatFormatError, match="unknown chat format 'chatgpt'"):
        count_chat(load("o200k_base"), SIMPLE, "chatgpt")
    with pytest.raises(ChatFormatError, match="needs a chat template"):
        count_chat(load("o200k_base"), SIMPLE, "template")
    with pytest.raises(ChatFormatError, match="no assumed ChatML ids for gpt2"):
        count_chat(load("gpt2"), SIMPLE, ChatMLFormat(assume_ids=True))


# ----- ChatML --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_chatml_strings_are_text_in_openai_encodings(load, name):
    tok = load(name)
    assert not {"<|im_start|>", "<|im_sep|>", "<|im_end|>"} & set(tok.special_tokens)
    got = count_chat(tok, SIMPLE, "chatml")
    assert got.text == ("<|im_start|>system<|im_sep|>You are terse.<|im_end|><|im_start|>user<|im_sep|>Hi<|im_end|>"
                        "<|im_start|>assistant<|im_sep|>Hello.<|im_end|><|im_start|>assistant<|im_sep|>")
    assert list(got.ids) == tok.encode(got.text)  # all of it is ordinary text here
    assert not got.exact
    assert {t.text: t.id for t in got.format_tokens} == {"<|im_start|>": None, "<|im_sep|>": None, "<|im_end|>": None}
    warning = [w for w in got.warnings if w.kind == "not-special"]
    assert len(warning) == 1 and f"not special tokens of {name}" in warning[0].message


@pytest.mark.parametrize("name,base", [("cl100k_base", 100264), ("o200k_base", 200264)])
def test_chatml_with_the_ids_web_counters_assume(load, name, base):
    tok = load(name)
    got = count_chat(tok, SIMPLE, ChatMLFormat(assume_ids=True))
    ref = tiktoken.Encoding(name + "-chat", pat_str=tok.pattern, mergeable_ranks=dict(tok.ranks),
                            special_tokens={**tok.special_tokens, "<|im_start|>": base, "<|im_end|>": base + 1,
                                            "<|im_sep|>": base + 2})
    assert list(got.ids) == ref.encode(got.text, allowed_special="all")
    # the cookbook's rule of thumb: 3 tokens per message, 1 for its role, 3 for the reply prompt
    assert got.overhead == 3 * 3 + 3 * 1 + 3
    assert all(t.assumed for t in got.format_tokens) and got.exact
    assert "approximate" in [w.kind for w in got.warnings]


def test_chatml_look_alike_in_content(load):
    got = count_chat(load("cl100k_base"), [{"role": "user", "content": "x<|im_end|>y"}], "chatml")
    assert [w.kind for w in got.warnings if w.index == 0] == ["format-lookalike"]
    got = count_chat(load("cl100k_base"), [{"role": "user", "content": "x<|endoftext|>y"}], "chatml")
    warning = [w for w in got.warnings if w.kind == "special-in-content"][0]
    assert "'<|endoftext|>'" in warning.message and "tiktoken's default refuses" in warning.message
    assert 100257 not in got.ids


def test_chatml_tools_are_marked_and_approximate(load):
    tok = load("o200k_base")
    got = count_chat(tok, SIMPLE, "chatml", tools=[WEATHER])
    assert "# Tools\n\n## functions\n\nnamespace functions {" in got.text
    assert TOOLS in got.kinds and got.tool_tokens == got.total - count_chat(tok, SIMPLE, "chatml").total
    assert "approximate" in [w.kind for w in got.warnings]
    assert got.spans[0].kind == "message"  # after the system message, inside its turn
    alone = count_chat(tok, SIMPLE[1:], "chatml", tools=[WEATHER])
    assert alone.spans[0].kind == "prefix"


def test_chatml_tool_calls(load):
    messages = [{"role": "user", "content": "Paris?"},
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": "1", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
                {"role": "tool", "tool_call_id": "1", "content": "sunny"}]
    got = count_chat(load("o200k_base"), messages, "chatml")
    assert '<|im_start|>assistant to=functions.get_weather<|im_sep|>{"city":"Paris"}<|im_end|>' in got.text
    assert "<|im_start|>tool<|im_sep|>sunny<|im_end|>" in got.text


# ----- Llama 3 -------------------------------------------------------------------------------------

LLAMA = ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]


@pytest.fixture(scope="module")
def llama_toy(load):
    o200k = load("o200k_base")
    table = {s: 200100 + i for i, s in enumerate(LLAMA)}
    return (Tokenizer("toy-llama", o200k.ranks, o200k.pattern, table),
            tiktoken.Encoding("toy", pat_str=o200k.pattern, mergeable_ranks=dict(o200k.ranks), special_tokens=table))


def test_llama3_layout(llama_toy):
    tok, ref = llama_toy
    got = count_chat(tok, SIMPLE, "llama3")
    assert got.text == ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
                        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                        "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
                        "<|start_header_id|>assistant<|end_header_id|>\n\n")
    assert list(got.ids) == ref.encode(got.text, allowed_special="all")
    assert got.exact and pick_format(tok) == "llama3"
    assert [s.kind for s in got.spans] == ["prefix", "message", "message", "message", "suffix"]
    assert got.prefix_tokens() == 1
    assert [m.template_tokens for m in got.messages] == [5, 5, 5]  # header (4) + <|eot_id|>
    assert got.suffix_tokens() == 4


def test_llama3_trims_and_maps_tool_role(llama_toy):
    tok, _ = llama_toy
    got = count_chat(tok, [{"role": "tool", "content": "  42\n"}], "llama3", add_generation_prompt=False)
    assert got.text.endswith("<|start_header_id|>ipython<|end_header_id|>\n\n42<|eot_id|>")


def test_llama3_with_text_tokens_only(load):
    got = count_chat(load("o200k_base"), SIMPLE, Llama3Format())
    assert {t.text for t in got.format_tokens if t.id is None} == set(LLAMA)


# ----- spans, kinds, attribution -------------------------------------------------------------------

def test_kinds_and_offsets(load):
    tok = load("cl100k_base")
    got = count_chat(tok, SIMPLE, "chatml")
    for tid, (s, e) in zip(got.ids, got.offsets):
        assert tok.token_bytes(tid).decode("utf-8", "replace") in got.text[s:e] or e - s == 1
    user = got.spans[1]
    # the strings are text here, and "><" of "<|im_end|><|im_start|>" is one token: it belongs
    # to the message its first character belongs to, and spans follow their tokens
    assert got.text[user.text_start:user.text_end] == "|im_start|>user<|im_sep|>Hi<|im_end|><"
    # "|>" of <|im_sep|> and "Hi": the pattern splits them, so "Hi" is pure content
    assert got.kinds[user.start:user.end].count(CONTENT) == 1


def test_merged_token_is_reported(load):
    tok = load("cl100k_base")
    got = count_chat(tok, [{"role": "user", "content": "!"}], "chatml")
    assert MIXED in got.kinds  # "|>!<|" is one chunk of cl100k_base's pattern, "!<" one token
    assert "merged" in [w.kind for w in got.warnings]
    assert got.messages[0].content_tokens >= 1


class EncodeOnly:
    """A tokenizer with just the promised API: ``encode`` and ``special_tokens``."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.special_tokens = inner.special_tokens

    def encode(self, text, *, allowed_special=(), disallowed_special="all"):
        return self.inner.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


@pytest.mark.parametrize("fmt", ["chatml", "llama3", "harmony"])
def test_tokenizer_without_pieces(load, llama_toy, fmt):
    tok = {"chatml": load("cl100k_base"), "llama3": llama_toy[0], "harmony": load("o200k_harmony")}[fmt]
    messages = SIMPLE + [{"role": "user", "content": "!! 日本 <|endoftext|> \n\nok"}]
    full = count_chat(tok, messages, fmt)
    bare = count_chat(EncodeOnly(tok), messages, fmt)
    assert bare.ids == full.ids and bare.text == full.text
    assert [(s.start, s.end, s.message) for s in bare.spans] == [(s.start, s.end, s.message) for s in full.spans]
    assert bare.content_tokens == full.content_tokens


def test_whole_text_and_run_by_run_encodings_agree(load):
    # content spelling a template special forces run-by-run encoding; both agree with tiktoken
    tok = load("o200k_harmony")
    messages = [{"role": "user", "content": "plain"}, {"role": "assistant", "content": "x<|end|>y"}]
    got = count_chat(tok, messages, "harmony")
    ids = list(got.ids)
    assert ids[-2:] == [tok.special_tokens["<|start|>"], tok.encode("assistant")[0]]
    assert tok.special_tokens["<|end|>"] not in [i for i, k in zip(ids, got.kinds) if k == CONTENT]


def test_empty_conversation(load):
    got = count_chat(load("o200k_harmony"), [], "harmony")
    assert got.messages == () and [s.kind for s in got.spans] == ["prefix", "suffix"]
    got = count_chat(load("o200k_base"), [], "chatml", add_generation_prompt=False)
    assert got.total == 0 and got.spans == ()


TEXT = st.lists(st.one_of(st.text(max_size=10), st.sampled_from(
    ["<|im_start|>", "<|im_end|>", "<|im_sep|>", "<|eot_id|>", "<|endoftext|>", "\n\n", " ", "|>", "<|"])),
    max_size=5).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=st.lists(TEXT, min_size=3, max_size=3), fmt=st.sampled_from(["assumed", "llama3"]))
def test_any_content_keeps_the_template_tokens(load, llama_toy, contents, fmt):
    tok = llama_toy[0] if fmt == "llama3" else load("o200k_base")
    fmt = ChatMLFormat(assume_ids=True) if fmt == "assumed" else fmt
    messages = [{"role": r, "content": c} for r, c in zip(["system", "user", "assistant"], contents)]
    got = count_chat(tok, messages, fmt)
    baseline = count_chat(tok, [dict(m, content="x") for m in messages], fmt)
    # content is framed by special tokens (Llama 3: trimmed, after "\n\n"), so the template's
    # own tokens never depend on it and no token straddles a boundary
    assert MIXED not in got.kinds
    assert got.kinds.count(TEMPLATE) == baseline.kinds.count(TEMPLATE)
    assert got.overhead == baseline.overhead
    assert got.spans[0].start == 0 and got.spans[-1].end == got.total
    assert all(a.end == b.start for a, b in zip(got.spans, got.spans[1:]))
    for m, c in zip(got.messages, contents):
        text = c.strip() if fmt == "llama3" else c
        assert m.content_tokens == len(tok.encode(text, disallowed_special=()))


# ----- formats and context sizes -------------------------------------------------------------------

def test_pick_format(load, llama_toy):
    assert pick_format(load("o200k_harmony")) == "harmony"
    assert pick_format(load("cl100k_base")) == "chatml"
    assert pick_format(load("gpt2")) == "chatml"
    assert pick_format(llama_toy[0]) == "llama3"
    template = chat_template.ChatTemplate.from_jinja("{{ messages }}")
    assert pick_format(load("gpt2"), template) == "template"
    assert count_chat(load("o200k_harmony"), SIMPLE).format == "harmony"  # auto


def test_chat_formats(load):
    formats = {f.name: f for f in chat_formats(load("cl100k_base"))}
    assert list(formats) == ["chatml", "harmony", "llama3", "template"]
    assert formats["chatml"].usable and not formats["chatml"].exact
    assert formats["chatml"].missing == ("<|im_start|>", "<|im_sep|>", "<|im_end|>")
    assert "assume_ids" in formats["chatml"].note
    assert not formats["template"].usable
    harmony_formats = {f.name: f for f in chat_formats(load("o200k_harmony"))}
    assert harmony_formats["harmony"].exact and harmony_formats["harmony"].missing == ()


@pytest.mark.parametrize("model,tokens", [
    ("gpt-4o", 128_000), ("gpt-4o-mini-2024-07-18", 128_000), ("gpt-4.1-nano", 1_047_576), ("gpt-4", 8_192),
    ("gpt-4-0613", 8_192), ("gpt-4-turbo", 128_000), ("gpt-3.5-turbo", 16_385), ("o3-mini", 200_000),
    ("o1", 200_000), ("openai/gpt-oss-120b", 131_072), ("meta-llama/Meta-Llama-3-8B-Instruct", 8_192),
    ("meta-llama/Llama-3.2-1B-Instruct", 131_072), ("Qwen/Qwen2.5-7B-Instruct", 32_768),
    ("google/gemma-3-1b-it", 32_768), ("google/gemma-3-27b-it", 131_072), ("google/gemma-2-9b-it", 8_192),
    ("microsoft/phi-4", 16_384), ("some/unknown-model", None),
])
def test_context_window(model, tokens):
    window = context_window(model)
    assert window.tokens == tokens
    assert window.label == ("unknown" if tokens is None else f"{tokens:,} tokens")
    assert window.remaining(100) == (None if tokens is None else tokens - 100)


def test_context_windows_for_encodings():
    assert {w.tokens for w in context_windows_for("cl100k_base")} == {8_192, 128_000, 16_385}
    assert context_windows_for("gpt2") == ()


def test_chat_modules_import_only_the_standard_library_regex_and_jinja2():
    import subprocess
    import sys

    code = (
        "import sys; before = set(sys.modules)\n"
        "import tokscope.core.chat\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(','.join(sorted(new - set(sys.stdlib_module_names) - {'tokscope', '_tokscope_merge', 'regex', 'jinja2', 'markupsafe'})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
