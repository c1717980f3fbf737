"""Daily logs: `<memory>/logs/YYYY/MM/YYYY-MM-DD.md`, append-only, atomic, undoable."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from workbench.engine import Engine
from workbench.engine.agents.daily_log import LOG_ACTION, append_entry
from workbench.engine.errors import UserInputError


def test_first_entry_creates_the_file_and_its_folders(agent_engine: Engine) -> None:
    when = datetime(2026, 3, 5, 9, 7, tzinfo=UTC)
    entry = append_entry(agent_engine, "User prefers uv over pip", now=when)
    path = Path(agent_engine.locations.memory_dir) / "logs" / "2026" / "03" / "2026-03-05.md"
    assert entry.abs_path == str(path)
    assert entry.path == "logs/2026/03/2026-03-05.md"
    assert entry.created
    assert path.read_text() == "# 2026-03-05\n\n- 09:07 User prefers uv over pip\n"


def test_entries_append_in_order_and_never_rewrite(agent_engine: Engine) -> None:
    base = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)
    append_entry(agent_engine, "first", now=base)
    path = Path(agent_engine.locations.daily_log_path(base.date()))
    earlier = path.read_text()
    second = append_entry(agent_engine, "second\n  with a break", now=base + timedelta(minutes=5))
    assert not second.created
    text = path.read_text()
    assert text.startswith(earlier)
    assert text.endswith("- 10:00 first\n- 10:05 second with a break\n")


def test_the_local_date_picks_the_file(agent_engine: Engine, monkeypatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Pacific/Auckland")
    time.tzset()
    # 23:30 UTC on 5 March is already 6 March in New Zealand.
    entry = append_entry(agent_engine, "late", now=datetime(2026, 3, 5, 23, 30, tzinfo=UTC))
    assert entry.date == "2026-03-06"
    assert entry.path.endswith("2026-03-06.md")


def test_a_fixed_offset_time_is_converted_to_local(agent_engine: Engine) -> None:
    plus_two = timezone(timedelta(hours=2))
    entry = append_entry(agent_engine, "x", now=datetime(2026, 1, 1, 1, 0, tzinfo=plus_two))
    assert entry.date == "2025-12-31"  # TZ is UTC in tests
    assert entry.line == "- 23:00 x"


def test_appends_are_recorded_and_undoable(agent_engine: Engine) -> None:
    when = datetime(2026, 3, 5, 8, 0, tzinfo=UTC)
    append_entry(agent_engine, "one", now=when)
    entry = append_entry(agent_engine, "two", now=when)
    recorded = agent_engine.history.get(entry.history_id)
    assert recorded.action == LOG_ACTION
    agent_engine.history.undo(recorded.id)
    path = Path(agent_engine.locations.daily_log_path(when.date()))
    assert path.read_text().endswith("- 08:00 one\n")


def test_concurrent_appends_lose_nothing(agent_engine: Engine) -> None:
    when = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            append_entry(agent_engine, f"entry {n}", now=when)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    lines = Path(agent_engine.locations.daily_log_path(when.date())).read_text().splitlines()
    assert sorted(line for line in lines if line.startswith("- ")) == sorted(
        f"- 12:00 entry {n}" for n in range(12)
    )


@pytest.mark.parametrize("bad", ["", "   \n\t", "x" * 2001])
def test_bad_entries_are_refused_and_write_nothing(agent_engine: Engine, bad: str) -> None:
    with pytest.raises(UserInputError):
        append_entry(agent_engine, bad)
    assert not (Path(agent_engine.locations.memory_dir) / "logs").exists()


def test_a_secret_in_an_entry_never_reaches_the_log_the_output_or_history(
    agent_engine: Engine,
) -> None:
    from tests.secretgen import make_token

    token = make_token("github-pat")
    when = datetime(2026, 3, 5, 9, 7, tzinfo=UTC)
    entry = append_entry(agent_engine, f"rotated the CI token {token}", now=when)
    assert entry.redacted == 1 and token not in entry.line and "[REDACTED]" in entry.line
    assert token not in Path(entry.abs_path).read_text()
    assert all(token not in e.note for e in agent_engine.history.entries())


def test_an_append_leaves_a_log_with_bytes_that_are_not_utf8_alone(agent_engine: Engine) -> None:
    when = datetime(2026, 3, 5, 9, 7, tzinfo=UTC)
    path = Path(agent_engine.locations.daily_log_path(when.date()))
    path.parent.mkdir(parents=True)
    before = b"# 2026-03-05\n\n- 08:00 caf\xe9\n"
    path.write_bytes(before)
    with pytest.raises(UserInputError, match="not UTF-8 on line 3"):
        append_entry(agent_engine, "another", now=when)
    assert path.read_bytes() == before
