"""The memory prompt's structure (never its text) against `workbench prompt`.

Compared: how many `##` sections it has, its size band, whether it names the memory folder,
and whether it is there at all (auto memory switched off). Only counts, lengths and a hash of
Claude Code's prompt are kept.
"""

from __future__ import annotations

from oracle import extract, runner
from oracle.checks.base import AGREE, DIFFER, ERROR, Case, Check, Outcome, tail
from oracle.checks.memory_md import entry, memory_dir_rel
from oracle.releases import Release


def _cases() -> list[Case]:
    return [
        Case("no-index", "a project without MEMORY.md", {}, rule="memory-prompt-shape"),
        Case(
            "with-index",
            "a project with a small MEMORY.md",
            {"index": "\n".join(entry(i) for i in range(3)) + "\n"},
            rule="memory-prompt-shape",
        ),
        Case(
            "disabled",
            "auto memory switched off (CLAUDE_CODE_DISABLE_AUTO_MEMORY=1)",
            {"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}},
        ),
    ]


def run_case(release: Release, case: Case) -> Outcome:
    scenario = runner.Scenario(prompt="hello", env=dict(case.data.get("env", {})))
    with runner.sandbox(scenario) as (box, ready):
        mem = box.config / memory_dir_rel(str(box.project))
        if "index" in case.data:
            mem.mkdir(parents=True)
            (mem / "MEMORY.md").write_text(case.data["index"], encoding="utf-8")
        run = runner.run_claude(release, ready, box)
        out = Outcome("prompt", case.name, release.version, AGREE, rule=case.rule)
        out.inputs = {"case": case.name, "env": ready.env}
        out.seconds = run.seconds
        if run.first_main is None:
            out.verdict, out.reason = ERROR, f"Claude Code sent nothing: {tail(run.stderr)}"
            return out
        memory_dir = str(mem) + "/"
        section = extract.find_memory_prompt(run.first_main)
        shape = extract.prompt_shape(section, memory_dir).to_json() if section else None
        out.observed = {"present": shape is not None, "shape": shape}
        paths = runner.workbench(box, ["paths"], env=run.env(), claude_version=release.version)
        enabled = bool((paths.json() or {}).get("auto_memory_enabled", True))
        ours = None
        if enabled:
            wb = runner.workbench(box, ["prompt"], env=run.env(), claude_version=release.version)
            if wb.returncode != 0:
                out.verdict, out.reason = ERROR, f"workbench prompt failed: {tail(wb.stderr)}"
                return out
            text = (wb.json() or {}).get("text", "")
            ours = extract.prompt_shape(text, memory_dir).to_json()
            ours.pop("sha256")  # our own words: only the structure is comparable
        out.workbench = {"present": enabled, "shape": ours}
        judge(out)
        return out


def judge(out: Outcome) -> None:
    cc, wb = out.observed, out.workbench
    if cc["present"] != wb["present"]:
        out.verdict = DIFFER
        out.reason = (
            f"Claude Code {'sends' if cc['present'] else 'sends no'} memory prompt; the "
            f"workbench {'builds one' if wb['present'] else 'says auto memory is off'}"
        )
        return
    if not cc["present"]:
        return
    a, b = cc["shape"], wb["shape"]
    problems = []
    if a["sections"] != b["sections"]:
        problems.append(f"sections: Claude Code {a['sections']}, workbench {b['sections']}")
    if a["band"] != b["band"]:
        problems.append(
            f"size: Claude Code {a['chars']:,} characters ({a['band']}), "
            f"workbench {b['chars']:,} ({b['band']})"
        )
    if a["names_memory_dir"] != b["names_memory_dir"]:
        problems.append("only one of them names the memory folder")
    if a["mentions_line_limit"] != b["mentions_line_limit"]:
        who = "Claude Code" if a["mentions_line_limit"] else "the workbench"
        problems.append(f"only {who} mentions the 200-line limit")
    if problems:
        out.verdict, out.reason = DIFFER, "; ".join(problems)


CHECK = Check("prompt", "the memory prompt's structure", _cases, run_case)
