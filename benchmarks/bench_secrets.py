"""Secret scanner throughput on generated memory-like text (spec 07: at least 300 MB/s).

Prints one line per figure: the median CPU time of several runs as MB/s, and the ratio against
running the 36 rules one regex at a time over the same text in the same run. Findings are checked to be
identical across the hyperscan engine, the `re` fallback and the one-at-a-time scan.

Run: .venv/bin/python benchmarks/bench_secrets.py [--quick]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))  # the token and corpus generators live with the tests

from secretgen.corpus import corpus  # noqa: E402

from benchmarks._common import timed_runs  # noqa: E402
from workbench.engine.team.secrets.prefilter import hyperscan_available  # noqa: E402
from workbench.engine.team.secrets.rules import RULES  # noqa: E402
from workbench.engine.team.secrets.scanner import (  # noqa: E402
    find_secrets,
    find_secrets_many,
    naive_matches,
    scan_for_secrets,
)

QUICK = "--quick" in sys.argv
RUNS = 3 if QUICK else 5
SECRET_RATE = 0.01  # about one block in a hundred carries a real token


def median_seconds(work: Callable[[], object], runs: int = RUNS) -> float:
    """Median CPU seconds of `runs` runs.

    CPU time, not wall time: the 2-core machine is shared, and waiting for a core says
    nothing about the scanner. Everything measured here is single-threaded.
    """
    times, _ = timed_runs(work, runs, clock=time.process_time)
    return statistics.median(times)


def one_regex_at_a_time(text: str) -> list[tuple[int, int, int]]:
    """The baseline: each of the 36 rules' finditer over the whole text, in turn."""
    return naive_matches(text)


def mb(text_or_texts: str | list[str]) -> float:
    if isinstance(text_or_texts, str):
        return len(text_or_texts.encode("utf-8")) / 1e6
    return sum(len(t.encode("utf-8")) for t in text_or_texts) / 1e6


def line(name: str, value: str) -> None:
    print(f"{name:<58} {value}", flush=True)


def main() -> int:
    if not hyperscan_available():
        line("secrets: hyperscan", "not available; only the re fallback can be measured")
    engines = ["hyperscan", "re"] if hyperscan_available() else ["re"]

    # 1. Same text for everyone: the baseline is slow, so this sample is kept small.
    sample_files = corpus(400 if QUICK else 1200, seed=7, secret_rate=SECRET_RATE)
    sample = "\n".join(sample_files)
    expected = sorted(one_regex_at_a_time(sample))
    for engine in engines:
        got = sorted(
            (next(i for i, r in enumerate(RULES) if r.id == f.rule_id), f.start, f.end)
            for f in find_secrets(sample, backend=engine)
        )
        if got != expected:
            line(f"secrets: findings identical ({engine})", "NO")
            return 1
    line("secrets: findings identical (hyperscan, re, one-at-a-time)", f"yes ({len(expected)})")
    baseline = median_seconds(lambda: one_regex_at_a_time(sample), runs=3)
    size = mb(sample)
    line(f"secrets: one regex at a time ({size:.1f} MB text)", f"{size / baseline:8.1f} MB/s")
    for engine in engines:
        seconds = median_seconds(lambda e=engine: find_secrets(sample, backend=e))
        line(
            f"secrets: {engine} find_secrets ({size:.1f} MB text)",
            f"{size / seconds:8.1f} MB/s  ratio {baseline / seconds:6.1f}x",
        )
    # Claude Code's own question (does any rule match?): each rule's search, one at a time.
    verdict_baseline = median_seconds(lambda: [r.regex.search(sample) for r in RULES], runs=3)
    seconds = median_seconds(lambda: scan_for_secrets(sample, backend=engines[0]))
    line(
        f"secrets: {engines[0]} scan_for_secrets vs 36 searches ({size:.1f} MB)",
        f"{size / seconds:8.1f} MB/s  ratio {verdict_baseline / seconds:6.1f}x",
    )

    # 2. Larger memory-like inputs for the engine itself: realistic (a secret every ~100 KB),
    #    dense (one every ~17 KB) and none, as one text and as 12,000 separate files.
    count = 4000 if QUICK else 12000
    engine = engines[0]
    realistic = corpus(count, seed=8, secret_rate=SECRET_RATE / 6)
    dense = corpus(count, seed=8, secret_rate=SECRET_RATE)
    clean = corpus(count, seed=9)
    for label, files in (("realistic", realistic), ("dense secrets", dense), ("no secrets", clean)):
        text = "\n".join(files)
        found = len(find_secrets(text, backend=engine))
        seconds = median_seconds(lambda t=text: find_secrets(t, backend=engine))
        line(
            f"secrets: {engine} find_secrets, {mb(text):.0f} MB {label} ({found} found)",
            f"{mb(text) / seconds:8.1f} MB/s",
        )
        seconds = median_seconds(lambda t=text: scan_for_secrets(t, backend=engine))
        line(
            f"secrets: {engine} scan_for_secrets, {mb(text):.0f} MB {label}",
            f"{mb(text) / seconds:8.1f} MB/s",
        )
    ascii_text = "\n".join(f.encode("ascii", "replace").decode("ascii") for f in realistic)
    seconds = median_seconds(lambda: find_secrets(ascii_text, backend=engine))
    line(
        f"secrets: {engine} find_secrets, {mb(ascii_text):.0f} MB realistic, ASCII only",
        f"{mb(ascii_text) / seconds:8.1f} MB/s",
    )
    items = [(f"f{i}.md", text) for i, text in enumerate(realistic)]
    seconds = median_seconds(lambda: find_secrets_many(items, backend=engine))
    line(
        f"secrets: {engine} find_secrets_many, {len(items)} files ({mb(realistic):.0f} MB)",
        f"{mb(realistic) / seconds:8.1f} MB/s",
    )
    seconds = median_seconds(lambda: [find_secrets(t, backend=engine) for t in realistic])
    line(
        f"secrets: {engine} find_secrets per file, {len(items)} files",
        f"{mb(realistic) / seconds:8.1f} MB/s  {seconds / len(items) * 1e6:6.1f} us/file",
    )

    # 3. `scan-secrets` on a folder of files on disk, with and without a progress callback
    #    (what the CLI passes on a terminal): reporting must cost nothing measurable.
    scan_folder(realistic)
    return 0


def scan_folder(files: list[str]) -> None:
    import tempfile

    from workbench.engine.progress import Progress
    from workbench.engine.team.secrets.report import scan_files

    with tempfile.TemporaryDirectory(prefix="bench-secrets-") as tmp:
        root = Path(tmp)
        for n, text in enumerate(files):
            folder = root / f"d{n % 50:02}"
            folder.mkdir(exist_ok=True)
            (folder / f"m{n}.md").write_text(text, encoding="utf-8")
        calls: list[Progress] = []
        quiet = median_seconds(lambda: scan_files([root]))
        shown = median_seconds(lambda: scan_files([root], on_progress=calls.append))
        line(
            f"secrets: scan_files, {len(files)} files on disk ({mb(files):.0f} MB)",
            f"{quiet * 1000:8.0f} ms",
        )
        line(
            "secrets: scan_files with progress on",
            f"{shown * 1000:8.0f} ms  ratio {shown / quiet:5.2f}x ({len(calls)} reports)",
        )


if __name__ == "__main__":
    raise SystemExit(main())
