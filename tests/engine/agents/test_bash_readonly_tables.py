"""The judge's option tables, checked against themselves: every abbreviation of every
write-capable option is refused, and every harmless option written in full is accepted."""

from __future__ import annotations

from workbench.engine.agents import bash_git, bash_readonly
from workbench.engine.agents.bash_options import OptionTable
from workbench.engine.agents.bash_readonly import judge_command

# Abbreviations generated from the judge's own tables: every prefix of every refused long option
# of every command parsed by table, in `--p=v`, `--p v` and trailing positions.
TABLE_COMMANDS: list[tuple[OptionTable, str]] = [
    (bash_readonly.SED_OPTIONS, "sed {opt} p f.md"),
    (bash_readonly.SORT_OPTIONS, "sort {opt} data.txt"),
    (bash_readonly.XARGS_OPTIONS, "xargs {opt} cat"),
    (bash_readonly.DATE_OPTIONS, "date {opt}"),
    (bash_readonly.FILE_OPTIONS, "file {opt} f.md"),
    (bash_readonly.BASE64_OPTIONS, "base64 {opt} f.md"),
    (bash_git.BRANCH_OPTIONS, "git branch {opt}"),
    (bash_git.TAG_OPTIONS, "git tag {opt}"),
    (bash_git.CONFIG_OPTIONS, "git config {opt} a.b c"),
    (bash_git.GREP_OPTIONS, "git grep {opt} -e word"),
    (bash_git.LS_REMOTE_OPTIONS, "git ls-remote {opt} ."),
]
BLOCKLIST_COMMANDS: list[tuple[dict[str, str], str]] = [
    *((bash_git.GIT_DANGEROUS_LONG, f"git {sub} {{opt}}") for sub in ("log", "show", "diff")),
    ({"pre": "", "hostname-bin": ""}, "rg {opt} word"),
    ({"exec": "", "exec-batch": ""}, "fd {opt} word"),
    ({"output": ""}, "tree {opt}"),
]


def _abbreviations(name: str) -> list[str]:
    return [name[:k] for k in range(1, len(name) + 1)]


def _generated() -> list[str]:
    out: list[str] = []
    for spec, template in TABLE_COMMANDS:
        for name, option in spec.long.items():
            if option.refusal is None:
                continue
            for prefix in _abbreviations(name):
                for form in (f"--{prefix}='touch PWNED;'", f"--{prefix} PWNED"):
                    out.append(template.format(opt=form))
        for letter, option in spec.short.items():
            if option.refusal is not None:
                out.append(template.format(opt=f"-{letter}PWNED"))
    for names, template in BLOCKLIST_COMMANDS:
        for name in names:
            for prefix in _abbreviations(name):
                out.append(template.format(opt=f"--{prefix}=PWNED"))
                out.append(template.format(opt=f"-- --{prefix}=PWNED"))
    return sorted(set(out))


GENERATED = _generated()


def test_every_abbreviation_of_a_write_capable_option_is_refused() -> None:
    """...and every harmless option written in full is still accepted: the tables are not
    so strict that ordinary read-only options stop working."""
    allowed = [c for c in GENERATED if judge_command(c).read_only]
    assert allowed == []
    assert len(GENERATED) > 500  # the table really covers every command and option
    refused = []
    for spec, template in TABLE_COMMANDS:
        for name, option in spec.long.items():
            if option.refusal is not None:
                continue
            form = f"--{name}" if option.arity == "none" else f"--{name}=1"
            command = template.format(opt=form)
            if spec is bash_git.BRANCH_OPTIONS or spec is bash_git.TAG_OPTIONS:
                command = command + " --list"
            if spec is bash_git.CONFIG_OPTIONS:
                command = command.replace(" a.b c", " --get a.b")
            if spec is bash_readonly.DATE_OPTIONS:
                command = command + " +%Y"
            verdict = judge_command(command)
            if not verdict.read_only:
                refused.append((command, verdict.reason))
    assert refused == []
