"""The project's session history over 200 generated sessions: cold, then warm (cached).

Cold summarises every session with the attribution pass; warm finds every summary in the
cache under the workbench's home (same size, same modification time, same rules) and reads
no transcript at all.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import ISOLATED_ENV, line, report  # noqa: E402

SESSIONS = 200


def build(root: Path) -> tuple[Path, Path, int]:
    """200 sessions of varied length (reads, greps, edits, some compactions)."""
    from workbench.devtools.synth import SessionBuilder
    from workbench.engine.claude_paths import project_root_for, sanitize_path

    project = root / "proj"
    project.mkdir(parents=True)
    config = root / "claude"
    folder = config / "projects" / sanitize_path(project_root_for(project))
    total = 0
    for number in range(SESSIONS):
        b = SessionBuilder(seed=number, session_id=f"{number:08d}-0000-4000-8000-000000000000")
        b.prompt(f"Task {number}")
        for step in range(30 + number % 40):
            if step % 3 == 0:
                b.tool_call(
                    "Read", {"file_path": f"/p/src/m{step}.py"}, "code line\n" * (100 + 13 * step)
                )
            elif step % 3 == 1:
                b.tool_call(
                    "Grep", {"pattern": f"def f{step}"}, f"src/m{step}.py:1: def f()\n" * 20
                )
            else:
                b.tool_call("Edit", {"file_path": f"/p/src/m{step}.py"}, "The file was updated.")
            if number % 5 == 0 and step == 25:
                b.compact("Summary of the work so far.", trigger="auto" if number % 2 else "manual")
        b.reply("Done.")
        total += b.write(folder / f"{b.session_id}.jsonl").stat().st_size
    return project, config, total


def main() -> int:
    from workbench.engine import Engine

    root = Path(tempfile.mkdtemp(prefix="workbench-bench-history-"))
    try:
        project, config, total = build(root)
        env = dict(ISOLATED_ENV, CLAUDE_CONFIG_DIR=str(config))
        home = root / "workbench-home"
        os.environ["WORKBENCH_HOME"] = str(home)

        def history() -> object:
            return Engine.open(project, env=env).context.session_history()

        cold: list[float] = []
        for _ in range(3):
            shutil.rmtree(home, ignore_errors=True)
            started = time.perf_counter()
            result = history()
            cold.append(time.perf_counter() - started)
        warm: list[float] = []
        for _ in range(5):
            started = time.perf_counter()
            warm_result = history()
            warm.append(time.perf_counter() - started)
        assert warm_result.cached == SESSIONS and warm_result.read == 0  # type: ignore[attr-defined]
        c, w = statistics.median(cold), statistics.median(warm)
        extra = f"({SESSIONS} sessions, {total / 1e6:.0f} MB, {result.totals()['calls']:,} calls)"  # type: ignore[attr-defined]
        report("history: 200 sessions, cold (every session summarised)", c, "s", extra=extra)
        report("history: 200 sessions, warm (every summary from the cache)", w, "s")
        line("history: warm against cold", f"{c / w:.0f}x faster", extra="median of 3 cold, 5 warm")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
