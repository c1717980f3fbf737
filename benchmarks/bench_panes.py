"""Every pane opened once on 10,000 memories and a 100 MB transcript: resident memory (bar:
300 MB) and the longest UI-thread stall while each pane opens and loads (bar: 100 ms).

A child interpreter opens the app (headless, 120x36) on the project `bench_memory` generates
(10,000 memories, a 10,000-line MEMORY.md, a 100 MB transcript). Once the tree holds every
memory, each pane is brought to the front in tab order and left until its workers are done;
a 10 ms interval timer on the UI thread measures how late it runs (a stall is the longest gap
between two ticks), per pane. Then, with every pane's data alive, the child reports its
resident set (VmRSS) and peak (VmHWM). Medians of several runs.

    .venv/bin/python benchmarks/bench_panes.py [--runs 3] [--mb 100] [--panes team,context]
        [--profile FOLDER]

`--panes` opens only those panes (in tab order; the panes before them are not opened, so their
figures can differ from a full run); `--profile` samples the UI thread's stack every 2 ms and
writes, per pane, the stacks seen during each stall over 40 ms (and the garbage collections
that ran) to FOLDER/<pane>.txt.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks._common import run_child_json  # noqa: E402
from benchmarks.bench_memory import make_project  # noqa: E402

BAR_MB = 300
BAR_STALL_MS = 100

CHILD = r"""
import collections, gc, json, os, sys, threading, time
from pathlib import Path
from workbench.config import Settings
from workbench.engine import Engine
from workbench.ui.app import make_app
from workbench.ui.panes.registry import PANE_INFOS

project, config_home = sys.argv[1], sys.argv[2]
engine = Engine.open(project, config_home=config_home)
settings = Settings(watch_files=False, cursor_blink=False, animation="none", user_themes=False)
app = make_app(engine, settings)
result = {"stall_ms": {}, "busy_ms": {}}

def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0

def run_checks():
    from workbench.ui.screens.main import MainScreen
    from workbench.ui.widgets.memory_tree import MemoryTree

    stall = {"max": 0.0, "last": None, "busy": 0.0, "cpu": 0.0, "all": 0.0}
    profile_dir = os.environ.get("BENCH_PROFILE", "")
    samples = collections.deque(maxlen=5000)
    report = []
    gcs = []

    def sample(main=threading.main_thread().ident):
        while True:
            time.sleep(0.002)
            frame = sys._current_frames().get(main)
            stack = []
            while frame is not None:
                code = frame.f_code
                stack.append(f"{code.co_filename.split('site-packages/')[-1]}:{frame.f_lineno} {code.co_name}")
                frame = frame.f_back
            samples.append((time.perf_counter(), stack))

    def on_gc(phase, info, started={}):
        if phase == "start":
            started["t"] = time.perf_counter()
        elif info["generation"] == 2:
            gcs.append((started["t"], time.perf_counter() - started["t"]))

    if profile_dir:
        threading.Thread(target=sample, daemon=True).start()
        gc.callbacks.append(on_gc)

    def tick():
        now, cpu, all_cpu = time.perf_counter(), time.thread_time(), time.process_time()
        if stall["last"] is not None:
            gap = now - stall["last"]
            stall["max"] = max(stall["max"], gap)
            busy = cpu - stall["cpu"]
            stall["busy"] = max(stall["busy"], busy)
            if profile_dir and gap > 0.04:
                seen = collections.Counter()
                for t, stack in list(samples):
                    if stall["last"] <= t <= now:
                        seen["\n    ".join(reversed(stack[:40]))] += 1
                collected = [f"{d * 1000:.0f}ms" for t, d in gcs if t >= stall["last"]]
                report.append(
                    f"=== stall {gap * 1000:.0f} ms (UI thread cpu {busy * 1000:.0f} ms, process "
                    f"{(all_cpu - stall['all']) * 1000:.0f} ms); full gc: {collected}"
                )
                for stack, count in seen.most_common(4):
                    report.append(f"--- {count} samples\n    {stack}")
        stall["last"], stall["cpu"], stall["all"] = now, cpu, all_cpu

    app.set_interval(0.01, tick)
    only = [p for p in os.environ.get("BENCH_PANES", "").split(",") if p]
    panes = [info.id for info in PANE_INFOS if not only or info.id in only]
    state = {"pane": None, "since": 0.0, "quiet": 0.0}

    def loaded():
        screen = app.screen
        if not isinstance(screen, MainScreen) or screen.snapshot is None:
            return False
        return len(screen.query_one(MemoryTree).entries) == len(screen.snapshot.entries) > 0

    def busy():
        return any(not w.is_finished for w in app.workers)

    def poll():
        now = time.perf_counter()
        if state["pane"] is None:
            if not loaded() or busy():
                return
            result["rss_tree_mb"] = status("VmRSS")
        elif busy() and now - state["since"] < 120:
            state["quiet"] = now
            return
        elif now - state["quiet"] < 0.3:
            return  # the last worker's result is still being shown
        else:
            result["stall_ms"][state["pane"]] = stall["max"] * 1000
            result["busy_ms"][state["pane"]] = stall["busy"] * 1000
            if profile_dir:
                Path(profile_dir, state["pane"] + ".txt").write_text("\n".join(report))
                report.clear()
        if not panes:
            timer.stop()
            result["rss_mb"] = status("VmRSS")
            result["peak_mb"] = status("VmHWM")
            if profile_dir:
                kinds = collections.Counter(type(o).__qualname__ for o in gc.get_objects(2))
                lines = [f"{n} {k}" for k, n in kinds.most_common(40)]
                lines.insert(0, f"{len(gc.get_objects(2))} in the oldest generation, "
                    f"{gc.get_freeze_count()} frozen")
                Path(profile_dir, "gc-objects.txt").write_text("\n".join(lines))
            print(json.dumps(result), flush=True)
            app.exit()
            return
        state["pane"] = pane = panes.pop(0)
        state["since"] = state["quiet"] = now
        stall["max"] = stall["busy"] = 0.0
        stall["last"], stall["cpu"] = time.perf_counter(), time.thread_time()
        stall["all"] = time.process_time()
        app.screen.show_pane(pane, focus=True)

    timer = app.set_interval(0.05, poll)

