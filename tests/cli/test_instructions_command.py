"""`workbench instructions`: the load order, the lint and the exit codes, end to end."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def make_tree(tmp_path: Path, *, broken: bool) -> Path:
    project = tmp_path / "proj"
    (project / ".claude" / "rules").mkdir(parents=True)
    (project / "CLAUDE.md").write_text(
        "Use tabs.\n@docs/style.md\n" + ("@docs/gone.md\n" if broken else ""), encoding="utf-8"
    )
    (project / "docs").mkdir()
    (project / "docs" / "style.md").write_text("Style guide.\n", encoding="utf-8")
    (project / ".claude" / "rules" / "py.md").write_text(
        "---\npaths: '**/*.py'\n---\nPython rule.\n", encoding="utf-8"
    )
    return project


def test_json_lists_files_in_order_and_exits_zero_without_errors(tmp_path, capsys):
    project = make_tree(tmp_path, broken=False)
    code, out, _ = run(capsys, "instructions", "--project", str(project), "--json")
    data = json.loads(out)
    assert code == 0
    assert [Path(f["path"]).name for f in data["files"]] == ["CLAUDE.md", "style.md"]
    assert data["files"][1]["depth"] == 1 and data["files"][1]["content"] == "Style guide."
    assert data["total_tokens"] == sum(f["tokens"] for f in data["files"])
    assert data["conditional"][0]["globs"] == ["**/*.py"] and data["conditional"][0]["matches"] == 0
    assert {f["code"] for f in data["findings"]} == {"glob-matches-nothing"}
    assert data["claude_version"]


def test_an_error_finding_exits_one_and_reads_as_a_tree(tmp_path, capsys):
    project = make_tree(tmp_path, broken=True)
    code, out, err = run(capsys, "instructions", "--project", str(project))
    assert code == 1 and not err
    assert "└ @docs/style.md" in out
    assert "docs/gone.md (from CLAUDE.md line 3): imported, but there is no file" in out
    assert "**/*.py  → nothing matches" in out


def test_read_shows_what_a_read_attaches_and_no_content_drops_texts(tmp_path, capsys):
    project = make_tree(tmp_path, broken=False)
    (project / "app.py").write_text("x = 1\n", encoding="utf-8")
    code, out, _ = run(
        capsys,
        "instructions",
        "--project",
        str(project),
        "--read",
        "app.py",
        "--json",
        "--no-content",
    )
    data = json.loads(out)
    assert code == 0
    assert [Path(f["path"]).name for f in data["on_read"]] == ["py.md"]
    assert all("content" not in f for f in data["files"] + data["on_read"])
