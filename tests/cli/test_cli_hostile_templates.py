"""Issue 21, Medium 5: chat templates that would build gigantic strings in one step (``tojson`` of
a dict holding one huge string many times, ``join``, ``expandtabs``, ``indent``, ``wordwrap``) are
stopped before they build anything: the real ``tokscope chat --template`` in a child process whose
address space is capped, so a template that got through would die of memory instead of giving
the one-line limit message."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys

import pytest

CAP = 1536 * 1024 * 1024  # bytes of address space the child may use


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


HOSTILE = {
    "tojson of a dict holding one huge string": "{{ dict.fromkeys(range(100000), 'x' * 9000000)|tojson }}",
    "a dict printed whole": "{{ dict.fromkeys(range(100000), 'x' * 9000000) }}",
    "join of a repeated huge string": "{{ (['x' * 9000000] * 1000)|join }}",
    "join with a huge separator": "{{ range(100000)|join('x' * 9000) }}",
    "expandtabs": "{{ ('\\t' * 9000000).expandtabs(1000) }}",
    "indent by a number": "{{ ('\\n' * 9000000)|indent(1000) }}",
    "indent by a string": "{{ ('\\n' * 9000000)|indent('x' * 1000) }}",
    "wordwrap of one long word": "{{ ('x' * 1000000)|wordwrap(1) }}",
    "tojson with a huge indent": "{{ ([[[[[[[[[[range(1000)|list]]]]]]]]]] * 1000)|tojson(indent=5000) }}",
}


@pytest.mark.parametrize("source", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_template_that_would_build_gigabytes_is_stopped_first(tmp_path, cli_env, source):
    template = tmp_path / "t.jinja"
    template.write_text(source)
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    done = subprocess.run([sys.executable, "-m", "tokscope.cli", "chat", "--template", str(template), "-f",
                           str(conversation)], capture_output=True, text=True, env=cli_env, timeout=120,
                          preexec_fn=_cap)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    # the size limit grows with the conversation (10,000,000 characters and a little more here)
    assert re.search(r"would pass 10,0\d\d,\d{3} characters", done.stderr) or "wordwrap filter would cut" in done.stderr, \
        done.stderr


def test_real_templates_with_these_filters_still_render(tmp_path, cli_env):
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m|tojson(indent=2) }}{{ [m.role, m.content]|join(': ')|indent(2) }}"
                        "{{ m.content|wordwrap(10) }}{% endfor %}")
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "hello there, a somewhat longer line"}]))
    done = subprocess.run([sys.executable, "-m", "tokscope.cli", "chat", "--template", str(template), "-f",
                           str(conversation), "--json"], capture_output=True, text=True, env=cli_env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "user: hello there" in json.loads(done.stdout)["text"]
