"""Memory and transcript folders: `workbench paths` against what Claude Code used.

Each recorded case is laid out again in this test's own folder (project name, settings,
environment, git repository or worktree) and the answer is compared with the recording with
the sandbox root replaced on both sides. A long path's hash depends on the whole path, so
those cases are also checked on the recorded path itself.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from oracle_data import cases, fill, load, set_env, workbench_json

from workbench.engine.claude_paths import sanitize_path

ROWS = load("paths.json")


def _layout(row: dict, root: Path) -> tuple[Path, dict[str, str], list[str]]:
    inputs = fill(row["inputs"], str(root))
    project = Path(inputs["project_root"])
    project.mkdir(parents=True)
    (root / "home").mkdir()
    (root / "config").mkdir()
    if inputs["git"]:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    settings = inputs.get("settings", {})
    targets = {
        "user": root / "config" / "settings.json",
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
        "flag": root / "flag-settings.json",
    }
    for source, value in settings.items():
        targets[source].parent.mkdir(parents=True, exist_ok=True)
        targets[source].write_text(json.dumps(value), encoding="utf-8")
    args = ["--settings", str(targets["flag"])] if "flag" in settings else []
    cwd = Path(inputs["cwd"])
    if inputs.get("worktree"):
        git = ["git", "-C", str(project), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], check=True)
        subprocess.run([*git, "worktree", "add", "-q", str(cwd)], check=True, capture_output=True)
    cwd.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(root / "home"), "CLAUDE_CONFIG_DIR": str(root / "config")}
    env.update(inputs.get("env", {}))
    return cwd, env, args


def _scrub(value: str | None, root: Path) -> str | None:
    if value is None:
        return None
    flat = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(root))
    return value.replace(str(root), "<sandbox>").replace(flat, "<sandbox-sanitized>")


def _short(row: dict) -> bool:
    folder = (row.get("raw") or {}).get("transcripts_folder") or ""
    return len(folder) <= 200


@pytest.mark.parametrize("row", cases(r for r in ROWS if _short(r)))
def test_paths_match_what_claude_code_used(row, tmp_path, monkeypatch):
    root = tmp_path / "sbx"
    root.mkdir()
    cwd, env, args = _layout(row, root)
    set_env(monkeypatch, env, row["release"])
    got = workbench_json(["paths", *args], cwd=cwd)
    assert _scrub(got["memory_dir"], root) == row["observed"]["memory_dir"]
    assert _scrub(got["transcripts_dir"], root) == row["observed"]["transcripts_dir"]


def _long_rows() -> list:
    return cases(r for r in ROWS if not _short(r) and r["raw"].get("transcripts_folder"))


@pytest.mark.parametrize("row", _long_rows())
def test_long_path_hash_matches_claude_code(row):
    """Past 200 characters the folder name ends in a hash of the whole path."""
    raw = row["raw"]
    assert sanitize_path(raw["project_root"]) == raw["transcripts_folder"]
    assert raw["memory_dir"].rstrip("/").split("/")[-2] == raw["transcripts_folder"]


def test_recording_covers_both_releases_and_the_odd_cases():
    releases = {r["release"] for r in ROWS}
    assert {"2.1.88", "2.1.332"} <= releases
    names = {r["case"] for r in ROWS}
    for needed in ("unicode-nfd", "long", "project-setting", "project-dir-name", "git-worktree"):
        assert needed in names
