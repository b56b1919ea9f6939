"""Tokenizers from files a user points at: a ``tokenizer.json``, a model folder, a Tekken file, a
known model's rank file; and what a model folder says beside it (chat template, BOS/EOS, context).

Large files are parsed once and kept in tokscope's cache (:mod:`.cache`), keyed by the file's own
sha256, so a second load of Llama 3's 9 MB ``tokenizer.json`` skips parsing.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.formats import gguf, sniff
from ..core.chat.context import ContextWindow, context_window, context_windows_for
from ..core.text.display import safe_text
from ..core.text.errors import TokenizerFileError, TokscopeError
from ..core.tokenizer.tokenizer import Tokenizer
from . import cache
from .errors import SourceError
from .hub import cache_root_of, is_model_id, tokenizer_file
from .regular_files import is_within, read_regular

if TYPE_CHECKING:  # the template sandbox (jinja2) is imported when a chat is rendered, not at load
    from ..core.chat.templates import ChatTemplate

#: files larger than this are refused before they are read
MAX_FILE_BYTES = cache.MAX_SOURCE_BYTES
#: the key of a tokenizer's :class:`ModelFiles` in :meth:`.Tokenizer.derived`
MODEL_FILES = "sources.model_files"
#: files up to this size are read whole before they are sniffed (one open, not two); a larger one
#: may be a GGUF model, of which only the metadata is read
READ_ONCE_BYTES = 1 << 20


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
    #: what the user should know about how this tokenizer was read (one line each)
    notes: tuple[str, ...] = ()
    #: what a GGUF file says beside its tokenizer (None for other files)
    gguf: gguf.GGUFFacts | None = None
    #: Ollama's own chat template for the model (Go template syntax, shown, never run)
    ollama_template: str | None = None
    #: which chat template a chat count uses, where that needs saying (an Ollama model's)
    chat_note: str | None = None


#: a model folder's ``tokenizer_config.json`` and ``config.json`` above this are refused
MAX_CONFIG_BYTES = 16 * 1024 * 1024
#: a ``chat_template.jinja`` above this is refused (real ones are tens of kilobytes)
MAX_TEMPLATE_BYTES = 4 * 1024 * 1024


def _present(path: Path) -> bool:
    return os.path.lexists(path)


def _read_side_file(path: Path, limit: int, within: Path | None) -> bytes | None:
    """A file beside the tokenizer: None when absent; a one-line :class:`SourceError` when it is
    not a regular file, is over ``limit``, or (inside the hub cache ``within``) links outside it."""
    if not _present(path):
        return None
    return read_regular(path, limit, what=f"a model folder's {path.name}", within=within)


def _read_json(path: Path, within: Path | None = None) -> Any:
    data = _read_side_file(path, MAX_CONFIG_BYTES, within)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None  # a malformed side file only loses what it would have said


def folder_facts(folder: Path, within: Path | None = None) -> tuple[dict[str, str], dict[str, Any], int | None, str | None]:
    """``(chat_templates, tokenizer_config, context, chat_template.jinja text)`` of a model folder
    (empty where absent); ``within``: the hub cache the folder is in (links must stay in it)."""
    config = _read_json(folder / "tokenizer_config.json", within)
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
    raw_jinja = _read_side_file(folder / "chat_template.jinja", MAX_TEMPLATE_BYTES, within)
    if raw_jinja is not None:
        try:
            jinja = raw_jinja.decode("utf-8")
            templates["default"] = jinja
        except UnicodeDecodeError:
            jinja = None
    context = None
    model_config = _read_json(folder / "config.json", within)
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


#: folder names that say nothing of the model in them
GENERIC_FOLDERS = frozenset({
    "models", "model", "tokenizer", "tokenizers", "snapshots", "files", "data", "tmp", "temp", "downloads",
    "download", "weights", "checkpoints", "checkpoint", "original", "hub", "cache", "assets", "out", "output",
})


def folder_label(folder: Path, file_name: str, config: dict[str, Any]) -> str:
    """The name of a tokenizer read from a model folder: the model id its hub-cache path or its own
    ``tokenizer_config.json`` (``name_or_path``) gives, else the folder's name; a folder whose name
    says nothing of the model (``models``, a commit hash) is named with the file after it.

    >>> folder_label(Path("/c/hub/models--acme--tiny/snapshots/0123abcd"), "tokenizer.json", {})
    'acme/tiny'
    >>> folder_label(Path("/home/me/models"), "tokenizer.json", {"name_or_path": "acme/cfg-tiny"})
    'acme/cfg-tiny'
    >>> folder_label(Path("/home/me/models"), "tokenizer.json", {"name_or_path": "/home/me/ckpt/run-3"})
    'models/tokenizer.json'
    >>> folder_label(Path("/m/llama-3"), "tokenizer.json", {})
    'llama-3'
    """
    parts = folder.parts
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        org, _, model = parts[-3].removeprefix("models--").partition("--")
        if org and model:
            return f"{org}/{model}"
    for key in ("name_or_path", "_name_or_path"):
        value = config.get(key)
        if isinstance(value, str) and is_model_id(value) and not value.startswith((".", "~", "/")):
            return value
    name = folder.name
    hashed = len(name) >= 7 and all(c in "0123456789abcdef" for c in name)
    if not name or name.lower() in GENERIC_FOLDERS or hashed:
        return f"{name or folder}/{file_name}" if name else file_name
    return name


def _sniff(path: Path) -> sniff.FileFormat | None:
    """The format of a file by its first bytes (:func:`tokscope.core.formats.sniff.format_of`)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(sniff.HEAD_BYTES)
    except OSError as exc:
        raise SourceError(f"cannot read {safe_text(path)}: {exc.strerror or exc}") from None
    return sniff.format_of(head)


