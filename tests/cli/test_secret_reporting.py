"""`scan-secrets` reporting on a par with gitleaks and detect-secrets: formats, exit codes,
stdin, exclusions, size limit, listing what was suppressed, the next-line marker, baseline
update and audit, published example keys, and the table at 80 columns."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest
from secretgen import make_token

from workbench.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Three findings in two files, one of them on an allow-marked line."""
    root = tmp_path / "scanned"
    (root / "team").mkdir(parents=True)
    (root / "team" / "ci.md").write_text(
        f"bot token {make_token('slack-bot-token', 1)}\n"
        f"npm {make_token('npm-access-token', 1)}  <!-- workbench:allow-secret -->\n",
        encoding="utf-8",
    )
    (root / "notes.md").write_text(
        f"# notes\n\nkey: {make_token('github-pat', 1)}\n", encoding="utf-8"
    )
    return root


def tokens() -> list[str]:
    return [
        make_token("slack-bot-token", 1),
        make_token("npm-access-token", 1),
        make_token("github-pat", 1),
    ]


def assert_no_secret(*outputs: str) -> None:
    for token in tokens():
        for output in outputs:
            assert token not in output
            assert token[8:] not in output


# --- formats --------------------------------------------------------------------------------


def test_sarif_validates_against_the_official_schema(capsys, folder: Path):
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    (folder / "big.md").write_text("x" * 5000, encoding="utf-8")
    for extra in ([], ["--list-suppressed", "--max-size", "1K"]):
        code, out, err = run(capsys, "scan-secrets", str(folder), "--format", "sarif", *extra)
        assert code == 1
        sarif = json.loads(out)
        jsonschema.Draft4Validator(schema).validate(sarif)
        assert sarif["version"] == "2.1.0"
        run_ = sarif["runs"][0]
        assert len(run_["tool"]["driver"]["rules"]) == 36
        results = run_["results"]
        kept = [r for r in results if "suppressions" not in r]
        assert sorted(r["ruleId"] for r in kept) == ["github-pat", "slack-bot-token"]
        for result in results:
            rule = run_["tool"]["driver"]["rules"][result["ruleIndex"]]
            assert rule["id"] == result["ruleId"]
            region = result["locations"][0]["physicalLocation"]["region"]
            assert region["startLine"] >= 1 and region["endColumn"] > region["startColumn"]
            assert len(result["partialFingerprints"]["workbenchSecret/v1"]) == 32
        assert_no_secret(out, err)
    suppressed = [r for r in results if "suppressions" in r]
    assert [r["ruleId"] for r in suppressed] == ["npm-access-token"]
    assert suppressed[0]["suppressions"][0]["kind"] == "inSource"
    notes = run_["invocations"][0]["toolExecutionNotifications"]
    assert any("big.md" in n["message"]["text"] for n in notes)


def test_a_schema_violation_would_be_caught():
    """The validation is real: a result without a message fails the schema."""
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    broken = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(broken)


def test_csv_has_a_header_and_one_row_per_finding(capsys, folder: Path):
    from workbench.engine.team.secrets.formats import CSV_COLUMNS

    code, out, err = run(capsys, "scan-secrets", str(folder), "--format", "csv")
    assert code == 1
    rows = list(csv.reader(io.StringIO(out)))
    assert tuple(rows[0]) == CSV_COLUMNS
    body = [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
    assert sorted(r["rule_id"] for r in body) == ["github-pat", "slack-bot-token"]
    assert {r["suppressed_by"] for r in body} == {""}
    by_rule = {r["rule_id"]: r for r in body}
    assert by_rule["github-pat"]["path"].endswith("notes.md")
    assert (by_rule["github-pat"]["line"], by_rule["github-pat"]["column"]) == ("3", "6")
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--format", "csv", "--list-suppressed")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["suppressed_by"] for r in rows if r["suppressed_by"]] == ["allow-marker"]
    assert_no_secret(out, err)


def test_junit_has_one_failed_case_per_finding(capsys, folder: Path, tmp_path: Path):
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--format", "junit")
    assert code == 1
    root = ET.fromstring(out)
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "2")
    failures = [case.find("failure") for case in suite.findall("testcase")]
    assert sorted(f.get("type") for f in failures if f is not None) == [
        "github-pat",
        "slack-bot-token",
    ]
    assert_no_secret(out)
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "a.md").write_text("nothing here\n")
    code, out, _ = run(capsys, "scan-secrets", str(clean), "--format", "junit")
    suite = ET.fromstring(out).find("testsuite")
    assert code == 0 and suite is not None and suite.get("failures") == "0"
    assert len(suite.findall("testcase")) == 1 and suite.find("testcase/failure") is None


