"""`engine.team`: the secret side of TeamService, reached through the Engine facade."""

from __future__ import annotations

from pathlib import Path

import pytest
from secretgen import make_token

from workbench.engine import Engine
from workbench.engine.errors import NotFoundError


def open_engine(tmp_path: Path, **env: str) -> Engine:
    return Engine.open(tmp_path, memory_dir=str(tmp_path / "memory"), env=env)


def test_engine_choice_comes_from_the_engine_environment(tmp_path: Path):
    assert open_engine(tmp_path, WORKBENCH_SECRET_ENGINE="re").team.secret_engine_in_use() == "re"
    assert open_engine(tmp_path).team.secret_engine == "auto"


def test_scan_defaults_to_the_memory_folder(tmp_path: Path):
    engine = open_engine(tmp_path)
    with pytest.raises(NotFoundError):
        engine.team.scan_paths()
    team = Path(engine.locations.team_dir)
    team.mkdir(parents=True)
    (team / "ci.md").write_text(f"deploy with {make_token('databricks-api-token', 1)}\n")
    report = engine.team.scan_paths()
    assert report.files_scanned == 1 and report.needs_action
    assert [(f.path, f.rule_id) for f in report.findings] == [
        ("team/ci.md", "databricks-api-token")
    ]


def test_team_write_check_and_redaction(tmp_path: Path):
    engine = open_engine(tmp_path)
    text = f"token {make_token('sendgrid-api-token', 2)}\n"
    refusal = engine.team.check_team_write(engine.locations.team_dir + "x.md", text)
    assert refusal is not None and "SendGrid API Token" in refusal
    assert engine.team.check_team_write(engine.locations.memory_dir + "x.md", text) is None
    redaction = engine.team.redact_text(text)
    assert redaction.to_json() == {"redactions": 1, "text": "token [REDACTED]\n"}
    assert [m.rule_id for m in engine.team.scan_for_secrets(text)] == ["sendgrid-api-token"]
    assert engine.team.find_secrets(text, "a.md")[0].path == "a.md"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_utf16_file_is_scanned_for_what_it_holds_and_never_pushed(tmp_path: Path, encoding):
    """Read as UTF-8, a UTF-16 file's secret sits between NULs where no rule matches."""
    from workbench.engine.team.sync.local import read_local_entries

    engine = open_engine(tmp_path)
    team = Path(engine.locations.team_dir)
    team.mkdir(parents=True)
    token = make_token("github-pat", 3)
    text = f"the CI token is {token}\n"
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data  # the explicit big-endian codec writes no mark
    (team / "ci.md").write_bytes(data)
    (team / "fine.md").write_text("Deploys go out on Tuesdays.\n")
    report = engine.team.scan_paths()
    assert [(f.path.rsplit("/", 1)[-1], f.rule_id) for f in report.findings] == [
        ("ci.md", "github-pat")
    ]
    snapshot = read_local_entries(str(team))
    assert [s.path for s in snapshot.skipped_secrets] == ["ci.md"]
    assert list(snapshot.entries) == ["fine.md"]
