"""The judge reads long options the way getopt_long and git's parse-options do (issue 10).

Both accept any unambiguous prefix of a long option (`--outp` is `--output`), `--opt=value`
and `--opt value`, and an option that takes a value swallows the next word even when it is
`--` or looks like an option. The judge takes long options written in full only, so every
abbreviation of a write-capable option must be refused, in every form and position.
"""

from __future__ import annotations

import pytest

from workbench.engine.agents.bash_readonly import judge_command

# Hand-written: the escapes, and the ways an option value can hide an option.
MUST_REFUSE = [
    # the four escapes of the adversarial run
    "git ls-remote --upload-p='touch PWNED;' .",
    "git grep --open-files-in-p=rm -e word",
    "sort --outp=F data.txt",
    "git branch --set-upstream-t=origin/main",
    # the same options in their other forms
    "git ls-remote --upload-p 'touch PWNED;' .",
    "git ls-remote --u='touch PWNED;' .",
    "git ls-remote --exe='touch PWNED;' .",
    "git ls-remote . --upload-pack='touch PWNED;'",
    "git grep -e word --open-f=rm",
    "git grep -Orm -e word",
    "git grep -iO -e word",
    "git grep --o -e word",
    "sort --o F data.txt",
    "sort data.txt --outpu=F",
    "sort -rnoF data.txt",
    "sort --comp=sh data.txt",
    "sort --compress-p sh data.txt",
    "sort --temp=. data.txt",
    "git branch --set-u origin/main",
    "git branch --se=origin/main",
    "git branch -uorigin/main",
    "git branch --tr",
    "git branch --no-tr new",
    "git branch --del old",
    "git branch --mov a b",
    "git branch --cop a b",
    "git branch --forc x",
    "git branch --unset-u",
    "git branch --edit-d",
    "git branch --create-r x",
    # a value-taking option swallows the next word, `--` included
    "git grep -e -- --open-files-in-pager=rm",
    "git grep -e -- --open-files-in-p=rm",
    "git log --grep -- --output=PWNED",
    "sed --line-length 5 'w PWNED' f.md",
    "sed -l 5 'w PWNED' f.md",
    "sed --expression 'w PWNED' f.md",
    "sed -n --expr='w PWNED' f.md",
    "sed --in-pl 's/a/b/' f.md",
    "sed --i 's/a/b/' f.md",
    "sed --fi=script.sed f.md",
    "sed -s -i 's/a/b/' f.md",
    "sed p f.md -i",
    "git branch --sort -l newbranch",
    "git branch --format -l newbranch",
    # diff options of the revision commands take prefixes too
    "git log --outp=PWNED",
    "git log -p --out PWNED",
    "git show --output PWNED HEAD",
    "git diff --ou=PWNED",
    "git diff HEAD -- --output=PWNED",
    "git log --ext-d",
    "git show --ext",
    "git range-diff --outp=PWNED a...b",
    "git stash show --outp=PWNED",
    "git reflog show --outp=PWNED",
    "git log --he",
    # other tools with a write- or exec-capable option
    "git tag --del v1",
    "git tag --anno -m x v2",
    "git tag --mess=x v2",
    "git tag -lf v1",
    "git config --ad a.b c",
    "git config --rep a.b c",
    "git config --uns user.name",
    "git config --remove-s user",
    "git config --rename-s a b",
    "git config --edi",
    "git config --get user.name --ad a.b c",
    "git config --list -e",
    "git config -le",
    "git config --get x set a.b c",
    "xargs --open cat",
    "xargs --inter cat",
    "xargs --process-s=X cat",
    "xargs -ot cat",
    "xargs -n1 sh -c 'touch PWNED'",
    "xargs --max-a=1 rm",
    "date --s=2020-01-01",
    "date --se 2020-01-01",
    "date -us 2020-01-01",
    "date -u 010101012020",
    "file --comp -m magic",
    "file -zC -m magic",
    "file --preserve f.md",
    "base64 --out=F f.md",
    "uniq --cou in.txt out.txt",
    "uniq -c in.txt out.txt",
    "rg --pr=./decode word",
    "rg --pre ./decode word",
    "rg -e word --pre=./decode",
    "rg --hostname=./x word",
    "fd --exe rm",
    "fd --exec-b rm",
    "fd -Hx rm",
    "tree --outp=F",
    "tree -aoF",
    "git --git-dir=/tmp/other log",
    "git --work-tree=/tmp log",
    "git ls-remote 'ext::sh -c touch% PWNED'",
    "git stash -q list",
    "git stash --keep-index show",
    "gh auth status --show-token",
    "gh pr view 1 -cw",
]


