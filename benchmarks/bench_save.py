"""Safe writes: what a two-step save, an update and an undo cost with the folder lock, the
intent journal and the history append, in one process and from four racing processes.

Figures (medians):
- one save (memory file + index line + history), into a folder of 200 memories;
- one update with a fingerprint check;
- one undo of a save (two files);
- four processes saving 10 memories each at once: wall time, and index lines kept (bar: all 40).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import line, median_seconds  # noqa: E402

SAVER = """
import sys, time
from pathlib import Path
from workbench.engine import Engine
project, memory, tag, go = sys.argv[1:5]
engine = Engine.open(project, memory_dir=memory)
while not Path(go).exists():
    time.sleep(0.001)
for i in range(10):
    engine.memories.save(type="project", name=f"{tag} {i}", description=f"{tag} {i}", body="b")
"""


def _engine(base: Path):
    from workbench.engine import Engine

    (base / "project").mkdir()
    memory = base / "memory"
    memory.mkdir()
    engine = Engine.open(base / "project", memory_dir=str(memory))
    for i in range(200):
        engine.memories.save(
            type="project", name=f"seed {i}", description=f"seed memory {i}", body="x\n" * 20
        )
    return engine


def _first_seed(engine: Any) -> str:
    """The first seed's file name, whichever naming the active Claude Code release uses."""
    return next(e.path for e in engine.memories.list() if e.description == "seed memory 0")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="wb-bench-save-") as tmp:
        base = Path(tmp)
        os.environ["WORKBENCH_HOME"] = str(base / "home")
        engine = _engine(base)
        store = engine.memories
        counter = iter(range(10_000))

        def save() -> None:
            n = next(counter)
            store.save(type="user", name=f"bench {n}", description="bench", body="b")

        seconds, _ = median_seconds(save, runs=31, warmup=3)
        line("save (file + index line + history)", f"{seconds * 1000:.1f} ms")

        seed = _first_seed(engine)
        doc = store.read(seed)
        state = {"fingerprint": doc.fingerprint, "n": 0}

        def update() -> None:
            state["n"] += 1
            result = store.update(seed, doc.text + f"{state['n']}\n", state["fingerprint"])
            state["fingerprint"] = result.fingerprint

        seconds, _ = median_seconds(update, runs=31, warmup=3)
        line("update (fingerprint check + history)", f"{seconds * 1000:.1f} ms")

        def save_then_undo() -> float:
            save()
            start = time.perf_counter()
            engine.history.undo()
            return time.perf_counter() - start

        undo_samples = sorted(save_then_undo() for _ in range(21))
        line("undo of a save (two files)", f"{undo_samples[len(undo_samples) // 2] * 1000:.1f} ms")

        race = base / "race"
        (race / "project").mkdir(parents=True)
        (race / "memory").mkdir()
        go = race / "go"
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    SAVER,
                    str(race / "project"),
                    str(race / "memory"),
                    f"w{n}",
                    str(go),
                ]
            )
            for n in range(4)
        ]
        time.sleep(1.0)  # let the children import before the start signal
        start = time.perf_counter()
        go.touch()
        for proc in procs:
            proc.wait()
        wall = time.perf_counter() - start
        lines = (race / "memory" / "MEMORY.md").read_text(encoding="utf-8").splitlines()
        line(
            "4 processes x 10 saves at once",
            f"{wall:.2f} s wall, {len(lines)}/40 index lines kept",
            bar="40/40",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
