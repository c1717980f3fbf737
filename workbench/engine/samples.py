"""Installing a sample project where Claude Code would look for it.

A sample project in `sample_projects/<name>/` is laid out as:

    sample.toml    description, the github remote, and file ages in days
    repo/          the project's working tree (becomes the project root; a `.git` is made)
    memory/        the auto-memory folder: MEMORY.md, topic files, team/, logs/
    transcripts/   <session>.jsonl files and <session>/session-memory/summary.md

Installing copies it under a destination folder: the working tree at `<dest>/<repo_name>`, and a
Claude config home at `<dest>/claude-home` holding `projects/<sanitized root>/memory/` and the
transcripts, exactly where Claude Code would put them. File ages are applied relative to now,
so "stale" memories stay stale whenever the demo runs.
"""

from __future__ import annotations

import os
import shutil
import time
import tomllib
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from workbench.engine.claude_paths import project_root_for, sanitize_path
from workbench.engine.errors import NotFoundError
from workbench.paths import bundled_dir

DAY_SECONDS = 86_400


@dataclass(frozen=True)
class InstalledSample:
    """Where an installed sample's parts ended up."""

    name: str
    project_root: Path
    config_home: Path
    memory_dir: Path
    transcripts_dir: Path
    remote: str | None
    description: str


def samples_root() -> Path:
    """The folder holding the shipped sample projects."""
    return bundled_dir("sample_projects")


def list_samples() -> list[str]:
    """Names of the shipped sample projects."""
    root = samples_root()
    return sorted(p.name for p in root.iterdir() if (p / "sample.toml").is_file())


def install_sample(
    name: str, dest: str | os.PathLike[str], *, now: float | None = None
) -> InstalledSample:
    """Copy sample `name` under `dest` as a project plus its Claude config home."""
    source = samples_root() / name
    meta_file = source / "sample.toml"
    if not meta_file.is_file():
        available = ", ".join(list_samples()) or "none"
        raise NotFoundError(f"no sample project named {name!r} (available: {available})")
    meta = tomllib.loads(meta_file.read_text(encoding="utf-8"))
    info = meta.get("sample", {})
    repo_name = info.get("repo_name", name)
    remote = info.get("remote")
    dest_path = Path(dest)
    project = dest_path / repo_name
    if (source / "repo").is_dir():
        shutil.copytree(source / "repo", project, dirs_exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)
    _make_git_dir(project, remote)

    root = project_root_for(project)
    config_home = dest_path / "claude-home"
    project_dir = config_home / "projects" / sanitize_path(root)
    memory_dir = project_dir / "memory"
    if (source / "memory").is_dir():
        shutil.copytree(source / "memory", memory_dir, dirs_exist_ok=True)
    memory_dir.mkdir(parents=True, exist_ok=True)
    if (source / "transcripts").is_dir():
        shutil.copytree(source / "transcripts", project_dir, dirs_exist_ok=True)

    _apply_ages(memory_dir, project_dir, meta.get("ages", {}), now or time.time())
    return InstalledSample(
        name=name,
        project_root=Path(root),
        config_home=config_home,
        memory_dir=memory_dir,
        transcripts_dir=project_dir,
        remote=remote,
        description=info.get("description", ""),
    )


def _make_git_dir(project: Path, remote: str | None) -> None:
    # A minimal repository is enough: Claude Code only looks for `.git` and reads the remote.
    git = project / ".git"
    if git.exists():
        return
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "objects").mkdir()
    (git / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    if remote:
        config += (
            f'[remote "origin"]\n\turl = {remote}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
        )
    (git / "config").write_text(config, encoding="utf-8")


def _apply_ages(memory_dir: Path, project_dir: Path, ages: dict[str, float], now: float) -> None:
    """Set mtimes: listed files get their age in days; others a minute apart, newest first.
    A daily log is also named for the day its age puts it on (see `_log_for_day`)."""
    files = sorted(p for p in project_dir.rglob("*") if p.is_file())
    for order, path in enumerate(files):
        rel_memory = _rel(path, memory_dir)
        key = f"memory/{rel_memory}" if rel_memory else f"transcripts/{_rel(path, project_dir)}"
        age_days = ages.get(key)
        stamp = now - age_days * DAY_SECONDS if age_days is not None else now - 600 - order * 60
        if age_days is not None and rel_memory is not None:
            path = _log_for_day(memory_dir, path, rel_memory, stamp)
        os.utime(path, (stamp, stamp))


def _log_for_day(memory_dir: Path, path: Path, rel: str, stamp: float) -> Path:
    """A daily log (`logs/YYYY/MM/YYYY-MM-DD.md`) moved to the local day of `stamp`.

    The sample names its logs for the day they were written when it was made; installed
    later, a log "10 days old" would otherwise keep a name from weeks before, and the tree
    would show `2026-11-20` beside an age that does not fit it."""
    parts = rel.split("/")
    if len(parts) != 4 or parts[0] != "logs" or not _is_day_name(parts[3]):
        return path
    day = datetime.fromtimestamp(stamp).date()  # local, as Claude Code names its logs
    target = memory_dir / "logs" / f"{day:%Y}" / f"{day:%m}" / f"{day:%Y-%m-%d}.md"
    if target == path or target.exists():  # two logs on one day keep their own names
        return path
    target.parent.mkdir(parents=True, exist_ok=True)
    path.rename(target)
    for folder in (path.parent, path.parent.parent):
        if not any(folder.iterdir()):
            folder.rmdir()
    return target


def _is_day_name(name: str) -> bool:
    try:
        date.fromisoformat(name.removesuffix(".md"))
    except ValueError:
        return False
    return name.endswith(".md")


def _rel(path: Path, folder: Path) -> str | None:
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return None
