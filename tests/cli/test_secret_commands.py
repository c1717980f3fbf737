"""`workbench scan-secrets` and `workbench redact` end to end (spec 05)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from secretgen import CONTEXTS, GENERATORS, make_token

from workbench.cli import main

REPO = Path(__file__).resolve().parents[2]
FINDING_KEYS = {"path", "line", "rule_id", "label", "fingerprint", "likely_placeholder"}


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    folder = tmp_path / "memory"
    (folder / "team" / "deep").mkdir(parents=True)
    (folder / "notes.md").write_text("---\nname: notes\n---\n\nNothing secret.\n")
    return folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_folder_exits_0_with_the_spec_keys(capsys, memory: Path):
    code, out, _err = run(capsys, "scan-secrets", str(memory), "--json")
    data = json.loads(out)
    assert code == 0
    assert data["files_scanned"] == 1
    assert data["findings"] == [] and data["suppressed"] == 0


def test_findings_exit_1_and_never_print_the_secret(capsys, memory: Path):
    tokens = {rule_id: make_token(rule_id, 40) for rule_id in GENERATORS}
    contexts = sorted(CONTEXTS)
    for n, (rule_id, token) in enumerate(tokens.items()):
        wrap = CONTEXTS[contexts[n % len(contexts)]]
        (memory / "team" / "deep" / f"{rule_id}.md").write_text(wrap(token))
    for flag in ("--json", None):
        argv = ["scan-secrets", "--memory-dir", str(memory)] + ([flag] if flag else [])
        code, out, err = run(capsys, *argv)
        assert code == 1
        for token in tokens.values():
            for piece in token.split("\n"):
                if len(piece) >= 16:
                    assert piece not in out and piece not in err
    code, out, _err = run(capsys, "scan-secrets", "--memory-dir", str(memory), "--json")
    data = json.loads(out)
    assert data["files_scanned"] == 37
    assert {f["rule_id"] for f in data["findings"]} == set(GENERATORS)
    for finding in data["findings"]:
        assert FINDING_KEYS <= set(finding)
        assert finding["path"] == f"team/deep/{finding['rule_id']}.md"
        assert os.path.isabs(finding["abs_path"])
        assert finding["likely_placeholder"] is False


def test_human_output_is_a_table_and_a_summary(capsys, memory: Path):
    (memory / "team" / "a.md").write_text(f"key {make_token('github-oauth', 1)}\n")
    code, out, _err = run(capsys, "scan-secrets", str(memory / "team"))
    assert code == 1
    assert "GitHub OAuth" in out and "a.md:1:5" in out
    assert "1 finding in 1 file; 0 suppressed" in out


def test_allow_marker_and_baseline_suppress_and_are_counted(capsys, memory: Path, tmp_path):
    marked = f"key {make_token('npm-access-token', 1)} <!-- workbench:allow-secret -->\n"
    (memory / "team" / "marked.md").write_text(marked)
    (memory / "team" / "known.md").write_text(f"key {make_token('pulumi-api-token', 1)}\n")
    code, out, _err = run(capsys, "scan-secrets", str(memory), "--json")
    data = json.loads(out)
    assert code == 1
    assert data["suppressed"] == 1 and data["suppressed_inline"] == 1
    assert [f["rule_id"] for f in data["findings"]] == ["pulumi-api-token"]

    baseline = tmp_path / "baseline.json"
    code, _out, err = run(
        capsys, "scan-secrets", str(memory), "--write-baseline", str(baseline), "--json"
    )
    assert code == 0 and "wrote 2 fingerprints" in err
    assert make_token("pulumi-api-token", 1) not in baseline.read_text()
    code, out, _err = run(
        capsys, "scan-secrets", str(memory), "--baseline", str(baseline), "--json"
    )
    data = json.loads(out)
    assert code == 0
    assert data["findings"] == []
    assert (data["suppressed"], data["suppressed_inline"], data["suppressed_baseline"]) == (2, 1, 1)

    # The scan's own JSON output works as a baseline too.
    report = tmp_path / "report.json"
    (memory / "team" / "marked.md").unlink()
    code, out, _err = run(capsys, "scan-secrets", str(memory), "--json")
    report.write_text(out)
    code, out, _err = run(capsys, "scan-secrets", str(memory), "--baseline", str(report))
    assert code == 0 and "1 suppressed (1 by baseline)" in out


def test_bad_input_exits_2_with_one_line(capsys, memory: Path, tmp_path: Path):
    code, out, err = run(capsys, "scan-secrets", str(tmp_path / "missing"))
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    bad = tmp_path / "bad.txt"
    bad.write_text("zzz\n")
    code, _out, err = run(capsys, "scan-secrets", str(memory), "--baseline", str(bad))
    assert code == 2 and "fingerprint" in err
    code, _out, err = run(capsys, "redact", str(tmp_path / "missing.md"))
    assert code == 2 and err.count("\n") == 1


def test_forced_fallback_gives_the_same_report(capsys, memory: Path):
    for n, rule_id in enumerate(sorted(GENERATORS)):
        (memory / f"f{n}.md").write_text(f"line\nkey: {make_token(rule_id, n)}\n")
    code_re, out_re, _ = run(capsys, "scan-secrets", str(memory), "--json", "--engine", "re")
    code_auto, out_auto, _ = run(capsys, "scan-secrets", str(memory), "--json")
    data_re, data_auto = json.loads(out_re), json.loads(out_auto)
    assert code_re == code_auto == 1
    assert data_re["engine"] == "re"
    assert data_re["findings"] == data_auto["findings"]


def test_engine_comes_from_the_environment(memory: Path):
    env = dict(os.environ, WORKBENCH_SECRET_ENGINE="re")
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "scan-secrets", str(memory), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["engine"] == "re"


def test_redact_prints_the_file_with_secrets_replaced(capsys, memory: Path):
    token = make_token("slack-bot-token", 2)
    key = make_token("private-key", 2)
    text = f"# creds\n\nbot: `{token}`\n\n{key}\n\nend\n"
    path = memory / "team" / "creds.md"
    path.write_text(text)
    code, out, err = run(capsys, "redact", str(path))
    assert code == 0
    assert out == "# creds\n\nbot: `[REDACTED]`\n\n[REDACTED]\n\nend\n"
    assert "replaced 2 secrets with" in err
    assert path.read_text() == text  # the file is left alone
    code, out, _err = run(capsys, "redact", str(path), "--json", "--memory-dir", str(memory))
    data = json.loads(out)
    assert data["path"] == "team/creds.md" and data["redactions"] == 2
    assert token not in out


def test_binary_and_invalid_utf8_files_do_not_crash(capsys, memory: Path):
    token = make_token("github-pat", 9)
    (memory / "blob.bin").write_bytes(b"\x00\xff\xfe" + token.encode() + b"\x80\n")
    code, out, _err = run(capsys, "scan-secrets", str(memory), "--json")
    data = json.loads(out)
    assert code == 1 and [f["rule_id"] for f in data["findings"]] == ["github-pat"]


def test_unlistable_folders_are_reported_not_fatal(capsys, memory: Path, monkeypatch):
    locked = memory / "team" / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path="."):
        # rmtree in the temp-folder teardown passes file descriptors: leave those alone.
        if isinstance(path, (str, os.PathLike)) and Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = run(capsys, "scan-secrets", str(memory), "--json")
    data = json.loads(out)
    assert code == 0 and data["files_scanned"] == 1
    assert [u["reason"] for u in data["unreadable"]] == ["Permission denied"]
    assert "could not read" in err
