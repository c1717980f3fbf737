"""Pin the first release showing each rule change, by bisection over npm's releases.

Every probed release yields a value for the rules it was probed for (`oracle.rules`); two
neighbouring probed releases whose values differ bracket a change, and the next release
probed is the middle of the widest bracket left. A rule may change more than once (the
default model did, four times): every change is bracketed until its two sides are adjacent
releases. Probe results are cached per release (a published release never changes), so a
later run re-reads them instead of running them again.

Assumes a value, once changed, does not come back between two probed releases.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracle import releases, rules

FINDINGS = (
    Path(__file__).resolve().parent.parent / "tests" / "data" / "oracle" / "rule_changes.json"
)


def _cache_file(version: str) -> Path:
    return releases.cache_root() / "probes" / f"{version}.json"


def cached_probe(version: str) -> dict[str, Any] | None:
    path = _cache_file(version)
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if data.get("probe_version") == rules.PROBE_VERSION else None


def probe(version: str, names: set[str] | None = None, *, log: Any = None) -> dict[str, Any]:
    """The probe results `names` (default: all) for `version`, measuring what is missing."""
    data = cached_probe(version) or {"version": version, "probe_version": rules.PROBE_VERSION}
    wanted = set(rules.PROBES) if names is None else set(names)
    missing = {n for n in wanted if n not in data}
    if not missing:
        return data
    started = time.monotonic()
    release = releases.install(version)
    installed = time.monotonic()
    data.update(rules.probe_release(release, names=missing))
    data["seconds"] = {
        "install": round(installed - started, 1),
        "probe": round(time.monotonic() - installed, 1),
    }
    path = _cache_file(version)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A probe that crashed or sent nothing (a timeout on a loaded machine) is run again later.
    kept = {
        k: v
        for k, v in data.items()
        if not (isinstance(v, dict) and ("error" in v or v.get("ran") is False))
    }
    path.write_text(json.dumps(kept, indent=1), encoding="utf-8")
    if log:
        log(
            f"  probed {version}: {', '.join(sorted(missing))} (install "
            f"{data['seconds']['install']}s, probes {data['seconds']['probe']}s)"
        )
    return data


def forget(names: set[str]) -> int:
    """Drop these probes from every cached release (after a probe changed); returns files."""
    folder = releases.cache_root() / "probes"
    changed = 0
    for path in folder.glob("*.json") if folder.is_dir() else []:
        data = json.loads(path.read_text(encoding="utf-8"))
        if names & set(data):
            for name in names:
                data.pop(name, None)
            path.write_text(json.dumps(data, indent=1), encoding="utf-8")
            changed += 1
    return changed


@dataclass
class Track:
    """One rule's values at the releases probed so far (by index into the release list)."""

    rule: rules.Rule
    values: dict[int, Any] = field(default_factory=dict)

    def known(self) -> list[tuple[int, Any]]:
        return sorted((i, v) for i, v in self.values.items() if v is not None)

    def transitions(self) -> list[tuple[int, int]]:
        """Neighbouring probed releases whose values differ."""
        known = self.known()
        return [(a, b) for (a, va), (b, vb) in zip(known, known[1:], strict=False) if va != vb]

    def gaps(self) -> list[tuple[int, int]]:
        return [(a, b) for a, b in self.transitions() if b - a > 1]


