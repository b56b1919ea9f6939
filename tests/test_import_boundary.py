"""The core stays headless: importing it loads no Textual, Rich or tiktoken."""

from __future__ import annotations

import subprocess
import sys


def test_core_imports_no_ui_or_tiktoken():
    code = (
        "import sys, tokscope.core, tokscope.core.tokenizer, tokscope.core.bpe, tokscope.core.formats\n"
        "import pkgutil, importlib\n"
        "for m in pkgutil.iter_modules(tokscope.core.__path__): importlib.import_module('tokscope.core.' + m.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'textual', 'rich', 'tiktoken', 'tiktoken_ext'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_only_the_adapter_imports_tiktoken():
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent / "tokscope"
    offenders = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if p.name != "tiktoken_adapter.py"
        and any(line.strip().startswith(("import tiktoken", "from tiktoken")) for line in p.read_text().splitlines())
    ]
    assert offenders == []
