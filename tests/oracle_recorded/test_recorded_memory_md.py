"""MEMORY.md: the text the workbench says loads, against what Claude Code actually sent.

The index shapes are our own generated text (`oracle.checks.memory_md.shapes`); the
recording keeps a hash of what each release loaded, whether it sent a block at all, and
whether it warned.
"""

from __future__ import annotations

import hashlib

import pytest
from oracle_data import cases, load, set_env, workbench_json

from oracle.checks.memory_md import memory_dir_rel, shapes

ROWS = load("memory_md.json")


@pytest.mark.parametrize("row", cases(ROWS))
def test_loaded_text_matches_what_claude_code_sent(row, tmp_path, monkeypatch):
    content = shapes()[row["case"]][1]
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "config"
    memory = config / memory_dir_rel(str(project.resolve()))
    memory.mkdir(parents=True)
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    (memory / "MEMORY.md").write_bytes(data)
    set_env(monkeypatch, {"CLAUDE_CONFIG_DIR": str(config)}, row["release"])
    got = workbench_json(["index"], cwd=project)
    seen = row["observed"]
    if not seen["block"]:
        assert not got["loaded_content"]
        return
    loaded = got["loaded_content"] or ""
    assert hashlib.sha256(loaded.encode("utf-8")).hexdigest() == seen["loaded_sha256"], (
        f"Claude Code loaded {seen['loaded_units']} units in {seen['loaded_lines']} lines"
    )
    assert (got["warning"] is not None) == seen["warning"]


def test_the_shapes_cover_every_limit():
    names = {r["case"] for r in ROWS}
    assert {"lines-250", "length-30k", "crlf-at-limit", "trailing-1f", "single-huge-line"} <= names
    assert {"frontmatter-comments", "astral"} <= names