def bisect(
    versions: list[str] | None = None,
    *,
    only: set[str] | None = None,
    log: Any = print,
    max_probes: int = 120,
    probe_fn: Any = None,
) -> dict[str, Any]:
    """Bisect every rule (or `only` these) over `versions` (default: 2.1.88 .. newest).

    `probe_fn(version, names)` measures a release (default: `probe`, which installs and runs
    it); a stand-in makes the search testable without Claude Code.
    """
    measure_release = probe_fn or (lambda version, names: probe(version, names, log=log))
    versions = versions or releases.between(releases.OLDEST, releases.newest())
    chosen = [r for r in rules.RULES if only is None or r.id in only]
    tracks = [Track(rule) for rule in chosen]
    results: dict[int, dict[str, Any]] = {}
    tried: set[int] = set()
    prefetch = ThreadPoolExecutor(max_workers=2)
    pending: dict[int, Future[Any]] = {}

    def measure(index: int, names: set[str]) -> None:
        tried.add(index)
        if index in results and names <= set(results[index]):
            return
        future = pending.pop(index, None)
        if future is not None:
            try:
                future.result()
            except releases.InstallError:
                pass
        try:
            data = measure_release(versions[index], names)
        except releases.InstallError as exc:
            log(f"  {versions[index]}: {exc}")
            data = {}
        results[index] = data
        for track in tracks:
            if set(track.rule.probes) <= set(data):
                track.values[index] = track.rule.value(data)
        if probe_fn is None and index not in (0, len(versions) - 1):
            # ~400 MB a release: a probed one is not needed again (its results are cached).
            releases.uninstall(versions[index])

    def warm(index: int) -> None:
        if (
            probe_fn is None
            and index not in tried
            and index not in pending
            and cached_probe(versions[index]) is None
            and releases.locate(versions[index]) is None
        ):
            pending[index] = prefetch.submit(releases.install, versions[index])

    last = len(versions) - 1
    everything = {name for rule in chosen for name in rule.probes}
    if probe_fn is None:
        # What earlier runs measured counts at once: a warm cache closes every bracket
        # without installing anything.
        for index, version in enumerate(versions):
            data = cached_probe(version)
            if data:
                results[index] = data
                for track in tracks:
                    if set(track.rule.probes) <= set(data):
                        track.values[index] = track.rule.value(data)
    measure(0, everything)
    measure(last, everything)
    steps = 2
    while steps < max_probes:
        gaps = [(b - a, a, b, t) for t in tracks for a, b in t.gaps()]
        if not gaps:
            break
        gaps.sort(key=lambda g: -g[0])
        _, lo, hi, _ = gaps[0]
        mid = _usable_mid(lo, hi, tried)
        if mid is None:
            # Everything between was tried and failed: this change stays a bracket.
            for track in tracks:
                for a, b in track.gaps():
                    if (a, b) == (lo, hi):
                        track.values.update({i: None for i in range(a + 1, b)})
            tried.update(range(lo + 1, hi))
            if all(_usable_mid(a, b, tried) is None for _, a, b, _ in gaps):
                break
            continue
        # Install the two releases the next step may need while this one is probed.
        warm((lo + mid) // 2)
        warm((mid + hi) // 2)
        # Only the probes of rules with a change between this release's neighbours.
        names = {name for _, a, b, t in gaps if a < mid < b for name in t.rule.probes}
        measure(mid, names)
        steps += 1
        log(f"  {versions[mid]}: " + ", ".join(_mark(t, mid) for _, a, b, t in gaps if a < mid < b))
    prefetch.shutdown(wait=True)
    for index in pending:  # installed ahead but never needed
        if index not in results:
            releases.uninstall(versions[index])
    return _findings(versions, tracks, results)


def _mark(track: Track, index: int) -> str:
    value = track.values.get(index)
    return f"{track.rule.id}={rules.describe(value)}"


def _usable_mid(lo: int, hi: int, taken: set[int]) -> int | None:
    mid = (lo + hi) // 2
    for offset in range(hi - lo):
        for candidate in (mid + offset, mid - offset):
            if lo < candidate < hi and candidate not in taken:
                return candidate
    return None


def _findings(
    versions: list[str], tracks: list[Track], results: dict[int, dict[str, Any]]
) -> dict[str, Any]:
    probed = sorted(i for i, data in results.items() if data)
    out: dict[str, Any] = {
        "range": [versions[0], versions[-1]],
        "releases_in_range": len(versions),
        "releases_probed": [versions[i] for i in probed],
        "probe_version": rules.PROBE_VERSION,
        "rules": {},
    }
    for track in tracks:
        known = track.known()
        changes = [
            {
                "last_before": versions[a],
                "first_after": versions[b],
                "from": track.values[a],
                "to": track.values[b],
                "exact": b - a == 1,
            }
            for a, b in track.transitions()
        ]
        entry: dict[str, Any] = {
            "title": track.rule.title,
            "old_value": known[0][1] if known and known[0][0] == 0 else None,
            "new_value": known[-1][1] if known and known[-1][0] == len(versions) - 1 else None,
            "changed": bool(changes),
            "last_old": changes[0]["last_before"] if changes else None,
            "first_new": changes[0]["first_after"] if changes else None,
            "exact": all(c["exact"] for c in changes),
            "changes": changes,
            "values": {versions[i]: v for i, v in known},
        }
        out["rules"][track.rule.id] = entry
    return out


def write_findings(findings: dict[str, Any], path: Path = FINDINGS) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(findings, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
