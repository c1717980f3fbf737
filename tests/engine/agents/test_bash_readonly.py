"""The read-only judge: a table of commands it must allow and commands it must refuse."""

from __future__ import annotations

import pytest

from workbench.engine.agents.bash_readonly import (
    PLAIN_READ_ONLY,
    judge_command,
    sed_script_refusal,
)

ALLOWED = [
    # plain readers, pipes and lists
    "ls",
    "ls -la",
    "cat notes.md",
    "cat 'a file with spaces.md'",
    'cat "quoted name.md"',
    "head -n 20 MEMORY.md | tail -5",
    "wc -l a.md b.md",
    "ls -la && cat MEMORY.md",
    "ls missing || echo none",
    "ls; pwd; whoami",
    "stat -c %s MEMORY.md",
    "du -sh .",
    "diff a.md b.md",
    "sort -rn counts.txt | uniq -c | head",
    "cut -d: -f1 /etc/passwd | sort",
    "tr a-z A-Z < input.txt",
    "readlink -f link",
    # redirections that write nothing
    "ls 2>&1",
    "ls >/dev/null",
    "ls 2>/dev/null",
    "cat missing 2>/dev/null || true",
    "ls &> /dev/null",
    "ls >&2",
    "cat < input.txt",
    "cat <<'EOF'\nliteral $HOME text\nEOF",
    "cat <<< 'here string'",
    # quoting keeps globs and dollars literal
    "grep -rn 'TODO' .",
    'grep -r "pattern" src',
    "find . -name '*.md'",
    'find . -name "*.py" -type f',
    "echo '$HOME is literal here'",
    "echo a\\*b",
    'echo "{a,b}"',
    # flag-checked tools
    "git status",
    "git log --oneline -10",
    "git --no-pager diff HEAD~1",
    "git -C repo show HEAD:README.md",
    "git branch",
    "git branch -a",
    "git branch --list 'feat*'",
    "git tag",
    "git tag -l 'v1*'",
    "git remote -v",
    "git config --get user.name",
    "git stash list",
    "git rev-parse HEAD",
    "git blame README.md",
    "git ls-files",
    "rg -n 'needle' src",
    "sed -n '1,20p' file.md",
    "sed 's/a/b/g' file.md",
    "sed -e 's/x/y/' -e '/^#/d' file.md",
    "sort -k2 -t, data.csv",
    "file MEMORY.md",
    "tree -L 2",
    "date +%Y-%m-%d",
    "date -u",
    "hostname",
    "ps aux",
    "base64 file.bin",
    "sha256sum a.md",
    "fd md",
    "docker ps",
    "gh pr list",
    "jq '.items[0]' data.json",
    "jq -r .name package.json",
    "uniq -c",
    "uniq -f 1",
    "history",
    "history 20",
    "node -v",
    "python --version",
    "python3 -V",
    "ls | xargs cat",
    "find . -name '*.md' -print0 | xargs -0 wc -l",
    "cd src",
    "(cd src && ls)",
    "! grep -q x file",
    "[ -f MEMORY.md ] && cat MEMORY.md",
    "pwd",
]

