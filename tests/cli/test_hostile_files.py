"""Hostile files through the CLI (issue 10, "Files"): each case finishes within a generous
deadline and a memory cap, and a bad file is one finding or one error line while the rest
of the folder keeps working.

Cases that hung or exhausted memory before run in a capped child (`hostile.run_cli`); the
ones that failed fast run in-process through `main(argv)`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile import (
    alias_bomb,
    assert_clean,
    assert_one_line_error,
    deep_json,
    link_to_dev_zero,
    make_fifo,
    make_loop,
    make_socket,
    run_cli,
)

from workbench.cli import main
from workbench.devtools.synth import SessionBuilder


@dataclass(frozen=True)
class Project:
    root: Path
    home: Path
    memory: Path
    transcripts: Path

    def argv(self, *args: str) -> list[str]:
        return [*args, "--project", str(self.root), "--config-home", str(self.home)]

    def names(self) -> set[str]:
        return {p.name for p in self.memory.glob("*.md") if p.name != "MEMORY.md"}


@pytest.fixture
def project(install_sample) -> Project:
    sample = install_sample("healthy")
    return Project(
        sample.project_root, sample.config_home, sample.memory_dir, sample.transcripts_dir
    )


def run(project: Project, *args: str, **kwargs):  # type: ignore[no-untyped-def]
    return run_cli(project.argv(*args), cwd=project.root, **kwargs)


def listed(run_result) -> set[str]:  # type: ignore[no-untyped-def]
    """The top-level memories `ls --json` lists (team and log files are left out)."""
    return {entry["path"] for entry in json.loads(run_result.out) if "/" not in entry["path"]}


def lint_findings(run_result) -> list[dict]:  # type: ignore[no-untyped-def]
    return json.loads(run_result.out)["findings"]


# --- the YAML alias bomb -----------------------------------------------------------------


def test_alias_bomb_is_one_finding_and_never_expands(project: Project):
    (project.memory / "bomb.md").write_text(alias_bomb(), encoding="utf-8")
    good = project.names() - {"bomb.md"}

    ls = run(project, "ls", "--json")
    assert_clean(ls)
    assert ls.code == 0 and len(ls.out) < 200_000  # 9**9 strings never reach the output
    assert listed(ls) >= good | {"bomb.md"}

    lint = run(project, "lint", "--json")
    assert_clean(lint)
    # One finding about its frontmatter (it is also an orphan, and "*i" is a poor description).
    about_bomb = [
        f for f in lint_findings(lint) if f["path"] == "bomb.md" and "frontmatter" in f["rule"]
    ]
    assert [f["rule"] for f in about_bomb] == ["frontmatter-too-complex"]
    assert "aliases" in about_bomb[0]["message"]

    show = run(project, "show", "bomb.md", "--json")
    assert_clean(show)
    assert show.code == 0 and len(show.out) < 200_000

    manifest = run(project, "manifest")
    assert_clean(manifest)
    assert manifest.code == 0 and "bomb.md" in manifest.out and len(manifest.out) < 200_000

    recall = run(project, "recall", "lol boom", "--engine", "offline", "--json")
    assert_clean(recall)
    assert recall.code == 0 and len(recall.out) < 1_000_000


# --- pipes, devices, sockets and loops in the memory folder --------------------------------


@pytest.mark.parametrize(
    ("kind", "make", "reason"),
    [
        ("fifo", make_fifo, "named pipe"),
        ("dev-zero", link_to_dev_zero, "character device"),
        ("socket", make_socket, "socket"),
        ("loop", make_loop, "loops"),
    ],
)
def test_special_memory_file_is_one_finding_and_the_rest_works(project, kind, make, reason):
    make(project.memory / f"bad-{kind}.md")
    good = project.names() - {f"bad-{kind}.md"}

    ls = run(project, "ls", "--json")
    assert_clean(ls)
    assert ls.code == 0 and listed(ls) == good

    lint = run(project, "lint", "--json")
    assert_clean(lint)
    about = [f for f in lint_findings(lint) if f["path"] == f"bad-{kind}.md"]
    assert [(f["rule"], f["severity"]) for f in about] == [("file-unreadable", "error")]
    assert reason in about[0]["message"]

    manifest = run(project, "manifest", "--json")
    assert_clean(manifest)
    shown = {f["path"] for f in json.loads(manifest.out)["files"] if "/" not in f["path"]}
    assert manifest.code == 0 and shown == good

    assert_one_line_error(run(project, "show", f"bad-{kind}.md"), f"bad-{kind}.md", reason)
    recall = run(project, "recall", "deploy checks", "--engine", "offline", "--json")
    assert_clean(recall)
    assert recall.code == 0


@pytest.mark.parametrize(
    ("kind", "make", "reason"),
    [
        ("fifo", make_fifo, "named pipe"),
        ("dev-zero", link_to_dev_zero, "character device"),
        ("loop", make_loop, "loops"),
    ],
)
def test_special_index_is_one_error_and_the_rest_works(project, kind, make, reason):
    (project.memory / "MEMORY.md").unlink()
    make(project.memory / "MEMORY.md")
    good = project.names()

    ls = run(project, "ls", "--json")
    assert_clean(ls)
    assert ls.code == 0 and listed(ls) == good

    lint = run(project, "lint", "--json")
    assert_clean(lint)
    about = [f for f in lint_findings(lint) if f["path"] == "MEMORY.md"]
    assert [f["rule"] for f in about] == ["index-unreadable"] and reason in about[0]["message"]

    assert_one_line_error(run(project, "index"), "MEMORY.md", reason)
    assert_one_line_error(run(project, "show", "MEMORY.md"), "MEMORY.md", reason)


def test_socket_is_refused_by_show_and_redact_in_process(project: Project, capsys):
    make_socket(project.memory / "x.md")
    assert main(project.argv("show", "x.md")) == 2
    assert main(project.argv("redact", str(project.memory / "x.md"))) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("x.md" in line and "not a regular file" in line for line in err)


def test_loop_index_in_process_names_the_loop(project: Project, capsys):
    (project.memory / "MEMORY.md").unlink()
    make_loop(project.memory / "MEMORY.md")
    for command in ("ls", "lint", "index", "show"):
        args = ("show", "MEMORY.md") if command == "show" else (command,)
        code = main(project.argv(*args, "--json"))
        err = capsys.readouterr().err
        assert "internal error" not in err and "OSError" not in err, (command, err)
        assert code == (2 if command in ("index", "show") else 1 if command == "lint" else 0)


# --- big files ----------------------------------------------------------------------------


def test_huge_one_line_memory_is_read_bounded(project: Project):
    # 500 MB of one line, sparse on disk: readers that look for 30 newlines or read the whole
    # file would take minutes and gigabytes.
    huge = project.memory / "huge.md"
    with open(huge, "wb") as handle:
        handle.write(b"---\ndescription: one enormous line ")
        handle.truncate(500 * 1024 * 1024)

    lint = run(project, "lint", "--json")
    assert_clean(lint)
    rules = {f["rule"] for f in lint_findings(lint) if f["path"] == "huge.md"}
    assert rules & {"file-binary", "file-too-large"}  # the sparse tail reads as NUL bytes

    manifest = run(project, "manifest")
    assert_clean(manifest)
    assert manifest.code == 0 and "huge.md" in manifest.out

    recall = run(project, "recall", "enormous line", "--engine", "offline", "--json")
    assert_clean(recall)
    assert recall.code == 0

    assert_one_line_error(run(project, "show", "huge.md"), "huge.md", "limit")


def test_index_with_80000_dangling_lines_is_linear(project: Project):
    lines = "".join(f"- [Gone {i}](gone_{i}.md) — removed long ago\n" for i in range(80_000))
    (project.memory / "MEMORY.md").write_text(lines, encoding="utf-8")
    index = run(project, "index", "--json")
    assert_clean(index)
    report = json.loads(index.out)
    assert index.code == 0 and report["line_count"] == 80_000 and report["line_truncated"]
    assert len(report["entries"]) == 10_000 and report["unlisted_lines"] == 70_000
    assert all(e["target_exists"] is False for e in report["entries"])
    lint = run(project, "lint", "--json")
    assert_clean(lint) and lint.code == 1


def test_million_line_index_finishes(project: Project):
    text = "- [Same](user_role.md) — repeated\n" * 1_000_000
    (project.memory / "MEMORY.md").write_text(text, encoding="utf-8")
    index = run(project, "index", "--json")
    assert_clean(index)
    report = json.loads(index.out)
    assert report["line_count"] == 1_000_000 and report["loaded_lines"] == 200
    for command in ("ls", "lint"):
        assert_clean(run(project, command, "--json"))


# --- transcripts --------------------------------------------------------------------------


@pytest.fixture
def transcript(project: Project) -> Path:
    builder = SessionBuilder(seed=3, session_id="33333333-cccc-4ccc-8ccc-333333333333")
    builder.prompt("Look at the deploy checks")
    builder.reply("Done.")
    return builder.write(project.transcripts / f"{builder.session_id}.jsonl")


@pytest.mark.parametrize("make", [make_fifo, link_to_dev_zero], ids=["fifo", "dev-zero"])
@pytest.mark.parametrize("command", ["gauge", "replay", "compact-preview"])
def test_special_transcript_is_one_error(project: Project, tmp_path: Path, make, command):
    target = make(tmp_path / "session.jsonl")
    assert_one_line_error(run(project, command, str(target)), "session.jsonl", "not a regular")


def test_session_memory_file_that_is_a_pipe_or_device(project: Project, tmp_path: Path):
    fifo = make_fifo(tmp_path / "summary.md")
    assert_one_line_error(run(project, "session-memory", "--file", str(fifo)), "named pipe")
    assert_one_line_error(run(project, "session-memory", "--file", "/dev/zero"), "character device")


# --- settings, baselines, status-line payloads ---------------------------------------------


def test_settings_and_baseline_from_dev_zero_are_one_line_errors(project: Project):
    assert_one_line_error(run(project, "--settings", "/dev/zero", "paths"), "--settings")
    assert_one_line_error(
        run(project, "scan-secrets", "--baseline", "/dev/zero", str(project.memory)),
        "baseline",
        "character device",
    )


def test_statusline_stdin_from_dev_zero_is_bounded(project: Project):
    result = run(project, "statusline", stdin=Path("/dev/zero"))
    assert_clean(result)
    assert result.code == 0 and len(result.out.splitlines()) == 1  # the fallback line
    assert result.err.splitlines() == [
        "workbench: the status-line input is over the 1MB limit; not read"
    ]


def test_deep_json_settings_baseline_and_payload_in_process(project: Project, capsys, monkeypatch):
    deep = project.root / "deep.json"
    deep.write_text(deep_json(100_000, key="env"), encoding="utf-8")
    assert main(project.argv("--settings", str(deep), "paths")) == 2
    assert main(project.argv("scan-secrets", "--baseline", str(deep), str(project.memory))) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("nests deeper than 100 levels" in line for line in err)
    (project.home / "settings.json").write_text(deep_json(100_000, key="env"), encoding="utf-8")
    assert main(project.argv("paths", "--json")) == 0  # found on disk: reported, not fatal
    paths = json.loads(capsys.readouterr().out)
    assert any("nests deeper" in e["error"] for e in paths["settings_errors"])

    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(deep_json(100_000, key="transcript_path")))
    assert main(project.argv("statusline")) == 0  # with its fallback line
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1
    err = captured.err.splitlines()
    assert len(err) == 1 and "nests deeper than 100 levels" in err[0]


def test_proc_files_are_refused(project: Project):
    assert_one_line_error(run(project, "redact", "/proc/self/environ"), "pseudo-file")
    assert_one_line_error(run(project, "gauge", "/proc/self/environ"), "pseudo-file")


@pytest.mark.skipif(not os.path.exists("/proc/self/fd/1"), reason="needs /proc")
def test_stdout_through_proc_is_refused(project: Project):
    assert_one_line_error(run(project, "gauge", "/proc/self/fd/1"), "not a regular file")
    assert_one_line_error(run(project, "redact", "/proc/self/fd/1"), "not a regular file")


# --- hooks, the status line's index check, integrate ---------------------------------------


def test_hook_input_is_bounded_and_depth_checked(project: Project):
    for stdin in (Path("/dev/zero"), deep_json(100_000, key="session_id").encode()):
        result = run(project, "hook", "SessionStart", stdin=stdin)
        assert_clean(result)
        # A hook answers its own trouble with exit 1 and one line (2 would block Claude Code).
        assert result.code == 1 and len(result.err.splitlines()) == 1, result.err
        assert "limit" in result.err or "nests deeper" in result.err


def test_statusline_never_waits_on_a_pipe(project: Project, transcript: Path, tmp_path: Path):
    # The status line always prints one line (Claude Code blanks it otherwise): a pipe for a
    # transcript is not a session yet, and a pipe for MEMORY.md is not waited on.
    fifo = make_fifo(tmp_path / "live.jsonl")
    result = run(project, "statusline", stdin=json.dumps({"transcript_path": str(fifo)}).encode())
    assert_clean(result)
    assert result.code == 0 and len(result.out.splitlines()) == 1 and "new session" in result.out
    (project.memory / "MEMORY.md").unlink()
    make_fifo(project.memory / "MEMORY.md")
    payload = json.dumps({"transcript_path": str(transcript), "cwd": str(project.root)})
    result = run(project, "statusline", stdin=payload.encode())
    assert_clean(result)
    assert result.code == 0 and len(result.out.splitlines()) == 1


def test_integrate_refuses_a_settings_file_that_is_a_device(project: Project):
    (project.home / "settings.json").unlink(missing_ok=True)
    link_to_dev_zero(project.home / "settings.json")
    result = run(project, "integrate", "claude", "--dry-run")
    assert_one_line_error(result, "settings.json", "character device")
