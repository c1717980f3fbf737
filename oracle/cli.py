"""`python -m oracle`: install releases, run checks, bisect rules, write the table.

    python -m oracle all                      # what `make oracle` runs
    python -m oracle run --release 2.1.332 --check paths
    python -m oracle bisect [--rule k-suffix]
    python -m oracle table                    # rewrite docs/compatibility.md from the cache
    python -m oracle install 2.1.200

Results are kept per release in the cache folder (`python -m oracle where` prints it), so a
partial run updates its own cases and the table and recordings are rebuilt from all of them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from oracle import bisect, record, releases, report
from oracle.checks import CHECKS
from oracle.checks.base import ERROR, Outcome
from oracle.checks.compaction import TRANSCRIPT_CASES, recording

HARNESS_VERSION = 1
PINNED = (releases.OLDEST, releases.NEWEST_KNOWN)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _results_file(version: str) -> Path:
    return releases.cache_root() / "results" / f"{version}.json"


def load_results(versions: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    folder = releases.cache_root() / "results"
    out: dict[str, list[dict[str, Any]]] = {}
    if not folder.is_dir():
        return out
    for path in folder.glob("*.json"):
        if versions is not None and path.stem not in versions:
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("harness") == HARNESS_VERSION:
            out[path.stem] = data["outcomes"]
    return out


def save_results(version: str, outcomes: list[dict[str, Any]]) -> None:
    path = _results_file(version)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = load_results([version]).get(version, [])
    fresh = {(o["check"], o["case"]) for o in outcomes}
    merged = [o for o in old if (o["check"], o["case"]) not in fresh] + outcomes
    payload = {"harness": HARNESS_VERSION, "outcomes": merged}
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")


def default_releases() -> list[str]:
    chosen = list(PINNED)
    try:
        latest = releases.newest()
    except releases.InstallError as exc:
        _log(f"npm unreachable ({exc}); running the pinned releases only")
        return chosen
    if latest not in chosen:
        chosen.append(latest)
    return chosen


def run_checks(
    versions: list[str],
    *,
    checks: list[str] | None = None,
    cases: list[str] | None = None,
    jobs: int = 2,
) -> dict[str, list[dict[str, Any]]]:
    """Run the chosen checks on each release, `jobs` at a time; save and return outcomes."""
    installed = {v: releases.install(v) for v in versions}
    names = checks or list(CHECKS)
    work = []
    for version in versions:
        for name in names:
            check = CHECKS[name]
            for case in check.cases():
                if cases and case.name not in cases:
                    continue
                work.append((check, case, installed[version]))
    # Slow checks first; the transcripts check reads the autocompact runs, so it goes last.
    work.sort(key=lambda w: (w[0].name == "transcripts", -w[0].weight))
    outcomes: dict[str, list[dict[str, Any]]] = {v: [] for v in versions}
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {
            pool.submit(_safe_run, check, case, rel): (check, case, rel)
            for check, case, rel in work
        }
        for done, future in enumerate(as_completed(futures), 1):
            check, case, rel = futures[future]
            outcome = future.result()
            outcomes[rel.version].append(outcome.to_json())
            _log(
                f"[{done}/{len(work)} {time.monotonic() - started:5.0f}s] {rel.version} "
                f"{check.name}/{case.name}: {outcome.verdict}"
                + (f" — {outcome.reason[:140]}" if outcome.reason else "")
            )
    for version, got in outcomes.items():
        save_results(version, got)
        if "transcripts" in names:
            record.clear_transcripts(version)
            for case_name in TRANSCRIPT_CASES:
                case = next(c for c in CHECKS["autocompact"].cases() if c.name == case_name)
                rec = recording(installed[version], case)
                if rec and rec.get("transcript"):
                    record.write_transcript(version, case_name, rec["transcript"])
    return outcomes


def _safe_run(check: Any, case: Any, release: releases.Release) -> Outcome:
    try:
        return check.run(release, case)
    except Exception as exc:  # one broken case must not lose the others
        return Outcome(
            check.name, case.name, release.version, ERROR, reason=f"{type(exc).__name__}: {exc}"
        )


def write_outputs(versions: list[str], runtime: dict[str, float] | None = None) -> None:
    results = load_results(versions)
    stamp = releases.cache_root() / "results" / "runtime.json"
    if runtime is not None:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps(runtime), encoding="utf-8")
    elif stamp.exists():
        runtime = json.loads(stamp.read_text(encoding="utf-8"))
    findings = None
    if bisect.FINDINGS.exists():
        findings = json.loads(bisect.FINDINGS.read_text(encoding="utf-8"))
    path = report.write(report.render(results, findings, runtime=runtime))
    _log(f"wrote {path}")
    for written in record.write_results(results):
        _log(f"wrote {written}")
    ok, message = record.scan_for_secrets()
    _log(f"secret scan of {record.DATA}: {message}")
    if not ok:
        raise SystemExit(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m oracle", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run checks against releases")
    run.add_argument("--release", action="append", help="a release (default: pinned + newest)")
    run.add_argument("--check", action="append", choices=list(CHECKS))
    run.add_argument("--case", action="append", help="only this case (repeatable)")
    run.add_argument("--jobs", type=int, default=2)
    run.add_argument("--no-write", action="store_true", help="do not rewrite docs and data")
    bis = sub.add_parser("bisect", help="pin the release where each rule changed")
    bis.add_argument("--rule", action="append")
    bis.add_argument(
        "--forget", action="append", default=[], help="re-measure this probe on every release"
    )
    bis.add_argument(
        "--prune", action="store_true", help="then uninstall all but the pinned releases"
    )
    every = sub.add_parser("all", help="bisect, run every check, write the table and data")
    every.add_argument("--jobs", type=int, default=2)
    sub.add_parser("table", help="rewrite docs/compatibility.md and tests/data/oracle")
    inst = sub.add_parser("install", help="install releases into the cache")
    inst.add_argument("versions", nargs="*")
    sub.add_parser("where", help="print the cache folder")
    args = parser.parse_args(argv)

    if args.command == "where":
        print(releases.cache_root())
        return 0
    if args.command == "install":
        for version in args.versions or default_releases():
            rel = releases.install(version)
            print(f"{version}: {' '.join(rel.argv)}")
        return 0
    if args.command == "table":
        write_outputs(default_releases())
        return 0
    if args.command == "bisect":
        if args.forget:
            _log(f"forgot {', '.join(args.forget)} in {bisect.forget(set(args.forget))} releases")
        findings = bisect.bisect(only=set(args.rule) if args.rule else None, log=_log)
        _log(f"wrote {bisect.write_findings(findings)}")
        if args.prune:
            _log(f"pruned {releases.prune(set(default_releases()))}")
        return 0
    if args.command == "run":
        versions = args.release or default_releases()
        run_checks(versions, checks=args.check, cases=args.case, jobs=args.jobs)
        if not args.no_write:
            write_outputs(versions)
        return 0
    if args.command == "all":
        started = time.monotonic()
        versions = default_releases()
        _log(f"releases: {', '.join(versions)}")
        findings = bisect.bisect(log=_log)
        bisect.write_findings(findings)
        bisected = time.monotonic()
        run_checks(versions, jobs=args.jobs)
        checked = time.monotonic()
        # Probe results stay cached; only the releases the checks run are kept installed.
        releases.prune(set(versions))
        write_outputs(
            versions,
            runtime={
                "bisection": bisected - started,
                "checks": checked - bisected,
                "total": checked - started,
            },
        )
        _log(f"make oracle took {(time.monotonic() - started) / 60:.1f} min")
        return 0
    return 2
