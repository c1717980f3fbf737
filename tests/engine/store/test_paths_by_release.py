"""Memory and transcript paths for every settings and environment case of spec 08, under the
rules of both releases."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from workbench.engine.claude_paths import resolve_locations, sanitize_path
from workbench.engine.profiles import profile_for

CURRENT = profile_for("2.1.332")
LEGACY = profile_for("2.1.88")


def _write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), **extra}


def _locations(tmp_path: Path, project: Path, profile, **kw):
    kw.setdefault("env", _env(tmp_path))
    kw.setdefault("policy_settings", tmp_path / "no-policy.json")
    return resolve_locations(project, profile=profile, **kw)


# --- autoMemoryDirectory ----------------------------------------------------------------------


def test_project_settings_count_in_the_current_release_only(tmp_path: Path, project: Path):
    _write_json(project / ".claude" / "settings.json", {"autoMemoryDirectory": "~/team-mem"})
    new = _locations(tmp_path, project, CURRENT)
    assert new.memory_dir_source == "projectSettings"
    assert new.memory_dir == f"{tmp_path}/home/team-mem/"
    assert new.rejected == () and any("trust the workspace" in n for n in new.notes)
    old = _locations(tmp_path, project, LEGACY)
    assert old.memory_dir_source == "default" and "team-mem" not in old.memory_dir
    assert [r.source for r in old.rejected] == ["projectSettings"]


def test_precedence_policy_flag_local_project_user(tmp_path: Path, project: Path):
    policy = tmp_path / "policy.json"
    flag = tmp_path / "flag.json"
    files = [
        ("policySettings", policy),
        ("flagSettings", flag),
        ("localSettings", project / ".claude" / "settings.local.json"),
        ("projectSettings", project / ".claude" / "settings.json"),
        ("userSettings", tmp_path / "cfg" / "settings.json"),
    ]
    for source, path in files:
        _write_json(path, {"autoMemoryDirectory": str(tmp_path / source)})
    for source, path in files:
        loc = _locations(tmp_path, project, CURRENT, flag_settings=flag, policy_settings=policy)
        assert (loc.memory_dir_source, loc.memory_dir) == (source, f"{tmp_path}/{source}/")
        path.unlink()
    loc = _locations(tmp_path, project, CURRENT, flag_settings=flag, policy_settings=policy)
    assert loc.memory_dir_source == "default"


def test_an_invalid_project_setting_is_refused_with_its_reason(tmp_path: Path, project: Path):
    _write_json(project / ".claude" / "settings.json", {"autoMemoryDirectory": "~/"})
    loc = _locations(tmp_path, project, CURRENT)
    assert loc.memory_dir_source == "default"
    assert [r.source for r in loc.rejected] == ["projectSettings"]


def test_the_env_override_still_beats_every_setting(tmp_path: Path, project: Path):
    _write_json(project / ".claude" / "settings.json", {"autoMemoryDirectory": "~/p"})
    env = _env(tmp_path, CLAUDE_COWORK_MEMORY_PATH_OVERRIDE=str(tmp_path / "env-mem"))
    loc = _locations(tmp_path, project, CURRENT, env=env)
    assert loc.memory_dir_source == "env" and loc.memory_dir == f"{tmp_path}/env-mem/"


# --- CLAUDE_CODE_PROJECT_DIR_NAME -------------------------------------------------------------


def test_project_dir_name_names_the_memory_and_transcript_folders(tmp_path: Path, project: Path):
    env = _env(tmp_path, CLAUDE_CODE_PROJECT_DIR_NAME="checkout_service-2")
    new = _locations(tmp_path, project, CURRENT, env=env)
    assert new.memory_dir == f"{tmp_path}/cfg/projects/checkout_service-2/memory/"
    assert new.transcripts_dir == f"{tmp_path}/cfg/projects/checkout_service-2"
    assert (new.project_dir_name, new.project_dir_name_source) == ("checkout_service-2", "env")
    old = _locations(tmp_path, project, LEGACY, env=env)
    key = sanitize_path(str(project))
    assert old.memory_dir == f"{tmp_path}/cfg/projects/{key}/memory/"
    assert old.project_dir_name_source == "sanitized"


@pytest.mark.parametrize("bad", ["has space", "a/b", "x" * 65, "dots.here"])
def test_an_invalid_project_dir_name_is_refused(tmp_path: Path, project: Path, bad: str):
    env = _env(tmp_path, CLAUDE_CODE_PROJECT_DIR_NAME=bad)
    loc = _locations(tmp_path, project, CURRENT, env=env)
    assert loc.project_dir_name == sanitize_path(str(project))
    assert [r.source for r in loc.rejected] == ["CLAUDE_CODE_PROJECT_DIR_NAME"]


def test_project_dir_name_with_a_remote_memory_base(tmp_path: Path, project: Path):
    env = _env(
        tmp_path,
        CLAUDE_CODE_PROJECT_DIR_NAME="shop",
        CLAUDE_CODE_REMOTE_MEMORY_DIR=str(tmp_path / "remote"),
    )
    loc = _locations(tmp_path, project, CURRENT, env=env)
    assert loc.memory_dir == f"{tmp_path}/remote/projects/shop/memory/"
    assert loc.transcripts_dir == f"{tmp_path}/cfg/projects/shop"


# --- a project folder in NFD -------------------------------------------------------------------


def test_an_nfd_folder_is_keyed_on_its_raw_name_by_the_current_release(tmp_path: Path):
    raw = unicodedata.normalize("NFD", "café")
    folder = tmp_path / raw
    (folder / ".git").mkdir(parents=True)
    new = _locations(tmp_path, folder, CURRENT)
    assert new.project_root.endswith(raw)  # not normalised
    assert new.sanitized_project == sanitize_path(str(tmp_path / raw))
    assert new.sanitized_project.endswith("cafe-")  # e, then the combining accent
    assert new.notes == ()
    old = _locations(tmp_path, folder, LEGACY)
    assert old.sanitized_project.endswith("caf-")  # NFC: é is one unit
    assert any("exits in such a folder" in note for note in old.notes)


# --- the releases each path rule changed in (bisected) -----------------------------------------


def test_project_settings_count_from_2_1_157(tmp_path: Path, project: Path):
    _write_json(project / ".claude" / "settings.json", {"autoMemoryDirectory": "~/team-mem"})
    before = _locations(tmp_path, project, profile_for("2.1.156"))
    after = _locations(tmp_path, project, profile_for("2.1.157"))
    assert before.memory_dir_source == "default"
    assert after.memory_dir_source == "projectSettings"


def test_project_dir_name_counts_from_2_1_234(tmp_path: Path, project: Path):
    env = _env(tmp_path, CLAUDE_CODE_PROJECT_DIR_NAME="shop")
    before = _locations(tmp_path, project, profile_for("2.1.233"), env=env)
    after = _locations(tmp_path, project, profile_for("2.1.234"), env=env)
    assert before.project_dir_name == sanitize_path(str(project))
    assert after.project_dir_name == "shop"


def test_an_nfd_folder_runs_from_2_1_160(tmp_path: Path):
    raw = unicodedata.normalize("NFD", "café")
    folder = tmp_path / raw
    (folder / ".git").mkdir(parents=True)
    before = _locations(tmp_path, folder, profile_for("2.1.159"))
    after = _locations(tmp_path, folder, profile_for("2.1.160"))
    assert any("exits in such a folder" in note for note in before.notes)
    assert after.notes == () and after.sanitized_project.endswith("cafe-")
