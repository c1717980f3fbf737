"""Memory and transcript folders for odd project folders and settings, against `paths`.

Claude Code names its memory folder in the memory prompt (in backticks) and writes the
session transcript under `projects/<name>/`; both are read off one `claude -p` run and
compared with `workbench paths --json` run in the same sandbox with the same environment.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

from oracle import extract, runner
from oracle.checks.base import AGREE, DIFFER, ERROR, Case, Check, Outcome, scrub, tail
from oracle.releases import Release

NA = "n/a"
LONG = "deep/" + "/".join(c * 64 for c in "abc")


def _cases() -> list[Case]:
    cafe_nfc = unicodedata.normalize("NFC", "café-ünï")
    cafe_nfd = unicodedata.normalize("NFD", "café-ünï")
    s = "{sandbox}"
    return [
        Case("plain", "a plain ASCII folder", {"project": "project"}),
        Case("spaces", "a folder with spaces", {"project": "my project folder"}),
        Case("unicode-nfc", "a folder named in NFC", {"project": cafe_nfc}),
        Case(
            "unicode-nfd",
            "the same name in NFD (decomposed)",
            {"project": cafe_nfd},
            rule="nfd-project-folder",
        ),
        Case("astral", "a folder with an emoji (two UTF-16 units)", {"project": "emoji-😀-proj"}),
        Case("long", "a path past 200 characters (djb2 suffix)", {"project": LONG}),
        Case(
            "long-unicode",
            "a long path with non-ASCII characters",
            {"project": LONG + "/ü-" + "é" * 20},
        ),
        Case(
            "user-setting",
            "autoMemoryDirectory in user settings (~ expanded)",
            {"user": {"autoMemoryDirectory": "~/mem-user"}},
        ),
        Case(
            "local-setting",
            "autoMemoryDirectory in local settings",
            {"local": {"autoMemoryDirectory": f"{s}/mem-local"}},
        ),
        Case(
            "project-setting",
            "autoMemoryDirectory in the committed project settings",
            {"projectset": {"autoMemoryDirectory": f"{s}/mem-project"}},
            rule="project-auto-memory-directory",
        ),
        Case(
            "flag-setting",
            "autoMemoryDirectory in a --settings file",
            {"flag": {"autoMemoryDirectory": f"{s}/mem-flag"}},
        ),
        Case(
            "precedence-local",
            "user, project and local settings all set (local wins)",
            {
                "user": {"autoMemoryDirectory": f"{s}/mem-user"},
                "projectset": {"autoMemoryDirectory": f"{s}/mem-project"},
                "local": {"autoMemoryDirectory": f"{s}/mem-local"},
            },
        ),
        Case(
            "precedence-project-user",
            "user and project settings set (project over user where honoured)",
            {
                "user": {"autoMemoryDirectory": f"{s}/mem-user"},
                "projectset": {"autoMemoryDirectory": f"{s}/mem-project"},
            },
            rule="project-auto-memory-directory",
        ),
        Case(
            "relative-setting",
            "a relative autoMemoryDirectory (refused)",
            {"user": {"autoMemoryDirectory": "relative/memory"}},
        ),
        Case(
            "env-override",
            "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",
            {"env": {"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": f"{s}/mem-env"}},
        ),
        Case(
            "project-dir-name",
            "CLAUDE_CODE_PROJECT_DIR_NAME",
            {"env": {"CLAUDE_CODE_PROJECT_DIR_NAME": "custom_dir-1"}},
            rule="project-dir-name",
        ),
        Case(
            "project-dir-name-invalid",
            "CLAUDE_CODE_PROJECT_DIR_NAME with characters it refuses",
            {"env": {"CLAUDE_CODE_PROJECT_DIR_NAME": "bad name!"}},
        ),
        Case(
            "git-subfolder",
            "run in a subfolder of a git repository",
            {"project": "repo", "git": True, "cwd": "src/pkg"},
        ),
        Case(
            "git-worktree",
            "run in a git worktree (memory shared with the main checkout)",
            {"project": "repo", "git": True, "worktree": "repo-wt"},
        ),
    ]


def _make_worktree(repo: Path, target: Path) -> None:
    git = ["git", "-C", str(repo), "-c", "user.email=o@example.invalid", "-c", "user.name=o"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], check=True, timeout=30)
    subprocess.run(
        [*git, "worktree", "add", "-q", str(target)], check=True, timeout=30, capture_output=True
    )


def observe_memory_dir(run: runner.Run) -> str | None:
    """The folder the memory prompt of the first main call names."""
    for request in run.main_requests:
        section = extract.find_memory_prompt(request)
        if section:
            for match in re.finditer(r"`(/[^`]+/)`", section):
                return match.group(1)
            return None
    return None


def observe_transcripts_dir(run: runner.Run) -> str | None:
    found = run.transcripts()
    return str(found[0].parent) if found else None


def run_case(release: Release, case: Case) -> Outcome:
    data = case.data
    scenario = runner.Scenario(
        prompt="hello",
        project=data.get("project", "project"),
        git=bool(data.get("git")),
        user_settings=data.get("user"),
        project_settings=data.get("projectset"),
        local_settings=data.get("local"),
        flag_settings=data.get("flag"),
        env=dict(data.get("env", {})),
    )
    with runner.sandbox(scenario) as (box, ready):
        root = str(box.root)
        cwd = box.project
        if data.get("worktree"):
            cwd = box.root / data["worktree"]
            _make_worktree(box.project, cwd)
        if data.get("cwd"):
            cwd = box.project / data["cwd"]
            cwd.mkdir(parents=True, exist_ok=True)
        run = runner.run_claude(release, ready, box, cwd=cwd)
        observed: dict[str, Any] = {
            "exit_code": run.returncode,
            "ran": bool(run.message_requests),
            "memory_dir": observe_memory_dir(run),
            "transcripts_dir": observe_transcripts_dir(run),
        }
        args = ["paths"]
        if ready.flag_settings is not None:
            args += ["--settings", str(box.root / "flag-settings.json")]
        wb = runner.workbench(box, args, env=run.env(), claude_version=release.version, cwd=cwd)
        got = wb.json() if wb.returncode == 0 else None
        workbench = (
            {"memory_dir": got.get("memory_dir"), "transcripts_dir": got.get("transcripts_dir")}
            if got
            else {"error": tail(wb.stderr)}
        )
        inputs = {
            "project": data.get("project", "project"),
            "project_root": str(box.project),
            "cwd": str(cwd),
            "git": bool(data.get("git")),
            "worktree": data.get("worktree"),
            "settings": {
                k: v
                for k, v in {
                    "user": ready.user_settings,
                    "project": ready.project_settings,
                    "local": ready.local_settings,
                    "flag": ready.flag_settings,
                }.items()
                if v is not None
            },
            "env": ready.env,
        }
        outcome = Outcome("paths", case.name, release.version, AGREE, rule=case.rule)
        outcome.observed = scrub(observed, root)
        outcome.workbench = scrub(workbench, root)
        outcome.inputs = scrub(inputs, root)
        outcome.seconds = run.seconds
        outcome.raw = {
            "project_root": str(box.project),
            "cwd": str(cwd),
            "memory_dir": observed["memory_dir"],
            "transcripts_folder": Path(observed["transcripts_dir"]).name
            if observed["transcripts_dir"]
            else None,
        }
        _judge(outcome, observed, workbench, run)
        return outcome


def _judge(out: Outcome, observed: dict[str, Any], wb: dict[str, Any], run: runner.Run) -> None:
    if not observed["ran"]:
        if run.timed_out:
            out.verdict, out.reason = ERROR, "Claude Code timed out"
        else:
            out.verdict = NA
            out.reason = (
                f"Claude Code exits ({observed['exit_code']}) without a session here: "
                f"{tail(run.stderr or run.stdout, 1) or 'no output'}"
            )
        return
    if "error" in wb:
        out.verdict, out.reason = ERROR, f"workbench paths failed: {wb['error']}"
        return
    problems = []
    for key, label in (("memory_dir", "memory folder"), ("transcripts_dir", "transcripts folder")):
        if observed[key] is None:
            problems.append(f"Claude Code showed no {label}")
        elif observed[key] != wb[key]:
            problems.append(
                f"{label}: Claude Code {out.observed[key]}, workbench {out.workbench[key]}"
            )
    if problems:
        out.verdict, out.reason = DIFFER, "; ".join(problems)


CHECK = Check("paths", "memory and transcript folders", _cases, run_case, weight=2.0)
