"""Tokenizers from files a user points at: a ``tokenizer.json``, a model folder, a Tekken file, a
known model's rank file; and what a model folder says beside it (chat template, BOS/EOS, context).

Large files are parsed once and kept in tokscope's cache (:mod:`.cache`), keyed by the file's own
sha256, so a second load of Llama 3's 9 MB ``tokenizer.json`` skips parsing.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.formats import sentencepiece_model as spm
from ..core.formats import tokenizer_json as hf
from ..core.chat.templates import ChatTemplate
from ..core.chat.context import ContextWindow, context_window, context_windows_for
from ..core.text.display import safe_text
from ..core.text.errors import TokenizerFileError, TokscopeError
from ..core.tokenizer.tokenizer import Tokenizer
from . import cache, open_models
from .builtin import SourceError
from .hub import tokenizer_file

#: files larger than this are refused before they are read
MAX_FILE_BYTES = hf.MAX_FILE_BYTES
#: the names SentencePiece models go by in a model folder
SPM_NAMES = ("tokenizer.model", "spiece.model", "spm.model", "sentencepiece.bpe.model")


@dataclass(frozen=True, slots=True)
class ModelFiles:
    """Where a tokenizer came from and what its folder says about the model.

    ``chat_templates`` maps a template's name (``default``, ``tool_use`` ...) to its Jinja source,
    from ``tokenizer_config.json`` (a string or a named list) or ``chat_template.jinja``;
    ``config`` is ``tokenizer_config.json`` as read (special-token names, ``add_bos_token`` ...);
    ``context`` is the model's context size where the folder says it (``max_position_embeddings``
    in ``config.json``, else a sane ``model_max_length``).
    """

    path: Path
    folder: Path | None = None
    model_id: str | None = None
    chat_templates: dict[str, str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    context: int | None = None
    #: the text of ``chat_template.jinja`` beside the tokenizer, when there is one
    jinja: str | None = None


def _read_json(path: Path) -> Any:
    try:
        if path.stat().st_size > 16 * 1024 * 1024:
            return None
        return json.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def folder_facts(folder: Path) -> tuple[dict[str, str], dict[str, Any], int | None, str | None]:
    """``(chat_templates, tokenizer_config, context, chat_template.jinja text)`` of a model folder
    (empty where absent)."""
    config = _read_json(folder / "tokenizer_config.json")
    config = config if isinstance(config, dict) else {}
    templates: dict[str, str] = {}
    raw = config.get("chat_template")
    if isinstance(raw, str):
        templates["default"] = raw
    elif isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("template"), str):
                templates[item["name"]] = item["template"]
    jinja = None
    path = folder / "chat_template.jinja"
    if path.is_file():
        try:
            jinja = path.read_text(encoding="utf-8")
            templates["default"] = jinja
        except (OSError, UnicodeDecodeError):
            jinja = None
    context = None
    model_config = _read_json(folder / "config.json")
    if isinstance(model_config, dict):
        value = model_config.get("max_position_embeddings")
        text_config = model_config.get("text_config")
        if not isinstance(value, int) and isinstance(text_config, dict):
            value = text_config.get("max_position_embeddings")
        if isinstance(value, int) and 0 < value < 1 << 32:
            context = value
    if context is None:
        value = config.get("model_max_length")
        if isinstance(value, int) and 0 < value < 1 << 30:  # huge values mean "no limit recorded"
            context = value
    return templates, config, context, jinja


def _sniff(path: Path) -> str:
    """``json`` for a JSON file, ``ranks`` for a tiktoken-format rank file, ``spm`` for a
    SentencePiece model, else ``other``."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError as exc:
        raise SourceError(f"cannot read {safe_text(path)}: {exc.strerror or exc}") from None
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith((b"{", b"[")):
        return "json"
    first = head.split(b"\n", 1)[0].split()
    if len(first) == 2 and first[1].isdigit():
        return "ranks"
    if spm.looks_like(head) or path.suffix == ".model" or ".model." in path.name:
        return "spm"
    return "other"


