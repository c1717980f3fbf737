"""`workbench team-server` as an operator meets it: where tokens come from, `--help`, `--db`
forms, and `team-server migrate` on a database from before schema versions."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from workbench.server.database import parse_database, redact

TOKEN = "-".join(["cli", "test", "token"])
PATH = "/api/claude_code/team_memory"
REPO = {"repo": "acme/widgets"}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_SERVER_")}
    env.pop("WORKBENCH_TEAM_TOKEN", None)
    return {**env, "PYTHONUNBUFFERED": "1", **extra}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", "team-server", *args],
        capture_output=True, text=True, timeout=120, env=env or _env(),
    )  # fmt: skip


def serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    """Start the server; returns (process, listening info, stderr file)."""
    log = tmp_path / "stderr.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "team-server", "--port", "0", "--json", *args],
        stdout=subprocess.PIPE, stderr=log.open("w"), text=True, env=env or _env(),
    )  # fmt: skip
    line = proc.stdout.readline() if proc.stdout else ""
    if not line:
        proc.kill()
        proc.wait(timeout=20)
        raise AssertionError(f"team-server did not start: {log.read_text()}")
    return proc, json.loads(line), log


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def status(url: str, token: str) -> int:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.get(url + PATH, params=REPO, headers=headers, timeout=30).status_code


def test_tokens_from_a_file_and_from_the_environment(tmp_path: Path):
    other = "-".join(["env", "token", "two"])
    token_file = tmp_path / "tokens"
    token_file.write_text(f"# team tokens\n\nacme={TOKEN}\n")
    token_file.chmod(0o600)
    env = _env(WORKBENCH_TEAM_TOKEN=f"rival={other}, spare-token")
    proc, info, log = serve(tmp_path, "--db", str(tmp_path / "t.sqlite3"),
                            "--token-file", str(token_file), env=env)  # fmt: skip
    try:
        assert info["organizations"] == ["acme", "default", "rival"]
        assert status(info["url"], TOKEN) == 404
        assert status(info["url"], other) == 404
        assert status(info["url"], "not-a-token") == 401
    finally:
        stop(proc)
    text = log.read_text()
    assert "--token puts the token" not in text, "no argv warning without --token"
    assert TOKEN not in text and other not in text


def test_a_token_on_the_command_line_warns_that_others_can_read_it(tmp_path: Path):
    proc, info, log = serve(tmp_path, "--db", str(tmp_path / "t.sqlite3"), "--token", TOKEN)
    try:
        assert status(info["url"], TOKEN) == 404
    finally:
        stop(proc)
    warning = [line for line in log.read_text().splitlines() if "--token" in line]
    assert warning and "other users" in warning[0]


def test_a_token_file_others_can_read_is_warned_about(tmp_path: Path):
    token_file = tmp_path / "tokens"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o644)
    proc, _, log = serve(tmp_path, "--db", str(tmp_path / "t.sqlite3"),
                         "--token-file", str(token_file))  # fmt: skip
    stop(proc)
    assert "can be read by other users" in log.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--token-file", "/nonexistent/tokens"), "cannot read the token file"),
        (("--token", "t", "--db", "mysql://h/db"), "unknown database scheme"),
        (("--token", "t", "--db", "sqlite://"), "needs a file path"),
        (("--token", "t", "--workers", "0"), "--workers"),
        (("--token", "t", "--rate-limit", "-1"), "--rate-limit"),
    ],
)
def test_bad_settings_exit_2_with_one_line(tmp_path: Path, args, message):
    done = run("--port", "0", *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


def test_an_unusable_metrics_folder_is_named_not_blamed_on_the_socket(tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = _env(PROMETHEUS_MULTIPROC_DIR=str(blocker / "metrics"))
    done = run("--port", "0", "--token", "t", "--db", str(tmp_path / "t.sqlite3"),
               "--workers", "2", env=env)  # fmt: skip
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if "--token puts" not in line]
    assert len(lines) == 1 and "cannot use PROMETHEUS_MULTIPROC_DIR" in lines[0], done.stderr
    assert "cannot listen" not in done.stderr


def test_help_shows_every_option_with_its_default():
    done = run("--help")
    assert done.returncode == 0
    blocks: dict[str, str] = {}
    current = None
    for line in done.stdout.split("options:", 1)[1].splitlines():
        match = re.match(r"^  (-[-\w]+(?:, --[-\w]+)?)", line)
        if match:
            current = match.group(1).split(", ")[-1]
            blocks[current] = line
        elif current is not None:
            blocks[current] += " " + line.strip()
    # The options every command shares are the CLI's; the server's own must each say:
    own = {"--host", "--port", "--db", "--token-file", "--token", "--workers", "--max-entries",
           "--max-body-bytes", "--rate-limit", "--rate-burst", "--pool-size", "--log-format",
           "--no-migrate"}  # fmt: skip
    assert own <= set(blocks)
    for name in sorted(own):
        assert "(default:" in blocks[name], f"{name} shows no default: {blocks[name]}"


def test_database_forms():
    assert parse_database("sqlite:///var/lib/team.db").location == "/var/lib/team.db"
    assert parse_database("sqlite:////var/lib/team.db").location == "/var/lib/team.db"
    assert parse_database("team.db").location == os.path.abspath("team.db")
    pg = parse_database("postgresql://u:pw@db.internal:5432/team")
    assert pg.kind == "postgresql" and pg.shown == "postgresql://u:***@db.internal:5432/team"
    assert redact("postgresql://h/db?password=pw&sslmode=require") == (
        "postgresql://h/db?password=***&sslmode=require"
    )


def test_the_listening_line_never_shows_the_database_password(postgres_cluster, tmp_path):
    # trust authentication ignores the password, so a made-up one still connects
    password = "-".join(["not", "shown", "anywhere"])
    url = postgres_cluster.url().replace("postgres@", f"postgres:{password}@")
    proc, info, log = serve(tmp_path, "--db", url, "--token", TOKEN)
    try:
        assert info["store"] == "postgresql" and "***" in info["db"]
        assert status(info["url"], TOKEN) == 404
    finally:
        stop(proc)
    assert password not in json.dumps(info) and password not in log.read_text()


OLD_SCHEMA = """
CREATE TABLE repos (org TEXT NOT NULL, repo TEXT NOT NULL, version INTEGER NOT NULL,
    last_modified TEXT NOT NULL, checksum TEXT NOT NULL, PRIMARY KEY (org, repo));
