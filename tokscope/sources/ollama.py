"""Models in Ollama's local store, by name: ``ollama:NAME[:TAG]``, read offline.

Ollama keeps what it pulls under ``~/.ollama/models`` (``OLLAMA_MODELS`` overrides it; a system
install uses ``/usr/share/ollama/.ollama/models``)::

    manifests/<host>/<namespace>/<name>/<tag>   a JSON manifest: its layers, by media type
    blobs/sha256-<hex>                          each layer's bytes, named by their digest

The layer of media type ``application/vnd.ollama.image.model`` is the model: a GGUF file, whose
tokenizer :func:`~.model_files.load_gguf` reads (its metadata only). An
``application/vnd.ollama.image.template`` layer is the chat template Ollama itself renders: Go
template syntax, not Jinja, so tokscope shows it but counts with the GGUF's own embedded Jinja
template (``tokenizer.chat_template``), or a built-in format when there is none; the
tokenizer's :class:`~.model_files.ModelFiles` says which (``chat_note``).

``ollama:llama3.2`` is ``registry.ollama.ai/library/llama3.2:latest``; ``ollama:ns/name:tag`` and
``ollama:host/ns/name:tag`` name other namespaces and registries. Nothing contacts a server.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.text.display import safe_text
from ..core.tokenizer.tokenizer import Tokenizer
from .errors import SourceError

PREFIX = "ollama:"
DEFAULT_HOST = "registry.ollama.ai"
DEFAULT_NAMESPACE = "library"
DEFAULT_TAG = "latest"
MODEL_LAYER = "application/vnd.ollama.image.model"
TEMPLATE_LAYER = "application/vnd.ollama.image.template"
#: manifests and templates are small; anything larger is not one
MAX_MANIFEST_BYTES = 1 << 20
MAX_TEMPLATE_BYTES = 1 << 20

_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}(:[0-9]{1,5})?$")
_DIGEST = re.compile(r"^sha256[:-]([0-9a-f]{64})$")


def is_ollama_name(name: str) -> bool:
    """Whether ``name`` asks for a model in Ollama's store.

    >>> is_ollama_name("ollama:llama3.2"), is_ollama_name("llama3")
    (True, False)
    """
    return name.startswith(PREFIX)


@dataclass(frozen=True, slots=True)
class Reference:
    """A model's place in the store: ``host/namespace/name:tag``."""

    host: str
    namespace: str
    name: str
    tag: str

    @property
    def display(self) -> str:
        """The shortest ``ollama:`` name that means this model.

        >>> parse("ollama:registry.ollama.ai/library/qwen2:latest").display
        'ollama:qwen2'
        >>> parse("ollama:me/tiny:q4").display
        'ollama:me/tiny:q4'
        """
        where = self.name
        if self.namespace != DEFAULT_NAMESPACE or self.host != DEFAULT_HOST:
            where = f"{self.namespace}/{where}"
        if self.host != DEFAULT_HOST:
            where = f"{self.host}/{where}"
        return PREFIX + where + ("" if self.tag == DEFAULT_TAG else f":{self.tag}")


def parse(name: str) -> Reference:
    """The :class:`Reference` of an ``ollama:`` name; a malformed one is a one-line error.

    >>> parse("ollama:llama3.2")
    Reference(host='registry.ollama.ai', namespace='library', name='llama3.2', tag='latest')
    >>> parse("ollama:localhost:5000/me/tiny:v1")
    Reference(host='localhost:5000', namespace='me', name='tiny', tag='v1')
    """
    rest = name[len(PREFIX):] if name.startswith(PREFIX) else name
    path, tag = rest, DEFAULT_TAG
    last = rest.rsplit("/", 1)[-1]
    if ":" in last:
        path, tag = rest[:len(rest) - len(last)] + last.split(":", 1)[0], last.split(":", 1)[1]
    parts = path.split("/")
    if len(parts) == 1:
        host, namespace, model = DEFAULT_HOST, DEFAULT_NAMESPACE, parts[0]
    elif len(parts) == 2:
        host, (namespace, model) = DEFAULT_HOST, parts
    elif len(parts) == 3:
        host, namespace, model = parts
    else:
        raise SourceError(f"{safe_text(name)!r} is not an Ollama model name (ollama:NAME[:TAG], ollama:NAMESPACE/NAME[:TAG] "
                          f"or ollama:HOST/NAMESPACE/NAME[:TAG])")
    if not (_HOST.match(host) and _PART.match(namespace) and _PART.match(model) and _PART.match(tag)):
        raise SourceError(f"{safe_text(name)!r} is not an Ollama model name (ollama:NAME[:TAG])")
    return Reference(host, namespace, model, tag)


def store_dirs() -> list[Path]:
    """Where Ollama's store is looked for, in order: ``OLLAMA_MODELS`` alone when it is set, else
    the user's store and a system install's."""
    if os.environ.get("OLLAMA_MODELS"):
        return [Path(os.environ["OLLAMA_MODELS"]).expanduser()]
    return [Path.home() / ".ollama" / "models", Path("/usr/share/ollama/.ollama/models")]


