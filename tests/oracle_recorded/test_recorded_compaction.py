"""Auto-compaction firing points and the transcripts Claude Code wrote, against the workbench.

`autocompact.json` holds, per release, model and override, the smallest reported usage at
which Claude Code compacted (or blocked), found to one token, and the count Claude Code
recorded when it fired. `transcripts/<release>/<case>.jsonl` are the sessions of a few of those
runs (one token under the point, then the point), sanitised: none of Claude Code's texts,
same lengths and structure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from oracle_data import DATA, cases, fill, load, minimal_transcript, set_env, workbench_json

from workbench.engine.claude_paths import sanitize_path

FIRINGS = load("autocompact.json")
TRANSCRIPTS = load("transcripts.json")
CEILING = 2_000_000
PEAK_TOLERANCE = 64


def _gauge(row, tmp_path, monkeypatch) -> dict:
    model = row["inputs"]["model"]
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), **row["inputs"]["env"]}
    set_env(monkeypatch, env, row["release"])
    transcript = minimal_transcript(tmp_path / "one-call.jsonl", model.replace("[1m]", ""))
    return workbench_json(["gauge", str(transcript), "--model", model], cwd=project)


def _compacts_at(gauge: dict) -> int | None:
    ac = gauge["thresholds"].get("autocompact")
    return ac if gauge["auto_compact_enabled"] and isinstance(ac, int) else None


def _threshold_verdict(row: dict) -> str:
    return (row.get("workbench") or {}).get("threshold_verdict", row["verdict"])


@pytest.mark.parametrize("row", cases(FIRINGS, verdict_of=_threshold_verdict))
def test_threshold_is_where_claude_code_fired(row, tmp_path, monkeypatch):
    gauge = _gauge(row, tmp_path, monkeypatch)
    seen = row["observed"]
    compacts, blocks = _compacts_at(gauge), gauge["thresholds"].get("blocking")
    count = seen.get("claude_count_at_fire")
    if seen["event"].startswith("none"):
        assert compacts is None or compacts > CEILING, "Claude Code never compacted"
        assert blocks is None or blocks > CEILING, "Claude Code never blocked"
    elif seen["event"] == "compacts before the first call":
        assert compacts is not None and compacts <= count
    elif seen["event"] == "compact":
        assert compacts is not None
        # The release's check pads the estimate after the last usage by 4/3 for newer
        # models: its recorded count sits exactly that padding under the threshold.
        trailing = seen.get("claude_trailing_estimate") or 0
        padding = -(-trailing * 4 // 3) - trailing if gauge["estimate_padding"] else 0
        assert compacts - count == padding, f"Claude Code compacted at {count:,}"
        assert blocks is None or blocks > count or blocks >= compacts
    else:
        assert seen["event"] == "stop"
        assert compacts is None or compacts > count, "Claude Code blocked without compacting"
        assert blocks == count


# --- the recorded transcripts -----------------------------------------------------------------


def _install(release: str, case: str, tmp_path: Path) -> tuple[Path, Path]:
    source = DATA / "transcripts" / release / f"{case}.jsonl"
    project = tmp_path / "project"
    project.mkdir()
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    session = next(r["sessionId"] for r in rows if r.get("sessionId"))
    folder = tmp_path / "config" / "projects" / sanitize_path(str(project.resolve()))
    folder.mkdir(parents=True)
    target = folder / f"{session}.jsonl"
    text = "".join(json.dumps(fill(r, str(tmp_path))) + "\n" for r in rows)
    target.write_text(text, encoding="utf-8")
    return project, target


def _with_file(rows: list[dict]) -> list[dict]:
    return [
        r for r in rows if (DATA / "transcripts" / r["release"] / f"{r['case']}.jsonl").exists()
    ]


@pytest.mark.parametrize("row", cases(_with_file(TRANSCRIPTS)))
def test_transcript_reads_back_as_claude_code_recorded(row, tmp_path, monkeypatch):
    project, path = _install(row["release"], row["case"], tmp_path)
    set_env(
        monkeypatch,
        {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), **row["inputs"]["env"]},
        row["release"],
    )
    seen = row["observed"]
    sessions = workbench_json(["transcripts"], cwd=project)
    assert len(sessions) == 1
    assert sessions[0]["compactions"] == len(seen["compactions"])
    if seen["models"]:
        assert sessions[0]["model"] in seen["models"]
    gauge = workbench_json(["gauge", str(path)], cwd=project)
    assert [c["pre_tokens"] for c in gauge["compactions"]] == [
        c["pre_tokens"] for c in seen["compactions"]
    ]
    replay = workbench_json(["replay", str(path)], cwd=project)
    assert replay["peak"] <= seen["largest_count"] + PEAK_TOLERANCE, "a false peak"


def _firing_rows() -> list:
    by_key = {(r["release"], r["case"]): r for r in FIRINGS}
    return [
        by_key[(r["release"], r["case"])]
        for r in _with_file(TRANSCRIPTS)
        if (r["release"], r["case"]) in by_key
    ]


@pytest.mark.parametrize("row", cases(_firing_rows()))
def test_replay_fires_where_claude_code_did(row, tmp_path, monkeypatch):
    """One token under the point Claude Code held off; at the point it acted: so must we."""
    project, path = _install(row["release"], row["case"], tmp_path)
    set_env(
        monkeypatch,
        {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), **row["inputs"]["env"]},
        row["release"],
    )
    model = row["inputs"]["model"]
    extra = ["--model", model] if "[1m]" in model else []
    replay = workbench_json(["replay", str(path), *extra], cwd=project)
    event = row["observed"]["event"]
    if event == "compact":
        assert [c["agrees"] for c in replay["compactions"]] == [True]
        assert replay["unrecorded_fires"] == []
    elif event == "stop":
        gauge = workbench_json(["gauge", str(path), *extra], cwd=project)
        assert replay["unrecorded_fires"] == [] and replay["compactions"] == []
        assert gauge["at_blocking"]
        assert replay["turns"][-1]["estimated_before"] < gauge["thresholds"]["blocking"]
    elif event.startswith("none"):
        assert replay["unrecorded_fires"] == [] and replay["compactions"] == []
    else:
        assert (
            replay["compactions"]
            and replay["compactions"][0]["threshold"]
            <= (replay["compactions"][0]["recorded_pre_tokens"])
        )


def test_recordings_cover_both_releases():
    assert {"2.1.88", "2.1.332"} <= {r["release"] for r in FIRINGS}
    for release in ("2.1.88", "2.1.332"):
        assert any((DATA / "transcripts" / release).glob("*.jsonl"))
