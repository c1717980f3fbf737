"""The memory-store commands through `main(argv)`: JSON keys, exit codes, clean errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from workbench.cli import main


def run(capsys, *argv: str) -> tuple[int, object, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    data = json.loads(out) if "--json" in argv and out.strip() else out
    return code, data, err


def test_paths_keys(install_sample, capsys):
    sample = install_sample("healthy")
    code, data, _ = run(capsys, "paths", "--json")
    assert code == 0
    assert set(data) >= {
        "config_home",
        "project_root",
        "canonical_root",
        "sanitized_project",
        "memory_dir",
        "memory_dir_source",
        "entrypoint",
        "team_dir",
        "logs_dir",
        "transcripts_dir",
        "auto_memory_enabled",
        "rejected",
    }
    assert data["memory_dir"] == f"{sample.memory_dir}/" and data["memory_dir_source"] == "default"


def test_paths_reports_refused_project_setting(install_sample, capsys):
    sample = install_sample("healthy")
    (sample.project_root / ".claude").mkdir()
    (sample.project_root / ".claude" / "settings.json").write_text(
        '{"autoMemoryDirectory": "/tmp/evil"}'
    )
    _, data, _ = run(capsys, "paths", "--json", "--claude-version", "2.1.88")
    assert data["rejected"][0]["source"] == "projectSettings"
    assert not data["memory_dir"].startswith("/tmp/evil")


def test_index_keys_and_team_flag(install_sample, capsys):
    install_sample("warnings")
    code, data, _ = run(capsys, "index", "--json")
    assert code == 0
    assert set(data) >= {
        "path",
        "exists",
        "line_count",
        "length",
        "utf8_bytes",
        "max_lines",
        "max_length",
        "line_truncated",
        "length_truncated",
        "loaded_content",
        "warning",
        "entries",
        "dropped_lines",
        "dangling",
        "orphans",
        "headroom",
    }
    assert data["max_lines"] == 200 and data["max_length"] == 25000
    assert set(data["entries"][0]) == {
        "line",
        "text",
        "title",
        "target",
        "hook",
        "loaded",
        "target_exists",
    }
    _, team, _ = run(capsys, "index", "--team", "--json")
    assert team["path"].endswith("team/MEMORY.md")


def test_ls_with_nothing_to_list_says_so(tmp_path, capsys, monkeypatch):
    # A project Claude Code has saved nothing for: a sentence, not an empty table.
    project = tmp_path / "app"
    project.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    code, out, _ = run(capsys, "ls", "--project", str(project))
    assert code == 0
    assert out.startswith("no memory folder yet: Claude Code has saved no memory for this ")
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "user_role.md").write_text("---\nname: Role\ndescription: d\ntype: user\n---\n")
    code, out, _ = run(capsys, "ls", "--memory-dir", str(memory), "--scope", "team")
    assert code == 0 and out.strip() == f"no team memory files in {memory}"
    code, out, _ = run(capsys, "ls", "--memory-dir", str(memory), "--json", "--scope", "team")
    assert code == 0 and out == []  # JSON stays a list


def test_ls_show_manifest(install_sample, capsys):
    install_sample("healthy")
    _, entries, _ = run(capsys, "ls", "--json")
    assert set(entries[0]) >= {
        "path",
        "abs_path",
        "name",
        "description",
        "type",
        "scope",
        "mtime",
        "age_days",
        "size_bytes",
        "tokens",
        "indexed",
        "lints",
    }
    assert entries[0]["mtime"].endswith("Z")
    _, team, _ = run(capsys, "ls", "--scope", "team", "--json")
    assert {e["scope"] for e in team} == {"team"}
    code, doc, _ = run(capsys, "show", "user_role.md", "--json")
    assert code == 0 and doc["frontmatter"]["type"] == "user" and "Priya" in doc["body"]
    code, text, _ = run(capsys, "manifest")
    assert code == 0 and text.count("\n") == len([e for e in entries]) and text.startswith("- ")
    _, manifest, _ = run(capsys, "manifest", "--json")
    assert manifest["count"] == len(entries) and manifest["text"] == text.rstrip("\n")


def test_show_unknown_file_is_a_one_line_error(install_sample, capsys):
    install_sample("healthy")
    code, _, err = run(capsys, "show", "nope.md")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_lint_exit_codes(install_sample, capsys):
    install_sample("healthy")
    code, data, _ = run(capsys, "lint", "--json")
    assert code == 0 and all(f["severity"] != "error" for f in data["findings"])
    install_sample("warnings")
    code, data, _ = run(capsys, "lint", "--json")
    assert code == 1
    assert set(data["findings"][0]) == {"path", "rule", "severity", "message", "line"}


def test_ls_and_lint_count_the_same_findings_for_each_file(install_sample, capsys):
    """A generic description is the file's own finding: `ls`, the tree and the editor show
    it, and `lint` lists it once."""
    sample = install_sample("healthy")
    (sample.memory_dir / "vague.md").write_text(
        "---\nname: vague\ndescription: important stuff\ntype: user\n---\nSomething.\n"
    )
    _, listed, _ = run(capsys, "ls", "--json")
    _, linted, _ = run(capsys, "lint", "--json")
    for entry in listed:
        own = sorted(f["rule"] for f in linted["findings"] if f["path"] == entry["path"])
        rules = sorted(f["rule"] for f in entry["lints"])
        # `lint` adds only what needs the whole folder: index and duplicate findings.
        extra = {"index-orphan", "recall-description-duplicate"}
        assert [r for r in own if r not in extra] == rules, entry["path"]
    vague = next(e for e in listed if e["path"] == "vague.md")
    assert "recall-description-generic" in [f["rule"] for f in vague["lints"]]


def test_memories_without_any_index_are_reported(tmp_path, capsys):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "deploys.md").write_text(
        "---\nname: deploys\ndescription: Deploy windows for checkout\ntype: user\n---\nb\n"
    )
    where = ["--memory-dir", str(memory), "--config-home", str(tmp_path / "cfg")]
    code, linted, _ = run(capsys, "lint", "--json", *where)
    assert code == 0
    assert [(f["path"], f["rule"]) for f in linted["findings"]] == [("deploys.md", "index-orphan")]
    code, text, _ = run(capsys, "index", *where)
    assert (
        "does not exist yet" in text and "No index line links to 1 memory file: deploys.md" in text
    )


def test_show_of_an_index_gives_the_index_findings_not_a_memory_files(tmp_path, capsys):
    memory = tmp_path / "memory"
    (memory / "team").mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Gone](gone.md) — a file that is not there\n")
    (memory / "team" / "MEMORY.md").write_text("# Team index\n")
    where = ["--memory-dir", str(memory), "--config-home", str(tmp_path / "cfg")]
    _, shown, _ = run(capsys, "show", "MEMORY.md", "--json", *where)
    assert [f["rule"] for f in shown["lints"]] == ["index-dangling-link"]
    _, shown, _ = run(capsys, "show", "team/MEMORY.md", "--json", *where)
    assert shown["lints"] == []


def test_ls_says_when_a_memorys_only_index_line_is_past_the_cut(tmp_path, capsys):
    """`indexed` is true for both, but only one of the two lines loads."""
    memory = tmp_path / "memory"
    memory.mkdir()
    for name in ("above", "below"):
        (memory / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: The {name} deploy window rules\ntype: user\n---\nb\n"
        )
    filler = "".join(f"- note {n}\n" for n in range(210))
    (memory / "MEMORY.md").write_text(
        f"- [Above](above.md) — loads\n{filler}- [Below](below.md) — cut\n"
    )
    where = ["--memory-dir", str(memory), "--config-home", str(tmp_path / "cfg")]
    for _ in range(2):  # cold, then from the kept listing
        _, listed, _ = run(capsys, "ls", "--json", *where)
        loads = {e["path"]: (e["indexed"], e["index_loads"]) for e in listed}
        assert loads == {"above.md": (True, True), "below.md": (True, False)}
    _, text, _ = run(capsys, "ls", *where)
    rows = {line.split()[0]: line.split()[4] for line in text.splitlines()[1:]}
    assert rows == {"above.md": "yes", "below.md": "cut"}


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_save_rm_history_undo(install_sample, capsys, monkeypatch):
    sample = install_sample("healthy")
    _stdin(monkeypatch, b"Body line.\n\n**Why:** because.\n\n**How to apply:** always.\n")
    code, saved, _ = run(
        capsys,
        "save",
        "--type",
        "feedback",
        "--name",
        "Small PRs",
        "--description",
        "Keep PRs small",
        "--json",
    )
    assert code == 0 and set(saved) >= {"path", "index_line", "index_updated", "headroom"}
    assert (sample.memory_dir / saved["path"]).exists() and saved["index_updated"] is True
    code, removed, _ = run(capsys, "rm", saved["path"], "--json")
    assert code == 0 and removed == {
        "removed": saved["path"],
        "index_lines_removed": 1,
        "history_ids": removed["history_ids"],
    }
    _, history, _ = run(capsys, "history", "--json")
    assert [h["action"] for h in history[:4]] == ["index-edit", "delete", "index-edit", "save"]
    # Spec 05: `path` relative to the memory folder, `abs_path` absolute (as ls and show).
    assert [h["path"] for h in history[:2]] == ["MEMORY.md", saved["path"]]
    assert history[1]["abs_path"] == str(sample.memory_dir / saved["path"])
    code, undone, _ = run(capsys, "undo", "--json")
    assert code == 0 and len(undone["undone"]) == 2
    assert sorted(e["path"] for e in undone["undone"]) == sorted(["MEMORY.md", saved["path"]])
    assert all(e["abs_path"] == str(sample.memory_dir / e["path"]) for e in undone["undone"])
    assert (sample.memory_dir / saved["path"]).exists()


def test_team_save_with_secret_exits_1_and_names_the_label(install_sample, capsys, monkeypatch):
    sample = install_sample("healthy")
    secret = "xoxb-" + "1234567890" + "-" + "9876543210" + "-" + "AbCdEfGhIjKlMnOpQrStUvWx"
    _stdin(monkeypatch, f"token {secret}\n".encode())
    code, out, err = run(
        capsys,
        "save",
        "--team",
        "--type",
        "reference",
        "--name",
        "Slack bot",
        "--description",
        "bot token",
    )
    assert code == 1 and "Slack Bot Token" in err and secret not in err and secret not in out
    assert not list((sample.memory_dir / "team").glob("reference_slack_bot*"))


def test_save_rejects_binary_stdin(install_sample, capsys, monkeypatch):
    install_sample("healthy")
    _stdin(monkeypatch, b"\xff\xfe\x00bin")
    code, _, err = run(capsys, "save", "--type", "user", "--name", "x", "--description", "y")
    assert code == 2 and "UTF-8" in err


def test_bad_flag_exits_2():
    with pytest.raises(SystemExit) as excinfo:
        main(["ls", "--scope", "galaxy"])
    assert excinfo.value.code == 2


def test_missing_project_folder_is_a_clean_error(capsys, tmp_path):
    code = main(["ls", "--project", str(tmp_path / "missing")])
    assert code == 2 and "project folder not found" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "workbench", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "COMMAND" in out.stdout


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        ([], None),
        (["demo"], "demo"),
        (["--project", "demo", "ls"], "ls"),
        (["--json", "tui"], "tui"),
        (["--theme", "x", "demo", "--sample", "healthy"], "demo"),
    ],
)
def test_first_command_skips_option_values(argv, command):
    from workbench.cli import first_command

    assert first_command(argv) == command


def test_opening_the_app_imports_only_the_front_commands():
    code = (
        "import sys, workbench.cli as c\n"
        "argv = ['demo']\n"
        "c.build_parser((c.FRONT_MODULE,)) if c.first_command(argv) in c.FRONT_COMMANDS else None\n"
        "print(sorted(m for m in sys.modules if m.startswith('workbench.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # common and parsing (the parser class) are shared by every command, not an area.
    assert out.stdout.strip() == (
        "['workbench.commands.common', 'workbench.commands.front', 'workbench.commands.parsing']"
    )


def test_save_replace_without_file_overwrites_the_default_file(tmp_path, capsys, monkeypatch):
    memory = tmp_path / "m"
    memory.mkdir()
    flags = ("--memory-dir", str(memory), "save", "--type", "user", "--name", "Gamma")
    _stdin(monkeypatch, b"v1\n")
    code, first, _ = run(capsys, *flags, "--description", "Gamma role", "--json")
    assert code == 0
    _stdin(monkeypatch, b"v2\n")
    code, second, err = run(capsys, *flags, "--replace", "--description", "Gamma role v2", "--json")
    assert code == 0 and "already exists" not in err
    assert second["path"] == first["path"]
    assert sorted(p.name for p in memory.glob("*.md")) == sorted(["MEMORY.md", first["path"]])
    assert "v2" in (memory / first["path"]).read_text()
    index_lines = (memory / "MEMORY.md").read_text().splitlines()
    assert index_lines == [second["index_line"]] and "Gamma role v2" in index_lines[0]


@pytest.mark.parametrize("file", ["a b[1](x).md", "notes(v2).md", "memory.md", "Memory.md"])
def test_save_refuses_a_file_name_the_index_cannot_link(tmp_path, capsys, monkeypatch, file):
    memory = tmp_path / "m"
    memory.mkdir()
    _stdin(monkeypatch, b"body\n")
    code, out, err = run(
        capsys,
        "--memory-dir",
        str(memory),
        "save",
        "--type",
        "user",
        "--name",
        "Zed",
        "--description",
        "zz",
        "--file",
        file,
    )
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert file in err and "Traceback" not in err
    assert list(memory.glob("*.md")) == []


def test_save_of_a_name_with_no_latin_letters_does_not_name_the_index(
    tmp_path, capsys, monkeypatch
):
    memory = tmp_path / "m"
    memory.mkdir()
    _stdin(monkeypatch, b"body\n")
    code, saved, _ = run(
        capsys,
        "--memory-dir",
        str(memory),
        "save",
        "--type",
        "user",
        "--name",
        "日本語 メモ",
        "--description",
        "jp",
        "--json",
    )
    assert code == 0 and saved["path"].casefold() != "memory.md"
    _, lint, _ = run(capsys, "--memory-dir", str(memory), "lint", "--json")
    assert [f["rule"] for f in lint["findings"] if f["rule"].startswith("index-")] == []
