"""MEMORY.md code point by code point: which characters the workbench says load, against what
each release kept, removed or turned into a line break (`index_chars.json`).

The blocks are rebuilt from `oracle.checks.index_chars` (the whole BMP and plane 1, the tag and
variation-selector blocks, samples of the other planes); the recording holds the fates as
ranges.
"""

from __future__ import annotations

import pytest
from oracle_data import cases, load, set_env, workbench_json

from oracle.checks.index_chars import blocks, content, expand, read_back
from oracle.checks.memory_md import memory_dir_rel

ROWS = load("index_chars.json")


@pytest.mark.parametrize("row", cases(ROWS))
def test_every_code_point_loads_as_claude_code_loaded_it(row, tmp_path, monkeypatch):
    _, points, separated = blocks()[row["case"]]
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "config"
    memory = config / memory_dir_rel(str(project.resolve()))
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_bytes(content(points, separated).encode("utf-8"))
    set_env(monkeypatch, {"CLAUDE_CONFIG_DIR": str(config)}, row["release"])
    got = workbench_json(["index"], cwd=project)
    ours = read_back(got["loaded_content"] or "", points, separated)
    assert ours is not None, "the workbench's loaded text could not be read back"
    theirs = expand(points, row["observed"]["ranges"])
    wrong = [
        f"U+{cp:04X}: {c} by Claude Code, {o} by the workbench"
        for cp, c, o in zip(points, theirs, ours, strict=True)
        if c != o
    ]
    assert not wrong, f"{len(wrong)} code points differ, e.g. " + "; ".join(wrong[:4])


def test_the_recording_covers_both_releases_and_every_block():
    if not ROWS:
        pytest.skip("no index_chars.json recorded yet")
    assert {r["release"] for r in ROWS} >= {"2.1.88", "2.1.332"}
    assert {r["case"] for r in ROWS} == set(blocks())
