"""``tokscope completion SHELL``: a tab-completion script for bash, zsh or fish.

The script is generated from the command line's own parser, so it always offers the subcommands
and options this version has; the values of ``-e``/``--encoding`` are asked of tokscope at the
moment the user presses Tab (``tokscope completion --encodings``), so tokenizers saved since, models
that reached the Hugging Face cache, and every other source the registry lists are offered too.
Options with fixed choices complete those; the rest complete file names.

Install (each line once)::

    tokscope completion bash > ~/.local/share/bash-completion/completions/tokscope
    tokscope completion zsh > "${fpath[1]}/_tokscope"
    tokscope completion fish > ~/.config/fish/completions/tokscope.fish

Why not ``argcomplete`` or ``shtab``: argcomplete starts the whole program on every Tab and
needs a hook in the entry point; shtab writes static scripts, and the encoding names are not
static. A generated script that asks only for the names needs neither, and no new dependency.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

SHELLS = ("bash", "zsh", "fish")

#: destinations whose values are encoding names (``-e``/``--encoding``, repeated or not)
ENCODING_DESTS = frozenset({"encoding", "encodings"})


@dataclass(frozen=True)
class Option:
    """One option as completion sees it.

    >>> Option(("-e", "--encoding"), True, (), True, "an encoding").long
    'encoding'
    """

    flags: tuple[str, ...]
    takes_value: bool
    choices: tuple[str, ...]
    encodings: bool
    help: str

    @property
    def long(self) -> str | None:
        return next((f[2:] for f in self.flags if f.startswith("--")), None)

    @property
    def short(self) -> str | None:
        return next((f[1:] for f in self.flags if len(f) == 2 and f[0] == "-" and f[1] != "-"), None)


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    options: tuple[Option, ...]


#: the options of the explorer (``tokscope [FILE] ...``), where no subcommand is given
EXPLORER_OPTIONS = (
    Option(("-h", "--help"), False, (), False, "show help"),
    Option(("--version",), False, (), False, "show the version"),
    Option(("-e", "--encoding"), True, (), True, "encoding to start with"),
    Option(("--errors",), True, ("strict", "replace"), False, "open a file that is not UTF-8 with U+FFFD"),
    Option(("--max-bytes",), True, (), False, "refuse files larger than N bytes"),
)


def option_of(action: argparse.Action) -> Option | None:
    """The :class:`Option` for an argparse action (``None`` for a positional argument).

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--errors", choices=("strict", "replace"))
    >>> option_of(p._actions[-1])
    Option(flags=('--errors',), takes_value=True, choices=('strict', 'replace'), encodings=False, help='')
    """
    if not action.option_strings:
        return None
    help_text = "" if action.help in (None, argparse.SUPPRESS) else str(action.help)
    choices = tuple(str(c) for c in action.choices) if action.choices else ()
    return Option(tuple(action.option_strings), action.nargs != 0, choices,
                  action.dest in ENCODING_DESTS, " ".join(help_text.split()))


def commands_of(subparsers: Any) -> tuple[Command, ...]:
    """Every subcommand of an argparse subparsers action, with its options, in ``--help`` order."""
    helps = {a.dest: a.help or "" for a in subparsers._choices_actions}  # noqa: SLF001 - argparse keeps the help lines here
    out = []
    for name, parser in subparsers.choices.items():
        options = tuple(o for o in map(option_of, parser._actions) if o is not None)  # noqa: SLF001
        out.append(Command(name, " ".join(str(helps.get(name, "")).split()), options))
    return tuple(out)


# ----- the scripts --------------------------------------------------------------------------------


def _words(items: list[str]) -> str:
    return " ".join(items)


def _flags(options: tuple[Option, ...]) -> list[str]:
    return [flag for o in options for flag in o.flags]


def _value_flags(options: tuple[Option, ...], which: str) -> list[str]:
    pick = {
        "encodings": lambda o: o.encodings,
        "choices": lambda o: bool(o.choices),
        "other": lambda o: o.takes_value and not o.encodings and not o.choices,
    }[which]
    return [flag for o in options if pick(o) for flag in o.flags]


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _bash_case(prog: str, label: str, options: tuple[Option, ...], first: str) -> str:
    lines = [f"        {label})", '            case "$prev" in']
    enc = "|".join(_value_flags(options, "encodings"))
    if enc:
        lines.append(f'                {enc}) COMPREPLY=($(compgen -W "$({prog} completion --encodings 2>/dev/null)" -- "$cur")); return;;')
    for o in options:
        if o.choices:
            lines.append(f'                {"|".join(o.flags)}) COMPREPLY=($(compgen -W {_sh_quote(_words(list(o.choices)))} -- "$cur")); return;;')
    other = "|".join(_value_flags(options, "other"))
    if other:
        lines.append(f"                {other}) return;;")  # a file or a number: bash's default, file names
    lines.append("            esac")
    lines.append(f'            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W {_sh_quote(_words(_flags(options)))} -- "$cur"))')
    if first:
        lines.append(f'            elif (( COMP_CWORD == 1 )); then COMPREPLY=($(compgen -W {_sh_quote(first)} -- "$cur"))')
    lines.append("            fi")
    lines.append("            ;;")
    return "\n".join(lines) + "\n"


def bash_script(prog: str, commands: tuple[Command, ...]) -> str:
    """A bash completion script (``complete -F``): file names wherever nothing else fits.

    >>> s = bash_script("tokscope", (Command("encode", "", (Option(("-e",), True, (), True, ""),)),))
    >>> "-F _tokscope tokscope" in s and "encode)" in s
    True
    """
    fn = "_" + prog.replace("-", "_")
    subcommands = _words([c.name for c in commands])
    cases = _bash_case(prog, '""', EXPLORER_OPTIONS, subcommands)
    cases += "".join(_bash_case(prog, c.name, c.options, "") for c in commands)
    return f"""# bash completion for {prog} (generated by '{prog} completion bash')
{fn}() {{
    local cur prev cmd="" i
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    for ((i = 1; i < COMP_CWORD; i++)); do
        case " {subcommands} " in
            *" ${{COMP_WORDS[i]}} "*) cmd="${{COMP_WORDS[i]}}"; break;;
        esac
    done
    case "$cmd" in
{cases}    esac
}}
complete -o default -o bashdefault -F {fn} {prog}
"""


def _zsh_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "'\\''").replace(":", "\\:").replace("[", "\\[").replace("]", "\\]")


def _zsh_option_specs(options: tuple[Option, ...]) -> list[str]:
    """``_arguments`` specs, the braces outside the quotes so that zsh expands them.

    >>> _zsh_option_specs((Option(("-e", "--encoding"), True, (), True, "a name"),))
    ["'*'{-e,--encoding}'[a name]:name:_tokscope_encodings'"]
    """
    specs = []
    for o in options:
        if o.encodings:
            action = ":name:_tokscope_encodings"
        elif o.choices:
            action = f":value:({' '.join(o.choices)})"
        elif o.takes_value:
            action = ":value:_files"
        else:
            action = ""
        # -e repeats wherever it may (compare, count); elsewhere an option is offered once
        head = "'*'" if o.encodings else (f"'({' '.join(o.flags)})'" if len(o.flags) > 1 else "")
        names = "{" + ",".join(o.flags) + "}" if len(o.flags) > 1 else o.flags[0]
        if len(o.flags) == 1:
            specs.append(f"{head}'{names}[{_zsh_escape(o.help)}]{action}'")
        else:
            specs.append(f"{head}{names}'[{_zsh_escape(o.help)}]{action}'")
    return specs


def zsh_script(prog: str, commands: tuple[Command, ...]) -> str:
    """A zsh completion function (``#compdef``), with each command's help as its description.

    >>> "#compdef tokscope" in zsh_script("tokscope", (Command("count", "count tokens", ()),))
    True
    """
    described = "\n".join(f"        '{c.name}:{_zsh_escape(c.help)}'" for c in commands)
    cases = "\n".join(
        f"        {c.name})\n            shift words; (( CURRENT-- ))\n            _arguments -s {' '.join(_zsh_option_specs(c.options))} '*:file:_files'\n            ;;"
        for c in commands
    )
    root = " ".join(_zsh_option_specs(EXPLORER_OPTIONS))
    return f"""#compdef {prog}
# zsh completion for {prog} (generated by '{prog} completion zsh')

_tokscope_encodings() {{
    local -a names
    names=(${{(f)"$({prog} completion --encodings 2>/dev/null)"}})
    _describe -t encodings 'encoding' names
}}

_{prog.replace("-", "_")}() {{
    local -a commands
    commands=(
{described}
    )
    if (( CURRENT == 2 )) && [[ "$words[2]" != -* ]]; then
        _describe -t commands 'command' commands
        _files
        return
    fi
    local cmd="$words[2]"
    case "$cmd" in
{cases}
        *)
            _arguments -s {root} '*:file:_files'
            ;;
    esac
}}

