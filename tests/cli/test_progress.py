"""Progress of long work: shown on a terminal's stderr, absent when piped or with --json, and
every long operation can be cancelled (ctrl+c in the CLI; a callback that raises in the
engine, which is how the app's cancel actions stop workers)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from secretgen import make_token

from workbench.engine.errors import OperationCancelled
from workbench.engine.progress import Progress, Reporter

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


def _folder(tmp_path: Path, files: int = 60) -> Path:
    root = tmp_path / "many"
    for n in range(files):
        sub = root / f"d{n % 5}"
        sub.mkdir(parents=True, exist_ok=True)
        body = f"note {n}\n" + (f"key {make_token('github-pat', n)}\n" if n % 20 == 0 else "")
        (sub / f"m{n}.md").write_text(body, encoding="utf-8")
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(WORKBENCH_PROGRESS_AFTER="0", **extra)
    return env


def _seen(wanted: str | re.Pattern[str], shown: bytes) -> bool:
    text = shown.decode(errors="replace")
    return wanted in text if isinstance(wanted, str) else wanted.search(text) is not None


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def run_with_tty_stderr(
    argv: list[str],
    *,
    interrupt_after: str | re.Pattern[str] | None = None,
    env: dict[str, str] | None = None,
):
    """Run `workbench ARGV` with stderr on a pseudo-terminal and stdout piped; returns
    (exit code, stdout, what the terminal showed). With `interrupt_after`, SIGINT is sent
    once that text has appeared on the terminal."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
        cwd=REPO,
        env=_env(**(env or {})),
        # Whatever an earlier test in this worker left of SIGINT (ignored or blocked, which
        # a child inherits), the child starts with ctrl+c as a user's shell gives it.
        preexec_fn=_default_sigint,
    )
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + TIMEOUT
    interrupted = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            shown += chunk
        if interrupt_after and not interrupted and _seen(interrupt_after, shown):
            process.send_signal(signal.SIGINT)
            interrupted = True
        if not ready and process.poll() is not None:
            break
    assert process.stdout is not None
    out = process.stdout.read().decode()
    code = process.wait(timeout=TIMEOUT)
    os.close(leader)
    return code, out, shown.decode(errors="replace")


def test_scan_progress_shows_on_a_terminal(tmp_path: Path):
    folder = _folder(tmp_path)
    code, out, shown = run_with_tty_stderr(["scan-secrets", str(folder)])
    assert code == 1
    assert "scanning" in shown and "/60 files" in shown and "(100%)" in shown
    assert "\x1b[K" in shown  # drawn in place and erased at the end
    assert "scanning" not in out and "3 findings in 60 files" in out
    for n in (0, 20, 40):
        assert make_token("github-pat", n) not in shown + out


