"""The chat count's fast paths give the same results as the slow ones they replace.

A chat template's ``obj.key`` on a plain dict skips Jinja's failed-attribute exception, a
``namespace`` assignment is one dict store after the checks, and ``special_regex`` writes the
special tokens as a prefix tree. Each count here is made twice, with the fast paths and with
Jinja's own ``getattr``, Jinja's own ``Namespace`` (with the same checks) and the plain
alternation longest first, and the two must be equal in everything: ids, kinds, offsets, spans,
per-message counts, the tools' tokens, warnings. The tools' tokens are also held to the
three-render method: the count without tools (a full count of its own), and the tool tokens
marked against its ids.
"""

from __future__ import annotations

import json

import jinja2.utils
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.sandbox import ImmutableSandboxedEnvironment

from tokscope.core.chat import TemplateFormat, count_chat
from tokscope.core.chat import parts as parts_module
from tokscope.core.chat import templates as templates_module
from tokscope.core.chat.count import mark_tool_tokens
from tokscope.core.chat.parts import special_regex
from tokscope.core.chat.results import TEMPLATE, TOOLS
from tokscope.core.chat.templates import ChatTemplate, ChatTemplateError, RenderLimits, render_template
from test_chat_templates import CONVERSATIONS, FAMILIES, WEATHER, call, toy  # noqa: I001 - a sibling test module

# ----- templates with tools -------------------------------------------------------------------------

#: Mistral's v3 way: the tools in [AVAILABLE_TOOLS] just before the last user turn, calls in [TOOL_CALLS]
MISTRAL_TOOLS = r"""{{- bos_token }}
{%- set user_messages = messages | selectattr("role", "equalto", "user") | list %}
{%- for message in messages %}
    {%- if message.role == "user" %}
        {%- if tools and message == user_messages[-1] %}
            {{- "[AVAILABLE_TOOLS] [" }}
            {%- for tool in tools %}
                {{- '{"type": "function", "function": ' + tool.function | tojson + "}" }}
                {%- if not loop.last %}{{- ", " }}{%- endif %}
            {%- endfor %}
            {{- "][/AVAILABLE_TOOLS]" }}
        {%- endif %}
        {{- "[INST] " + message.content + "[/INST]" }}
    {%- elif message.role == "assistant" and message.tool_calls %}
        {{- "[TOOL_CALLS] [" }}
        {%- for tc in message.tool_calls %}
            {{- '{"name": "' + tc.function.name + '", "arguments": ' + tc.function.arguments + ', "id": "' + tc.id + '"}' }}
        {%- endfor %}
        {{- "]" + eos_token }}
    {%- elif message.role == "assistant" %}
        {{- " " + message.content + eos_token }}
    {%- elif message.role == "tool" %}
        {{- '[TOOL_RESULTS] {"content": ' + message.content | tojson + ', "call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- elif message.role == "system" %}
        {{- "[INST] " + message.content + "[/INST]" }}
    {%- endif %}
{%- endfor %}"""

