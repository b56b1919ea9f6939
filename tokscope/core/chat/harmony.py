"""The text the harmony format writes for system and developer messages and tool definitions.

Harmony (the format of OpenAI's open-weight gpt-oss models) writes the model's configuration and
the function tools as plain text inside the system and developer messages; tool parameters are
JSON schemas shown as TypeScript types. These functions produce that text character for
character as the ``openai-harmony`` renderer does (the tests compare token ids with it); the
message framing (``<|start|>``, ``<|channel|>``...) is in :mod:`tokscope.core.chat.render_harmony`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
DEFAULT_KNOWLEDGE_CUTOFF = "2024-06"
CHANNELS = ("analysis", "commentary", "final")
REASONING_EFFORTS = ("low", "medium", "high")


def rust_lines(text: str) -> list[str]:
    r"""Split like Rust's ``str::lines``: on ``\n`` (dropping a ``\r`` right before it), with
    no empty last line after a final newline; a ``\r`` not followed by ``\n`` stays.

    >>> rust_lines("a\r\nb\n"), rust_lines(""), rust_lines("a\n\nb"), rust_lines("x\ry\r")
    (['a', 'b'], [], ['a', '', 'b'], ['x\ry\r'])
    """
    if not text:
        return []
    lines = text.split("\n")
    last = lines.pop()
    out = [line[:-1] if line.endswith("\r") else line for line in lines]
    if last:
        out.append(last)
    return out


def _serde_float(x: float) -> str:
    """A float as serde_json writes it (Rust's shortest round-trip form, ``ryu``).

    >>> [_serde_float(v) for v in (1e20, 1.5, 2.0, 1e15, 1e16, 0.0001, 1e-05, 1e-06, 1.25e-7, -0.0)]
    ['1e20', '1.5', '2.0', '1000000000000000.0', '1e16', '0.0001', '0.00001', '1e-6', '1.25e-7', '-0.0']
    """
    if x != x or x in (float("inf"), float("-inf")):
        return "null"  # serde_json writes non-finite floats as null
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0.0"
    digits_tuple, exponent = Decimal(repr(abs(x))).as_tuple()[1:]
    digits = "".join(map(str, digits_tuple)).rstrip("0")
    k = int(exponent) + (len(digits_tuple) - len(digits))
    length = len(digits)
    kk = length + k  # 10**(kk-1) <= x < 10**kk
    if 0 <= k and kk <= 16:
        out = digits + "0" * k + ".0"
    elif 0 < kk <= 16:
        out = digits[:kk] + "." + digits[kk:]
    elif -5 < kk <= 0:
        out = "0." + "0" * -kk + digits
    elif length == 1:
        out = f"{digits}e{kk - 1}"
    else:
        out = f"{digits[0]}.{digits[1:]}e{kk - 1}"
    return sign + out


_U64_MAX = 2**64 - 1
_POW10 = [float(f"1e{k}") for k in range(309)]


def serde_number(text: str) -> int | float:
    """The number serde_json reads from JSON number ``text`` without its ``float_roundtrip``
    feature: the digits as a 64-bit integer (digits past 64 bits dropped) times a power of ten
    in floating point, which can be one unit in the last place off the true value.

    >>> serde_number("12"), serde_number("1e-63"), serde_number("100000000000000000000"), serde_number("-0")
    (12, 9.999999999999999e-64, 1e+20, -0.0)
    """
    i = 0
    positive = True
    if text.startswith("-"):
        positive, i = False, 1
    significand = 0
    exponent = 0
    overflowed = is_float = False
    while i < len(text) and "0" <= text[i] <= "9":
        digit = ord(text[i]) - 48
        if overflowed or significand * 10 + digit > _U64_MAX:
            overflowed = is_float = True
            exponent += 1
        else:
            significand = significand * 10 + digit
        i += 1
    if i < len(text) and text[i] == ".":
        is_float = True
        i += 1
        while i < len(text) and "0" <= text[i] <= "9":
            digit = ord(text[i]) - 48
            if overflowed or significand * 10 + digit > _U64_MAX:
                overflowed = True
            else:
                significand = significand * 10 + digit
                exponent -= 1
            i += 1
    if i < len(text) and text[i] in "eE":
        is_float = True
        i += 1
        sign = 1
        if i < len(text) and text[i] in "+-":
            sign = -1 if text[i] == "-" else 1
            i += 1
        exponent += sign * int(text[i:] or "0")
    if not is_float:
        if positive:
            return significand
        return -significand if 0 < significand <= 2**63 else -float(significand)
    f = float(significand)
    while True:
        if abs(exponent) <= 308:
            f = f * _POW10[exponent] if exponent >= 0 else f / _POW10[-exponent]
            break
        if f == 0 or exponent >= 0:
            break
        f /= 1e308
        exponent += 308
    return f if positive else -f


def _number_text(value: int | float) -> str:
    # openai-harmony's Python side writes the number as Python's json does; serde_json reads it
    # back (see serde_number) and writes it again
    read = serde_number(json.dumps(value)) if math.isfinite(value) else None
    if read is None:
        return "null"
    return str(read) if isinstance(read, int) else _serde_float(read)


def json_text(value: Any) -> str:
    """A JSON value written compactly, as openai-harmony's renderer writes it (serde_json's
    ``Display`` of what serde_json read from Python's JSON).

    >>> json_text(10), json_text([1, "a"]), json_text({"k": None}), json_text("é"), json_text(10**20)
    ('10', '[1,"a"]', '{"k":null}', '"é"', '1e20')
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return _number_text(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _is_enum(schema: Mapping[str, Any]) -> bool:
    values = schema.get("enum")
    return isinstance(values, list) and bool(values)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _default_comment(schema: Mapping[str, Any], default: Any, *, enum_as_json: bool = False) -> str:
    # the renderer writes a string default quoted as it is, an enum's string default bare (or,
    # for the variants of a top-level oneOf, as JSON), and any other default as JSON
    if isinstance(default, str) and not _is_enum(schema):
        return f'default: "{default}"'
    if isinstance(default, str) and not enum_as_json:
        return f"default: {default}"
    return f"default: {json_text(default)}"


def _nullable(schema: Any, type_str: str) -> str:
    if isinstance(schema, Mapping) and schema.get("nullable") is True and "null" not in type_str:
        return type_str + " | null"
    return type_str


def schema_to_typescript(schema: Any, indent: str = "") -> str:
    """A JSON schema as the TypeScript type harmony shows the model.

    >>> schema_to_typescript({"type": "string", "enum": ["c", "f"]})
    '"c" | "f"'
    >>> print(schema_to_typescript({"type": "object", "properties": {
    ...     "city": {"type": "string", "description": "The city"},
    ...     "days": {"type": "integer", "default": 3}}, "required": ["city"]}))
    {
    // The city
    city: string,
    days?: number, // default: 3
    }
    """
    if not isinstance(schema, Mapping):
        return "any"
    one_of = schema.get("oneOf")
    if isinstance(one_of, list):
        out = []
        for variant in one_of:
            out.append(f"\n{indent} | ")
            out.append(_nullable(variant, schema_to_typescript(variant, indent + "   ")))
            comments = []
            if isinstance(variant, Mapping):
                desc = _str(variant.get("description"))
                if desc is not None:
                    comments.append(desc)
                if "default" in variant:
                    comments.append(_default_comment(variant, variant["default"], enum_as_json=True))
            if comments:
                out.append(" // " + " ".join(comments))
        return "".join(out)
    types = schema.get("type")
    if isinstance(types, list):
        names = ["number" if t == "integer" else t for t in types if isinstance(t, str)]
        if names:
            return " | ".join(names)
    if isinstance(types, str):
        if types == "object":
            return _object_to_typescript(schema, indent)
        if types == "string":
            values = schema.get("enum")
            if isinstance(values, list):
                quoted = [f'"{v}"' for v in values if isinstance(v, str)]
                if quoted:
                    return " | ".join(quoted)
            return "string"
        if types in ("number", "integer"):
            return "number"
        if types == "boolean":
            return "boolean"
        if types == "array":
            items = schema.get("items")
            return f"{schema_to_typescript(items, indent)}[]" if "items" in schema else "Array<any>"
        return "any"
    return "any"


def _object_to_typescript(schema: Mapping[str, Any], indent: str) -> str:
    out = []
    desc = _str(schema.get("description"))
    if desc is not None:
        out.append(f"{indent}// {desc}\n")
    out.append("{\n")
    props = schema.get("properties")
    if isinstance(props, Mapping):
        required_list = schema.get("required")
        required = {r for r in required_list if isinstance(r, str)} if isinstance(required_list, list) else set()
        for key, val in props.items():
            if not isinstance(val, Mapping):
                val = {}
            mark = "" if key in required else "?"
            title = _str(val.get("title"))
            if title is not None:
                out.append(f"{indent}// {title}\n{indent}//\n")
            has_one_of = "oneOf" in val
            if not has_one_of:
                d = _str(val.get("description"))
                if d is not None:
                    out.append(f"{indent}// {d}\n")
            examples = val.get("examples")
            if isinstance(examples, list) and examples:
                out.append(f"{indent}// Examples:\n")
                for ex in examples:
                    if isinstance(ex, str):
                        out.append(f'{indent}// - "{ex}"\n')
            variants = val.get("oneOf")
            if isinstance(variants, list):
                out.append(_one_of_property(key, mark, val, variants, indent))
                continue
            type_str = _nullable(val, schema_to_typescript(val, indent + "    "))
            out.append(f"{indent}{key}{mark}: {type_str},")
            if not has_one_of and "default" in val:
                out.append(" // " + _default_comment(val, val["default"]))
            out.append("\n")
    out.append(f"{indent}}}")
    return "".join(out)


def _one_of_property(key: str, mark: str, val: Mapping[str, Any], variants: list[Any], indent: str) -> str:
    out = []
    prop_desc = _str(val.get("description"))
    first = variants[0] if variants else None
    skip = (prop_desc is not None and isinstance(first, Mapping)
            and _str(first.get("description")) == prop_desc)
    above = False
    if not skip and prop_desc is not None:
        out.append(f"{indent}// {prop_desc}\n")
        above = True
    if "default" in val:
        default = val["default"]
        if isinstance(default, str) and not _is_enum(val):
            out.append(f'{indent}// default: "{default}"\n')
        elif isinstance(default, str):
            out.append(f"{indent}// default: {default}\n")
        else:
            out.append(f"{indent}// default: {json_text(default)}\n")
    out.append(f"{indent}{key}{mark}:\n")
    for i, variant in enumerate(variants):
        out.append(f"{indent} | ")
        out.append(_nullable(variant, schema_to_typescript(variant, indent + "   ")))
        comments = []
        if isinstance(variant, Mapping):
            if not (i == 0 and above):
                d = _str(variant.get("description"))
                if d is not None and d != prop_desc:
                    comments.append(d)
            if "default" in variant:
                comments.append(_default_comment(variant, variant["default"]))
        if comments:
            out.append(" // " + " ".join(comments))
        out.append("\n")
    out.append(f"{indent},\n")
    return "".join(out)


def tools_section(tools: Sequence[tuple[str, str, Mapping[str, Any] | None]], namespace: str = "functions") -> str:
    """The ``# Tools`` section for function tools given as ``(name, description, parameters)``.

    >>> print(tools_section([("get_time", "Current time.", None)]))
    # Tools
    <BLANKLINE>
    ## functions
    <BLANKLINE>
    namespace functions {
    <BLANKLINE>
    // Current time.
    type get_time = () => any;
    <BLANKLINE>
    } // namespace functions
    """
    body = [f"## {namespace}\n"]
    if tools:
        body.append(f"namespace {namespace} {{\n")
        for name, description, parameters in tools:
            body.extend(f"// {line}" for line in rust_lines(description))
            if parameters is not None:
                body.append(f"type {name} = (_: {schema_to_typescript(parameters)}) => any;\n")
            else:
                body.append(f"type {name} = () => any;\n")
        body.append(f"}} // namespace {namespace}")
    return "\n\n".join(["# Tools", "\n".join(body)])


def system_text(*, model_identity: str | None = DEFAULT_IDENTITY, knowledge_cutoff: str | None = DEFAULT_KNOWLEDGE_CUTOFF,
                current_date: str | None = None, reasoning_effort: str | None = "medium",
                channels: Sequence[str] = CHANNELS, channel_required: bool = True,
                function_tools: bool = False) -> str:
    """The text of harmony's system message (identity, dates, reasoning effort, channels).

    >>> print(system_text())
    You are ChatGPT, a large language model trained by OpenAI.
    Knowledge cutoff: 2024-06
    <BLANKLINE>
    Reasoning: medium
    <BLANKLINE>
    # Valid channels: analysis, commentary, final. Channel must be included for every message.
    """
    sections = []
    top = []
    if model_identity is not None:
        top.append(model_identity)
    if knowledge_cutoff is not None:
        top.append(f"Knowledge cutoff: {knowledge_cutoff}")
    if current_date is not None:
        top.append(f"Current date: {current_date}")
    if top:
        sections.append("\n".join(top))
    if reasoning_effort is not None:
        sections.append(f"Reasoning: {reasoning_effort}")
    if channels:
        header = f"# Valid channels: {', '.join(channels)}."
        if channel_required:
            header += " Channel must be included for every message."
        if function_tools:
            header += "\nCalls to these tools must go to the commentary channel: 'functions'."
        sections.append(header)
    return "\n\n".join(sections)


def developer_parts(instructions: str | None, tools_text: str | None) -> list[tuple[str, bool]]:
    """The developer message's text as ``(text, is_instructions)`` parts, in order.

    >>> developer_parts("Be brief.", None)
    [('# Instructions\\n\\n', False), ('Be brief.', True)]
    """
    parts: list[tuple[str, bool]] = []
    if instructions is not None:
        parts.append(("# Instructions\n\n", False))
        parts.append((instructions, True))
    if tools_text:
        parts.append(("\n\n" + tools_text if parts else tools_text, False))
    return [p for p in parts if p[0] or p[1]]
