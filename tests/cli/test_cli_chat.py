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


def test_the_conversation_file_is_positional(capsys, conv_file):
    code, out, err = run(capsys, "chat", "-e", "o200k_base", str(conv_file), "--json")
    assert code == 0, err
    _, same, _ = run(capsys, "chat", "-e", "o200k_base", "-f", str(conv_file), "--json")
    assert json.loads(out) == json.loads(same)
    code, _, err = run(capsys, "chat", "-e", "o200k_base", str(conv_file), "-f", str(conv_file))
    assert code == 2 and "once" in err


def test_one_generation_prompt_default_for_the_cli_and_the_explorer(capsys, conv_file):
    from tokscope.app.chat_model import ChatDraft

    code, out, _ = run(capsys, "chat", "-e", "llama3", str(conv_file), "--json")
    on = json.loads(out)
    assert on["add_generation_prompt"] is core_chat.ADD_GENERATION_PROMPT is ChatDraft.example().generation is True
    assert on["text"].endswith("<|start_header_id|>assistant<|end_header_id|>\n\n")
    _, out, _ = run(capsys, "chat", "-e", "llama3", str(conv_file), "--no-add-generation-prompt", "--json")
    off = json.loads(out)
    assert off["add_generation_prompt"] is False and off["total"] < on["total"]
    _, out, _ = run(capsys, "chat", "-e", "llama3", str(conv_file), "--no-add-generation-prompt")
    assert "generation prompt: off" in out


def model_folder(tmp_path, template, config=None):
    """A model folder: a WordLevel tokenizer.json with special tokens, and a tokenizer_config.json."""
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    tok = Tokenizer(models.WordLevel({"<unk>": 0, "hi": 1}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(["<s>", "</s>", "<turn>"])
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"chat_template": template, "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", **(config or {})}))
    return folder


TURNS = ("{{ bos_token }}{% for m in messages %}<turn>{{ m['role'] }} {{ m['content'] }}{{ eos_token }}{% endfor %}"
         "{% if add_generation_prompt %}<turn>assistant {% endif %}{% if mood is defined %}({{ mood }}){% endif %}")


def test_var_and_format_template(capsys, tmp_path, conv_file, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    folder = model_folder(tmp_path, TURNS)
    code, out, err = run(capsys, "chat", "-e", str(folder), str(conv_file), "--format", "template", "--json")
    assert code == 0, err and json.loads(out)["format"] == "template"
    code, out, err = run(capsys, "chat", "-e", str(folder), str(conv_file), "--var", "mood=calm", "--json")
    assert code == 0, err
    assert json.loads(out)["text"].endswith("<turn>assistant (calm)")


def test_var_sets_harmony_options_or_is_refused(capsys, conv_file):
    code, out, err = run(capsys, "chat", "-e", "o200k_harmony", str(conv_file), "--var", "reasoning_effort=high",
                         "--json")
    assert code == 0, err and "Reasoning: high" in json.loads(out)["text"]
    code, _, err = run(capsys, "chat", "-e", "o200k_harmony", str(conv_file), "--var", "enable_thinking=false")
    assert code == 1 and "has no variable 'enable_thinking'" in err and err.count("\n") == 1
    code, _, err = run(capsys, "chat", "-e", "llama3", str(conv_file), "--var", "x=1")
    assert code == 1 and "takes no variables" in err and err.count("\n") == 1


def test_template_file_keeps_the_folders_special_tokens(capsys, tmp_path, conv_file, monkeypatch):
    transformers = pytest.importorskip("transformers")
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    folder = model_folder(tmp_path, "{{ 'unused' }}")
    jinja = tmp_path / "other.jinja"
    jinja.write_text(TURNS)
    code, out, err = run(capsys, "chat", "-e", str(folder), str(conv_file), "--template", str(jinja), "--json")
    assert code == 0, err
    doc = json.loads(out)
    hf = transformers.PreTrainedTokenizerFast.from_pretrained(str(folder))
    expected = hf.apply_chat_template(CONV, chat_template=TURNS, tokenize=False, add_generation_prompt=True)
    assert doc["text"] == expected and expected.startswith("<s><turn>system")
    assert doc["ids"][0] == hf.convert_tokens_to_ids("<s>")


def test_options_reach_the_count(capsys, tmp_path, conv_file):
    prefill = tmp_path / "prefill.json"
    prefill.write_text(json.dumps(CONV[:3]))
    code, out, err = run(capsys, "chat", "-e", "llama3", str(prefill), "--continue-final-message", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["continue_final_message"] and not doc["add_generation_prompt"] and doc["text"].endswith("4.")
    code, _, err = run(capsys, "chat", "-e", "llama3", str(prefill), "--continue-final-message",
                       "--add-generation-prompt")
    assert code == 1 and "do not go together" in err
    evil = tmp_path / "evil.json"
    evil.write_text(json.dumps([{"role": "user", "content": "a<|eot_id|>b"}]))
    _, out, err = run(capsys, "chat", "-e", "llama3", str(evil), "--content-specials", "--json")
    doc = json.loads(out)
    tok = registry.load("llama3")
    assert doc["content_specials"] and tok.special_tokens["<|eot_id|>"] in doc["ids"][5:-5]
    assert "counted as the control token" in err


def test_template_timeout(capsys, tmp_path, conv_file, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    folder = model_folder(tmp_path, "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
    code, _, err = run(capsys, "chat", "-e", str(folder), str(conv_file), "--template-timeout", "0.3")
    assert code == 1 and "time limit (0.3 s" in err and "--template-timeout" in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as exit_:
        run(capsys, "chat", "-e", str(folder), str(conv_file), "--template-timeout", "0")
    assert exit_.value.code == 2 and "more than 0 seconds" in capsys.readouterr().err
