"""The start-up benchmark's hook: record when the first full frame was painted, then quit.

benchmarks/bench_startup.py sets `WORKBENCH_FIRST_PAINT_FILE`; the main screen calls
`report_first_paint` once its first full frame (tree and document) is on screen.
"""

from __future__ import annotations

import os

FIRST_PAINT_ENV = "WORKBENCH_FIRST_PAINT_FILE"
"""benchmarks/bench_startup.py sets this: the app records when its first full frame (tree and
document) was painted, then quits, so start-up is timed on the real `workbench demo` path."""


def report_first_paint(memories: int) -> bool:
    """Write the paint time and what was imported by then, if the benchmark asked (then
    the app quits); False when it did not."""
    target = os.environ.get(FIRST_PAINT_ENV)
    if not target:
        return False
    import json
    import sys
    import time

    heavy = [
        m
        for m in ("anthropic", "tiktoken", "watchfiles", "httpx", "yaml", "markdown_it", "pygments")
        if m in sys.modules
    ]
    with open(target, "w", encoding="utf-8") as handle:
        json.dump({"painted": time.time(), "memories": memories, "heavy": heavy}, handle)
    return True