def test_no_progress_when_piped_or_with_json(tmp_path: Path):
    folder = _folder(tmp_path)
    piped = subprocess.run(
        [sys.executable, "-m", "workbench", "scan-secrets", str(folder)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=_env(),
        timeout=TIMEOUT,
    )
    assert piped.returncode == 1 and piped.stderr == ""
    code, out, shown = run_with_tty_stderr(["scan-secrets", str(folder), "--json"])
    assert code == 1 and json.loads(out)["files_scanned"] == 60
    assert "scanning" not in shown


def test_replay_progress_shows_on_a_terminal(tmp_path: Path):
    transcript = tmp_path / "session.jsonl"
    lines = [json.dumps({"type": "progress", "n": n}) for n in range(9000)]
    lines.append(
        json.dumps(
            {
                "type": "assistant",
                "uuid": "a1",
                "message": {
                    "role": "assistant",
                    "model": "claude-sonnet-4-6",
                    "content": [{"type": "text", "text": "hi"}],
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
            }
        )
    )
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, shown = run_with_tty_stderr(["replay", str(transcript), "--project", str(tmp_path)])
    assert code == 0, out + shown
    assert "replaying" in shown and "bytes" in shown and "(100%)" in shown
    assert "replaying" not in out


def _until_interrupted(attempts):  # type: ignore[no-untyped-def]
    """Run each attempt (a function giving exit code, stdout, terminal) until one was stopped
    by its ctrl+c; each attempt has more work than the one before. On a loaded machine the
    work can end before the signal arrives: that attempt says nothing, and the next, larger
    one is tried (so the test is about the interruption, not the machine's speed)."""
    seen = []
    for attempt in attempts:
        code, out, shown = attempt()
        if code == 130 or "cancelled" in shown:
            return code, out, shown
        seen.append((code, shown[-300:]))
    pytest.fail(f"every attempt finished before its ctrl+c arrived: {seen}")


def test_ctrl_c_ends_a_scan_with_one_line(tmp_path: Path):
    def attempt(files: int):  # type: ignore[no-untyped-def]
        def run():  # type: ignore[no-untyped-def]
            folder = _folder(tmp_path / f"run{files}", files)
            return run_with_tty_stderr(["scan-secrets", str(folder)], interrupt_after="scanning")

        return run

    code, out, shown = _until_interrupted(attempt(n) for n in (60, 1200, 12000))
    assert code == 130
    assert out == ""
    assert "workbench: cancelled" in shown and "Traceback" not in shown
    visible = shown.replace("\r", "\n").split("\n")
    assert [line for line in visible if "cancelled" in line] == ["workbench: cancelled"]


# --- the engine side ------------------------------------------------------------------------


def test_reporter_throttles_and_always_reports_the_end():
    seen: list[Progress] = []
    report = Reporter(seen.append, "working", 1000, interval=3600)
    report(0, force=True)
    for n in range(1, 1000):
        report(n)
    report.finish()
    assert [p.done for p in seen] == [0, 1000]
    assert seen[-1].finished and seen[-1].fraction == 1.0
    quiet = Reporter(None, "working", 10)
    quiet(5)
    quiet.finish()
    assert not quiet.active


def test_a_scan_reports_each_file_and_stops_when_cancelled(tmp_path: Path):
    from workbench.engine.team.secrets.report import scan_files

    folder = _folder(tmp_path)
    seen: list[Progress] = []
    report = scan_files([folder], on_progress=seen.append)
    assert seen[0].done == 0 and seen[-1].done == seen[-1].total == 60
    assert all(p.task == "scanning" and p.unit == "files" for p in seen)
    assert len(report.findings) == 3

    calls = 0

    def stop_at_once(_progress: Progress) -> None:
        nonlocal calls
        calls += 1
        raise OperationCancelled("stop")

    with pytest.raises(OperationCancelled):
        scan_files([folder], on_progress=stop_at_once)
    assert calls == 1


def test_a_replay_stops_when_its_callback_raises(tmp_path: Path, monkeypatch):
    from workbench.engine import progress
    from workbench.engine.context.replay import replay_file
    from workbench.engine.context.thresholds import compute_thresholds

    monkeypatch.setattr(progress, "DEFAULT_INTERVAL", 0.0)  # every checkpoint reports
    transcript = tmp_path / "big.jsonl"
    transcript.write_text(
        "\n".join(json.dumps({"type": "progress", "n": n}) for n in range(20000)) + "\n"
    )
    seen: list[Progress] = []

    def stop_midway(step: Progress) -> None:
        seen.append(step)
        if step.done > 0:
            raise OperationCancelled("stop")

    with pytest.raises(OperationCancelled):
        replay_file(
            transcript,
            thresholds_for=lambda model: compute_thresholds(model or "claude-sonnet-4-6", env={}),
            default_model="claude-sonnet-4-6",
            on_progress=stop_midway,
        )
    assert [p.done > 0 for p in seen] == [False, True]
    assert seen[-1].done < transcript.stat().st_size == seen[-1].total


def test_push_progress_shows_on_a_terminal(tmp_path: Path):
    from workbench.server import TeamServer

    token = "-".join(["progress", "team", "token"])
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/widgets.git\n'
    )
    memory = tmp_path / "memory"
    (memory / "team").mkdir(parents=True)
    for n in range(6):  # ~150 KB each: one batch per entry
        (memory / "team" / f"big{n}.md").write_text("word " * 30_000, encoding="utf-8")
    with TeamServer(tmp_path / "team.sqlite3", [token]) as server:
        leader, follower = pty.openpty()
        env = _env(TEAM_MEMORY_SYNC_URL=server.url, WORKBENCH_TEAM_TOKEN=token)
        process = subprocess.Popen(
            [sys.executable, "-m", "workbench", "sync", "push"]
            + ["--project", str(project), "--memory-dir", str(memory)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=follower,
            cwd=REPO,
            env=env,
        )
        os.close(follower)
        shown = b""
        while True:
            ready, _, _ = select.select([leader], [], [], TIMEOUT)
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        assert process.stdout is not None
        out = process.stdout.read().decode()
        assert process.wait(timeout=TIMEOUT) == 0, out
        os.close(leader)
    text = shown.decode(errors="replace")
    assert "pushing 0/6 entries" in text and "pushing 6/6 entries (100%)" in text
    assert "pushing" not in out


# --- sync pull ------------------------------------------------------------------------------

PULL_TOKEN = "-".join(["progress", "pull", "token"])
ORG = "acme-org"


def _pull_setup(tmp_path: Path, entries: int):  # type: ignore[no-untyped-def]
    """A project whose remote is acme/widgets, and a server database holding `entries`."""
    from workbench.server.store import TeamStore

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/widgets.git\n'
    )
    memory = tmp_path / "memory"
    (memory / "team").mkdir(parents=True)
    store = TeamStore(tmp_path / "team.sqlite3")
    store.initialize()
    body = {f"notes/n{n:04}.md": f"note {n}\n" + "text " * 200 + "\n" for n in range(entries)}
    outcome = store.upsert(ORG, "acme/widgets", body, if_match=None, max_entries=entries + 10)
    assert outcome.status == "ok"
    store.close()
    argv = ["sync", "pull", "--project", str(project), "--memory-dir", str(memory)]
    return argv, memory / "team", body


def _pull_server(tmp_path: Path, entries: int):  # type: ignore[no-untyped-def]
    from workbench.server import TeamServer

    return TeamServer(tmp_path / "team.sqlite3", {PULL_TOKEN: ORG}, max_entries=entries + 10)


def test_pull_progress_shows_on_a_terminal_and_not_when_piped(tmp_path: Path):
    argv, team, body = _pull_setup(tmp_path, 40)
    with _pull_server(tmp_path, 40) as server:
        env = {"TEAM_MEMORY_SYNC_URL": server.url, "WORKBENCH_TEAM_TOKEN": PULL_TOKEN}
        code, out, shown = run_with_tty_stderr(argv, env=env)
        assert code == 0, shown
        assert "pulling" in shown and "/40 entries" in shown and "(100%)" in shown
        assert "pulling" not in out
        assert len(list((team / "notes").iterdir())) == 40
        piped = subprocess.run(
            [sys.executable, "-m", "workbench", *argv],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=_env(**env),
            timeout=TIMEOUT,
        )
        assert piped.returncode == 0 and piped.stderr == ""
        code, out, shown = run_with_tty_stderr([*argv, "--json"], env=env)
        assert code == 0 and "pulling" not in shown and json.loads(out)["status"]


def test_ctrl_c_stops_a_pull_with_no_half_written_file(tmp_path: Path):
    runs: list[tuple[int, Path, dict[str, str]]] = []

    def attempt(entries: int):  # type: ignore[no-untyped-def]
        def run():  # type: ignore[no-untyped-def]
            where = tmp_path / f"run{entries}"
            where.mkdir()
            argv, team, body = _pull_setup(where, entries)
            runs.append((entries, team, body))
            with _pull_server(where, entries) as server:
                env = {"TEAM_MEMORY_SYNC_URL": server.url, "WORKBENCH_TEAM_TOKEN": PULL_TOKEN}
                started = re.compile(rf"pulling [1-9][0-9,]*/{entries:,}")  # some written
                return run_with_tty_stderr(argv, env=env, interrupt_after=started)

        return run

    code, out, shown = _until_interrupted(attempt(n) for n in (3000, 12000))
    entries, team, body = runs[-1]
    assert code == 130, shown[-500:]
    assert "workbench: cancelled" in shown and "Traceback" not in shown
    written = sorted((team / "notes").iterdir()) if (team / "notes").exists() else []
    assert 0 < len(written) < entries  # stopped part way
    for path in written:  # every file there is whole
        assert path.read_text(encoding="utf-8") == body[f"notes/{path.name}"], path.name
    leftovers = [p for p in team.rglob("*") if p.name.endswith(".wbtmp")]
    assert leftovers == []


def test_a_pull_stops_before_the_next_file_when_its_callback_raises(tmp_path: Path, monkeypatch):
    import asyncio

    from workbench.engine import progress
    from workbench.engine.team.sync.client import PULL_WRITE_CONCURRENCY, TeamSyncClient
    from workbench.engine.team.sync.state import SyncStateStore

    monkeypatch.setattr(progress, "DEFAULT_INTERVAL", 0.0)  # every written file reports
    entries = 200
    _argv, team, body = _pull_setup(tmp_path, entries)
    seen: list[Progress] = []

    def stop_after_five(step: Progress) -> None:
        seen.append(step)
        if step.done >= 5:
            raise OperationCancelled("stop")

    with _pull_server(tmp_path, entries) as server:
        client = TeamSyncClient(
            server=server.url,
            repo="acme/widgets",
            token=PULL_TOKEN,
            team_dir=str(team),
            state_store=SyncStateStore(tmp_path / "state"),
        )

        async def pull() -> None:
            async with client:
                await client.pull(on_progress=stop_after_five)

        with pytest.raises(OperationCancelled):
            asyncio.run(pull())
    assert seen[0].total is None and seen[1].done == 0 and seen[1].total == entries
    written = list((team / "notes").iterdir())
    # The files in flight when it stopped finish (whole); no new one starts.
    assert 5 <= len(written) < 5 + PULL_WRITE_CONCURRENCY
    assert all(p.read_text(encoding="utf-8") == body[f"notes/{p.name}"] for p in written)
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").iterdir())


def test_a_transcript_read_reports_bytes_and_stops_when_cancelled(tmp_path: Path, monkeypatch):
    from workbench.engine import progress
    from workbench.engine.context.transcript import Transcript

    monkeypatch.setattr(progress, "DEFAULT_INTERVAL", 0.0)
    transcript = tmp_path / "big.jsonl"
    transcript.write_text(
        "\n".join(json.dumps({"type": "progress", "n": n}) for n in range(20000)) + "\n"
    )
    size = transcript.stat().st_size
    seen: list[Progress] = []
    Transcript.load(transcript, on_progress=seen.append)
    assert seen[0].done == 0 and seen[-1].done == seen[-1].total == size
    assert all(p.task == "reading" and p.unit == "bytes" for p in seen) and len(seen) > 3

    def stop_midway(step: Progress) -> None:
        if step.done > 0:
            raise OperationCancelled("stop")

    with pytest.raises(OperationCancelled):
        Transcript.load(transcript, on_progress=stop_midway)