REFUSED = [
    # destructive and write-capable commands
    ("rm -rf /", "not on the read-only list"),
    ("rm MEMORY.md", "not on the read-only list"),
    ("mv a.md b.md", "not on the read-only list"),
    ("cp a b", "not on the read-only list"),
    ("tee out.txt", "not on the read-only list"),
    ("touch new.md", "not on the read-only list"),
    ("mkdir x", "not on the read-only list"),
    ("chmod 777 f", "not on the read-only list"),
    ("truncate -s 0 f", "not on the read-only list"),
    ("dd if=/dev/zero of=f", "not on the read-only list"),
    ("curl -o out http://example.com", "not on the read-only list"),
    ("wget http://example.com", "not on the read-only list"),
    ("python -c 'print(1)'", "exact"),
    ("python script.py", "exact"),
    ("node -e 'x'", "exact"),
    ("eval ls", "not on the read-only list"),
    ("env", "not on the read-only list"),
    ("sudo ls", "not on the read-only list"),
    ("sh -c ls", "not on the read-only list"),
    ("bash -c 'rm x'", "not on the read-only list"),
    ("exec ls", "not on the read-only list"),
    ("/bin/rm x", "path"),
    ("./script.sh", "path"),
    # output redirection
    ("echo hi > out.txt", "redirection"),
    ("echo hi >> out.txt", "redirection"),
    ("ls >| out.txt", "redirection"),
    ("ls &> out.txt", "redirection"),
    ("ls >& out.txt", "redirection"),
    ("cat a 2> errors.log", "redirection"),
    ("cat <<EOF > f.md\nhi\nEOF", "redirection"),
    ("(ls) > out", "redirection"),
    # sed, sort, find, git, xargs with write flags
    ("sed -i 's/a/b/' f.md", "in place"),
    ("sed -i.bak 's/a/b/' f.md", "in place"),
    ("sed --in-place 's/a/b/' f.md", "in-place"),
    ("sed -ni 's/a/b/p' f.md", "in place"),
    ("sed 's/a/b/w out.txt' f.md", "write"),
    ("sed -n '1w out.txt' f.md", "writes"),
    ("sed 's/x/date/e' f.md", "run"),
    ("sed -f script.sed f.md", "cannot be checked"),
    ("sort -o out.txt in.txt", "sort -o"),
    ("sort -rno out.txt in.txt", "sort -o"),
    ("sort --output=out in", "output"),
    ("find . -delete", "-delete"),
    ("find . -name '*.md' -exec rm {} ';'", "-exec"),
    ("find . -execdir rm {} +", "-execdir"),
    ("find . -ok rm {} ';'", "-ok"),
    ("find . -fprint out.txt", "-fprint"),
    ("git push", "git push"),
    ("git commit -m x", "git commit"),
    ("git checkout main", "git checkout"),
    ("git reset --hard", "git reset"),
    ("git add .", "git add"),
    ("git clean -fd", "git clean"),
    ("git branch new-branch", "creates"),
    ("git branch -D old", "changes"),
    ("git branch -m a b", "changes"),
    ("git tag v1.0", "creates"),
    ("git tag -d v1", "changes"),
    ("git remote add origin x", "changes"),
    ("git config user.name x", "read settings"),
    ("git stash", "read-only action"),
    ("git stash drop", "can change"),
    ("git -c core.pager=sh log", "-c"),
    ("git diff --output=out.patch", "--output"),
    ("git log --ext-diff", "--ext-diff"),
    ("git grep -O foo", "-O"),
    ("xargs rm", "xargs"),
    ("ls | xargs rm -f", "xargs"),
    ("ls | xargs sed -i s/a/b/", "xargs"),
    ("xargs -p cat", "xargs option"),
    ("rg --pre ./decode foo", "--pre"),
    ("fd -x rm", "fd -x"),
    ("file -C -m magic", "file -C"),
    ("tree -o out.txt", "tree"),
    ("date -s '2020-01-01'", "clock"),
    ("date 010101012020", "clock"),
    ("hostname evil", "only print"),
    ("docker rm c1", "docker rm"),
    ("docker run alpine", "docker run"),
    ("gh pr merge 1", "not a read-only"),
    ("gh api -X DELETE /repos/x", "not a read-only"),
    ("jq -f prog.jq data.json", "-f"),
    ("jq --rawfile x secret.txt -n '$x'", "--rawfile"),
    ("jq -n 'env'", "environment"),
    ("jq -n '$ENV.HOME'", "environment"),
    ("uniq in.txt out.txt", "flags"),
    ("history -c", "history"),
    ("cd a b", "at most one"),
    ("whoami --help", "exact"),
    # expansions, substitutions, globs
    ("echo $HOME", "expansion"),
    ("echo ${HOME}", "expansion"),
    ('echo "$HOME"', "expansion"),
    ("cat $(ls)", "expansion"),
    ("cat `ls`", "expansion"),
    ("echo $((1+2))", "expansion"),
    ("cat <(ls)", "expansion"),
    ("echo $'\\x41'", "expansion"),
    ("ls *.md", "glob"),
    ("cat ?.md", "glob"),
    ("ls [ab].md", "glob"),
    ("echo {a,b}", "brace"),
    ("cat <<EOF\n$HOME\nEOF", "here-document"),
    # shell structure the judge does not accept
    ("FOO=bar ls", "environment assignments"),
    ("FOO=bar", "setting shell variables"),
    ("for f in a b; do cat f; done", "shell construct"),
    ("f() { ls; }", "shell construct"),
    ("if true; then ls; fi", "shell construct"),
    ("ls &", "background"),
    ("sleep 1 & rm x", "background"),
    # unparseable or empty
    ('echo "unterminated', "parsed"),
    ("ls 0<> file", "parsed"),
    ("", "empty"),
    ("   ", "empty"),
]


