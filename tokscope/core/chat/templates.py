"""Hugging Face chat templates: pick one, then render it the way ``transformers`` does, sandboxed.

A chat template is a Jinja program shipped with a model (``tokenizer_config.json``'s
``chat_template``, or a ``chat_template.jinja`` file). ``transformers``' ``apply_chat_template``
renders it in an :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` with ``trim_blocks`` and
``lstrip_blocks``, the ``loopcontrols`` extension, a no-op ``{% generation %}`` tag, its own
``tojson`` filter (no HTML escaping, ``ensure_ascii=False``, with ``indent``/``separators``/
``sort_keys``), and the globals ``raise_exception``, ``strftime_now``, ``dict`` and ``namespace``
(which refuses names starting with ``_``). The variables are ``messages``, ``tools``,
``documents``, ``add_generation_prompt``, the special-token strings (``bos_token``,
``eos_token``...) and any extra ones (``enable_thinking``, ``date_string``...). This module does
the same, and more strictly, because a template from the internet is untrusted code:

* access to an unsafe attribute (``{{ ''.__class__ }}``) is an error at once (Jinja's sandbox
  would render it as an empty string and fail only on the next step);
* there is no loader, so ``{% include %}``/``{% import %}``/``{% extends %}`` cannot read files;
* a render has a time budget (a watcher thread stops it where it is, :mod:`.deadline`, so
  ``{% for %}`` loops nested without end are stopped) and a size budget (checked on the output, on ``*``, ``+``,
  ``%`` and ``**``, on calls and filters whose arguments or results would pass it, and on
  ``namespace`` assignments), so a runaway template stops with a clear error instead of hanging
  or exhausting memory.

Every failure is a :class:`ChatTemplateError` with one line: the template's own message (from
``raise_exception``, or Jinja's) and the template line it came from.
"""

from __future__ import annotations

import contextvars
import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
import regex
from jinja2.exceptions import SecurityError, TemplateError, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .deadline import Cancelled, TimeUp, interruptible
from ..text.errors import CancelledError, TokscopeError

#: the names a template sees that callers may not replace with extra variables
RESERVED = frozenset({"messages", "tools", "documents", "add_generation_prompt"})

#: the named special-token variables ``transformers`` passes to every template
SPECIAL_TOKEN_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")

_TEMPLATE_FILE = "<template>"