def test_output_file_gets_the_report(capsys, folder: Path, tmp_path: Path):
    target = tmp_path / "out" / "report.sarif"
    code, out, _ = run(
        capsys, "scan-secrets", str(folder), "--format", "sarif", "--output", str(target)
    )
    assert code == 1 and out == ""
    assert json.loads(target.read_text())["version"] == "2.1.0"


def test_cli_constants_match_the_engine():
    from workbench.commands import team
    from workbench.engine.team.secrets import formats, report

    assert team.FORMATS == formats.FORMATS
    assert team.STDIN_NAME == report.STDIN_NAME


# --- exit codes and stdin -------------------------------------------------------------------


def test_exit_code_is_chosen_for_findings_only(capsys, folder: Path, tmp_path: Path):
    code, _, _ = run(capsys, "scan-secrets", str(folder), "--exit-code", "7", "--json")
    assert code == 7
    code, _, _ = run(capsys, "scan-secrets", str(folder), "--exit-code", "0")
    assert code == 0
    clean = tmp_path / "clean"
    clean.mkdir()
    code, _, _ = run(capsys, "scan-secrets", str(clean), "--exit-code", "7")
    assert code == 0
    for bad in (["--exit-code", "x"], ["--exit-code", "300"], ["--format", "xml"]):
        code, out, err = run(capsys, "scan-secrets", str(folder), *bad)
        assert code == 2 and out == "" and err.count("\n") == 1
    # Bad input keeps exit 2 whatever --exit-code says.
    code, _, _ = run(capsys, "scan-secrets", str(tmp_path / "missing"), "--exit-code", "0")
    assert code == 2


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)

    def isatty(self) -> bool:
        return False


def test_stdin_is_scanned_with_a_name(capsys, monkeypatch, folder: Path):
    text = (folder / "notes.md").read_bytes() + b"\xff\xfe bad bytes\n"
    monkeypatch.setattr("sys.stdin", _Stdin(text))
    code, out, err = run(capsys, "scan-secrets", "-", "--json")
    data = json.loads(out)
    assert code == 1 and data["files_scanned"] == 1
    (finding,) = data["findings"]
    assert finding["path"] == "<stdin>" and finding["rule_id"] == "github-pat"
    assert (finding["line"], finding["column"]) == (3, 6)
    assert_no_secret(out, err)
    # Named, it fingerprints the same on every run; mixed with a folder, both are scanned.
    monkeypatch.setattr("sys.stdin", _Stdin(text))
    code, out, _ = run(capsys, "scan-secrets", "-", "--stdin-name", "piped.md", "--json")
    first = json.loads(out)["findings"][0]
    monkeypatch.setattr("sys.stdin", _Stdin(text))
    code, out, _ = run(
        capsys, "scan-secrets", str(folder), "-", "--stdin-name", "piped.md", "--json"
    )
    data = json.loads(out)
    assert data["files_scanned"] == 3
    piped = [f for f in data["findings"] if f["path"] == "piped.md"]
    assert [f["fingerprint"] for f in piped] == [first["fingerprint"]]


