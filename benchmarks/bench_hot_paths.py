"""Start-up of the commands Claude Code runs as whole processes: the status line (on every
prompt refresh) and the SessionStart hook (in every session), beside a bare interpreter.

Each figure is the median wall time of N runs of the whole process (what Claude Code waits
for), with the median CPU time beside it (barely moved by a busy machine) and the ratio to
`python -c pass` measured in the same run, interleaved so load spikes hit all three alike.
Bytecode is compiled first: an installed workbench has it, and PYTHONDONTWRITEBYTECODE would
otherwise make every run compile the changed modules again.

    python benchmarks/bench_hot_paths.py [--runs N] [--tree DIR] [--against DIR] [--big]

`--tree DIR` measures another checkout (e.g. an export of the commit before a change) with
this interpreter; `--against DIR` measures it too, in the same interleaved loop, and adds the
before/after ratio of each median (the fairest comparison on a shared machine). The status line
runs on both payload shapes: with Claude Code's `context_window` figures, and with only a
transcript (a small one; with `--big`, also the generated 100 MB one, read from its end).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import REPO, line, process_env  # noqa: E402
from benchmarks.gen_transcript import ensure, generate  # noqa: E402


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
    parser.add_argument("--against", type=Path, default=None, help="a checkout to compare with")
    parser.add_argument("--big", action="store_true", help="also a 100 MB transcript")
    args = parser.parse_args()
    trees = [args.tree.resolve()] + ([args.against.resolve()] if args.against else [])
    for tree in trees:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "workbench")], check=True
        )
    with tempfile.TemporaryDirectory(prefix="wb-bench-hot-") as folder:
        base = Path(folder)
        project = base / "project"
        project.mkdir()
        env = process_env(base)
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
        transcripts = {"small": generate(project / "small.jsonl", mb=0.05, seed=3, images=False)}
        if args.big:
            transcripts["100 MB"] = ensure(100)
        status = {
            "session_id": "bench",
            "cwd": str(project),
            "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
            "workspace": {"current_dir": str(project)},
        }
        figures = {
            "context_window_size": 200_000,
            "current_usage": {
                "input_tokens": 3,
                "output_tokens": 500,
                "cache_creation_input_tokens": 2_000,
                "cache_read_input_tokens": 90_000,
            },
        }
        start = {"session_id": "bench", "cwd": str(project), "hook_event_name": "SessionStart"}
        py = sys.executable
        commands: dict[str, tuple[list[str], str]] = {
            "statusline": (["statusline"], json.dumps({**status, "context_window": figures})),
        }
        for size, transcript in transcripts.items():
            commands[f"statusline, {size} transcript only"] = (
                ["statusline"],
                json.dumps({**status, "transcript_path": str(transcript)}),
            )
        commands["hook SessionStart"] = (
            ["hook", "SessionStart"],
            json.dumps({**start, "source": "startup"}),
        )
        # (tree or None for bare python, argv, stdin), keyed by (tree index, name)
        cases: dict[tuple[int, str], tuple[Path | None, list[str], str]] = {
            (-1, "bare"): (None, [py, "-c", "pass"], "")
        }
        for index, tree in enumerate(trees):
            for name, (words, stdin) in commands.items():
                cases[(index, name)] = (tree, [py, "-m", "workbench", *words], stdin)
        walls: dict[tuple[int, str], list[float]] = {key: [] for key in cases}
        cpus: dict[tuple[int, str], list[float]] = {key: [] for key in cases}

        def run(key: tuple[int, str]) -> tuple[float, float]:
            tree, argv, stdin = cases[key]
            where = tree or REPO
            return _run(argv, stdin, where, {**env, "PYTHONPATH": str(where)})

        for key in cases:  # warm the file cache
            run(key)
        for _ in range(args.runs):
            for key in cases:
                wall, cpu = run(key)
                walls[key].append(wall)
                cpus[key].append(cpu)
    floor = statistics.median(walls[(-1, "bare")])
    floor_cpu = statistics.median(cpus[(-1, "bare")])
    line(
        "hot paths: bare, whole process",
        f"{floor * 1000:.0f} ms",
        extra=f"(CPU {floor_cpu * 1000:.0f} ms; median of {args.runs})",
    )
    for index, tree in enumerate(trees):
        where = "" if tree == REPO else f" ({tree.name})"
        for name in commands:
            wall = statistics.median(walls[(index, name)])
            cpu = statistics.median(cpus[(index, name)])
            extra = f"(CPU {cpu * 1000:.0f} ms; median of {args.runs})"
            extra += f", {wall / floor:.1f}x bare python wall, {cpu / floor_cpu:.1f}x its CPU"
            if index > 0:
                now_wall = statistics.median(walls[(0, name)])
                now_cpu = statistics.median(cpus[(0, name)])
                extra += f"; {trees[0].name} takes {now_wall / wall:.2f}x its wall"
                extra += f", {now_cpu / cpu:.2f}x its CPU"
            bar = "< 100 ms" if name.startswith("statusline") else ""
            line(f"hot paths{where}: {name}, whole process", f"{wall * 1000:.0f} ms", bar, extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