CREATE TABLE entries (org TEXT NOT NULL, repo TEXT NOT NULL, key TEXT NOT NULL,
    content TEXT NOT NULL, checksum TEXT NOT NULL, PRIMARY KEY (org, repo, key));
"""


def _old_database(path: Path) -> str:
    """A database as the server wrote it before schema versions, holding one repo."""
    from workbench.server.store import entry_checksum, repo_checksum

    entries = {"a.md": "café\n", "b.md": "B"}
    sums = {k: entry_checksum(v) for k, v in entries.items()}
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        db.execute("INSERT INTO repos VALUES ('default', 'acme/widgets', 7, "
                   "'2025-01-01T00:00:00.000Z', ?)", (repo_checksum(sums),))  # fmt: skip
        for key, text in entries.items():
            db.execute("INSERT INTO entries VALUES ('default', 'acme/widgets', ?, ?, ?)",
                       (key, text, sums[key]))  # fmt: skip
    return repo_checksum(sums)


def test_migrate_upgrades_a_database_from_before_schema_versions(tmp_path: Path):
    db = tmp_path / "old.sqlite3"
    checksum = _old_database(db)
    refused = run("--db", str(db), "--token", "t", "--no-migrate", "--port", "0")
    assert refused.returncode == 2 and "team-server migrate" in refused.stderr

    done = run("migrate", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"db": str(db), "before": 0, "after": 2, "applied": [1, 2]}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT entry_count, byte_count FROM repos").fetchone() == (2, 7)
        assert sorted(conn.execute("SELECT key, size FROM entries")) == [("a.md", 6), ("b.md", 1)]
    again = run("migrate", "--db", str(db))
    assert again.returncode == 0 and "nothing to do" in again.stdout

    proc, info, _ = serve(tmp_path, "--db", str(db), "--token", TOKEN, "--no-migrate")
    try:
        body = httpx.get(
            info["url"] + PATH, params=REPO, headers={"Authorization": f"Bearer {TOKEN}"}
        ).json()
    finally:
        stop(proc)
    assert body["version"] == 7 and body["checksum"] == checksum
    assert body["content"]["entries"] == {"a.md": "café\n", "b.md": "B"}


def test_a_schema_newer_than_the_server_is_refused(team_db):
    db = team_db("newer")
    assert run("migrate", "--db", db).returncode == 0
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 'later')")
    else:
        with sqlite3.connect(db) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 'later')")
    done = run("--db", db, "--token", "t", "--port", "0")
    assert done.returncode == 2 and "schema version 99" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_workers_migrating_at_once_apply_each_version_once(team_db):
    from concurrent.futures import ThreadPoolExecutor

    from workbench.server.database import open_store

    db = team_db("racing")
    stores = [open_store(db) for _ in range(6)]
    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            reports = list(pool.map(lambda store: store.migrate(), stores))
    finally:
        for store in stores:
            store.close()
    applied = [version for report in reports for version in report.applied]
    assert sorted(applied) == list(range(1, reports[0].after + 1))
