"""Undo is a stack with its own redo; messages say what happened to which file; the history
log is input (bad lines are skipped and reported, entries outside the memory folder refused)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.engine import Engine
from workbench.engine.errors import NotFoundError, PathTraversalError


@pytest.fixture(autouse=True)
def old_file_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file names spelled out here are 2.1.88's `type_name.md` (naming by release is
    tested in tests/engine/store/test_memory_formats.py)."""
    monkeypatch.setenv("WORKBENCH_CLAUDE_VERSION", "2.1.88")


def _engine(tmp_path: Path) -> Engine:
    project = tmp_path / "project"
    project.mkdir()
    memory = tmp_path / "memory"
    memory.mkdir()
    return Engine.open(project, memory_dir=str(memory))


def _save(engine: Engine, name: str, body: str = "body") -> str:
    return engine.memories.save(
        type="feedback", name=name, description=f"about {name}", body=body
    ).path


def _rel(engine: Engine):
    return lambda path: os.path.relpath(path, engine.locations.memory_dir)


def test_repeated_undo_walks_back_and_redo_walks_forward(tmp_path: Path):
    engine = _engine(tmp_path)
    root = Path(engine.locations.memory_dir)
    first = _save(engine, "use pnpm")
    second = _save(engine, "small prs")
    index_after_both = (root / "MEMORY.md").read_text(encoding="utf-8")

    undone = engine.history.undo()
    assert undone.lines(_rel(engine)) == ["reverted MEMORY.md", f"deleted {second}"]
    assert (root / first).exists() and not (root / second).exists()

    undone = engine.history.undo()  # a second undo goes further back, never undoes the undo
    assert undone.lines(_rel(engine)) == ["deleted MEMORY.md", f"deleted {first}"]
    assert not (root / first).exists() and not (root / second).exists()
    with pytest.raises(NotFoundError, match="nothing left to undo"):
        engine.history.undo()

    redone = engine.history.redo()
    assert redone.lines(_rel(engine)) == [f"re-created {first}", "re-created MEMORY.md"]
    redone = engine.history.redo()
    assert redone.lines(_rel(engine)) == [f"re-created {second}", "re-applied MEMORY.md"]
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == index_after_both
    with pytest.raises(NotFoundError, match="nothing to redo"):
        engine.history.redo()


def test_a_new_change_ends_the_redo_stack(tmp_path: Path):
    engine = _engine(tmp_path)
    _save(engine, "one")
    engine.history.undo()
    _save(engine, "two")
    with pytest.raises(NotFoundError, match="nothing to redo"):
        engine.history.redo()
    # The undone change stays undone; the next undo takes the new one.
    undone = engine.history.undo()
    assert undone.lines(_rel(engine))[-1] == "deleted feedback_two.md"


