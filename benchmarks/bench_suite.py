"""Wall time and CPU time of the whole test suite, as `make test` runs it (issue 17: under half
of the time before the shared harness and batched keys, on the 2-core machine).

Takes many minutes, so `make bench` leaves it out; `make bench-suite` runs it. Each run is a
fresh `python -m pytest -q` in a child with its own temporary folder; the figures are the
median wall time and the median CPU time of the child and everything it started (user +
system). CPU time is the steadier figure on a shared machine, where wall time depends on
what else runs. `--part tests/ui` times one folder instead.

`-n` is pytest-xdist's worker count, as `make test` passes it (`auto`: one per core; `0`: one
process). Several, comma-separated, are timed side by side, alternating run by run, with the
ratio of each to the first, so a before/after on a shared machine sees the same load:

    .venv/bin/python benchmarks/bench_suite.py [--runs 1] [--part tests/ui] [-n 0,2]
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_SUMMARY = re.compile(r"(\d+) passed")


def one_run(part: str | None, workers: str) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, tests passed and the exit code of one suite run."""
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as base:
        command = [sys.executable, "-m", "pytest", "-q", f"--basetemp={base}/t"]
        command += ["-n", workers, "--dist", "loadscope"]  # as `make test` runs it
        if part:
            command.append(part)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = done.stdout.strip().splitlines()[-1:] or [""]
    passed = _SUMMARY.search(tail[0])
    return wall, cpu, int(passed.group(1)) if passed else 0, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--part", default=None, help="a test folder or file instead of all")
    parser.add_argument("-n", dest="workers", default="auto", help="xdist workers, e.g. 0,2")
    args = parser.parse_args()
    settings = [w.strip() for w in args.workers.split(",") if w.strip()]
    walls: dict[str, list[float]] = {w: [] for w in settings}
    cpus: dict[str, list[float]] = {w: [] for w in settings}
    passed: dict[str, set[int]] = {w: set() for w in settings}
    codes: set[int] = set()
    for _ in range(args.runs):
        for workers in settings:  # alternating, so every setting sees the same load
            wall, cpu, count, code = one_run(args.part, workers)
            walls[workers].append(wall)
            cpus[workers].append(cpu)
            passed[workers].add(count)
            codes.add(code)
    name = f"suite {args.part}" if args.part else "suite"
    runs = f"{args.runs} run{'s' if args.runs > 1 else ''}"
    first = settings[0]
    for workers in settings:
        label = f"{name} -n {workers}"
        wall, cpu = statistics.median(walls[workers]), statistics.median(cpus[workers])
        counts = "/".join(str(c) for c in sorted(passed[workers]))
        print(f"{label} wall time: {wall:.0f} s median of {runs}, {counts} passed")
        print(f"{label} cpu time: {cpu:.0f} s median of {runs} (user + system)")
        if workers != first:
            ratio = wall / statistics.median(walls[first])
            print(f"{label} wall time: {ratio:.2f}x of -n {first}")
    if len({c for counts in passed.values() for c in counts}) > 1:
        print(f"{name}: the settings passed different numbers of tests")
        return 1
    if codes != {0}:
        print(f"{name}: pytest exited {sorted(codes)}; the figures include failing runs")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
