"""The github.com repo slug from a project's git files, without the git binary."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from workbench.engine.errors import UserInputError
from workbench.engine.team.repo import (
    detect_github_repo,
    parse_git_config,
    parse_github_repo,
    resolve_repo,
)


@pytest.mark.parametrize(
    ("url", "slug"),
    [
        ("https://github.com/acme/widgets.git", "acme/widgets"),
        ("https://github.com/acme/widgets", "acme/widgets"),
        ("https://github.com/acme/widgets/", "acme/widgets"),
        ("https://user:pw@github.com/acme/widgets.git", "acme/widgets"),
        ("http://GitHub.com/Acme/Widgets", "Acme/Widgets"),
        ("ssh://git@github.com/acme/widgets.git", "acme/widgets"),
        ("ssh://git@github.com:22/acme/widgets.git", "acme/widgets"),
        ("git://github.com/acme/widgets.git", "acme/widgets"),
        ("git+ssh://git@github.com/acme/widgets", "acme/widgets"),
        ("git@github.com:acme/widgets.git", "acme/widgets"),
        ("github.com:acme/widgets", "acme/widgets"),
        ("git@github.com:/acme/my.repo-name_2.git", "acme/my.repo-name_2"),
        ("  git@github.com:acme/widgets.git\n", "acme/widgets"),
    ],
)
def test_github_urls(url: str, slug: str):
    assert parse_github_repo(url) == slug


@pytest.mark.parametrize(
    "url",
    [
        "https://gitlab.com/acme/widgets.git",
        "git@gitlab.com:acme/widgets.git",
        "https://github.com.evil.example/acme/widgets",
        "https://evilgithub.com/acme/widgets",
        "https://github.com/acme",
        "https://github.com/acme/widgets/tree/main",
        "https://github.com/../widgets",
        "file:///srv/git/widgets.git",
        "/srv/git/widgets.git",
        "../widgets",
        "",
        "https://[::1/acme/widgets",
    ],
)
def test_non_github_urls(url: str):
    assert parse_github_repo(url) is None


def test_git_config_parsing_handles_quotes_comments_and_case():
    text = """
# a comment
[core]
    bare = false
[remote "origin"]  ; trailing comment
    URL = "git@github.com:acme/widgets.git" # comment
    fetch = +refs/heads/*:refs/remotes/origin/*
[Remote "Up\\"stream"]
    url = https://github.com/up/stream
[branch "main"]
    remote
"""
    entries = parse_git_config(text)
    assert ("remote.origin", "url", "git@github.com:acme/widgets.git") in entries
    assert ('remote.Up"stream', "url", "https://github.com/up/stream") in entries
    assert ("branch.main", "remote", "true") in entries


def _git_repo(root: Path, config: str) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(config)
    return root


def test_origin_wins_over_other_remotes(tmp_path: Path):
    repo = _git_repo(
        tmp_path / "p",
        '[remote "upstream"]\n url = https://github.com/up/stream\n'
        '[remote "origin"]\n url = git@github.com:acme/widgets.git\n',
    )
    (repo / "src" / "deep").mkdir(parents=True)
    assert detect_github_repo(str(repo / "src" / "deep")) == "acme/widgets"


def test_first_github_remote_when_origin_is_elsewhere(tmp_path: Path):
    repo = _git_repo(
        tmp_path / "p",
        '[remote "origin"]\n url = https://gitlab.com/acme/widgets\n'
        '[remote "mirror"]\n url = https://github.com/acme/mirror.git\n',
    )
    assert detect_github_repo(str(repo)) == "acme/mirror"


def test_insteadof_rewrites_apply(tmp_path: Path):
    repo = _git_repo(
        tmp_path / "p",
        '[url "git@github.com:"]\n insteadOf = gh:\n[remote "origin"]\n url = gh:acme/widgets\n',
    )
    assert detect_github_repo(str(repo)) == "acme/widgets"


def test_worktree_reads_the_common_config(tmp_path: Path):
    main = _git_repo(tmp_path / "main", '[remote "origin"]\n url = https://github.com/acme/wt\n')
    wt_git = main / ".git" / "worktrees" / "feature"
    wt_git.mkdir(parents=True)
    (wt_git / "commondir").write_text("../..\n")
    worktree = tmp_path / "feature"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {wt_git}\n")
    (wt_git / "gitdir").write_text(str(worktree / ".git") + "\n")
    assert detect_github_repo(str(worktree)) == "acme/wt"


def test_real_git_worktree_if_git_is_installed(tmp_path: Path):
    git = subprocess.run(["git", "--version"], capture_output=True)
    if git.returncode != 0:
        pytest.skip("git is not installed")
    main = tmp_path / "main"
    main.mkdir()
    env_args = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    run = lambda *a, cwd=main: subprocess.run(  # noqa: E731
        ["git", *env_args, *a], cwd=cwd, check=True, capture_output=True
    )
    run("init", "-q")
    run("remote", "add", "origin", "git@github.com:acme/real.git")
    run("commit", "-q", "--allow-empty", "-m", "init")
    run("worktree", "add", "-q", str(tmp_path / "wt"))
    assert detect_github_repo(str(tmp_path / "wt")) == "acme/real"


def test_resolve_repo_override_and_errors(tmp_path: Path):
    assert resolve_repo(str(tmp_path), "acme/widgets") == "acme/widgets"
    assert resolve_repo(str(tmp_path), "acme/widgets.git") == "acme/widgets"
    with pytest.raises(UserInputError, match="OWNER/NAME"):
        resolve_repo(str(tmp_path), "not a repo")
    with pytest.raises(UserInputError, match="--repo"):
        resolve_repo(str(tmp_path), None)
