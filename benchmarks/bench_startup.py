"""Start to first full paint of the app on the demo project (bar: under 0.6 s median).

Each run spawns `python -m workbench demo` exactly as a user would (headless, 120x36): copy
the `warnings` sample into a temporary folder, start the demo's team server, open the app.
The app records the moment its first full frame (the memory tree with its cursor and the first
memory in the viewer) is painted, which is Textual's `Ready` event when the mount had the
warmed-up folder, and quits (`WORKBENCH_FIRST_PAINT_FILE`). As a baseline, a bare Textual app
that paints one label gives the cost Textual itself sets, so the ratio is what the workbench
adds. Bytecode is compiled first, as an installed package would have it.

    .venv/bin/python benchmarks/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BAR_S = 0.6

CHILD_BARE = r"""
import time, json, sys
from textual.app import App
from textual.widgets import Label

class Bare(App):
    def compose(self):
        yield Label("hello")
    def on_mount(self):
        self.call_after_refresh(self.done)
    def done(self):
        with open(sys.argv[1], "w") as handle:
            json.dump({"painted": time.time(), "memories": 0, "heavy": []}, handle)
        self.exit()

Bare().run(headless=True, size=(120, 36))
"""


def one_run(command: list[str], env: dict[str, str], marker: Path) -> tuple[float, dict]:
    """Seconds from spawning the interpreter to the first full paint."""
    marker.unlink(missing_ok=True)
    start = time.time()
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    if out.returncode != 0 or not marker.exists():
        raise SystemExit(f"child failed ({out.returncode}):\n{out.stderr[-2000:]}")
    data = json.loads(marker.read_text(encoding="utf-8"))
    return float(data["painted"]) - start, data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    compileall.compile_dir(REPO / "workbench", quiet=1)
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as folder:
        marker = Path(folder) / "painted.json"
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "WORKBENCH_"))},
            "WORKBENCH_CONFIG": os.path.join(folder, "config.toml"),
            "WORKBENCH_HOME": os.path.join(folder, "home"),
            "WORKBENCH_FIRST_PAINT_FILE": str(marker),
            "TEXTUAL_ANIMATIONS": "none",
            "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver",
            "COLUMNS": "120",
            "LINES": "36",
        }
        demo = [sys.executable, "-m", "workbench", "demo"]
        bare = [sys.executable, "-c", CHILD_BARE, str(marker)]
        one_run(demo, env, marker)  # warm the OS file cache
        workbench_times, bare_times = [], []
        last: dict = {}
        for _ in range(args.runs):
            seconds, last = one_run(demo, env, marker)
            workbench_times.append(seconds)
            bare_times.append(one_run(bare, env, marker)[0])
    median = statistics.median(workbench_times)
    baseline = statistics.median(bare_times)
    print(
        f"startup to first full paint (`workbench demo`, {last['memories']} memories): "
        f"{median:.3f} s median of {args.runs} [bar < {BAR_S} s] {'PASS' if median < BAR_S else 'FAIL'}"
    )
    print(f"bare Textual app to first paint (baseline): {baseline:.3f} s median")
    print(f"workbench / bare Textual: {median / baseline:.2f}x")
    print(f"heavy modules loaded at first paint: {', '.join(last['heavy']) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
