"""Is a Bash command read-only? Judged on a real parse of the command line (spec 02 §4).

The extraction and dream agents may run shell commands only when they cannot change anything.
The command line is parsed with tree-sitter's Bash grammar, so quoting, pipes, lists, subshells
and redirections are understood rather than pattern-matched. Every simple command must then be
on an allowlist: plain read-only tools, tools whose flags are checked (git, sed, sort, find,
xargs, ...), and a few that must match an exact shape (`node -v`, `history 20`, ...).

Flags are read the way the commands read them (see `bash_options`): a tool with few options
is parsed against a full table of them, so a value-taking option that swallows the next word
is understood, and a long option must be written in full (getopt_long and git would take
`--outp` as `--output`); a tool with very many options refuses any word that is, or could
abbreviate, one of its dangerous options. git has its own module, `bash_git`.

Anything the judge does not understand is refused: a parse error, `$` expansion, command or
process substitution, unquoted globs and brace expansion, variable assignments, loops,
functions, background jobs, and output redirections to anything but `/dev/null`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from workbench.engine.agents.bash_git import check_git
from workbench.engine.agents.bash_options import (
    NONE,
    OPTIONAL,
    REQUIRED,
    OptionRefused,
    OptionTable,
    ParsedArgs,
    dangerous_prefix,
    parse_args,
    table,
)

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_COMMAND_LENGTH = 10_000

# Commands that only ever read, whatever their arguments (as in Claude Code's allowlist).
PLAIN_READ_ONLY = frozenset(
    """cat head tail wc stat strings hexdump od nl id uname free df du locale groups nproc
    basename dirname realpath cut paste tr column tac rev fold expand unexpand fmt comm cmp
    numfmt readlink diff true false sleep which type expr test getconf seq tsort pr cal
    uptime""".split()
)

# xargs appends words it reads from stdin, so it may only drive tools no argument can abuse.
XARGS_TARGETS = frozenset(
    """cat head tail wc stat ls grep egrep fgrep basename dirname realpath readlink du echo
    strings nl md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum""".split()
)

_EXPANSION_NODES = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "ansi_c_string",
        "translated_string",
        "brace_expression",
    }
)
_REDIRECT_NODES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")


class _Refused(Exception):
    """Raised inside the walk; carries the reason the command is not read-only."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ReadOnlyVerdict:
    """Whether a command line is read-only, and if not, why."""

    read_only: bool
    reason: str = ""
    """Empty when read-only; otherwise one short sentence in our words."""
    commands: tuple[tuple[str, ...], ...] = field(default_factory=tuple)
    """The argv of every simple command that was checked (for display and tests)."""

    def to_json(self) -> dict[str, object]:
        return {
            "read_only": self.read_only,
            "reason": self.reason,
            "commands": [list(argv) for argv in self.commands],
        }


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def judge_command(command: str) -> ReadOnlyVerdict:
    """Decide whether `command` can only read: parse it, then check every simple command."""
    if not isinstance(command, str) or not command.strip():
        return ReadOnlyVerdict(False, "the command is empty")
    if len(command) > MAX_COMMAND_LENGTH:
        return ReadOnlyVerdict(False, "the command is too long to judge")
    if "\0" in command:
        return ReadOnlyVerdict(False, "the command contains a NUL byte")
    tree = _parser().parse(command.encode("utf-8"))
    root = tree.root_node
    if root.has_error:
        return ReadOnlyVerdict(False, "the command line could not be parsed")
    found: list[tuple[str, ...]] = []
    try:
        _walk_statement(root, found)
    except _Refused as refused:
        return ReadOnlyVerdict(False, refused.reason, tuple(found))
    if not found:
        return ReadOnlyVerdict(False, "no command found")
    return ReadOnlyVerdict(True, "", tuple(found))


def is_read_only(command: str) -> bool:
    """True when `judge_command` accepts the command."""
    return judge_command(command).read_only


