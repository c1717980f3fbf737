"""The gauge on a generated 100 MB transcript (bar: under 0.3 s beyond start-up).

The gauge reads from the end of the file: the last usage record, what follows it, and one
byte scan for compact boundaries. The baseline, measured in the same run, reads the whole
transcript the straightforward way (parse every line, then tokenCountWithEstimation).
Also reported: the whole `workbench gauge --json` command minus interpreter start-up.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import fresh_context, median_seconds, report  # noqa: E402
from benchmarks.gen_transcript import ensure  # noqa: E402
from workbench.engine.context.transcript import Transcript  # noqa: E402

MB = 100


def main() -> int:
    path = ensure(MB)
    size_mb = path.stat().st_size / 1e6

    def gauge() -> object:
        # A fresh engine each time: no cached thresholds or config.
        return fresh_context(path).gauge(str(path))

    reading = gauge()
    seconds, _ = median_seconds(gauge, runs=7)
    report(
        f"gauge: tail read of a {size_mb:.0f} MB transcript",
        seconds,
        "s",
        bar="< 0.3 s",
        extra=f"(used {reading.used:,}, {len(reading.compactions)} compactions, "  # type: ignore[attr-defined]
        f"{reading.bytes_read:,} bytes parsed)",  # type: ignore[attr-defined]
    )

    def full() -> int:
        return Transcript.load(path).context_tokens()

    assert full() == reading.used  # type: ignore[attr-defined]
    baseline, _ = median_seconds(full, runs=3)
    report(
        "gauge: baseline full parse of the same file",
        baseline,
        "s",
        extra=f"ratio {baseline / seconds:.1f}x",
    )

    python = sys.executable
    startup, _ = median_seconds(
        lambda: subprocess.run(
            [python, "-m", "workbench", "--version"], capture_output=True, check=True
        ),
        runs=5,
    )
    command, _ = median_seconds(
        lambda: subprocess.run(
            [
                python,
                "-m",
                "workbench",
                "gauge",
                str(path),
                "--json",
                "--project",
                str(path.parent),
            ],
            capture_output=True,
            check=True,
        ),
        runs=5,
    )
    report(
        "gauge: `workbench gauge --json` minus start-up",
        command - startup,
        "s",
        bar="< 0.3 s",
        extra=f"(command {command:.3f} s, start-up {startup:.3f} s)",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