def _read_format(path: Path, fmt: sniff.FileFormat, label: str) -> Tokenizer:
    """A file of a format the core reads alone (a row of the sniffing table with a ``load``)."""
    assert fmt.load is not None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read {safe_text(path)}: {exc.strerror or exc}") from None
    try:
        return fmt.load(data, label, str(path))
    except TokenizerFileError as exc:
        raise SourceError(str(exc)) from None


def load_path(path: Path, *, name: str | None = None, model_id: str | None = None) -> Tokenizer:
    """The tokenizer in a file or model folder (``tokenizer.json``, ``tekken.json``, a known model's
    ``tokenizer.model``/``.tiktoken``); one-line :class:`SourceError` for anything else."""
    path = path.expanduser()
    within = cache_root_of(path)
    folder: Path | None = None
    try:  # one stat tells a folder, a regular file and its size
        info: os.stat_result | None = os.stat(path)
    except (OSError, ValueError):
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        folder = path
        found = tokenizer_file(path) or gguf_file(path)
        if found is None:
            raise SourceError(f"{safe_text(path)} holds no tokenizer file (looked for {', '.join(sniff.FOLDER_FILES)}, "
                              "or one .gguf file)")
        path, info = found, None
    elif path.name in sniff.FOLDER_FILES or path.parent.joinpath("tokenizer_config.json").is_file():
        folder = path.parent
    try:
        if info is None:
            info = path.stat()
    except OSError as exc:
        raise SourceError(f"cannot read {safe_text(path)}: {exc.strerror or exc}") from None
    size = info.st_size
    if not stat.S_ISREG(info.st_mode):
        raise SourceError(f"{safe_text(path)} is not a regular file")
    if within is not None and not is_within(path, within):
        raise SourceError(f"{safe_text(path)} links outside {safe_text(within)}: refused (only links within it are followed)")
    data = None
    if size <= READ_ONCE_BYTES:  # a small file is read once: sniffed from its first bytes, parsed from all
        data = cache.read_source(path, info)
        fmt = sniff.format_of(data[:sniff.HEAD_BYTES])
    else:
        fmt = _sniff(path)
    kind = fmt.name if fmt is not None else None
    if kind == "gguf":  # a model's weights follow its metadata: no size limit, nothing else read
        return load_gguf(path, name=name or model_id, model_id=model_id)
    if size > MAX_FILE_BYTES:
        raise SourceError(f"{safe_text(path)} is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit for tokenizer files")
    facts = folder_facts(folder, within) if folder is not None else ({}, {}, None, None)
    label = name or model_id or (folder_label(folder, path.name, facts[1]) if folder is not None
                                 and path.name in sniff.FOLDER_FILES else path.stem)
    if kind == "ranks":
        tokenizer = cache.cached_file(path, "rank-model", lambda data: _rank_model(path, data, label), data)
    elif kind == "json":
        tokenizer = cache.cached_file(path, "json-tokenizer", lambda data: _json_tokenizer(path, data, label), data)
    elif kind == "spm":  # the protobuf parse is kept in the cache
        try:
            tokenizer = cache.cached_sentencepiece(path, label)
        except TokenizerFileError as exc:
            raise SourceError(str(exc)) from None
    elif fmt is not None and fmt.load is not None:
        tokenizer = _read_format(path, fmt, label)
    else:
        raise SourceError(f"{safe_text(path)} is not a tokenizer file tokscope can read (tokenizer.json, tekken.json, "
                          f"a SentencePiece .model, or a known model's tokenizer.model)")
    tokenizer.name = label
    templates, config, context, jinja = facts
    files = ModelFiles(path, folder, model_id, templates, config, context, jinja)
    tokenizer.derived(MODEL_FILES, lambda: files)  # a fresh tokenizer: kept with it from here on
    return tokenizer


def _is_gguf(path: Path) -> bool:
    fmt = _sniff(path)
    return fmt is not None and fmt.name == "gguf"


