"""Turn-by-turn analysis of a generated 100 MB transcript (bar: under 1.5 s).

The replay walks every API call of the session once (one streaming pass, the incremental
meter) and judges each recorded auto-compaction. The baseline in the same run parses every
line with the standard json module, which is what the replay would cost without jiter and
the metadata-line skip, before doing any analysis at all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import fresh_context, median_seconds, report  # noqa: E402
from benchmarks.gen_transcript import ensure  # noqa: E402

MB = 100


def main() -> int:
    path = ensure(MB)
    size_mb = path.stat().st_size / 1e6

    def replay() -> object:
        return fresh_context(path).replay(str(path))

    result = replay()
    seconds, _ = median_seconds(replay, runs=5)
    agreeing = sum(1 for c in result.compactions if c.agrees)  # type: ignore[attr-defined]
    report(
        f"replay: full turn-by-turn analysis of {size_mb:.0f} MB",
        seconds,
        "s",
        bar="< 1.5 s",
        extra=f"({len(result.turns):,} API calls, {len(result.compactions)} compactions, "  # type: ignore[attr-defined]
        f"{agreeing} agree)",
    )

    def json_parse_only() -> int:
        count = 0
        with open(path, "rb") as handle:
            for line in handle:
                json.loads(line)
                count += 1
        return count

    baseline, _ = median_seconds(json_parse_only, runs=3)
    report(
        "replay: baseline json-module parse alone",
        baseline,
        "s",
        extra=f"ratio {baseline / seconds:.2f}x",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
