"""Command-line options read the way the commands themselves read them.

The read-only judge has to know which words a command takes as options, which as option
values and which as operands. GNU getopt_long and git's parse-options agree on the rules this
module follows: `--name=value` or `--name value` for a required value, `--name=value` only
for an optional one, short clusters (`-rnk2`, where a letter that takes a value swallows the
rest of the cluster or the next word, even `--`), `--` ending the options, and operands mixed
with options unless the command stops at the first operand (xargs).

Both parsers also accept any unambiguous prefix of a long option (`--outp` means `--output`)
and `--no-` negations. Rather than guess which prefix a given build would resolve, the judge
takes long options written in full only: an abbreviation is refused, and the message names
the option the command would have read it as.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

NONE = "none"
REQUIRED = "required"
OPTIONAL = "optional"
LASTARG = "lastarg"
"""git's PARSE_OPT_LASTARG_DEFAULT: takes the next word as its value unless it is the last."""


@dataclass(frozen=True)
class Option:
    """One option a command knows: how it takes a value, and why it is refused (if it is)."""

    arity: str = NONE
    refusal: str | None = None


ALLOWED_FLAG = Option()


@dataclass(frozen=True)
class OptionTable:
    """Every option of one command the judge knows, allowed or refused, by name."""

    command: str
    long: Mapping[str, Option] = field(default_factory=dict)
    """Long names without the leading `--`."""
    short: Mapping[str, Option] = field(default_factory=dict)
    """Single characters."""
    permute: bool = True
    """False when the command stops reading options at its first operand."""
    numbers: bool = False
    """True when `-NUM` is a shortcut the command accepts (git grep -3)."""


@dataclass
class ParsedArgs:
    """Options in the order given (`--output`, `-o`, with their values) and the operands."""

    options: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [value for name, value in self.options if name in names and value is not None]


class OptionRefused(Exception):
    """An option the judge does not accept; `reason` is one short sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def table(
    command: str,
    *,
    flags: str = "",
    valued: str = "",
    optional: str = "",
    long_flags: Iterable[str] = (),
    long_valued: Iterable[str] = (),
    long_optional: Iterable[str] = (),
    long_lastarg: Iterable[str] = (),
    refused: Mapping[str, tuple[str, str]] | None = None,
    permute: bool = True,
    numbers: bool = False,
) -> OptionTable:
    """Build a table from short letters and long names; `refused` maps `-x` or `--name` to
    `(arity, reason)`."""
    short = {c: ALLOWED_FLAG for c in flags}
    short.update({c: Option(REQUIRED) for c in valued})
    short.update({c: Option(OPTIONAL) for c in optional})
    long = {n: ALLOWED_FLAG for n in long_flags}
    long.update({n: Option(REQUIRED) for n in long_valued})
    long.update({n: Option(OPTIONAL) for n in long_optional})
    long.update({n: Option(LASTARG) for n in long_lastarg})
    for name, (arity, reason) in (refused or {}).items():
        if name.startswith("--"):
            long[name[2:]] = Option(arity, reason)
        else:
            short[name[1:]] = Option(arity, reason)
    return OptionTable(command, long, short, permute=permute, numbers=numbers)


def parse_args(args: list[str], spec: OptionTable) -> ParsedArgs:
    """Split `args` as the command would; raises `OptionRefused` on anything not allowed."""
    parsed = ParsedArgs()
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            parsed.operands.extend(args[i:])
            break
        if arg.startswith("--"):
            i = _long(arg, args, i, spec, parsed)
        elif arg.startswith("-") and arg != "-":
            i = _short(arg, args, i, spec, parsed)
        else:
            parsed.operands.append(arg)
            if not spec.permute:
                parsed.operands.extend(args[i:])
                break
    return parsed


def _long(arg: str, args: list[str], i: int, spec: OptionTable, parsed: ParsedArgs) -> int:
    name, has_value, value = arg[2:].partition("=")
    option = spec.long.get(name)
    if option is None:
        raise OptionRefused(unknown_long(spec, name))
    if option.refusal:
        raise OptionRefused(option.refusal)
    if option.arity == NONE:
        if has_value:
            raise OptionRefused(f"{spec.command} --{name} takes no value")
        parsed.options.append((f"--{name}", None))
        return i
    if has_value:
        parsed.options.append((f"--{name}", value))
        return i
    if option.arity == OPTIONAL:
        parsed.options.append((f"--{name}", None))
        return i
    if i < len(args):
        parsed.options.append((f"--{name}", args[i]))
        return i + 1
    if option.arity == LASTARG:
        parsed.options.append((f"--{name}", None))
        return i
    raise OptionRefused(f"{spec.command} --{name} needs a value")


def _short(arg: str, args: list[str], i: int, spec: OptionTable, parsed: ParsedArgs) -> int:
    j = 1
    while j < len(arg):
        letter = arg[j]
        if spec.numbers and letter.isdigit():
            j += 1
            continue
        option = spec.short.get(letter)
        if option is None:
            raise OptionRefused(f"{spec.command} option -{letter} is not on the read-only list")
        if option.refusal:
            raise OptionRefused(option.refusal)
        rest = arg[j + 1 :]
        if option.arity == NONE:
            parsed.options.append((f"-{letter}", None))
            j += 1
            continue
        if option.arity == OPTIONAL or rest:
            parsed.options.append((f"-{letter}", rest or None))
            return i
        if i < len(args):
            parsed.options.append((f"-{letter}", args[i]))
            return i + 1
        if option.arity == LASTARG:
            parsed.options.append((f"-{letter}", None))
            return i
        raise OptionRefused(f"{spec.command} -{letter} needs a value")
    return i


def unknown_long(spec: OptionTable, name: str) -> str:
    """Why `--name` is refused: an abbreviation (say of what), or simply not on the list."""
    if not name:
        return f"{spec.command} option -- with a value is not understood"
    candidates = sorted(n for n in spec.long if n.startswith(name))
    if len(candidates) == 1:
        meant = candidates[0]
        danger = spec.long[meant].refusal
        why = f" ({danger})" if danger else ""
        return f"{spec.command} would read --{name} as --{meant}{why}; write long options in full"
    if candidates:
        return f"{spec.command} --{name} abbreviates several options; write long options in full"
    return f"{spec.command} option --{name} is not on the read-only list"


def dangerous_prefix(word: str, dangerous: Mapping[str, str]) -> str | None:
    """For a word `--x[=v]`: the danger of every listed option that `--x` could abbreviate.

    Used where a command has too many harmless options to list (git log, rg): any word that
    is, or abbreviates, a dangerous option is refused, wherever it stands.
    """
    if not word.startswith("--") or word == "--":
        return None
    name = word[2:].partition("=")[0]
    if not name:
        return None
    hits = sorted(d for d in dangerous if d.startswith(name))
    if not hits:
        return None
    if hits == [name]:
        return f"--{name} {dangerous[name]}"
    meant = " or ".join(f"--{h}" for h in hits)
    return f"--{name} would be read as {meant}, which {dangerous[hits[0]]}"