app.call_later(run_checks)
app.run(headless=True, size=(120, 36))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--panes", default="", help="open only these panes (ids, comma-separated)")
    parser.add_argument("--profile", help="write the UI thread's stacks during stalls here")
    parser.add_argument(
        "--source", help="measure the workbench package in this folder (a before figure)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-panes-") as folder:
        base = Path(folder)
        project, config_home, _ = make_project(base, args.mb)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "WORKBENCH_"))},
            "WORKBENCH_CONFIG": str(base / "config.toml"),
            "WORKBENCH_HOME": str(base / "home"),
            "TEXTUAL_ANIMATIONS": "none",
            "BENCH_PANES": args.panes,
            "BENCH_PROFILE": str(Path(args.profile).resolve()) if args.profile else "",
        }
        isolate = []
        if args.source:  # -P: the folder's package, not the checkout the child starts in
            env["PYTHONPATH"] = args.source
            isolate = ["-P"]
        runs = [
            run_child_json(
                [*isolate, "-c", CHILD, str(project), str(config_home)], env, timeout=600, tail=3000
            )
            for _ in range(args.runs)
        ]

    rss = statistics.median(run["rss_mb"] for run in runs)
    peak = statistics.median(run["peak_mb"] for run in runs)
    tree = statistics.median(run["rss_tree_mb"] for run in runs)
    verdict = "PASS" if rss < BAR_MB else "FAIL"
    print(
        f"panes: resident memory with every pane opened ({args.mb} MB transcript, 10,000 "
        f"memories): {rss:.0f} MB median of {args.runs} (peak {peak:.0f} MB, tree alone "
        f"{tree:.0f} MB) [bar < {BAR_MB} MB] {verdict}",
        flush=True,
    )
    for pane in runs[0]["stall_ms"]:
        worst = statistics.median(run["stall_ms"][pane] for run in runs)
        busy = statistics.median(run["busy_ms"][pane] for run in runs)
        verdict = "PASS" if worst <= BAR_STALL_MS else "FAIL"
        print(
            f"panes: longest UI stall opening the {pane} pane: {worst:.0f} ms median "
            f"[bar <= {BAR_STALL_MS} ms] {verdict} (most UI-thread CPU between two ticks: "
            f"{busy:.0f} ms)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
