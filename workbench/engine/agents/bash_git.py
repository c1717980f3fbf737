"""Which git command lines only read (part of the read-only Bash judge).

Two kinds of check, chosen per subcommand:

- Subcommands with a handful of options that can also write (branch, tag, config, grep,
  ls-remote, ...) are parsed against a full table of their options, the way git's
  parse-options reads them; an option not in the table, or abbreviated, is refused.
- Subcommands that take the large revision and diff option sets (log, show, diff, ...) are
  checked word by word: any word that is, or could abbreviate, an option that writes or runs
  a program (`--output`, `--ext-diff`, ...) is refused wherever it stands, even after `--`,
  since an option that takes a value can swallow the `--` (`git grep -e -- --open-files...`).

Global options that would point git at another repository's settings (`--git-dir`,
`--work-tree`, `-c`) are refused: a repository's own config can name programs to run.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from workbench.engine.agents.bash_options import (
    NONE,
    OPTIONAL,
    REQUIRED,
    OptionRefused,
    OptionTable,
    dangerous_prefix,
    parse_args,
    table,
)

Validator = Callable[[list[str]], "str | None"]

# Subcommands that only read, whatever their options (after the word-by-word check below).
GIT_READ_ONLY_SUBCOMMANDS = frozenset(
    """status log show diff blame annotate shortlog describe rev-parse rev-list ls-files ls-tree
    cat-file show-ref for-each-ref merge-base name-rev count-objects diff-tree diff-files
    diff-index whatchanged check-ignore check-attr var version show-branch cherry range-diff
    verify-commit verify-tag""".split()
)

# Long options of read-only subcommands that write a file, run a program or open a viewer.
GIT_DANGEROUS_LONG = {
    "output": "writes a file",
    "ext-diff": "runs an external diff program",
    "open-files-in-pager": "runs a program on the matching files",
    "upload-pack": "runs a program",
    "receive-pack": "runs a program",
    "exec": "runs a program",
    "help": "opens a manual viewer",
}

_GLOBAL_FLAGS = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-replace-objects",
    }
)
_GLOBAL_REFUSED = {
    "--git-dir": "git --git-dir could use a repository whose settings run programs",
    "--work-tree": "git --work-tree could use a repository whose settings run programs",
    "-c": "git option -c could set programs to run",
    "--config-env": "git option --config-env could set programs to run",
    "--exec-path": "git --exec-path could run other programs",
}
_REMOTE_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")


def check_git(args: list[str]) -> str | None:
    """Why `git <args>` is not read-only, or None."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        name = arg.partition("=")[0]
        if arg in _GLOBAL_FLAGS:
            i += 1
        elif arg == "-C":
            i += 2
        elif name == "--namespace":
            i += 1 if "=" in arg else 2
        elif arg == "--version" and i == len(args) - 1:
            return None
        elif name in _GLOBAL_REFUSED:
            return _GLOBAL_REFUSED[name]
        else:
            return f"git option {name} is not allowed"
    if i >= len(args):
        return None  # plain `git` prints help
    sub, rest = args[i], args[i + 1 :]
    for word in rest:
        danger = dangerous_prefix(word, GIT_DANGEROUS_LONG)
        if danger:
            return f"git {sub} {danger}"
    special = _GIT_SPECIAL.get(sub)
    if special is not None:
        return special(rest)
    if sub in GIT_READ_ONLY_SUBCOMMANDS:
        return None
    return f"git {sub} can change the repository"


def _parsed(args: list[str], spec: OptionTable):
    try:
        return parse_args(args, spec), None
    except OptionRefused as refused:
        return None, refused.reason


# branch and tag -----------------------------------------------------------------------------

_FILTERS = ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at")


def _changes(what: str) -> str:
    return f"git {what} changes the repository"


