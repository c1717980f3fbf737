"""Is a Bash command read-only? Judged on a real parse of the command line (spec 02 §4).

The extraction and dream agents may run shell commands only when they cannot change anything.
The command line is parsed with tree-sitter's Bash grammar, so quoting, pipes, lists, subshells
and redirections are understood rather than pattern-matched. Every simple command must then be
on an allowlist: plain read-only tools, tools whose flags are checked (git, sed, sort, find,
xargs, ...), and a few that must match an exact shape (`node -v`, `history 20`, ...).

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


def _refuse_flags(*long: str, short: str = "", what: str) -> Validator:
    """A validator refusing the given long options and short letters (in any cluster)."""

    def validate(args: list[str]) -> str | None:
        flags, _ = _split_at_double_dash(args)
        if _any_long(flags, long):
            return what
        for arg in flags:
            if set(_short_letters(arg)) & set(short):
                return what
        return None

    return validate


# git -----------------------------------------------------------------------------------------

GIT_READ_ONLY_SUBCOMMANDS = frozenset(
    """status log show diff blame annotate shortlog describe rev-parse rev-list ls-files ls-tree
    cat-file grep show-ref for-each-ref merge-base name-rev count-objects diff-tree diff-files
    diff-index whatchanged check-ignore check-attr var version show-branch cherry range-diff
    verify-commit verify-tag ls-remote""".split()
)
# Options that make an otherwise read-only git command write a file or run a program.
GIT_DANGEROUS_OPTIONS = (
    "--output",
    "--ext-diff",
    "--open-files-in-pager",
    "--upload-pack",
    "--receive-pack",
    "--exec",
)
_GIT_GLOBAL_FLAGS = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"}
)
_GIT_GLOBAL_WITH_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})


def _check_git(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg in _GIT_GLOBAL_FLAGS:
            i += 1
        elif arg in _GIT_GLOBAL_WITH_VALUE:
            i += 2
        elif arg.split("=", 1)[0] in _GIT_GLOBAL_WITH_VALUE:
            i += 1
        elif arg == "--version":
            return None
        else:
            return f"git option {arg.split('=', 1)[0]} is not allowed"
    if i >= len(args):
        return None  # plain `git` prints help
    sub, rest = args[i], args[i + 1 :]
    flags, _ = _split_at_double_dash(rest)
    bad = _any_long(flags, GIT_DANGEROUS_OPTIONS)
    if bad:
        return f"git {sub} {bad} can write files or run programs"
    if sub == "grep" and any("O" in _short_letters(a) for a in flags):
        return "git grep -O runs a program"
    if sub in GIT_READ_ONLY_SUBCOMMANDS:
        return None
    special = _GIT_SPECIAL.get(sub)
    if special is not None:
        return special(rest)
    return f"git {sub} can change the repository"


# The ref filters `git branch` and `git tag` share: each means listing, and each takes a value.
_REF_FILTERS = ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
_LIST_MODE = ("--list", *_REF_FILTERS)
_TAKES_VALUE = (*_REF_FILTERS, "--sort", "--format")


def _git_listing(mutating_long: Sequence[str], mutating_short: str, what: str) -> Validator:
    """git branch / tag: allowed only while they list, never create, move or delete."""

    def validate(args: list[str]) -> str | None:
        flags, after = _split_at_double_dash(args)
        positional = list(after)
        listing = False
        i = 0
        while i < len(flags):
            arg = flags[i]
            name = arg.split("=", 1)[0]
            if _any_long([arg], mutating_long) or set(_short_letters(arg)) & set(mutating_short):
                return f"git {what} {arg} changes the repository"
            if name in _LIST_MODE or set(_short_letters(arg)) & {"l"}:
                listing = True
            if name in _TAKES_VALUE and "=" not in arg:
                i += 2
                continue
            if not arg.startswith("-"):
                positional.append(arg)
            i += 1
        if positional and not listing:
            return f"git {what} with a name creates a {what}"
        return None

    return validate


_check_git_branch = _git_listing(
    mutating_long=(
        "--delete",
        "--move",
        "--copy",
        "--force",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "--track",
        "--no-track",
        "--create-reflog",
        "--recurse-submodules",
    ),
    mutating_short="dDmMcCfut",
    what="branch",
)
_check_git_tag = _git_listing(
    mutating_long=("--delete", "--annotate", "--sign", "--force", "--message", "--file"),
    mutating_short="dasfmFue",
    what="tag",
)


def _check_git_remote(args: list[str]) -> str | None:
    positional = [a for a in args if not a.startswith("-")]
    flags = [a for a in args if a.startswith("-")]
    if any(f not in ("-v", "--verbose") for f in flags):
        return "git remote may only list remotes"
    if not positional or positional[0] in ("show", "get-url"):
        return None
    return f"git remote {positional[0]} changes the repository"


_GIT_CONFIG_READS = (
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--get-color",
    "--get-colorbool",
    "--list",
    "-l",
)
_GIT_CONFIG_WRITES = (
    "--add",
    "--unset",
    "--unset-all",
    "--replace-all",
    "--rename-section",
    "--remove-section",
    "--edit",
    "-e",
)


def _check_git_config(args: list[str]) -> str | None:
    if _any_long(args, _GIT_CONFIG_WRITES):
        return "git config may only read settings"
    if args and args[0] in ("get", "list"):
        return None
    if _any_long(args, _GIT_CONFIG_READS):
        return None
    return "git config may only read settings (use --get or --list)"


def _first_positional_in(allowed: Sequence[str], what: str, *, default_ok: bool) -> Validator:
    def validate(args: list[str]) -> str | None:
        positional = [a for a in args if not a.startswith("-")]
        if not positional:
            return None if default_ok else f"{what} needs a read-only action"
        if positional[0] in allowed:
            return None
        return f"{what} {positional[0]} can change things"

    return validate


def _check_git_reflog(args: list[str]) -> str | None:
    positional = [a for a in args if not a.startswith("-")]
    if positional and positional[0] in ("expire", "delete", "drop"):
        return f"git reflog {positional[0]} changes the repository"
    return None


_GIT_SPECIAL: dict[str, Validator] = {
    "branch": _check_git_branch,
    "tag": _check_git_tag,
    "remote": _check_git_remote,
    "config": _check_git_config,
    "stash": _first_positional_in(("list", "show"), "git stash", default_ok=False),
    "worktree": _first_positional_in(("list",), "git worktree", default_ok=False),
    "reflog": _check_git_reflog,
}


# sed -----------------------------------------------------------------------------------------

_SED_FLAG_LETTERS = frozenset("nErsuz")
_SED_LONG_OK = (
    "--quiet",
    "--silent",
    "--regexp-extended",
    "--separate",
    "--unbuffered",
    "--null-data",
    "--posix",
    "--debug",
    "--sandbox",
    "--line-length",
)


def _check_sed(args: list[str]) -> str | None:
    scripts: list[str] = []
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            positional.extend(args[i + 1 :])
            break
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if name == "--expression":
                if "=" in arg:
                    scripts.append(arg.split("=", 1)[1])
                    i += 1
                else:
                    if i + 1 >= len(args):
                        return "sed --expression needs a script"
                    scripts.append(args[i + 1])
                    i += 2
                continue
            if name in ("--in-place", "--file"):
                return f"sed {name} is not allowed"
            if name not in _SED_LONG_OK:
                return f"sed option {name} is not allowed"
            i += 1
            continue
        letters = _short_letters(arg)
        if not letters:
            positional.append(arg)
            i += 1
            continue
        i += 1
        for j, letter in enumerate(letters):
            if letter in _SED_FLAG_LETTERS:
                continue
            if letter in "el":
                value = letters[j + 1 :]
                if not value:
                    if i >= len(args):
                        return f"sed -{letter} needs a value"
                    value = args[i]
                    i += 1
                if letter == "e":
                    scripts.append(value)
                break
            if letter == "i":
                return "sed -i edits files in place"
            if letter == "f":
                return "sed -f reads a script that cannot be checked"
            return f"sed option -{letter} is not allowed"
    if not scripts:
        if not positional:
            return "sed needs a script"
        scripts.append(positional[0])
    for script in scripts:
        reason = sed_script_refusal(script)
        if reason:
            return reason
    return None


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


def _check_sort(args: list[str]) -> str | None:
    flags, _ = _split_at_double_dash(args)
    if _any_long(flags, ("--output", "--compress-program")):
        return "sort --output writes a file"
    for arg in flags:
        for letter in _short_letters(arg):
            if letter == "o":
                return "sort -o writes a file"
            if letter in "ktST":
                break  # the rest of the cluster is this option's value
    return None


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


_XARGS_FLAGS = frozenset({"-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x"})
_XARGS_WITH_VALUE = frozenset({"-n", "-L", "-P", "-d", "-s", "-E", "-I", "-a"})
_XARGS_LONG_WITH_VALUE = (
    "--max-args",
    "--max-lines",
    "--max-procs",
    "--delimiter",
    "--max-chars",
    "--eof",
    "--replace",
    "--arg-file",
)


def _check_xargs(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in _XARGS_FLAGS:
            i += 1
        elif arg in _XARGS_WITH_VALUE:
            i += 2
        elif arg[:2] in _XARGS_WITH_VALUE and len(arg) > 2:
            i += 1
        elif _any_long([arg], _XARGS_LONG_WITH_VALUE) and "=" in arg:
            i += 1
        else:
            return f"xargs option {arg.split('=', 1)[0]} is not allowed"
    target = args[i:]
    if not target:
        return None  # runs echo
    if target[0] not in XARGS_TARGETS:
        return f"xargs may only run simple reading tools, not `{target[0]}`"
    return check_argv(target)


def _check_date(args: list[str]) -> str | None:
    if _any_long(args, ("--set",)):
        return "date --set changes the clock"
    for arg in args:
        if "s" in _short_letters(arg) and not arg.startswith(("-I", "-d", "-r", "-f")):
            return "date -s changes the clock"
        if not arg.startswith(("-", "+")) and not _after_value_flag(args, arg):
            return "date with a bare argument sets the clock"
    return None


def _after_value_flag(args: list[str], arg: str) -> bool:
    index = args.index(arg)
    return index > 0 and args[index - 1] in ("-d", "--date", "-r", "--reference", "-f", "--file")


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
    if any(a in ("--web", "-w") for a in args):
        return "gh --web opens a browser"
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
    filters = []
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


_UNIQ_FLAGS = frozenset(
    """-c -d -D -u -i -z --count --repeated --unique --ignore-case --zero-terminated
    --all-repeated --group""".split()
)
_UNIQ_WITH_NUMBER = frozenset({"-f", "-s", "-w"})
_UNIQ_LONG_NUMBER = ("--skip-fields", "--skip-chars", "--check-chars")


def _check_uniq(args: list[str]) -> str | None:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _UNIQ_WITH_NUMBER:
            if i + 1 >= len(args) or not args[i + 1].isdigit():
                return f"uniq {arg} needs a number"
            i += 2
            continue
        name = arg.split("=", 1)[0]
        if arg in _UNIQ_FLAGS or (name in _UNIQ_LONG_NUMBER and "=" in arg):
            i += 1
            continue
        if name in ("--all-repeated", "--group") and "=" in arg:
            i += 1
            continue
        letters = _short_letters(arg)
        if letters and set(letters) <= set("cdDuiz"):
            i += 1
            continue
        if letters and letters[0] in "fsw" and letters[1:].isdigit():
            i += 1
            continue
        return "uniq may only take flags (a second file name would be overwritten)"
    return None


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
    "git": _check_git,
    "grep": _allow_any,
    "egrep": _allow_any,
    "fgrep": _allow_any,
    "rg": _refuse_flags("--pre", what="rg --pre runs a program on every file"),
    "sed": _check_sed,
    "sort": _check_sort,
    "file": _refuse_flags("--compile", short="C", what="file -C writes a magic file"),
    "find": _check_find,
    "xargs": _check_xargs,
    "tree": _refuse_flags("--output", short="oR", what="tree -o / -R write files"),
    "date": _check_date,
    "hostname": _check_hostname,
    "ps": _allow_any,
    "netstat": _allow_any,
    "lsof": _allow_any,
    "pgrep": _allow_any,
    "base64": _refuse_flags("--output", short="o", what="base64 -o writes a file"),
    "md5sum": _allow_any,
    "sha1sum": _allow_any,
    "sha224sum": _allow_any,
    "sha256sum": _allow_any,
    "sha384sum": _allow_any,
    "sha512sum": _allow_any,
    "shasum": _allow_any,
    "b2sum": _allow_any,
    "cksum": _allow_any,
    "fd": _refuse_flags("--exec", "--exec-batch", short="xX", what="fd -x runs programs"),
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
