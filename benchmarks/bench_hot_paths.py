"""Start-up of the commands Claude Code runs as whole processes: the status line (on every
prompt refresh) and the SessionStart hook (in every session), beside a bare interpreter.

Each figure is the median wall time of N runs of the whole process (what Claude Code waits
for), with the median CPU time beside it (barely moved by a busy machine) and the ratio to
`python -c pass` measured in the same run, interleaved so load spikes hit all three alike.
Bytecode is compiled first: an installed workbench has it, and PYTHONDONTWRITEBYTECODE would
otherwise make every run compile the changed modules again.

    python benchmarks/bench_hot_paths.py [--runs N] [--tree DIR]

`--tree DIR` measures another checkout (e.g. an export of the commit before a change) with
this interpreter, for before/after figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import REPO, line  # noqa: E402


def _run(argv: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=cwd, env=env, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout to measure")
    args = parser.parse_args()
    tree = args.tree.resolve()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "workbench")], check=True)
    with tempfile.TemporaryDirectory(prefix="wb-bench-hot-") as folder:
        base = Path(folder)
        project = base / "project"
        project.mkdir()
        env = {
            **os.environ,
            "HOME": str(base / "home"),
            "CLAUDE_CONFIG_DIR": str(base / "claude"),
            "WORKBENCH_HOME": str(base / "workbench"),
            "PYTHONPATH": str(tree),
            "NO_COLOR": "1",
        }
        env.pop("WORKBENCH_CONFIG", None)
        # A small memory folder, so SessionStart has an index to report on.
        memory = base / "claude" / "projects" / str(project).replace("/", "-") / "memory"
        memory.mkdir(parents=True)
        lines = []
        for i in range(20):
            (memory / f"note_{i}.md").write_text(
                f"---\nname: Note {i}\ndescription: note {i}\ntype: project\n---\n\nBody.\n"
            )
            lines.append(f"- [Note {i}](note_{i}.md) — note {i}\n")
        (memory / "MEMORY.md").write_text("".join(lines))
        status = {
            "session_id": "bench",
            "cwd": str(project),
            "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
            "workspace": {"current_dir": str(project)},
            "context_window": {
                "context_window_size": 200_000,
                "current_usage": {
                    "input_tokens": 3,
                    "output_tokens": 500,
                    "cache_creation_input_tokens": 2_000,
                    "cache_read_input_tokens": 90_000,
                },
            },
        }
        start = {"session_id": "bench", "cwd": str(project), "hook_event_name": "SessionStart"}
        py = sys.executable
        cases = {
            "bare": ([py, "-c", "pass"], ""),
            "statusline": ([py, "-m", "workbench", "statusline"], json.dumps(status)),
            "hook SessionStart": (
                [py, "-m", "workbench", "hook", "SessionStart"],
                json.dumps({**start, "source": "startup"}),
            ),
        }
        walls: dict[str, list[float]] = {name: [] for name in cases}
        cpus: dict[str, list[float]] = {name: [] for name in cases}
        for argv, stdin in cases.values():  # warm the file cache
            _run(argv, stdin, tree, env)
        for _ in range(args.runs):
            for name, (argv, stdin) in cases.items():
                wall, cpu = _run(argv, stdin, tree, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
    floor = statistics.median(walls["bare"])
    floor_cpu = statistics.median(cpus["bare"])
    where = "" if tree == REPO else f" ({tree.name})"
    for name in cases:
        wall = statistics.median(walls[name])
        cpu = statistics.median(cpus[name])
        extra = f"(CPU {cpu * 1000:.0f} ms; median of {args.runs})"
        if name != "bare":
            extra += f", {wall / floor:.1f}x bare python wall, {cpu / floor_cpu:.1f}x its CPU"
        bar = "< 100 ms" if name == "statusline" else ""
        line(f"hot paths{where}: {name}, whole process", f"{wall * 1000:.0f} ms", bar, extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
