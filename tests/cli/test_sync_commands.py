"""`workbench sync …` end to end against the real team server on loopback (spec 05)."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.server import TeamServer

TOKEN = "-".join(["cli", "team", "token"])
PUSH_KEYS = {
    "status",
    "uploaded",
    "batches",
    "conflict_retries",
    "skipped_secrets",
    "skipped_too_large",
    "max_entries",
    "error",
}
PULL_KEYS = {"status", "written", "skipped", "checksum"}
STATUS_KEYS = {
    "server",
    "repo",
    "local_entries",
    "pending",
    "skipped_secrets",
    "skipped_too_large",
    "last_checksum",
    "suppressed_reason",
    "history",
}


@pytest.fixture
def server(tmp_path: Path):
    with TeamServer(tmp_path / "cli.sqlite3", [TOKEN]) as srv:
        yield srv


def make_project(root: Path, name: str, remote: str | None = "git@github.com:acme/widgets.git"):
    project = root / name
    (project / ".git").mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    if remote:
        config += f'[remote "origin"]\n\turl = {remote}\n'
    (project / ".git" / "config").write_text(config)
    memory = root / f"{name}-memory"
    (memory / "team").mkdir(parents=True)
    return project, memory


def run(capsys, project: Path, memory: Path, *args: str) -> tuple[int, dict | None, str]:
    code = main([*args, "--project", str(project), "--memory-dir", str(memory), "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


@pytest.fixture
def env(monkeypatch, server):
    monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", TOKEN)
    monkeypatch.setenv("TEAM_MEMORY_SYNC_URL", server.url)


def test_push_status_pull_round_trip(tmp_path, capsys, env, server):
    project, memory = make_project(tmp_path, "alice")
    (memory / "team" / "deploys.md").write_text("Ship on Tuesdays.\n")
    (memory / "team" / "ci.md").write_text("CI runs on every push.\n")

    code, status, _ = run(capsys, project, memory, "sync", "status")
    assert code == 0 and STATUS_KEYS <= set(status)
    assert status["repo"] == "acme/widgets" and status["server"] == server.url
    assert status["local_entries"] == 2 and status["pending"] == ["ci.md", "deploys.md"]

    code, pushed, _ = run(capsys, project, memory, "sync", "push")
    assert code == 0 and PUSH_KEYS <= set(pushed)
    assert pushed["status"] == "ok" and pushed["uploaded"] == 2 and pushed["error"] is None

    code, status, _ = run(capsys, project, memory, "sync", "status")
    assert status["pending"] == [] and status["last_checksum"].startswith("sha256:")
    assert [h["operation"] for h in status["history"]] == ["push"]

    other, other_memory = make_project(tmp_path, "bob")
    code, pulled, _ = run(capsys, other, other_memory, "sync", "pull")
    assert code == 0 and PULL_KEYS <= set(pulled)
    assert pulled["status"] == "ok" and pulled["written"] == 2
    assert (other_memory / "team" / "deploys.md").read_text() == "Ship on Tuesdays.\n"
    code, again, _ = run(capsys, other, other_memory, "sync", "pull")
    assert again["status"] == "not_modified" and again["written"] == 0


def test_flags_override_the_environment(tmp_path, capsys, monkeypatch, server):
    monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", TOKEN)
    project, memory = make_project(tmp_path, "p", remote=None)
    (memory / "team" / "a.md").write_text("a\n")
    code, pushed, _ = run(
        capsys, project, memory, "sync", "push", "--server", server.url, "--repo", "acme/other"
    )
    assert code == 0 and pushed["uploaded"] == 1


@pytest.mark.parametrize(
    ("unset", "args", "needle"),
    [
        ("WORKBENCH_TEAM_TOKEN", (), "WORKBENCH_TEAM_TOKEN"),
        ("TEAM_MEMORY_SYNC_URL", (), "--server"),
        (None, ("--repo", "not-a-slug"), "OWNER/NAME"),
        (None, ("--server", "ftp://example.invalid"), "http"),
    ],
)
@pytest.mark.parametrize("action", ["pull", "push", "watch"])
def test_missing_or_bad_settings_are_usage_errors(
    tmp_path, capsys, monkeypatch, env, action, unset, args, needle
):
    if unset:
        monkeypatch.delenv(unset)
    project, memory = make_project(tmp_path, "p")
    code, out, err = run(capsys, project, memory, "sync", action, *args)
    assert code == 2 and out is None
    assert needle in err and len(err.strip().splitlines()) == 1


def test_no_github_remote_is_a_usage_error(tmp_path, capsys, env):
    project, memory = make_project(tmp_path, "p", remote="https://gitlab.com/acme/widgets.git")
    code, _, err = run(capsys, project, memory, "sync", "status")
    assert code == 2 and "github.com" in err


def test_unreachable_server_exits_2_with_the_result_on_stdout(tmp_path, capsys, monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", TOKEN)
    project, memory = make_project(tmp_path, "p")
    (memory / "team" / "a.md").write_text("a\n")
    code, pushed, err = run(
        capsys, project, memory, "sync", "push", "--server", f"http://127.0.0.1:{port}"
    )
    assert code == 2
    assert pushed["status"] == "error" and pushed["error"]["kind"] == "network"
    assert "cannot reach" in err


def test_auth_failure_exits_2_then_pushes_stay_suppressed(tmp_path, capsys, monkeypatch, env):
    monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", "not-the-token")
    project, memory = make_project(tmp_path, "p")
    (memory / "team" / "a.md").write_text("a\n")
    code, pushed, _ = run(capsys, project, memory, "sync", "push")
    assert code == 2  # a refused token is a setting to fix, like an unreachable server
    assert pushed["error"]["kind"] == "auth" and pushed["error"]["http_status"] == 401
    monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", TOKEN)
    code, pushed, err = run(capsys, project, memory, "sync", "push")
    assert code == 1 and pushed["status"] == "suppressed" and "--force" in err
    code, status, _ = run(capsys, project, memory, "sync", "status")
    assert status["suppressed_reason"] == "http_401"
    code, pushed, _ = run(capsys, project, memory, "sync", "push", "--force")
    assert code == 0 and pushed["status"] == "ok"


def test_secrets_are_reported_by_path_and_rule_never_by_text(tmp_path, capsys, env):
    rng = random.Random(3)
    secret = "gh" + "p_" + "".join(rng.choices(string.ascii_letters + string.digits, k=36))
    project, memory = make_project(tmp_path, "p")
    (memory / "team" / "creds.md").write_text(f"token: {secret}\n")
    (memory / "team" / "fine.md").write_text("fine\n")
    code, pushed, err = run(capsys, project, memory, "sync", "push")
    assert code == 1 and pushed["uploaded"] == 1  # the rest went; the held-back file is work
    assert "held back 1 file holding a secret" in err
    assert pushed["skipped_secrets"] == [
        {
            "path": "creds.md",
            "rule_id": "github-pat",
            "label": "GitHub PAT",
            "rule_ids": ["github-pat"],
            "labels": ["GitHub PAT"],
        }
    ]
    code, status, err2 = run(capsys, project, memory, "sync", "status")
    assert status["skipped_secrets"] == pushed["skipped_secrets"]
    for text in (json.dumps(pushed), err, json.dumps(status), err2):
        assert secret not in text


def test_human_output_without_json(tmp_path, capsys, env):
    project, memory = make_project(tmp_path, "p")
    (memory / "team" / "a.md").write_text("a\n")
    assert main(["sync", "push", "--project", str(project), "--memory-dir", str(memory)]) == 0
    out, _ = capsys.readouterr()
    assert "Pushed 1 entry to acme/widgets" in out
    assert main(["sync", "status", "--project", str(project), "--memory-dir", str(memory)]) == 0
    out, _ = capsys.readouterr()
    assert "acme/widgets" in out and "in_sync" in out


def test_watch_pushes_on_change_and_flushes_on_sigint(tmp_path, server):
    project, memory = make_project(tmp_path, "p")
    (memory / "team" / "first.md").write_text("before watching\n")
    env = {
        **os.environ,
        "WORKBENCH_TEAM_TOKEN": TOKEN,
        "TEAM_MEMORY_SYNC_URL": server.url,
        "PYTHONUNBUFFERED": "1",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench",
            "sync",
            "watch",
            "--debounce",
            "1.0",
            "--project",
            str(project),
            "--memory-dir",
            str(memory),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = json.loads(proc.stdout.readline())
        assert first["event"] == "pull" and first["status"] == "empty"
        watching = json.loads(proc.stdout.readline())
        assert watching == {"event": "watching", "path": str(memory / "team") + "/"}
        time.sleep(0.2)
        (memory / "team" / "edit.md").write_text("written while watching\n")
        pushed = json.loads(proc.stdout.readline())
        assert pushed["event"] == "push" and pushed["status"] == "ok"
        assert set(pushed["uploaded_keys"]) == {"first.md", "edit.md"}
        (memory / "team" / "late.md").write_text("written just before Ctrl-C\n")
        time.sleep(0.4)  # long enough for the event to arrive, shorter than the debounce
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    flushed = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert flushed and flushed[-1]["event"] == "push"
    assert "late.md" in flushed[-1]["uploaded_keys"]


def test_push_over_a_teammates_change_is_said_and_theirs_can_be_restored(tmp_path, capsys, env):
    alice, alice_memory = make_project(tmp_path, "alice")
    bob, bob_memory = make_project(tmp_path, "bob")
    (alice_memory / "team" / "shared.md").write_text("v1\n")
    assert run(capsys, alice, alice_memory, "sync", "push")[0] == 0
    assert run(capsys, bob, bob_memory, "sync", "pull")[0] == 0
    (bob_memory / "team" / "shared.md").write_text("bob's v2\n")
    assert run(capsys, bob, bob_memory, "sync", "push")[0] == 0
    (alice_memory / "team" / "shared.md").write_text("alice's v2\n")

    plain = ["--project", str(alice), "--memory-dir", str(alice_memory)]
    assert main(["sync", "push", *plain]) == 0
    out = capsys.readouterr().out
    assert "overwrote a teammate's newer version of shared.md" in out
    history_id = out.split("`workbench undo ")[1].split("`")[0]

    assert main(["sync", "status", *plain]) == 0
    out = capsys.readouterr().out
    assert "conflicts (HTTP 412): 1" in out and "resolved" in out
    assert f"shared.md; theirs is kept: `workbench undo {history_id}`" in out

    assert main(["undo", history_id, *plain]) == 0
    assert capsys.readouterr().out == "reverted team/shared.md\n"
    assert (alice_memory / "team" / "shared.md").read_text() == "bob's v2\n"


@pytest.mark.parametrize(
    "args",
    [
        ("sync", "pull"),
        ("sync", "push"),
        ("review", "list"),
        ("review", "accept", "abc123"),
        ("review", "reject", "abc123"),
    ],
)
def test_workbench_home_that_is_a_file_is_one_line_and_writes_nothing(
    tmp_path, capsys, env, server, monkeypatch, args
):
    project, memory = make_project(tmp_path, "p")
    (memory / "team" / "a.md").write_text("a\n")
    home = tmp_path / "home-is-a-file"
    home.write_text("not a folder\n")
    monkeypatch.setenv("WORKBENCH_HOME", str(home))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code = main([*args, "--project", str(project), "--memory-dir", str(memory)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("workbench: cannot keep workbench state in ")
    assert "WORKBENCH_HOME" in err and "nothing was written" in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert home.read_text() == "not a folder\n"


def test_text_status_counts_one_entry_in_the_singular(tmp_path, capsys, env):
    project, memory = make_project(tmp_path, "solo")
    (memory / "team" / "deploys.md").write_text("Ship on Tuesdays.\n")
    code = main(["sync", "status", "--project", str(project), "--memory-dir", str(memory)])
    out = capsys.readouterr().out
    assert code == 0
    assert "1 local entry, 1 to push" in out and "entries" not in out


def test_push_that_held_back_a_file_exits_1_and_says_why(tmp_path, capsys, env):
    rng = random.Random(5)
    secret = "gh" + "p_" + "".join(rng.choices(string.ascii_letters + string.digits, k=36))
    project, memory = make_project(tmp_path, "p")
    (memory / "team" / "ci_token.md").write_text(f"token: {secret}\n")
    (memory / "team" / "fine.md").write_text("fine\n")
    assert main(["sync", "push", "--project", str(project), "--memory-dir", str(memory)]) == 1
    out, err = capsys.readouterr()
    assert "not pushed, holds a secret: ci_token.md" in out
    assert err.count("\n") == 1 and "held back 1 file holding a secret" in err
    assert secret not in out + err
    # A file over the size limit is held back too: teammates never get it until it shrinks.
    (memory / "team" / "ci_token.md").unlink()
    (memory / "team" / "huge.md").write_text("x" * 250_001)
    code, pushed, err = run(capsys, project, memory, "sync", "push")
    assert code == 1 and pushed["skipped_too_large"] == ["huge.md"]
    assert "held back 1 file over 250,000 bytes" in err
    (memory / "team" / "huge.md").unlink()
    code, pushed, err = run(capsys, project, memory, "sync", "push")
    assert code == 0 and err == ""


def test_a_first_push_keeps_and_names_what_it_replaces(tmp_path, capsys, env):
    """A teammate who never pulled pushes an index of their own: the push learns the
    server's hashes first, so it names the replaced file and keeps it for undo."""
    alice, alice_memory = make_project(tmp_path, "alice")
    (alice_memory / "team" / "MEMORY.md").write_text("- [Alice](alice.md) — hers\n")
    (alice_memory / "team" / "alice.md").write_text("Alice's note.\n")
    assert run(capsys, alice, alice_memory, "sync", "push")[0] == 0
    bob, bob_memory = make_project(tmp_path, "bob")
    (bob_memory / "team" / "MEMORY.md").write_text("- [Bob](bob.md) — his\n")
    (bob_memory / "team" / "bob.md").write_text("Bob's note.\n")
    code, pushed, _ = run(capsys, bob, bob_memory, "sync", "push")
    assert code == 0 and [o["key"] for o in pushed["overwritten"]] == ["MEMORY.md"]
    history_id = pushed["overwritten"][0]["history_id"]
    assert main(["undo", history_id, "--memory-dir", str(bob_memory), "--project", str(bob)]) == 0
    capsys.readouterr()
    assert (bob_memory / "team" / "MEMORY.md").read_text() == "- [Alice](alice.md) — hers\n"
    # And the next pull brings Alice's note, which the push's checksum covers.
    code, pulled, _ = run(capsys, bob, bob_memory, "sync", "pull")
    assert code == 0 and "alice.md" in pulled["written_keys"]
    assert (bob_memory / "team" / "alice.md").read_text() == "Alice's note.\n"


