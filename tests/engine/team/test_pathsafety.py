"""Path safety (spec 03 §1.6): a traversal corpus; nothing resolves outside the team folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.errors import PathTraversalError
from workbench.engine.team.pathsafety import (
    is_real_path_within_team_dir,
    is_team_mem_path,
    js_decode_uri_component,
    realpath_deepest_existing,
    sanitize_path_key,
    validate_team_mem_key,
    validate_team_mem_write_path,
)


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    """A memory folder with a team folder, a sibling `team-evil`, and an outside folder."""
    root = tmp_path / "memory"
    (root / "team" / "sub").mkdir(parents=True)
    (root / "team-evil").mkdir()
    (tmp_path / "outside").mkdir()
    return root


def team_dir(memory: Path) -> str:
    return str(memory / "team") + os.sep


def files_outside(tmp_path: Path, memory: Path) -> list[Path]:
    team = memory / "team"
    return [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and team not in p.parents and not p.is_symlink()
    ]


HOSTILE_KEYS = [
    "../escape.md",
    "sub/../../escape.md",
    "..",
    ".",
    "",
    "sub/..",
    "../team-evil/x.md",  # the prefix attack
    "../team/../team-evil/x.md",
    "%2e%2e%2fescape.md",
    "%2E%2E%2Fescape.md",
    "..%2fescape.md",
    "%2e%2e/escape.md",
    "sub%2f..%2f..%2fescape.md",
    "%2e%2e%5cescape.md",
    "a%2Fb.md",
    "\uff0e\uff0e\uff0fescape.md",  # full-width dots and slash
    "\uff0e\uff0e/escape.md",
    "a\uff0fb.md",
    "a\uff3cb.md",  # full-width backslash
    "..\\escape.md",
    "sub\\x.md",
    "/etc/passwd",
    "/" + "tmp/x.md",
    "a\0b.md",
    "\0",
    "sub/\0/x.md",
]


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_hostile_keys_are_refused(memory: Path, key: str):
    with pytest.raises(PathTraversalError):
        validate_team_mem_key(key, team_dir(memory))


@pytest.mark.parametrize(
    ("key", "relative"),
    [
        ("notes.md", "notes.md"),
        ("sub/deeper/notes.md", "sub/deeper/notes.md"),
        ("a..b.md", "a..b.md"),
        ("sub/./x.md", "sub/x.md"),
        ("sub/../x.md", "x.md"),
        ("%41.md", "%41.md"),  # decodes to "A.md": no traversal, kept as written
        ("%ZZ%2f.md", "%ZZ%2f.md"),  # malformed escapes: not URL-encoded at all
        ("café.md", "café.md"),
        ("\ufb01le.md", "\ufb01le.md"),  # the "fi" ligature normalises, harmlessly
        ("sub//x.md", "sub/x.md"),
    ],
)
def test_safe_keys_resolve_inside(memory: Path, key: str, relative: str):
    assert validate_team_mem_key(key, team_dir(memory)) == str(memory / "team" / relative)


def test_symlinked_folder_leading_outside_is_refused(tmp_path: Path, memory: Path):
    (memory / "team" / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(PathTraversalError, match="symlink"):
        validate_team_mem_key("link/x.md", team_dir(memory))
    with pytest.raises(PathTraversalError):
        validate_team_mem_key("link", team_dir(memory))


def test_symlinked_file_leading_outside_is_refused(tmp_path: Path, memory: Path):
    target = tmp_path / "outside" / "victim.md"
    target.write_text("keep me")
    (memory / "team" / "victim.md").symlink_to(target)
    with pytest.raises(PathTraversalError):
        validate_team_mem_key("victim.md", team_dir(memory))


def test_dangling_symlinks_are_refused(tmp_path: Path, memory: Path):
    (memory / "team" / "dangling.md").symlink_to(tmp_path / "outside" / "new.md")
    (memory / "team" / "dangling-dir").symlink_to(tmp_path / "nowhere" / "dir")
    with pytest.raises(PathTraversalError, match="dangling"):
        validate_team_mem_key("dangling.md", team_dir(memory))
    with pytest.raises(PathTraversalError, match="dangling"):
        validate_team_mem_key("dangling-dir/x.md", team_dir(memory))


def test_symlink_loop_is_refused(memory: Path):
    loop = memory / "team" / "loop"
    loop.symlink_to(loop)
    with pytest.raises(PathTraversalError, match="loop"):
        validate_team_mem_key("loop/x.md", team_dir(memory))


def test_symlinks_that_stay_inside_are_fine(memory: Path):
    (memory / "team" / "alias").symlink_to(memory / "team" / "sub", target_is_directory=True)
    assert validate_team_mem_key("alias/x.md", team_dir(memory)) == str(
        memory / "team" / "alias" / "x.md"
    )


def test_a_team_folder_that_is_itself_a_symlink_still_works(tmp_path: Path):
    real = tmp_path / "real-team"
    real.mkdir()
    memory = tmp_path / "mem"
    memory.mkdir()
    (memory / "team").symlink_to(real, target_is_directory=True)
    assert validate_team_mem_key("x.md", str(memory / "team") + "/") == str(memory / "team/x.md")


def test_missing_team_folder_allows_plain_keys(tmp_path: Path):
    memory = tmp_path / "fresh"
    assert validate_team_mem_key("a/b.md", str(memory / "team") + "/") == str(
        memory / "team/a/b.md"
    )


def test_a_file_where_a_folder_should_be_walks_up(memory: Path):
    (memory / "team" / "file.md").write_text("x")
    resolved = validate_team_mem_key("file.md/x.md", team_dir(memory))
    assert resolved == str(memory / "team" / "file.md" / "x.md")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_unverifiable_paths_fail_closed(memory: Path):
    locked = memory / "team" / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        with pytest.raises(PathTraversalError, match="cannot verify"):
            validate_team_mem_key("locked/x.md", team_dir(memory))
    finally:
        locked.chmod(0o700)


def test_write_path_validation(memory: Path, monkeypatch: pytest.MonkeyPatch):
    team = team_dir(memory)
    assert validate_team_mem_write_path(team + "a.md", team) == team + "a.md"
    monkeypatch.chdir(memory)
    assert validate_team_mem_write_path("team/sub/../b.md", team) == team + "b.md"
    for bad in (
        team + "../a.md",
        str(memory / "team-evil" / "a.md"),
        str(memory / "team"),
        "team-evil/a.md",
        team + "a\0.md",
        "/etc/passwd",
    ):
        with pytest.raises(PathTraversalError):
            validate_team_mem_write_path(bad, team)


def test_write_path_through_a_symlink_is_refused(tmp_path: Path, memory: Path):
    (memory / "team" / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(PathTraversalError):
        validate_team_mem_write_path(team_dir(memory) + "out/x.md", team_dir(memory))


def test_realpath_deepest_existing_rejoins_the_missing_tail(tmp_path: Path, memory: Path):
    (memory / "team" / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    deep = str(memory / "team" / "link" / "a" / "b.md")
    assert realpath_deepest_existing(deep) == str((tmp_path / "outside").resolve() / "a" / "b.md")
    assert realpath_deepest_existing("/") == "/"


def test_is_real_path_within_team_dir(tmp_path: Path, memory: Path):
    real_team = str((memory / "team").resolve())
    assert is_real_path_within_team_dir(real_team, team_dir(memory))
    assert is_real_path_within_team_dir(real_team + "/x.md", team_dir(memory))
    assert not is_real_path_within_team_dir(real_team + "-evil/x.md", team_dir(memory))
    assert not is_real_path_within_team_dir(str(tmp_path / "outside"), team_dir(memory))
    # No team folder: no symlink inside it can exist.
    assert is_real_path_within_team_dir("/anything", str(tmp_path / "none" / "team") + "/")


def test_is_team_mem_path_has_no_prefix_confusion(memory: Path):
    assert is_team_mem_path(str(memory / "team" / "x.md"), team_dir(memory))
    assert not is_team_mem_path(str(memory / "team-evil" / "x.md"), team_dir(memory))
    assert not is_team_mem_path(str(memory / "team" / ".." / "x.md"), team_dir(memory))


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [("a%20b", "a b"), ("%E2%82%AC", "€"), ("%2e%2E", ".."), ("plain", "plain")],
)
def test_decode_uri_component(raw: str, decoded: str):
    assert js_decode_uri_component(raw) == decoded


@pytest.mark.parametrize("raw", ["%", "%Z1", "%E2%82", "%C0%AF", "%ED%A0%80", "%FF"])
def test_decode_uri_component_throws_like_javascript(raw: str):
    with pytest.raises(ValueError):
        js_decode_uri_component(raw)


def test_sanitize_returns_the_key_unchanged():
    assert sanitize_path_key("sub/notes.md") == "sub/notes.md"


_FRAGMENTS = [
    "..",
    ".",
    "/",
    "%2e",
    "%2E",
    "%2f",
    "%5c",
    "%",
    "\uff0e",
    "\uff0f",
    "\uff3c",
    "\\",
    "\0",
    "a",
    "b.md",
    "team",
    "team-evil",
    "link",
    "dangling",
    "~",
    "sub",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=8).map("".join))
def test_property_accepted_keys_never_write_outside(tmp_path_factory, key: str):
    base = tmp_path_factory.mktemp("prop")
    memory = base / "memory"
    (memory / "team" / "sub").mkdir(parents=True)
    (memory / "team-evil").mkdir()
    (base / "outside").mkdir()
    (memory / "team" / "link").symlink_to(base / "outside", target_is_directory=True)
    (memory / "team" / "dangling").symlink_to(base / "outside" / "created-by-link")
    try:
        resolved = validate_team_mem_key(key, team_dir(memory))
    except PathTraversalError:
        return
    assert resolved.startswith(team_dir(memory))
    target = Path(resolved)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("pulled")
    except OSError:
        pass  # e.g. a file in the way; what matters is where a write could land
    assert files_outside(base, memory) == []
    assert not (base / "outside" / "created-by-link").exists()
