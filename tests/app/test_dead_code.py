"""No dead code in the app: vulture finds nothing once Textual's hooks are set aside.

Textual calls handlers, actions, watchers and class settings by name (``on_*``, ``action_*``,
``compose``, ``DEFAULT_CSS``...) and decorated handlers (``@on``, ``@work``), which a static
checker cannot see; those names are ignored, and so are the attributes set on Textual's own widgets
and the explorer's documented state API (used by views and tests).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: names Textual (or Rich) calls, reads or sets; the state API views and tests use
TEXTUAL_NAMES = [
    "on_*", "_on_*", "action_*", "watch_*", "validate_*", "check_*", "compose", "render", "render_line",
    "render_lines", "can_replace", "discover", "search", "notify_style_update", "get_size", "post_message",
    "CSS_PATH", "DEFAULT_CSS", "SCOPED_CSS", "BINDINGS", "COMMANDS", "TITLE", "ENABLE_COMMAND_PALETTE",
    "COMPONENT_CLASSES", "border_title", "border_subtitle", "cursor_blink", "highlighted", "placeholder",
    "auto_expand", "window_virtual_size", "document", "wrapped_document", "__stdin__", "get_default_screen",
    "get_system_commands", "get_css_variables", "active_bindings", "load_text", "fixed_columns",
    # the explorer's state API and entry points (tokscope.app.views, the CLI, the benchmarks)
    "idle", "select_piece", "text_edited", "run_explorer", "finished_at", "shown_at", "mtime_ns", "parameters",
    # the list of Textual internals the adapter uses, which test_newcomer checks against Textual
    "INTERNALS",
]


def test_vulture_finds_no_dead_code_in_the_app():
    exe = shutil.which("vulture") or str(Path(sys.executable).with_name("vulture"))
    done = subprocess.run(
        [exe, "tokscope/app", "--min-confidence", "60", "--ignore-names", ",".join(TEXTUAL_NAMES),
         "--ignore-decorators", "@on,@work"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


#: names the package's other frameworks and formats call or read, and public constants and fields
#: of its API: file-like objects (``writelines``), Jinja2's extension and sandbox hooks, a type
#: alias, fields of frozen results and file stamps, and the versions the core pins
FRAMEWORK_NAMES = [
    "writelines", "tags", "intercepted_binops", "unsafe_undefined", "__self", "Category", "token_rank",
    "inode", "device", "REASONING_EFFORTS", "PATTERN_UNICODE_VERSION", "eos_token",
    # a module's lazy attribute hooks (PEP 562) and argparse's printing hook: Python calls them
    "__getattr__", "__dir__", "_print_message",
]


def test_vulture_finds_no_dead_code_in_the_package():
    """Across core, sources, commands and the app: what nothing calls, with the tests and the
    benchmarks counted as callers (what only they use is the public API: tiktoken's methods on
    ``tokscope.get_encoding``, the core's documented helpers). ``unicode_tables`` is data read by
    name."""
    exe = shutil.which("vulture") or str(Path(sys.executable).with_name("vulture"))
    done = subprocess.run(
        [exe, "tokscope", "tests", "bench", "--min-confidence", "60",
         "--ignore-names", ",".join(TEXTUAL_NAMES + FRAMEWORK_NAMES), "--ignore-decorators", "@on,@work",
         "--exclude", "tokscope/core/text/unicode_tables.py"],
        cwd=ROOT, capture_output=True, text=True,
    )
    found = [line for line in done.stdout.splitlines() if line.startswith("tokscope")]
    assert not found and not done.stderr.strip(), "\n".join(found) + done.stderr
