"""Claude Code's path rules: sanitizePath, git roots and worktrees, memory-folder resolution."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest

from workbench.engine.claude_paths import (
    auto_memory_enabled,
    config_home,
    djb2_hash,
    find_canonical_git_root,
    find_git_root,
    find_sanitized_dir,
    load_settings,
    memory_path_rejection,
    resolve_locations,
    sanitize_path,
    simple_hash,
    validate_memory_path,
)
from workbench.engine.profiles import profile_for

# Printed by node from Claude Code's sanitizePath / djb2Hash / simpleHash.
LONG_ASCII = "/home/dev/" + "very-long-folder-name/" * 12 + "project"
LONG_ASTRAL = "/Users/ana/código/" + "😀" * 100 + "/x"
NODE_REFERENCE = [
    ("/Users/foo/my-project", "-Users-foo-my-project", "jiemc7", 1179772567),
    ("/home/me/My Project (copy)/src", "-home-me-My-Project--copy--src", "kl9l3a", 1245042694),
    ("C:\\Users\\me\\repo", "C--Users-me-repo", "7g8ghv", -450531715),
    ("/tmp/emoji-😀-dir", "-tmp-emoji----dir", "hlbgwf", -1063732047),
    ("/srv/naïve_café.v2", "-srv-na-ve-caf--v2", "bd9kaa", -687409138),
    (
        LONG_ASCII,
        "-home-dev-very-long-folder-name-very-long-folder-name-very-long-folder-name-very-long-folder-name"
        "-very-long-folder-name-very-long-folder-name-very-long-folder-name-very-long-folder-name-very-long-fold-ui2ity",
        "ui2ity",
        -1844336086,
    ),
    (LONG_ASTRAL, "-Users-ana-c-digo-" + "-" * 182 + "-kx5pbe", "kx5pbe", -1265016938),
]


@pytest.mark.parametrize(("name", "sanitized", "hash36", "djb2"), NODE_REFERENCE)
def test_sanitize_path_matches_node(name: str, sanitized: str, hash36: str, djb2: int):
    assert djb2_hash(name) == djb2
    assert simple_hash(name) == hash36
    assert sanitize_path(name) == sanitized


def test_long_names_keep_200_characters_then_the_hash():
    out = sanitize_path(LONG_ASCII)
    prefix, _, suffix = out.rpartition("-")
    assert len(prefix) == 200 and suffix == simple_hash(LONG_ASCII)


def test_prefix_fallback_finds_a_folder_made_with_another_hash(tmp_path: Path):
    projects = tmp_path / "projects"
    bun_made = projects / (sanitize_path(LONG_ASCII)[:200] + "-bunhash9")
    (bun_made / "memory").mkdir(parents=True)
    assert find_sanitized_dir(projects, LONG_ASCII, must_contain="memory") == bun_made
    # Short names never use the fallback.
    assert find_sanitized_dir(projects, "/a/b") == projects / "-a-b"


def test_config_home_is_nfc_and_defaults_to_dot_claude(tmp_path: Path):
    decomposed = unicodedata.normalize("NFD", str(tmp_path / "café"))
    assert config_home({"CLAUDE_CONFIG_DIR": decomposed}) == unicodedata.normalize(
        "NFC", decomposed
    )
    assert config_home({"HOME": "/home/x"}) == "/home/x/.claude"


@pytest.mark.parametrize(
    ("raw", "tilde", "expected"),
    [
        ("/data/memory", False, "/data/memory/"),
        ("/data/memory///", False, "/data/memory/"),
        ("/data/./a/../memory", False, "/data/memory/"),
        ("~/notes", True, "/home/u/notes/"),
        ("~/notes", False, None),  # no ~ expansion for the env override
        ("~", True, None),
        ("~/", True, None),
        ("~/.", True, None),
        ("~/..", True, None),
        ("~/foo/..", True, None),
        ("relative/path", True, None),
        ("/a", False, None),  # under three characters: a root
        ("/", False, None),
        ("", False, None),
        ("/tmp/x\0y", False, None),
        ("//server/share", False, "/server/share/"),  # posix normalize collapses the UNC prefix
    ],
)
def test_validate_memory_path_rules(raw: str, tilde: bool, expected: str | None):
    assert validate_memory_path(raw, expand_tilde=tilde, home="/home/u") == expected
    assert (memory_path_rejection(raw, expand_tilde=tilde, home="/home/u") is None) == (
        expected is not None
    )


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), **extra}


def test_default_memory_dir_uses_the_sanitized_canonical_root(tmp_path: Path, project: Path):
    loc = resolve_locations(project, env=_env(tmp_path), policy_settings=tmp_path / "none.json")
    expected = f"{tmp_path}/cfg/projects/{sanitize_path(str(project))}/memory/"
    assert loc.memory_dir == expected and loc.memory_dir_source == "default"
    assert loc.entrypoint == expected + "MEMORY.md"
    assert loc.team_dir == expected + "team/"
    assert loc.transcripts_dir == f"{tmp_path}/cfg/projects/{sanitize_path(str(project))}"


def test_memory_base_follows_the_remote_memory_dir(tmp_path: Path, project: Path):
    env = _env(tmp_path, CLAUDE_CODE_REMOTE_MEMORY_DIR=str(tmp_path / "remote"))
    loc = resolve_locations(project, env=env, policy_settings=tmp_path / "none.json")
    assert loc.memory_dir.startswith(f"{tmp_path}/remote/projects/")
    # Transcripts stay under the config home.
    assert loc.transcripts_dir.startswith(f"{tmp_path}/cfg/projects/")


def test_env_override_wins_and_is_not_tilde_expanded(tmp_path: Path, project: Path):
    env = _env(tmp_path, CLAUDE_COWORK_MEMORY_PATH_OVERRIDE=str(tmp_path / "override"))
    loc = resolve_locations(project, env=env, policy_settings=tmp_path / "none.json")
    assert loc.memory_dir == f"{tmp_path}/override/" and loc.memory_dir_source == "env"
    assert loc.has_env_override and not loc.write_carve_out(loc.memory_dir + "a.md")

    env = _env(tmp_path, CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="~/mem")
    loc = resolve_locations(project, env=env, policy_settings=tmp_path / "none.json")
    assert loc.memory_dir_source == "default"
    assert [r.source for r in loc.rejected] == ["CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"]


def test_project_settings_are_refused_and_reported_by_2_1_88(tmp_path: Path, project: Path):
    _write_json(
        project / ".claude" / "settings.json", {"autoMemoryDirectory": str(tmp_path / "evil")}
    )
    loc = resolve_locations(
        project,
        env=_env(tmp_path),
        policy_settings=tmp_path / "none.json",
        profile=profile_for("2.1.88"),
    )
    assert loc.memory_dir_source == "default"
    assert "evil" not in loc.memory_dir
    assert [r.source for r in loc.rejected] == ["projectSettings"]


def test_trusted_settings_order_policy_flag_local_user(tmp_path: Path, project: Path):
    policy = tmp_path / "policy.json"
    flag = tmp_path / "flag.json"
    local = project / ".claude" / "settings.local.json"
    user = tmp_path / "cfg" / "settings.json"
    order = [
        ("policySettings", policy, "p"),
        ("flagSettings", flag, "f"),
        ("localSettings", local, "l"),
        ("userSettings", user, "u"),
    ]
    for _, path, folder in order:
        _write_json(path, {"autoMemoryDirectory": str(tmp_path / folder)})
    for source, path, folder in order:
        loc = resolve_locations(
            project, env=_env(tmp_path), flag_settings=flag, policy_settings=policy
        )
        assert (loc.memory_dir_source, loc.memory_dir) == (source, f"{tmp_path}/{folder}/")
        path.unlink()
    loc = resolve_locations(project, env=_env(tmp_path), flag_settings=flag, policy_settings=policy)
    assert loc.memory_dir_source == "default"


def test_settings_value_with_tilde_is_expanded(tmp_path: Path, project: Path):
    _write_json(tmp_path / "cfg" / "settings.json", {"autoMemoryDirectory": "~/my-memory"})
    loc = resolve_locations(project, env=_env(tmp_path), policy_settings=tmp_path / "none.json")
    assert (
        loc.memory_dir == f"{tmp_path}/home/my-memory/" and loc.memory_dir_source == "userSettings"
    )
    assert loc.write_carve_out(loc.memory_dir + "x.md")


def test_first_defined_setting_decides_even_when_invalid(tmp_path: Path, project: Path):
    _write_json(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": "~/"})
    _write_json(
        tmp_path / "cfg" / "settings.json", {"autoMemoryDirectory": str(tmp_path / "user-mem")}
    )
    loc = resolve_locations(project, env=_env(tmp_path), policy_settings=tmp_path / "none.json")
    assert loc.memory_dir_source == "default"
    assert [r.source for r in loc.rejected] == ["localSettings"]


def test_broken_settings_file_is_reported_not_fatal(tmp_path: Path, project: Path):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "settings.json").write_text("{not json", encoding="utf-8")
    loc = resolve_locations(project, env=_env(tmp_path), policy_settings=tmp_path / "none.json")
    assert loc.memory_dir_source == "default"
    assert loc.settings_errors and loc.settings_errors[0][0] == "userSettings"


def test_is_auto_mem_path_is_a_prefix_test_with_the_separator(tmp_path: Path, project: Path):
    loc = resolve_locations(project, env=_env(tmp_path), policy_settings=tmp_path / "none.json")
    assert loc.is_auto_mem_path(loc.memory_dir + "a.md")
    assert loc.is_auto_mem_path(loc.memory_dir + "team/../b.md")
    assert not loc.is_auto_mem_path(loc.memory_dir.rstrip("/") + "-evil/a.md")
    assert not loc.is_auto_mem_path(loc.memory_dir + "../x.md")


@pytest.mark.parametrize(
    ("env", "setting", "expected"),
    [
        ({}, None, True),
        ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, None, False),
        (
            {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "false"},
            False,
            True,
        ),  # defined-falsy wins over the setting
        ({"CLAUDE_CODE_SIMPLE": "yes"}, None, False),
        ({"CLAUDE_CODE_REMOTE": "true"}, None, False),
        ({"CLAUDE_CODE_REMOTE": "true", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r"}, None, True),
        ({}, False, False),
    ],
)
def test_auto_memory_enable_gates(tmp_path: Path, env: dict, setting: bool | None, expected: bool):
    project = tmp_path / "p"
    if setting is not None:
        _write_json(project / ".claude" / "settings.json", {"autoMemoryEnabled": setting})
    settings = load_settings(str(tmp_path / "cfg"), str(project), policy_settings=tmp_path / "none")
    assert auto_memory_enabled(env, settings) is expected


def _make_worktree(main: Path, worktree: Path, name: str = "wt") -> Path:
    git_dir = main / ".git" / "worktrees" / name
    git_dir.mkdir(parents=True)
    (git_dir / "commondir").write_text("../..\n", encoding="utf-8")
    (git_dir / "gitdir").write_text(str(worktree / ".git") + "\n", encoding="utf-8")
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {git_dir}\n", encoding="utf-8")
    return git_dir


def test_worktrees_share_the_main_repository_root(tmp_path: Path):
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    worktree = tmp_path / "feature"
    _make_worktree(main, worktree)
    (worktree / "src").mkdir()
    assert find_git_root(worktree / "src") == str(worktree)
    assert find_canonical_git_root(worktree / "src") == str(main)
    env = _env(tmp_path)
    a = resolve_locations(main, env=env, policy_settings=tmp_path / "none.json")
    b = resolve_locations(worktree, env=env, policy_settings=tmp_path / "none.json")
    assert a.memory_dir == b.memory_dir
    assert a.transcripts_dir != b.transcripts_dir  # transcripts follow the real cwd


def test_worktree_outside_the_worktrees_folder_is_not_trusted(tmp_path: Path):
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    rogue = tmp_path / "rogue-gitdir"
    rogue.mkdir()
    (rogue / "commondir").write_text(str(main / ".git"), encoding="utf-8")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (rogue / "gitdir").write_text(str(worktree / ".git"), encoding="utf-8")
    (worktree / ".git").write_text(f"gitdir: {rogue}", encoding="utf-8")
    assert find_canonical_git_root(worktree) == str(worktree)


def test_worktree_whose_back_pointer_names_another_folder_is_not_trusted(tmp_path: Path):
    main = tmp_path / "main"
    (main / ".git").mkdir(parents=True)
    worktree = tmp_path / "wt"
    git_dir = _make_worktree(main, worktree)
    (git_dir / "gitdir").write_text(str(tmp_path / "elsewhere" / ".git"), encoding="utf-8")
    assert find_canonical_git_root(worktree) == str(worktree)


def test_submodule_without_commondir_keeps_its_own_root(tmp_path: Path):
    module_git = tmp_path / "super" / ".git" / "modules" / "lib"
    module_git.mkdir(parents=True)
    sub = tmp_path / "super" / "lib"
    sub.mkdir(parents=True)
    (sub / ".git").write_text(f"gitdir: {module_git}", encoding="utf-8")
    assert find_canonical_git_root(sub) == str(sub)


def test_bare_repository_worktree_maps_to_the_bare_folder(tmp_path: Path):
    bare = tmp_path / "repo.git"
    git_dir = bare / "worktrees" / "wt"
    git_dir.mkdir(parents=True)
    (git_dir / "commondir").write_text("../..", encoding="utf-8")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (git_dir / "gitdir").write_text(str(worktree / ".git"), encoding="utf-8")
    (worktree / ".git").write_text(f"gitdir: {git_dir}", encoding="utf-8")
    assert find_canonical_git_root(worktree) == str(bare)


def test_project_root_resolves_symlinks(tmp_path: Path, project: Path):
    link = tmp_path / "link"
    os.symlink(project, link)
    loc = resolve_locations(link, env=_env(tmp_path), policy_settings=tmp_path / "none.json")
    assert loc.project_root == str(project)


def test_daily_log_and_session_memory_paths(tmp_path: Path, project: Path):
    from datetime import date

    loc = resolve_locations(project, env=_env(tmp_path), policy_settings=tmp_path / "none.json")
    assert loc.daily_log_path(date(2026, 3, 5)) == loc.memory_dir + "logs/2026/03/2026-03-05.md"
    assert loc.session_memory_path("abc") == f"{loc.transcripts_dir}/abc/session-memory/summary.md"
    assert loc.consolidate_lock == loc.memory_dir + ".consolidate-lock"