#: gpt-oss's way (harmony framing): a line that only tools bring, the tools in the developer
#: message, and for every call a scan over the later messages (a namespace flag set in a loop)
HARMONY_TOOLS = r"""{{- "<|start|>system<|message|>You are ChatGPT." }}
{%- if tools %}{{- "\nCalls to these tools must go to the commentary channel: 'functions'." }}{%- endif %}
{{- "<|end|>" }}
{%- if messages[0].role == "system" %}{%- set instructions = messages[0].content %}{%- set loop_messages = messages[1:] %}
{%- else %}{%- set instructions = "" %}{%- set loop_messages = messages %}{%- endif %}
{%- if instructions or tools %}
    {{- "<|start|>developer<|message|>" }}
    {%- if instructions %}{{- "# Instructions\n\n" + instructions }}{%- endif %}
    {%- if tools %}
        {{- "\n\n# Tools\n\nnamespace functions {\n\n" }}
        {%- for tool in tools %}
            {{- "// " + tool.function.description + "\ntype " + tool.function.name + " = (_: " }}
            {{- tool.function.parameters | tojson + ") => any;\n\n" }}
        {%- endfor %}
        {{- "} // namespace functions" }}
    {%- endif %}
    {{- "<|end|>" }}
{%- endif %}
{%- set last = namespace(name=none, calls=0) %}
{%- for message in loop_messages %}
    {%- if message.role == "assistant" and message.tool_calls %}
        {%- set later = namespace(final=false) %}
        {%- for future in loop_messages[loop.index:] %}
            {%- if future.role == "assistant" and "tool_calls" not in future %}{%- set later.final = true %}{%- endif %}
        {%- endfor %}
        {%- set fn = message.tool_calls[0].function %}
        {%- if message.content and not later.final %}
            {{- "<|start|>assistant<|channel|>analysis<|message|>" + message.content + "<|end|>" }}
        {%- endif %}
        {{- "<|start|>assistant to=functions." + fn.name + "<|channel|>commentary json<|message|>" }}
        {{- fn.arguments | tojson + "<|call|>" }}
        {%- set last.name = fn.name %}{%- set last.calls = last.calls + 1 %}
    {%- elif message.role == "assistant" %}
        {{- "<|start|>assistant<|channel|>final<|message|>" + message.content + "<|end|>" }}
    {%- elif message.role == "tool" %}
        {{- "<|start|>functions." + last.name + " to=assistant<|channel|>commentary<|message|>" }}
        {{- message.content | tojson + "<|end|>" }}
    {%- elif message.role == "user" %}
        {{- "<|start|>user<|message|>" + message.content + "<|end|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|start|>assistant{%- endif %}"""

