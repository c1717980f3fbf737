"""SVG snapshots of the team sync panel, fed deterministic status objects (dark and light).

Times are ISO strings a fixed number of minutes before a fixed "now"; hashes are derived from
key names; the secret in the redaction preview is generated at run time (tests/secretgen) and
redacted by the engine, so the snapshot shows exactly what a user would see.
"""

from __future__ import annotations

import hashlib

import pytest
from secretgen import make_token

from tests.ui.harness import PaneHarness
from workbench.engine.jsutil import js_iso
from workbench.engine.team.models import SecretPreview, SyncProblem, TeamOverview
from workbench.engine.team.secrets.redaction import redact
from workbench.engine.team.secrets.scanner import find_secrets
from workbench.engine.team.sync.models import KeyState, Overwrite, SkippedSecret, SyncStatus
from workbench.ui.panes.team import TeamSyncPane

NOW_MS = 1_800_000_000_000
SIZE = (100, 66)


def ago(minutes: float) -> str:
    return js_iso(NOW_MS - minutes * 60_000)


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def key_state(key: str, state: str) -> KeyState:
    base = digest(key)
    mine, theirs = digest(key + "/local"), digest(key + "/server")
    local, server, synced = {
        "in_sync": (base, base, base),
        "local_changed": (mine, base, base),
        "local_only": (mine, None, None),
        "server_changed": (base, theirs, base),
        "server_only": (None, theirs, None),
        "both_changed": (mine, theirs, base),
        "deleted_locally": (None, base, base),
        "secret_blocked": (None, None, None),
        "too_large": (None, None, None),
    }[state]
    return KeyState(key, local, server, synced, state)


def secret_preview() -> SecretPreview:
    token = make_token("github-pat", seed="snapshot")
    text = (
        "---\nname: Release bot\ndescription: How the release bot signs in\n"
        "type: reference\n---\n\n"
        f"The release bot authenticates with {token} on CI.\n"
        "Rotate it every quarter; the vault entry is `release-bot`.\n"
    )
    findings = find_secrets(text, path="reference_release_bot.md")
    redaction = redact(text)
    return SecretPreview(
        "reference_release_bot.md", tuple(findings), redaction.text, redaction.count
    )


def busy_report() -> TeamOverview:
    keys = (
        key_state("MEMORY.md", "local_changed"),
        key_state("exports/usage.csv", "too_large"),
        key_state("feedback_no_pii_in_logs.md", "in_sync"),
        key_state("feedback_payments_review.md", "in_sync"),
        key_state("project_api_v2.md", "both_changed"),
        key_state("project_old_runbook.md", "deleted_locally"),
        key_state("project_release_notes.md", "local_only"),
        key_state("project_teammate_handover.md", "server_only"),
        key_state("reference_oncall.md", "server_changed"),
        key_state("reference_release_bot.md", "secret_blocked"),
    )
    status = SyncStatus(
        server="http://127.0.0.1:8765",
        repo="acme-demo/checkout-service",
        team_dir="/m/team/",
        local_entries=6,
        pending=("MEMORY.md", "project_api_v2.md", "project_release_notes.md"),
        keys=keys,
        skipped_secrets=(SkippedSecret("reference_release_bot.md", "github-pat", "GitHub PAT"),),
        skipped_too_large=("exports/usage.csv",),
        last_checksum=digest("repo"),
        max_entries=6,
        suppressed_reason="http_413",
        conflicts=(
            {
                "time": ago(95),
                "attempt": 1,
                "pending_keys": ["project_api_v2.md"],
                "pending_count": 1,
                "resolved": True,
            },
            {
                "time": ago(12),
                "attempt": 3,
                "pending_keys": ["MEMORY.md", "project_api_v2.md", "project_release_notes.md"],
                "pending_count": 4,
                "resolved": False,
            },
        ),
        history=(
            {
                "time": ago(4),
                "operation": "push",
                "status": "error",
                "uploaded": 0,
                "batches": 0,
                "error": {
                    "kind": "too_many_entries",
                    "http_status": 413,
                    "message": "the team server holds at most 6 entries for this repo",
                },
            },
            {
                "time": ago(12),
                "operation": "push",
                "status": "conflict",
                "uploaded": 0,
                "batches": 0,
                "conflict_retries": 2,
            },
            {
                "time": ago(95),
                "operation": "push",
                "status": "ok",
                "uploaded": 2,
                "batches": 1,
                "conflict_retries": 1,
            },
            {"time": ago(180), "operation": "pull", "status": "ok", "written": 3},
            {"time": ago(60 * 26), "operation": "pull", "status": "not_modified", "written": 0},
        ),
    )
    return TeamOverview(
        status=status, previews=(secret_preview(),), over_limit=("reference_style.md",)
    )


def unavailable_report() -> TeamOverview:
    keys = tuple(
        key_state(k, "local_only")
        for k in ("MEMORY.md", "feedback_no_pii_in_logs.md", "project_api_v2.md")
    )
    status = SyncStatus(
        server=None,
        repo="acme-demo/checkout-service",
        team_dir="/m/team/",
        local_entries=3,
        pending=tuple(k.key for k in keys),
        keys=keys,
        skipped_secrets=(),
        skipped_too_large=(),
        last_checksum=None,
        max_entries=None,
        suppressed_reason=None,
    )
    problems = (
        SyncProblem(
            "No team server",
            "Set TEAM_MEMORY_SYNC_URL to the server's URL (`workbench team-server` runs one), "
            "then start the workbench again.",
        ),
        SyncProblem(
            "No team token",
            "Set WORKBENCH_TEAM_TOKEN to the bearer token the server accepts, then start the "
            "workbench again.",
        ),
    )
    return TeamOverview(status=status, problems=problems)


def pane(report: TeamOverview) -> TeamSyncPane:
    return TeamSyncPane(report=report, now_ms=lambda: NOW_MS, id="team-pane")


@pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
def test_team_pane_with_conflicts_limits_and_a_secret(snap_compare, theme: str):
    app = PaneHarness(lambda: pane(busy_report()), theme=theme)
    assert snap_compare(app, terminal_size=SIZE)


def test_team_pane_when_sync_is_unavailable(snap_compare):
    app = PaneHarness(lambda: pane(unavailable_report()))
    assert snap_compare(app, terminal_size=(90, 30))


def overwritten_report() -> TeamOverview:
    """Three pushes that replaced a teammate's newer version: one restorable (o restores it),
    one already restored, one whose version could not be kept."""
    keys = tuple(
        key_state(k, "in_sync")
        for k in ("project_api_v2.md", "reference_oncall.md", "feedback_payments_review.md")
    )
    overwrites = (
        Overwrite("project_api_v2.md", ago(4), digest("theirs/1"), digest("ours/1"), "h-1"),
        Overwrite("reference_oncall.md", ago(95), digest("theirs/2"), digest("ours/2"), "h-2"),
        Overwrite("feedback_payments_review.md", ago(3000), digest("t3"), digest("o3"), None),
    )
    status = SyncStatus(
        server="http://127.0.0.1:8765",
        repo="acme-demo/checkout-service",
        team_dir="/m/team/",
        local_entries=3,
        pending=(),
        keys=keys,
        skipped_secrets=(),
        skipped_too_large=(),
        last_checksum=digest("checksum"),
        max_entries=None,
        suppressed_reason=None,
        overwrites=overwrites,
    )
    return TeamOverview(status=status, restorable=("h-1",))


def test_team_pane_names_each_overwritten_teammate_change(snap_compare):
    app = PaneHarness(lambda: pane(overwritten_report()))
    assert snap_compare(app, terminal_size=(100, 30))
