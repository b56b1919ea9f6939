"""A fake Ollama store and a tiny GGUF tokenizer, built in a temporary folder for the tests.

The store is laid out as Ollama lays out ``~/.ollama/models``: a JSON manifest per
``host/namespace/name/tag`` whose layers name blobs by digest, ``blobs/sha256-<hex>`` holding
them. The model blob is a GGUF file written by tokscope's own writer
(:func:`tokscope.core.formats.gguf.build_metadata`): byte-level BPE over GPT-2's byte alphabet
with a few merges, so that ``hello`` is one token.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tokscope.core.formats.gguf import build_metadata
from tokscope.core.text.byte_alphabet import BYTE_TO_CHAR

MERGES = ["h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld"]
CHAT_TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
GO_TEMPLATE = "{{ if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end }}<|im_start|>user\n{{ .Prompt }}"


def tiny_gguf(*, pre: str | None = "gpt-2", chat_template: str | None = CHAT_TEMPLATE) -> bytes:
    """A GGUF file's bytes: a gpt2 tokenizer of 256 bytes, the merges' results and three control
    tokens (``<|endoftext|>``, ``<|im_start|>``, ``<|im_end|>``)."""
    tokens = [BYTE_TO_CHAR[b] for b in range(256)]
    tokens += ["".join(m.split(" ")) for m in MERGES]
    tokens += ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    types = [1] * (len(tokens) - 3) + [3, 3, 3]
    meta = {"general.architecture": "qwen2", "general.name": "tiny", "qwen2.context_length": 4096,
            "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": tokens, "tokenizer.ggml.token_type": types,
            "tokenizer.ggml.merges": MERGES, "tokenizer.ggml.eos_token_id": len(tokens) - 3}
    if pre is not None:
        meta["tokenizer.ggml.pre"] = pre
    if chat_template is not None:
        meta["tokenizer.chat_template"] = chat_template
    return build_metadata(meta)


def make_store(root: Path, model: bytes, *, name: str = "tiny", tag: str = "latest", namespace: str = "library",
               host: str = "registry.ollama.ai", template: str | None = GO_TEMPLATE) -> Path:
    """Add a model to the fake store at ``root``; returns the manifest's path."""
    blobs = root / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)

    def put(data: bytes) -> dict:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / f"sha256-{digest}").write_bytes(data)
        return {"digest": f"sha256:{digest}", "size": len(data)}

    layers = [{"mediaType": "application/vnd.ollama.image.model", **put(model)}]
    if template is not None:
        layers.append({"mediaType": "application/vnd.ollama.image.template", **put(template.encode())})
    layers.append({"mediaType": "application/vnd.ollama.image.params", **put(b'{"stop": ["<|im_end|>"]}')})
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": {"mediaType": "application/vnd.docker.container.image.v1+json", **put(b"{}")},
                "layers": layers}
    folder = root / "manifests" / host / namespace / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / tag).write_text(json.dumps(manifest), encoding="utf-8")
    return folder / tag