@pytest.mark.parametrize("command", ALLOWED)
def test_read_only_commands_are_allowed(command: str) -> None:
    verdict = judge_command(command)
    assert verdict.read_only, f"{command!r} refused: {verdict.reason}"
    assert verdict.reason == ""
    assert verdict.commands


@pytest.mark.parametrize(("command", "why"), REFUSED)
def test_write_capable_commands_are_refused(command: str, why: str) -> None:
    verdict = judge_command(command)
    assert not verdict.read_only, f"{command!r} was allowed"
    assert why.lower() in verdict.reason.lower(), verdict.reason


def test_every_plain_reader_is_allowed_alone_and_with_arguments() -> None:
    for name in sorted(PLAIN_READ_ONLY):
        assert judge_command(name).read_only, name
        assert judge_command(f"{name} -x 'arg'").read_only, name


def test_a_refused_part_anywhere_refuses_the_whole_line() -> None:
    for tail in ("rm x", "git push", "echo hi > f", "sed -i s/a/b/ f"):
        for joiner in (" && ", " || ", "; ", " | "):
            assert not judge_command(f"ls{joiner}{tail}").read_only, (joiner, tail)
            assert not judge_command(f"(cd src; {tail})").read_only, tail


def test_quoted_metacharacters_are_plain_arguments() -> None:
    verdict = judge_command("grep -e '> out' -e '$(rm x)' -e '`id`' -e ';rm' file")
    assert verdict.read_only, verdict.reason
    assert verdict.commands[0][0] == "grep"
    assert "$(rm x)" in verdict.commands[0]


def test_reported_argv_is_unquoted() -> None:
    verdict = judge_command("cat \"a b.md\" 'c d.md' e\\ f.md")
    assert verdict.commands == (("cat", "a b.md", "c d.md", "e f.md"),)


def test_overlong_and_nul_commands_are_refused() -> None:
    assert not judge_command("ls " + "a" * 20_000).read_only
    assert not judge_command("ls\0rm").read_only


@pytest.mark.parametrize(
    ("script", "safe"),
    [
        ("p", True),
        ("1,10p", True),
        ("/start/,/end/d", True),
        ("s/a/b/g", True),
        ("s|a/b|c|g", True),
        ("s/a\\/w/b/", True),
        ("y/abc/xyz/", True),
        ("$!N;P;D", True),
        ("/x/{p;q}", True),
        ("1i\\\nheader", True),
        ("w out", False),
        ("1W out", False),
        ("s/a/b/w out", False),
        ("s/a/b/gw out", False),
        ("s/a/b/e", False),
        ("e date", False),
        ("/x/e", False),
        ("s/unterminated", False),
        ("k", False),
    ],
)
def test_sed_scripts(script: str, safe: bool) -> None:
    assert (sed_script_refusal(script) is None) is safe, sed_script_refusal(script)
