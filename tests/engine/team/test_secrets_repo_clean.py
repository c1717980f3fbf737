"""The house rule "never commit a secret-shaped literal", checked with our own scanner."""

from __future__ import annotations

from pathlib import Path

from workbench.engine.team.secrets.report import scan_files

REPO = Path(__file__).resolve().parents[3]
FOLDERS = ("workbench", "tests", "benchmarks", "sample_projects", "themes")


def test_the_repository_holds_no_secret_shaped_literal():
    folders = [REPO / name for name in FOLDERS if (REPO / name).is_dir()]
    report = scan_files(folders, display=lambda p: str(p.relative_to(REPO)))
    found = [f"{f.path}:{f.line} {f.label}" for f in report.findings]
    assert found == [], "build test tokens at run time (see tests/secretgen): " + ", ".join(found)