def gguf_file(folder: Path) -> Path | None:
    """The GGUF file of a model folder that holds exactly one (told by its content, not its name);
    a folder of several is an error naming how many."""
    try:
        found = [p for p in sorted(folder.glob("*.gguf")) if p.is_file() and _is_gguf(p)]
    except OSError:
        return None
    if len(found) > 1:
        raise SourceError(f"{safe_text(folder)} holds {len(found)} GGUF files; give the path of one")
    return found[0] if found else None


def load_gguf(path: Path, *, name: str | None = None, model_id: str | None = None, label: str | None = None,
              amend: Callable[[ModelFiles], ModelFiles] | None = None) -> Tokenizer:
    """The tokenizer in a GGUF file (its metadata only is read), with the file's chat templates,
    context length and notes as its :class:`ModelFiles` (passed through ``amend`` first: Ollama's
    store adds its template layer)."""
    label = label or name or path.name.removesuffix(".gguf")

    def build() -> tuple[Tokenizer, gguf.GGUFFacts]:
        try:
            return cache.cached_gguf(path, label)  # an unchanged file's tables come from the cache
        except TokscopeError as exc:
            raise SourceError(str(exc)) from None

    tokenizer, facts = build()
    tokenizer.name = label
    files = ModelFiles(path, None, model_id, dict(facts.chat_templates), facts.tokenizer_config(),
                       facts.context, None, facts.notes, facts)
    if amend is not None:
        files = amend(files)
    tokenizer.derived(MODEL_FILES, lambda: files)  # a fresh tokenizer: kept with it from here on
    return tokenizer


def notes_of(tokenizer: Tokenizer) -> tuple[str, ...]:
    """What the user should know about how a tokenizer was read (a GGUF file's ``default``
    pre-tokenizer ...), one line each; empty for most. A note's words before its first ``": "``
    are its short form (:func:`short_note`)."""
    files = describe(tokenizer)
    return files.notes if files is not None else ()


def short_note(note: str) -> str:
    """A note's short form, for a status line.

    >>> short_note("default pre-tokenizer: this GGUF says so")
    'default pre-tokenizer'
    """
    return note.split(": ", 1)[0]


def _rank_model(path: Path, data: bytes, label: str) -> Tokenizer:
    from . import open_models

    model = open_models.recognize_bytes(data)
    if model is None:
        raise SourceError(
            f"{safe_text(path)} is a rank file of no model tokscope knows (its pattern and special tokens are not in it); "
            f"import it with 'tokscope import {safe_text(path)} --pattern PATTERN'")
    return open_models.rank_tokenizer(data, model, str(path))


def _json_tokenizer(path: Path, data: bytes, label: str) -> Tokenizer | cache.Built:
    # imported here: a GGUF or SentencePiece load needs neither the JSON readers nor the known models
    from ..core.formats import tekken
    from ..core.formats import tokenizer_json as hf
    from . import open_models

    try:
        obj = hf.parse(data, str(path))
    except TokenizerFileError as exc:
        raise SourceError(str(exc)) from None
    if hf.looks_like(obj):
        try:
            return cache.Built(hf.from_json(obj, label, str(path)), obj)
        except TokenizerFileError as exc:
            raise SourceError(str(exc)) from None
    if tekken.looks_like(obj):
        return open_models.tekken_tokenizer(obj, label, str(path))
    if isinstance(obj, dict) and "format" in obj and "merges" in obj:
        raise SourceError(f"{safe_text(path)} is a tokenizer tokscope saved: load it by its name or path through the registry")
    raise SourceError(f"{safe_text(path)} is JSON but not a tokenizer file (no 'model' object, not Tekken)")


def describe(tokenizer: Tokenizer) -> ModelFiles | None:
    """The :class:`ModelFiles` a tokenizer was loaded with (None for built-ins and saved ones)."""
    return tokenizer.derived(MODEL_FILES, lambda: None)


def is_tokenizer_path(name: str) -> bool:
    """Whether ``name`` names an existing file or folder (a path wins over a model id)."""
    try:  # a dangling link or a loop is a path too: loading it says what is wrong with it
        return bool(name) and os.path.lexists(os.path.expanduser(name))
    except ValueError:
        return False


def chat_template_of(tokenizer: Tokenizer) -> ChatTemplate | None:
    """The model's own chat template(s), from the folder the tokenizer was loaded from (None when
    there is none: then a built-in format is used)."""
    files = describe(tokenizer)
    if files is None or not files.chat_templates:
        return None
    from ..core.chat.templates import ChatTemplate

    origin = f"tokenizer.chat_template in {files.path}" if files.gguf is not None else str(files.folder or files.path)
    try:
        return ChatTemplate.from_config(files.config, jinja=files.jinja, origin=origin)
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
