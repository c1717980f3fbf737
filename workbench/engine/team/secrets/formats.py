"""Machine formats of a secret scan: JSON, SARIF 2.1.0, CSV and JUnit XML.

Every format carries what JSON carries (where, which rule, the fingerprint, the placeholder
verdict) and nothing more: no format has a field for the matched text, so none can leak it.
SARIF is what code-scanning dashboards and editors read; JUnit is what CI test reports show
(one test case per finding, failed; suppressed findings as skipped cases when listed).
The table is the CLI's (it needs Rich, which the engine never imports).
"""

from __future__ import annotations

import csv
import io
import json
import os
from urllib.parse import quote
from xml.etree import ElementTree as ET

from workbench import __version__
from workbench.engine.team.secrets.report import SecretScanReport
from workbench.engine.team.secrets.rules import RULES
from workbench.engine.team.secrets.scanner import SecretFinding
from workbench.engine.team.secrets.suppression import INLINE_REASONS, Suppressed
from workbench.engine.wording import plural

FORMATS = ("table", "json", "sarif", "csv", "junit")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "workbench scan-secrets"
FINGERPRINT_KEY = "workbenchSecret/v1"
CSV_COLUMNS = (
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "rule_id",
    "label",
    "fingerprint",
    "likely_placeholder",
    "placeholder_reason",
    "suppressed_by",
)
_RULE_INDEX = {rule.id: n for n, rule in enumerate(RULES)}


def render(report: SecretScanReport, fmt: str, *, list_suppressed: bool = False) -> str:
    """The report in `fmt` (one of `FORMATS` except `table`), ending in a newline."""
    if fmt == "json":
        body = report.to_json(list_suppressed=list_suppressed)
        return json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    if fmt == "sarif":
        return json.dumps(to_sarif(report, list_suppressed=list_suppressed), indent=2) + "\n"
    if fmt == "csv":
        return to_csv(report, list_suppressed=list_suppressed)
    if fmt == "junit":
        return to_junit(report, list_suppressed=list_suppressed)
    raise ValueError(f"unknown format {fmt!r}")


def finding_message(finding: SecretFinding) -> str:
    """One sentence about a finding that never quotes it."""
    text = f"{finding.label} found (rule {finding.rule_id}); the secret text is not shown."
    if finding.likely_placeholder:
        text += f" Likely a placeholder: {finding.placeholder_reason}."
    return text


# --- SARIF ----------------------------------------------------------------------------------


def _uri(path: str) -> str:
    if os.path.isabs(path):
        return "file://" + quote(path.replace(os.sep, "/"))
    return quote(path)


def _sarif_rule(rule_index: int) -> dict[str, object]:
    rule = RULES[rule_index]
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": f"{rule.label} in text"},
        "fullDescription": {
            "text": (
                f"Text shaped like a {rule.label}: one of the 36 rules Claude Code uses to "
                "keep secrets out of team memory."
            )
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["security", "secret"]},
    }


def _sarif_suppression(item: Suppressed) -> dict[str, object]:
    kind = "inSource" if item.by in INLINE_REASONS else "external"
    justification = item.by + (f": {item.detail}" if item.detail else "")
    return {"kind": kind, "status": "accepted", "justification": justification}


def _sarif_result(
    report: SecretScanReport, finding: SecretFinding, suppressed: Suppressed | None
) -> dict[str, object]:
    properties: dict[str, object] = {"likelyPlaceholder": finding.likely_placeholder}
    if finding.placeholder_reason:
        properties["placeholderReason"] = finding.placeholder_reason
    verdict = report.verdicts.get(finding.fingerprint)
    if verdict:
        properties["baselineVerdict"] = verdict
    result: dict[str, object] = {
        "ruleId": finding.rule_id,
        "ruleIndex": _RULE_INDEX[finding.rule_id],
        "level": "warning" if finding.likely_placeholder else "error",
        "message": {"text": finding_message(finding)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(finding.path)},
                    "region": {
                        "startLine": finding.line,
                        "startColumn": finding.column,
                        "endLine": finding.end_line,
                        "endColumn": finding.end_column,
                    },
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": properties,
    }
    if suppressed is not None:
        result["suppressions"] = [_sarif_suppression(suppressed)]
    return result


def to_sarif(report: SecretScanReport, *, list_suppressed: bool = False) -> dict[str, object]:
    """The report as one SARIF 2.1.0 run; suppressed findings carry `suppressions`."""
    results = [_sarif_result(report, f, None) for f in report.findings]
    if list_suppressed:
        results += [_sarif_result(report, s.finding, s) for s in report.suppressed_findings]
    notifications = [
        {"level": "warning", "message": {"text": f"could not read {u.path}: {u.reason}"}}
        for u in report.unreadable
    ] + [
        {"level": "note", "message": {"text": f"skipped {u.path}: {u.reason}"}}
        for u in report.skipped
    ]
    invocation: dict[str, object] = {"executionSuccessful": True}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": __version__,
                        "rules": [_sarif_rule(n) for n in range(len(RULES))],
                    }
                },
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": results,
                "properties": {
                    "filesScanned": report.files_scanned,
                    "suppressed": report.suppressed,
                    "engine": report.engine,
                },
            }
        ],
    }


# --- CSV ------------------------------------------------------------------------------------


def _row(finding: SecretFinding, by: str) -> list[object]:
    return [
        finding.path,
        finding.line,
        finding.column,
        finding.end_line,
        finding.end_column,
        finding.rule_id,
        finding.label,
        finding.fingerprint,
        "true" if finding.likely_placeholder else "false",
        finding.placeholder_reason or "",
        by,
    ]


def to_csv(report: SecretScanReport, *, list_suppressed: bool = False) -> str:
    """One header row, then one row per finding (suppressed ones name what suppressed them)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for finding in report.findings:
        writer.writerow(_row(finding, ""))
    if list_suppressed:
        for item in report.suppressed_findings:
            writer.writerow(_row(item.finding, item.by))
    return out.getvalue()


# --- JUnit ----------------------------------------------------------------------------------


def _case(finding: SecretFinding) -> ET.Element:
    return ET.Element(
        "testcase",
        {
            "classname": finding.path,
            "name": f"{finding.rule_id} at {finding.path}:{finding.line}:{finding.column}",
            "file": finding.path,
            "line": str(finding.line),
        },
    )


def to_junit(report: SecretScanReport, *, list_suppressed: bool = False) -> str:
    """JUnit XML: one failed test case per finding, a passing case for a clean scan."""
    suppressed = report.suppressed_findings if list_suppressed else ()
    cases = len(report.findings) + len(suppressed) or 1
    suites = ET.Element(
        "testsuites",
        {"name": TOOL_NAME, "tests": str(cases), "failures": str(len(report.findings))},
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        {
            "name": "secrets",
            "tests": str(cases),
            "failures": str(len(report.findings)),
            "errors": "0",
            "skipped": str(len(suppressed)),
        },
    )
    for finding in report.findings:
        case = _case(finding)
        failure = ET.SubElement(
            case, "failure", {"type": finding.rule_id, "message": finding_message(finding)}
        )
        failure.text = f"fingerprint {finding.fingerprint}"
        suite.append(case)
    for item in suppressed:
        case = _case(item.finding)
        ET.SubElement(case, "skipped", {"message": f"suppressed by {item.by}"})
        suite.append(case)
    if not report.findings and not suppressed:
        ET.SubElement(
            suite,
            "testcase",
            {
                "classname": "secrets",
                "name": f"no secrets in {plural(report.files_scanned, 'file')}",
            },
        )
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, "unicode") + "\n"