if [[ "$funcstack[1]" == "_{prog.replace("-", "_")}" ]]; then
    _{prog.replace("-", "_")} "$@"
else
    compdef _{prog.replace("-", "_")} {prog}
fi
"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish_script(prog: str, commands: tuple[Command, ...]) -> str:
    """Fish completions: one ``complete`` line per subcommand and per option.

    >>> s = fish_script("tokscope", (Command("count", "count tokens", ()),))
    >>> "complete -c tokscope -n __fish_use_subcommand -f -a count -d 'count tokens'" in s
    True
    """
    lines = [f"# fish completion for {prog} (generated by '{prog} completion fish')"]
    names = " ".join(c.name for c in commands)
    for c in commands:
        lines.append(f"complete -c {prog} -n __fish_use_subcommand -f -a {c.name} -d {_fish_quote(c.help)}")

    def option_line(condition: str, o: Option) -> str:
        parts = [f"complete -c {prog} -n {_fish_quote(condition)}"]
        if o.short:
            parts.append(f"-s {o.short}")
        if o.long:
            parts.append(f"-l {o.long}")
        if o.encodings:
            parts.append(f"-x -a '({prog} completion --encodings 2>/dev/null)'")
        elif o.choices:
            parts.append(f"-x -a {_fish_quote(' '.join(o.choices))}")
        elif o.takes_value:
            parts.append("-r")
        if o.help:
            parts.append(f"-d {_fish_quote(o.help)}")
        return " ".join(parts)

    for o in EXPLORER_OPTIONS:
        lines.append(option_line(f"not __fish_seen_subcommand_from {names}", o))
    for c in commands:
        for o in c.options:
            lines.append(option_line(f"__fish_seen_subcommand_from {c.name}", o))
    return "\n".join(lines) + "\n"


