"""Chat templates are untrusted code: no escape to Python internals or files, no runaway renders."""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
import time
import tracemalloc

import pytest

from tokscope.core.chat import TemplateFormat, count_chat
from tokscope.core.chat.templates import (ChatTemplate, ChatTemplateError, RenderLimits, TemplateLimitError,
                                         TemplateSecurityError, render_template)

FAST = RenderLimits(seconds=0.3, max_chars=1_000_000)
#: a time limit no test reaches: what stops these renders is the size check or the cancel event
UNTIMED = RenderLimits(seconds=3600, max_chars=1_000_000)
#: the most memory a render stopped by the size check may have traced (the limit is 1,000,000
#: characters; the biggest of these builds 5,000,000 at once without the check, the rest far more)
PEAK_BYTES = 8 * 1024 * 1024
MESSAGES = [{"role": "user", "content": "hi"}]


@contextlib.contextmanager
def traced_peak():
    """The peak of memory allocated in the block (tracemalloc), as a callable read after it."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    got = []
    try:
        yield lambda: got[0]
    finally:
        got.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


def render(source, limits=FAST, **kwargs):
    return render_template(source, messages=kwargs.pop("messages", MESSAGES), limits=limits, **kwargs)


@pytest.mark.parametrize("source", [
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__ }}",
    "{{ messages.__class__.__base__.__subclasses__() }}",
    "{{ lipsum.__globals__['os'] }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ raise_exception.__globals__ }}",
    "{{ namespace.__init__ }}",
    "{{ dict.__class__ }}",
    "{{ self.__init__ }}",
    "{{ '{0.__class__}'.format('') }}",
    "{% set ns = namespace(_secret=1) %}",
    "{% set ns = namespace() %}{% set ns.__class__ = 1 %}",
    "{{ messages.append(1) }}",
    "{{ messages[0].update({'role': 'system'}) }}",
])
def test_escapes_fail_with_a_clear_error(source):
    with pytest.raises(TemplateSecurityError) as info:
        render(source)
    message = str(info.value)
    assert message.startswith("chat template blocked on line 1: ") and "\n" not in message


@pytest.mark.parametrize("source", [
    "{% include '/etc/passwd' %}",
    "{% import 'os' as os %}",
    "{% from 'x' import y %}",
    "{% extends 'base.html' %}",
])
def test_templates_cannot_read_files(source):
    with pytest.raises(TemplateSecurityError, match="it may not include, import or extend files"):
        render(source)


def test_content_is_data_not_template():
    out = render("{{ messages[0].content }}", messages=[{"role": "user", "content": "{{ 7*7 }}{% for %}"}])
    assert out == "{{ 7*7 }}{% for %}"


@pytest.mark.parametrize("source", [
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{% set l = range(100000)|list %}{% for i in l %}{% for j in l %}{% endfor %}{% endfor %}",
    "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}",
    "{% macro f(n) %}{% for i in range(100000) %}{% endfor %}{{ f(n) if n < 100 else '' }}{% endmacro %}{{ f(0) }}",
])
def test_endless_loops_stop_on_time(source):
    # the message names the budget that stopped the render: the time limit, not the size. The
    # stop is raised once; one that lands in a gc callback is dropped there (hypothesis installs
    # one in the worker), so the callbacks are held off for the render
    held = gc.callbacks[:]
    gc.callbacks.clear()
    try:
        with pytest.raises(TemplateLimitError, match=r"chat template stopped by the time limit \(0\.3 s"):
            render(source)
    finally:
        gc.callbacks.extend(held)


@pytest.mark.parametrize("source,what", [
    ("{{ 'x' * 100000000 }}", "a repetition"),
    ("{{ messages * 10000000 }}", "a repetition"),
    ("{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}", "the output"),
    ("{{ 'x'|center(1000000000) }}", "the center filter"),
    ("{{ 'x'.center(1000000000) }}", "a call"),
    ("{{ 'x'.ljust(1000000000) }}", "a call"),
    ("{{ 'a\nb'|indent(1000000000) }}", "the indent filter"),
    ("{{ [1]|batch(1000000000, 'x')|list }}", "the batch filter"),
    ("{{ lipsum(1000000000) }}", "a call"),
    ("{{ 'x'|tojson(indent=1000000000) }}", "the tojson filter"),
    ("{{ ('x' * 1000)|replace('', 'y' * 5000) }}", "a replace"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
     "a namespace value"),
    ("{% macro d(s) %}{{ d(s ~ s) }}{% endmacro %}{{ d('ab') }}", "a call argument"),
])
def test_gigantic_output_stops_on_size(source, what):
    # no time limit to speak of: only the size check can stop these, and it must stop them before
    # the string is built (the traced peak stays within a few times the limit)
    with traced_peak() as peak, pytest.raises(TemplateLimitError) as info:
        render(source, UNTIMED)
    assert f"{what} would pass 1,000,000 characters" in str(info.value)
    assert "time limit" not in str(info.value)
    assert peak() < PEAK_BYTES


@pytest.mark.parametrize("source", ["{{ '%1000000000d' % 1 }}", "{{ '%*d' % (1000000000, 1) }}",
                                    "{{ '{:>1000000000}'.format(1) }}", "{{ '{:>{w}}'.format(1, w=5) }}",
                                    "{{ '%1000000000d'|format(1) }}"])
def test_format_widths_are_bounded(source):
    with pytest.raises(TemplateLimitError, match="a format width that is computed or too large"):
        render(source)


def test_huge_powers_and_recursion():
    with pytest.raises(TemplateLimitError, match="a power too large"):
        render("{{ (10 ** 100000) ** 100000 }}")
    with pytest.raises(TemplateLimitError, match="recursion too deep"):
        render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")


def test_no_folding_at_compile_time():
    # Jinja folds constant expressions while compiling, outside any budget: filters must not run
    # then (a 500,000,000-character string would be built before the size check could apply)
    with traced_peak() as peak, pytest.raises(TemplateLimitError) as info:
        render("{{ 'x'|center(500000000) }}", UNTIMED)
    assert "time limit" not in str(info.value)
    assert peak() < PEAK_BYTES


def test_huge_template_source_is_refused():
    with pytest.raises(TemplateLimitError, match="at most 1,000,000 are accepted"):
        render("x" * 1_000_001)


def test_limits_are_settable():
    source = "{% for i in range(3000) %}{{ 'x' * 100 }}{% endfor %}"
    assert len(render(source, RenderLimits(max_chars=400_000))) == 300_000
    with pytest.raises(TemplateLimitError):
        render(source, RenderLimits(max_chars=200_000))


def test_errors_name_the_template_line():
    with pytest.raises(ChatTemplateError) as info:
        render("line one\n{% if true %}\n{{ raise_exception('Roles must alternate\\n  user/assistant') }}\n{% endif %}")
    assert str(info.value) == "chat template error on line 3: Roles must alternate user/assistant"
    assert info.value.line == 3
    with pytest.raises(ChatTemplateError) as info:
        render("\n\n{{ messages[0].content.nope() }}")
    assert str(info.value) == "chat template failed on line 3: 'str object' has no attribute 'nope'"
    with pytest.raises(ChatTemplateError) as info:
        render("{% for m in messages %}\n{{ m }\n{% endfor %}")
    assert str(info.value).startswith("chat template syntax error on line 2: ")
    with pytest.raises(ChatTemplateError, match="'messages' is set by tokscope itself"):
        render("x", variables={"messages": []})


def test_tracing_is_restored():
    seen = []

    def tracer(frame, event, arg):
        seen.append(event)
        return None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        render("{{ messages[0].content }}")
        with pytest.raises(TemplateLimitError):
            render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(old)


def test_renders_in_threads_are_independent():
    results = []

    def slow():
        try:
            render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
        except TemplateLimitError as exc:
            results.append(type(exc).__name__)

    def quick():
        results.append(render("{{ messages[0].content }}", RenderLimits(seconds=5)))

    threads = [threading.Thread(target=slow), threading.Thread(target=quick)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(results) == ["TemplateLimitError", "hi"]


def test_count_chat_reports_template_failures(load):
    tok = load("o200k_base")
    for source, error in (("{{ ''.__class__.__mro__ }}", TemplateSecurityError),
                          ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                           TemplateLimitError)):
        with pytest.raises(error):
            count_chat(tok, MESSAGES, TemplateFormat(ChatTemplate.from_jinja(source), limits=FAST))


def test_transformers_globals_and_filters():
    source = ("{{ strftime_now('%Y') | length }}|{{ {'b': 1, 'a': '<é>'} | tojson(sort_keys=true) }}|"
              "{{ [1, 2] | tojson(indent=2) }}|{{ dict(x=1).x }}|{% set ns = namespace(n=0) %}"
              "{% for i in range(3) %}{% if i == 2 %}{% break %}{% endif %}{% set ns.n = ns.n + 1 %}{% endfor %}"
              "{{ ns.n }}|{% generation %}gen{% endgeneration %}|{{ bos_token }}")
    out = render(source, variables={"bos_token": "<s>"})
    assert out == '4|{"a": "<é>", "b": 1}|[\n  1,\n  2\n]|1|2|gen|<s>'


def test_cancel_stops_a_render():
    from tokscope.core.text.errors import CancelledError

    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    # the time limit is far away: CancelledError (not TemplateLimitError) shows the event stopped it
    with pytest.raises(CancelledError):
        render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
               UNTIMED, cancel=cancel)


def test_cancel_stops_count_chat(load):
    from tokscope.core.text.errors import CancelledError

    cancel = threading.Event()
    cancel.set()
    for fmt in ("harmony", TemplateFormat(ChatTemplate.from_jinja("{{ messages[0].content }}"))):
        with pytest.raises(CancelledError):
            count_chat(load("o200k_harmony"), MESSAGES, fmt, cancel=cancel)


def test_the_deadline_never_fires_after_its_block():
    """Blocks that end just as the deadline passes: the stop is raised inside the block or not at
    all, never in the code after it."""
    from tokscope.core.chat.deadline import TimeUp, interruptible

    inside = finished = 0
    for k in range(150):
        try:
            with interruptible(0.002):
                end = time.perf_counter() + 0.0015 + (k % 10) * 0.0001
                while time.perf_counter() < end:
                    pass
            finished += 1
        except TimeUp:
            inside += 1
        for _ in range(20_000):  # a stray stop would land here and fail the test
            pass
    assert inside + finished == 150


@pytest.mark.parametrize("hook", ["settrace", "setprofile"])
def test_endless_loops_stop_under_a_debugger_or_profiler(hook):
    def noop(frame, event, arg):
        return None

    set_hook, get_hook = getattr(sys, hook), getattr(sys, hook.replace("set", "get"))
    set_hook(noop)
    try:
        with pytest.raises(TemplateLimitError, match=r"time limit \(0\.3 s"):
            render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
        assert get_hook() is noop
    finally:
        set_hook(None)