def test_cli_undo_twice_then_redo_say_what_happened(tmp_path: Path, capsys, monkeypatch):
    memory = tmp_path / "memory"
    memory.mkdir()
    common = ["--project", str(tmp_path), "--memory-dir", str(memory)]
    save = ["save", "--type", "feedback", "--name", "use pnpm", *common]
    for description in ("first", "second"):
        monkeypatch.setattr("sys.stdin", _stdin("body\n"))
        assert main([*save, "--description", description]) == 0
    capsys.readouterr()

    assert main(["undo", *common]) == 0
    assert capsys.readouterr().out == "reverted MEMORY.md\ndeleted feedback_use_pnpm_2.md\n"
    assert main(["undo", *common]) == 0
    assert capsys.readouterr().out == "deleted MEMORY.md\ndeleted feedback_use_pnpm.md\n"
    assert sorted(p.name for p in memory.glob("*.md")) == []
    assert main(["redo", *common, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(e["effect"], e["path"]) for e in data["redone"]] == [
        ("re-created", "feedback_use_pnpm.md"),
        ("re-created", "MEMORY.md"),
    ]
    assert [e["abs_path"] for e in data["redone"]] == [
        str(memory / "feedback_use_pnpm.md"),
        str(memory / "MEMORY.md"),
    ]
    assert data["change_action"] == "save"


def _stdin(text: str):
    import io

    return io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8")


def _append_raw(engine: Engine, raw: bytes) -> None:
    with open(engine.history.log_path, "ab") as handle:
        handle.write(raw)


def _blob(engine: Engine, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    blob = engine.history.folder / "blobs" / digest
    blob.write_bytes(data)
    return digest


def _forged_creation(engine: Engine, path: Path) -> bytes:
    """A log line claiming the workbench created `path` (so undo would delete it)."""
    line = {
        "id": "ffffffffff-forged",
        "time": "2026-01-01T00:00:00.000Z",
        "action": "save",
        "path": str(path),
        "before": None,
        "after": _blob(engine, path.read_bytes()),
    }
    return (json.dumps(line) + "\n").encode("utf-8")


def test_undo_refuses_an_entry_naming_a_file_outside_the_memory_folder(tmp_path: Path, capsys):
    engine = _engine(tmp_path)
    _save(engine, "real")
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n", encoding="utf-8")
    _append_raw(engine, _forged_creation(engine, outside))

    with pytest.raises(PathTraversalError, match="outside the folders the workbench manages"):
        engine.history.undo()
    assert outside.read_text(encoding="utf-8") == "keep me\n"
    with pytest.raises(PathTraversalError):
        engine.history.undo("ffffffffff")
    assert outside.exists()

    argv = ["undo", "--project", str(tmp_path / "project"), "--memory-dir"]
    assert main([*argv, engine.locations.memory_dir]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refused, nothing was changed" in err
    assert outside.exists()


def test_undo_of_a_linked_file_touches_the_link_never_what_it_points_to(tmp_path: Path):
    """A file may be a link (saves write through it, as Claude Code's do); undoing a claimed
    creation removes the link, and the file outside is left as it was."""
    engine = _engine(tmp_path)
    _save(engine, "real")
    outside = tmp_path / "precious.md"
    outside.write_text("keep me\n", encoding="utf-8")
    link = Path(engine.locations.memory_dir) / "link.md"
    link.symlink_to(outside)
    _append_raw(engine, _forged_creation(engine, link))
    engine.history.undo()
    assert outside.read_text(encoding="utf-8") == "keep me\n" and not link.is_symlink()


def test_undo_refuses_a_file_in_a_linked_folder_that_points_outside(tmp_path: Path):
    engine = _engine(tmp_path)
    _save(engine, "real")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = elsewhere / "precious.md"
    outside.write_text("keep me\n", encoding="utf-8")
    (Path(engine.locations.memory_dir) / "sub").symlink_to(elsewhere)
    _append_raw(
        engine, _forged_creation(engine, Path(engine.locations.memory_dir) / "sub" / "precious.md")
    )
    with pytest.raises(PathTraversalError):
        engine.history.undo()
    assert outside.read_text(encoding="utf-8") == "keep me\n"


def test_saves_and_undo_write_through_a_linked_index(tmp_path: Path):
    engine = _engine(tmp_path)
    shared = tmp_path / "dotfiles" / "MEMORY.md"
    shared.parent.mkdir()
    shared.write_text("- [Old](old.md) — kept\n", encoding="utf-8")
    index = Path(engine.locations.memory_dir) / "MEMORY.md"
    index.unlink(missing_ok=True)
    index.symlink_to(shared)
    _save(engine, "linked")
    assert index.is_symlink() and "feedback_linked.md" in shared.read_text(encoding="utf-8")
    engine.history.undo()
    assert index.is_symlink() and shared.read_text(encoding="utf-8") == "- [Old](old.md) — kept\n"
    engine.history.redo()
    assert index.is_symlink() and "feedback_linked.md" in shared.read_text(encoding="utf-8")


def test_bad_log_lines_are_skipped_and_reported(tmp_path: Path, capsys):
    engine = _engine(tmp_path)
    first = _save(engine, "one")
    bad_blob = {
        "id": "x1",
        "time": "t",
        "action": "save",
        "path": str(tmp_path / "memory" / "a.md"),
        "before": "../../../etc/passwd",
        "after": None,
    }
    _append_raw(
        engine,
        b"\xff\xfe\x00 not utf-8\n{not json\n"
        + json.dumps({"id": 1}).encode()
        + b"\n"
        + json.dumps(bad_blob).encode()
        + b"\n",
    )
    _save(engine, "two")  # appends after the junk, on a line of its own
    common = ["--project", str(tmp_path / "project"), "--memory-dir", engine.locations.memory_dir]
    assert main(["history", *common, "--json"]) == 0
    out, err = capsys.readouterr()
    assert [e["action"] for e in json.loads(out)] == ["index-edit", "save"] * 2
    assert "skipped 4 unreadable lines in the history log" in err and err.count("\n") == 1
    assert "line 3: not UTF-8" in err
    assert main(["undo", *common]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "deleted feedback_two.md"
    assert (Path(engine.locations.memory_dir) / first).exists()


def test_a_torn_last_line_does_not_swallow_the_next_entry(tmp_path: Path):
    engine = _engine(tmp_path)
    _save(engine, "one")
    _append_raw(engine, b'{"id": "torn", "time": "2026')  # a crash mid-line, no newline
    _save(engine, "two")
    assert [e.note for e in engine.history.entries()][:1] == ["entry for feedback_two.md"]
    assert [p.reason for p in engine.history.problems] == ["not JSON"]


def test_logs_from_before_the_stack_still_undo_in_order(tmp_path: Path):
    engine = _engine(tmp_path)
    first = _save(engine, "one")
    second = _save(engine, "two")
    # The old toggle recorded an undo as action "undo" with the note "undo <id>".
    newest = engine.history.entries()[0]
    undo_path = Path(newest.path)
    before = (Path(engine.locations.memory_dir) / "MEMORY.md").read_bytes()
    old_undo = {
        "id": "fffffffffff-old001",
        "time": "2026-01-01T00:00:00.000Z",
        "action": "undo",
        "path": str(undo_path),
        "before": hashlib.sha256(before).hexdigest(),
        "after": newest.before,
        "note": f"undo {newest.id}",
        "group": "oldgroup",
    }
    _append_raw(engine, (json.dumps(old_undo) + "\n").encode())
    root = Path(engine.locations.memory_dir)
    (root / "MEMORY.md").write_bytes(engine.history.blob(newest.before))
    (root / second).unlink()
    # The second save counts as undone: the next undo takes the first one.
    undone = engine.history.undo()
    assert undone.lines(_rel(engine))[-1] == f"deleted {first}"


def test_cli_history_gives_session_notes_a_path_relative_to_the_memory_folder(
    tmp_path: Path, capsys
):
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "claude"
    engine = Engine.open(project, config_home=str(config))
    session = "33333333-cccc-4ccc-8ccc-333333333333"
    notes = Path(engine.context.session_memory_path(session))
    notes.parent.mkdir(parents=True)
    engine.history.write(notes, b"# Session Title\nnotes\n", "session-memory-update")
    assert main(["history", "--project", str(project), "--config-home", str(config), "--json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["path"] == f"../{session}/session-memory/summary.md"
    assert entry["abs_path"] == str(notes) and entry["rel_path"] == str(notes)
    memory = engine.locations.memory_dir
    assert os.path.normpath(os.path.join(memory, entry["path"])) == str(notes)


def test_every_change_an_undo_can_name_has_words():
    """Undo says "undo of accepting a proposal", not "undo of extraction-apply": each action
    id the package records has its words."""
    import re

    import workbench
    from workbench.engine.history import ACTION_WORDS, UndoResult

    package = Path(workbench.__file__).parent
    source = "\n".join(p.read_text(encoding="utf-8") for p in package.rglob("*.py"))
    recorded = set(re.findall(r'history\.(?:write|delete|record)\([^)]*?"([a-z-]+)"', source))
    recorded |= set(re.findall(r'^[A-Z]+_ACTION = "([a-z-]+)"', source, re.MULTILINE))
    recorded -= {"undo", "redo"}
    assert recorded and recorded <= set(ACTION_WORDS), sorted(recorded - set(ACTION_WORDS))
    result = UndoResult("undo", "c", "extraction-apply", ())
    assert result.what == "accepting a proposal"