class ChatTemplateError(TokscopeError):
    """A chat template that cannot be used: bad syntax, a failing render, a missing template.

    ``line`` is the template line the error came from when known.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(message)


class TemplateSecurityError(ChatTemplateError):
    """The template tried to reach something the sandbox forbids (Python internals, files)."""


class TemplateLimitError(ChatTemplateError):
    """The template ran past its time or size budget (a loop without end, a gigantic output)."""


@dataclass(frozen=True, slots=True)
class RenderLimits:
    """The budget of one render: wall-clock ``seconds`` and ``max_chars`` of any string it builds."""

    seconds: float = 2.0
    max_chars: int = 10_000_000


DEFAULT_LIMITS = RenderLimits()


def scaled_limits(chars: int, messages: int, seconds: float | None = None) -> RenderLimits:
    """The budget for a conversation of ``chars`` characters in ``messages`` messages: the default
    plus 5 ms a message and 1 s per 500,000 characters, and room for eight times the input on top
    of the default size. ``seconds``, when given, replaces the time limit (the user raising it).

    >>> scaled_limits(0, 0) == DEFAULT_LIMITS, scaled_limits(11_000_000, 1)
    (True, RenderLimits(seconds=24.005, max_chars=98000000))
    >>> scaled_limits(0, 2_401, seconds=60).seconds
    60
    """
    time_limit = DEFAULT_LIMITS.seconds + 0.005 * messages + chars / 500_000
    return RenderLimits(time_limit if seconds is None else seconds, DEFAULT_LIMITS.max_chars + 8 * chars)


def one_line(text: str, limit: int = 300) -> str:
    """Collapse whitespace so a message fits on one line, cut at ``limit`` characters.

    >>> one_line("Conversation roles must alternate\\n  user/assistant")
    'Conversation roles must alternate user/assistant'
    >>> one_line("x" * 10, limit=5)
    'xxxx…'
    """
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ----- the budget ------------------------------------------------------------------------------


class _Budget:
    __slots__ = ("cancel", "deadline", "max_chars", "seconds", "weights")

    def __init__(self, limits: RenderLimits, cancel: threading.Event | None = None) -> None:
        self.seconds = limits.seconds
        self.max_chars = limits.max_chars
        self.deadline = time.monotonic() + limits.seconds
        self.cancel = cancel
        #: containers already weighed in this render (id -> the container, kept alive, and its weight)
        self.weights: dict[int, tuple[Any, int]] = {}

    def check_time(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise CancelledError("rendering the chat template was cancelled")
        if time.monotonic() > self.deadline:
            raise TemplateLimitError(self.time_message())

    def time_message(self) -> str:
        return (f"chat template stopped by the time limit ({self.seconds:g} s for this conversation; "
                "it may loop without end): raise the limit if it is only slow")

    def check_size(self, size: int, what: str = "a string") -> None:
        if size > self.max_chars:
            raise TemplateLimitError(
                f"chat template stopped by the size limit: {what} would pass {self.max_chars:,} characters "
                "(the limit for this conversation)"
            )


_budget: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("tokscope_template_budget", default=None)


def _current() -> _Budget | None:
    return _budget.get()


class _Heavy(Exception):
    pass


def _weight(value: Any, limit: int, indent: int = 0) -> int:
    """About how many characters ``value`` makes as text (``str()``, ``tojson``): its strings'
    lengths plus two for each item (and, with ``indent``, the indentation of each item at its
    depth), counted without building anything and stopped as soon as it passes ``limit``. A list
    holding one huge string a thousand times weighs a thousand of them, though it costs one; a
    container met again is not walked again.

    >>> _weight(["ab", {"k": "xyz"}], 100), _weight(["x" * 50] * 3, 100)
    (16, 101)
    """
    memo: dict[tuple[int, int], int] = {}

    def walk(item: Any, depth: int) -> int:
        if isinstance(item, str):
            return len(item) + 2 + indent * depth
        if isinstance(item, (list, tuple, dict)):
            key = (id(item), depth if indent else 0)
            known = memo.get(key)
            if known is not None:
                return known
            total = 2 + indent * depth
            parts = item.items() if isinstance(item, dict) else ((x,) for x in item)
            for part in parts:
                for x in part:
                    total += walk(x, depth + 1)
                if total > limit:
                    raise _Heavy
            memo[key] = total
            return total
        if isinstance(item, int) and not isinstance(item, bool):
            return item.bit_length() // 3 + 3 + indent * depth
        return 8 + indent * depth

    try:
        return min(walk(value, 0), limit + 1)
    except (_Heavy, RecursionError):
        return limit + 1


def _sized(value: Any) -> int | None:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple, dict)):
        budget = _current()
        if budget is None:
            return len(value)
        # a container's weight in text, not its length: dict.fromkeys(range(n), huge) is n huges
        if len(value) > budget.max_chars:
            return len(value)
        known = budget.weights.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        weight = _weight(value, budget.max_chars)
        if len(budget.weights) < 4096:  # the same few containers (messages, tools) pass many calls
            budget.weights[id(value)] = (value, weight)
        return weight
    return None


def _check_value(value: Any, what: str) -> None:
    budget = _current()
    if budget is not None:
        size = _sized(value)
        if size is not None:
            budget.check_size(size, what)


def _check_int_args(args: Sequence[Any], kwargs: Mapping[str, Any], what: str) -> None:
    """Refuse integer arguments past the size budget (widths, counts, indents) before the call."""
    budget = _current()
    if budget is None:
        return
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and value > budget.max_chars:
            budget.check_size(value, what)


_PRINTF_WIDE = re.compile(r"%[-+ #0]*(?:\*|\d{7,})|%[-+ #0]*\d*\.(?:\*|\d{7,})")
_FORMAT_WIDE = re.compile(r"\{[^{}]*:[^{}]*(?:\{|\d{7,})")


def _check_format_string(fmt: Any, style: str) -> None:
    if isinstance(fmt, str) and _current() is not None:
        pattern = _PRINTF_WIDE if style == "%" else _FORMAT_WIDE
        if pattern.search(fmt):
            raise TemplateLimitError("chat template stopped: a format width that is computed or too large")


def _check_replace(text: Any, args: Sequence[Any]) -> None:
    budget = _current()
    if budget is None or not isinstance(text, str) or len(args) < 2:
        return
    old, new = args[0], args[1]
    if isinstance(old, str) and isinstance(new, str) and len(new) > len(old):
        budget.check_size(len(text) + text.count(old) * (len(new) - len(old)), "a replace")


# ----- the environment -------------------------------------------------------------------------


class _GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: renders its body (transformers uses it to mark
    assistant text for training masks; for counting it is transparent)."""

    tags = {"generation"}

    def parse(self, parser: Any) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller: Callable[[], str]) -> str:
        return caller()


