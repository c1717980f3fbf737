"""`make test` on a fresh clone, from nothing: what issue 17's suite bar measures (under half
of the time on the day the issue was filed, on the 2-core machine).

Each run clones a commit into a new temporary folder (with no `../shared` beside it, as in
CI) and runs `make test` there with empty package caches, so the figure includes creating the
virtual environment, downloading and installing every dependency, compiling, and the whole
suite. `--against COMMIT` times another commit the same way, alternating run by run so both
see the same load, and prints the ratio. Takes many minutes; `make bench` leaves it out.

    .venv/bin/python benchmarks/bench_fresh_clone.py [--runs 1] [--commit HEAD]
        [--against 5833489]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_run(commit: str) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds, exit code and the last line of one fresh `make test`."""
    with tempfile.TemporaryDirectory(prefix="bench-fresh-") as base:
        checkout = Path(base) / "checkout"
        subprocess.run(["git", "clone", "-q", str(REPO), str(checkout)], check=True)
        subprocess.run(["git", "checkout", "-q", commit], cwd=checkout, check=True)
        env = dict(os.environ)
        # Nothing downloaded before: a fresh machine has no package cache.
        env["UV_CACHE_DIR"] = f"{base}/uv-cache"
        env["PIP_CACHE_DIR"] = f"{base}/pip-cache"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            ["make", "test"], cwd=checkout, env=env, capture_output=True, text=True
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = (done.stdout.strip().splitlines() or [""])[-1]
    return wall, cpu, done.returncode, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--commit", default="HEAD", help="what to time (default: HEAD)")
    parser.add_argument("--against", default=None, help="another commit to time beside it")
    args = parser.parse_args()
    commits = [args.commit] + ([args.against] if args.against else [])
    resolved = {
        c: subprocess.run(
            ["git", "rev-parse", "--short", c], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        for c in commits
    }
    walls: dict[str, list[float]] = {c: [] for c in commits}
    cpus: dict[str, list[float]] = {c: [] for c in commits}
    for _ in range(args.runs):
        for commit in commits:  # alternating: the same load falls on both
            wall, cpu, code, last = one_run(commit)
            walls[commit].append(wall)
            cpus[commit].append(cpu)
            print(f"  {resolved[commit]}: {wall:.0f} s, exit {code}: {last}", file=sys.stderr)
    runs = f"{args.runs} run{'s' if args.runs > 1 else ''}"
    for commit in commits:
        wall, cpu = statistics.median(walls[commit]), statistics.median(cpus[commit])
        print(
            f"fresh clone {resolved[commit]}: `make test` {wall:.0f} s wall, "
            f"{cpu:.0f} s CPU, median of {runs}"
        )
    if args.against:
        ratio = statistics.median(walls[args.commit]) / statistics.median(walls[args.against])
        print(
            f"fresh clone {resolved[args.commit]} beside {resolved[args.against]}: "
            f"{ratio:.2f}x its wall time [bar < 0.5x]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