def test_the_next_pull_restores_a_file_deleted_here(tmp_path, capsys, env):
    alice, alice_memory = make_project(tmp_path, "alice")
    (alice_memory / "team" / "deploys.md").write_text("Ship on Tuesdays.\n")
    run(capsys, alice, alice_memory, "sync", "push")
    bob, bob_memory = make_project(tmp_path, "bob")
    assert run(capsys, bob, bob_memory, "sync", "pull")[1]["written"] == 1
    (bob_memory / "team" / "deploys.md").unlink()
    code, pulled, _ = run(capsys, bob, bob_memory, "sync", "pull")
    assert code == 0 and pulled["written_keys"] == ["deploys.md"]
    assert (bob_memory / "team" / "deploys.md").read_text() == "Ship on Tuesdays.\n"


def test_a_pull_names_the_unpushed_change_it_replaces(tmp_path, capsys, env):
    alice, alice_memory = make_project(tmp_path, "alice")
    (alice_memory / "team" / "deploys.md").write_text("Ship on Tuesdays.\n")
    run(capsys, alice, alice_memory, "sync", "push")
    bob, bob_memory = make_project(tmp_path, "bob")
    run(capsys, bob, bob_memory, "sync", "pull")
    (bob_memory / "team" / "deploys.md").write_text("Ship on Tuesdays and Thursdays.\n")
    (alice_memory / "team" / "deploys.md").write_text("Ship on Wednesdays.\n")
    run(capsys, alice, alice_memory, "sync", "push")
    code, pulled, _ = run(capsys, bob, bob_memory, "sync", "pull")
    assert code == 0 and [r["key"] for r in pulled["replaced_local"]] == ["deploys.md"]
    assert (bob_memory / "team" / "deploys.md").read_text() == "Ship on Wednesdays.\n"
    code = main(["sync", "pull", "--project", str(bob), "--memory-dir", str(bob_memory)])
    text = capsys.readouterr().out
    assert code == 0 and "unchanged since the last pull" in text  # nothing new: no note
    undo = ["undo", pulled["replaced_local"][0]["history_id"], "--memory-dir", str(bob_memory)]
    assert main([*undo, "--project", str(bob)]) == 0
    capsys.readouterr()
    assert (bob_memory / "team" / "deploys.md").read_text() == "Ship on Tuesdays and Thursdays.\n"


def test_a_push_past_the_servers_entry_limit_exits_1_and_names_the_file(
    tmp_path, capsys, monkeypatch
):
    with TeamServer(tmp_path / "small.sqlite3", [TOKEN], max_entries=3) as small:
        monkeypatch.setenv("WORKBENCH_TEAM_TOKEN", TOKEN)
        monkeypatch.setenv("TEAM_MEMORY_SYNC_URL", small.url)
        project, memory = make_project(tmp_path, "carol")
        for n in range(1, 6):
            (memory / "team" / f"n{n}.md").write_text(f"note {n}\n")
        run(capsys, project, memory, "sync", "push")  # refused whole: learns the limit of 3
        (memory / "team" / "n5.md").unlink()  # a deleted file lifts the suppression
        code, pushed, err = run(capsys, project, memory, "sync", "push")
        assert pushed["uploaded_keys"] == ["n1.md", "n2.md", "n3.md"]
        assert code == 1 and pushed["skipped_over_limit"] == ["n4.md"]
        assert "1 file past the server's limit of 3 entries (n4.md)" in err