class _TemplateDict:
    """The ``dict`` global: builds plain dicts, nothing else reachable from it."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    """The ``namespace`` global: refuses names starting with ``_`` and oversized values.

    It keeps its values itself (Jinja's ``Namespace`` is its base only so that
    ``{% set ns.x = ... %}`` accepts it), so that an assignment, which templates make in loops
    over the messages, is one dict store after the checks.

    >>> t = _ENV.from_string("{% set ns = namespace(n=0) %}{% for x in 'abc' %}{% set ns.n = ns.n + 1 %}"
    ...                      "{% endfor %}{{ ns.n }} {{ ns.missing is defined }}")
    >>> t.render()
    '3 False'
    """

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 - Jinja's own signature trick
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name, value in attrs.items():
            _TemplateNamespace._check(name, value)
        object.__setattr__(self, "_values", attrs)

    def __getattribute__(self, name: str) -> Any:
        if name == "__class__":
            return object.__getattribute__(self, name)
        try:
            return object.__getattribute__(self, "_values")[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setitem__(self, name: str, value: Any) -> None:
        if type(value) not in _UNSIZED or type(name) is not str or name[:1] == "_":
            _TemplateNamespace._check(name, value)
        object.__getattribute__(self, "_values")[name] = value

    def __repr__(self) -> str:
        return f"<Namespace {object.__getattribute__(self, '_values')!r}>"

    @staticmethod
    def _check(name: Any, value: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise SecurityError(f"a namespace may not hold the underscore name {name!r}")
        if type(value) not in _UNSIZED:  # flags and counters, set in loops, have no size to check
            _check_value(value, "a namespace value")


_UNSIZED = frozenset({bool, int, float, type(None)})


def _raise_exception(message: Any) -> None:
    raise TemplateError(str(message))


def _tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    _check_int_args((indent,), {}, "a tojson indent")
    budget = _current()
    if budget is not None:
        width = indent if isinstance(indent, int) and not isinstance(indent, bool) else len(indent) if isinstance(indent, str) else 0
        budget.check_size(_weight(x, budget.max_chars, max(width, 0) + (1 if width else 0)), "the tojson filter")
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


#: about how many characters ``textwrap`` may copy while it cuts words longer than the width (it
#: cuts a long word one width at a time, copying the rest each time: quadratic in the word)
MAX_WRAP_WORK = 200_000_000
_WORD = re.compile(r"\S+")


def _check_filter_output(name: str, value: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Refuse, before it runs, a filter whose output (or work) would pass the budget: ``join``,
    ``indent`` and ``wordwrap`` build their strings in one step the time budget cannot stop."""
    budget = _current()
    if budget is None:
        return
    limit = budget.max_chars
    if name == "join":
        sep = args[0] if args else kwargs.get("d", "")
        sep_len = len(sep) if isinstance(sep, str) else 0
        if isinstance(value, (list, tuple, dict, str)):
            budget.check_size((_sized(value) or 0) + sep_len * len(value), "the join filter")
        elif isinstance(value, range):
            budget.check_size(len(value) * (sep_len + 1), "the join filter")
    elif name == "indent" and isinstance(value, str):
        width = args[0] if args else kwargs.get("width", 4)
        each = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        budget.check_size(len(value) + (value.count("\n") + 1) * max(each, 0), "the indent filter")
    elif name == "wordwrap" and isinstance(value, str):
        width = args[0] if args else kwargs.get("width", 79)
        wrap = args[2] if len(args) > 2 else kwargs.get("wrapstring") or "\n"
        if isinstance(width, int) and not isinstance(width, bool) and width > 0:
            budget.check_size(len(value) + (len(value) // width + 1) * (len(wrap) if isinstance(wrap, str) else 1),
                              "the wordwrap filter")
            work = sum(len(m) ** 2 for m in _WORD.findall(value) if len(m) > width) // width
            if work > MAX_WRAP_WORK:
                raise TemplateLimitError("chat template stopped: the wordwrap filter would cut words that long "
                                         "into pieces that small for too long")


def _check_expandtabs(text: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    budget = _current()
    if budget is None:
        return
    size = args[0] if args else kwargs.get("tabsize", 8)
    if isinstance(size, int) and not isinstance(size, bool):
        budget.check_size(len(text) + text.count("\t") * max(size, 0), "an expandtabs")


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def _guard_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a filter with the size checks. The wrapper takes the context, which also stops
    Jinja from running the filter at compile time on constant arguments (outside any budget)."""
    pass_arg = getattr(func, "jinja_pass_arg", None)
    kind = getattr(pass_arg, "name", None)

    @jinja2.pass_context
    def guarded(context: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        _check_int_args(args, kwargs, f"the {name} filter")
        if name == "format":
            _check_format_string(value, "%")
        elif name == "replace":
            _check_replace(value, args)
        _check_filter_output(name, value, args, kwargs)
        if kind == "context":
            result = func(context, value, *args, **kwargs)
        elif kind == "eval_context":
            result = func(context.eval_ctx, value, *args, **kwargs)
        elif kind == "environment":
            result = func(context.environment, value, *args, **kwargs)
        else:
            result = func(value, *args, **kwargs)
        _check_value(result, f"the {name} filter")
        return result

    return guarded


#: the attribute names of a plain dict (every other name on a dict is looked up as a key)
_DICT_NAMES = frozenset(dir(dict))


class _Sandbox(ImmutableSandboxedEnvironment):
    """transformers' chat-template environment, with budgets and unsafe access as a hard error."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        budget = _current()
        if budget is not None:
            if operator == "*":
                for seq, n in ((left, right), (right, left)):
                    size = _sized(seq) if isinstance(n, int) and not isinstance(n, bool) else None
                    if size is not None:
                        budget.check_size(size * max(n, 0), "a repetition")
            elif operator == "+":
                left_size, right_size = _sized(left), _sized(right)
                if left_size is not None and right_size is not None:
                    budget.check_size(left_size + right_size, "a concatenation")
            elif operator == "**":
                if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
                    if right * abs(left).bit_length() > 1_000_000:
                        raise TemplateLimitError("chat template stopped: a power too large to compute")
            elif operator == "%":
                _check_format_string(left, "%")
        result = super().call_binop(context, operator, left, right)
        _check_value(result, "an operation")
        return result

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        owner = getattr(__obj, "__self__", None)
        _check_int_args(args, kwargs, "a call")
        if isinstance(owner, str) and getattr(__obj, "__name__", "") == "replace":
            _check_replace(owner, args)
        if isinstance(owner, str) and getattr(__obj, "__name__", "") == "expandtabs":
            _check_expandtabs(owner, args, kwargs)
        for value in (*args, *kwargs.values()):
            _check_value(value, "a call argument")
        result = super().call(__context, __obj, *args, **kwargs)
        _check_value(result, "a call")
        return result

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapper = super().wrap_str_format(value)
        if wrapper is None:
            return None
        fmt = value.__self__

        def checked(*args: Any, **kwargs: Any) -> str:
            _check_format_string(fmt, "{}")
            result = wrapper(*args, **kwargs)
            _check_value(result, "a format")
            return result

        return checked

    def getattr(self, obj: Any, attribute: str) -> Any:
        """Jinja's sandboxed ``obj.attribute``, with a fast way for a plain dict's keys: a name
        that is no attribute of ``dict`` can only be looked up as a key, which is what Jinja's
        own ``getattr`` ends up doing after failing the attribute (and raising an exception).

        >>> t = _ENV.from_string("{{ m.role }}/{{ m.missing is defined }}/{{ m.items is callable }}")
        >>> t.render(m={"role": "user", "items": 1})
        'user/False/True'
        """
        if type(obj) is dict and type(attribute) is str and attribute not in _DICT_NAMES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        raise SecurityError(f"access to attribute {attribute!r} of a {type(obj).__name__!r} object is unsafe")


def _make_environment() -> _Sandbox:
    env = _Sandbox(trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, jinja2.ext.loopcontrols])
    for name, func in list(env.filters.items()):
        env.filters[name] = _guard_filter(name, func)
    env.filters["tojson"] = _guard_filter("tojson", _tojson)
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env


_ENV = _make_environment()


#: the longest template source accepted (real chat templates are a few kilobytes)
MAX_TEMPLATE_CHARS = 1_000_000


@lru_cache(maxsize=64)
def compile_template(source: str) -> jinja2.Template:
    """Compile a chat template (cached by its text); syntax errors name their line."""
    if len(source) > MAX_TEMPLATE_CHARS:
        raise TemplateLimitError(f"chat template is {len(source):,} characters; at most {MAX_TEMPLATE_CHARS:,} are accepted")
    try:
        return _ENV.from_string(source)
    except (SyntaxError, RecursionError, MemoryError):  # Python's compiler, on the code Jinja made of it
        raise TemplateLimitError("chat template nests its blocks too deeply to compile (Python allows about 20 "
                                 "loops and 100 levels of blocks)") from None
    except TemplateSyntaxError as exc:
        raise ChatTemplateError(f"chat template syntax error on line {exc.lineno}: {one_line(exc.message or '')}",
                                exc.lineno) from None


def _template_line(exc: BaseException) -> int | None:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == _TEMPLATE_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _wrap_error(exc: BaseException) -> ChatTemplateError:
    line = _template_line(exc)
    where = f" on line {line}" if line is not None else ""
    if isinstance(exc, TemplateLimitError):
        return TemplateLimitError(f"{exc}{where}", line)
    if isinstance(exc, SecurityError):
        return TemplateSecurityError(f"chat template blocked{where}: {one_line(str(exc))}", line)
    if isinstance(exc, RecursionError):
        return TemplateLimitError(f"chat template stopped{where}: recursion too deep", line)
    if isinstance(exc, MemoryError):
        return TemplateLimitError(f"chat template stopped{where}: out of memory", line)
    if isinstance(exc, TypeError) and "no loader" in str(exc):
        return TemplateSecurityError(f"chat template blocked{where}: it may not include, import or extend files", line)
    if type(exc) is TemplateError:  # raise_exception: the template's own message
        return ChatTemplateError(f"chat template error{where}: {one_line(str(exc))}", line)
    detail = one_line(str(exc)) or type(exc).__name__
    return ChatTemplateError(f"chat template failed{where}: {detail}", line)


def render_template(
    source: str,
    *,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    variables: Mapping[str, Any] | None = None,
    limits: RenderLimits = DEFAULT_LIMITS,
    cancel: threading.Event | None = None,
) -> str:
    """Render a chat template as ``apply_chat_template(..., tokenize=False)`` would.

    ``variables`` holds the special-token strings and any extra template variables; they may not
    replace ``messages``, ``tools``, ``documents`` or ``add_generation_prompt``. Setting
    ``cancel`` stops the render with :class:`~tokscope.core.text.errors.CancelledError`.

    >>> render_template("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    ...                 "{% if add_generation_prompt %}<assistant>{% endif %}",
    ...                 messages=[{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    '<user>Hi<assistant>'
    >>> render_template("{{ raise_exception('no system role') }}", messages=[])
    Traceback (most recent call last):
    ...
    tokscope.core.chat.templates.ChatTemplateError: chat template error on line 1: no system role
    """
    template = compile_template(source)
    extra = dict(variables or {})
    clash = sorted(RESERVED & extra.keys())
    if clash:
        raise ChatTemplateError(f"template variable {clash[0]!r} is set by tokscope itself; pass it another way")
    context = {**extra, "messages": messages, "tools": tools, "documents": documents,
               "add_generation_prompt": add_generation_prompt}
    budget = _Budget(limits, cancel)
    token = _budget.set(budget)
    out: list[str] = []
    size = 0
    try:
        with interruptible(limits.seconds, cancel):  # stops a template looping without end
            for chunk in template.generate(**context):
                size += len(chunk)
                budget.check_size(size, "the output")
                out.append(chunk)
        budget.check_time()
    except TimeUp as exc:
        line = _template_line(exc)  # a line of the compiled code (Jinja maps only Exceptions back)
        line = template.get_corresponding_lineno(line) if line is not None else None
        raise TemplateLimitError(f"{budget.time_message()}{f' on line {line}' if line else ''}", line) from None
    except Cancelled:
        raise CancelledError("rendering the chat template was cancelled") from None
    except ChatTemplateError as exc:
        if isinstance(exc, TemplateLimitError) and exc.line is None:
            raise _wrap_error(exc) from None
        raise
    except CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - every template failure becomes one line
        raise _wrap_error(exc) from None
    finally:
        _budget.reset(token)
    return "".join(out)


# ----- where the messages landed in a rendering --------------------------------------------------

#: message keys an assistant's reasoning may come under (the first one present wins)
REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")


def _core(text: str) -> tuple[str, str, str]:
    """Split ``text`` into leading whitespace, core and trailing whitespace (``str.strip`` rules).

    >>> _core("  hi there\\n")
    ('  ', 'hi there', '\\n')
    """
    core = text.strip()
    if not core:
        return text, "", ""
    lead = text[: len(text) - len(text.lstrip())]
    return lead, core, text[len(lead) + len(core):]


class _Markers:
    """Private-use characters that wrap the strings a template receives, so the rendered text
    says where each one landed: ``open id`` / ``close id`` around content, ``lit`` / ``unlit``
    around special-token look-alikes in other strings."""

    def __init__(self, base: int) -> None:
        self.open, self.close, self.stop, self.lit, self.unlit = (chr(base + k) for k in range(5))
        self.digit0 = base + 16
        digits = "".join(chr(self.digit0 + d) for d in range(16))
        self.pattern = re.compile(
            f"([{re.escape(self.open)}{re.escape(self.close)}])([{re.escape(digits)}]+){re.escape(self.stop)}"
            f"|([{re.escape(self.lit)}{re.escape(self.unlit)}])|([{re.escape(self.stop)}{re.escape(digits)}])"
        )

    def tag(self, j: int) -> str:
        return "".join(chr(self.digit0 + int(d, 16)) for d in format(j, "x")) + self.stop

    def number(self, digits: str) -> int:
        return int("".join(format(ord(c) - self.digit0, "x") for c in digits), 16)


def _pick_markers(*texts: str) -> _Markers | None:
    for base in (0xF0000, 0x100000, 0xFFF00):
        probe = re.compile(f"[{re.escape(chr(base))}-{re.escape(chr(base + 31))}]")
        if not any(probe.search(t) for t in texts):
            return _Markers(base)
    return None


def strings_of(value: Any) -> list[str]:
    """Every string in JSON data, keys included.

    >>> strings_of({"a": ["b", 1, {"c": "d"}]})
    ['a', 'b', 'c', 'd']
    """
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, Mapping):
            for k, x in v.items():
                out.append(str(k))
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    walk(value)
    return out




