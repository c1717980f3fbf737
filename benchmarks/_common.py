"""Helpers shared by the benchmark scripts: timing medians and one-line reports."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(
    fn: Callable[[], object], runs: int = 7, warmup: int = 1
) -> tuple[float, list[float]]:
    """Median wall time of `fn` over `runs` runs after `warmup` untimed runs."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), samples


def report(name: str, value: float, unit: str, bar: str = "", extra: str = "") -> None:
    """Print one figure per line: `name: value unit (bar) extra`."""
    parts = [f"{name}: {value:.3f} {unit}"]
    if bar:
        parts.append(f"[bar {bar}]")
    if extra:
        parts.append(extra)
    print(" ".join(parts), flush=True)
