"""``count_chat`` with a chat template against transformers' ``apply_chat_template`` plus tiktoken's
``encode``, on long conversations, in the same process.

    PYTHONPATH=$PWD python bench/bench_chat_render.py [--messages 1601] [--repeat 3] [--template FILE]

The conversation is a system message, then rounds of a user question, an assistant tool call (JSON
arguments), the tool's result and the assistant's answer, cut at ``--messages``; with ``--tools``
it comes with two function definitions. The template is one written for this benchmark in the
style of gpt-oss's (harmony framing, a developer message holding the instructions and the tools,
and for every tool call a scan over the messages after it for a final answer, which makes the
template's own work grow with the square of the conversation), or the Jinja file ``--template``
names (gpt-oss's own, say; model files are never committed). The tokenizer is o200k_harmony.

Each row runs both sides ``--repeat`` times alternately and prints the median seconds of each, the
ratio of the medians (ours / theirs) and the range of the ratios of the runs taken in pairs: ours is
the whole count (render, locate the messages, encode, attribute, and the count without tools when
there are tools); theirs is the render alone plus encoding the rendered text with every special
token allowed. The ids are checked equal first. Not a test: run it by hand. The target: within 3x
for conversations of 1,000 messages and more.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings

from tokscope.core.chat import TemplateFormat, count_chat
from tokscope.core.chat.templates import ChatTemplate
from tokscope.sources import registry
from tokscope.sources.tiktoken_adapter import reference_for

TEMPLATE = r"""
{%- macro system_block() -%}
{{- model_identity if model_identity is defined else "You are ChatGPT, a large language model trained by OpenAI." }}
{{- "\nKnowledge cutoff: 2024-06\n\nReasoning: " + (reasoning_effort if reasoning_effort is defined else "medium") }}
{{- "\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message." }}
{%- if tools %}{{- "\nCalls to these tools must go to the commentary channel: 'functions'." }}{%- endif %}
{%- endmacro -%}
{{- "<|start|>system<|message|>" + system_block() + "<|end|>" }}
{%- if messages[0].role in ("system", "developer") %}
    {%- set instructions = messages[0].content %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set instructions = "" %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if instructions or tools %}
    {{- "<|start|>developer<|message|>" }}
    {%- if instructions %}{{- "# Instructions\n\n" + instructions }}{%- endif %}
    {%- if tools %}
        {{- "\n\n# Tools\n\n## functions\n\nnamespace functions {\n\n" }}
        {%- for tool in tools %}
            {{- "// " + tool.function.description + "\ntype " + tool.function.name + " = (_: " }}
            {{- tool.function.parameters | tojson }}
            {{- ") => any;\n\n" }}
        {%- endfor %}
        {{- "} // namespace functions" }}
    {%- endif %}
    {{- "<|end|>" }}
{%- endif %}
{%- set last_call = namespace(name=none) %}
{%- for message in loop_messages %}
    {%- if message.role == "assistant" and message.tool_calls %}
        {%- set later = namespace(final=false) %}
        {%- for future in loop_messages[loop.index:] %}
            {%- if future.role == "assistant" and "tool_calls" not in future %}
                {%- set later.final = true %}
            {%- endif %}
        {%- endfor %}
        {%- set call = message.tool_calls[0].function %}
        {%- if message.content and not later.final %}
            {{- "<|start|>assistant<|channel|>analysis<|message|>" + message.content + "<|end|>" }}
        {%- endif %}
        {{- "<|start|>assistant to=functions." + call.name + "<|channel|>commentary json<|message|>" }}
        {{- call.arguments | tojson }}
        {{- "<|call|>" }}
        {%- set last_call.name = call.name %}
    {%- elif message.role == "assistant" %}
        {{- "<|start|>assistant<|channel|>final<|message|>" + message.content + "<|end|>" }}
    {%- elif message.role == "tool" %}
        {{- "<|start|>functions." + last_call.name + " to=assistant<|channel|>commentary<|message|>" }}
        {{- message.content | tojson + "<|end|>" }}
    {%- elif message.role == "user" %}
        {{- "<|start|>user<|message|>" + message.content + "<|end|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|start|>assistant{%- endif %}
"""

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["C", "F"]}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search the documents.", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}},
]

CITIES = ["Paris", "Tokyo", "Lagos", "Lima", "Oslo", "Hanoi", "Quito", "Perth"]


def conversation(n: int) -> list[dict]:
    """A system message, then rounds of question, tool call, result and answer: ``n`` messages."""
    out = [{"role": "system", "content": "You are a weather assistant. Answer briefly and cite the tool."}]
    k = 0
    while len(out) < n:
        city = CITIES[k % len(CITIES)]
        out += [
            {"role": "user", "content": f"Question {k}: what is the weather in {city} today, and should I take a coat?"},
            {"role": "assistant", "content": f"I will look up {city}.", "tool_calls": [
                {"id": f"call_{k}", "type": "function", "function": {
                    "name": "get_weather", "arguments": json.dumps({"city": city, "unit": "C"})}}]},
            {"role": "tool", "tool_call_id": f"call_{k}", "content": f"{city}: {10 + k % 20} C, light rain, wind 12 km/h"},
            {"role": "assistant", "content": f"In {city} it is {10 + k % 20} C with light rain: take a coat. 🌧"},
        ]
        k += 1
    return out[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, nargs="+", default=[401, 1601, 2401])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--template", help="a Jinja chat template file (default: the benchmark's own)")
    parser.add_argument("--tools", action="store_true", help="give the conversation two tool definitions")
    args = parser.parse_args()

    source = open(args.template, encoding="utf-8").read() if args.template else TEMPLATE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tokenizers import Tokenizer as HFTokenizer
        from tokenizers import models
        from transformers import PreTrainedTokenizerFast

        hf = PreTrainedTokenizerFast(tokenizer_object=HFTokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")),
                                     unk_token="<unk>")
    tok = registry.load("o200k_harmony")
    ref = reference_for(tok)
    fmt = TemplateFormat(ChatTemplate.from_jinja(source))
    tools = TOOLS if args.tools else None

    def ours(messages: list[dict]) -> list[int]:
        return list(count_chat(tok, messages, fmt, tools=tools, add_generation_prompt=True).ids)

    def theirs(messages: list[dict]) -> list[int]:
        text = hf.apply_chat_template(messages, tools=tools, chat_template=source, tokenize=False,
                                      add_generation_prompt=True)
        return ref.encode(text, allowed_special="all")

    print(f"{'messages':>8}  {'tokens':>8}  {'tokscope s':>10}  {'transformers+tiktoken s':>23}  {'ratio':>6}  "
          f"{'range':>9}")
    for n in args.messages:
        messages = conversation(n)
        got, want = ours(messages), theirs(messages)
        if got != want:
            raise SystemExit(f"{n} messages: the ids differ ({len(got)} against {len(want)})")
        times: dict[str, list[float]] = {"ours": [], "theirs": []}
        for _ in range(args.repeat):
            for side, run in (("ours", ours), ("theirs", theirs)):
                start = time.perf_counter()
                run(messages)
                times[side].append(time.perf_counter() - start)
        a, b = statistics.median(times["ours"]), statistics.median(times["theirs"])
        ratios = [x / y for x, y in zip(times["ours"], times["theirs"])]
        print(f"{n:>8,}  {len(got):>8,}  {a:>10.3f}  {b:>23.3f}  {a / b:>5.1f}x  "
              f"{min(ratios):.1f}x-{max(ratios):.1f}x")


if __name__ == "__main__":
    main()
