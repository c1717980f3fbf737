"""Scan and manifest over 10,000 memory files (bar: under 0.5 s beyond start-up).

Also: a re-scan after one file changes (only that file is read again), and the whole
`workbench manifest` command including interpreter start-up, for reference.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import median_seconds, report  # noqa: E402
from workbench.engine.memories.scan import MemoryScanner, format_manifest  # noqa: E402

TYPES = ("user", "feedback", "project", "reference")
COUNT = 10_000


def make_memories(root: Path, count: int = COUNT) -> None:
    """Realistic small memory files spread over a few folders, with distinct mtimes."""
    for i in range(count):
        folder = root / ("team" if i % 10 == 0 else "") / (f"area{i % 7}" if i % 3 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        memory_type = TYPES[i % 4]
        path = folder / f"{memory_type}_topic_{i:05d}.md"
        path.write_text(
            f"---\nname: Topic {i}\ndescription: What we learned about subsystem {i % 97} and its "
            f"deploy checks, item {i}\ntype: {memory_type}\n---\n\nThe rule for item {i}.\n\n"
            "**Why:** an incident showed it matters.\n\n**How to apply:** check it before merging.\n",
            encoding="utf-8",
        )
        stamp = 1_770_000_000 + i * 37
        os.utime(path, (stamp, stamp))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        make_memories(root)

        def cold_manifest() -> str:
            return format_manifest(MemoryScanner(root).scan())

        cold, _ = median_seconds(cold_manifest, runs=7)
        report(
            "manifest over 10,000 files (cold scanner, warm page cache)",
            cold,
            "s",
            "< 0.5 s",
            f"{len(cold_manifest().splitlines())} lines",
        )

        scanner = MemoryScanner(root)
        scanner.scan_all()
        changed = next(root.glob("*.md"))

        def rescan_one_change() -> None:
            changed.write_text(changed.read_text(encoding="utf-8") + "x\n", encoding="utf-8")
            scanner.scan()

        warm, _ = median_seconds(rescan_one_change, runs=7)
        report(
            "re-scan after one file changed", warm, "s", "", f"files re-read: {scanner.last_reads}"
        )
        report("re-scan vs cold ratio", warm / cold, "x")

        env = dict(os.environ, CLAUDE_CONFIG_DIR=str(Path(tmp) / "cfg"))
        command = [sys.executable, "-m", "workbench", "manifest", "--memory-dir", str(root)]

        def whole_command() -> None:
            subprocess.run(command, env=env, check=True, capture_output=True)

        cli, _ = median_seconds(whole_command, runs=5)
        report("`workbench manifest` including interpreter start-up", cli, "s")


if __name__ == "__main__":
    main()