SEARCH = {"type": "function", "function": {
    "name": "search", "description": "Search the documents.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}

WITH_TOOLS = {
    "qwen": FAMILIES["qwen"],
    "llama31": FAMILIES["llama31"],
    "mistral": (MISTRAL_TOOLS, {"bos_token": "<s>", "eos_token": "</s>"},
                ["<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_CALLS]",
                 "[TOOL_RESULTS]", "[/TOOL_RESULTS]"]),
    "harmony": (HARMONY_TOOLS, {}, ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|call|>", "<|return|>"]),
}


def rounds(n: int) -> list[dict]:
    """A system message, then rounds of question, tool call (the id 9 characters, as Mistral's),
    result and answer; some of it spelling a special token as text, some in other scripts. The
    questions differ (Mistral's template finds the last user message by equality)."""
    out = [{"role": "system", "content": "Answer briefly; cite the tool."}]
    cities = ["Paris", "東京", "Lagos", "Zürich"]
    k = 0
    while len(out) < n:
        city = cities[k % len(cities)]
        out += [{"role": "user", "content": f"{k}. Weather in {city}? <|end|> is just text. 🌧"},
                {"role": "assistant", "content": f"Looking up {city}.",
                 "tool_calls": [call(f"call{k:05d}", "get_weather", {"city": city})]},
                {"role": "tool", "tool_call_id": f"call{k:05d}", "content": f"{city}: {10 + k} C"},
                {"role": "assistant", "content": f"{10 + k} C in {city}: take a coat."}]
        k += 1
    return out[:n]


@pytest.fixture(scope="module")
def o200k(load):
    return load("o200k_base")


@pytest.fixture(scope="module")
def tokenizers(o200k):
    return {name: toy(o200k, specials)[0] for name, (_, _, specials) in WITH_TOOLS.items()}


class _CheckedNamespace(jinja2.utils.Namespace):
    """Jinja's own Namespace with tokscope's checks: what ``namespace`` was before its fast path."""

    def __init__(*args, **kwargs):  # noqa: N805 - Jinja's own signature trick
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name, value in attrs.items():
            templates_module._TemplateNamespace._check(name, value)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name, value):
        templates_module._TemplateNamespace._check(name, value)
        jinja2.utils.Namespace.__setitem__(self, name, value)


def _alternation(alternatives):
    """The pattern ``special_regex`` made before: the plain alternation, longest first."""
    ordered = sorted(alternatives, key=lambda s: (-len(s), s))
    return regex.compile("|".join(regex.escape(s) for s in ordered))


@pytest.fixture
def slow_paths(monkeypatch):
    """Switch the fast paths off: Jinja's getattr, Jinja's Namespace, the plain alternation."""

    def switch():
        monkeypatch.setattr(templates_module._Sandbox, "getattr", ImmutableSandboxedEnvironment.getattr)
        monkeypatch.setitem(templates_module._ENV.globals, "namespace", _CheckedNamespace)
        monkeypatch.setattr(parts_module, "_compiled_alternatives", _alternation)
        templates_module.compile_template.cache_clear()  # the compiled templates hold the globals

    yield switch
    templates_module.compile_template.cache_clear()


CASES = [(family, messages) for family in WITH_TOOLS for messages in ("tools", "rounds")]


@pytest.mark.parametrize("family,which", CASES)
@pytest.mark.parametrize("gen", [True, False])
def test_counts_with_tools_equal_the_slow_paths_and_the_three_render_method(tokenizers, slow_paths, family, which,
                                                                            gen):
    source, special, _ = WITH_TOOLS[family]
    tok = tokenizers[family]
    fmt = TemplateFormat(ChatTemplate.from_jinja(source, special_tokens=special),
                         variables={"tools_in_user_message": False} if family == "llama31" else {})
    messages = CONVERSATIONS["tools"] if which == "tools" else rounds(41)
    tools = [WEATHER, SEARCH]

    fast = count_chat(tok, messages, fmt, tools=tools, add_generation_prompt=gen)
    fast_bare = count_chat(tok, messages, fmt, add_generation_prompt=gen)
    slow_paths()
    assert templates_module._ENV.getattr.__func__ is ImmutableSandboxedEnvironment.getattr
    assert special_regex(["a", "ab"]).pattern == "ab|a"
    slow = count_chat(tok, messages, fmt, tools=tools, add_generation_prompt=gen)
    slow_bare = count_chat(tok, messages, fmt, add_generation_prompt=gen)

    assert fast == slow and fast_bare == slow_bare
    # the three-render method: what the tools cost is the count without them, a count of its own
    assert fast.tool_tokens == len(fast.ids) - len(fast_bare.ids) > 0
    kinds = [TEMPLATE if k == TOOLS else k for k in fast.kinds]
    mark_tool_tokens(fast.ids, kinds, fast_bare.ids)
    assert "".join(kinds) == fast.kinds and fast.kinds.count(TOOLS) > 0
    # the per-message attribution tiles the ids and sees every message's content
    assert sum(m.tokens for m in fast.messages) <= len(fast.ids)
    assert [m.content_tokens > 0 for m in fast.messages] == [m.content_tokens > 0 for m in fast_bare.messages]
    tool_text = "".join(fast.text[s:e] for (s, e), k in zip(fast.offsets, fast.kinds) if k == TOOLS)
    assert "get_weather" in tool_text and "search" in tool_text


def test_the_harmony_template_writes_a_line_only_tools_bring(tokenizers):
    """Why the count renders without tools: text outside the tools' own strings comes with them."""
    source, special, _ = WITH_TOOLS["harmony"]
    got = count_chat(tokenizers["harmony"], rounds(9), TemplateFormat(ChatTemplate.from_jinja(source, special_tokens=special)),
                     tools=[WEATHER])
    tool_text = "".join(got.text[s:e] for (s, e), k in zip(got.offsets, got.kinds) if k == TOOLS)
    assert "commentary channel" in tool_text


# ----- the sandbox's attribute access and namespace -----------------------------------------------

EXPRESSIONS = [
    "{{ m.role }}", "{{ m.missing is defined }}", "{{ m.items is callable }}", "{{ m['items'] }}",
    "{{ m.get('role') }}", "{{ m.keys() | list }}", "{{ m.nested.deep }}", "{{ m.nested.gone is defined }}",
    "{{ m.values is callable }}", "{{ m.copy is callable }}", "{{ m | attr('role') }}", "{{ m.count }}",
    "{% for k, v in m.items() %}{{ k }}={{ v }};{% endfor %}", "{{ m.1 is defined }}", "{{ m['1'] }}",
]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_dict_attributes_read_as_jinja_reads_them(expression):
    m = {"role": "user", "items": "a key named like a method", "nested": {"deep": "yes"}, "count": 3, "1": "one"}
    plain = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    expected = plain.from_string(expression).render(m=m)
    assert render_template(expression, messages=[], variables={"m": m}) == expected


@pytest.mark.parametrize("expression", ["{{ m.__class__ }}", "{{ m.__init__ }}", "{{ m._private is defined }}"])
def test_dict_dunder_attributes_stay_blocked(expression):
    m = {"role": "user", "_private": 1}
    if expression.endswith("is defined }}"):
        # an underscore key is a key like any other, as in Jinja
        assert render_template(expression, messages=[], variables={"m": m}) == "True"
    else:
        with pytest.raises(ChatTemplateError, match="blocked"):
            render_template(expression, messages=[], variables={"m": m})


def test_namespace_holds_values_and_refuses_what_it_refused():
    source = ("{% set ns = namespace(n=0, seen=[]) %}{% for x in 'abcd' %}{% set ns.n = ns.n + 1 %}"
              "{% set ns.last = x %}{% endfor %}{{ ns.n }} {{ ns.last }} {{ ns.seen }} {{ ns.missing is defined }} "
              "[{{ ns._values }}] {{ ns['n'] }}")
    assert render_template(source, messages=[]) == "4 d [] False [] 4"
    for bad in ("{% set ns = namespace() %}{% set ns._x = 1 %}", "{% set ns = namespace(_x=1) %}",
                "{% set ns = namespace() %}{{ ns.__class__ }}"):
        with pytest.raises(ChatTemplateError, match="blocked"):
            render_template(bad, messages=[])
    big = "{% set ns = namespace(s='') %}{% for i in range(30) %}{% set ns.s = ns.s ~ 'xxxxxxxxxx' %}{% endfor %}"
    with pytest.raises(ChatTemplateError, match="size limit"):
        render_template(big, messages=[], limits=RenderLimits(max_chars=100))


# ----- special_regex as a prefix tree -----------------------------------------------------------------

ALPHABET = "ab<|>[ ]\\.\n"
TOKENS = st.lists(st.text(ALPHABET, min_size=1, max_size=6), min_size=1, max_size=10)


@settings(max_examples=150, deadline=None)
@given(TOKENS, st.text(ALPHABET, max_size=80))
def test_special_regex_finds_what_the_alternation_finds(tokens, text):
    got, want = special_regex(tokens), _alternation(set(tokens))
    assert [m.span() for m in got.finditer(text)] == [m.span() for m in want.finditer(text)]
    assert got.sub("#", text) == want.sub("#", text)
    assert bool(got.search(text)) == bool(want.search(text))


def test_special_regex_on_a_real_tokenizer_and_on_deep_trees(load):
    tok = load("o200k_harmony")
    text = json.dumps(rounds(30)) + "".join(tok.special_tokens) + "<|reserved_200013|><|end|x<|start|>"
    got, want = special_regex(tok.special_tokens), _alternation(set(tok.special_tokens))
    assert [m.span() for m in got.finditer(text)] == [m.span() for m in want.finditer(text)]
    assert len(got.pattern) < len(want.pattern)  # written as the tree
    # every prefix a token: groups nested 300 deep would overflow the regex parser; the alternation serves
    chain = ["a" * k for k in range(1, 301)]
    assert [m.span() for m in special_regex(chain).finditer("a" * 700)] == [(0, 300), (300, 600), (600, 700)]
