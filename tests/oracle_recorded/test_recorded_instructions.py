"""Instruction files: what `workbench instructions` says loads, against what Claude Code sent.

The trees are our own files (`oracle.checks.instructions.trees`); the recording keeps, per
release, every file Claude Code sent at session start and after a Read, path and text in
order. The same tree is laid out again here, the workbench asked, and the lists compared.
Releases 2.1.88 and 2.1.332 are recorded.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from oracle_data import cases, fill, load, set_env, workbench_json

from oracle.checks.instructions import MANAGED, trees
from workbench.engine.profiles import profile_for

ROWS = load("instructions.json")
RECORDED_MANAGED = "<sandbox>/etc-upper/claude-code/"
"""Where the recording names managed files (Claude Code read them from /etc/claude-code)."""


def _write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _lay_out(root: Path, name: str, with_managed: bool) -> tuple[Path, tuple[str, ...]]:
    _title, tree = trees()[name]
    project = root / "project"
    (project / ".git").mkdir(parents=True)
    _write(project, tree.project)
    _write(root / "config", tree.config)
    _write(root, tree.sandbox)
    (root / "home").mkdir(exist_ok=True)
    if with_managed:
        _write(root / "managed", tree.managed)
    if tree.memory is not None:
        _write(_memory_dir(root), {"MEMORY.md": tree.memory})
    cwd = project / tree.cwd if tree.cwd else project
    return cwd, tree.reads


def _memory_dir(root: Path) -> Path:
    """The project's memory folder as the workbench resolves it (long paths get a hash)."""
    from workbench.engine import Engine

    env = {"HOME": str(root / "home"), "CLAUDE_CONFIG_DIR": str(root / "config")}
    return Path(Engine.open(root / "project", env=env).locations.memory_dir)


def _expected(blocks: list[dict], root: Path) -> list[tuple[str, str]]:
    managed = str(root / "managed")
    recorded_memory = "<sandbox>/config/projects/<sandbox-sanitized>-project/memory/"
    out = []
    for block in blocks:
        path = block["path"]
        if path.startswith(recorded_memory):
            path = str(_memory_dir(root) / path[len(recorded_memory) :])
        path = fill(path, str(root))
        path = path.replace("<sandbox>/etc-upper/claude-code", managed).replace(
            str(root / "etc-upper" / "claude-code"), managed
        )
        if path.startswith(MANAGED):
            path = managed + path[len(MANAGED) :]
        out.append((path, block["text"]))
    return out


def _rules_folder(path: str) -> str | None:
    for marker in ("/.claude/rules/", "/config/rules/"):
        if marker in path:
            return path.split(marker, 1)[0] + marker
    return None


def _canonical(files: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Runs of files from one rules folder sorted by path (the order of their folder listing
    differs between file systems); everything else as it is."""
    out: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    for item in files:
        folder = _rules_folder(item[0])
        if run and folder != _rules_folder(run[0][0]):
            out += sorted(run)
            run = []
        if folder is None:
            out.append(item)
        else:
            run.append(item)
    return out + sorted(run)


def _listing_order(folder: Path, loaded: list[str]) -> list[str]:
    """The loaded rule files in the order the folder lists its entries (subfolders in place)."""
    order: list[str] = []
    for name in os.listdir(folder):
        if (folder / name).is_dir():
            order += [p for p in _listing_order(folder / name, loaded) if p in loaded]
        elif str(folder / name) in loaded:
            order.append(str(folder / name))
    return order


@pytest.mark.parametrize("row", cases(ROWS))
def test_instruction_files_match_what_claude_code_sent(row, tmp_path, monkeypatch):
    root = tmp_path / "sandbox"
    root.mkdir()
    cwd, reads = _lay_out(root, row["case"], bool(row["raw"]["managed"]))
    env = {
        "HOME": str(root / "home"),
        "CLAUDE_CONFIG_DIR": str(root / "config"),
        "WORKBENCH_MANAGED_DIR": str(root / "managed"),
    }
    set_env(monkeypatch, env, row["release"])
    args = ["instructions"]
    for rel in reads:
        args += ["--read", str(root / "project" / rel)]
    got = workbench_json(args, cwd=cwd)
    assert got["claude_version"] == row["release"]
    ours = [(f["path"], f["content"]) for f in got["files"]]
    theirs = _expected(row["observed"]["start"], root)
    by_name = profile_for(row["release"]).instructions.rules_order == "name"
    if by_name:
        assert ours == theirs
    else:
        assert _canonical(ours) == _canonical(theirs)
        rules = root / "project" / ".claude" / "rules"
        loaded = [p for p, _ in ours if p.startswith(str(rules) + "/")]
        assert loaded == _listing_order(rules, loaded)
    if reads:
        assert [(f["path"], f["content"]) for f in got["on_read"]] == _expected(
            row["observed"]["on_read"], root
        )


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r["case"] == "sources"], ids=lambda r: r["release"]
)
def test_the_rules_folder_order_is_the_one_each_release_used(row):
    """2.1.88 sent a rules folder's files by name, 2.1.332 in the folder's own listing order
    (recorded beside what it sent)."""
    prefix = "<sandbox>/project/.claude/rules/"
    sent = [
        b["path"][len(prefix) :] for b in row["observed"]["start"] if b["path"].startswith(prefix)
    ]
    listing = row["raw"]["listings"]["<sandbox>/project/.claude/rules"]
    tops = list(dict.fromkeys(p.split("/", 1)[0] for p in sent))
    in_listing = [n for n in listing if n in tops]
    if profile_for(row["release"]).instructions.rules_order == "name":
        assert sent == sorted(sent)
    else:
        assert tops == in_listing
        assert sent != sorted(sent)  # this recording tells the two rules apart


def test_managed_files_are_described_as_each_release_did():
    rows = [r for r in ROWS if r["case"] == "sources" and r["raw"]["managed"]]
    assert rows
    for row in rows:
        start = row["observed"]["start"]
        managed = {b["description"] for b in start if b["path"].startswith(RECORDED_MANAGED)}
        user = {
            b["description"] for b in start if "/config/" in b["path"] and "MEMORY" not in b["path"]
        }
        rule = profile_for(row["release"]).instructions.managed_described_as
        assert (managed == user) == (rule == "user"), row["release"]


def test_the_recordings_cover_every_source_and_both_releases():
    assert {r["release"] for r in ROWS} >= {"2.1.88", "2.1.332"}
    sources = next(r for r in ROWS if r["case"] == "sources")
    paths = [b["path"] for b in sources["observed"]["start"]]
    assert any(p.startswith(RECORDED_MANAGED) for p in paths)
    assert any(p.endswith("/config/CLAUDE.md") for p in paths)
    assert any(p.endswith("CLAUDE.local.md") for p in paths)
    assert any("/.claude/rules/" in p for p in paths)
    assert any(p.endswith("/MEMORY.md") for p in paths)
    imports = next(r for r in ROWS if r["case"] == "imports")
    names = [b["path"].rsplit("/", 1)[-1] for b in imports["observed"]["start"]]
    assert "four4.md" in names and "five4.md" in names and "six4.md" in names
    assert "five5.md" not in names and "six5.md" not in names and "six6.md" not in names
    assert "missing.md" not in names and names.count("loop-a.md") == 1