@pytest.mark.parametrize("command", MUST_REFUSE)
def test_escapes_and_abbreviations_are_refused(command: str) -> None:
    verdict = judge_command(command)
    assert not verdict.read_only, f"{command!r} was allowed"
    assert verdict.reason and "\n" not in verdict.reason


@pytest.mark.parametrize(
    ("command", "meant"),
    [
        ("sort --outp=F data.txt", "--output"),
        ("git branch --set-upstream-t=x", "--set-upstream-to"),
        ("git ls-remote --upload-p=x .", "--upload-pack"),
        ("git log --outp=x", "--output"),
    ],
)
def test_the_refusal_names_the_option_the_command_would_have_read(command, meant) -> None:
    reason = judge_command(command).reason
    assert meant in reason and "--" + command.split("--")[1].split("=")[0] in reason


# Near misses: each read-only form next to an escape that differs from it by little, so the
# judge is shown to tell them apart rather than refuse a whole command.
NEAR_MISSES = [
    ("sort -k 2 -t , data.txt", "sort -k 2 -t , --outp=F data.txt"),
    ("sort -k -o data.txt", "sort -k 2 -o data.txt"),  # -k takes `-o` as its key
    ("sort --key=2 --numeric-sort --reverse data.txt", "sort --key=2 --comp=sh data.txt"),
    ("sed -n -e 1,5p -e /x/p f.md", "sed -n -e 1,5p --expr='w F' f.md"),
    ("sed -l 5 p f.md", "sed -l 5 'w F' f.md"),
    ("sed --line-length=5 p f.md", "sed --line-length 5 'w F' f.md"),
    ("git grep -n -i -e word -- '*.md'", "git grep -n -i -e -- --open-files-in-pager=rm"),
    ("git grep -3 word", "git grep -3 --open=rm word"),
    ("git branch --contains HEAD", "git branch --set-upstream-t=origin/main"),
    ("git branch --list --sort=-committerdate", "git branch --sort -l newbranch"),
    ("git tag -n5 --list", "git tag --anno -m x v2"),
    ("git config --get-regexp '^user'", "git config --get x --ad a.b c"),
    ("git ls-remote --heads --tags .", "git ls-remote --upload-p='touch F;' ."),
    ("git log --output-indicator-new=+ -p", "git log --outp=F -p"),
    ("git log --no-ext-diff -p", "git log --ext-d -p"),
    ("git diff --stat -- notes.md", "git diff --stat -- --output=F"),
    ("xargs -0 -n 1 wc -l", "xargs -0 --open wc -l"),
    ("date -d yesterday +%F", "date --s=yesterday"),
    ("file --mime-type f.md", "file --comp f.md"),
    ("uniq -c -f 1 data.txt", "uniq -c data.txt out.txt"),
    ("rg --pretty word", "rg --pr=./decode word"),
    ("fd --exclude node_modules md", "fd --exe rm md"),
]


@pytest.mark.parametrize(("accepted", "refused"), NEAR_MISSES)
def test_read_only_forms_pass_and_their_near_misses_do_not(accepted: str, refused: str) -> None:
    verdict = judge_command(accepted)
    assert verdict.read_only, f"{accepted!r}: {verdict.reason}"
    assert not judge_command(refused).read_only, f"{refused!r} was allowed"