BRANCH_OPTIONS = table(
    "git branch",
    flags="vqrali",
    long_flags=(
        "verbose",
        "quiet",
        "no-color",
        "remotes",
        "no-abbrev",
        "all",
        "list",
        "show-current",
        "no-column",
        "ignore-case",
        "omit-empty",
    ),
    long_optional=("color", "abbrev", "column"),
    long_valued=("sort", "points-at", "format"),
    long_lastarg=("contains", "no-contains", "merged", "no-merged"),
    refused={
        "-t": (OPTIONAL, _changes("branch -t")),
        "--track": (OPTIONAL, _changes("branch --track")),
        "--no-track": (NONE, _changes("branch --no-track")),
        "-u": (REQUIRED, _changes("branch -u")),
        "--set-upstream-to": (REQUIRED, _changes("branch --set-upstream-to")),
        "--unset-upstream": (NONE, _changes("branch --unset-upstream")),
        "-d": (NONE, _changes("branch -d")),
        "--delete": (NONE, _changes("branch --delete")),
        "-D": (NONE, _changes("branch -D")),
        "-m": (NONE, _changes("branch -m")),
        "--move": (NONE, _changes("branch --move")),
        "-M": (NONE, _changes("branch -M")),
        "-c": (NONE, _changes("branch -c")),
        "--copy": (NONE, _changes("branch --copy")),
        "-C": (NONE, _changes("branch -C")),
        "--create-reflog": (NONE, _changes("branch --create-reflog")),
        "--edit-description": (NONE, _changes("branch --edit-description")),
        "-f": (NONE, _changes("branch -f")),
        "--force": (NONE, _changes("branch --force")),
        "--recurse-submodules": (NONE, _changes("branch --recurse-submodules")),
    },
)

TAG_OPTIONS = table(
    "git tag",
    flags="liv",
    optional="n",
    long_flags=("list", "no-column", "ignore-case", "verify", "omit-empty", "no-color"),
    long_optional=("column", "color"),
    long_valued=("sort", "points-at", "format"),
    long_lastarg=("contains", "no-contains", "merged", "no-merged"),
    refused={
        "-d": (NONE, _changes("tag -d")),
        "--delete": (NONE, _changes("tag --delete")),
        "-a": (NONE, _changes("tag -a")),
        "--annotate": (NONE, _changes("tag --annotate")),
        "-m": (REQUIRED, _changes("tag -m")),
        "--message": (REQUIRED, _changes("tag --message")),
        "-F": (REQUIRED, _changes("tag -F")),
        "--file": (REQUIRED, _changes("tag --file")),
        "-e": (NONE, _changes("tag -e")),
        "--edit": (NONE, _changes("tag --edit")),
        "-s": (NONE, _changes("tag -s")),
        "--sign": (NONE, _changes("tag --sign")),
        "--cleanup": (REQUIRED, _changes("tag --cleanup")),
        "-u": (REQUIRED, _changes("tag -u")),
        "--local-user": (REQUIRED, _changes("tag --local-user")),
        "-f": (NONE, _changes("tag -f")),
        "--force": (NONE, _changes("tag --force")),
        "--create-reflog": (NONE, _changes("tag --create-reflog")),
        "--trailer": (REQUIRED, _changes("tag --trailer")),
    },
)


def _check_git_branch(args: list[str]) -> str | None:
    parsed, reason = _parsed(args, BRANCH_OPTIONS)
    if parsed is None:
        return reason
    listing = parsed.has("-l", "--list", *_FILTERS)
    if parsed.operands and not listing:
        return "git branch with a name creates a branch"
    return None


def _check_git_tag(args: list[str]) -> str | None:
    parsed, reason = _parsed(args, TAG_OPTIONS)
    if parsed is None:
        return reason
    listing = parsed.has("-l", "--list", "-n", "-v", "--verify", *_FILTERS)
    if parsed.operands and not listing:
        return "git tag with a name creates a tag"
    return None


# config -------------------------------------------------------------------------------------

_CONFIG_READ_MODES = (
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--get-color",
    "--get-colorbool",
    "--list",
    "-l",
)
_CONFIG_WRITE_WORDS = frozenset({"set", "unset", "rename-section", "remove-section", "edit"})
_CONFIG_REFUSAL = "git config may only read settings"

CONFIG_OPTIONS = table(
    "git config",
    flags="lz",
    valued="ft",
    long_flags=(
        *(m[2:] for m in _CONFIG_READ_MODES if m.startswith("--")),
        "global",
        "system",
        "local",
        "worktree",
        "fixed-value",
        "bool",
        "int",
        "bool-or-int",
        "bool-or-str",
        "path",
        "expiry-date",
        "null",
        "name-only",
        "includes",
        "no-includes",
        "show-origin",
        "show-scope",
        "all",
        "regexp",
        "show-names",
    ),
    long_valued=("file", "blob", "type", "default", "value", "url"),
    refused={
        **{
            f"--{m}": (NONE, _CONFIG_REFUSAL)
            for m in (
                "replace-all",
                "add",
                "unset",
                "unset-all",
                "rename-section",
                "remove-section",
                "edit",
            )
        },
        "-e": (NONE, _CONFIG_REFUSAL),
        "--comment": (REQUIRED, _CONFIG_REFUSAL),
    },
)


