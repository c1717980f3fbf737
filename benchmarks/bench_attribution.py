"""Context attribution of a generated 100 MB transcript, side by side with `replay`.

Attribution makes the replay's streaming pass and splits every message into categories and
items on the way (then runs the compaction previews on the current segment): its bar is 1.5x
the replay's time on the same file, measured here in the same run, alternating the two so
machine load falls on both alike.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import fresh_context, line, report  # noqa: E402
from benchmarks.gen_transcript import ensure  # noqa: E402

MB = 100
RUNS = 5


def main() -> int:
    path = ensure(MB)
    size_mb = path.stat().st_size / 1e6
    # One of each first: imports and the page cache warm for both.
    result = fresh_context(path).attribution(str(path))
    fresh_context(path).replay(str(path))
    attribution: list[float] = []
    replay: list[float] = []
    attribution_cpu: list[float] = []
    replay_cpu: list[float] = []
    for _ in range(RUNS):
        for job, wall, cpu in (
            (lambda: fresh_context(path).replay(str(path)), replay, replay_cpu),
            (lambda: fresh_context(path).attribution(str(path)), attribution, attribution_cpu),
        ):
            started, started_cpu = time.perf_counter(), time.process_time()
            job()
            wall.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
    a, r = statistics.median(attribution), statistics.median(replay)
    a_cpu, r_cpu = statistics.median(attribution_cpu), statistics.median(replay_cpu)
    report(
        f"attribution: every call's categories and items, {size_mb:.0f} MB",
        a,
        "s",
        bar="< 1.5x replay",
        extra=f"({len(result.calls):,} calls reconciled, {result.items_now:,} items now)",  # type: ignore[attr-defined]
    )
    report(f"attribution: replay of the same {size_mb:.0f} MB, same run", r, "s")
    line(
        "attribution: time against replay", f"{a / r:.2f}x", bar="< 1.5x", extra=f"median of {RUNS}"
    )
    # On a shared machine the wall clock also measures the neighbours; CPU time does not.
    line(
        "attribution: CPU time against replay",
        f"{a_cpu / r_cpu:.2f}x",
        bar="< 1.5x",
        extra=f"({a_cpu:.3f} s against {r_cpu:.3f} s, median of {RUNS})",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
