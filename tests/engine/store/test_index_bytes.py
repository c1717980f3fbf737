"""An index with odd bytes is edited without losing a line, or not edited at all.

A NUL in MEMORY.md once made the store read the whole index as empty, so the next save wrote
an index holding only its own line; a byte that is not UTF-8 was written back as U+FFFD.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.engine import Engine
from workbench.engine.errors import UserInputError

LINES = [f"- [Topic {n}](topic-{n}.md) — about topic number {n}" for n in range(30)]


def _engine(tmp_path: Path, index: bytes) -> tuple[Engine, Path]:
    memory = tmp_path / "memory"
    memory.mkdir()
    for n in range(30):
        (memory / f"topic-{n}.md").write_text(
            f"---\nname: topic-{n}\ndescription: Topic number {n} of the index tests\n"
            "type: user\n---\nBody.\n"
        )
    (memory / "MEMORY.md").write_bytes(index)
    engine = Engine.open(tmp_path, config_home=str(tmp_path / "cfg"), memory_dir=str(memory))
    return engine, memory


def _memory_files(memory: Path) -> list[str]:
    return sorted(p.name for p in memory.glob("*.md"))


def _with_nul() -> bytes:
    lines = list(LINES)
    lines[12] += "\0"
    return ("\n".join(lines) + "\n").encode()


def test_a_save_keeps_every_line_of_an_index_holding_a_nul(tmp_path: Path) -> None:
    engine, memory = _engine(tmp_path, _with_nul())
    engine.memories.save(type="user", name="Exports", description="How exports run", body="x\n")
    after = (memory / "MEMORY.md").read_bytes()
    assert after.startswith(_with_nul()) and after.count(b"\n") == 31
    assert b"[Exports](exports.md)" in after


def test_a_removal_drops_only_its_line_from_an_index_holding_a_nul(tmp_path: Path) -> None:
    engine, memory = _engine(tmp_path, _with_nul())
    result = engine.memories.remove("topic-3.md")
    assert result.index_lines_removed == 1
    after = (memory / "MEMORY.md").read_bytes().split(b"\n")
    assert len(after) == 30 and b"topic-3.md" not in b"\n".join(after)
    assert after[11].endswith(b"\0")


def test_lint_points_at_the_nul(tmp_path: Path) -> None:
    engine, _ = _engine(tmp_path, _with_nul())
    found = [f for f in engine.memories.lint() if f.rule == "index-nul-character"]
    assert [(f.path, f.line) for f in found] == [("MEMORY.md", 13)]


@pytest.mark.parametrize("action", ["save", "remove", "rename", "fix"])
def test_an_index_with_bytes_that_are_not_utf8_is_left_alone(tmp_path: Path, action: str) -> None:
    index = ("\n".join(LINES[:20]) + "\n").encode() + b"caf\xe9 notes\n"
    engine, memory = _engine(tmp_path, index)
    files = _memory_files(memory)
    with pytest.raises(UserInputError, match="not UTF-8 on line 21"):
        if action == "save":
            engine.memories.save(
                type="user", name="Exports", description="How exports run", body="x"
            )
        elif action == "remove":
            engine.memories.remove("topic-3.md")
        elif action == "rename":
            engine.memories.rename("topic-3.md", "topic-three.md")
        else:
            engine.memories.plan_index_fix("orphans")
    assert (memory / "MEMORY.md").read_bytes() == index
    assert _memory_files(memory) == files
    bad = [f for f in engine.memories.lint() if f.rule == "file-not-utf8"]
    assert [(f.path, f.line, f.severity) for f in bad] == [("MEMORY.md", 21, "error")]


def test_an_orphans_fix_counts_the_new_lines_past_the_cut(tmp_path: Path) -> None:
    """Three orphans onto a 198-line index: the third new line lands past line 200."""
    filler = "".join(f"- [Topic {n % 30}](topic-{n % 30}.md) — filler {n}\n" for n in range(198))
    engine, memory = _engine(tmp_path, filler.encode())
    for name in ("alpha", "beta", "gamma"):
        (memory / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: The {name} service's deploy rules\ntype: user\n"
            "---\nBody.\n"
        )
    plan = engine.memories.plan_index_fix("orphans")
    assert (plan.count, plan.past_the_cut) == (3, 1)
    engine.memories.apply_index_fix(plan)
    past = [n for n in ("alpha", "beta", "gamma") if engine.memories.read(f"{n}.md").past_the_cut]
    last_line = (memory / "MEMORY.md").read_text().rstrip("\n").rsplit("\n", 1)[-1]
    assert len(past) == 1 and f"({past[0]}.md)" in last_line
    assert engine.memories.read("topic-1.md").past_the_cut is False
