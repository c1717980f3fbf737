"""The project's sessions over time: summaries from the attribution pass, cached by size and
modification time, recomputed only where something changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from workbench.devtools.synth import SessionBuilder
from workbench.engine import Engine
from workbench.engine.claude_paths import project_root_for, sanitize_path
from workbench.engine.context.session_history import cache_file


def project(tmp_path: Path) -> tuple[Engine, Path]:
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    config = tmp_path / "claude"
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(config)}
    env["WORKBENCH_CLAUDE_COMMAND"] = ""
    folder = config / "projects" / sanitize_path(project_root_for(root))
    return Engine.open(root, env=env), folder


def session(folder: Path, number: int, *, reads: int, compact: str | None = None) -> Path:
    b = SessionBuilder(seed=number, session_id=f"{number:08d}-0000-4000-8000-000000000000")
    b.prompt(f"Task {number}")
    for k in range(reads):
        b.tool_call("Read", {"file_path": f"/p/f{k}.py"}, "line of code\n" * 1_500)
    if compact:
        b.compact("Summary.", trigger=compact)
        b.user(
            [{"type": "text", "text": "<command-name>/compact</command-name>"}]
            if compact == "manual"
            else "continue"
        )
        b.tool_call("Bash", {"command": "make"}, "ok\n" * 10)
    b.reply("Done.")
    return b.write(folder / f"{b.session_id}.jsonl")


def test_sessions_summarise_peaks_compactions_and_thresholds(tmp_path):
    engine, folder = project(tmp_path)
    session(folder, 1, reads=3)
    session(folder, 2, reads=40, compact="auto")
    session(folder, 3, reads=2, compact="manual")
    history = engine.context.session_history()
    by_id = {s.session_id[:8]: s for s in history.sessions}
    big = by_id["00000002"]
    assert big.peak > big.thresholds["warning"] and big.peak_call is not None
    assert big.first_crossings["warning"] is not None
    assert big.first_crossings["warning"] <= (big.first_crossings["autocompact"] or 10**9)
    assert big.compactions == {"auto": 1, "manual": 0, "reactive": 0}
    assert by_id["00000003"].compactions["manual"] == 1
    assert by_id["00000001"].compactions == {"auto": 0, "manual": 0, "reactive": 0}
    assert big.tokens_in == sum(c.recorded for c in engine.context.attribution(big.path).calls)
    assert history.totals()["sessions"] == 3 and history.totals()["auto"] == 1
    assert [s.title for s in history.sessions] == ["Task 1", "Task 2", "Task 3"]


def test_a_second_look_reads_only_what_changed(tmp_path):
    engine, folder = project(tmp_path)
    paths = [session(folder, n, reads=3) for n in range(1, 6)]
    first = engine.context.session_history()
    assert (first.read, first.cached) == (5, 0)
    again = project(tmp_path)[0].context.session_history()
    assert (again.read, again.cached) == (0, 5)
    assert [s.to_json() for s in again.sessions] == [s.to_json() for s in first.sessions]
    with paths[2].open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "custom-title", "customTitle": "x"}) + "\n")
    later = project(tmp_path)[0].context.session_history()
    assert (later.read, later.cached) == (1, 4)
    # Other rules in force (another release) mean other thresholds: recomputed.
    env = dict(engine.env, CLAUDE_CODE_AUTO_COMPACT_WINDOW="120000")
    other = Engine.open(tmp_path / "proj", env=env).context.session_history()
    assert other.read == 5
    assert cache_file(engine.context).is_file()


def test_a_broken_cache_is_ignored_and_rewritten(tmp_path):
    engine, folder = project(tmp_path)
    session(folder, 1, reads=2)
    store = cache_file(engine.context)
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text("{not json", encoding="utf-8")
    history = engine.context.session_history()
    assert history.read == 1 and not history.problems
    assert json.loads(store.read_text(encoding="utf-8"))["format"] == 1
    assert os.path.getsize(store) > 0
