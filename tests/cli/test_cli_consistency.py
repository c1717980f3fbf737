"""One way to name things and one way to fail: explicit paths checked, nothing cut when piped,
memory text never read as markup, sessions resolved alike, clear refusals, stable baselines."""

from __future__ import annotations

import io
import json
import os
import string
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_context_commands import project  # noqa: F401 - a shared fixture
from tests.cli.test_context_commands import run as run_in_project
from workbench.cli import main


@pytest.fixture(autouse=True)
def old_file_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file names spelled out here are 2.1.88's `type_name.md` (naming by release is
    tested in tests/engine/store/test_memory_formats.py)."""
    monkeypatch.setenv("WORKBENCH_CLAUDE_VERSION", "2.1.88")


def run(capsys, *argv: str, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> bool:
    return err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    project_dir = tmp_path / "project"
    memory = tmp_path / "memory"
    project_dir.mkdir()
    memory.mkdir()
    return project_dir, memory


# --- explicit paths and argparse --------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ls", "--settings", "/nonexistent.json"], "--settings /nonexistent.json: no such file"),
        (["ls", "--memory-dir", "/nonexistent"], "--memory-dir /nonexistent: no such folder"),
        (["ls", "--memory-dir", "/etc/passwd"], "--memory-dir /etc/passwd: not a folder"),
        (["index", "--settings", "/"], "--settings /: not a regular file"),
    ],
)
def test_explicit_paths_that_do_not_fit_are_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and one_line(err) and message in err


def test_argparse_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["save", "--name", "x"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert one_line(err) and "required" in err and "--help" in err


# --- output for pipes and memory text ---------------------------------------------------------


def test_paths_and_tables_are_never_cut_when_piped(tmp_path: Path):
    deep = tmp_path / ("a-rather-long-folder-name-" * 5) / "claude"
    deep.mkdir(parents=True)
    project_dir = tmp_path / "project"
    project_dir.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "paths", "--project", str(project_dir)],
        env=dict(os.environ, CLAUDE_CONFIG_DIR=str(deep), COLUMNS="80"),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout
    line = next(x for x in result.stdout.splitlines() if x.startswith("config_home"))
    assert line.split()[-1] == str(deep)


def test_ls_keeps_the_whole_description_when_piped(capsys, monkeypatch, folders):
    project_dir, memory = folders
    common = ["--project", str(project_dir), "--memory-dir", str(memory)]
    long = "a description well past sixty characters, which a terminal table would cut short"
    save = ["save", "--type", "user", "--name", "n", "--description", long, *common]
    assert run(capsys, *save, stdin=b"b\n", monkeypatch=monkeypatch)[0] == 0
    code, out, _ = run(capsys, "ls", *common)
    assert code == 0 and long in out and "…" not in out


def test_memory_text_is_never_read_as_markup(capsys, monkeypatch, folders):
    project_dir, memory = folders
    common = ["--project", str(project_dir), "--memory-dir", str(memory)]
    save = ["save", "--type", "feedback", "--name", "[n0]", *common]
    code, out, err = run(
        capsys, *save, "--description", "x [/] y", stdin=b"body\n", monkeypatch=monkeypatch
    )
    assert code == 0, err
    assert out.splitlines()[:2] == [
        "saved feedback_n0.md",
        "index: - [(n0)](feedback_n0.md) — x [/] y",
    ]
    code, out, err = run(capsys, "ls", *common)
    assert code == 0 and err == ""
    assert "x [/] y" in out
    code, out, _ = run(capsys, "history", *common)
    assert code == 0 and "feedback_n0.md" in out


def test_saving_an_empty_body_or_a_taken_name_says_so(capsys, monkeypatch, folders):
    project_dir, memory = folders
    common = ["--project", str(project_dir), "--memory-dir", str(memory)]
    save = ["save", "--type", "user", "--name", "Role", *common]
    code, out, err = run(
        capsys, *save, "--description", "first", stdin=b"", monkeypatch=monkeypatch
    )
    assert code == 0 and "saved user_role.md" in out
    assert "the body was empty" in err
    code, out, err = run(
        capsys, *save, "--description", "second", stdin=b"b\n", monkeypatch=monkeypatch
    )
    assert code == 0 and "saved user_role_2.md" in out
    assert "user_role.md already exists, so this memory was saved as user_role_2.md" in err


# --- sessions ---------------------------------------------------------------------------------


def test_compact_preview_and_replay_default_to_the_newest_session(capsys, project):  # noqa: F811
    for command in ("compact-preview", "replay"):
        code, out, err = run_in_project(capsys, project, command, "--json")
        assert code == 0, err
        assert json.loads(out)["transcript"] == str(project["new"])
        code, out, err = run_in_project(capsys, project, command, "--session", "1111", "--json")
        assert code == 0, err
        assert json.loads(out)["transcript"] == str(project["old"])
        code, out, err = run_in_project(capsys, project, command, "1111", "--session", "2222")
        assert code == 2 and one_line(err)


def test_replay_prints_a_table_of_calls(capsys, project):  # noqa: F811
    code, out, err = run_in_project(capsys, project, "replay")
    assert code == 0, err
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:3] == ["call", "line", "time"])
    rows = [line.split() for line in lines[header + 1 :] if line.split()[:1] != [""]]
    calls = [row for row in rows if row and row[0].isdigit()]
    assert [int(row[0]) for row in calls] == list(range(1, len(calls) + 1)) and len(calls) > 5
    assert any("after a compaction" in line for line in lines[header + 1 :])


def test_extract_accepts_a_session_prefix_and_defaults_to_the_newest(install_sample, capsys):
    from tests.cli.test_agent_commands import write_session

    sample = install_sample("healthy")
    transcript = write_session(sample)
    for argv in (["extract", transcript.stem[:8]], ["extract"]):
        code, out, err = run(capsys, *argv, "--json")
        assert code == 0, err
        assert json.loads(out)["transcript"] == str(transcript)


def test_review_with_no_arguments_lists_the_queue(install_sample, capsys):
    install_sample("healthy")
    code, out, err = run(capsys, "review")
    assert code == 0 and err == "" and out == "The review queue is empty.\n"


# --- redact -----------------------------------------------------------------------------------


def _token() -> str:
    return "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0" + "K1l2M3n4O5p6Q7r8"  # built at run time


def test_redact_refuses_binary_files_and_never_echoes_them(capsys, folders):
    project_dir, memory = folders
    blob = memory / "paste.md"
    blob.write_bytes(b"\x00\x01binary " + _token().encode() + b"\xff\xfe")
    code, out, err = run(capsys, "redact", str(blob), "--memory-dir", str(memory))
    assert code == 2 and out == "" and one_line(err) and "binary" in err


def test_redact_accepts_paths_relative_to_the_memory_folder(capsys, folders, monkeypatch):
    project_dir, memory = folders
    (memory / "team").mkdir()
    (memory / "team" / "ci.md").write_text(f"token {_token()}\n", encoding="utf-8")
    monkeypatch.chdir(project_dir)
    common = ["--project", str(project_dir), "--memory-dir", str(memory)]
    code, out, err = run(capsys, "redact", "team/ci.md", *common)
    assert code == 0 and out == "token [REDACTED]\n" and _token() not in out + err


# --- secret baselines -------------------------------------------------------------------------


def _secrets_folder(base: Path) -> Path:
    folder = base / "scanned"
    folder.mkdir()
    rng_token = "xoxb-" + "1234567890" + "-" + "9876543210" + "-" + "AbCdEfGhIjKlMnOpQrStUvWx"
    (folder / "a.md").write_text(f"one {_token()}\n", encoding="utf-8")
    (folder / "b.md").write_text(
        f"two {rng_token}\nthree {_token()}\nagain {_token()}\n", encoding="utf-8"
    )
    return folder


def test_fingerprints_do_not_depend_on_the_current_folder(tmp_path: Path, capsys, monkeypatch):
    folder = _secrets_folder(tmp_path)
    elsewhere = tmp_path / "elsewhere" / "deeper"
    elsewhere.mkdir(parents=True)
    seen = []
    for cwd, arg in ((tmp_path, "scanned"), (folder, "."), (elsewhere, str(folder))):
        monkeypatch.chdir(cwd)
        code, out, _ = run(capsys, "scan-secrets", arg, "--json")
        assert code == 1
        seen.append(sorted(f["fingerprint"] for f in json.loads(out)["findings"]))
    assert seen[0] == seen[1] == seen[2] and len(seen[0]) == 4
    # A baseline written from one folder suppresses everything from another.
    baseline = tmp_path / "baseline.json"
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "scan-secrets", "scanned", "--write-baseline", str(baseline))
    assert code == 0
    assert "wrote 3 fingerprints" in err and "(4 findings)" in err
    assert len(json.loads(baseline.read_text())["fingerprints"]) == 3
    monkeypatch.chdir(elsewhere)
    code, out, _ = run(capsys, "scan-secrets", str(folder), "--baseline", str(baseline), "--json")
    assert code == 0 and json.loads(out)["suppressed"] == 4


def test_a_file_holding_two_kinds_names_both_when_held_back(tmp_path: Path):
    from workbench.engine.team.sync.local import read_local_entries

    team = tmp_path / "team"
    team.mkdir()
    slack = "xoxb-" + "1234567890" + "-" + "9876543210" + "-" + "AbCdEfGhIjKlMnOpQrStUvWx"
    (team / "both.md").write_text(f"{_token()}\n{slack}\n", encoding="utf-8")
    (held,) = read_local_entries(str(team)).skipped_secrets
    assert held.path == "both.md" and len(held.all_labels) == 2
    assert held.to_json()["rule_ids"] == ["github-pat", "slack-bot-token"]
    assert set(string.ascii_letters) & set(held.to_json()["labels"][1])
