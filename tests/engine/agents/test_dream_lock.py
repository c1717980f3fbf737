"""The consolidation lock: mtime as last-consolidated, PID body, stale after an hour, rollback."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.engine.agents.dream_lock import HOLDER_STALE_MS, ConsolidationLock, pid_alive


@pytest.fixture
def lock_path(tmp_path: Path) -> Path:
    memory = tmp_path / "memory"
    memory.mkdir()
    return memory / ".consolidate-lock"


def _set_mtime(path: Path, ms: float) -> None:
    os.utime(path, (ms / 1000, ms / 1000))


def test_no_lock_means_never_consolidated(lock_path: Path) -> None:
    lock = ConsolidationLock(lock_path)
    assert lock.last_consolidated_ms() == 0
    state = lock.state()
    assert not state.exists and not state.held


def test_acquire_writes_our_pid_and_returns_the_prior_mtime(lock_path: Path) -> None:
    lock = ConsolidationLock(lock_path, pid=os.getpid())
    assert lock.try_acquire() == 0
    assert lock_path.read_text() == str(os.getpid())
    assert abs(lock.last_consolidated_ms() - time.time() * 1000) < 5_000
    assert oct(lock_path.stat().st_mode & 0o777) == "0o600"


def test_a_live_holder_within_the_hour_blocks(lock_path: Path) -> None:
    lock_path.write_text(str(os.getpid()))  # this test process is certainly alive
    other = ConsolidationLock(lock_path, pid=os.getpid() + 100_000)
    assert other.state().held
    assert other.try_acquire() is None
    assert lock_path.read_text() == str(os.getpid())


def test_a_dead_holder_is_stale(lock_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not pid_alive(child.pid)
    lock_path.write_text(str(child.pid))
    prior = lock_path.stat().st_mtime_ns / 1_000_000
    lock = ConsolidationLock(lock_path, pid=os.getpid())
    assert lock.try_acquire() == pytest.approx(prior)
    assert lock_path.read_text() == str(os.getpid())


def test_a_holder_older_than_an_hour_is_stale_even_if_alive(lock_path: Path) -> None:
    lock_path.write_text(str(os.getpid()))
    old = time.time() * 1000 - HOLDER_STALE_MS - 60_000
    _set_mtime(lock_path, old)
    lock = ConsolidationLock(lock_path, pid=os.getpid() + 100_000, is_alive=lambda pid: True)
    assert lock.try_acquire() == pytest.approx(old, abs=1)


def test_losing_the_race_after_writing_is_detected(lock_path: Path) -> None:
    lock = ConsolidationLock(lock_path, pid=111)
    real_write = lock._write_body

    def racing_write(body: str) -> None:
        real_write(body)
        lock_path.write_text("222")  # another process wrote right after us

    lock._write_body = racing_write  # type: ignore[method-assign]
    assert lock.try_acquire() is None


def test_rollback_rewinds_the_mtime_and_empties_the_body(lock_path: Path) -> None:
    lock_path.write_text("")
    earlier = time.time() * 1000 - 3 * 86_400_000
    _set_mtime(lock_path, earlier)
    lock = ConsolidationLock(lock_path, pid=os.getpid())
    prior = lock.try_acquire()
    assert prior == pytest.approx(earlier, abs=1)
    lock.rollback(prior)
    assert lock_path.read_text() == ""
    assert lock.last_consolidated_ms() == pytest.approx(earlier, abs=1)


def test_rollback_of_a_first_lock_removes_it(lock_path: Path) -> None:
    lock = ConsolidationLock(lock_path)
    prior = lock.try_acquire()
    assert prior == 0
    lock.rollback(prior)
    assert not lock_path.exists()


def test_record_consolidation_stamps_now(lock_path: Path) -> None:
    lock_path.write_text("")
    _set_mtime(lock_path, 1_000_000)
    lock = ConsolidationLock(lock_path)
    lock.record_consolidation()
    assert abs(lock.last_consolidated_ms() - time.time() * 1000) < 5_000


def test_garbage_body_counts_as_no_holder(lock_path: Path) -> None:
    lock_path.write_text("not a pid")
    lock = ConsolidationLock(lock_path, pid=os.getpid())
    assert lock.state().holder_pid is None
    assert lock.try_acquire() is not None