def test_redact_reads_stdin(capsys, monkeypatch):
    token = make_token("github-oauth", 4)
    monkeypatch.setattr("sys.stdin", _Stdin(f"a {token}\n".encode()))
    code, out, err = run(capsys, "redact", "-")
    assert code == 0 and out == "a [REDACTED]\n" and "1 secret" in err


# --- exclusions and size ------------------------------------------------------------------------


def test_path_exclusions_leave_files_unread(capsys, folder: Path):
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--exclude-path", "team", "--json")
    data = json.loads(out)
    assert code == 1 and data["files_scanned"] == 1 and data["files_excluded"] == 1
    assert [f["rule_id"] for f in data["findings"]] == ["github-pat"]
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--exclude-path", "*.md", "--json")
    data = json.loads(out)
    assert code == 0 and data["files_scanned"] == 0 and data["files_excluded"] == 2
    code, out, _ = run(
        capsys, "scan-secrets", str(folder), "--exclude-path", "team/c*.md", "--json"
    )
    assert json.loads(out)["files_excluded"] == 1


def test_rule_fingerprint_and_line_exclusions_suppress_and_are_listed(capsys, folder: Path):
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--json")
    by_rule = {f["rule_id"]: f["fingerprint"] for f in json.loads(out)["findings"]}
    code, out, _ = run(
        capsys,
        "scan-secrets",
        str(folder),
        "--exclude-rule",
        "slack-bot-token",
        "--exclude-fingerprint",
        by_rule["github-pat"][:12],
        "--list-suppressed",
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and data["findings"] == []
    assert (data["suppressed"], data["suppressed_excluded"], data["suppressed_inline"]) == (3, 2, 1)
    reasons = sorted((s["rule_id"], s["suppressed_by"]) for s in data["suppressed_findings"])
    assert reasons == [
        ("github-pat", "excluded-fingerprint"),
        ("npm-access-token", "allow-marker"),
        ("slack-bot-token", "excluded-rule"),
    ]
    code, out, _ = run(
        capsys, "scan-secrets", str(folder), "--exclude-line", r"^bot token ", "--json"
    )
    data = json.loads(out)
    assert [f["rule_id"] for f in data["findings"]] == ["github-pat"]
    assert data["suppressed_excluded"] == 1


@pytest.mark.parametrize(
    "flags",
    [
        ["--exclude-line", "(unclosed"],
        ["--exclude-rule", "no-such-rule"],
        ["--exclude-fingerprint", "xyz"],
        ["--max-size", "lots"],
        ["--mark", "abcdef12=real"],
        ["--update-baseline", "b.json", "--baseline", "b.json"],
    ],
)
def test_bad_exclusions_are_usage_errors(capsys, folder: Path, flags: list[str]):
    code, out, err = run(capsys, "scan-secrets", str(folder), *flags)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err


def test_max_size_skips_and_lists_large_files(capsys, folder: Path):
    big = folder / "big.md"
    big.write_text("filler line\n" * 200 + f"key {make_token('pulumi-api-token', 2)}\n")
    code, out, err = run(capsys, "scan-secrets", str(folder), "--max-size", "1K", "--json")
    data = json.loads(out)
    assert data["files_scanned"] == 2
    assert [Path(s["path"]).name for s in data["skipped"]] == ["big.md"]
    assert "skipped" in err and "big.md" in err
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--max-size", "1M", "--json")
    assert "pulumi-api-token" in {f["rule_id"] for f in json.loads(out)["findings"]}


# --- markers and listing --------------------------------------------------------------------


def test_next_line_marker_allows_only_the_line_below(capsys, tmp_path: Path):
    root = tmp_path / "m"
    root.mkdir()
    a, b, c = (make_token("gitlab-pat", n) for n in (1, 2, 3))
    (root / "a.md").write_text(
        f"<!-- workbench:allow-secret-next-line --> {a}\n{b}\n{c}\n", encoding="utf-8"
    )
    code, out, _ = run(capsys, "scan-secrets", str(root), "--json", "--list-suppressed")
    data = json.loads(out)
    assert code == 1
    assert sorted(f["line"] for f in data["findings"]) == [1, 3]
    assert [(s["line"], s["suppressed_by"]) for s in data["suppressed_findings"]] == [
        (2, "allow-next-line")
    ]


def test_list_suppressed_in_the_table(capsys, folder: Path, tmp_path: Path):
    baseline = tmp_path / "b.json"
    run(capsys, "scan-secrets", str(folder), "--write-baseline", str(baseline))
    code, out, _ = run(
        capsys, "scan-secrets", str(folder), "--baseline", str(baseline), "--list-suppressed"
    )
    assert code == 0
    assert "suppressed:" in out and "allow-marker" in out and "baseline (unaudited)" in out
    assert "3 suppressed (1 by allow marker, 2 by baseline)" in out
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--baseline", str(baseline))
    assert "suppressed:" not in out


# --- baselines: update and audit --------------------------------------------------------------


def test_update_baseline_in_place_keeps_labels(capsys, folder: Path, tmp_path: Path):
    baseline = tmp_path / "baseline.json"
    code, _, err = run(capsys, "scan-secrets", str(folder), "--update-baseline", str(baseline))
    assert code == 0 and "3 added, 0 removed, 0 kept" in err
    stored = json.loads(baseline.read_text())
    assert stored["version"] == 2 and len(stored["fingerprints"]) == 3
    assert all(e["verdict"] is None for e in stored["entries"])
    assert_no_secret(baseline.read_text())
    slack = next(e for e in stored["entries"] if e["rule_id"] == "slack-bot-token")
    code, _, _ = run(
        capsys,
        "scan-secrets",
        str(folder),
        "--audit",
        str(baseline),
        "--mark",
        f"{slack['fingerprint'][:10]}=false-positive",
    )
    assert code == 0
    # One finding goes, one arrives.
    (folder / "notes.md").write_text(f"moved: {make_token('databricks-api-token', 5)}\n")
    code, out, err = run(
        capsys, "scan-secrets", str(folder), "--update-baseline", str(baseline), "--json"
    )
    assert code == 0 and "1 added, 1 removed, 2 kept" in err
    assert json.loads(out)["findings"] == []
    stored = json.loads(baseline.read_text())
    verdicts = {e["rule_id"]: e["verdict"] for e in stored["entries"]}
    assert verdicts == {
        "slack-bot-token": "false-positive",
        "npm-access-token": None,
        "databricks-api-token": None,
    }


def test_audit_by_flags_counts_and_real_entries_are_reported_again(
    capsys, folder: Path, tmp_path: Path
):
    baseline = tmp_path / "baseline.json"
    run(capsys, "scan-secrets", str(folder), "--write-baseline", str(baseline))
    entries = {e["rule_id"]: e["fingerprint"] for e in json.loads(baseline.read_text())["entries"]}
    code, out, err = run(
        capsys,
        "scan-secrets",
        str(folder),
        "--audit",
        str(baseline),
        "--mark",
        f"{entries['github-pat'][:8]}=real",
        "--mark",
        f"{entries['npm-access-token']}=placeholder",
    )
    assert code == 0
    assert "1 real, 0 false positive, 1 placeholder, 1 not audited" in err
    assert "real" in out and "not audited" in out
    assert_no_secret(out, err, baseline.read_text())
    code, out, err = run(
        capsys, "scan-secrets", str(folder), "--audit", str(baseline), "--mark", "*=fp", "--json"
    )
    data = json.loads(out)
    assert data["counts"] == {
        "real": 1,
        "false-positive": 1,
        "placeholder": 1,
        "unaudited": 0,
    }
    assert {e["verdict"] for e in data["entries"]} == {"real", "false-positive", "placeholder"}
    # The real one is reported again (exit 1), with its label; the others stay suppressed.
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--baseline", str(baseline), "--json")
    data = json.loads(out)
    assert code == 1
    assert [(f["rule_id"], f.get("baseline_verdict")) for f in data["findings"]] == [
        ("github-pat", "real")
    ]
    assert data["suppressed_baseline"] == 1 and data["suppressed_inline"] == 1
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--baseline", str(baseline))
    assert "labelled real in the baseline" in out


def test_interactive_audit_asks_shows_redacted_context_and_saves_each_answer(
    capsys, monkeypatch, folder: Path, tmp_path: Path
):
    from workbench.commands import team

    baseline = tmp_path / "baseline.json"
    run(capsys, "scan-secrets", str(folder), "--write-baseline", str(baseline))
    answers = iter(["x", "r", "q"])  # a bad answer is asked again; q stops at the second
    monkeypatch.setattr(team, "_interactive", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    code, out, err = run(capsys, "scan-secrets", str(folder), "--audit", str(baseline))
    assert code == 0
    assert "[1/3]" in out and "[2/3]" in out and "[3/3]" not in out
    assert "[REDACTED]" in out and "fingerprint" in out
    assert_no_secret(out, err)
    assert "1 real, 0 false positive, 0 placeholder, 2 not audited" in err
    verdicts = [e["verdict"] for e in json.loads(baseline.read_text())["entries"]]
    assert sorted(v or "" for v in verdicts) == ["", "", "real"]
    # The next audit asks only about what is left; skipping keeps an entry unaudited.
    answers = iter(["s", "p"])
    code, out, err = run(capsys, "scan-secrets", str(folder), "--audit", str(baseline))
    assert "[1/2]" in out and "[2/2]" in out
    assert "1 real, 0 false positive, 1 placeholder, 1 not audited" in err


def test_masked_context_keeps_line_numbers():
    from workbench.engine.team.secrets.audit import masked_lines
    from workbench.engine.team.secrets.scanner import find_secrets

    key = make_token("private-key", 1)
    text = f"before\n{key}\nafter {make_token('github-pat', 2)}\n"
    lines = masked_lines(text, find_secrets(text))
    assert len(lines) == len(text.split("\n"))
    assert lines[0] == "before" and lines[-2] == "after [REDACTED]"
    assert all(line in ("[REDACTED]", "") for line in lines[1 : 1 + key.count("\n") + 1])


# --- placeholders ---------------------------------------------------------------------------


def _firebase_sample() -> str:
    # One of the Firebase Android SDK's published sample keys, assembled so that this file
    # never holds it whole.
    return "AIza" + "SyAnLA7Nfe" + "LquW1tJFpx_eQ" + "CxoX-oo6YyIs"


def _stripe_docs_key() -> str:
    return "sk_" + "test_" + "4eC39HqLyj" + "WDarjtT1zdp7dc"


def test_published_example_keys_are_placeholders_yet_refused(tmp_path: Path):
    from workbench.engine.claude_paths import resolve_locations
    from workbench.engine.team.secrets.guard import check_team_mem_secrets
    from workbench.engine.team.secrets.scanner import find_secrets
    from workbench.engine.team.sync.local import read_local_entries

    for key, rule in (
        (_firebase_sample(), "gcp-api-key"),
        (_stripe_docs_key(), "stripe-access-token"),
    ):
        text = f'apiKey: "{key}"\n'
        (finding,) = find_secrets(text)
        assert finding.rule_id == rule and finding.likely_placeholder
        assert "published example" in (finding.placeholder_reason or "")
        assert key not in (finding.placeholder_reason or "")
        # One character changed: no longer the published key, and it looks random.
        altered = key[:-1] + ("A" if key[-1] != "A" else "B")
        (other,) = find_secrets(f'apiKey: "{altered}"\n')
        assert not other.likely_placeholder
        locations = resolve_locations(tmp_path, memory_dir_override=str(tmp_path / "mem"))
        assert check_team_mem_secrets(locations.team_dir + "keys.md", text, locations)
        team = tmp_path / f"team-{rule}"
        team.mkdir()
        (team / "keys.md").write_text(text)
        snapshot = read_local_entries(str(team))
        assert "keys.md" not in snapshot.entries
        assert [s.path for s in snapshot.skipped_secrets] == ["keys.md"]


def test_real_looking_hand_written_keys_are_not_called_placeholders():
    from workbench.engine.team.secrets.scanner import find_secrets

    # Typed by hand to look real: nothing in the value says example.
    real_looking = [
        "AKIA" + "J7QK2M4XRWZ5P3NB",
        "gh" + "p_" + "R7dX2mQ9vL4kT8nB3wY6pZ1sF5hJ0cA2eG4i",
        "sk_" + "live_" + "51HqL9sKd8vTw2XyZ3aB4cD5",
        "gl" + "pat-" + "Xk9mP2qR7sT4vW8yZ3bC",
        "hf_" + "kQxWmRtYpLzNvBcJhGfDsAeUiOyTrEwQaZ",
        "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmSaMpLeXY",  # spells SaMpLe in mixed case
        "dapi" + "f3a9b1c7d2e8456a0b9c3d7e1f2a4b6c",
    ]
    for token in real_looking:
        (finding,) = find_secrets(f"key: {token}\n")
        assert not finding.likely_placeholder, (finding.rule_id, finding.placeholder_reason)
    placeholders = [
        "AKIA" + "IOSFODNN7" + "EXAMPLE",
        "gh" + "p_" + "x" * 36,
        "hf_" + "AbcdEfghIjklMnopQrstUvwxYz" + "abCdefGh",
        "sk_" + "test_" + "YourKeyHere123",
        "gl" + "pat-" + "Sample" + "Token9Kq2Lm4Np",
    ]
    for token in placeholders:
        (finding,) = find_secrets(f"key: {token}\n")
        assert finding.likely_placeholder, finding.rule_id


# --- the table at 80 columns ------------------------------------------------------------------


def _report_for(tmp_path: Path, files: dict[str, str]):
    from workbench.engine.team.secrets.report import scan_files

    root = tmp_path / "t"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return scan_files([root], display=lambda p: p.relative_to(root).as_posix())


def _render(report, width: int) -> str:
    from rich.console import Console

    from workbench.commands.team import print_report

    buffer = io.StringIO()
    print_report(Console(file=buffer, width=width, no_color=True, highlight=False), report)
    return buffer.getvalue()


def test_the_table_reads_at_80_columns(tmp_path: Path):
    files = {
        f"team/deep/{rule}.md": f"first line\n\n  key {make_token(rule, 3)}  placeholder?\n"
        for rule in ("huggingface-access-token", "grafana-service-account-token", "github-pat")
    }
    files["team/deep/example.md"] = "key " + "AKIA" + "IOSFODNN7" + "EXAMPLE" + "\n"
    report = _report_for(tmp_path, files)
    text = _render(report, 80)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    for finding in report.findings:
        where = f"{finding.path}:{finding.line}:{finding.column}"
        assert any(where in line for line in lines), where
    assert "likely placeholder" in text
    assert_no_secret(text)


def test_a_path_too_long_for_the_table_is_still_never_split(tmp_path: Path):
    deep = "/".join(["a-rather-long-folder-name"] * 4)
    report = _report_for(tmp_path, {f"{deep}/notes.md": f"key {make_token('github-pat', 8)}\n"})
    (finding,) = report.findings
    where = f"{finding.path}:{finding.line}:{finding.column}"
    assert len(where) > 80
    lines = _render(report, 80).splitlines()
    assert where in lines
    assert re.search(r"GitHub PAT\s+[0-9a-f]{12}", "\n".join(lines))
