"""Both memory-file formats: the type read from either, the user's own format kept on edit,
new memories in the release's format, `[[name]]` links checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.engine import Engine
from workbench.engine.memories.file_format import body_links, edit_fields, kebab_name, read_type
from workbench.engine.memories.frontmatter import parse_frontmatter

NESTED = (
    "---\n"
    "name: feedback-split-not-shrink\n"
    'description: "Dense frames: split them rather than shrink the font"\n'
    "metadata:\n"
    "  type: feedback\n"
    "  source: review\n"
    "tags: [slides]\n"
    "---\n\n"
    "Split, do not shrink.\n\n**Why:** readability.\n\n**How to apply:** see [[beamer-rules]].\n"
)
TOP = (
    "---\nname: Beamer rules\ndescription: How the slide decks are built\ntype: reference\n"
    "---\n\nThe deck template lives in /docs.\n"
)


def _engine(tmp_path: Path, version: str | None = None) -> Engine:
    memory = tmp_path / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    (tmp_path / "p").mkdir(exist_ok=True)
    return Engine.open(
        tmp_path / "p",
        config_home=str(tmp_path / "c"),
        memory_dir=str(memory),
        claude_version=version,
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "feedback-split-not-shrink.md").write_text(NESTED, encoding="utf-8")
    (memory / "beamer-rules.md").write_text(TOP, encoding="utf-8")
    (memory / "MEMORY.md").write_text(
        "- [Split](feedback-split-not-shrink.md) — split\n- [Beamer](beamer-rules.md) — rules\n"
    )
    return memory


# --- reading --------------------------------------------------------------------------------


def test_the_type_is_read_from_either_format():
    nested = parse_frontmatter(NESTED).data
    assert read_type(nested).type == "feedback" and read_type(nested).location == "metadata"
    assert read_type(parse_frontmatter(TOP).data).location == "top-level"
    assert read_type({"metadata": {"type": "Feedback"}}).type is None  # case matters
    assert read_type({"metadata": "feedback"}).location is None


def test_ls_manifest_recall_and_lint_see_nested_types(tmp_path: Path, folder: Path):
    engine = _engine(tmp_path)
    entries = {e.path: e for e in engine.memories.list()}
    assert entries["feedback-split-not-shrink.md"].type == "feedback"
    assert entries["feedback-split-not-shrink.md"].type_format == "metadata"
    assert entries["beamer-rules.md"].type_format == "top-level"
    assert "- [feedback] feedback-split-not-shrink.md" in engine.memories.manifest().text
    assert "- [reference] beamer-rules.md" in engine.memories.manifest().text
    rules = {f.rule for f in engine.memories.lint()}
    assert not rules & {"type-missing", "type-invalid", "type-unread", "why-missing"}
    headers = {h.filename: h for h in engine.recall.scan()}
    assert headers["feedback-split-not-shrink.md"].type == "feedback"


def test_under_2_1_88_a_nested_type_is_unread_and_lint_says_so(tmp_path: Path, folder: Path):
    engine = _engine(tmp_path, "2.1.88")
    manifest = engine.memories.manifest().text
    assert "- feedback-split-not-shrink.md" in manifest  # Claude Code 2.1.88 sees no type
    [finding] = [f for f in engine.memories.lint() if f.rule == "type-unread"]
    assert finding.path == "feedback-split-not-shrink.md" and "2.1.88" in finding.message
    # The tree and ls still show what the file says.
    entry = next(e for e in engine.memories.list() if e.path.startswith("feedback"))
    assert entry.type == "feedback"


def test_a_link_to_a_missing_memory_is_a_dangling_link(tmp_path: Path, folder: Path):
    (folder / "notes.md").write_text(
        "---\nname: notes\ndescription: d\nmetadata:\n  type: project\n---\n\n"
        "See [[beamer-rules]], [[Beamer rules]] and [[gone-memory|the old one]]; "
        "not `[[code]]`.\n\n**Why:** x\n\n**How to apply:** y\n"
    )
    engine = _engine(tmp_path)
    findings = [f for f in engine.memories.lint() if f.rule == "memory-dangling-link"]
    assert [(f.path, f.message) for f in findings] == [
        ("notes.md", "links to [[gone-memory]], but no memory has that name or file name")
    ]
    assert body_links("[[a]] [[b#part]] [[a]]\n```\n[[c]]\n```") == ["a", "b"]


# --- writing ---------------------------------------------------------------------------------


def test_new_memories_use_the_release_format(tmp_path: Path):
    new = _engine(tmp_path / "new").memories.save(
        type="feedback", name="Small PRs, please", description="Keep PRs small", body="Yes."
    )
    assert new.path == "small-prs-please.md"
    text = Path(new.abs_path).read_text()
    assert text.startswith(
        "---\nname: small-prs-please\ndescription: Keep PRs small\nmetadata:\n  type: feedback\n"
    )
    assert new.index_line == "- [Small PRs, please](small-prs-please.md) — Keep PRs small"
    old = _engine(tmp_path / "old", "2.1.88").memories.save(
        type="feedback", name="Small PRs, please", description="Keep PRs small", body="Yes."
    )
    assert old.path == "feedback_small_prs_please.md"
    assert parse_frontmatter(Path(old.abs_path).read_text()).data["type"] == "feedback"
    assert kebab_name("  Über -- Tests!  ") == "ber-tests"


@pytest.mark.parametrize("version", [None, "2.1.88"])
def test_an_edit_never_changes_the_format(tmp_path: Path, folder: Path, version):
    store = _engine(tmp_path, version).memories
    nested = store.read("feedback-split-not-shrink.md")
    text = store.edit_text(
        nested,
        name="feedback-split-not-shrink",
        description="Dense frames: split them rather than shrink the font",
        memory_type="project",
        body=nested.body,
    )
    assert "metadata:\n  type: project\n  source: review\n" in text and "\ntype:" not in text
    assert "tags: [slides]" in text and text.endswith(nested.body)
    top = store.read("beamer-rules.md")
    text = store.edit_text(
        top, name="Beamer rules", description="Deck rules", memory_type="user", body=top.body
    )
    assert "\ntype: user\n" in text and "metadata" not in text


def test_unchanged_fields_leave_the_block_byte_for_byte(tmp_path: Path, folder: Path):
    store = _engine(tmp_path).memories
    doc = store.read("feedback-split-not-shrink.md")
    text = store.edit_text(
        doc,
        name="feedback-split-not-shrink",
        description="Dense frames: split them rather than shrink the font",
        memory_type="feedback",
        body="New body.\n",
    )
    assert text == NESTED.split("---\n\n")[0] + "---\n\nNew body.\n"


def test_a_file_without_a_type_gets_the_release_format_unless_it_has_metadata():
    plain = "---\nname: x\ndescription: d\n---\nbody\n"
    assert "metadata:\n  type: user" in edit_fields(
        plain, name="x", description="d", memory_type="user", new_style="metadata"
    )
    assert "\ntype: user" in edit_fields(
        plain, name="x", description="d", memory_type="user", new_style="top-level"
    )
    keyed = "---\nname: x\nmetadata:\n  owner: ana\n---\n"
    edited = edit_fields(keyed, name="x", description="", memory_type="user", new_style="top-level")
    assert parse_frontmatter(edited).data["metadata"] == {"type": "user", "owner": "ana"}


def test_flow_style_metadata_is_rewritten_readably():
    flow = "---\nname: x\nmetadata: {type: user, owner: ana}\n---\nbody\n"
    edited = edit_fields(
        flow, name="x", description="", memory_type="feedback", new_style="metadata"
    )
    data = parse_frontmatter(edited).data
    assert data["metadata"] == {"type": "feedback", "owner": "ana"}
    assert edited.endswith("body\n")
