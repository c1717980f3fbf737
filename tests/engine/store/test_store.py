"""The memory store on the shipped sample projects: listing, lints, saves, deletes, undo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.engine.errors import ConflictError, NotFoundError, RefusedWriteError, UserInputError
from workbench.engine.jsutil import js_len
from workbench.engine.memories.frontmatter import parse_frontmatter


def _rules(entries, path):
    return sorted({f.rule for e in entries if e.path == path for f in e.lints})


def test_healthy_sample_lists_every_scope_and_has_no_errors(sample_engine):
    store = sample_engine("healthy").memories
    entries = store.list()
    scopes = {e.scope for e in entries}
    assert scopes == {"private", "team", "log"}
    assert all(e.indexed for e in entries if e.scope != "log")
    assert [e.mtime_ms for e in entries] == sorted((e.mtime_ms for e in entries), reverse=True)
    assert {e.path for e in store.list("team")} == {
        "team/feedback_payments_review.md",
        "team/feedback_no_pii_in_logs.md",
        "team/project_api_v2.md",
        "team/reference_oncall.md",
    }
    assert [f for f in store.lint() if f.severity == "error"] == []


def test_warnings_sample_trips_each_file_rule(sample_engine):
    store = sample_engine("warnings").memories
    entries = store.list()
    assert _rules(entries, "feedback_broken_yaml.md")[0] == "frontmatter-invalid-yaml"
    assert "frontmatter-unclosed" in _rules(entries, "project_unclosed_frontmatter.md")
    assert "frontmatter-unclosed" in _rules(
        entries, "project_currency_support.md"
    )  # closes after line 30
    assert "frontmatter-missing" in _rules(entries, "notes_no_frontmatter.md")
    assert "type-invalid" in _rules(entries, "feedback_type_case.md")
    assert "type-missing" in _rules(entries, "project_missing_type.md")
    assert "description-missing" in _rules(entries, "reference_legacy_cron.md")
    assert {"why-missing", "how-to-apply-missing"} <= set(
        _rules(entries, "feedback_no_friday_deploys.md")
    )
    # Each names the line to add (both releases' prompts ask for these two lines).
    friday = next(e for e in entries if e.path == "feedback_no_friday_deploys.md")
    messages = {f.rule: f.message for f in friday.lints}
    assert messages["why-missing"].startswith("a feedback memory needs a **Why:** line")
    assert messages["how-to-apply-missing"].startswith(
        "a feedback memory needs a **How to apply:** line"
    )
    assert "relative-date" in _rules(entries, "project_tax_engine_rewrite.md")
    assert "memory-truncated-on-recall" in _rules(entries, "reference_api_catalogue.md")
    assert "file-not-utf8" in _rules(entries, "legacy_export.md")
    assert _rules(entries, "scratch/paste.md") == ["file-binary"]
    assert "memory-stale" in _rules(entries, "user_background.md")


def test_warnings_index_report(sample_engine):
    report = sample_engine("warnings").memories.index()
    assert report.line_truncated and report.length_truncated
    assert report.headroom.lines == 200 - report.line_count < 0
    assert report.headroom.length == 25_000 - report.length < 0
    assert js_len(report.loaded_content) <= 25_000
    assert report.loaded_content.count("\n") + 1 == report.loaded_lines
    assert report.dropped_lines == report.line_count - report.loaded_lines
    assert all(e.loaded == (e.line <= report.loaded_lines) for e in report.entries)
    assert set(report.dangling) == {
        "feedback_refund_rules.md",
        "project_magento_sync.md",
        "reference_old_wiki.md",
        "reference_pagination.md",
        "project_pdf_templates.md",
    }
    assert {
        "project_orphan_pricing.md",
        "user_orphan_timezone.md",
        "reference_orphan_grafana.md",
    } <= set(report.orphans)
    assert report.warning and str(report.loaded_lines) in report.warning
    team = sample_engine("warnings").memories.index(team=True)
    assert team.dangling == ("project_migration_overview.md",) and team.long_lines


def test_lint_reports_index_problems(sample_engine):
    findings = sample_engine("warnings").memories.lint()
    rules = {f.rule for f in findings}
    assert {
        "index-over-lines",
        "index-over-length",
        "index-dangling-link",
        "index-orphan",
        "index-line-too-long",
    } <= rules
    assert findings[0].severity == "error"
    # 248 lines: the line cut drops 48, then the character cut ends the load at line 161. Each
    # finding counts its own cut (they once both claimed all 87).
    messages = {f.rule: f.message for f in findings if f.path == "MEMORY.md"}
    assert messages["index-over-lines"].endswith("(48 dropped)")
    assert messages["index-over-length"].endswith("(39 lines dropped)")


def test_two_step_save_writes_the_file_then_one_index_line(sample_engine):
    engine = sample_engine("healthy", claude_version="2.1.88")
    store = engine.memories
    before = store.index()
    result = store.save(
        type="feedback",
        name="Prefer small PRs",
        description="Keep pull requests under 400 lines",
        body="Keep PRs small.\n\n**Why:** reviews stall.\n\n**How to apply:** split early.\n",
    )
    assert result.path == "feedback_prefer_small_prs.md"
    text = (store.root / result.path).read_text(encoding="utf-8")
    assert parse_frontmatter(text).data == {
        "name": "Prefer small PRs",
        "description": "Keep pull requests under 400 lines",
        "type": "feedback",
    }
    index_text = store.index_path().read_text(encoding="utf-8")
    assert index_text.rstrip("\n").endswith(result.index_line)
    assert (
        result.index_line
        == "- [Prefer small PRs](feedback_prefer_small_prs.md) — Keep pull requests under 400 lines"
    )
    assert result.headroom.lines == before.headroom.lines - 1
    assert len({e.group for e in engine.history.entries()[:2]}) == 1


def test_save_without_index_and_duplicate_names(sample_engine):
    store = sample_engine("healthy", claude_version="2.1.88").memories
    index_before = store.index_path().read_bytes()
    first = store.save(
        type="user", name="Timezone", description="Works from Berlin", body="CET", index=False
    )
    assert store.index_path().read_bytes() == index_before and first.index_line is None
    again = store.save(
        type="user", name="Timezone", description="Works from Berlin", body="CET", index=False
    )
    assert again.path == first.path and again.unchanged and again.history_ids == ()
    second = store.save(
        type="user", name="Timezone", description="Works from Munich", body="CET", index=False
    )
    assert second.path == "user_timezone_2.md" and not second.unchanged
    assert second.notes == (
        "user_timezone.md already exists, so this memory was saved as user_timezone_2.md",
    )
    with pytest.raises(UserInputError):
        store.save(type="user", name="T", description="d", body="b", file=first.path)
    store.save(type="user", name="T", description="d2", body="b", file=first.path, replace=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": "Feedback"}, "type must be"),
        ({"type": ""}, "needs a type: one of user, feedback"),  # nothing chosen yet
        ({"name": " "}, "needs a name"),
        ({"description": ""}, "description"),
        ({"file": "../escape.md"}, "outside"),
        ({"file": "MEMORY.md"}, "index"),
        ({"file": "notes.txt"}, ".md"),
    ],
)
def test_save_rejects_bad_input_without_writing(sample_engine, kwargs, message):
    store = sample_engine("healthy").memories
    before = sorted(p.name for p in store.root.rglob("*"))
    args = {"type": "user", "name": "N", "description": "D", "body": "B"} | kwargs
    with pytest.raises(UserInputError, match=message):
        store.save(**args)
    assert sorted(p.name for p in store.root.rglob("*")) == before


def test_team_save_with_a_secret_is_refused_and_nothing_is_written(sample_engine):
    store = sample_engine("healthy").memories
    token = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0" + "K1l2M3n4O5p6Q7r8"  # built at run time
    team_index = store.index_path(team=True).read_bytes()
    with pytest.raises(RefusedWriteError) as excinfo:
        store.save(
            type="reference",
            name="CI token",
            description="token for CI",
            body=f"token: {token}\n",
            team=True,
        )
    assert "GitHub PAT" in str(excinfo.value) and token not in str(excinfo.value)
    assert not (store.root / "team" / "reference_ci_token.md").exists()
    assert store.index_path(team=True).read_bytes() == team_index
    # The same content is allowed in private memory.
    store.save(
        type="reference", name="CI token", description="token for CI", body=f"token: {token}\n"
    )


def test_update_refuses_a_file_changed_on_disk(sample_engine):
    store = sample_engine("healthy").memories
    doc = store.read("user_role.md")
    path = store.root / "user_role.md"
    path.write_text(doc.text + "\nedited elsewhere\n", encoding="utf-8")
    with pytest.raises(ConflictError):
        store.update("user_role.md", doc.text + "\nmy edit\n", doc.fingerprint)
    assert path.read_text(encoding="utf-8").endswith("edited elsewhere\n")
    fresh = store.read("user_role.md")
    store.update("user_role.md", fresh.text + "my edit\n", fresh.fingerprint)
    assert path.read_text(encoding="utf-8").endswith("my edit\n")


def test_saving_the_same_text_leaves_the_file_and_its_age_alone(sample_engine):
    # The mtime is the memory's age to Claude Code (the manifest's order, the staleness
    # caveat): a save that changes nothing must not make an old memory look new.
    engine = sample_engine("healthy")
    store = engine.memories
    memory = dict(type="user", name="Pager", description="who holds the pager", body="Ana.\n")
    store.save(**memory, file="user_pager.md", index=False)
    path, index = store.root / "user_pager.md", store.index_path()
    old = 1_700_000_000
    for file in (path, index):
        os.utime(file, (old, old))
    before = len(engine.history.entries())

    doc = store.read("user_pager.md")
    updated = store.update("user_pager.md", doc.text, doc.fingerprint)
    index_rewritten = store.write_index(index.read_text(encoding="utf-8"))
    replaced = store.save(**memory, file="user_pager.md", replace=True, index=False)

    assert updated.unchanged and updated.history_ids == ()
    assert index_rewritten.unchanged and not index_rewritten.index_updated
    assert replaced.unchanged and replaced.history_ids == ()
    assert path.stat().st_mtime == old and index.stat().st_mtime == old
    assert len(engine.history.entries()) == before
    changed = store.update("user_pager.md", doc.text + "Then Bo.\n", doc.fingerprint)
    assert not changed.unchanged and len(changed.history_ids) == 1
    assert path.stat().st_mtime != old


def test_remove_deletes_index_lines_and_undo_restores_both(sample_engine):
    engine = sample_engine("healthy")
    store = engine.memories
    file_bytes = (store.root / "feedback_pnpm.md").read_bytes()
    index_bytes = store.index_path().read_bytes()
    result = store.remove("feedback_pnpm.md")
    assert result.index_lines_removed == 1
    assert not (store.root / "feedback_pnpm.md").exists()
    assert "feedback_pnpm.md" not in store.index_path().read_text(encoding="utf-8")
    undone = engine.history.undo()
    assert [(e.effect, e.path) for e in undone.entries] == [
        ("reverted", str(store.index_path())),
        ("restored", str(store.root / "feedback_pnpm.md")),
    ]
    assert (store.root / "feedback_pnpm.md").read_bytes() == file_bytes
    assert store.index_path().read_bytes() == index_bytes
    engine.history.redo()  # redo deletes again
    assert not (store.root / "feedback_pnpm.md").exists()


def test_rename_updates_links(sample_engine):
    engine = sample_engine("healthy")
    store = engine.memories
    result = store.rename("feedback_pnpm.md", "feedback_package_manager.md")
    assert result.links_updated == 1
    index = store.index(team=False)
    assert any(e.target == "feedback_package_manager.md" and e.target_exists for e in index.entries)
    assert index.dangling == () and index.orphans == ()
    with pytest.raises(UserInputError):
        store.rename("feedback_package_manager.md", "team/feedback_package_manager.md")
    engine.history.undo()
    assert (store.root / "feedback_pnpm.md").exists() and not (
        store.root / "feedback_package_manager.md"
    ).exists()


def test_undo_refuses_to_overwrite_newer_work(sample_engine):
    engine = sample_engine("healthy")
    store = engine.memories
    saved = store.save(type="user", name="Editor", description="Uses vim", body="vim", index=False)
    (store.root / saved.path).write_text("changed by hand\n", encoding="utf-8")
    with pytest.raises(ConflictError):
        engine.history.undo()
    engine.history.undo(force=True)
    assert not (store.root / saved.path).exists()
    with pytest.raises(NotFoundError):
        engine.history.undo("nonexistent-id")


def test_index_fixes(sample_engine):
    engine = sample_engine("warnings")
    store = engine.memories
    assert store.fix_remove_dangling() == 5
    assert store.index().dangling == ()
    orphans = store.index().orphans
    assert store.fix_index_orphans() == len(orphans) and store.index().orphans == ()
    long_before = len(store.index().long_lines)
    assert store.fix_shorten_long_lines() == long_before and store.index().long_lines == ()
    assert len(engine.history.entries()) == 3


def test_an_index_fix_is_planned_without_writing_and_refused_once_the_index_moved(
    sample_engine,
):
    engine = sample_engine("warnings")
    store = engine.memories
    index = store.index_path()
    original = index.read_text(encoding="utf-8")
    plan = store.plan_index_fix("dangling")
    assert plan.count == 5 and plan.before == original and plan.after != original
    assert index.read_text(encoding="utf-8") == original and engine.history.entries() == []
    assert store.apply_index_fix(plan) == 5
    assert index.read_text(encoding="utf-8") == plan.after and store.index().dangling == ()
    # A plan made before someone else edited the index writes nothing.
    stale = store.plan_index_fix("long-lines")
    index.write_text(index.read_text(encoding="utf-8") + "- [x](x.md) — added meanwhile\n")
    edited = index.read_text(encoding="utf-8")
    with pytest.raises(ConflictError, match="changed since the preview"):
        store.apply_index_fix(stale)
    assert index.read_text(encoding="utf-8") == edited


def test_projection_warns_when_a_save_pushes_entries_past_the_cut(sample_engine):
    store = sample_engine("healthy").memories
    filler = "".join(f"- note {i}\n" for i in range(177))  # 23 + 177 = 200 lines
    store.write_index(store.index_path().read_text(encoding="utf-8").rstrip("\n") + "\n" + filler)
    projection = store.preview_save("user", "One more", "pushes the index over")
    assert projection.line_count_after == 201 and projection.headroom_after.lines == -1
    assert (
        projection.message
        and "201/200 lines" in projection.message
        and "1 entry will not load" in projection.message
    )


def test_bad_files_give_lints_not_crashes(sample_engine):
    store = sample_engine("healthy").memories
    (store.root / "huge.md").write_bytes(
        b"---\ndescription: big\ntype: user\n---\n" + b"x" * 2_000_000
    )
    (store.root / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    (store.root / "dir.md").mkdir()
    entries = store.list()
    assert "file-too-large" in _rules(entries, "huge.md")
    assert "file-not-utf8" in _rules(entries, "latin1.md")
    assert "dir.md" not in {e.path for e in entries}
    with pytest.raises(UserInputError):
        store.read("dir.md")
    with pytest.raises(NotFoundError):
        store.read("missing.md")
    with pytest.raises(UserInputError):
        store.read("../../etc/passwd")


def test_missing_memory_folder_is_empty_not_an_error(tmp_path: Path):
    from workbench.engine import Engine

    (tmp_path / "proj").mkdir()
    engine = Engine.open(tmp_path / "proj", config_home=str(tmp_path / "cfg"))
    assert engine.memories.list() == []
    report = engine.memories.index()
    assert not report.exists and report.entries == () and report.headroom.lines == 200
    assert engine.memories.manifest().count == 0
    assert engine.memories.lint() == []


def test_temp_files_from_an_interrupted_save_are_never_memories(sample_engine):
    store = sample_engine("healthy").memories
    (store.root / ".feedback_pnpm.md.abcd1234.wbtmp").write_text("half", encoding="utf-8")
    assert not any(".wbtmp" in e.path for e in store.list())
    assert ".wbtmp" not in store.manifest().text


def test_history_is_private(sample_engine):
    engine = sample_engine("healthy")
    engine.memories.save(type="user", name="X", description="Y", body="Z", index=False)
    assert os.stat(engine.history.folder).st_mode & 0o077 == 0


def test_team_file_holding_a_secret_is_marked_in_the_listing_and_lint(sample_engine):
    store = sample_engine("healthy").memories
    token = "npm" + "_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    (store.root / "team" / "reference_registry.md").write_text(
        f"token: {token}\n", encoding="utf-8"
    )
    (store.root / "team" / "notes.txt").write_text(f"token: {token}\n", encoding="utf-8")
    entry = next(e for e in store.list() if e.path == "team/reference_registry.md")
    assert [f.rule for f in entry.lints if f.rule == "team-secret"] == ["team-secret"]
    assert token not in entry.lints[-1].message
    secret_paths = sorted(f.path for f in store.lint() if f.rule == "team-secret")
    assert secret_paths == ["team/notes.txt", "team/reference_registry.md"]


def test_listing_parses_each_file_frontmatter_once(sample_engine, monkeypatch):
    import workbench.engine.memories.frontmatter as frontmatter
    import workbench.engine.memories.lint as lint
    import workbench.engine.memories.store as store_module

    calls: list[str] = []

    def counting(text: str):  # type: ignore[no-untyped-def]
        calls.append(text)
        return parse_frontmatter(text)

    for module in (frontmatter, lint, store_module):
        monkeypatch.setattr(module, "parse_frontmatter", counting)
    store = sample_engine("warnings").memories
    entries = store.list()
    assert entries
    # Short text files: one parse each (lint's head, its whole text and the name all agree).
    # Longer ones (over 30 lines) need a second parse of the whole text for the linter.
    long_files = sum(
        1
        for e in entries
        if Path(e.abs_path).read_text(encoding="utf-8", errors="replace").count("\n") >= 30
    )
    assert len(calls) <= len(entries) + long_files


def test_a_draft_is_checked_as_the_editor_shows_it(sample_engine):
    from workbench.engine.memories.models import DraftForm

    store = sample_engine("healthy").memories
    # A blank form: what to fill in, never the raw lint of an empty type.
    blank = store.check_draft(
        "---\nname: \ndescription: \ntype: \n---\n\n",
        path="new memory",
        team=False,
        form=DraftForm(None, "", ""),
        new=True,
    )
    rules = [f.rule for f in blank.findings]
    assert rules[:2] == ["name-missing", "type-missing"]
    assert not any(r.startswith("type-") and r != "type-missing" for r in rules)
    assert blank.projection is None
    # A complete new memory: no problems, and the index headroom after the save.
    text = "---\nname: Use uv\ndescription: uv, not pip\ntype: feedback\n---\n\nUse uv.\n"
    ready = store.check_draft(
        text,
        path="new memory",
        team=False,
        form=DraftForm("feedback", "Use uv", "uv, not pip"),
        new=True,
    )
    assert [f for f in ready.findings if f.severity == "error"] == []
    assert ready.projection is not None and "/200 lines" in ready.projection
    # Raw text has no form: only the file's own lint.
    raw = store.check_draft(text, path="feedback_uv.md", team=False)
    assert raw.projection is None and "name-missing" not in [f.rule for f in raw.findings]


@pytest.mark.parametrize(
    ("claude_version", "first", "second"),
    [
        # 2.1.332 names a file for the name alone, in kebab case; 2.1.88 for type and name.
        ("2.1.332", "deploy-window.md", "deploy-window-2.md"),
        ("2.1.88", "project_deploy_window.md", "project_deploy_window_2.md"),
    ],
)
def test_a_new_draft_says_which_file_it_would_be_saved_as(
    sample_engine, claude_version, first, second
):
    from workbench.engine.memories.models import DraftForm

    store = sample_engine("healthy", claude_version=claude_version).memories

    def default_file(form: DraftForm) -> str | None:
        return store.check_draft(
            "", path="new memory", team=False, form=form, new=True
        ).default_file

    form = DraftForm("project", "Deploy window", "Tue to Thu")
    assert default_file(form) == first
    store.save(type="project", name="Deploy window", description="Tue to Thu", body="b")
    assert default_file(form) == second  # the next free name, as the save would pick it
    assert default_file(DraftForm("project", "Deploy window", "d", "mine.md")) is None
    assert default_file(DraftForm("project", " ", "d")) is None


@pytest.mark.parametrize(
    ("claude_version", "first", "second"),
    [
        ("2.1.332", "pager-duty.md", "pager-duty-2.md"),
        ("2.1.88", "user_pager_duty.md", "user_pager_duty_2.md"),
    ],
)
def test_a_save_says_a_name_was_taken_only_when_it_was(
    sample_engine, claude_version, first, second
):
    # 2.1.332 names files in kebab case: its first save once said "user_pager_duty.md
    # already exists", a file that was never there, because the note assumed 2.1.88's names.
    store = sample_engine("healthy", claude_version=claude_version).memories
    one = store.save(type="user", name="Pager duty", description="who holds it", body="Ana")
    assert one.path == first and one.notes == ()
    two = store.save(type="user", name="Pager duty", description="who holds it", body="Rui")
    assert two.path == second
    assert two.notes == (f"{first} already exists, so this memory was saved as {second}",)


@pytest.mark.parametrize(
    "name", ["a b.md", "x[1].md", "x(1).md", "a#b.md", "a?b.md", "a%20b.md", "note:x.md"]
)
def test_rename_refuses_a_name_the_index_cannot_link(sample_engine, name):
    store = sample_engine("healthy").memories
    with pytest.raises(UserInputError, match="link cannot carry"):
        store.rename("feedback_pnpm.md", name)
    assert (store.root / "feedback_pnpm.md").exists() and not (store.root / name).exists()


def test_rename_refuses_the_index_name_in_another_case(sample_engine):
    store = sample_engine("healthy").memories
    for name in ("memory.md", "Memory.md"):
        with pytest.raises(UserInputError, match="only by case"):
            store.rename("feedback_pnpm.md", name)
        assert store.file_name_problem(name) is not None
    assert store.file_name_problem("feedback_pnpm_2.md") is None


def test_draft_check_says_a_file_name_the_index_cannot_link(sample_engine):
    from workbench.engine.memories.models import DraftForm

    store = sample_engine("healthy").memories
    form = DraftForm("user", "Zed", "zz", "a b[1](x).md")
    text = store.compose("user", "Zed", "zz", "body")
    check = store.check_draft(text, path="a b[1](x).md", team=False, form=form, new=True)
    assert check.projection is not None and "link cannot carry" in check.projection
