"""The hooks Claude Code runs, as whole processes (what a session waits for).

SessionStart runs at the start of every session, so it must stay short; PreCompact and
PostCompact run once per compaction, beside a summarisation that itself takes tens of
seconds, and are measured on a small transcript and on a generated 100 MB one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import REPO, median_seconds, process_env, report  # noqa: E402
from benchmarks.gen_transcript import ensure, generate  # noqa: E402

MB = 100


def run_hook(event: str, body: dict, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "hook", event],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=True,
    )
    return json.loads(done.stdout) if done.stdout.strip() else {}


def main() -> int:
    big = ensure(MB)
    with tempfile.TemporaryDirectory(prefix="wb-bench-hooks-") as folder:
        base = Path(folder)
        project = base / "project"
        project.mkdir()
        env = process_env(base)
        from workbench.engine import Engine

        engine = Engine.open(project, env=env)
        memory = Path(engine.locations.memory_dir)
        memory.mkdir(parents=True)
        lines = []
        for i in range(150):
            (memory / f"note_{i}.md").write_text(
                f"---\nname: Note {i}\ndescription: note number {i}\ntype: project\n---\n\nBody.\n"
            )
            lines.append(f"- [Note {i}](note_{i}.md) — note number {i}\n")
        (memory / "MEMORY.md").write_text("".join(lines))
        start = {
            "session_id": "bench",
            "cwd": str(project),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
        seconds, _ = median_seconds(lambda: run_hook("SessionStart", start, env), runs=7)
        report("hooks: SessionStart, whole process (150 memories)", seconds, "s")

        small = generate(base / "small.jsonl", mb=0.5, seed=4, images=False)
        big_copy = base / "big.jsonl"
        shutil.copyfile(big, big_copy)
        for name, transcript, runs in (("small", small, 5), (f"{MB} MB", big_copy, 3)):
            body = {
                "session_id": transcript.stem,
                "transcript_path": str(transcript),
                "cwd": str(project),
                # Manual: the generated transcripts end below the threshold, where an automatic
                # PreCompact would wait for the reply that crossed it (one that really fired
                # is above it, reads once and never waits).
                "trigger": "manual",
            }
            pre, _ = median_seconds(
                lambda body=body: run_hook("PreCompact", body, env), runs=runs, warmup=0
            )
            size = transcript.stat().st_size / 1e6
            report(f"hooks: PreCompact, whole process, {name} transcript ({size:.1f} MB)", pre, "s")
            post_body = {**body, "compact_summary": "<summary>Work continues.</summary>"}
            post, _ = median_seconds(
                lambda post_body=post_body: run_hook("PostCompact", post_body, env),
                runs=runs,
                warmup=0,
            )
            report(f"hooks: PostCompact, whole process, {name} transcript", post, "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
