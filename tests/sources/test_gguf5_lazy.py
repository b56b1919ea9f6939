"""A GGUF load imports only what a GGUF load needs (issue 19's cached-load target is mostly import
time): the chat template sandbox (jinja2), the JSON tokenizer reader, the SentencePiece protobuf
reader and the UI come in when something uses them, not when a model file is read and encoded.

Each check runs in a fresh interpreter and reads its ``sys.modules``: loading and encoding must
leave the named modules out, and rendering the file's own chat template afterwards must bring
jinja2 in (so the check does see an import when there is one). Both paths are covered: a GGUF file
(``-e model.gguf``) and an Ollama model (``-e ollama:NAME``), through the command line too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ollama_store import make_store, tiny_gguf  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

#: modules a GGUF load and encode has no use for
UNNEEDED = ("jinja2", "tokscope.core.chat.templates", "tokscope.core.chat.count", "tokscope.core.formats.tokenizer_json",
            "tokscope.core.formats.sentencepiece_model", "tokscope.core.formats.gguf_sentencepiece", "textual", "rich",
            "tokscope.app", "tiktoken", "tiktoken_ext", "tokscope.core.train.trainer")

PROBE = """
import json, sys
from tokscope.sources import model_files, registry
tokenizer = registry.load({name!r})
ids = tokenizer.encode("hello world")
files = model_files.describe(tokenizer)
before = sorted(m for m in {unneeded!r} if m in sys.modules)
template = model_files.chat_template_of(tokenizer)
rendered = None
if template is not None:
    from tokscope.core.chat.templates import render_template
    rendered = render_template(template.select()[1], messages=[{{"role": "user", "content": "hi"}}])
print(json.dumps({{"ids": ids, "templates": sorted(files.chat_templates), "before": before,
                  "rendered": rendered, "jinja_after": "jinja2" in sys.modules}}))
"""


def _env(tmp_path: Path, store: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OLLAMA_MODELS=str(store), TOKSCOPE_DATA_DIR=str(tmp_path / "data"),
               TOKSCOPE_CACHE_DIR=str(tmp_path / "cache"))
    return env


def _probe(name: str, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE.format(name=name, unneeded=UNNEEDED)], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _stores(tmp_path: Path) -> tuple[Path, Path]:
    store = tmp_path / "ollama-models"
    make_store(store, tiny_gguf())
    model = tmp_path / "tiny.gguf"
    model.write_bytes(tiny_gguf())
    return store, model


def test_a_gguf_loads_and_encodes_without_the_template_sandbox(tmp_path):
    store, model = _stores(tmp_path)
    env = _env(tmp_path, store)
    for name in (str(model), "ollama:tiny"):
        for run in ("cold", "cached"):  # the second run takes the tokenizer from the data-only cache
            got = _probe(name, env)
            assert got["templates"] == ["default"], (name, run)
            assert len(got["ids"]) == 2, (name, run)
            assert got["before"] == [], (name, run, got["before"])
            # the file's own Jinja template renders when asked, and only then brings jinja2 in
            assert got["jinja_after"] is True, (name, run)
            assert got["rendered"] == "<|im_start|>user\nhi<|im_end|>\n", (name, run)


CLI = """
import runpy, sys
sys.argv = ["tokscope", *{args!r}]
try:
    runpy.run_module("tokscope", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print("MODULES", code, *sorted(m for m in {unneeded!r} if m in sys.modules))
"""


def test_counting_with_a_gguf_on_the_command_line_imports_no_template_sandbox(tmp_path):
    store, model = _stores(tmp_path)
    env = _env(tmp_path, store)
    text = tmp_path / "text.txt"
    text.write_text("hello world\n", encoding="utf-8")
    for name in (str(model), "ollama:tiny"):
        done = subprocess.run([sys.executable, "-c", CLI.format(args=["count", "-e", name, str(text)], unneeded=UNNEEDED)],
                              capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
        last = done.stdout.strip().splitlines()[-1].split()
        assert last[:2] == ["MODULES", "0"], done.stdout + done.stderr
        assert last[2:] == [], (name, last[2:])
    # a chat count does render the template: the same probe sees jinja2 come in
    conversation = tmp_path / "chat.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "hello"}]), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", CLI.format(args=["chat", "-e", str(model), str(conversation)],
                                                              unneeded=("jinja2",))],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.stdout.strip().splitlines()[-1].split() == ["MODULES", "0", "jinja2"], done.stdout + done.stderr


def test_the_cache_source_limit_is_the_tokenizer_json_limit():
    """The cache names its limit without importing the JSON reader; the two must agree."""
    from tokscope.core.formats import tokenizer_json
    from tokscope.sources import cache, model_files

    assert cache.MAX_SOURCE_BYTES == tokenizer_json.MAX_FILE_BYTES == model_files.MAX_FILE_BYTES




def test_the_encoding_names_are_words_so_a_path_needs_no_tiktoken():
    """The registry tells a path or an ``ollama:`` name from an OpenAI encoding's without importing
    tiktoken (the command-line test above sees it stay out) because tiktoken's names are ASCII
    letters, digits and underscores; a name that is not would be taken for a path."""
    from tokscope.sources import registry

    names = registry.builtin_names()
    assert "o200k_base" in names
    for name in names:
        assert name.isascii() and name.replace("_", "").isalnum(), name