class _MarkPlan:
    """Which strings of the messages get content markers, and the bookkeeping to read them back."""

    def __init__(self, markers: _Markers, look_alike: regex.Pattern[str] | None, level: str, edges: str) -> None:
        self.markers = markers
        self.look_alike = look_alike
        self.level = level  # "full": content, reasoning, tool calls; "content": content and reasoning; "none"
        # "outer": markers around the whole string; "inner": around its core, inside the leading
        # and trailing whitespace (so trim and strip still see it); "core": the core alone, the
        # probe that tells whether the template kept that whitespace
        self.edges_mode = edges
        self.owner: list[int] = []  # marked string id -> message index
        self.edges: list[tuple[str, str]] = []  # marked string id -> (leading, trailing) whitespace outside

    def lit(self, text: str) -> str:
        if self.look_alike is None:
            return text
        m = self.markers
        return self.look_alike.sub(lambda x: m.lit + x.group() + m.unlit, text)

    def content(self, text: str, message: int) -> str:
        if not text:
            return text  # nothing to find, and "" must stay falsy for the template
        lead, core, trail = _core(text)
        j = len(self.owner)
        self.owner.append(message)
        m = self.markers
        if self.edges_mode == "outer":
            self.edges.append(("", ""))
            return m.open + m.tag(j) + self.lit(text) + m.close + m.tag(j)
        self.edges.append((lead, trail))
        if self.edges_mode == "core":
            lead = trail = ""
        return self.lit(lead) + m.open + m.tag(j) + self.lit(core) + m.close + m.tag(j) + self.lit(trail)

    def other(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.lit(value)
        if isinstance(value, dict):
            return {k: self.other(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.other(v) for v in value]
        return value

    def message(self, msg: dict[str, Any], i: int) -> dict[str, Any]:
        out = {}
        for key, value in msg.items():
            if key == "role":
                out[key] = value
            elif self.level != "none" and key == "content" and isinstance(value, str):
                out[key] = self.content(value, i)
            elif self.level != "none" and key == "content" and isinstance(value, list):
                parts = []
                for part in value:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        part = {**{k: self.other(v) for k, v in part.items() if k != "text"},
                                "text": self.content(part["text"], i)}
                        parts.append(part)
                    else:
                        parts.append(self.other(part))
                out[key] = parts
            elif self.level != "none" and key in REASONING_KEYS and isinstance(value, str):
                out[key] = self.content(value, i)
            elif self.level == "full" and key == "tool_calls" and isinstance(value, list):
                out[key] = [self._call(c, i) for c in value]
            else:
                out[key] = self.other(value)
        return out

    def _call(self, call: Any, i: int) -> Any:
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            return self.other(call)
        fn = dict(call["function"])
        for key in ("name", "arguments"):
            if key in fn:
                fn[key] = self._leaves(fn[key], i)
        return {**{k: self.other(v) for k, v in call.items() if k != "function"}, "function": fn}

    def _leaves(self, value: Any, i: int) -> Any:
        if isinstance(value, str):
            return self.content(value, i)
        if isinstance(value, dict):
            return {k: self._leaves(v, i) for k, v in value.items()}
        if isinstance(value, list):
            return [self._leaves(v, i) for v in value]
        return value


@dataclass(slots=True)
class _Marked:
    """A marked rendering read back: the text without markers, the content ranges
    ``(start, end, string id)``, the look-alike ranges, and the markers in order with the text
    before each (``segments``; ``tail`` is the text after the last)."""

    text: str
    content: list[tuple[int, int, int]]
    literal: list[tuple[int, int]]
    segments: list[tuple[str, int | None, str]]
    tail: str


def _read_markers(marked: str, plan: _MarkPlan) -> _Marked | None:
    """Strip the markers from a marked rendering; ``None`` when the template broke a pair."""
    m = plan.markers
    out: list[str] = []
    segments: list[tuple[str, int | None, str]] = []
    pos = 0
    length = 0
    content: list[tuple[int, int, int]] = []
    literal: list[tuple[int, int]] = []
    open_id: int | None = None
    open_at = 0
    lit_at: int | None = None
    for found in m.pattern.finditer(marked):
        chunk = marked[pos:found.start()]
        out.append(chunk)
        length += len(chunk)
        pos = found.end()
        if found.group(4) is not None:
            return None  # stray digits or terminator: a marker was cut
        if found.group(3) is not None:
            if found.group(3) == m.lit:
                if lit_at is not None:
                    return None
                lit_at = length
                segments.append(("lit", None, chunk))
            else:
                if lit_at is None:
                    return None
                literal.append((lit_at, length))
                lit_at = None
                segments.append(("unlit", None, chunk))
            continue
        j = m.number(found.group(2))
        if j >= len(plan.owner):
            return None
        if found.group(1) == m.open:
            if open_id is not None:
                return None
            open_id, open_at = j, length
            segments.append(("open", j, chunk))
        else:
            if open_id != j:
                return None
            content.append((open_at, length, j))
            open_id = None
            segments.append(("close", j, chunk))
    if open_id is not None or lit_at is not None:
        return None
    tail = marked[pos:]
    out.append(tail)
    return _Marked("".join(out), content, literal, segments, tail)


def _kept_edges(marked: _Marked, probe: _Marked | None, plan: _MarkPlan) -> tuple[set[int], set[int]]:
    """Which marked strings kept their leading and trailing whitespace in the rendering.

    ``probe`` is the rendering with every string reduced to its core: where the two differ by a
    string's own whitespace, the template kept it; where they agree, the template stripped it.
    """
    kept_lead: set[int] = set()
    kept_trail: set[int] = set()
    if probe is None or [(k, j) for k, j, _ in marked.segments] != [(k, j) for k, j, _ in probe.segments]:
        return kept_lead, kept_trail
    texts = [seg for _, _, seg in marked.segments] + [marked.tail]
    probes = [seg for _, _, seg in probe.segments] + [probe.tail]
    kinds = [(k, j) for k, j, _ in marked.segments]
    for t, (seg, base) in enumerate(zip(texts, probes)):
        before = kinds[t - 1] if t > 0 else None
        after = kinds[t] if t < len(kinds) else None
        trail = plan.edges[before[1]][1] if before and before[0] == "close" else ""
        lead = plan.edges[after[1]][0] if after and after[0] == "open" else ""
        for p, q in ((trail, lead), (trail, ""), ("", lead), ("", "")):
            if seg == p + base + q:
                if p:
                    kept_trail.add(before[1])
                if q:
                    kept_lead.add(after[1])
                break
    return kept_lead, kept_trail


def _content_ranges(marked: _Marked, plan: _MarkPlan, probe: _Marked | None) -> list[tuple[int, int, int]]:
    """The content ranges ``(start, end, message)``, widened over the whitespace the template kept."""
    kept_lead, kept_trail = _kept_edges(marked, probe, plan) if plan.edges_mode == "inner" else (set(), set())
    out = []
    for start, end, j in marked.content:
        lead, trail = plan.edges[j]
        if j in kept_lead:
            start -= len(lead)
        if j in kept_trail:
            end += len(trail)
        out.append((start, end, plan.owner[j]))
    return out




def _marked_render(render: Callable[..., str], plan: _MarkPlan, messages: Sequence[Mapping[str, Any]], tools: Any,
                   documents: Any) -> _Marked | None:
    marked_messages = [plan.message(dict(msg), i) for i, msg in enumerate(messages)]
    try:
        marked = render(marked_messages, plan.other(tools), plan.other(documents))
    except ChatTemplateError:
        return None
    return _read_markers(marked, plan)


@dataclass(frozen=True, slots=True)
class Located:
    """Where the messages' strings landed in a rendering.

    ``content`` holds ``(start, end, message index)`` ranges of message text; ``literal`` the
    ranges of special-token look-alikes that came from the inputs (text, never control tokens);
    ``level`` says which strings could be followed: ``full`` (content, reasoning, tool calls),
    ``content`` (content and reasoning) or ``none``; ``marked`` is False when no marked
    rendering read back at all (nothing could be located).
    """

    content: tuple[tuple[int, int, int], ...]
    literal: tuple[tuple[int, int], ...]
    level: str
    marked: bool


def locate_content(render: Callable[[list[dict[str, Any]], Any, Any], str], real: str,
                   messages: Sequence[Mapping[str, Any]], tools: Any = None, documents: Any = None, *,
                   look_alike: regex.Pattern[str] | None = None, avoid: Sequence[str] = ()) -> Located:
    """Find the messages' strings in ``real``, the rendering of ``render(messages, tools, documents)``.

    The strings are wrapped in private-use marker characters (chosen absent from ``real`` and
    ``avoid``) and the template rendered again; the markers' places are read back only when
    removing them gives ``real`` exactly, so a template that inspects or rewrites the strings
    (``trim``, ``split``, ``length``...) cannot mislead. In order: every string whole, then each
    string's core inside its leading and trailing whitespace (for templates that strip it, with a
    probe telling whether the whitespace was kept), then content and reasoning only, then none.
    ``look_alike`` matches the special tokens whose spellings in the inputs must stay text.

    >>> render = lambda m, t, d: "".join(f"<{x['role']}>{x['content'].strip()}</{x['role']}>" for x in m)
    >>> messages = [{"role": "user", "content": " Hi "}, {"role": "bot", "content": "Yo"}]
    >>> real = render(messages, None, None)
    >>> located = locate_content(render, real, messages)
    >>> [real[s:e] for s, e, _ in located.content], located.level
    (['Hi', 'Yo'], 'full')
    """
    markers = _pick_markers(real, *avoid)
    if markers is None:
        return Located((), (), "none", False)
    for level, edges in (("full", "outer"), ("full", "inner"), ("content", "outer"), ("content", "inner"),
                         ("none", "outer")):
        plan = _MarkPlan(markers, look_alike, level, edges)
        result = _marked_render(render, plan, messages, tools, documents)
        if result is None or result.text != real:
            continue
        probe = None
        if edges == "inner" and any(lead or trail for lead, trail in plan.edges):
            probe = _marked_render(render, _MarkPlan(markers, look_alike, level, "core"), messages, tools, documents)
        return Located(tuple(_content_ranges(result, plan, probe)), tuple(result.literal), level, True)
    return Located((), (), "none", False)


# ----- templates and where they come from ------------------------------------------------------


def _token_text(value: Any) -> str | None:
    """A special token as ``tokenizer_config.json`` writes it: a string or an AddedToken dict.

    >>> _token_text("<s>"), _token_text({"content": "</s>", "__type": "AddedToken"}), _token_text(None)
    ('<s>', '</s>', None)
    """
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    return None


@dataclass(frozen=True, slots=True)
class ChatTemplate:
    """One model's chat template(s) and the special-token variables they are rendered with.

    ``templates`` holds ``(name, source)`` pairs (a single template is named ``default``);
    ``special_tokens`` the ``(variable, string)`` pairs (``bos_token``...) the template sees;
    ``control_tokens`` the added-token strings of the config (the model's control tokens);
    ``add_bos_token`` the config's flag saying the tokenizer itself adds a BOS token.
    """

    templates: tuple[tuple[str, str], ...]
    special_tokens: tuple[tuple[str, str], ...] = ()
    control_tokens: tuple[str, ...] = ()
    add_bos_token: bool | None = None
    origin: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.templates)

    @property
    def bos_token(self) -> str | None:
        return dict(self.special_tokens).get("bos_token")

    @property
    def eos_token(self) -> str | None:
        return dict(self.special_tokens).get("eos_token")

    def variables(self) -> dict[str, str]:
        """The special-token variables, as ``transformers`` passes its ``special_tokens_map``."""
        return dict(self.special_tokens)

    def select(self, *, tools: bool = False, name: str | None = None) -> tuple[str, str]:
        """The ``(name, source)`` to render, chosen as ``transformers``' ``get_chat_template``:
        a named one when asked, else ``tool_use`` when tools are given and it exists, else
        ``default``.

        >>> t = ChatTemplate((("default", "A"), ("tool_use", "B")))
        >>> t.select(), t.select(tools=True), t.select(name="default")
        (('default', 'A'), ('tool_use', 'B'), ('default', 'A'))
        """
        table = dict(self.templates)
        if name is not None:
            if name not in table:
                raise ChatTemplateError(f"no chat template named {name!r}; this model has {', '.join(table) or 'none'}")
            return name, table[name]
        if len(self.templates) == 1:
            return self.templates[0]
        if tools and "tool_use" in table:
            return "tool_use", table["tool_use"]
        if "default" in table:
            return "default", table["default"]
        raise ChatTemplateError(
            f"this model has several chat templates and none is named 'default'; pick one of {', '.join(table)}"
        )

    @classmethod
    def from_jinja(cls, source: str, *, special_tokens: Mapping[str, str] | None = None,
                   control_tokens: Sequence[str] = (), add_bos_token: bool | None = None,
                   origin: str = "") -> ChatTemplate:
        """A template from its Jinja text (a ``chat_template.jinja`` file).

        >>> ChatTemplate.from_jinja("{{ bos_token }}", special_tokens={"bos_token": "<s>"}).bos_token
        '<s>'
        """
        if not isinstance(source, str) or not source:
            raise ChatTemplateError("a chat template must be a non-empty string")
        return cls((("default", source),), tuple((special_tokens or {}).items()), tuple(control_tokens),
                   add_bos_token, origin)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | str, *, jinja: str | None = None,
                    origin: str = "") -> ChatTemplate:
        """A template from ``tokenizer_config.json`` (a mapping or its JSON text).

        ``chat_template`` may be a string or a list of ``{"name", "template"}``; ``jinja``, the
        text of a ``chat_template.jinja`` next to it, takes precedence as in ``transformers``.
        The special-token variables come from ``bos_token``, ``eos_token``... (strings or
        AddedToken dicts) and the named ``extra_special_tokens``; the control tokens from
        ``added_tokens_decoder``.

        >>> t = ChatTemplate.from_config({"chat_template": "{{ eos_token }}", "eos_token": "</s>"})
        >>> t.names, t.variables()
        (('default',), {'eos_token': '</s>'})
        """
        if isinstance(config, str):
            try:
                config = json.loads(config)
            except json.JSONDecodeError as exc:
                raise ChatTemplateError(f"tokenizer config is not valid JSON (line {exc.lineno}, column {exc.colno})") from None
        if not isinstance(config, Mapping):
            raise ChatTemplateError("tokenizer config must be a JSON object")
        raw = jinja if jinja is not None else config.get("chat_template")
        templates: list[tuple[str, str]] = []
        if isinstance(raw, str) and raw:
            templates.append(("default", raw))
        elif isinstance(raw, list):
            for i, item in enumerate(raw):
                if not (isinstance(item, Mapping) and isinstance(item.get("name"), str)
                        and isinstance(item.get("template"), str)):
                    raise ChatTemplateError(f"chat_template entry {i + 1} is not a {{name, template}} object")
                templates.append((item["name"], item["template"]))
        elif isinstance(raw, Mapping):
            for name, source in raw.items():
                if isinstance(name, str) and isinstance(source, str):
                    templates.append((name, source))
        if not templates:
            raise ChatTemplateError("this tokenizer config has no chat_template")
        specials: dict[str, str] = {}
        for name in SPECIAL_TOKEN_NAMES:
            text = _token_text(config.get(name))
            if text is not None:
                specials[name] = text
        extra = config.get("extra_special_tokens")
        if isinstance(extra, Mapping):
            for name, value in extra.items():
                text = _token_text(value)
                if isinstance(name, str) and text is not None and name not in RESERVED:
                    specials[name] = text
        controls: list[str] = []
        decoder = config.get("added_tokens_decoder")
        if isinstance(decoder, Mapping):
            for entry in decoder.values():
                text = _token_text(entry)
                if text is not None:
                    controls.append(text)
        add_bos = config.get("add_bos_token")
        return cls(tuple(templates), tuple(specials.items()), tuple(controls),
                   add_bos if isinstance(add_bos, bool) else None, origin)
