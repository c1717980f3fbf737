"""Wall time and CPU time of the whole test suite, as `make test` runs it (issue 17: under half
of the time on the day the issue was filed, on the 2-core machine).

Takes many minutes, so `make bench` leaves it out; `make bench-suite` runs it. Each run is a
fresh `python -m pytest -q` in a child with its own temporary folder and bytecode on (as
`make test` runs it); the figures are the median wall time and the median CPU time of the
child and everything it started (user + system). CPU time is the steadier figure on a shared
machine, where wall time depends on what else runs. `--part tests/ui` times one folder instead.

`-n` is pytest-xdist's worker count, as `make test` passes it (default: two a core; `0`: one
process). Several, comma-separated, are timed side by side, alternating run by run, with the
ratio of each to the first, so a before/after on a shared machine sees the same load.
`--against DIR` times another checkout's suite beside this one's, with that checkout's own
`.venv` and its own way of running (`--against-n`: its worker count; `none`, the default,
runs it in one process without asking for xdist, as suites before xdist ran).
`--common-files` then times, in both, only the test modules both checkouts have: the same
tests (as they stand in each), where the whole suites differ by the tests added since.

    .venv/bin/python benchmarks/bench_suite.py [--runs 1] [--part tests/ui] [-n 0,4]
        [--against DIR [--against-n none] [--common-files]]
"""

from __future__ import annotations

import argparse
import os
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
_FAILED = re.compile(r"(\d+) failed")


def one_run(
    checkout: Path, python: str, parts: list[str], workers: str
) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds, tests passed and the exit code of one suite run."""
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as base:
        command = [python, "-m", "pytest", "-q", f"--basetemp={base}/t"]
        if workers != "none":
            command += ["-n", workers, "--dist", "loadscope"]  # as `make test` runs it
        command += parts
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=checkout, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = done.stdout.strip().splitlines()[-1:] or [""]
    passed = _SUMMARY.search(tail[0])
    failed = _FAILED.search(tail[0])
    if failed:
        print(f"  ({checkout.name} -n {workers}: {failed.group(1)} failed: {tail[0]})")
    return wall, cpu, int(passed.group(1)) if passed else 0, done.returncode


def test_files(checkout: Path) -> set[str]:
    """The test modules of a checkout, relative to it."""
    return {p.relative_to(checkout).as_posix() for p in (checkout / "tests").rglob("test_*.py")}


def default_workers() -> str:
    """What `make test` passes: two workers a core."""
    return str(2 * len(os.sched_getaffinity(0)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--part", default=None, help="a test folder or file instead of all")
    parser.add_argument("-n", dest="workers", default=default_workers(), help="e.g. 0,4")
    parser.add_argument("--against", default=None, help="another checkout to time beside")
    parser.add_argument("--against-n", default="none", help="its xdist workers (none: off)")
    parser.add_argument(
        "--common-files",
        action="store_true",
        help="with --against: time, in both, only the test modules both checkouts have",
    )
    args = parser.parse_args()
    parts = [args.part] if args.part else []
    if args.common_files and args.against:
        parts = sorted(test_files(REPO) & test_files(Path(args.against).resolve()))
        print(f"timing the {len(parts)} test modules both checkouts have")
    # (label, checkout, python, workers), the first being what the others are compared with
    settings = [
        (f"-n {w.strip()}", REPO, sys.executable, w.strip())
        for w in args.workers.split(",")
        if w.strip()
    ]
    if args.against:
        other = Path(args.against).resolve()
        python = str(other / ".venv" / "bin" / "python")
        settings.append((f"{other.name} -n {args.against_n}", other, python, args.against_n))
    walls: dict[str, list[float]] = {s[0]: [] for s in settings}
    cpus: dict[str, list[float]] = {s[0]: [] for s in settings}
    passed: dict[str, set[int]] = {s[0]: set() for s in settings}
    codes: dict[str, set[int]] = {s[0]: set() for s in settings}
    for _ in range(args.runs):
        for label, checkout, python, workers in settings:  # alternating: the same load
            wall, cpu, count, code = one_run(checkout, python, parts, workers)
            walls[label].append(wall)
            cpus[label].append(cpu)
            passed[label].add(count)
            codes[label].add(code)
    name = f"suite {args.part}" if args.part else "suite"
    if args.common_files and args.against:
        name = "suite (the modules both have)"
    runs = f"{args.runs} run{'s' if args.runs > 1 else ''}"
    first = settings[0][0]
    for label, *_ in settings:
        wall, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
        counts = "/".join(str(c) for c in sorted(passed[label]))
        print(f"{name} {label} wall time: {wall:.0f} s median of {runs}, {counts} passed")
        print(f"{name} {label} cpu time: {cpu:.0f} s median of {runs} (user + system)")
        if label != first:
            wall_ratio = statistics.median(walls[first]) / wall
            cpu_ratio = statistics.median(cpus[first]) / cpu
            print(
                f"{name} {first} beside {label}: {wall_ratio:.2f}x its wall time, "
                f"{cpu_ratio:.2f}x its CPU time"
            )
    failing = sorted(label for label, seen in codes.items() if seen != {0})
    if failing:
        print(f"{name}: pytest failed in {', '.join(failing)}; the figures include failing runs")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
