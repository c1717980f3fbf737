"""The memory prompt's structure and each model's output limit, against the recordings.

Only structure was recorded from Claude Code's prompt (section count, size band, whether it
names the memory folder or the 200-line limit); never its text.
"""

from __future__ import annotations

import pytest
from oracle_data import cases, load, minimal_transcript, set_env, workbench_json

from oracle.extract import prompt_shape

PROMPTS = load("prompt.json")
MODELS = load("models.json")


@pytest.mark.parametrize("row", cases(PROMPTS))
def test_memory_prompt_has_claude_codes_structure(row, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    set_env(
        monkeypatch,
        {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), **row["inputs"]["env"]},
        row["release"],
    )
    paths = workbench_json(["paths"], cwd=project)
    seen = row["observed"]
    assert paths["auto_memory_enabled"] == seen["present"]
    if not seen["present"]:
        return
    text = workbench_json(["prompt"], cwd=project)["text"]
    ours = prompt_shape(text, paths["memory_dir"]).to_json()
    want = seen["shape"]
    assert ours["sections"] == want["sections"]
    assert ours["band"] == want["band"]
    assert ours["names_memory_dir"] == want["names_memory_dir"]
    assert ours["mentions_line_limit"] == want["mentions_line_limit"]


@pytest.mark.parametrize("row", cases(MODELS))
def test_model_and_output_limit_match(row, tmp_path, monkeypatch):
    model = row["inputs"]["model"]
    project = tmp_path / "project"
    project.mkdir()
    set_env(
        monkeypatch,
        {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), **row["inputs"]["env"]},
        row["release"],
    )
    transcript = minimal_transcript(tmp_path / "session.jsonl", model)
    got = workbench_json(["gauge", str(transcript)], cwd=project)
    assert got["model"] == row["observed"]["model"]
    assert got["max_output_tokens"] == row["observed"]["max_tokens"]
