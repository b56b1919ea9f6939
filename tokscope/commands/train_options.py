"""What ``train``, ``baselines``, ``import`` and ``export`` share: argument types, the pattern
option, reading a corpus, checking names and output paths before any work, saving a tokenizer in
the data directory, and the training progress bar.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..core.text.display import quoted, safe_text
from ..sources.names import DEFAULT_TRAINING_PATTERN, PATTERN_NAMES
from . import common as cli
from .common import MAX_DIGITS, InputError, UsageError, read_input, stdin_is_piped

DEFAULT_PATTERN = DEFAULT_TRAINING_PATTERN


def whole_number(text: str) -> int:
    digits = text.strip().lstrip("+-")
    if len(digits) > MAX_DIGITS and digits.isascii() and digits.isdigit():
        raise argparse.ArgumentTypeError(f"too large: {digits[:12]}… ({len(digits):,} digits)")
    try:
        if not digits.isascii():
            raise ValueError
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {safe_text(text)!r}") from None
    return value


def count_arg(text: str) -> int:
    """argparse type: a whole number >= 0."""
    value = whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {safe_text(text)!r}")
    return value


def read_inputs(paths: list[str], args: argparse.Namespace) -> list[str]:
    texts = []
    for path in paths:
        if path == "-" and not stdin_is_piped():
            raise UsageError("'-' reads standard input, but nothing is piped in")
        texts.append(read_input(path, limit=args.max_bytes, errors=args.errors, keep_head=False).text)
    if not any(texts):
        names = ", ".join("standard input" if p == "-" else safe_text(p) for p in paths)
        raise InputError(f"the corpus is empty: {names} {'has' if len(paths) == 1 else 'have'} no text", kind="empty",
                         where=names)
    return texts


def file_label(path: str) -> str:
    """A path as text that a tokenizer file can record (bytes that are not UTF-8 become U+FFFD).

    >>> file_label("n\\udcffame.txt")
    'n\ufffdame.txt'
    """
    return os.fsencode(path).decode("utf-8", "replace") if path != "-" else "-"


def resolve_pattern(value: str) -> tuple[str, str | None]:
    from ..core.train.trainer import TrainingError
    from ..sources.names import pattern_for

    try:
        return pattern_for(value)
    except TrainingError as exc:
        raise UsageError(f"--pattern: {exc}") from None


def add_pattern_option(parser: argparse.ArgumentParser, default: str | None = DEFAULT_PATTERN) -> None:
    parser.add_argument(
        "--pattern", default=default, required=default is None, metavar="|".join(PATTERN_NAMES) + "|REGEX",
        help="pre-tokenization: none (merges may cross anything), words (runs of non-space and of whitespace), "
             "an OpenAI encoding's pattern, or a regex" + (f" (default: {default})" if default else ""),
    )


def add_read_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--errors", choices=("strict", "replace"), default="strict",
                        help="how to treat bytes that are not UTF-8: refuse (strict, default) or use U+FFFD")
    cli.add_max_bytes_option(parser, each=True)


def check_name(name: str, *, for_save: bool, where: str) -> str:
    """The tokenizer's name, checked before any work: a saved one must be a valid saved name; any
    name must be text a file can hold (valid UTF-8, no control characters)."""
    from ..sources.errors import BadNameError
    from ..sources.saved import check_saved_name

    try:
        if for_save:
            return check_saved_name(name)
        if any("\ud800" <= ch <= "\udfff" for ch in name) or not name.isprintable() or not name.strip():
            raise BadNameError(f"{safe_text(name)!r} is not valid UTF-8 text without control characters")
        return name
    except BadNameError as exc:
        raise UsageError(f"{where}: {exc}" + ("" if where == "--name" else "; give one with --name")) from None


def check_outputs(targets: list[tuple[str, str | None]], inputs: list[str], force: bool) -> list[Path]:
    """Check every output path now (see the module docstring); returns the files they write."""
    from ..core.formats import files

    seen: dict[Path, str] = {}
    resolved = []
    for option, target in targets:
        if not target:
            continue
        path = files.check_target(target, overwrite=force, inputs=[i for i in inputs if i != "-"])
        if path in seen:
            raise UsageError(f"{seen[path]} and {option} name the same file")
        seen[path] = option
        resolved.append(path)
    return resolved


def note(message: str) -> None:
    cli.note(message)


class MergeProgressBar(cli.ProgressBar):
    """The training progress bar: merges done, and the pair just merged."""

    def __init__(self, stream: Any, label: str = "training") -> None:
        super().__init__(stream, label)

    def __call__(self, p: Any) -> None:
        pair = f"  {quoted(p.left)} + {quoted(p.right)} x{p.count:,}" if p.merges_done else ""
        self.draw(p.merges_done / max(p.merges_total, 1), f"{p.merges_done:,}/{p.merges_total:,} merges{pair}",
                  final=p.merges_done == p.merges_total)


def progress_for(args: argparse.Namespace, label: str = "training") -> MergeProgressBar | None:
    if getattr(args, "verbose", False) or not cli.stderr_is_terminal():
        return None
    return MergeProgressBar(sys.stderr, label)


def prepare_save(name: str, force: bool) -> Path:
    from ..core.formats.files import SaveError
    from ..sources import registry, saved
    from ..sources.errors import BadNameError, SourceError

    try:
        return saved.prepare_save(name, registry.saved_dir(), overwrite=force)
    except BadNameError as exc:
        raise UsageError(str(exc)) from None
    except SaveError:
        raise
    except SourceError as exc:  # a tokenizer of that name exists
        raise UsageError(f"{exc} (--force replaces it)") from None


def save_named(tok: Any, name: str, force: bool) -> Path:
    from ..sources import registry, saved

    from ..sources.errors import SourceError

    try:
        path = saved.save_named(tok, name, registry.saved_dir(), overwrite=force)
    except SourceError as exc:  # another run saved the name meanwhile: as when it existed before (exit 2)
        raise UsageError(f"{exc} (--force replaces it)") from None
    registry.forget(name)
    return path
