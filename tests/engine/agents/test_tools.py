"""The local tool handlers: Read, Write, Edit, Bash, Grep and Glob over a staged workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.engine.agents.tools import AgentTools, Workspace, tool_definitions
from workbench.engine.llm import ToolOutcome


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 'hello'\n")
    (root / "notes.md").write_text("line one\nline two\nline three\n")
    return root


@pytest.fixture
def tools(project: Path) -> AgentTools:
    return AgentTools(Workspace(project_root=str(project)), bash_timeout_s=5)


def call(tools: AgentTools, name: str, **tool_input: object) -> ToolOutcome:
    produced = tools.handlers()[name](dict(tool_input))
    return produced if isinstance(produced, ToolOutcome) else ToolOutcome(produced)


def test_definitions_use_claude_code_names_and_shapes() -> None:
    by_name = {t["name"]: t["input_schema"] for t in tool_definitions()}
    assert set(by_name) == {"Read", "Write", "Edit", "Bash", "Grep", "Glob"}
    assert by_name["Read"]["required"] == ["file_path"]
    assert set(by_name["Write"]["required"]) == {"file_path", "content"}
    assert set(by_name["Edit"]["properties"]) == {
        "file_path",
        "old_string",
        "new_string",
        "replace_all",
    }
    assert by_name["Bash"]["required"] == ["command"]
    assert "path" in by_name["Grep"]["properties"] and "path" in by_name["Glob"]["properties"]


def test_read_numbers_lines_and_pages(tools: AgentTools, project: Path) -> None:
    out = call(tools, "Read", file_path=str(project / "notes.md"))
    assert not out.is_error
    assert out.content.splitlines()[1] == "     2\tline two"
    page = call(tools, "Read", file_path=str(project / "notes.md"), offset=2, limit=1)
    assert "line two" in page.content and "line one" not in page.content
    assert "offset 3" in page.content


@pytest.mark.parametrize(
    "tool_input",
    [{}, {"file_path": 5}, {"file_path": "missing.md"}, {"file_path": "src"}],
)
def test_bad_reads_are_error_results(tools: AgentTools, tool_input: dict) -> None:
    out = call(tools, "Read", **tool_input)
    assert out.is_error


def test_write_and_edit_are_staged_not_written(tools: AgentTools, project: Path) -> None:
    target = project / "mem" / "a.md"
    assert not call(tools, "Write", file_path=str(target), content="alpha\nbeta\n").is_error
    assert not target.exists()
    assert "alpha" in call(tools, "Read", file_path=str(target)).content
    edited = call(tools, "Edit", file_path=str(target), old_string="beta", new_string="gamma")
    assert not edited.is_error
    staged = tools.workspace.changed_files()
    assert [s.content for s in staged] == ["alpha\ngamma\n"]
    assert staged[0].original is None
    assert not target.exists()


def test_edit_with_missing_old_text_changes_nothing(tools: AgentTools, project: Path) -> None:
    path = str(project / "notes.md")
    out = call(tools, "Edit", file_path=path, old_string="not there", new_string="x")
    assert out.is_error and "not found" in out.content
    assert tools.workspace.changed_files() == []
    assert (project / "notes.md").read_text() == "line one\nline two\nline three\n"


def test_edit_refuses_ambiguous_text_unless_replace_all(tools: AgentTools, project: Path) -> None:
    path = str(project / "notes.md")
    out = call(tools, "Edit", file_path=path, old_string="line", new_string="row")
    assert out.is_error and "3 times" in out.content
    ok = call(tools, "Edit", file_path=path, old_string="line", new_string="row", replace_all=True)
    assert not ok.is_error
    assert tools.workspace.changed_files()[0].content == "row one\nrow two\nrow three\n"


def test_edit_edge_cases(tools: AgentTools, project: Path) -> None:
    path = str(project / "notes.md")
    assert call(tools, "Edit", file_path=path, old_string="a", new_string="a").is_error
    assert call(tools, "Edit", file_path=path, old_string="", new_string="x").is_error
    assert call(
        tools, "Edit", file_path=path, old_string="one", new_string="1", replace_all="y"
    ).is_error
    new_file = str(project / "fresh.md")
    assert call(tools, "Edit", file_path=new_file, old_string="x", new_string="y").is_error
    assert not call(tools, "Edit", file_path=new_file, old_string="", new_string="made").is_error
    assert call(tools, "Write", file_path=path).is_error  # content missing


def test_secret_check_refuses_before_staging(project: Path) -> None:
    tools = AgentTools(
        Workspace(project_root=str(project)),
        secret_check=lambda path, text: "refused: secret" if "TOKEN" in text else None,
    )
    out = call(tools, "Write", file_path=str(project / "t.md"), content="TOKEN here")
    assert out.is_error and "secret" in out.content
    assert tools.workspace.changed_files() == []


def test_bash_runs_read_only_commands_in_the_project(tools: AgentTools, project: Path) -> None:
    out = call(tools, "Bash", command="ls src && cat notes.md | wc -l")
    assert not out.is_error
    assert "app.py" in out.content and "3" in out.content


def test_bash_refuses_writes_even_without_the_permission_check(
    tools: AgentTools, project: Path
) -> None:
    out = call(tools, "Bash", command="rm notes.md")
    assert out.is_error
    assert (project / "notes.md").exists()
    out = call(tools, "Bash", command="echo x > created.txt")
    assert out.is_error
    assert not (project / "created.txt").exists()


def test_bash_reports_exit_codes_and_times_out(project: Path) -> None:
    tools = AgentTools(Workspace(project_root=str(project)), bash_timeout_s=0.5)
    failed = call(tools, "Bash", command="ls no-such-file")
    assert "exit code" in failed.content
    slow = call(tools, "Bash", command="sleep 5")
    assert slow.is_error and "stopped after" in slow.content


def test_grep_modes(tools: AgentTools, project: Path) -> None:
    files = call(tools, "Grep", pattern="hello", path=str(project))
    assert files.content.strip() == str(project / "src" / "app.py")
    content = call(tools, "Grep", pattern="line t", path=str(project), output_mode="content")
    assert f"{project / 'notes.md'}:2:line two" in content.content
    count = call(
        tools, "Grep", pattern="LINE", path=str(project), output_mode="count", **{"-i": True}
    )
    assert count.content.strip().endswith("notes.md:3")
    assert call(tools, "Grep", pattern="(", path=str(project)).is_error
    assert call(tools, "Grep", pattern="zzz", path=str(project)).content == "No matches found."


def test_grep_and_glob_see_staged_files(tools: AgentTools, project: Path) -> None:
    call(tools, "Write", file_path=str(project / "mem" / "new.md"), content="needle\n")
    (project / "mem").mkdir()
    assert "new.md" in call(tools, "Grep", pattern="needle", path=str(project)).content
    assert "new.md" in call(tools, "Glob", pattern="**/*.md", path=str(project)).content


def test_glob_lists_and_refuses_escapes(tools: AgentTools, project: Path) -> None:
    out = call(tools, "Glob", pattern="**/*.py", path=str(project))
    assert out.content.strip() == str(project / "src" / "app.py")
    assert call(tools, "Glob", pattern="../*", path=str(project)).is_error
    assert call(tools, "Glob", pattern="/etc/*").is_error
