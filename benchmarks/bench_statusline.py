"""The status line per call, as Claude Code runs it after every message (bar: well under 0.1 s).

Two payload shapes: with `context_window` (recent Claude Code sends the live figures, so no
transcript is read) and without (the count comes from the transcript, read from its end).
Both on a small transcript and on a generated 100 MB one; each as a whole process (what the
user waits for, interpreter start-up included) and in-process (the engine's share). The
baseline, in the same run, is the gauge as the line used it before: with the scan of the
whole file for compaction boundaries.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    ISOLATED_ENV,
    REPO,
    median_seconds,
    report,
    timed_runs,
)
from benchmarks.gen_transcript import ensure, generate  # noqa: E402

MB = 100


def child_cpu() -> float:
    """CPU seconds used by finished children: unlike wall time, barely moved by a busy
    machine, so it shows what one call costs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def payload(transcript: Path, figures: bool) -> dict:
    data: dict = {
        "session_id": transcript.stem,
        "transcript_path": str(transcript),
        "cwd": str(transcript.parent),
        "model": {"id": "claude-sonnet-4-6", "display_name": "Sonnet 4.6"},
        "workspace": {"current_dir": str(transcript.parent)},
    }
    if figures:
        data["context_window"] = {
            "context_window_size": 200_000,
            "current_usage": {
                "input_tokens": 3,
                "output_tokens": 500,
                "cache_creation_input_tokens": 2_000,
                "cache_read_input_tokens": 90_000,
            },
        }
    return data


def main() -> int:
    from workbench.engine import Engine

    big = ensure(MB)
    with tempfile.TemporaryDirectory(prefix="wb-bench-status-") as folder:
        small = generate(Path(folder) / "small.jsonl", mb=0.05, seed=3, images=False)
        env = {**os.environ, **ISOLATED_ENV, "NO_COLOR": "1"}
        for name, transcript in (("small", small), (f"{MB} MB", big)):
            size = transcript.stat().st_size / 1e6
            for figures in (True, False):
                shape = "context_window payload" if figures else "transcript only"
                body = payload(transcript, figures)

                def in_process(body: dict = body, transcript: Path = transcript) -> str:
                    engine = Engine.open(transcript.parent, env=ISOLATED_ENV)
                    return engine.context.statusline(body).line

                in_process()  # imports and first reads happen once per process
                seconds, _ = median_seconds(in_process, runs=15)
                report(
                    f"statusline: in-process, {name} transcript ({size:.1f} MB), {shape}",
                    seconds * 1000,
                    "ms",
                )
                text = json.dumps(body)

                def process(text: str = text) -> None:
                    subprocess.run(
                        [sys.executable, "-m", "workbench", "statusline"],
                        input=text,
                        capture_output=True,
                        text=True,
                        env=env,
                        cwd=REPO,
                        check=True,
                    )

                whole, _ = median_seconds(process, runs=9)
                cpu = statistics.median(timed_runs(process, 9, clock=child_cpu)[0])
                report(
                    f"statusline: whole process, {name} transcript, {shape}",
                    whole,
                    "s",
                    bar="< 0.1 s",
                    extra=f"(CPU {cpu:.3f} s)",
                )

        def before() -> int:
            engine = Engine.open(big.parent, env=ISOLATED_ENV)
            return engine.context.gauge(str(big)).used

        def after() -> int:
            engine = Engine.open(big.parent, env=ISOLATED_ENV)
            return engine.context.gauge(str(big), compactions=False).used

        assert before() == after()
        old, _ = median_seconds(before, runs=7)
        new, _ = median_seconds(after, runs=7)
        report(
            f"statusline: transcript read before (gauge with the boundary scan), {MB} MB",
            old,
            "s",
            extra=f"now {new:.3f} s, ratio {old / new:.1f}x",
        )

        def bare() -> None:
            subprocess.run([sys.executable, "-c", "pass"], capture_output=True, check=True, env=env)

        startup, _ = median_seconds(bare, runs=9)
        cpu = statistics.median(timed_runs(bare, 9, clock=child_cpu)[0])
        report(
            "statusline: bare interpreter start-up, for scale",
            startup,
            "s",
            extra=f"(CPU {cpu:.3f} s)",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
