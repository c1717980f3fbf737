"""The read-only judge against the real commands (issue 10).

Candidates are built from the judge's own allowlist: every option of every table-parsed
command (in full, abbreviated, negated, `=value` and separate-value forms) and random command
lines mixing option words, values that would write if honoured, `--` and operands. Each
candidate the judge accepts is really run, by bash, in a throwaway git repository; afterwards
the whole sandbox (work tree, .git with its config, refs and index, and the home folder) must
be exactly as before, with no new file anywhere. EDITOR, VISUAL, GIT_EDITOR and BROWSER name a
script that leaves a file behind, so a command that opens an editor or a browser is caught too.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.engine.agents import bash_git, bash_readonly
from workbench.engine.agents.bash_options import NONE, OPTIONAL, OptionTable
from workbench.engine.agents.bash_readonly import PLAIN_READ_ONLY, judge_command

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

RUN_TIMEOUT_S = 10.0
VALUES = ("PWNED", "'touch PWNED;'", "./pwn.sh", "'w PWNED'", "'1e touch PWNED'")
TEMPLATES: list[tuple[OptionTable, str]] = [
    (bash_readonly.SED_OPTIONS, "sed {opt} p notes.md"),
    (bash_readonly.SORT_OPTIONS, "sort {opt} data.txt"),
    (bash_readonly.XARGS_OPTIONS, "echo notes.md | xargs {opt} cat"),
    (bash_readonly.DATE_OPTIONS, "date {opt}"),
    (bash_readonly.FILE_OPTIONS, "file {opt} notes.md"),
    (bash_readonly.BASE64_OPTIONS, "base64 {opt} notes.md"),
    (bash_readonly.UNIQ_OPTIONS, "uniq {opt} data.txt"),
    (bash_git.BRANCH_OPTIONS, "git branch {opt}"),
    (bash_git.BRANCH_OPTIONS, "git branch {opt} newbranch"),
    (bash_git.TAG_OPTIONS, "git tag {opt} newtag"),
    (bash_git.CONFIG_OPTIONS, "git config {opt} user.name"),
    (bash_git.GREP_OPTIONS, "git grep {opt} -e word"),
    (bash_git.LS_REMOTE_OPTIONS, "git ls-remote {opt} ."),
]
REVISION_COMMANDS = ("git log", "git show", "git diff HEAD~1", "git blame notes.md", "git status")
REVISION_OPTIONS = (
    *bash_git.GIT_DANGEROUS_LONG,
    "output-indicator-new",
    "oneline",
    "stat",
    "patch",
    "format",
    "grep",
    "name-only",
    "no-ext-diff",
    "textconv",
    "porcelain",
)
SCRIPT = '#!/bin/sh\n: > "$(dirname "$0")/PWNED-by-script"\ncat\n'


# --- the sandbox ---------------------------------------------------------------------------------


def _git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


Sandbox = tuple[Path, Path, dict[str, str], dict[str, tuple[object, ...]]]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    """One repository for the module's fuzz (each check proves it still unchanged)."""
    return _make_sandbox(tmp_path_factory.mktemp("judge-sandbox"))


