"""Resident memory of the app with 10,000 memories and a 100 MB transcript open (bar: 300 MB).

A child interpreter opens the app (headless, 120x36) on a generated project: 10,000 memory
files with a 10,000-line MEMORY.md in Claude Code's folder layout, and a 100 MB transcript in
the project's transcripts folder. Once the tree holds all 10,000 memories, the transcript is
opened the way the gauge pane opens it (the gauge read from the end, plus the turn-by-turn
replay it plots), the results are kept alive, and the child reports its resident set (VmRSS)
and peak (VmHWM). It also reports how long the scan took to reach the screen and the longest
stall of the UI thread while the 10,000-entry tree was built and filtered, which is what
"stays responsive" means in practice. Medians of several runs.

    .venv/bin/python benchmarks/bench_memory.py [--runs 3] [--mb 100]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks._common import run_child_json  # noqa: E402

BAR_MB = 300
COUNT = 10_000
TYPES = ("user", "feedback", "project", "reference")

CHILD = r"""
import json, sys, threading, time
from pathlib import Path
from workbench.config import Settings
from workbench.engine import Engine
from workbench.ui.app import make_app

project, config_home, transcript = sys.argv[1], sys.argv[2], sys.argv[3]
engine = Engine.open(project, config_home=config_home)
settings = Settings(watch_files=False, cursor_blink=False, animation="none", user_themes=False)
app = make_app(engine, settings)
start = time.perf_counter()
result = {}
held = []

def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0

def run_checks():
    from workbench.ui.screens.main import MainScreen
    from workbench.ui.widgets.memory_tree import MemoryTree

    # Stalls are counted from the first painted frame of the main screen (start-up itself is
    # bench_startup's business) until the figures are taken.
    stall = {"max": 0.0, "last": None}

    def tick():
        now = time.perf_counter()
        if stall["last"] is not None:
            stall["max"] = max(stall["max"], now - stall["last"])
            stall["last"] = now

    def arm():
        stall["last"] = time.perf_counter()

    app.set_interval(0.01, tick)

    def loaded():
        screen = app.screen
        if not isinstance(screen, MainScreen) or screen.snapshot is None:
            return False
        return len(screen.query_one(MemoryTree).entries) == len(screen.snapshot.entries) > 0

    def open_transcript():
        # What the gauge pane holds for an open transcript: the gauge and the replay.
        held.append(engine.context.gauge(transcript))
        held.append(engine.context.replay(transcript))
        app.call_from_thread(measure)

    def measure():
        # The stall is read before the filter runs: filtering is UI-thread work of its own,
        # timed just below.
        result["transcript_stall_s"] = stall["max"]
        tree = app.screen.query_one(MemoryTree)
        t = time.perf_counter()
        tree.set_filter("feedback topic 12")
        result["filter_s"] = time.perf_counter() - t
        tree.set_filter("")
        def report():
            result["rss_mb"] = status("VmRSS")
            result["peak_mb"] = status("VmHWM")
            print(json.dumps(result), flush=True)
            app.exit()
        app.set_timer(0.3, report)

    def poll():
        if stall["last"] is None and isinstance(app.screen, MainScreen):
            app.call_after_refresh(arm)
        if loaded():
            timer.stop()
            result["loaded_s"] = time.perf_counter() - start
            result["memories"] = len(app.screen.snapshot.entries)
            result["rss_before_transcript_mb"] = status("VmRSS")
            result["load_stall_s"] = stall["max"]
            stall["max"] = 0.0
            threading.Thread(target=open_transcript, daemon=True).start()

    timer = app.set_interval(0.01, poll)

app.call_later(run_checks)
app.run(headless=True, size=(120, 36))
"""


def make_project(base: Path, mb: int) -> tuple[Path, Path, Path]:
    """A project, its config home with 10,000 memories, and a transcript of `mb` megabytes."""
    from benchmarks.gen_transcript import ensure
    from workbench.engine import Engine

    project = base / "big-project"
    (project / ".git").mkdir(parents=True)
    config_home = base / "claude"
    engine = Engine.open(project, config_home=str(config_home))
    memory_dir = Path(engine.locations.memory_dir)
    index_lines = []
    now = time.time()
    for i in range(COUNT):
        memory_type = TYPES[i % 4]
        folder = memory_dir / ("team" if i % 10 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{memory_type}_topic_{i:05d}.md"
        path = folder / name
        body = f"Fact number {i} about the {memory_type} side of the project.\n" * 4
        if memory_type in ("feedback", "project"):
            body += "\n**Why:** it came up in review.\n\n**How to apply:** check it first.\n"
        path.write_text(
            f"---\nname: Topic {i}\ndescription: {memory_type} topic {i} for the benchmark\n"
            f"type: {memory_type}\n---\n\n{body}",
            encoding="utf-8",
        )
        stamp = now - i * 60
        os.utime(path, (stamp, stamp))
        if i % 10:
            index_lines.append(f"- [Topic {i}]({name}) — {memory_type} topic {i}")
    (memory_dir / "MEMORY.md").write_text("\n".join(index_lines) + "\n", encoding="utf-8")
    transcripts = Path(engine.locations.transcripts_dir)
    transcripts.mkdir(parents=True, exist_ok=True)
    transcript = transcripts / "0b7c1e2a-big-session.jsonl"
    source = ensure(mb)
    if not transcript.exists():
        os.symlink(source, transcript)
    return project, config_home, transcript


def one_run(
    project: Path, config_home: Path, transcript: Path, env: dict[str, str]
) -> dict[str, float]:
    return run_child_json(
        ["-c", CHILD, str(project), str(config_home), str(transcript)],
        env,
        timeout=300,
        tail=3000,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mb", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as folder:
        base = Path(folder)
        project, config_home, transcript = make_project(base, args.mb)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "WORKBENCH_"))},
            "WORKBENCH_CONFIG": str(base / "config.toml"),
            "WORKBENCH_HOME": str(base / "home"),
            "TEXTUAL_ANIMATIONS": "none",
        }
        runs = [one_run(project, config_home, transcript, env) for _ in range(args.runs)]

    def median(key: str) -> float:
        return statistics.median(run[key] for run in runs)

    rss = median("rss_mb")
    print(
        f"resident memory, {int(runs[0]['memories']):,} memories + {args.mb} MB transcript open: "
        f"{rss:.0f} MB median of {args.runs} (peak {median('peak_mb'):.0f} MB) "
        f"[bar < {BAR_MB} MB] {'PASS' if rss < BAR_MB else 'FAIL'}"
    )
    print(f"resident memory before the transcript: {median('rss_before_transcript_mb'):.0f} MB")
    print(f"start to 10,000-entry tree on screen: {median('loaded_s'):.3f} s median")
    print(f"filter over 10,000 entries (UI thread): {median('filter_s') * 1000:.1f} ms median")
    print(
        "longest UI-thread stall while 10,000 memories load: "
        f"{median('load_stall_s') * 1000:.0f} ms median"
    )
    print(
        "longest UI-thread stall while the transcript is analysed in a worker thread: "
        f"{median('transcript_stall_s') * 1000:.0f} ms median"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