# --- walking the parse tree ------------------------------------------------------------------


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def _walk_statement(node: Node, found: list[tuple[str, ...]]) -> None:
    kind = node.type
    if kind in ("program", "list", "pipeline", "subshell", "compound_statement"):
        for child in node.children:
            if not child.is_named:
                if child.type == "&":
                    raise _Refused("background jobs (&) are not allowed")
                continue  # ; && || | |& ( ) { } and newlines
            _walk_statement(child, found)
    elif kind == "negated_command":
        for child in node.named_children:
            _walk_statement(child, found)
    elif kind == "redirected_statement":
        for child in node.named_children:
            if child.type in _REDIRECT_NODES:
                _check_redirect(child, found)
            else:
                _walk_statement(child, found)
    elif kind == "command":
        argv = _command_argv(node, found)
        found.append(tuple(argv))
        reason = check_argv(argv)
        if reason:
            raise _Refused(reason)
    elif kind == "test_command":
        _check_test_command(node)
        found.append(("[",))
    elif kind == "comment":
        return
    elif kind == "variable_assignment" or kind == "variable_assignments":
        raise _Refused("setting shell variables is not allowed")
    else:
        readable = kind.replace("_", " ")
        raise _Refused(f"shell construct not allowed here: {readable}")


def _command_argv(node: Node, found: list[tuple[str, ...]]) -> list[str]:
    argv: list[str] = []
    for child in node.children:
        kind = child.type
        if kind == "command_name":
            name_nodes = child.named_children or [child]
            name = "".join(_word_value(n) for n in name_nodes)
            if "/" in name:
                raise _Refused("commands must be named without a path")
            argv.append(name)
        elif kind == "variable_assignment":
            raise _Refused("environment assignments before a command are not allowed")
        elif kind in _REDIRECT_NODES:
            _check_redirect(child, found)
        elif kind == "comment":
            continue
        else:
            argv.append(_word_value(child))
    if not argv or not argv[0]:
        raise _Refused("the command has no name")
    return argv


def _check_redirect(node: Node, found: list[tuple[str, ...]]) -> None:
    if node.type == "herestring_redirect":
        for child in node.named_children:
            _word_value(child)
        return
    if node.type == "heredoc_redirect":
        for child in node.named_children:
            if child.type in ("heredoc_start", "heredoc_end"):
                continue
            if child.type == "heredoc_body":
                if any(c.type != "heredoc_content" for c in child.named_children):
                    raise _Refused("expansions inside a here-document are not allowed")
            elif child.type in _REDIRECT_NODES:
                _check_redirect(child, found)
            else:
                _walk_statement(child, found)  # the rest of the line after `<<EOF`
        return
    operator = next((c.type for c in node.children if not c.is_named), "")
    targets = [c for c in node.named_children if c.type != "file_descriptor"]
    if operator in (">&-", "<&-"):
        return
    if operator in ("<&", ">&") and targets and targets[0].type == "number":
        return  # duplicating a descriptor (2>&1) writes nothing new
    destination = _word_value(targets[0]) if targets else ""
    if operator in ("<", "<<<"):
        return
    if operator in (">", ">>", ">|", "&>", "&>>", ">&", "<&"):
        if destination == "/dev/null":
            return
        raise _Refused("output redirection to a file would write to disk")
    raise _Refused(f"redirection {operator or '?'} is not allowed")


def _check_test_command(node: Node) -> None:
    stack = list(node.named_children)
    while stack:
        current = stack.pop()
        if current.type in _EXPANSION_NODES:
            raise _Refused("expansions are not allowed")
        if current.type in ("word", "string", "raw_string", "concatenation"):
            _word_value(current)
            continue
        stack.extend(current.named_children)


# --- words -----------------------------------------------------------------------------------


def _word_value(node: Node) -> str:
    """The literal value of a shell word; refuses anything the shell would expand."""
    kind = node.type
    if kind in ("word", "number"):
        return _unquoted(node)
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "string":
        out = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type == "string_content":
                out.append(_double_quoted(_text(child)))
            else:
                raise _Refused("`$` expansion and substitution are not allowed")
        return "".join(out)
    if kind == "concatenation":
        return "".join(_word_value(child) for child in node.children)
    if kind in _EXPANSION_NODES or kind == "$":
        raise _Refused("`$` expansion and substitution are not allowed")
    raise _Refused(f"unsupported shell word: {kind.replace('_', ' ')}")


def _unquoted(node: Node) -> str:
    text = _text(node)
    out = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 < len(text) and text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        if char in "*?[":
            raise _Refused("unquoted glob patterns are not allowed (quote them)")
        if char in "$`":
            raise _Refused("`$` expansion and substitution are not allowed")
        if char == "{":
            whole = (
                _text(node.parent) if node.parent and node.parent.type == "concatenation" else text
            )
            if _BRACE_EXPANSION.search(whole):
                raise _Refused("brace expansion is not allowed (quote the braces)")
        out.append(char)
        i += 1
    return "".join(out)


