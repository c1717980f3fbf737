"""`MemoryStore.read` of one memory on 10,000 memories with a 9,000-line MEMORY.md (what the
viewer's worker does on every cursor move in the memory tree).

A child opens the engine, reads 40 memories once (the first read parses the index) and then
times 3 rounds of reading the same 40; the figure is the median read. The index is left to
age past the store's racy window (3 s) first, as any index the user did not just write has.
With `--baseline DIR` the package in that folder is measured too, alternating with this
checkout's, so a busy moment hits both alike.

    .venv/bin/python benchmarks/bench_store_read.py [--runs 3] [--baseline DIR]
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

CHILD = r"""
import json, sys, time
from workbench.engine import Engine

engine = Engine.open(sys.argv[1], config_home=sys.argv[2])
store = engine.memories
paths = sorted(e.path for e in store.list())[::250]
for path in paths:
    store.read(path)
samples = []
for _ in range(3):
    for path in paths:
        start = time.perf_counter()
        store.read(path)
        samples.append(time.perf_counter() - start)
print(json.dumps({"samples": samples}), flush=True)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", help="also measure the workbench package in this folder")
    args = parser.parse_args()
    from benchmarks.bench_memory import make_project

    with tempfile.TemporaryDirectory(prefix="bench-read-") as folder:
        base = Path(folder)
        project, config_home, _ = make_project(base, 1)
        index = next(Path(config_home).rglob("MEMORY.md"))
        age = time.time() - os.stat(index).st_ctime
        if age < 3.5:
            time.sleep(3.5 - age)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "WORKBENCH_"))},
            "WORKBENCH_CONFIG": str(base / "config.toml"),
            "WORKBENCH_HOME": str(base / "home"),
        }
        kinds = {"this checkout": (env, [])}
        if args.baseline:  # -P: that folder's package, not the checkout's
            kinds["baseline"] = ({**env, "PYTHONPATH": args.baseline}, ["-P"])
        samples: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(args.runs):
            for kind, (child_env, isolate) in kinds.items():
                out = run_child_json(
                    [*isolate, "-c", CHILD, str(project), str(config_home)],
                    child_env,
                    timeout=600,
                    tail=3000,
                )
                samples[kind] += out["samples"]

    ours = statistics.median(samples["this checkout"]) * 1000
    extra = ""
    if args.baseline:
        before = statistics.median(samples["baseline"]) * 1000
        extra = f" (baseline {before:.2f} ms: {before / ours:.1f}x faster)"
    print(f"store read: MemoryStore.read median, 10,000 memories: {ours:.2f} ms{extra}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