def _check_git_config(args: list[str]) -> str | None:
    parsed, reason = _parsed(args, CONFIG_OPTIONS)
    if parsed is None:
        return reason
    if any(word in _CONFIG_WRITE_WORDS for word in parsed.operands):
        return _CONFIG_REFUSAL
    if parsed.has(*_CONFIG_READ_MODES):
        return None
    if parsed.operands and parsed.operands[0] in ("get", "list"):
        return None
    return "git config may only read settings (use --get or --list)"


# grep ---------------------------------------------------------------------------------------

GREP_OPTIONS = table(
    "git grep",
    flags="viwaIrEGFPnhHlLzocpWq",
    valued="CBAfem",
    numbers=True,
    long_flags=(
        "cached",
        "no-index",
        "untracked",
        "exclude-standard",
        "no-exclude-standard",
        "recurse-submodules",
        "invert-match",
        "ignore-case",
        "word-regexp",
        "text",
        "textconv",
        "no-textconv",
        "recursive",
        "no-recursive",
        "extended-regexp",
        "basic-regexp",
        "fixed-strings",
        "perl-regexp",
        "line-number",
        "column",
        "full-name",
        "files-with-matches",
        "name-only",
        "files-without-match",
        "null",
        "only-matching",
        "count",
        "no-color",
        "break",
        "heading",
        "show-function",
        "function-context",
        "and",
        "or",
        "not",
        "quiet",
        "all-match",
    ),
    long_optional=("color",),
    long_valued=("max-depth", "context", "before-context", "after-context", "threads", "max-count"),
    refused={
        "-O": (OPTIONAL, "git grep -O opens the files in a program"),
        "--open-files-in-pager": (OPTIONAL, "git grep --open-files-in-pager runs a program"),
    },
)


def _check_git_grep(args: list[str]) -> str | None:
    _parsed_args, reason = _parsed(args, GREP_OPTIONS)
    return reason


# ls-remote ----------------------------------------------------------------------------------

LS_REMOTE_OPTIONS = table(
    "git ls-remote",
    flags="qthb",
    valued="o",
    long_flags=("quiet", "tags", "heads", "branches", "refs", "get-url", "exit-code", "symref"),
    long_valued=("sort", "server-option"),
    refused={
        "--upload-pack": (REQUIRED, "git ls-remote --upload-pack runs a program"),
        "--exec": (REQUIRED, "git ls-remote --exec runs a program"),
    },
)


def _check_git_ls_remote(args: list[str]) -> str | None:
    parsed, reason = _parsed(args, LS_REMOTE_OPTIONS)
    if parsed is None:
        return reason
    if parsed.operands and _REMOTE_HELPER.match(parsed.operands[0]):
        return "git ls-remote through a remote helper (`name::`) can run programs"
    return None


# remote, stash, worktree, reflog --------------------------------------------------------------


def _check_git_remote(args: list[str]) -> str | None:
    positional = [a for a in args if not a.startswith("-")]
    flags = [a for a in args if a.startswith("-")]
    if any(f not in ("-v", "--verbose") for f in flags):
        return "git remote may only list remotes"
    if not positional or positional[0] in ("show", "get-url"):
        return None
    return f"git remote {positional[0]} changes the repository"


def _first_word_in(allowed: tuple[str, ...], what: str) -> Validator:
    """git stash / worktree: the action must come first (options before it mean `push`)."""

    def validate(args: list[str]) -> str | None:
        if not args:
            return f"{what} needs a read-only action"
        if args[0] in allowed:
            return None
        return f"{what} {args[0]} can change things"

    return validate


def _check_git_reflog(args: list[str]) -> str | None:
    for word in args:
        if word in ("expire", "delete", "drop"):
            return f"git reflog {word} changes the repository"
    return None


_GIT_SPECIAL: dict[str, Validator] = {
    "branch": _check_git_branch,
    "tag": _check_git_tag,
    "config": _check_git_config,
    "grep": _check_git_grep,
    "ls-remote": _check_git_ls_remote,
    "remote": _check_git_remote,
    "stash": _first_word_in(("list", "show"), "git stash"),
    "worktree": _first_word_in(("list",), "git worktree"),
    "reflog": _check_git_reflog,
}
