"""The MEMORY.md load report on runaway indexes: 80,000 dangling lines and a million lines.

Both must take seconds at most (issue 10: the report was quadratic, 82 s for 80,000 dangling
lines). Also the whole `lint` over the 80,000-line index, which builds the report once per
index and a finding per itemised line.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import ISOLATED_ENV, median_seconds, report  # noqa: E402
from workbench.engine import Engine  # noqa: E402


def make_folder(root: Path, index: str) -> Engine:
    memory = root / "memory"
    memory.mkdir(parents=True)
    for i in range(100):
        (memory / f"note_{i}.md").write_text(
            f"---\nname: Note {i}\ndescription: Note {i} about the deploy\ntype: project\n---\n"
            "Body.\n\n**Why:** it matters.\n\n**How to apply:** read it.\n",
            encoding="utf-8",
        )
    (memory / "MEMORY.md").write_text(index, encoding="utf-8")
    (root / "project").mkdir()
    return Engine.open(
        root / "project", memory_dir=str(memory), config_home=str(root / "cfg"), env=ISOLATED_ENV
    )


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        dangling = "".join(f"- [Gone {i}](gone_{i}.md) — deleted long ago\n" for i in range(80_000))
        engine = make_folder(Path(tmp) / "dangling", dangling)
        seconds, _ = median_seconds(engine.memories.index, runs=3)
        report("index: load report of 80,000 dangling lines", seconds, "s", bar="seconds")
        seconds, _ = median_seconds(engine.memories.lint, runs=3)
        report("index: lint with the 80,000-line index", seconds, "s")

        million = "".join(f"- [Note {i % 100}](note_{i % 100}.md) — hook\n" for i in range(10**6))
        engine = make_folder(Path(tmp) / "million", million)
        seconds, _ = median_seconds(engine.memories.index, runs=3)
        report("index: load report of a 1,000,000-line index", seconds, "s", bar="seconds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
