"""Following a growing transcript (bar: each appended line handled in under 5 ms).

A copy of the generated 100 MB transcript is followed while realistic lines (tool results,
split assistant records, progress lines) are appended one at a time. Each figure is the
median time of `poll()`: stat, read the new bytes, parse, update the meter and the reading.
The baseline in the same run re-reads the whole file the gauge's way for every line.
Also reported: the delay from a write to the new reading through the watchfiles watcher.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import median_seconds, report  # noqa: E402
from benchmarks.gen_transcript import ensure  # noqa: E402
from workbench.devtools.synth import SessionBuilder  # noqa: E402
from workbench.engine.context.follow import TranscriptFollower  # noqa: E402
from workbench.engine.context.gauge import read_gauge_tail  # noqa: E402
from workbench.engine.context.thresholds import compute_thresholds  # noqa: E402

MB = 100
LINES = 300


def ladder(model: str | None):
    return compute_thresholds(model or "claude-sonnet-4-6", env={})


def appended_lines(count: int) -> list[bytes]:
    b = SessionBuilder(seed=99)
    while len(b.entries) < count:
        b.prompt("keep going")
        b.tool_call("Read", {"file_path": "/repo/a.py"}, "code line\n" * 200, thinking="read it")
        b.tool_call("Bash", {"command": "pytest -q"}, "5 passed\n" * 20)
        b.reply("Done with this step.")
    return [line.encode() + b"\n" for line in b.lines()][:count]


def main() -> int:
    source = ensure(MB)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "live.jsonl"
        shutil.copyfile(source, path)
        follower = TranscriptFollower(path, ladder)
        follower.report  # noqa: B018 - the first reading reads the tail
        lines = appended_lines(LINES)
        samples = []
        with open(path, "ab") as handle:
            for line in lines:
                handle.write(line)
                handle.flush()
                start = time.perf_counter()
                follower.poll()
                samples.append(time.perf_counter() - start)
        per_line = statistics.median(samples)
        report(
            f"follow: one appended line handled ({LINES} lines onto {MB} MB)",
            per_line * 1000,
            "ms",
            bar="< 5 ms",
            extra=f"(p95 {sorted(samples)[int(len(samples) * 0.95)] * 1000:.3f} ms)",
        )
        baseline, _ = median_seconds(lambda: read_gauge_tail(path), runs=5)
        report(
            "follow: baseline fresh tail read per line",
            baseline * 1000,
            "ms",
            extra=f"ratio {baseline / per_line:.0f}x",
        )

        # Write-to-reading delay through the watcher (includes watchfiles' 50 ms debounce).
        delays: list[float] = []
        stop = threading.Event()
        written_at: list[float] = []

        def writer() -> None:
            time.sleep(0.5)
            for line in appended_lines(12)[:10]:
                with open(path, "ab") as handle:
                    written_at.append(time.perf_counter())
                    handle.write(line)
                time.sleep(0.3)
            time.sleep(0.5)
            stop.set()

        thread = threading.Thread(target=writer)
        thread.start()
        for _reading in follower.watch(stop=stop.is_set):
            if written_at:
                delays.append(time.perf_counter() - written_at[-1])
        thread.join()
        if delays:
            report(
                "follow: write-to-reading delay through watchfiles",
                statistics.median(delays) * 1000,
                "ms",
                extra=f"({len(delays)} readings)",
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
