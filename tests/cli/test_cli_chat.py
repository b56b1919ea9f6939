"""``tokscope chat``: the rendered prompt, ids, per-message spans, overhead and total; warnings on
standard error; the model's own template from its folder; one-line errors."""

from __future__ import annotations

import json

import pytest

from tokscope.cli import main
from tokscope.core import chat as core_chat
from tokscope.sources import registry

CONV = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Hi! What is 2+2?"},
    {"role": "assistant", "content": "4."},
    {"role": "user", "content": "And 3+3?"},
]


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def conv_file(tmp_path):
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONV))
    return path


@pytest.mark.parametrize("encoding", ["o200k_harmony", "llama3", "cl100k_base"])
def test_json_has_text_ids_messages_overhead_and_total(capsys, conv_file, encoding):
    code, out, err = run(capsys, "chat", "-e", encoding, "-f", str(conv_file), "--add-generation-prompt", "--json")
    assert code == 0, err
    doc = json.loads(out)
    want = core_chat.count_chat(registry.load(encoding), CONV, add_generation_prompt=True)
    assert doc["ids"] == list(want.ids) and doc["text"] == want.text
    assert doc["total"] == len(doc["ids"]) == doc["overhead"] + doc["content_tokens"]
    assert [m["role"] for m in doc["messages"]] == [m["role"] for m in CONV]
    spans = sorted(s for m in doc["messages"] for s in m["spans"])
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # the messages' spans never overlap
    assert all(m["start"] < m["end"] for m in doc["messages"])
    assert doc["add_generation_prompt"] is True


def test_plain_output_and_warnings(capsys, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "say <|endoftext|> \x1b[31mred"}]}))
    code, out, err = run(capsys, "chat", "-e", "o200k_harmony", "-f", str(path))
    assert code == 0
    assert "total:" in out and "overhead:" in out and "messages:" in out
    assert "\x1b" not in out and "\x1b" not in err  # the content is shown, inert
    assert "warning:" in err and "<|endoftext|>" in err
    assert all(line.startswith("tokscope: warning:") for line in err.splitlines())


def test_the_models_own_template_is_used(capsys, tmp_path, conv_file, monkeypatch):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder = tmp_path / "model"
    folder.mkdir()
    tok = Tokenizer(models.WordLevel({"<unk>": 0, "<s>": 1, "hi": 2}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(["<turn>"])
    tok.save(str(folder / "tokenizer.json"))
    template = "{% for m in messages %}<turn>{{ m['role'] }} {{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}<turn>assistant{% endif %}"
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = run(capsys, "chat", "-e", str(folder), "-f", str(conv_file), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["format"] == "template" and doc["text"].startswith("<turn>system You are terse.")
    assert doc["ids"][0] == tok.token_to_id("<turn>")
    bad = tmp_path / "bad.jinja"
    bad.write_text("line one\n{{ raise_exception('no system messages, please') }}")
    code, _, err = run(capsys, "chat", "-e", str(folder), "-f", str(conv_file), "--template", str(bad))
    assert code == 1 and "no system messages, please" in err and "line 2" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("not json", "not valid JSON"),
        ('[{"content": "no role"}]', "role"),
        ('{"messages": 3}', "messages"),
        ('[{"role": "user", "content": [{"type": "image"}]}]', "type"),
    ],
    ids=["not-json", "no-role", "messages-not-a-list", "unknown-content-type"],
)
def test_bad_conversations_are_one_line_errors(capsys, tmp_path, content, expected):
    path = tmp_path / "c.json"
    path.write_text(content)
    code, out, err = run(capsys, "chat", "-e", "o200k_base", "-f", str(path))
    assert code in (1, 2) and out == "" and expected in err and err.count("\n") == 1


def test_tools_are_counted(capsys, conv_file, tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "add", "description": "Add two numbers", "parameters": {
            "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}}]))
    code, out, err = run(capsys, "chat", "-e", "o200k_harmony", "-f", str(conv_file), "--tools", str(tools), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["tool_tokens"] > 0 and "functions" in doc["text"]
