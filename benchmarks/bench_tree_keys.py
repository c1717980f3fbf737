"""Memory-tree cursor moves on 10,000 memories beside a bare Textual Tree with 10,000 leaves
(bar: within 1.5x, median and p95).

Each child runs one app headless (120x36), presses `down` 40 times and times each press from
the key to the first frame written after it (the moved cursor; a hook on `App._display`) and
to the last (the viewer showing the memory), letting the app settle after each press; and
the UI thread's CPU time from the key to that first frame, which a loaded machine's
scheduling does not inflate the way it does wall time. It also counts full-screen frames
(a layout update rather than changed lines) and layout passes, which say why a move costs
what it costs.

    .venv/bin/python benchmarks/bench_tree_keys.py [--runs 3] [--source DIR]
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

BAR_RATIO = 1.5
MOVES = 40

CHILD = r"""
import asyncio, json, sys, time
from textual.app import App
from textual.screen import Screen

kind = sys.argv[1]
stats = {"frames": 0, "full": 0, "layouts": 0, "last": 0.0, "first": None, "first_cpu": None}
display = App._display
def _display(self, screen, update):
    stats["frames"] += 1
    if type(update).__name__ == "LayoutUpdate":
        stats["full"] += 1
    stats["last"] = time.perf_counter()
    if stats["first"] is None:
        stats["first"] = stats["last"]
        stats["first_cpu"] = time.thread_time()
    return display(self, screen, update)
App._display = _display
refresh_layout = Screen._refresh_layout
def _refresh_layout(self, *args, **kwargs):
    stats["layouts"] += 1
    return refresh_layout(self, *args, **kwargs)
Screen._refresh_layout = _refresh_layout

if kind == "bare":
    from textual.widgets import Tree

    class Bare(App):
        def compose(self):
            tree = Tree("memories")
            tree.show_root = False
            for group in range(3):
                node = tree.root.add(f"group {group}", expand=True)
                for i in range(10_000 // 3 + (group == 0)):
                    node.add_leaf(f"memory_topic_{group}_{i:05d}.md  12d  1.2k")
            yield tree
        def on_mount(self):
            self.query_one(Tree).focus()
    app = Bare()
    def ready(app):
        return True
else:
    from workbench.config import Settings
    from workbench.engine import Engine
    from workbench.ui.app import make_app
    project, config_home = sys.argv[2], sys.argv[3]
    engine = Engine.open(project, config_home=config_home)
    settings = Settings(watch_files=False, cursor_blink=False, animation="none", user_themes=False)
    app = make_app(engine, settings)
    def ready(app):
        from workbench.ui.screens.main import MainScreen
        from workbench.ui.widgets.memory_tree import MemoryTree
        screen = app.screen
        if not isinstance(screen, MainScreen) or screen.snapshot is None:
            return False
        tree = screen.query_one(MemoryTree)
        return tree.filled and not any(not w.is_finished for w in app.workers)

async def main():
    async with app.run_test(headless=True, size=(120, 36)) as pilot:
        for _ in range(600):
            if ready(app):
                break
            await pilot.pause(0.1)
        await pilot.pause(0.5)
        if kind != "bare":
            from workbench.ui.widgets.memory_tree import MemoryTree
            app.screen.set_focus(app.screen.query_one(MemoryTree))
            await pilot.pause(0.3)
        samples, firsts, first_cpus = [], [], []
        counts = {"frames": 0, "full": 0, "layouts": 0}
        for _ in range(int(sys.argv[-1])):
            before = {k: stats[k] for k in counts}
            start, start_cpu = time.perf_counter(), time.thread_time()
            stats["last"], stats["first"], stats["first_cpu"] = start, None, None
            await pilot.press("down")
            # Settled: no frame for 0.15 s and no worker running (else the next key would
            # queue behind this one's viewer update and be timed with it).
            for _ in range(200):
                await pilot.pause(0.05)
                quiet = time.perf_counter() - stats["last"] > 0.15
                if quiet and all(w.is_finished for w in app.workers):
                    break
            samples.append(stats["last"] - start)
            firsts.append((stats["first"] or stats["last"]) - start)
            first_cpus.append((stats["first_cpu"] or start_cpu) - start_cpu)
            for k in counts:
                counts[k] += stats[k] - before[k]
        print(json.dumps({"samples": samples, "firsts": firsts, "first_cpus": first_cpus, **counts}), flush=True)

asyncio.run(main())
"""


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--source", help="measure the workbench package in this folder (a before figure)"
    )
    args = parser.parse_args()
    from benchmarks.bench_memory import make_project

    with tempfile.TemporaryDirectory(prefix="bench-keys-") as folder:
        base = Path(folder)
        project, config_home, _ = make_project(base, 1)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "WORKBENCH_"))},
            "WORKBENCH_CONFIG": str(base / "config.toml"),
            "WORKBENCH_HOME": str(base / "home"),
            "TEXTUAL_ANIMATIONS": "none",
        }
        isolate = []
        if args.source:  # -P: that folder's package, not the checkout's
            env["PYTHONPATH"] = args.source
            isolate = ["-P"]
        figures: dict[str, dict[str, list[float]]] = {}
        for _ in range(args.runs):  # interleaved, so a busy moment hits both alike
            for kind in ("bare", "workbench"):
                out = run_child_json(
                    [*isolate, "-c", CHILD, kind, str(project), str(config_home), str(MOVES)],
                    env,
                    timeout=600,
                    tail=3000,
                )
                slot = figures.setdefault(
                    kind,
                    {"samples": [], "firsts": [], "first_cpus": [], "full": [], "layouts": []},
                )
                slot["samples"] += out["samples"]
                slot["firsts"] += out["firsts"]
                slot["first_cpus"] += out["first_cpus"]
                slot["full"].append(out["full"])
                slot["layouts"].append(out["layouts"])

    bare, ours = figures["bare"], figures["workbench"]
    for label, pick in (("median", statistics.median), ("p95", p95)):
        b, w = pick(bare["firsts"]) * 1000, pick(ours["firsts"]) * 1000
        ratio = w / b if b else float("inf")
        print(
            f"tree keys: key to the moved cursor's frame, {label}: memory tree {w:.1f} ms vs "
            f"bare Tree {b:.1f} ms: ratio {ratio:.2f}x [bar <= {BAR_RATIO}x] "
            f"{'PASS' if ratio <= BAR_RATIO else 'FAIL'}",
            flush=True,
        )
    for label, pick in (("median", statistics.median), ("p95", p95)):
        b, w = pick(bare["first_cpus"]) * 1000, pick(ours["first_cpus"]) * 1000
        ratio = w / b if b else float("inf")
        print(
            f"tree keys: UI-thread CPU from the key to the moved cursor's frame (what a loaded "
            f"machine's wall clock blurs), {label}: memory tree {w:.2f} ms vs bare Tree "
            f"{b:.2f} ms: ratio {ratio:.2f}x",
            flush=True,
        )
    for label, pick in (("median", statistics.median), ("p95", p95)):
        b, w = pick(bare["samples"]) * 1000, pick(ours["samples"]) * 1000
        print(
            f"tree keys: key to the last frame (the viewer showing the memory), {label}: "
            f"{w:.1f} ms (bare Tree, which has no viewer: {b:.1f} ms)",
            flush=True,
        )
    print(
        f"tree keys: per {MOVES} moves, full-screen frames {statistics.median(ours['full']):.0f} "
        f"and layout passes {statistics.median(ours['layouts']):.0f} (bare Tree: "
        f"{statistics.median(bare['full']):.0f} and {statistics.median(bare['layouts']):.0f})",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
