"""`workbench ls --json` over 10,000 memory files beside the I/O floor (bar: within 3x).

The floor is what any lister pays to see every file: `find` the files and `head` each one
(one process per batch, like `find | xargs head`). The command runs as a user runs it, piped
(stdout is not a terminal), interpreter start-up included; both read a warm page cache.

Two figures for the command: warm, as a user's second and later runs find it (the store keeps
each file's analysis between runs, and re-reads only files whose stat changed: it stats every
file but opens none), and cold, with that cache deleted before each run (every file read,
parsed and linted, and the cache written). The floor reads every file, so the cold figure is
the like-for-like one.

    .venv/bin/python benchmarks/bench_ls.py [--runs 5] [--source DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import REPO, median_seconds, report  # noqa: E402
from benchmarks.bench_scan import make_memories  # noqa: E402

BAR_RATIO = 3.0


def cpu_seconds(run: Callable[[], None]) -> float:
    """User + system CPU of the child processes `run` waits for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--source", help="measure the workbench package in this folder (a before figure)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ls-") as tmp:
        root = Path(tmp) / "memory"
        make_memories(root)
        home = Path(tmp) / "workbench-home"
        env = dict(os.environ, CLAUDE_CONFIG_DIR=str(Path(tmp) / "cfg"), HOME=tmp)
        env["WORKBENCH_HOME"] = str(home)
        env.pop("WORKBENCH_CONFIG", None)
        isolate = []
        if args.source:  # -P: that folder's package, not the checkout's
            env["PYTHONPATH"] = args.source
            isolate = ["-P"]
        command = [sys.executable, *isolate, "-m", "workbench", "ls", "--json"]
        command += ["--memory-dir", str(root)]
        floor_command = f"find {root} -type f -name '*.md' -print0 | xargs -0 head -q > /dev/null"

        def floor() -> None:
            subprocess.run(floor_command, shell=True, check=True)

        def listing() -> None:
            subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, cwd=tmp)

        def cold_listing() -> None:
            shutil.rmtree(home / "cache", ignore_errors=True)
            listing()

        out = subprocess.run(command, env=env, check=True, capture_output=True, cwd=REPO)
        # Interleaved, so a burst of load from elsewhere falls on all three alike.
        wall: dict[str, list[float]] = {"floor": [], "warm": [], "cold": []}
        cpu: dict[str, list[float]] = {"floor": [], "warm": [], "cold": []}
        runs = {"floor": floor, "warm": listing, "cold": cold_listing}
        listing()  # warm-up: the page cache, and the listing cache for the warm runs
        for _ in range(args.runs):
            for name, run in runs.items():
                wall[name].append(median_seconds(run, runs=1, warmup=0)[0])
                cpu[name].append(cpu_seconds(run))
        floor_s, floor_cpu = statistics.median(wall["floor"]), statistics.median(cpu["floor"])
        report("ls: I/O floor (find | xargs head) over 10,000 files", floor_s, "s")
        for name, label in (("warm", "unchanged since the last run"), ("cold", "no cache")):
            ls_s, ls_cpu = statistics.median(wall[name]), statistics.median(cpu[name])
            ratio = ls_s / floor_s
            report(
                f"ls: `workbench ls --json` piped, start-up included, {label}",
                ls_s,
                "s",
                extra=f"ratio {ratio:.1f}x the floor [bar <= {BAR_RATIO:.0f}x] "
                f"{'PASS' if ratio <= BAR_RATIO else 'FAIL'} "
                f"({len(out.stdout) / 1e6:.1f} MB of JSON)",
            )
            # CPU seconds (user + system of the processes) do not grow with a busy machine.
            report(
                f"ls: CPU of `workbench ls --json` beside the floor's, {label}",
                ls_cpu,
                "s",
                extra=f"(floor {floor_cpu:.3f} s): ratio {ls_cpu / floor_cpu:.1f}x",
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