SCRIPTS = {"bash": bash_script, "zsh": zsh_script, "fish": fish_script}


def encoding_names() -> list[str]:
    """Every name ``-e`` takes that the registry can list, then the short aliases."""
    from ..sources.registry import ALIASES, list_encodings

    names = [info.name for info in list_encodings()]
    return names + [alias for alias in ALIASES if alias not in names]


# ----- the command ---------------------------------------------------------------------------------


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "completion",
        help="print a tab-completion script for bash, zsh or fish",
        description=(
            "Print a script that completes tokscope's subcommands, options and encoding names "
            "(saved tokenizers and cached models included, read when you press Tab). "
            "bash: tokscope completion bash > ~/.local/share/bash-completion/completions/tokscope; "
            "zsh: tokscope completion zsh > \"${fpath[1]}/_tokscope\"; "
            "fish: tokscope completion fish > ~/.config/fish/completions/tokscope.fish"
        ),
    )
    p.add_argument("shell", nargs="?", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    p.add_argument("--encodings", action="store_true", help=argparse.SUPPRESS)  # what the scripts ask
    p.set_defaults(func=lambda args: cmd_completion(args, subparsers))


def cmd_completion(args: argparse.Namespace, subparsers: Any) -> int:
    from .common import PROG, UsageError

    if args.encodings:
        print("\n".join(encoding_names()))
        return 0
    if args.shell is None:
        raise UsageError("name a shell: bash, zsh or fish")
    print(SCRIPTS[args.shell](PROG, commands_of(subparsers)), end="")
    return 0
