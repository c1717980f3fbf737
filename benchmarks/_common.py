"""Helpers shared by the benchmark scripts: timing medians, one-line reports, child runs."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.engine.context.service import ContextService

REPO = Path(__file__).resolve().parent.parent
# No home and no Claude config: the figures measure the engine, not what ~/.claude holds.
ISOLATED_ENV = {"HOME": "/nonexistent-home", "CLAUDE_CONFIG_DIR": "/nonexistent-claude"}


def process_env(base: Path) -> dict[str, str]:
    """The environment of a whole-process run: this one's, with home, Claude Code's config,
    the workbench's state and config pointed into `base` (nothing of the user's is read)."""
    env = {
        **os.environ,
        "HOME": str(base / "home"),
        "CLAUDE_CONFIG_DIR": str(base / "claude"),
        "WORKBENCH_HOME": str(base / "workbench"),
        "NO_COLOR": "1",
    }
    env.pop("WORKBENCH_CONFIG", None)
    return env


def timed_runs(
    fn: Callable[[], object],
    runs: int,
    warmup: int = 0,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[list[float], object]:
    """The `clock` time of each of `runs` runs of `fn` after `warmup` untimed runs, and
    the last run's result."""
    for _ in range(warmup):
        fn()
    samples, result = [], None
    for _ in range(runs):
        start = clock()
        result = fn()
        samples.append(clock() - start)
    return samples, result


def median_seconds(
    fn: Callable[[], object], runs: int = 7, warmup: int = 1
) -> tuple[float, list[float]]:
    """Median wall time of `fn` over `runs` runs after `warmup` untimed runs."""
    samples, _ = timed_runs(fn, runs, warmup)
    return statistics.median(samples), samples


def median_and_result(fn: Callable[[], object], runs: int) -> tuple[float, object]:
    """Median wall time of `fn` over `runs` runs (no warm-up) and the last run's result."""
    samples, result = timed_runs(fn, runs)
    return statistics.median(samples), result


def line(name: str, value: str, bar: str = "", extra: str = "") -> None:
    """Print one figure per line: `name: value [bar …] extra`."""
    parts = [f"{name}: {value}"]
    if bar:
        parts.append(f"[bar {bar}]")
    if extra:
        parts.append(extra)
    print(" ".join(parts), flush=True)


def report(name: str, value: float, unit: str, bar: str = "", extra: str = "") -> None:
    """Print one figure per line: `name: value unit [bar …] extra`."""
    line(name, f"{value:.3f} {unit}", bar, extra)


def fresh_context(transcript: Path) -> ContextService:
    """The context service of a new engine on a generated transcript's folder (no caches)."""
    from workbench.engine import Engine

    return Engine.open(transcript.parent, env=ISOLATED_ENV).context


def run_child_json(
    args: Sequence[str], env: Mapping[str, str], *, timeout: float, tail: int
) -> dict[str, Any]:
    """Run `python args…` from the repository and return the first JSON object it prints;
    a failed child ends the benchmark with the last `tail` characters of its stderr."""
    out = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=timeout,
    )
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stderr[-tail:]}")
    return json.loads(next(line for line in out.stdout.splitlines() if line.startswith("{")))