@dataclass(frozen=True, slots=True)
class OllamaModel:
    """A model found in the store: its manifest, its GGUF blob, and Ollama's own (Go) template."""

    ref: Reference
    manifest: Path
    blob: Path
    size: int | None = None
    #: the text of the manifest's template layer (Go template syntax), when it has one
    template: str | None = None

    @property
    def name(self) -> str:
        return self.ref.display


def _read_small(path: Path, limit: int) -> bytes | None:
    """A small regular file's bytes (None for anything else: missing, too large, a FIFO)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with open(path, "rb") as handle:
            return handle.read(limit + 1)[:limit]
    except OSError:
        return None


def _blob(store: Path, digest: object) -> Path | None:
    found = _DIGEST.match(digest) if isinstance(digest, str) else None
    return store / "blobs" / f"sha256-{found.group(1)}" if found else None


def _read_manifest(store: Path, ref: Reference, path: Path, *, strict: bool) -> OllamaModel | None:
    shown = ref.display
    data = _read_small(path, MAX_MANIFEST_BYTES)
    if data is None:
        return None
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        if strict:
            raise SourceError(f"{shown}: its manifest {safe_text(path)} is not valid JSON") from None
        return None
    layers = manifest.get("layers") if isinstance(manifest, dict) else None
    if not isinstance(layers, list):
        if strict:
            raise SourceError(f"{shown}: its manifest {safe_text(path)} has no layers")
        return None
    model = next((layer for layer in layers if isinstance(layer, dict) and layer.get("mediaType") == MODEL_LAYER), None)
    if model is None:
        if strict:
            raise SourceError(f"{shown} has no model layer ({MODEL_LAYER}) in its manifest")
        return None
    blob = _blob(store, model.get("digest"))
    if blob is None:
        if strict:
            raise SourceError(f"{shown}: its model layer has no sha256 digest")
        return None
    template = None
    for layer in layers:
        if isinstance(layer, dict) and layer.get("mediaType") == TEMPLATE_LAYER:
            where = _blob(store, layer.get("digest"))
            raw = _read_small(where, MAX_TEMPLATE_BYTES) if where is not None else None
            if raw is not None:
                template = raw.decode("utf-8", "replace")
            break
    size = model.get("size")
    return OllamaModel(ref, path, blob, size if isinstance(size, int) and not isinstance(size, bool) else None, template)


def find(name: str) -> OllamaModel | None:
    """The model an ``ollama:`` name stands for, in the first store that has its manifest (None
    when no store has it)."""
    ref = parse(name)
    for store in store_dirs():
        path = store / "manifests" / ref.host / ref.namespace / ref.name / ref.tag
        if path.is_file():
            return _read_manifest(store, ref, path, strict=True)
    return None


def not_found_message(name: str) -> str:
    where = ", ".join(safe_text(str(d)) for d in store_dirs())
    ref = parse(name)
    return (f"{safe_text(name)!r} is not in Ollama's local store (looked for manifests/{ref.host}/{ref.namespace}/"
            f"{ref.name}/{ref.tag} in {where}; tokscope never downloads: pull it with Ollama first)")


def local_models() -> list[OllamaModel]:
    """Every model in the local stores whose manifest has a model layer, by name (the first store
    wins for a name in two)."""
    out: dict[str, OllamaModel] = {}
    for store in store_dirs():
        root = store / "manifests"
        try:
            hosts = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            continue
        for host in hosts:
            for path in sorted(host.glob("*/*/*")):
                namespace, model, tag = path.parent.parent.name, path.parent.name, path.name
                try:
                    ref = Reference(host.name, namespace, model, tag)
                    found = _read_manifest(store, ref, path, strict=False) if path.is_file() else None
                except SourceError:
                    found = None
                if found is not None and found.name not in out:
                    out[found.name] = found
    return sorted(out.values(), key=lambda m: m.name)


def chat_note(model: OllamaModel, has_jinja: bool) -> str:
    """Which template a chat count of this model uses, said once."""
    if model.template is None:
        return (f"{model.name}: chat counts use the GGUF's embedded Jinja template" if has_jinja else
                f"{model.name}: the GGUF embeds no Jinja chat template; chat counts use the format its special tokens call for")
    if has_jinja:
        return (f"{model.name}: Ollama's own template is Go template syntax, not Jinja; chat counts use the GGUF's "
                f"embedded Jinja template instead")
    return (f"{model.name}: Ollama's own template is Go template syntax, not Jinja, and the GGUF embeds no Jinja "
            f"template; chat counts use the format its special tokens call for")


def load(name: str) -> Tokenizer:
    """The tokenizer of the Ollama model ``name`` (its GGUF blob's metadata only)."""
    from . import model_files

    model = find(name)
    if model is None:
        raise SourceError(not_found_message(name))
    if not model.blob.is_file():
        raise SourceError(f"{model.name}: its model blob {safe_text(model.blob)} is missing (a partial pull?)")
    def amend(files: model_files.ModelFiles) -> model_files.ModelFiles:
        return replace(files, ollama_template=model.template, chat_note=chat_note(model, bool(files.chat_templates)))

    return model_files.load_gguf(model.blob, label=model.name, amend=amend)