def _double_quoted(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        if char in "$`":
            raise _Refused("`$` expansion and substitution are not allowed")
        out.append(char)
        i += 1
    return "".join(out)


# --- the allowlist ---------------------------------------------------------------------------

Validator = Callable[[list[str]], "str | None"]


def check_argv(argv: Sequence[str]) -> str | None:
    """Why this simple command is not read-only, or None when it is allowed."""
    name, args = argv[0], list(argv[1:])
    if name in PLAIN_READ_ONLY:
        return None
    validator = VALIDATORS.get(name)
    if validator is None:
        return f"`{name}` is not on the read-only list"
    return validator(args)


def _split_at_double_dash(args: list[str]) -> tuple[list[str], list[str]]:
    if "--" in args:
        index = args.index("--")
        return args[:index], args[index + 1 :]
    return args, []


def _any_long(args: Sequence[str], names: Sequence[str]) -> str | None:
    """The first argument that is one of the long options `names` (with or without `=`)."""
    for arg in args:
        for name in names:
            if arg == name or arg.startswith(name + "="):
                return name
    return None


def _short_letters(arg: str) -> str:
    """The letters of a short-option cluster (`-rnk2` → `rnk2`), or '' for anything else."""
    if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
        return arg[1:]
    return ""


def _allow_any(_args: list[str]) -> str | None:
    return None


def _refuse_flags(command: str, long: dict[str, str], short: dict[str, str] | None = None):
    """For tools with many harmless options: refuse every word that is, or abbreviates, one of
    the `long` options, and every short cluster holding one of the `short` letters (each maps
    to what the option does).

    Every word is checked wherever it stands, so neither an option value nor `--` hides one.
    """
    letters = short or {}

    def validate(args: list[str]) -> str | None:
        for arg in args:
            danger = dangerous_prefix(arg, long)
            if danger:
                return f"{command} {danger}"
            for letter in _short_letters(arg):
                if letter in letters:
                    return f"{command} -{letter} {letters[letter]}"
        return None

    return validate


def _with_table(spec: OptionTable, then: Callable[[ParsedArgs], str | None] | None = None):
    """A validator that parses with `spec` (see bash_options) and then runs `then`."""

    def validate(args: list[str]) -> str | None:
        try:
            parsed = parse_args(args, spec)
        except OptionRefused as refused:
            return refused.reason
        return then(parsed) if then is not None else None

    return validate


# sed -----------------------------------------------------------------------------------------

SED_OPTIONS = table(
    "sed",
    flags="nErsuzb",
    valued="el",
    long_flags=(
        "quiet",
        "silent",
        "regexp-extended",
        "separate",
        "unbuffered",
        "null-data",
        "zero-terminated",
        "posix",
        "debug",
        "sandbox",
        "follow-symlinks",
        "binary",
        "help",
        "version",
    ),
    long_valued=("expression", "line-length"),
    refused={
        "-i": (OPTIONAL, "sed -i edits files in place"),
        "--in-place": (OPTIONAL, "sed --in-place edits files in place"),
        "-f": (REQUIRED, "sed -f reads a script that cannot be checked"),
        "--file": (REQUIRED, "sed --file reads a script that cannot be checked"),
    },
)


def _sed_scripts(parsed: ParsedArgs) -> str | None:
    scripts = parsed.values("-e", "--expression")
    if not scripts:
        if parsed.has("--help", "--version"):
            return None
        if not parsed.operands:
            return "sed needs a script"
        scripts = [parsed.operands[0]]
    for script in scripts:
        reason = sed_script_refusal(script)
        if reason:
            return reason
    return None


_check_sed = _with_table(SED_OPTIONS, _sed_scripts)


def sed_script_refusal(script: str) -> str | None:
    """Why a sed script could write or execute (w/W/e commands, s///w or s///e), else None."""
    i, n = 0, len(script)

    def skip_regex(start: int, delim: str) -> int:
        k = start
        while k < n and script[k] != delim:
            k += 2 if script[k] == "\\" else 1
        if k >= n:
            raise _Refused("the sed script has an unterminated expression")
        return k + 1

    def skip_address(k: int) -> int:
        if k < n and script[k] == "\\" and k + 1 < n:
            return skip_regex(k + 2, script[k + 1])
        if k < n and script[k] == "/":
            k = skip_regex(k + 1, "/")
        else:
            while k < n and (script[k].isdigit() or script[k] in "$~+"):
                k += 1
        while k < n and script[k] in "IM":  # regex modifiers on an address
            k += 1
        return k

    def to_end_of_command(k: int) -> int:
        while k < n and script[k] not in ";\n}":
            k += 1
        return k

    try:
        while i < n:
            if script[i] in " \t\n;":
                i += 1
                continue
            i = skip_address(i)
            while i < n and script[i] in " \t":
                i += 1
            if i < n and script[i] == ",":
                i = skip_address(i + 1)
            while i < n and script[i] in " \t!":
                i += 1
            if i >= n:
                break
            command = script[i]
            i += 1
            if command in "{}":
                continue
            if command == "#":
                while i < n and script[i] != "\n":
                    i += 1
            elif command in "wWe":
                return f"sed command `{command}` writes files or runs programs"
            elif command in "sy":
                if i >= n or script[i] in "\n\\":
                    return "the sed script could not be read"
                delim = script[i]
                i = skip_regex(i + 1, delim)
                i = skip_regex(i, delim)
                start = i
                i = to_end_of_command(i)
                modifiers = script[start:i]
                if command == "s" and ("w" in modifiers or "e" in modifiers):
                    return "sed s///w and s///e write files or run programs"
            elif command in "aic":
                while i < n and not (script[i] == "\n" and script[i - 1] != "\\"):
                    i += 1
            elif command in ":btTrRvFzlLqQ=dDgGhHnNpPx":
                i = to_end_of_command(i)
            else:
                return f"unknown sed command `{command}`"
    except _Refused as refused:
        return refused.reason
    return None


# other flag-checked tools ---------------------------------------------------------------------

SORT_OPTIONS = table(
    "sort",
    flags="bdfgiMhnRrVcCmsuz",
    valued="kSt",
    long_flags=(
        "ignore-leading-blanks",
        "dictionary-order",
        "ignore-case",
        "general-numeric-sort",
        "ignore-nonprinting",
        "month-sort",
        "human-numeric-sort",
        "numeric-sort",
        "random-sort",
        "reverse",
        "version-sort",
        "debug",
        "merge",
        "stable",
        "unique",
        "zero-terminated",
        "help",
        "version",
    ),
    long_optional=("check",),
    long_valued=(
        "random-source",
        "sort",
        "batch-size",
        "files0-from",
        "key",
        "buffer-size",
        "field-separator",
        "parallel",
    ),
    refused={
        "-o": (REQUIRED, "sort -o writes a file"),
        "--output": (REQUIRED, "sort --output writes a file"),
        "--compress-program": (REQUIRED, "sort --compress-program runs a program"),
        "-T": (REQUIRED, "sort -T writes temporary files into a folder"),
        "--temporary-directory": (
            REQUIRED,
            "sort --temporary-directory writes temporary files into a folder",
        ),
    },
)
_check_sort = _with_table(SORT_OPTIONS)


_FIND_FORBIDDEN = frozenset(
    {
        "-delete",
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-fls",
    }
)


def _check_find(args: list[str]) -> str | None:
    for arg in args:
        if arg in _FIND_FORBIDDEN:
            return f"find {arg} can change files or run programs"
    return None


# xargs reads its options up to the first word that is not one: that word starts the command.
XARGS_OPTIONS = table(
    "xargs",
    flags="0rtx",
    valued="adEILnPs",
    optional="eil",
    long_flags=("null", "no-run-if-empty", "verbose", "exit", "show-limits", "help", "version"),
    long_optional=("eof", "replace", "max-lines"),
    long_valued=("arg-file", "delimiter", "max-args", "max-procs", "max-chars"),
    refused={
        "-o": (NONE, "xargs option -o hands the terminal to the command"),
        "--open-tty": (NONE, "xargs option --open-tty hands the terminal to the command"),
        "-p": (NONE, "xargs option -p prompts at the terminal"),
        "--interactive": (NONE, "xargs option --interactive prompts at the terminal"),
        "--process-slot-var": (REQUIRED, "xargs option --process-slot-var sets variables"),
    },
    permute=False,
)


def _xargs_target(parsed: ParsedArgs) -> str | None:
    target = parsed.operands
    if not target:
        return None  # runs echo
    if target[0] not in XARGS_TARGETS:
        return f"xargs may only run simple reading tools, not `{target[0]}`"
    return check_argv(target)


_check_xargs = _with_table(XARGS_OPTIONS, _xargs_target)

DATE_OPTIONS = table(
    "date",
    flags="Ru",
    valued="dfr",
    optional="I",
    long_flags=("debug", "resolution", "rfc-email", "universal", "utc", "help", "version"),
    long_optional=("iso-8601",),
    long_valued=("date", "file", "rfc-3339", "reference"),
    refused={
        "-s": (REQUIRED, "date -s changes the clock"),
        "--set": (REQUIRED, "date --set changes the clock"),
    },
)


def _date_operands(parsed: ParsedArgs) -> str | None:
    if any(not word.startswith("+") for word in parsed.operands):
        return "date with a bare argument sets the clock"
    return None


_check_date = _with_table(DATE_OPTIONS, _date_operands)


_HOSTNAME_FLAGS = frozenset(
    """-f --fqdn --long -s --short -d --domain -i --ip-address -I --all-ip-addresses -a --alias
    -A --all-fqdns -y --yp --nis -V --version -h --help""".split()
)


def _check_hostname(args: list[str]) -> str | None:
    for arg in args:
        if arg not in _HOSTNAME_FLAGS:
            return "hostname may only print the name"
    return None


_DOCKER_READ = frozenset(
    {"ps", "images", "logs", "inspect", "version", "info", "top", "port", "history", "diff"}
)
_DOCKER_GROUP_READ = {
    "image": {"ls", "list", "inspect", "history"},
    "container": {"ls", "list", "inspect", "logs", "top", "port", "diff"},
    "network": {"ls", "list", "inspect"},
    "volume": {"ls", "list", "inspect"},
    "system": {"df", "info"},
}


def _check_docker(args: list[str]) -> str | None:
    if not args or args[0].startswith("-"):
        return None if args in ([], ["--version"], ["-v"]) else "docker options are not allowed"
    sub = args[0]
    if sub in _DOCKER_READ:
        return None
    if sub == "stats" and "--no-stream" in args:
        return None
    group = _DOCKER_GROUP_READ.get(sub)
    if group is not None and len(args) > 1 and args[1] in group:
        return None
    return f"docker {sub} can change things"


_GH_READ = {
    "pr": {"view", "list", "diff", "checks", "status"},
    "issue": {"view", "list", "status"},
    "repo": {"view", "list"},
    "run": {"view", "list"},
    "release": {"view", "list"},
    "workflow": {"view", "list"},
    "auth": {"status"},
}


def _check_gh(args: list[str]) -> str | None:
    for arg in args:
        if arg == "--web" or arg.startswith("--web=") or "w" in _short_letters(arg):
            return "gh --web opens a browser"
        if arg == "--show-token" or arg.startswith("--show-token="):
            return "gh --show-token prints a credential"
    if args[:2] == ["auth", "status"] and any("t" in _short_letters(a) for a in args):
        return "gh auth status -t prints a credential"
    if args == ["status"] or args in (["--version"], []):
        return None
    if len(args) >= 2 and args[1] in _GH_READ.get(args[0], set()):
        return None
    return f"gh {' '.join(args[:2])} is not a read-only gh command"


def _check_jq(args: list[str]) -> str | None:
    flags, after = _split_at_double_dash(args)
    bad = _any_long(flags, ("--from-file", "--rawfile", "--slurpfile", "--library-path"))
    if bad:
        return f"jq {bad} is not allowed"
    filters: list[str] = []
    i = 0
    while i < len(flags):
        arg = flags[i]
        letters = _short_letters(arg)
        if letters and ("f" in letters or "L" in letters):
            return "jq -f and -L are not allowed"
        if arg in ("--arg", "--argjson"):
            i += 3
            continue
        if arg in ("--indent",):
            i += 2
            continue
        if not arg.startswith("-") and not filters:
            filters.append(arg)
        i += 1
    if not filters and after:
        filters.append(after[0])
    for text in filters:
        if re.search(r"\$ENV\b|\benv\b|\b(import|include)\b|\$__loc__|\binput_filename\b", text):
            return "the jq filter reads the environment or loads modules"
    return None


UNIQ_OPTIONS = table(
    "uniq",
    flags="cdDuiz",
    valued="fsw",
    long_flags=("count", "repeated", "unique", "ignore-case", "zero-terminated", "help", "version"),
    long_optional=("all-repeated", "group"),
    long_valued=("skip-fields", "skip-chars", "check-chars"),
)


def _uniq_operands(parsed: ParsedArgs) -> str | None:
    if len(parsed.operands) > 1:
        return "uniq may take flags and one input file (a second file name would be overwritten)"
    return None


_check_uniq = _with_table(UNIQ_OPTIONS, _uniq_operands)

FILE_OPTIONS = table(
    "file",
    flags="bcdEhiklLNn0rszZ",
    valued="eFfmP",
    long_flags=(
        "brief",
        "checking-printout",
        "extension",
        "no-dereference",
        "mime",
        "mime-type",
        "mime-encoding",
        "keep-going",
        "list",
        "dereference",
        "no-pad",
        "no-buffer",
        "print0",
        "raw",
        "special-files",
        "uncompress",
        "uncompress-noreport",
        "apple",
        "help",
        "version",
    ),
    long_valued=("exclude", "exclude-quiet", "separator", "files-from", "magic-file", "parameter"),
    refused={
        "-C": (NONE, "file -C writes a compiled magic file"),
        "--compile": (NONE, "file --compile writes a compiled magic file"),
        "-p": (NONE, "file -p changes the files' access times back"),
        "--preserve-date": (NONE, "file --preserve-date changes the files' access times back"),
        "-S": (NONE, "file -S turns off its sandbox"),
        "--no-sandbox": (NONE, "file --no-sandbox turns off its sandbox"),
    },
)
_check_file = _with_table(FILE_OPTIONS)

BASE64_OPTIONS = table(
    "base64",
    flags="di",
    valued="w",
    long_flags=("decode", "ignore-garbage", "help", "version"),
    long_valued=("wrap",),
    refused={
        "-o": (REQUIRED, "base64 -o writes a file"),
        "--output": (REQUIRED, "base64 --output writes a file"),
    },
)
_check_base64 = _with_table(BASE64_OPTIONS)


def _exact(*shapes: tuple[str, ...]) -> Validator:
    def validate(args: list[str]) -> str | None:
        return None if tuple(args) in shapes else "only an exact, harmless form is allowed"

    return validate


def _check_history(args: list[str]) -> str | None:
    if not args or (len(args) == 1 and args[0].isdigit()):
        return None
    return "history may only list entries"


def _check_cd(args: list[str]) -> str | None:
    return None if len(args) <= 1 else "cd takes at most one folder"


def _check_pwd(args: list[str]) -> str | None:
    return None if all(a in ("-L", "-P") for a in args) else "pwd takes no arguments"


def _check_echo(args: list[str]) -> str | None:
    # Expansions were already refused while reading the words, so echo just prints.
    return None


VALIDATORS: dict[str, Validator] = {
    "git": check_git,
    "grep": _allow_any,
    "egrep": _allow_any,
    "fgrep": _allow_any,
    "rg": _refuse_flags(
        "rg", {"pre": "runs a program on every file", "hostname-bin": "runs a program"}
    ),
    "sed": _check_sed,
    "sort": _check_sort,
    "file": _check_file,
    "find": _check_find,
    "xargs": _check_xargs,
    "tree": _refuse_flags(
        "tree", {"output": "writes a file"}, {"o": "writes a file", "R": "writes files"}
    ),
    "date": _check_date,
    "hostname": _check_hostname,
    "ps": _allow_any,
    "netstat": _allow_any,
    "lsof": _allow_any,
    "pgrep": _allow_any,
    "base64": _check_base64,
    "md5sum": _allow_any,
    "sha1sum": _allow_any,
    "sha224sum": _allow_any,
    "sha256sum": _allow_any,
    "sha384sum": _allow_any,
    "sha512sum": _allow_any,
    "shasum": _allow_any,
    "b2sum": _allow_any,
    "cksum": _allow_any,
    "fd": _refuse_flags(
        "fd",
        {"exec": "runs programs", "exec-batch": "runs programs"},
        {"x": "runs programs", "X": "runs programs"},
    ),
    "docker": _check_docker,
    "gh": _check_gh,
    "echo": _check_echo,
    "pwd": _check_pwd,
    "whoami": _exact(()),
    "ls": _allow_any,
    "cd": _check_cd,
    "jq": _check_jq,
    "uniq": _check_uniq,
    "history": _check_history,
    "node": _exact(("-v",), ("--version",)),
    "python": _exact(("--version",), ("-V",)),
    "python3": _exact(("--version",), ("-V",)),
}