def load_path(path: Path, *, name: str | None = None, model_id: str | None = None) -> Tokenizer:
    """The tokenizer in a file or model folder (``tokenizer.json``, ``tekken.json``, a known model's
    ``tokenizer.model``/``.tiktoken``); one-line :class:`SourceError` for anything else."""
    path = path.expanduser()
    folder: Path | None = None
    if path.is_dir():
        folder = path
        found = tokenizer_file(path)
        if found is None:
            raise SourceError(f"{safe_text(path)} holds no tokenizer file (looked for tokenizer.json, tekken.json, tokenizer.model, spiece.model, spm.model)")
        path = found
    elif path.name in ("tokenizer.json", "tekken.json", *SPM_NAMES) or path.parent.joinpath("tokenizer_config.json").is_file():
        folder = path.parent
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SourceError(f"cannot read {safe_text(path)}: {exc.strerror or exc}") from None
    if not path.is_file():
        raise SourceError(f"{safe_text(path)} is not a regular file")
    if size > MAX_FILE_BYTES:
        raise SourceError(f"{safe_text(path)} is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit for tokenizer files")
    label = name or model_id or (folder.name if folder is not None and path.name in ("tokenizer.json", "tekken.json",
                                                                                  *SPM_NAMES) else path.stem)
    kind = _sniff(path)
    if kind == "ranks":
        tokenizer = cache.cached_file(path, "rank-model", lambda data: _rank_model(path, data, label))
    elif kind == "json":
        tokenizer = cache.cached_file(path, "json-tokenizer", lambda data: _json_tokenizer(path, data, label))
    elif kind == "spm":
        tokenizer = cache.cached_file(path, "spm-model", lambda data: _spm_tokenizer(path, data, label))
    else:
        raise SourceError(f"{safe_text(path)} is not a tokenizer file tokscope can read (tokenizer.json, tekken.json, "
                          f"a SentencePiece .model, or a known model's tokenizer.model)")
    tokenizer.name = label
    templates, config, context, jinja = folder_facts(folder) if folder is not None else ({}, {}, None, None)
    tokenizer.model_files = ModelFiles(path, folder, model_id, templates, config, context, jinja)  # type: ignore[attr-defined]
    return tokenizer


def _rank_model(path: Path, data: bytes, label: str) -> Tokenizer:
    model = open_models.recognize_bytes(data)
    if model is None:
        raise SourceError(
            f"{safe_text(path)} is a rank file of no model tokscope knows (its pattern and special tokens are not in it); "
            f"import it with 'tokscope import {safe_text(path)} --pattern PATTERN'")
    return open_models.rank_tokenizer(data, model, str(path))


def _spm_tokenizer(path: Path, data: bytes, label: str) -> Tokenizer:
    try:
        return spm.from_model_bytes(data, label, safe_text(path))
    except TokenizerFileError as exc:
        raise SourceError(str(exc)) from None


def _json_tokenizer(path: Path, data: bytes, label: str) -> Tokenizer:
    try:
        obj = hf.parse(data, str(path))
    except TokenizerFileError as exc:
        raise SourceError(str(exc)) from None
    if hf.looks_like(obj):
        try:
            return hf.from_json(obj, label, str(path))
        except TokenizerFileError as exc:
            raise SourceError(str(exc)) from None
    if open_models.looks_like_tekken(obj):
        return open_models.tekken_tokenizer(obj, label, str(path))
    if isinstance(obj, dict) and "format" in obj and "merges" in obj:
        raise SourceError(f"{safe_text(path)} is a tokenizer tokscope saved: load it by its name or path through the registry")
    raise SourceError(f"{safe_text(path)} is JSON but not a tokenizer file (no 'model' object, not Tekken)")


def describe(tokenizer: Tokenizer) -> ModelFiles | None:
    """The :class:`ModelFiles` a tokenizer was loaded with (None for built-ins and saved ones)."""
    return getattr(tokenizer, "model_files", None)


def is_tokenizer_path(name: str) -> bool:
    """Whether ``name`` names an existing file or folder (a path wins over a model id)."""
    return bool(name) and os.path.exists(os.path.expanduser(name))


def chat_template_of(tokenizer: Tokenizer) -> ChatTemplate | None:
    """The model's own chat template(s), from the folder the tokenizer was loaded from (None when
    there is none: then a built-in format is used)."""
    files = describe(tokenizer)
    if files is None or not files.chat_templates:
        return None
    try:
        return ChatTemplate.from_config(files.config, jinja=files.jinja, origin=str(files.folder or files.path))
    except TokscopeError:
        return None


def contexts_of(tokenizer: Tokenizer) -> tuple[ContextWindow, ...]:
    """The model's context size: what its folder says, else tokscope's table by the model's name;
    for an OpenAI encoding, those of the models that use it (empty when unknown)."""
    files = describe(tokenizer)
    if files is not None and files.context is not None:
        return (ContextWindow(files.model_id or tokenizer.name, files.context, "the model's own config"),)
    window = context_window(tokenizer.name)
    if window.tokens is not None:
        return (window,)
    return context_windows_for(tokenizer.name)
