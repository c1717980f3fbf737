"""The suite does not depend on where it runs (issue 12): the path-sensitive tests, from clones
at three path lengths, with pytest's temp folder at three lengths, while a CPU load runs.

Not part of `make bench` (it takes minutes). Run it as

    .venv/bin/python benchmarks/path_lengths.py [--grid] [--load N] [--keep]

The path-sensitive subset is the snapshot tests of every pane at three sizes and of the panes
that show transcript paths (a rendered screen is where a path's length shows, as the
compaction pane's estimate once did; `--all-snapshots` takes every snapshot test) plus the
test files whose values are built from paths: session notes and compaction (summaries that
name the transcript), Claude Code's path rules, and the CLI's path output. Each clone is
made from this checkout's HEAD with `git clone --shared` and imports its own `workbench`.

By default the three clones run once each, every one with a different temp-folder length
(shortest clone with the longest temp folder), so three runs cover three lengths of each;
`--grid` runs all nine pairs. One line per run, then one summary line; exit 1 if any run
failed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLUGIN = "path_lengths_plugin"
PATH_FILES = (
    "tests/engine/context/test_ctx_session_memory.py",
    "tests/engine/context/test_ctx_compaction.py",
    "tests/engine/store/test_claude_paths.py",
    "tests/engine/store/test_paths_by_release.py",
    "tests/cli/test_cli_consistency.py",
)
"""Test files whose values are built from paths (summaries that name the transcript, path
rules, the CLI's path output)."""
QUICK_UI = (
    "tests/ui/test_snapshots.py::TestEveryPane",
    "tests/ui/test_compaction_pane.py",
    "tests/ui/test_session_pane.py",
)
"""The default UI part: every pane at three sizes, and the panes that show transcript paths
(in tests/ui only the snapshot tests are kept). `--all-snapshots` takes all of tests/ui."""

# A pytest plugin written next to the clones: in tests/ui keep only the snapshot tests.
PLUGIN_SOURCE = """
def pytest_collection_modifyitems(config, items):
    kept, dropped = [], []
    for item in items:
        in_ui = "/tests/ui/" in str(item.path).replace("\\\\", "/")
        fixtures = getattr(item, "fixturenames", ())
        (kept if not in_ui or "snap_compare" in fixtures else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
"""


def _spin() -> None:
    while True:
        pass


def _padded(base: Path, total: int, stem: str) -> Path:
    """A folder under `base` whose absolute path is `total` characters long."""
    room = total - len(str(base)) - 1
    if room < len(stem):
        raise SystemExit(f"{base} is too long for a {total}-character path")
    name = (stem + "-" + "x" * room)[:room]
    return base / name


def _clone(dest: Path) -> None:
    subprocess.run(
        ["git", "clone", "-q", "--shared", str(REPO), str(dest)],
        check=True,
        capture_output=True,
    )
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    subprocess.run(
        ["git", "-C", str(dest), "checkout", "-q", "--detach", head],
        check=True,
        capture_output=True,
    )


def _run(
    clone: Path, basetemp: Path, plugin_dir: Path, tests: tuple[str, ...]
) -> tuple[str, float, str]:
    env = dict(os.environ, PYTHONPATH=f"{clone}{os.pathsep}{plugin_dir}")
    check = subprocess.run(
        [sys.executable, "-c", "import workbench; print(workbench.__file__)"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
    )
    if not check.stdout.startswith(str(clone)):
        raise SystemExit(f"the clone at {clone} imports {check.stdout.strip()}, not its own")
    start = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-rf",
            "-p",
            PLUGIN,
            f"--basetemp={basetemp}",
            *tests,
        ],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - start
    summary = next(
        (
            line.strip("= ")
            for line in reversed(done.stdout.splitlines())
            if re.search(r"\d+ (passed|failed)", line)
        ),
        f"exit {done.returncode}",
    )
    failures = "\n".join(line for line in done.stdout.splitlines() if line.startswith("FAILED"))
    return summary, seconds, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", action="store_true", help="all nine clone/temp pairs")
    parser.add_argument("--load", type=int, default=2, help="CPU spinners (default 2)")
    parser.add_argument("--keep", action="store_true", help="keep the clones afterwards")
    parser.add_argument(
        "--all-snapshots", action="store_true", help="every snapshot test in tests/ui"
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="wb-pl-", dir="/tmp"))
    plugin_dir = work / "plugin"
    plugin_dir.mkdir()
    (plugin_dir / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    clones = [_padded(work, n, "clone") for n in (32, 80, 140)]
    temps = [_padded(work, n, "tmp") for n in (30, 64, 120)]
    pairs = (
        [(c, t) for c in clones for t in temps]
        if args.grid
        else list(zip(clones, reversed(temps), strict=True))
    )
    for clone in clones:
        _clone(clone)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for spinner in spinners:
        spinner.start()
    failed = 0
    try:
        for clone, temp in pairs:
            load_before = os.getloadavg()[0]
            tests = (("tests/ui",) if args.all_snapshots else QUICK_UI) + PATH_FILES
            summary, seconds, failures = _run(clone, temp, plugin_dir, tests)
            load = max(load_before, os.getloadavg()[0])
            ok = " failed" not in summary and "error" not in summary
            failed += not ok
            print(
                f"path lengths: clone {len(str(clone))} chars, basetemp {len(str(temp))} chars, "
                f"{args.load} CPU spinners, load average up to {load:.1f}: {summary} "
                f"({seconds:.0f} s)",
                flush=True,
            )
            if failures:
                print(failures, flush=True)
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join(5)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"path lengths: {len(pairs) - failed} of {len(pairs)} runs passed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
