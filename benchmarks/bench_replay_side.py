"""`workbench replay` of a 100 MB transcript beside ccusage and beside an orjson parse of every
line, in CPU seconds of each whole process (bar: within 1.5x of ccusage).

ccusage (npm `ccusage`, version 20.0.24) is installed once into a cache folder, as the oracle
installs Claude Code releases; its native build is used when npm can install it, else its
JavaScript build on the machine's node, which the figure says. Where npm or node is missing
the ccusage line is skipped with the reason. ccusage reads the transcript from a throwaway
config folder (`CLAUDE_CONFIG_DIR`) and reports a daily summary offline.

    .venv/bin/python benchmarks/bench_replay_side.py [--runs 3] [--source DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import REPO  # noqa: E402
from benchmarks.gen_transcript import ensure  # noqa: E402

BAR_RATIO = 1.5
CCUSAGE = "ccusage@20.0.24"
"""The newest ccusage 20 whose linux-x64 native build the registry holds (20.0.26's is missing)."""
NATIVE = "@ccusage/ccusage-linux-x64"

ORJSON_CHILD = r"""
import sys, orjson
count = 0
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        if line.strip():
            orjson.loads(line)
            count += 1
print(count)
"""


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memory-workbench" / "ccusage"


def install_ccusage() -> tuple[list[str] | None, str]:
    """The ccusage command and which build it is, or None and why not."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        return None, "npm or node is not installed"
    folder = cache_folder()
    cli = folder / "node_modules" / "ccusage" / "src" / "cli.js"
    if not cli.exists():
        folder.mkdir(parents=True, exist_ok=True)
        out = subprocess.run(
            [npm, "install", "--prefix", str(folder), CCUSAGE, "--no-audit", "--no-fund"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if out.returncode != 0 or not cli.exists():
            tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
            return None, f"npm install {CCUSAGE} failed: {tail}"
    native = folder / "node_modules" / NATIVE / "bin" / "ccusage"
    if native.exists():
        # npm 11 unpacks the platform package without running its scripts, so the binary
        # can arrive without its execute bit.
        if not os.access(native, os.X_OK):
            native.chmod(native.stat().st_mode | 0o111)
        return [str(native)], "native build"
    return [node, str(cli)], "JavaScript build (npm could not install the native one)"


def cpu_seconds(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """User + system CPU of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument(
        "--source", help="measure the workbench package in this folder (a before figure)"
    )
    args = parser.parse_args()
    transcript = ensure(args.mb)
    with tempfile.TemporaryDirectory(prefix="bench-replay-side-") as tmp:
        config = Path(tmp) / "claude"
        project = config / "projects" / "-bench-project"
        project.mkdir(parents=True)
        try:  # ccusage does not follow symbolic links
            os.link(transcript, project / transcript.name)
        except OSError:
            shutil.copyfile(transcript, project / transcript.name)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "WORKBENCH_"))}
        env.update(CLAUDE_CONFIG_DIR=str(config), HOME=tmp)
        isolate = []
        if args.source:  # -P: that folder's package, not the checkout's
            env["PYTHONPATH"] = args.source
            isolate = ["-P"]
        replay = [sys.executable, *isolate, "-m", "workbench", "replay", str(transcript)]
        replay.append("--json")
        parse = [sys.executable, "-c", ORJSON_CHILD, str(transcript)]
        ccusage, build = install_ccusage()
        figures: dict[str, list[float]] = {"replay": [], "orjson": [], "ccusage": []}
        for _ in range(args.runs):  # interleaved, so a busy moment hits each alike
            figures["replay"].append(cpu_seconds(replay, env, REPO))
            figures["orjson"].append(cpu_seconds(parse, env, REPO))
            if ccusage:
                command = [*ccusage, "daily", "--json", "--offline"]
                figures["ccusage"].append(cpu_seconds(command, env, Path(tmp)))

    ours = statistics.median(figures["replay"])
    floor = statistics.median(figures["orjson"])
    print(f"replay side by side: `workbench replay --json` {ours:.2f} s CPU ({args.mb} MB)")
    print(f"replay side by side: orjson parse of every line {floor:.2f} s CPU: {ours / floor:.2f}x")
    if figures["ccusage"]:
        theirs = statistics.median(figures["ccusage"])
        ratio = ours / theirs
        print(
            f"replay side by side: ccusage 20.0.24 daily ({build}) {theirs:.2f} s CPU: replay is "
            f"{ratio:.2f}x [bar <= {BAR_RATIO}x] {'PASS' if ratio <= BAR_RATIO else 'FAIL'}"
        )
    else:
        print(f"replay side by side: ccusage skipped: {build}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