def _make_sandbox(root: Path) -> Sandbox:
    home, repo = root / "home", root / "repo"
    home.mkdir()
    repo.mkdir()
    script = repo / "pwn.sh"
    script.write_text(SCRIPT)
    script.chmod(0o755)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Sandbox",
        "GIT_AUTHOR_EMAIL": "sandbox@example.invalid",
        "GIT_COMMITTER_NAME": "Sandbox",
        "GIT_COMMITTER_EMAIL": "sandbox@example.invalid",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",  # `git status` would otherwise refresh the index
        "EDITOR": str(script),
        "VISUAL": str(script),
        "GIT_EDITOR": str(script),
        "BROWSER": str(script),
        "TMPDIR": str(root / "tmp"),
    }
    (root / "tmp").mkdir()
    _git(repo, env, "init", "-q", "-b", "main")
    (repo / "notes.md").write_text("word one\n--x\nsecond line\n")
    (repo / "data.txt").write_text("b 2\na 1\na 1\nc 3\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "deep.md").write_text("word deep\n")
    _git(repo, env, "add", ".")
    _git(repo, env, "commit", "-q", "-m", "first")
    (repo / "notes.md").write_text("word one\n--x\nsecond line\nthird\n")
    _git(repo, env, "commit", "-q", "-am", "second")
    _git(repo, env, "tag", "v1")
    _git(repo, env, "branch", "feature")
    _git(repo, env, "remote", "add", "origin", str(repo))
    (repo / "notes.md").write_text("word one\n--x\nsecond line\nthird\nuncommitted\n")
    refresh = {k: v for k, v in env.items() if k != "GIT_OPTIONAL_LOCKS"}
    _git(repo, refresh, "status", "--porcelain")  # the index's stat data is now current
    return root, repo, env, _snapshot(root)


def _snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under `root`: kind, permission bits and (for files) a hash of the bytes."""
    out: dict[str, tuple[object, ...]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            key = os.path.relpath(path, root)
            if stat.S_ISLNK(info.st_mode):
                out[key] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                out[key] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                out[key] = ("file", stat.S_IMODE(info.st_mode), digest)
    return out


def _run(command: str, repo: Path, env: dict[str, str]) -> None:
    process = subprocess.Popen(
        ["bash", "--noprofile", "--norc", "-c", command],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        process.wait(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class Checker:
    """Runs accepted candidates and proves the sandbox unchanged after each."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.root, self.repo, self.env, self.before = sandbox
        self.ran = 0
        self.refused = 0

    def check(self, command: str) -> None:
        if not judge_command(command).read_only:
            self.refused += 1
            return
        _run(command, self.repo, self.env)
        self.ran += 1
        after = _snapshot(self.root)
        if after != self.before:
            added = sorted(set(after) - set(self.before))
            changed = sorted(k for k in self.before if after.get(k) != self.before[k])
            pytest.fail(f"{command!r} was judged read-only but changed {changed} / added {added}")


# --- candidates --------------------------------------------------------------------------------


def _option_words(spec: OptionTable) -> list[str]:
    """Ways of writing every option the table knows, with values that would write if honoured.

    A write-capable option is tried in every prefix and form (the judge must refuse them all,
    which costs nothing to run); a harmless one in full, negated and with values, so that
    what the judge accepts really runs.
    """
    words: list[str] = []
    for name, option in spec.long.items():
        dangerous = option.refusal is not None
        prefixes = [name[:k] for k in range(1, len(name) + 1)] if dangerous else [name]
        prefixes.append(name[: max(1, len(name) - 2)])
        for prefix in sorted(set(prefixes)):
            words.append(f"--{prefix}")
            values = VALUES if dangerous or prefix != name else VALUES[:2]
            for value in values:
                words.append(f"--{prefix}={value}")
                if option.arity != NONE:
                    words.append(f"--{prefix} {value}")
        words.append(f"--no-{name}")
    for letter, option in spec.short.items():
        words.append(f"-{letter}")
        if option.arity != NONE:
            words.append(f"-{letter}PWNED")
            if option.arity != OPTIONAL:
                words.append(f"-{letter} 'touch PWNED;'")
    return words


def _table_candidates() -> list[str]:
    out: list[str] = []
    for spec, template in TEMPLATES:
        for word in _option_words(spec):
            out.append(template.format(opt=word))
    for command in REVISION_COMMANDS:
        for name in REVISION_OPTIONS:
            dangerous = name in bash_git.GIT_DANGEROUS_LONG
            for prefix in [name[:k] for k in range(1, len(name) + 1)] if dangerous else [name]:
                out.append(f"{command} --{prefix}=PWNED")
                out.append(f"{command} -- --{prefix}=PWNED")
            out.append(f"{command} --{name} PWNED")
            out.append(f"{command} --{name}")
    return sorted(set(out))


TABLE_CANDIDATES = _table_candidates()


def test_every_accepted_table_candidate_changes_nothing(sandbox) -> None:
    checker = Checker(sandbox)
    for command in TABLE_CANDIDATES:
        checker.check(command)
    # The fuzz is not empty: read-only forms really ran, and escapes were refused.
    assert checker.ran > 300 and checker.refused > 1000, (checker.ran, checker.refused)


# Random lines: a command, then words that can hide options inside values or behind `--`.
_COMMAND_HEADS = [template.split("{opt}")[0].strip() for _spec, template in TEMPLATES]
_COMMAND_HEADS += [c for c in REVISION_COMMANDS] + ["git stash", "git reflog", "rg", "find ."]
_COMMAND_HEADS += sorted(PLAIN_READ_ONLY - {"sleep"})
_WORDS = sorted(
    {
        "--",
        "-e",
        "-k",
        "-l",
        "-n",
        "-t",
        "5",
        "word",
        "notes.md",
        "data.txt",
        "list",
        "show",
        "newbranch",
        "--list",
        "--sort",
        "--contains",
        "--format",
        "--line-length",
        "--expression",
        "--key",
        "--grep",
        "--output=PWNED",
        "--outp=PWNED",
        "--upload-pack='touch PWNED;'",
        "--open-files-in-pager=./pwn.sh",
        "--set-upstream-to=origin/main",
        "-ifoo",
        "-oPWNED",
        "-O./pwn.sh",
        "-uorigin/main",
        "-delete",
        "-fprint",
        *VALUES,
    }
)


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    head=st.sampled_from(_COMMAND_HEADS),
    words=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5),
)
def test_random_lines_the_judge_accepts_change_nothing(sandbox, head: str, words: list[str]):
    Checker(sandbox).check(" ".join([head, *words]))


def test_table_candidates_cover_every_table() -> None:
    """A new table-parsed command must be added to TEMPLATES, so the fuzz covers it."""
    tables = {
        id(value)
        for module in (bash_readonly, bash_git)
        for value in vars(module).values()
        if isinstance(value, OptionTable)
    }
    assert tables == {id(spec) for spec, _template in TEMPLATES}


def test_the_sandbox_sees_the_escapes_the_judge_refuses(tmp_path: Path) -> None:
    """The check can fail: the issue's escapes, run anyway, do change the sandbox."""
    escapes = [
        "sort --outp=PWNED data.txt",
        "git ls-remote --upload-p='touch PWNED;' .",
        "git grep -e -- --open-files-in-pager=./pwn.sh",
        "sed --line-length 5 'w PWNED' notes.md",
        "git branch --set-upstream-t=feature",
    ]
    for number, command in enumerate(escapes):
        assert not judge_command(command).read_only, command
        root = tmp_path / f"box{number}"
        root.mkdir()
        root, repo, env, baseline = _make_sandbox(root)
        _run(command, repo, env)
        assert _snapshot(root) != baseline, command
