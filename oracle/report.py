"""docs/compatibility.md: release × check → agree / differ, the reasons, and the bisection."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

from oracle import releases, rules
from oracle.checks import CHECKS
from oracle.releases import version_key

DOC = Path(__file__).resolve().parent.parent / "docs" / "compatibility.md"
MARK = {"agree": "agree", "differ": "**differ**", "error": "error", "n/a": "n/a"}


def _how(version: str) -> str:
    found = releases.locate(version)
    if found is None:
        return "not installed now"
    return "native binary" if found.native else "cli.js under node"


def _cell(outcome: dict[str, Any] | None) -> str:
    if outcome is None:
        return "—"
    verdict = MARK.get(outcome["verdict"], outcome["verdict"])
    reason = outcome.get("reason") or ""
    rule = outcome.get("rule")
    if outcome["verdict"] == "agree":
        return verdict
    text = f"{verdict}: {reason}" if reason else verdict
    if rule and outcome["verdict"] == "differ":
        text += f" (rule `{rule}`)"
    return _escape(text)


def _escape(text: str) -> str:
    """Table-safe: pipes escaped, `<sandbox>` not taken for an HTML tag."""
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def render(
    results: dict[str, list[dict[str, Any]]],
    findings: dict[str, Any] | None,
    *,
    runtime: dict[str, float] | None = None,
) -> str:
    versions = sorted(results, key=version_key)
    lines = [
        "# Compatibility with Claude Code releases",
        "",
        "Written by `make oracle` (the harness in `oracle/`); do not edit by hand. Each check",
        "runs the real Claude Code CLI from npm (`claude -p`, a fresh HOME and",
        "CLAUDE_CONFIG_DIR, a fake Messages API on loopback) and the workbench's own CLI in the",
        "same sandbox, and compares what they say. *agree* means the workbench gives the same",
        "answer as that release; *differ* names the difference and, where known, the rule that",
        "changed (see the bisection below). *n/a*: the release does not expose the behaviour.",
        "",
        f"Last run: {dt.date.today().isoformat()}; releases: "
        + ", ".join(f"{v} ({_how(v)})" for v in versions)
        + ".",
    ]
    if runtime:
        lines.append(
            "Runtime of the last `make oracle`: "
            + ", ".join(f"{name} {seconds / 60:.1f} min" for name, seconds in runtime.items())
            + " (probe results cached; with an empty cache the bisection installs and probes"
            " each release it needs, about 20 s a release on a loaded 2-core machine)."
        )
    lines += ["", "## Summary", "", "| check | " + " | ".join(versions) + " |"]
    lines.append("|---|" + "---|" * len(versions))
    for name, check in CHECKS.items():
        row = [f"{name}: {check.title}"]
        for v in versions:
            rows = [o for o in results[v] if o["check"] == name]
            counts = Counter(o["verdict"] for o in rows)
            cell = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "—"
            thresholds = Counter((o.get("workbench") or {}).get("threshold_verdict") for o in rows)
            if name == "autocompact" and thresholds.get("agree"):
                cell += f" (the threshold itself agrees in {thresholds['agree']})"
            row.append(cell)
        lines.append("| " + " | ".join(row) + " |")
    if findings:
        lines += _findings_section(findings)
    for name, check in CHECKS.items():
        lines += ["", f"## {name}: {check.title}", ""]
        lines.append("| case | " + " | ".join(versions) + " |")
        lines.append("|---|" + "---|" * len(versions))
        by_case: dict[str, dict[str, dict[str, Any]]] = {}
        titles: dict[str, str] = {}
        for case in check.cases():
            titles[case.name] = case.title
        for v in versions:
            for o in results[v]:
                if o["check"] == name:
                    by_case.setdefault(o["case"], {})[v] = o
        for case_name in [c for c in titles if c in by_case] + sorted(set(by_case) - set(titles)):
            cells = [_cell(by_case[case_name].get(v)) for v in versions]
            label = f"`{case_name}` {titles.get(case_name, '')}".strip()
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        if check.notes:
            lines.append("")
            lines += [f"- {_escape(note)}" for note in check.notes]
    lines.append("")
    return "\n".join(lines)


def _findings_section(findings: dict[str, Any]) -> list[str]:
    lo, hi = findings["range"]
    out = [
        "",
        "## Where each rule changed (bisection)",
        "",
        f"{findings['releases_in_range']} stable releases from {lo} to {hi} on npm; "
        f"{len(findings['releases_probed'])} were installed and probed: "
        + ", ".join(findings["releases_probed"])
        + ". The same findings, machine-readable, are in `tests/data/oracle/rule_changes.json`.",
        "",
        f"| rule | {lo} | changes (last release before → first release after: new value) | {hi} |",
        "|---|---|---|---|",
    ]
    for rule_id, entry in findings["rules"].items():
        old, new = rules.describe(entry["old_value"]), rules.describe(entry["new_value"])
        if not entry["changed"]:
            out.append(f"| `{rule_id}` {entry['title']} | {old} | unchanged | {new} |")
            continue
        steps = "; ".join(
            f"{c['last_before']} → **{c['first_after']}**: {rules.describe(c['to'])}"
            + ("" if c["exact"] else " (not closed: releases between could not be run)")
            for c in entry["changes"]
        )
        out.append(f"| `{rule_id}` {entry['title']} | {old} | {steps} | {new} |")
    return out


def write(text: str, path: Path = DOC) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
