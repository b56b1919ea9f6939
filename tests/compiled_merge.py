"""The compiled merge loop (and the compiled pattern split, :func:`split_module`) for the tests:
the one installed with tokscope, else one built here.

CI installs the checkout (``pip install '.[test]'``), which builds ``_tokscope_merge`` when the
machine has a C compiler; a developer's checkout may not have it, so when it is not installed and
a compiler is there, it is built once per session into a temporary folder (about a second) from
``tokscope/core/models/merge.c``. Without either, the compiled half of the tests is skipped.
"""

from __future__ import annotations

import functools
import importlib.util
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "tokscope" / "core" / "models" / "merge.c"
SPLIT_SOURCE = Path(__file__).resolve().parents[1] / "tokscope" / "core" / "pre_tokenizers" / "split.c"


def _build(name: str = "_tokscope_merge", source: Path = SOURCE) -> object | None:
    """``name`` built from this checkout's ``source`` (``merge.c`` unless told) into a temporary
    folder (None without a C compiler)."""
    try:
        from setuptools import Distribution, Extension
    except ImportError:
        return None
    out = Path(tempfile.mkdtemp(prefix="tokscope-merge-"))
    dist = Distribution({"name": "t", "ext_modules": [Extension(name, [str(source)])]})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = str(out)
    cmd.build_temp = str(out / "tmp")
    try:
        cmd.ensure_finalized()
        cmd.run()
    except Exception:  # noqa: BLE001 - no compiler (or a broken one): the pure loop only
        return None
    built = next(out.glob(name + "*"), None)
    if built is None:
        return None
    spec = importlib.util.spec_from_file_location(name, built)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _with_abi(abi: str) -> object | None:
    """The compiled module when it has part ``abi`` (at version 1; an older install may lack it),
    else one built here from this checkout (None without a C compiler)."""
    module = compiled_module()
    if getattr(module, abi, None) != 1:
        module = _build()
    return module if getattr(module, abi, None) == 1 else None


@functools.cache
def compiled_module() -> object | None:
    try:
        import _tokscope_merge

        return _tokscope_merge
    except ImportError:
        return _build()


@functools.cache
def lattice_module() -> object | None:
    """A ``_tokscope_merge`` with the compiled Unigram lattice: the installed one when it has it
    (an older install may not), else one built here (None without a C compiler)."""
    return _with_abi("LATTICE_ABI")


@functools.cache
def split_module() -> object | None:
    """The compiled pre-tokenizer split (``_tokscope_split``): the one installed when it is current,
    else one built here from ``tokscope/core/pre_tokenizers/split.c`` (None without a C compiler)."""
    try:
        import _tokscope_split

        if getattr(_tokscope_split, "SPLIT_ABI", None) == 1 and getattr(_tokscope_split, "DS_ABI", None) == 1:
            return _tokscope_split
    except ImportError:
        pass
    module = _build("_tokscope_split", SPLIT_SOURCE)
    return module if getattr(module, "SPLIT_ABI", None) == 1 else None


def scanned_and_regex(run):
    """``(run(), run())``: the first with the compiled split in use, the second on the regex path
    (the scanner switched off for it, and on again after)."""
    from tokscope.core.pre_tokenizers import compiled_split

    got = run()
    compiled_split.use_compiled(False)
    try:
        return got, run()
    finally:
        compiled_split.use_compiled(True)


@functools.cache
def spm_reader_module() -> object | None:
    """A ``_tokscope_merge`` with the compiled ``.model`` reader (``spm_model_pieces``): the
    installed one when it has it, else one built here (None without a C compiler)."""
    return _with_abi("SPM_ABI")


@functools.cache
def list_merge_module() -> object | None:
    """A ``_tokscope_merge`` with the compiled merge-list loop (``mlist_*``): the installed one when
    it has it (an older install may not), else one built here (None without a C compiler)."""
    return _with_abi("MLIST_ABI")


@functools.cache
def gguf_reader_module() -> object | None:
    """A ``_tokscope_merge`` with the compiled GGUF string-array reader (``gguf_strings``): the
    installed one when it has it, else one built here (None without a C compiler)."""
    return _with_abi("GGUF_ABI")


@functools.cache
def class_runs_module() -> object | None:
    """A ``_tokscope_merge`` with the compiled character-class runs (``cls_*``): the installed one
    when it has them, else one built here (None without a C compiler)."""
    return _with_abi("CLS_ABI")
